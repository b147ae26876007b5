/**
 * `/admin/v1/accounts/…` (docs/API.md §16.4) on each store: every account (sub-accounts and closed
 * ones included) with `ParentId`; create, update (suspend), close; credits as `topup` and
 * `adjustment` entries (never below zero); keys and users of any account; exact records in JSON and
 * XML, exact 422s, pagination with Link; every write in the touched account's audit log as
 * `operator:{Id}:{Name}`, refusals included; the ledger adds up after every step.
 */
import assert from 'node:assert/strict';
import { createManualClock } from '../../../src/lib/time.ts';
import { buildTestApp } from '../../helpers/app.ts';
import { assertLedgerAddsUp } from '../../helpers/ledger.ts';
import { assert422, assertBody, assertError, call, fieldError, WIRES } from '../../helpers/operations.ts';
import { storeTest } from '../../helpers/stores.ts';
import { ACCOUNT_FIELDS, ADMIN, admin, adminOk, auditRows, eventually, operatorKey, type AccountRec } from './helpers.ts';

/** Entries as comparable text, sorted. */
const sorted = (entries: object[]) => entries.map((e) => JSON.stringify(e)).sort();

storeTest('accounts: create, index, view, update in JSON and XML; the record in order with ParentId; 422s; Location', async (t) => {
  const clock = createManualClock(Date.UTC(2030, 4, 1, 9, 0, 0));
  const ctx = await buildTestApp(t, {}, { clock });
  const demo = await ctx.seed('Reseller');
  const op = await operatorKey(ctx, 'Ann Ops', clock);

  const res = await admin(ctx, {
    method: 'POST',
    path: '/accounts/create',
    token: op.secret,
    body: { Name: 'Acme', MaxPerSecond: 5, Credits: 99 },
  });
  assert.equal(res.statusCode, 201, res.body);
  const acme = res.json<AccountRec>();
  assert.deepEqual(Object.keys(acme), ACCOUNT_FIELDS);
  const expected: AccountRec = {
    Id: acme.Id,
    Name: 'Acme',
    Status: 'active',
    // `Credits` is a sub-account's field: a top-level account starts at 0 (accounts/credits tops it up).
    AvailableCredits: 0,
    MaxPerSecond: 5,
    MaxPerDay: 0,
    DateCreated: '2030-05-01 09:00:00',
    DateUpdated: '2030-05-01 09:00:00',
    ParentId: null,
  };
  assert.deepEqual(acme, expected);
  assert.equal(res.headers.location, `http://localhost:80${ADMIN}/accounts/view?id=${acme.Id}`);

  // A sub-account of the reseller is in the operator's list, with its ParentId.
  const sub = await call(ctx.app, {
    method: 'POST',
    path: '/v1/subaccounts/create',
    token: demo.token,
    body: { Name: 'Shop', Credits: 10 },
  });
  assert.equal(sub.statusCode, 201, sub.body);
  const shopId = sub.json<{ Id: number }>().Id;

  for (const wire of WIRES) {
    const list = await admin(ctx, { path: '/accounts/index', token: op.secret, wire });
    const all = await adminOk<AccountRec[]>(ctx, 200, { path: '/accounts/index', token: op.secret });
    assert.deepEqual(
      all.map((a) => [a.Id, a.ParentId]),
      [
        [demo.account.id, null],
        [acme.Id, null],
        [shopId, demo.account.id],
      ],
    );
    assertBody(list, wire, 200, all);
    assertBody(await admin(ctx, { path: '/accounts/view', token: op.secret, wire, query: `id=${acme.Id}` }), wire, 200, expected);
    assertError(await admin(ctx, { path: '/accounts/view', token: op.secret, wire, query: 'id=999' }), 404, 'Object not found: 999', wire);
    assertError(await admin(ctx, { path: '/accounts/view', token: op.secret, wire }), 400, 'Missing required parameters: id', wire);
    assertError(
      await admin(ctx, { path: '/accounts/view', token: op.secret, wire, query: 'id=abc' }),
      400,
      'Invalid data received for parameter "id".',
      wire,
    );
    assertError(
      await admin(ctx, { path: '/accounts/view', token: op.secret, wire, query: 'id=99999999999' }),
      404,
      'Object not found: 99999999999',
      wire,
    );
    assert422(
      await admin(ctx, { method: 'POST', path: '/accounts/create', token: op.secret, wire, body: { Name: ' ', MaxPerDay: -1 } }),
      [fieldError('Name', 'Name cannot be blank.'), fieldError('MaxPerDay', 'Max Per Day must be no less than 0.')],
      wire,
    );
    assert422(
      await admin(ctx, {
        method: 'PATCH',
        path: '/accounts/update',
        token: op.secret,
        wire,
        query: `id=${acme.Id}`,
        body: { Name: 'x'.repeat(256), Status: 'closed', MaxPerSecond: 'fast' },
      }),
      [
        // §16's order of update's fields: Name, Status, MaxPerSecond, MaxPerDay.
        fieldError('Name', 'Name should contain at most 255 characters.'),
        fieldError('Status', 'Status is invalid.'),
        fieldError('MaxPerSecond', 'Max Per Second must be an integer.'),
      ],
      wire,
    );
  }
  // fields= keeps some fields, in the record's order.
  const picked = await adminOk<unknown>(ctx, 200, {
    path: '/accounts/view',
    token: op.secret,
    query: `id=${acme.Id}&fields=ParentId,Name`,
  });
  assert.deepEqual(picked, { Name: 'Acme', ParentId: null });

  clock.advance(60_000);
  const updated = await adminOk<AccountRec>(ctx, 200, {
    method: 'PUT',
    path: '/accounts/update',
    token: op.secret,
    query: `id=${shopId}`,
    body: { Name: 'Shop 2', Status: 'suspended', MaxPerDay: 1000 },
  });
  assert.equal(updated.Status, 'suspended');
  assert.equal(updated.Name, 'Shop 2');
  assert.equal(updated.MaxPerDay, 1000);
  assert.equal(updated.DateUpdated, '2030-05-01 09:01:00');
  assert.equal(updated.ParentId, demo.account.id);
  // The suspended sub-account's own writes are refused (the rule of §16, not re-implemented here).
  const again = await adminOk<AccountRec>(ctx, 200, {
    method: 'PATCH',
    path: '/accounts/update',
    token: op.secret,
    query: `id=${shopId}`,
    body: { Status: 'active' },
  });
  assert.equal(again.Status, 'active');

  // Bad JSON is a 400 before a missing account's 404 (CONVENTIONS §1).
  const bad = await admin(ctx, { method: 'PATCH', path: '/accounts/update', token: op.secret, query: 'id=999', rawBody: '{"Name":' });
  assertError(bad, 400, 'Invalid JSON data in request body: Syntax error');

  // The writes are in the touched accounts' logs as the operator, the refusals with their status.
  const actor = `operator:${op.id}:Ann Ops`;
  // (A refusal's entry is written after its response: compared in any order, once all are there.)
  await eventually(async () =>
    assert.deepEqual(
      sorted((await auditRows(ctx, acme.Id)).filter((e) => e.actor === actor)),
      sorted([
        { actor, operation: 'admin.accounts.create', objectId: String(acme.Id), status: 201 },
        ...WIRES.map(() => ({ actor, operation: 'admin.accounts.update.patch', objectId: String(acme.Id), status: 422 })),
      ]),
    ),
  );
  assert.deepEqual(
    (await auditRows(ctx, shopId)).filter((e) => e.actor === actor),
    [
      { actor, operation: 'admin.accounts.update', objectId: String(shopId), status: 200 },
      { actor, operation: 'admin.accounts.update.patch', objectId: String(shopId), status: 200 },
    ],
  );
  // A refused create, and requests for a missing account, concern no account: no entry anywhere.
  const everything = await ctx.store.db
    .selectFrom('audit_log')
    .select(['account_id', 'operation', 'status'])
    .where('actor', '=', actor)
    .execute();
  assert.equal(everything.length, 3 + WIRES.length);
  await assertLedgerAddsUp(ctx.store);
});

storeTest('accounts: pagination headers and Link on index, as CONVENTIONS §7', async (t) => {
  const ctx = await buildTestApp(t);
  const op = await operatorKey(ctx);
  for (const name of ['A', 'B', 'C'])
    await adminOk(ctx, 201, { method: 'POST', path: '/accounts/create', token: op.secret, body: { Name: name } });
  const page = await admin(ctx, { path: '/accounts/index', token: op.secret, query: 'per-page=1&page=2' });
  assert.equal(page.statusCode, 200);
  assert.deepEqual(
    page.json<AccountRec[]>().map((a) => a.Name),
    ['B'],
  );
  assert.equal(page.headers['x-pagination-total-count'], '3');
  assert.equal(page.headers['x-pagination-page-count'], '3');
  assert.equal(page.headers['x-pagination-current-page'], '2');
  assert.equal(page.headers['x-pagination-per-page'], '1');
  const base = `http://localhost:80${ADMIN}/accounts/index?access_token=${encodeURIComponent(op.secret)}&per-page=1`;
  assert.equal(
    page.headers.link,
    `<${base}&page=2>; rel=self, <${base}&page=1>; rel=first, <${base}&page=1>; rel=prev, <${base}&page=3>; rel=next, <${base}&page=3>; rel=last`,
  );
  // Past the end: the last page.
  const last = await admin(ctx, { path: '/accounts/index', token: op.secret, query: 'per-page=2&page=9' });
  assert.equal(last.headers['x-pagination-current-page'], '2');
  assert.deepEqual(
    last.json<AccountRec[]>().map((a) => a.Name),
    ['C'],
  );
});

storeTest('accounts/credits: topup and adjustment entries with the Note, never below zero; 422s; the ledger adds up', async (t) => {
  const ctx = await buildTestApp(t);
  const op = await operatorKey(ctx);
  const acme = await adminOk<AccountRec>(ctx, 201, { method: 'POST', path: '/accounts/create', token: op.secret, body: { Name: 'Acme' } });
  const credits = (body: unknown, wire: (typeof WIRES)[number] = 'json') =>
    admin(ctx, { method: 'POST', path: '/accounts/credits', token: op.secret, query: `id=${acme.Id}`, body, wire });

  let res = await credits({ Amount: 500, Note: 'invoice 42' });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.json<AccountRec>().AvailableCredits, 500);
  res = await credits({ Amount: '-120', Note: 'refund' });
  assert.equal(res.json<AccountRec>().AvailableCredits, 380);
  for (const wire of WIRES) {
    assert422(await credits({ Amount: -381 }, wire), [fieldError('Amount', 'Not enough credits: 381 needed, 380 available.')], wire);
    assert422(await credits({ Amount: 0 }, wire), [fieldError('Amount', 'Amount is invalid.')], wire);
    assert422(await credits({}, wire), [fieldError('Amount', 'Amount cannot be blank.')], wire);
    assert422(
      await credits({ Amount: 1.5, Note: 'n'.repeat(256) }, wire),
      [fieldError('Amount', 'Amount must be an integer.'), fieldError('Note', 'Note should contain at most 255 characters.')],
      wire,
    );
  }
  assertError(
    await admin(ctx, { method: 'POST', path: '/accounts/credits', token: op.secret, query: 'id=999', body: { Amount: 1 } }),
    404,
    'Object not found: 999',
  );

  const entries = await ctx.store.db
    .selectFrom('credit_ledger')
    .select(['type', 'amount', 'balance', 'reference', 'note'])
    .where('account_id', '=', acme.Id)
    .orderBy('id')
    .execute();
  assert.deepEqual(
    entries.map((e) => ({ ...e, amount: Number(e.amount), balance: Number(e.balance) })),
    [
      { type: 'topup', amount: 500, balance: 500, reference: '', note: 'invoice 42' },
      { type: 'adjustment', amount: -120, balance: 380, reference: '', note: 'refund' },
    ],
  );
  // The account sees them in its own ledger.
  const key = await adminOk<{ Secret: string }>(ctx, 201, {
    method: 'POST',
    path: '/accounts/keys',
    token: op.secret,
    query: `id=${acme.Id}`,
    body: { Name: 'k' },
  });
  const ledger = await call(ctx.app, { path: '/v1/credits/ledger', token: key.Secret });
  assert.deepEqual(
    ledger.json<{ Type: string; Amount: number; Note: string }[]>().map((e) => [e.Type, e.Amount, e.Note]),
    [
      ['adjustment', -120, 'refund'],
      ['topup', 500, 'invoice 42'],
    ],
  );
  await assertLedgerAddsUp(ctx.store);

  // Closed: no credits any more.
  assert.equal(
    (await admin(ctx, { method: 'DELETE', path: '/accounts/delete', token: op.secret, query: `id=${acme.Id}` })).statusCode,
    204,
  );
  assert422(await credits({ Amount: 5 }), [fieldError('Amount', 'Amount is invalid.')]);
  await assertLedgerAddsUp(ctx.store);
});

storeTest('accounts/delete: closes an account and its sub-accounts, keys 401, credits back to the parent; twice is a no-op', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed('Reseller');
  const op = await operatorKey(ctx);
  const before = (await call(ctx.app, { path: '/v1/credits/balance', token: demo.token })).json<{ AvailableCredits: number }>()
    .AvailableCredits;
  const sub = await call(ctx.app, {
    method: 'POST',
    path: '/v1/subaccounts/create',
    token: demo.token,
    body: { Name: 'Shop', Credits: 30 },
  });
  const shopId = sub.json<{ Id: number }>().Id;
  const shopKey = (
    await call(ctx.app, { method: 'POST', path: '/v1/subaccounts/keys', token: demo.token, query: `id=${shopId}`, body: { Name: 's' } })
  ).json<{
    Secret: string;
  }>().Secret;
  assert.equal((await call(ctx.app, { path: '/v1/credits/balance', token: shopKey })).statusCode, 200);

  // Closing the sub-account: its credits go back to the parent, its key stops.
  const res = await admin(ctx, { method: 'DELETE', path: '/accounts/delete', token: op.secret, query: `id=${shopId}` });
  assert.equal(res.statusCode, 204);
  assert.equal(res.body, '');
  assertError(await call(ctx.app, { path: '/v1/credits/balance', token: shopKey }), 401, 'Your request was made with invalid credentials.');
  assert.equal(
    (await call(ctx.app, { path: '/v1/credits/balance', token: demo.token })).json<{ AvailableCredits: number }>().AvailableCredits,
    before,
  );
  const shop = await adminOk<AccountRec>(ctx, 200, { path: '/accounts/view', token: op.secret, query: `id=${shopId}` });
  assert.equal(shop.Status, 'closed');
  assert.equal(shop.AvailableCredits, 0);
  await assertLedgerAddsUp(ctx.store);

  // Closing the reseller (top level): its own keys stop; it keeps its balance (no parent to give it to).
  assert.equal(
    (await admin(ctx, { method: 'DELETE', path: '/accounts/delete', token: op.secret, query: `id=${demo.account.id}` })).statusCode,
    204,
  );
  assert.equal(
    (await admin(ctx, { method: 'DELETE', path: '/accounts/delete', token: op.secret, query: `id=${demo.account.id}` })).statusCode,
    204,
  );
  assertError(
    await call(ctx.app, { path: '/v1/credits/balance', token: demo.token }),
    401,
    'Your request was made with invalid credentials.',
  );
  const reseller = await adminOk<AccountRec>(ctx, 200, { path: '/accounts/view', token: op.secret, query: `id=${demo.account.id}` });
  assert.equal(reseller.Status, 'closed');
  assert.equal(reseller.AvailableCredits, before);
  assert422(
    await admin(ctx, {
      method: 'PATCH',
      path: '/accounts/update',
      token: op.secret,
      query: `id=${demo.account.id}`,
      body: { Status: 'active' },
    }),
    [fieldError('Status', 'Status is invalid.')],
  );
  assertError(
    await admin(ctx, { method: 'DELETE', path: '/accounts/delete', token: op.secret, query: 'id=999' }),
    404,
    'Object not found: 999',
  );
  await assertLedgerAddsUp(ctx.store);
  await eventually(async () => {
    const closes = (await auditRows(ctx, demo.account.id)).filter((e) => e.operation === 'admin.accounts.delete');
    assert.deepEqual(
      closes.map((e) => e.status),
      [204, 204],
    );
  });
});

storeTest('accounts/keys and accounts/users: a working key with its Secret once; the first owner invited; 422s', async (t) => {
  const ctx = await buildTestApp(t, { MSGSVC_PUBLIC_URL: 'https://msg.example.com' });
  const op = await operatorKey(ctx);
  const acme = await adminOk<AccountRec>(ctx, 201, { method: 'POST', path: '/accounts/create', token: op.secret, body: { Name: 'Acme' } });

  for (const wire of WIRES) {
    const res = await admin(ctx, {
      method: 'POST',
      path: '/accounts/keys',
      token: op.secret,
      wire,
      query: `id=${acme.Id}`,
      body: { Name: `ci-${wire}`, Scopes: ['contacts:read'] },
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.headers.location, undefined);
  }
  const made = await adminOk<{ Id: number; Name: string; Scopes: string[]; Secret: string; Prefix: string }>(ctx, 201, {
    method: 'POST',
    path: '/accounts/keys',
    token: op.secret,
    query: `id=${acme.Id}`,
    body: { Name: 'full' },
  });
  assert.deepEqual(made.Scopes, ['*']);
  assert.equal(made.Prefix, made.Secret.slice(0, 8));
  // The key works in that account, and only there; it is listed without its Secret.
  const keys = await call(ctx.app, { path: '/v1/keys/index', token: made.Secret });
  assert.equal(keys.statusCode, 200, keys.body);
  assert.ok(!keys.body.includes(made.Secret));
  assert.equal(keys.json<unknown[]>().length, WIRES.length + 1);
  assertError(await admin(ctx, { path: '/accounts/index', token: made.Secret }), 401, 'Your request was made with invalid credentials.');
  assert422(
    await admin(ctx, {
      method: 'POST',
      path: '/accounts/keys',
      token: op.secret,
      query: `id=${acme.Id}`,
      body: { Name: '', Scopes: ['nope'] },
    }),
    [fieldError('Name', 'Name cannot be blank.'), fieldError('Scopes', 'Scopes is invalid.')],
  );

  const user = await admin(ctx, {
    method: 'POST',
    path: '/accounts/users',
    token: op.secret,
    query: `id=${acme.Id}`,
    body: { Email: 'Boss@Example.com', Name: 'Boss' },
  });
  assert.equal(user.statusCode, 201, user.body);
  const u = user.json<{ Email: string; Role: string; InviteUrl: string }>();
  assert.equal(u.Role, 'owner', 'the first person of an account is its owner by default');
  assert.match(u.InviteUrl, /^https:\/\/msg\.example\.com\/console\/#\/invite\/[A-Za-z0-9_-]+$/);
  const member = await adminOk<{ Role: string }>(ctx, 201, {
    method: 'POST',
    path: '/accounts/users',
    token: op.secret,
    query: `id=${acme.Id}`,
    body: { Email: 'm@example.com', Role: 'member' },
  });
  assert.equal(member.Role, 'member');
  assert422(
    await admin(ctx, {
      method: 'POST',
      path: '/accounts/users',
      token: op.secret,
      query: `id=${acme.Id}`,
      body: { Email: 'boss@example.com', Role: 'king' },
    }),
    // users/create's own order: the rules without the database first (Role), then uniqueness (Email).
    [fieldError('Role', 'Role is invalid.'), fieldError('Email', 'Email "boss@example.com" has already been taken.')],
  );
  // A closed account gets neither.
  await adminOk(ctx, 204, { method: 'DELETE', path: '/accounts/delete', token: op.secret, query: `id=${acme.Id}` });
  assert422(
    await admin(ctx, { method: 'POST', path: '/accounts/keys', token: op.secret, query: `id=${acme.Id}`, body: { Name: 'late' } }),
    [fieldError('Name', 'The account is closed.')],
  );
  const actor = `operator:${op.id}:ops`;
  await eventually(async () => {
    const ops = (await auditRows(ctx, acme.Id)).filter((e) => e.actor === actor).map((e) => `${e.operation} ${e.status}`);
    assert.deepEqual(
      ops.sort(),
      [
        'admin.accounts.create 201',
        ...WIRES.map(() => 'admin.accounts.keys 201'),
        'admin.accounts.keys 201',
        'admin.accounts.keys 422',
        'admin.accounts.users 201',
        'admin.accounts.users 201',
        'admin.accounts.users 422',
        'admin.accounts.delete 204',
        'admin.accounts.keys 422',
      ].sort(),
    );
  });
  // No entry holds a secret.
  const all = await ctx.store.db.selectFrom('audit_log').selectAll().execute();
  assert.ok(!JSON.stringify(all).includes(made.Secret));
});
