/**
 * `/v1/subaccounts/…` (docs/API.md §16) on each store: the record and its field order, create with
 * credits from the parent, update and suspend, credits in and out (one transfer_out and one
 * transfer_in entry together), keys and users of a sub-account, numbers moved in and back, usage,
 * and closing (Queued messages Rejected `ACCOUNT_CLOSED` and refunded, scheduled ones cancelled,
 * the balance back with the parent, its keys 401). A sub-account's credential never reaches these
 * operations, and never sees its parent or a sibling. The ledger adds up after every step.
 */
import assert from 'node:assert/strict';
import { createManualClock } from '../../../src/lib/time.ts';
import { inTransaction } from '../../../src/store/db.ts';
import { refundCredits } from '../../../src/store/repositories/credits.ts';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import { keyWith } from '../../helpers/keys.ts';
import { assertLedgerAddsUp } from '../../helpers/ledger.ts';
import { assert422, assertError, call, fieldError, WIRES } from '../../helpers/operations.ts';
import { storeTest } from '../../helpers/stores.ts';

const SUB = '/v1/subaccounts';
const FIELDS = ['Id', 'Name', 'Status', 'AvailableCredits', 'MaxPerSecond', 'MaxPerDay', 'DateCreated', 'DateUpdated'];

interface Sub {
  Id: number;
  Name: string;
  Status: string;
  AvailableCredits: number;
  MaxPerSecond: number;
  MaxPerDay: number;
  DateCreated: string;
  DateUpdated: string;
}

async function balance(ctx: TestApp, token: string): Promise<number> {
  const res = await call(ctx.app, { path: '/v1/credits/balance', token });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<{ AvailableCredits: number }>().AvailableCredits;
}

async function createSub(ctx: TestApp, token: string, body: Record<string, unknown>): Promise<Sub> {
  const res = await call(ctx.app, { method: 'POST', path: `${SUB}/create`, token, body });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<Sub>();
}

async function subKey(ctx: TestApp, token: string, id: number, body: Record<string, unknown> = { Name: 'child' }): Promise<string> {
  const res = await call(ctx.app, { method: 'POST', path: `${SUB}/keys`, token, query: `id=${id}`, body });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<{ Secret: string }>().Secret;
}

storeTest('subaccounts: create (credits from the parent), index, view, update; the record in order; 422s in JSON and XML', async (t) => {
  const clock = createManualClock(Date.UTC(2030, 4, 1, 9, 0, 0));
  const ctx = await buildTestApp(t, {}, { clock });
  const p = await ctx.seed('Parent');
  const start = await balance(ctx, p.token);
  assert.ok(start >= 100);

  const res = await call(ctx.app, {
    method: 'POST',
    path: `${SUB}/create`,
    token: p.token,
    body: { Name: 'Shop', Credits: 40, MaxPerDay: 500 },
  });
  assert.equal(res.statusCode, 201, res.body);
  const shop = res.json<Sub>();
  assert.deepEqual(Object.keys(shop), FIELDS);
  assert.deepEqual(
    { ...shop, Id: 0 },
    {
      Id: 0,
      Name: 'Shop',
      Status: 'active',
      AvailableCredits: 40,
      MaxPerSecond: 0,
      MaxPerDay: 500,
      DateCreated: '2030-05-01 09:00:00',
      DateUpdated: '2030-05-01 09:00:00',
    },
  );
  assert.equal(res.headers.location, `http://localhost:80${SUB}/view?id=${shop.Id}`);
  assert.equal(await balance(ctx, p.token), start - 40, 'the credits came from the parent');
  await assertLedgerAddsUp(ctx.store);

  const other = await createSub(ctx, p.token, { Name: 'Other' });
  const list = await call(ctx.app, { path: `${SUB}/index`, token: p.token });
  assert.equal(list.statusCode, 200);
  assert.deepEqual(
    list.json<Sub[]>().map((s) => s.Id),
    [shop.Id, other.Id],
  );
  assert.equal(list.headers['x-pagination-total-count'], '2');
  const view = await call(ctx.app, { path: `${SUB}/view`, token: p.token, query: `id=${shop.Id}` });
  assert.deepEqual(view.json(), shop);

  clock.advance(60_000);
  const upd = await call(ctx.app, {
    method: 'PATCH',
    path: `${SUB}/update`,
    token: p.token,
    query: `id=${shop.Id}`,
    body: { Name: 'Shop 2', MaxPerSecond: 50 },
  });
  assert.equal(upd.statusCode, 200, upd.body);
  assert.deepEqual({ ...upd.json<Sub>() }, { ...shop, Name: 'Shop 2', MaxPerSecond: 50, DateUpdated: '2030-05-01 09:01:00' });

  for (const wire of WIRES) {
    assert422(
      await call(ctx.app, { method: 'POST', path: `${SUB}/create`, token: p.token, wire, body: { Name: ' ', MaxPerSecond: -1 } }),
      [fieldError('Name', 'Name cannot be blank.'), fieldError('MaxPerSecond', 'Max Per Second must be no less than 0.')],
      wire,
    );
    assert422(
      await call(ctx.app, { method: 'POST', path: `${SUB}/create`, token: p.token, wire, body: { Name: 'Rich', Credits: 1_000_000 } }),
      [fieldError('Credits', `Not enough credits: 1,000,000 needed, ${(start - 40).toLocaleString('en-US')} available.`)],
      wire,
    );
    assert422(
      await call(ctx.app, {
        method: 'PUT',
        path: `${SUB}/update`,
        token: p.token,
        wire,
        query: `id=${shop.Id}`,
        body: { Status: 'closed', Name: 'x'.repeat(256) },
      }),
      [fieldError('Name', 'Name should contain at most 255 characters.'), fieldError('Status', 'Status is invalid.')],
      wire,
    );
  }
  const after = await call(ctx.app, { path: `${SUB}/index`, token: p.token });
  assert.equal(after.json<Sub[]>().length, 2, 'a refused create wrote nothing');
  assert.equal(await balance(ctx, p.token), start - 40);
  await assertLedgerAddsUp(ctx.store);
});

storeTest(
  'subaccounts/credits: both ways as a transfer_out and transfer_in pair; not enough, zero and a closed sub-account refused',
  async (t) => {
    const ctx = await buildTestApp(t);
    const p = await ctx.seed('Parent');
    const start = await balance(ctx, p.token);
    const child = await createSub(ctx, p.token, { Name: 'Child' });
    const move = (amount: unknown) =>
      call(ctx.app, { method: 'POST', path: `${SUB}/credits`, token: p.token, query: `id=${child.Id}`, body: { Amount: amount } });

    let res = await move(25);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json<Sub>().AvailableCredits, 25);
    res = await move(-10);
    assert.equal(res.json<Sub>().AvailableCredits, 15);
    assert.equal(await balance(ctx, p.token), start - 15);

    const entries = await ctx.store.db
      .selectFrom('credit_ledger')
      .select(['account_id', 'type', 'amount', 'reference'])
      .where('type', 'in', ['transfer_in', 'transfer_out'])
      .orderBy('id')
      .execute();
    assert.deepEqual(
      entries.map((e) => ({ ...e, account_id: Number(e.account_id), amount: Number(e.amount) })),
      [
        { account_id: p.account.id, type: 'transfer_out', amount: -25, reference: `account:${child.Id}` },
        { account_id: child.Id, type: 'transfer_in', amount: 25, reference: `account:${p.account.id}` },
        { account_id: child.Id, type: 'transfer_out', amount: -10, reference: `account:${p.account.id}` },
        { account_id: p.account.id, type: 'transfer_in', amount: 10, reference: `account:${child.Id}` },
      ],
    );
    await assertLedgerAddsUp(ctx.store);

    assert422(await move(-16), [fieldError('Amount', 'Not enough credits: 16 needed, 15 available.')]);
    assert422(await move(start), [
      fieldError(
        'Amount',
        `Not enough credits: ${start.toLocaleString('en-US')} needed, ${(start - 15).toLocaleString('en-US')} available.`,
      ),
    ]);
    assert422(await move(0), [fieldError('Amount', 'Amount is invalid.')]);
    assert422(await move('ten'), [fieldError('Amount', 'Amount must be an integer.')]);
    assert422(await call(ctx.app, { method: 'POST', path: `${SUB}/credits`, token: p.token, query: `id=${child.Id}`, body: {} }), [
      fieldError('Amount', 'Amount cannot be blank.'),
    ]);
    const closed = await call(ctx.app, { method: 'DELETE', path: `${SUB}/delete`, token: p.token, query: `id=${child.Id}` });
    assert.equal(closed.statusCode, 204);
    assert.equal(await balance(ctx, p.token), start, "a closed sub-account's credits are back with the parent");
    assert422(await move(5), [fieldError('Amount', 'Amount is invalid.')]);
    await assertLedgerAddsUp(ctx.store);
  },
);

storeTest(
  'subaccounts: a sub-account key works in its own account only; never subaccounts/*, never its parent or a sibling (404)',
  async (t) => {
    const ctx = await buildTestApp(t);
    const p = await ctx.seed('Parent');
    const c1 = await createSub(ctx, p.token, { Name: 'C1', Credits: 10 });
    const c2 = await createSub(ctx, p.token, { Name: 'C2' });
    const k1 = await subKey(ctx, p.token, c1.Id);
    assert.equal(await balance(ctx, k1), 10);

    // A contact of C1 (made by its own key) is C1's alone.
    const made = await call(ctx.app, { method: 'POST', path: '/v1/contacts/create', token: k1, body: { Number: '+15557770001' } });
    assert.equal(made.statusCode, 201, made.body);
    const contactId = made.json<{ Id: number }>().Id;
    assertError(
      await call(ctx.app, { path: '/v1/contacts/view', token: p.token, query: `id=${contactId}` }),
      404,
      `Object not found: ${contactId}`,
    );
    const parentContact = p.contacts[0]!.Id;
    assertError(
      await call(ctx.app, { path: '/v1/contacts/view', token: k1, query: `id=${parentContact}` }),
      404,
      `Object not found: ${parentContact}`,
    );

    // `*` in a sub-account does not include subaccounts.
    for (const path of ['index', 'usage']) {
      assertError(await call(ctx.app, { path: `${SUB}/${path}`, token: k1 }), 403, 'You are not allowed to perform this action.');
    }
    assertError(
      await call(ctx.app, { method: 'POST', path: `${SUB}/create`, token: k1, body: { Name: 'grandchild' } }),
      403,
      'You are not allowed to perform this action.',
    );
    // The parent's key sees only its own sub-accounts; another account's are 404.
    const u = await ctx.seed('Unrelated');
    const uChild = await createSub(ctx, u.token, { Name: 'U1' });
    for (const id of [uChild.Id, u.account.id, p.account.id]) {
      assertError(await call(ctx.app, { path: `${SUB}/view`, token: p.token, query: `id=${id}` }), 404, `Object not found: ${id}`);
      assertError(
        await call(ctx.app, { method: 'POST', path: `${SUB}/credits`, token: p.token, query: `id=${id}`, body: { Amount: 1 } }),
        404,
        `Object not found: ${id}`,
      );
    }
    // A sub-account's key can never be given the subaccounts scope, by its parent or by itself.
    for (const Scopes of [['subaccounts:read'], ['sms:write', 'subaccounts:write']]) {
      assert422(
        await call(ctx.app, { method: 'POST', path: `${SUB}/keys`, token: p.token, query: `id=${c2.Id}`, body: { Name: 'x', Scopes } }),
        [fieldError('Scopes', 'Scopes is invalid.')],
      );
      assert422(await call(ctx.app, { method: 'POST', path: '/v1/keys/create', token: k1, body: { Name: 'x', Scopes } }), [
        fieldError('Scopes', 'Scopes is invalid.'),
      ]);
    }
    assert.equal(
      (await call(ctx.app, { method: 'POST', path: '/v1/keys/create', token: k1, body: { Name: 'x', Scopes: ['sms:write'] } })).statusCode,
      201,
    );
    // A parent key without the scope: 403.
    const narrow = await keyWith(ctx, p.account.id, ['sms:write']);
    assertError(await call(ctx.app, { path: `${SUB}/index`, token: narrow }), 403, 'You are not allowed to perform this action.');
    const reader = await keyWith(ctx, p.account.id, ['subaccounts:read']);
    assert.equal((await call(ctx.app, { path: `${SUB}/index`, token: reader })).statusCode, 200);
    assertError(
      await call(ctx.app, { method: 'POST', path: `${SUB}/create`, token: reader, body: { Name: 'x' } }),
      403,
      'You are not allowed to perform this action.',
    );
  },
);

storeTest(
  'subaccounts/users and numbers: an owner invite of the sub-account; a number moved in and back, one the parent lacks refused',
  async (t) => {
    const ctx = await buildTestApp(t);
    const p = await ctx.seed('Parent');
    const child = await createSub(ctx, p.token, { Name: 'Child' });
    const res = await call(ctx.app, {
      method: 'POST',
      path: `${SUB}/users`,
      token: p.token,
      query: `id=${child.Id}`,
      body: { Email: 'owner@child.example' },
    });
    assert.equal(res.statusCode, 201, res.body);
    const user = res.json<{ Role: string; InviteUrl: string; Email: string }>();
    assert.equal(user.Role, 'owner');
    assert.match(user.InviteUrl, /^http:\/\/localhost:80\//);
    const row = await ctx.store.db
      .selectFrom('users')
      .select('account_id')
      .where('email', '=', 'owner@child.example')
      .executeTakeFirstOrThrow();
    assert.equal(Number(row.account_id), child.Id);

    const k = await subKey(ctx, p.token, child.Id);
    const active = p.numbers.find((n) => n.Status_Id === 0)!.Number;
    const moveIn = await call(ctx.app, {
      method: 'POST',
      path: `${SUB}/numbers`,
      token: p.token,
      query: `id=${child.Id}`,
      body: { Number: active },
    });
    assert.equal(moveIn.statusCode, 200, moveIn.body);
    assert.deepEqual(moveIn.json(), { Number: active, Status_Id: 0, Status_Description: 'Active', Blocked_Date: null });
    const childNumbers = await call(ctx.app, { path: '/v1/numbers/index', token: k });
    assert.deepEqual(
      childNumbers.json<{ Number: string }[]>().map((n) => n.Number),
      [active],
    );
    const parentNumbers = await call(ctx.app, { path: '/v1/numbers/index', token: p.token, query: 'per-page=100' });
    assert.ok(!parentNumbers.json<{ Number: string }[]>().some((n) => n.Number === active));
    // Again: the parent no longer holds it.
    assert422(
      await call(ctx.app, { method: 'POST', path: `${SUB}/numbers`, token: p.token, query: `id=${child.Id}`, body: { Number: active } }),
      [fieldError('Number', 'Number is invalid.')],
    );
    const inactive = p.numbers.find((n) => n.Status_Id !== 0);
    if (inactive) {
      assert422(
        await call(ctx.app, {
          method: 'POST',
          path: `${SUB}/numbers`,
          token: p.token,
          query: `id=${child.Id}`,
          body: { Number: inactive.Number },
        }),
        [fieldError('Number', 'Number is invalid.')],
      );
    }
    assert422(await call(ctx.app, { method: 'POST', path: `${SUB}/numbers`, token: p.token, query: `id=${child.Id}`, body: {} }), [
      fieldError('Number', 'Number cannot be blank.'),
    ]);
    // A number with keywords reserved on it stays with the account that reserved them.
    const second = p.numbers.filter((n) => n.Status_Id === 0)[1]!.Number;
    const reserved = await call(ctx.app, {
      method: 'POST',
      path: '/v1/keyword/reserve',
      token: p.token,
      body: { Keyword: 'JOIN', Number: second },
    });
    assert.equal(reserved.statusCode, 201, reserved.body);
    for (const wire of WIRES) {
      assert422(
        await call(ctx.app, {
          method: 'POST',
          path: `${SUB}/numbers`,
          token: p.token,
          wire,
          query: `id=${child.Id}`,
          body: { Number: second },
        }),
        [fieldError('Number', 'Number has keywords reserved on it; delete them first.')],
        wire,
      );
    }
    const back = await call(ctx.app, {
      method: 'DELETE',
      path: `${SUB}/numbers`,
      token: p.token,
      query: `id=${child.Id}`,
      body: { Number: active },
    });
    assert.equal(back.statusCode, 204, back.body);
    assert.deepEqual((await call(ctx.app, { path: '/v1/numbers/index', token: k })).json(), []);
  },
);

storeTest(
  'subaccounts: suspended writes 403 with the exact message, reads allowed; active again writes; usage per sub-account',
  async (t) => {
    const ctx = await buildTestApp(t);
    const p = await ctx.seed('Parent');
    const child = await createSub(ctx, p.token, { Name: 'Child', Credits: 50 });
    const k = await subKey(ctx, p.token, child.Id);
    const active = p.numbers.find((n) => n.Status_Id === 0)!.Number;
    await call(ctx.app, { method: 'POST', path: `${SUB}/numbers`, token: p.token, query: `id=${child.Id}`, body: { Number: active } });
    const send = () =>
      call(ctx.app, { method: 'POST', path: '/v1/sms/send', token: k, body: { Message: 'hi', MobilePhone: '+15551234567' } });
    assert.equal((await send()).statusCode, 201);

    const suspend = await call(ctx.app, {
      method: 'PATCH',
      path: `${SUB}/update`,
      token: p.token,
      query: `id=${child.Id}`,
      body: { Status: 'suspended' },
    });
    assert.equal(suspend.json<Sub>().Status, 'suspended');
    for (const wire of WIRES) {
      const res = await call(ctx.app, {
        method: 'POST',
        path: '/v1/sms/send',
        token: k,
        wire,
        body: { Message: 'hi', MobilePhone: '+15551234567' },
      });
      assertError(res, 403, 'This account is suspended.', wire);
    }
    assertError(
      await call(ctx.app, { method: 'POST', path: '/v1/contacts/create', token: k, body: { Number: '+15550001111' } }),
      403,
      'This account is suspended.',
    );
    assert.equal((await call(ctx.app, { path: '/v1/sms/index', token: k })).statusCode, 200, 'reads are allowed');
    assert.equal((await call(ctx.app, { method: 'HEAD', path: '/v1/credits/balance', token: k })).statusCode, 200);

    await call(ctx.app, { method: 'PATCH', path: `${SUB}/update`, token: p.token, query: `id=${child.Id}`, body: { Status: 'active' } });
    assert.equal((await send()).statusCode, 201);

    const usage = await call(ctx.app, { path: `${SUB}/usage`, token: p.token });
    assert.equal(usage.statusCode, 200, usage.body);
    const rows = usage.json<Record<string, unknown>[]>();
    assert.deepEqual(Object.keys(rows[0]!), ['Id', 'Name', 'Outbound', 'Delivered', 'Failed', 'Credits']);
    assert.deepEqual(rows, [{ Id: child.Id, Name: 'Child', Outbound: 2, Delivered: 0, Failed: 0, Credits: 2 }]);
    assert422(await call(ctx.app, { path: `${SUB}/usage`, token: p.token, query: 'from=yesterday' }), [
      fieldError('from', 'The format of From is invalid.'),
    ]);
    assert422(await call(ctx.app, { path: `${SUB}/usage`, token: p.token, query: 'from=2030-01-02%2000:00:00&to=2030-01-01%2000:00:00' }), [
      fieldError('to', 'To is invalid.'),
    ]);
  },
);

storeTest(
  'subaccounts/delete: Queued messages Rejected ACCOUNT_CLOSED and refunded, credits back with the parent, its keys 401, data kept',
  async (t) => {
    const ctx = await buildTestApp(t);
    const p = await ctx.seed('Parent');
    const start = await balance(ctx, p.token);
    const child = await createSub(ctx, p.token, { Name: 'Child', Credits: 30 });
    const k = await subKey(ctx, p.token, child.Id);
    const active = p.numbers.find((n) => n.Status_Id === 0)!.Number;
    await call(ctx.app, { method: 'POST', path: `${SUB}/numbers`, token: p.token, query: `id=${child.Id}`, body: { Number: active } });
    for (let i = 0; i < 3; i++) {
      const res = await call(ctx.app, {
        method: 'POST',
        path: '/v1/sms/send',
        token: k,
        body: { Message: `m${i}`, MobilePhone: '+15551234567' },
      });
      assert.equal(res.statusCode, 201, res.body);
    }
    assert.equal(await balance(ctx, k), 27);
    // One more, held by a dispatcher (leased) at the moment of closing: it is left to the carrier.
    const inFlight = await call(ctx.app, {
      method: 'POST',
      path: '/v1/sms/send',
      token: k,
      body: { Message: 'in flight', MobilePhone: '+15551234567' },
    });
    const inFlightId = inFlight.json<{ Id: number }[]>()[0]!.Id;
    await ctx.store.db
      .updateTable('messages')
      .set({ lease_token: 'dispatcher', due_at: Date.now() + 60_000 })
      .where('id', '=', inFlightId)
      .execute();
    const closed = await call(ctx.app, { method: 'DELETE', path: `${SUB}/delete`, token: p.token, query: `id=${child.Id}` });
    assert.equal(closed.statusCode, 204, closed.body);
    assertError(await call(ctx.app, { path: '/v1/credits/balance', token: k }), 401, 'Your request was made with invalid credentials.');

    const msgs = await ctx.store.db
      .selectFrom('messages')
      .select(['status_id', 'error_code'])
      .where('account_id', '=', child.Id)
      .where('id', '<>', inFlightId)
      .execute();
    assert.equal(msgs.length, 3, 'its data is kept');
    assert.ok(msgs.every((m) => Number(m.status_id) === 6 && m.error_code === 'ACCOUNT_CLOSED'));
    assert.equal(await balance(ctx, p.token), start - 1, 'every credit is back with the parent but the one at the carrier');
    // The carrier refuses the one in flight: its refund goes on to the parent.
    await inTransaction(ctx.store, (tx) => refundCredits(tx, child.Id, 1, Math.floor(Date.now() / 1000), `message:${inFlightId}`));
    assert.equal(await balance(ctx, p.token), start, 'a late refund reaches the parent too');
    const view = await call(ctx.app, { path: `${SUB}/view`, token: p.token, query: `id=${child.Id}` });
    assert.deepEqual([view.json<Sub>().Status, view.json<Sub>().AvailableCredits], ['closed', 0]);
    // Closing again changes nothing; a closed account cannot be made active.
    assert.equal(
      (await call(ctx.app, { method: 'DELETE', path: `${SUB}/delete`, token: p.token, query: `id=${child.Id}` })).statusCode,
      204,
    );
    assert422(
      await call(ctx.app, { method: 'PATCH', path: `${SUB}/update`, token: p.token, query: `id=${child.Id}`, body: { Status: 'active' } }),
      [fieldError('Status', 'Status is invalid.')],
    );
    await assertLedgerAddsUp(ctx.store);
  },
);
