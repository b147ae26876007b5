/**
 * `/admin/v1/numbers/…` (docs/API.md §16.4) on each store: the service's numbers and the account
 * that holds each; create in every status (Blocked_Date for 301 and 302), a number shared by two
 * accounts, `?number=` with `AccountId` when shared, update (status, a move to another account, in
 * both accounts' audit logs; refused while the account has keywords on it), delete (its keywords go
 * too); exact records in JSON and XML, exact 400s, 404s and 422s; the account sees the change in
 * its own numbers/index.
 */
import assert from 'node:assert/strict';
import { createManualClock } from '../../../src/lib/time.ts';
import { buildTestApp } from '../../helpers/app.ts';
import { assert422, assertBody, assertError, call, fieldError, WIRES } from '../../helpers/operations.ts';
import { storeTest } from '../../helpers/stores.ts';
import { admin, adminOk, auditRows, eventually, operatorKey, type AccountRec } from './helpers.ts';

interface NumberRec {
  Number: string;
  AccountId: number;
  Status_Id: number;
  Status_Description: string;
  Blocked_Date: string | null;
  DateCreated: string;
}

const FIELDS = ['Number', 'AccountId', 'Status_Id', 'Status_Description', 'Blocked_Date', 'DateCreated'];

storeTest('numbers: create in every status, index with filters, JSON and XML; 422s exact; the account sees them', async (t) => {
  const clock = createManualClock(Date.UTC(2030, 4, 1, 9, 0, 0));
  const ctx = await buildTestApp(t, {}, { clock });
  const op = await operatorKey(ctx, 'ops', clock);
  const acme = await adminOk<AccountRec>(ctx, 201, { method: 'POST', path: '/accounts/create', token: op.secret, body: { Name: 'Acme' } });
  const key = await adminOk<{ Secret: string }>(ctx, 201, {
    method: 'POST',
    path: '/accounts/keys',
    token: op.secret,
    query: `id=${acme.Id}`,
    body: { Name: 'k' },
  });

  const cases: [unknown, unknown, string, string, string | null][] = [
    ['77001', undefined, '77001', 'Active', null],
    ['+1 (555) 010-0001', 1, '15550100001', 'Inactive', null],
    ['5550100002', '301', '15550100002', 'Temporarily blocked.', '2030-05-01 09:00:00'],
    [77003, 302, '77003', 'Permanently blocked.', '2030-05-01 09:00:00'],
  ];
  const made: NumberRec[] = [];
  for (const [i, [number, status, digits, description, blocked]] of cases.entries()) {
    const wire = WIRES[i % WIRES.length]!;
    const body = { Number: number, AccountId: String(acme.Id), ...(status !== undefined ? { Status_Id: status } : {}) };
    const res = await admin(ctx, { method: 'POST', path: '/numbers/create', token: op.secret, wire, body });
    const expected: NumberRec = {
      Number: digits,
      AccountId: acme.Id,
      Status_Id: status === undefined ? 0 : Number(status),
      Status_Description: description,
      Blocked_Date: blocked,
      DateCreated: '2030-05-01 09:00:00',
    };
    assertBody(res, wire, 201, expected);
    assert.equal(res.headers.location, undefined);
    made.push(expected);
  }
  assert.deepEqual(Object.keys(made[0]!), FIELDS);

  // The account's own numbers/index shows them, as the §9.2 record.
  const own = await call(ctx.app, { path: '/v1/numbers/index', token: key.Secret });
  assert.deepEqual(
    own.json(),
    made.map((m) => ({ Number: m.Number, Status_Id: m.Status_Id, Status_Description: m.Status_Description, Blocked_Date: m.Blocked_Date })),
  );

  for (const wire of WIRES) {
    assertBody(await admin(ctx, { path: '/numbers/index', token: op.secret, wire, query: `AccountId=${acme.Id}` }), wire, 200, made);
    assertBody(await admin(ctx, { path: '/numbers/index', token: op.secret, wire, query: 'Number=%2B1%20555%20010%200002' }), wire, 200, [
      made[2],
    ]);
    assertBody(await admin(ctx, { path: '/numbers/index', token: op.secret, wire, query: 'AccountId=999' }), wire, 200, []);
    assert422(
      await admin(ctx, { path: '/numbers/index', token: op.secret, wire, query: 'AccountId=x&Number=abc' }),
      [fieldError('AccountId', 'Account Id must be an integer.'), fieldError('Number', 'Number is invalid.')],
      wire,
    );
    assert422(
      await admin(ctx, { method: 'POST', path: '/numbers/create', token: op.secret, wire, body: {} }),
      [fieldError('Number', 'Number cannot be blank.'), fieldError('AccountId', 'Account Id cannot be blank.')],
      wire,
    );
    assert422(
      await admin(ctx, {
        method: 'POST',
        path: '/numbers/create',
        token: op.secret,
        wire,
        body: { Number: '12', AccountId: 999, Status_Id: 5 },
      }),
      [
        fieldError('Number', 'Number is invalid.'),
        fieldError('AccountId', 'Account Id is invalid.'),
        fieldError('Status_Id', 'Status Id is invalid.'),
      ],
      wire,
    );
    assert422(
      await admin(ctx, {
        method: 'POST',
        path: '/numbers/create',
        token: op.secret,
        wire,
        body: { Number: '77001', AccountId: 'one', Status_Id: 'x' },
      }),
      [fieldError('AccountId', 'Account Id must be an integer.'), fieldError('Status_Id', 'Status Id must be an integer.')],
      wire,
    );
    // The account holds it already: the combination, with the values as sent.
    assert422(
      await admin(ctx, {
        method: 'POST',
        path: '/numbers/create',
        token: op.secret,
        wire,
        body: { Number: '+1 555 010 0001', AccountId: `${acme.Id}` },
      }),
      [fieldError('Number', `The combination "+1 555 010 0001"-"${acme.Id}" of Number and Account Id has already been taken.`)],
      wire,
    );
  }
  const all = await adminOk<NumberRec[]>(ctx, 200, { path: '/numbers/index', token: op.secret });
  assert.equal(all.length, 4, 'refusals wrote nothing');
  // A closed account holds no new number.
  await adminOk(ctx, 204, { method: 'DELETE', path: '/accounts/delete', token: op.secret, query: `id=${acme.Id}` });
  assert422(
    await admin(ctx, { method: 'POST', path: '/numbers/create', token: op.secret, body: { Number: '77009', AccountId: acme.Id } }),
    [fieldError('AccountId', 'Account Id is invalid.')],
  );
  // Every write and every refusal that named the account is in its log.
  const actor = `operator:${op.id}:ops`;
  // (A refusal's entry is written after its response: compared in any order, once all are there.)
  await eventually(async () => {
    const entries = (await auditRows(ctx, acme.Id)).filter((e) => e.operation === 'admin.numbers.create');
    assert.deepEqual(
      entries.map((e) => JSON.stringify([e.actor, e.objectId, e.status])).sort(),
      [
        [actor, '77001', 201],
        [actor, '15550100001', 201],
        [actor, '15550100002', 201],
        [actor, '77003', 201],
        ...WIRES.map(() => [actor, '15550100001', 422]),
        [actor, '77009', 422],
      ]
        .map((e) => JSON.stringify(e))
        .sort(),
    );
  });
});

storeTest('numbers: a shared number; ?number= with AccountId; update status and move; delete; 400s and 404s', async (t) => {
  const clock = createManualClock(Date.UTC(2030, 4, 1, 9, 0, 0));
  const ctx = await buildTestApp(t, {}, { clock });
  const a = await ctx.seed('A');
  const b = await ctx.seed('B');
  const op = await operatorKey(ctx, 'ops', clock);
  const c = await adminOk<AccountRec>(ctx, 201, { method: 'POST', path: '/accounts/create', token: op.secret, body: { Name: 'C' } });

  // Both demo accounts hold the short code 55155 (a shared short code): two records.
  const shared = await adminOk<NumberRec[]>(ctx, 200, { path: '/numbers/index', token: op.secret, query: 'Number=55155' });
  assert.deepEqual(
    shared.map((n) => n.AccountId),
    [a.account.id, b.account.id],
  );
  for (const wire of WIRES) {
    assertError(
      await admin(ctx, { method: 'PATCH', path: '/numbers/update', token: op.secret, wire, query: 'number=55155', body: { Status_Id: 1 } }),
      400,
      'Missing required parameters: AccountId',
      wire,
    );
    assertError(
      await admin(ctx, { method: 'PATCH', path: '/numbers/update', token: op.secret, wire, body: { Status_Id: 1 } }),
      400,
      'Missing required parameters: number',
      wire,
    );
    assertError(
      await admin(ctx, { method: 'DELETE', path: '/numbers/delete', token: op.secret, wire, query: 'number=55155&AccountId=x' }),
      400,
      'Invalid data received for parameter "AccountId".',
      wire,
    );
    assertError(
      await admin(ctx, { method: 'DELETE', path: '/numbers/delete', token: op.secret, wire, query: `number=55155&AccountId=${c.Id}` }),
      404,
      'Object not found: 55155',
      wire,
    );
    assertError(
      await admin(ctx, { method: 'DELETE', path: '/numbers/delete', token: op.secret, wire, query: 'number=99999' }),
      404,
      'Object not found: 99999',
      wire,
    );
    assertError(
      await admin(ctx, { method: 'DELETE', path: '/numbers/delete', token: op.secret, wire, query: 'number=abc' }),
      404,
      'Object not found: abc',
      wire,
    );
  }

  // Blocking A's hold sets Blocked_Date; unblocking clears it; B's hold is untouched.
  clock.advance(60_000);
  let rec = await adminOk<NumberRec>(ctx, 200, {
    method: 'PUT',
    path: '/numbers/update',
    token: op.secret,
    query: `number=55155&AccountId=${a.account.id}`,
    body: { Status_Id: '302' },
  });
  assert.deepEqual(rec, { ...shared[0]!, Status_Id: 302, Status_Description: 'Permanently blocked.', Blocked_Date: '2030-05-01 09:01:00' });
  rec = await adminOk<NumberRec>(ctx, 200, {
    method: 'PATCH',
    path: '/numbers/update',
    token: op.secret,
    query: `number=55155&AccountId=${a.account.id}`,
    body: { Status_Id: 0 },
  });
  assert.equal(rec.Blocked_Date, null);
  const bHold = (
    await adminOk<NumberRec[]>(ctx, 200, { path: '/numbers/index', token: op.secret, query: `Number=55155&AccountId=${b.account.id}` })
  )[0]!;
  assert.deepEqual(bHold, shared[1]);
  assert422(
    await admin(ctx, {
      method: 'PATCH',
      path: '/numbers/update',
      token: op.secret,
      query: `number=55155&AccountId=${a.account.id}`,
      body: { AccountId: '', Status_Id: 9 },
    }),
    [fieldError('AccountId', 'Account Id cannot be blank.'), fieldError('Status_Id', 'Status Id is invalid.')],
  );
  // Moving A's hold to B, who holds it already: the combination.
  assert422(
    await admin(ctx, {
      method: 'PATCH',
      path: '/numbers/update',
      token: op.secret,
      query: `number=55155&AccountId=${a.account.id}`,
      body: { AccountId: b.account.id },
    }),
    [fieldError('AccountId', `The combination "55155"-"${b.account.id}" of Number and Account Id has already been taken.`)],
  );
  assert422(
    await admin(ctx, {
      method: 'PATCH',
      path: '/numbers/update',
      token: op.secret,
      query: `number=55155&AccountId=${a.account.id}`,
      body: { AccountId: 999 },
    }),
    [fieldError('AccountId', 'Account Id is invalid.')],
  );

  // A's keywords on a number keep it where it is: a move is refused, until they are gone.
  const active = a.numbers.find((n) => n.Status_Id === 0 && n.Number !== '55155')!;
  const reserved = await call(ctx.app, {
    method: 'POST',
    path: '/v1/keyword/reserve',
    token: a.token,
    body: { Keyword: 'JOINUS', Number: active.Number },
  });
  assert.equal(reserved.statusCode, 201, reserved.body);
  assert.ok((await call(ctx.app, { path: '/v1/keyword/index', token: a.token })).body.includes('JOINUS'));
  const q = `number=${active.Number}&AccountId=${a.account.id}`;
  assert422(await admin(ctx, { method: 'PATCH', path: '/numbers/update', token: op.secret, query: q, body: { AccountId: c.Id } }), [
    fieldError('AccountId', 'Number has keywords reserved on it; delete them first.'),
  ]);
  // A number held by one account alone needs no AccountId; moved, it is the new account's, in both logs.
  const lone = a.numbers.find((n) => n.Status_Id === 1)!;
  const holders = await adminOk<NumberRec[]>(ctx, 200, { path: '/numbers/index', token: op.secret, query: `Number=${lone.Number}` });
  const loneQuery = holders.length === 1 ? `number=${lone.Number}` : `number=${lone.Number}&AccountId=${a.account.id}`;
  const moved = await adminOk<NumberRec>(ctx, 200, {
    method: 'PATCH',
    path: '/numbers/update',
    token: op.secret,
    query: loneQuery,
    body: { AccountId: String(c.Id) },
  });
  assert.equal(moved.AccountId, c.Id);
  const cKey = await adminOk<{ Secret: string }>(ctx, 201, {
    method: 'POST',
    path: '/accounts/keys',
    token: op.secret,
    query: `id=${c.Id}`,
    body: { Name: 'k' },
  });
  assert.deepEqual(
    (await call(ctx.app, { path: '/v1/numbers/index', token: cKey.Secret })).json<{ Number: string }[]>().map((n) => n.Number),
    [lone.Number],
  );
  const actor = `operator:${op.id}:ops`;
  for (const id of [a.account.id, c.Id]) {
    const rows = (await auditRows(ctx, id)).filter((e) => e.operation === 'admin.numbers.update.patch' && e.objectId === lone.Number);
    assert.deepEqual(rows, [{ actor, operation: 'admin.numbers.update.patch', objectId: lone.Number, status: 200 }], `account ${id}`);
  }

  // Delete: the hold is gone, with the keywords on it; B's hold on the shared code stays.
  const res = await admin(ctx, { method: 'DELETE', path: '/numbers/delete', token: op.secret, query: q });
  assert.equal(res.statusCode, 204);
  assert.equal(res.body, '');
  const keywords = await call(ctx.app, { path: '/v1/keyword/index', token: a.token });
  assert.equal(keywords.statusCode, 200, keywords.body);
  assert.ok(!keywords.body.includes('JOINUS'), keywords.body);
  assertError(
    await admin(ctx, { method: 'DELETE', path: '/numbers/delete', token: op.secret, query: q }),
    404,
    `Object not found: ${active.Number}`,
  );
  assert.equal(
    (await admin(ctx, { method: 'DELETE', path: '/numbers/delete', token: op.secret, query: `number=55155&AccountId=${a.account.id}` }))
      .statusCode,
    204,
  );
  // Now B alone holds 55155: no AccountId needed.
  assert.equal(
    (await admin(ctx, { method: 'PATCH', path: '/numbers/update', token: op.secret, query: 'number=55155', body: { Status_Id: 1 } }))
      .statusCode,
    200,
  );
  assert.deepEqual(
    (await auditRows(ctx, a.account.id)).filter((e) => e.operation === 'admin.numbers.delete').map((e) => [e.objectId, e.status]),
    [
      [active.Number, 204],
      ['55155', 204],
    ],
  );
});
