/**
 * The operator's reports (docs/API.md §16.4) on each store: `usage/index` per account, with the
 * fields of sub-accounts' usage; `carriers/index`, each configured carrier with the answering
 * process's State and InFlight and the database's Submitted and Failed of the last hour;
 * `audit/index`, every account's log newest first with `AccountId`, its filters and their 422s.
 * JSON and XML, pagination.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../../../src/app.ts';
import { createManualClock, type Clock } from '../../../src/lib/time.ts';
import { migrateToLatest, openStore } from '../../../src/store/db.ts';
import { buildTestApp, testConfig, testDatabaseUrl, type TestApp } from '../../helpers/app.ts';
import { assert422, assertBody, call, fieldError, WIRES } from '../../helpers/operations.ts';
import { storeTest } from '../../helpers/stores.ts';
import { admin, adminOk, operatorKey, type AccountRec } from './helpers.ts';

/** Stores an outbound (or inbound) message as the dispatcher leaves it. */
async function message(
  ctx: Pick<TestApp, 'store'>,
  m: {
    account: number;
    status: number;
    createdAt: number;
    sentAt?: number | null;
    carrier?: string | null;
    credits?: number;
    inbound?: boolean;
  },
): Promise<void> {
  await ctx.store.db
    .insertInto('messages')
    .values({
      account_id: m.account,
      direction: m.inbound ? 2 : 1,
      number: '55155',
      mobile_phone: '15550109999',
      message: 'hello',
      type_id: 1,
      status_id: m.status,
      segments: 1,
      credits: m.credits ?? 1,
      batch_id: null,
      scheduled_message_id: null,
      created_at: m.createdAt,
      sent_at: m.sentAt ?? null,
      delivered_at: null,
      due_at: null,
      lease_token: null,
      carrier: m.carrier ?? null,
      mms_template_id: null,
      carrier_message_id: null,
      receipt_status: null,
      receipt_error: null,
      receipt_due_at: null,
    })
    .execute();
}

/** An app built with a view of the carriers, as a process running a dispatcher has (buildTestApp has none). */
async function appWithCarriers(
  t: { after(fn: () => unknown): void },
  clock: Clock,
  deps: { carrierStates?: () => Record<string, string> | undefined; dispatcherStats?: () => never },
): Promise<TestApp> {
  const dir = mkdtempSync(join(tmpdir(), 'msgsvc-test-'));
  const config = testConfig(await testDatabaseUrl(dir), { MSGSVC_CARRIERS: 'sms1=sandbox:,bulk=smpp://user:pw@127.0.0.1:2775' });
  const store = openStore(config.database);
  await migrateToLatest(store);
  const app = buildApp(config, { store, clock, ...deps });
  await app.ready();
  t.after(async () => {
    await app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { app, store, config, dir, dbPath: '', seed: () => Promise.reject(new Error('not here')), close: () => Promise.resolve() };
}

storeTest('usage/index: per account, Outbound, Delivered, Failed and Credits in the range; 422s', async (t) => {
  const clock = createManualClock(Date.UTC(2030, 4, 10, 12, 0, 0));
  const ctx = await buildTestApp(t, {}, { clock });
  const op = await operatorKey(ctx, 'ops', clock);
  const a = await adminOk<AccountRec>(ctx, 201, { method: 'POST', path: '/accounts/create', token: op.secret, body: { Name: 'A' } });
  const b = await adminOk<AccountRec>(ctx, 201, { method: 'POST', path: '/accounts/create', token: op.secret, body: { Name: 'B' } });
  const now = clock.nowSeconds();
  await message(ctx, { account: a.Id, status: 3, createdAt: now - 3600, credits: 2 });
  await message(ctx, { account: a.Id, status: 5, createdAt: now - 3600 });
  await message(ctx, { account: a.Id, status: 2, createdAt: now - 60 });
  await message(ctx, { account: a.Id, status: 7, createdAt: now - 60, inbound: true });
  await message(ctx, { account: a.Id, status: 3, createdAt: now - 30 * 86_400 } /* before the default 7 days */);
  const expected = [
    { Id: a.Id, Name: 'A', Outbound: 3, Delivered: 1, Failed: 1, Credits: 3 },
    { Id: b.Id, Name: 'B', Outbound: 0, Delivered: 0, Failed: 0, Credits: 0 },
  ];
  for (const wire of WIRES) {
    const res = await admin(ctx, { path: '/usage/index', token: op.secret, wire });
    assertBody(res, wire, 200, expected);
    assert.equal(res.headers['x-pagination-total-count'], '2');
    assert422(
      await admin(ctx, { path: '/usage/index', token: op.secret, wire, query: 'from=yesterday' }),
      [fieldError('from', 'The format of From is invalid.')],
      wire,
    );
    assert422(
      await admin(ctx, { path: '/usage/index', token: op.secret, wire, query: 'from=2030-05-10%2012:00:00&to=2030-05-01%2000:00:00' }),
      [fieldError('to', 'To is invalid.')],
      wire,
    );
  }
  const wide = await adminOk<{ Outbound: number }[]>(ctx, 200, {
    path: '/usage/index',
    token: op.secret,
    query: 'from=2030-01-01%2000:00:00&per-page=1',
  });
  assert.deepEqual(wide, [{ ...expected[0], Outbound: 4, Delivered: 2, Credits: 4 }]);
});

storeTest(
  'carriers/index: each carrier, State and InFlight of this process, Submitted and Failed of the last hour from the database',
  async (t) => {
    const clock = createManualClock(Date.UTC(2030, 4, 10, 12, 0, 0));
    const stats = { carriers: { sms1: { ready: true, inFlight: 3, submits: {} }, bulk: { ready: false, inFlight: 0, submits: {} } } };
    const ctx = await appWithCarriers(t, clock, {
      carrierStates: () => ({ sms1: 'ok', bulk: 'unavailable' }),
      dispatcherStats: () => stats as never,
    });
    const op = await operatorKey(ctx, 'ops', clock);
    const acme = await adminOk<AccountRec>(ctx, 201, {
      method: 'POST',
      path: '/accounts/create',
      token: op.secret,
      body: { Name: 'Acme' },
    });
    const now = clock.nowSeconds();
    // sms1: three taken in the last hour (one then Failed, one Undelivered), one older; bulk: one.
    await message(ctx, { account: acme.Id, status: 3, createdAt: now - 100, sentAt: now - 90, carrier: 'sms1' });
    await message(ctx, { account: acme.Id, status: 5, createdAt: now - 100, sentAt: now - 3600, carrier: 'sms1' });
    await message(ctx, { account: acme.Id, status: 4, createdAt: now - 100, sentAt: now - 10, carrier: 'sms1' });
    await message(ctx, { account: acme.Id, status: 3, createdAt: now - 7200, sentAt: now - 3601, carrier: 'sms1' });
    await message(ctx, { account: acme.Id, status: 2, createdAt: now - 100, sentAt: now - 5, carrier: 'bulk' });
    // Refused before any carrier took it: in neither count.
    await message(ctx, { account: acme.Id, status: 5, createdAt: now - 100 });
    const expected = [
      { Name: 'sms1', Type: 'sandbox', State: 'ready', InFlight: 3, Submitted: 3, Failed: 2 },
      { Name: 'bulk', Type: 'smpp', State: 'down', InFlight: 0, Submitted: 1, Failed: 0 },
    ];
    for (const wire of WIRES) {
      const res = await admin(ctx, { path: '/carriers/index', token: op.secret, wire });
      assertBody(res, wire, 200, expected);
      assert.equal(res.headers['x-pagination-total-count'], '2');
    }
    const page = await admin(ctx, { path: '/carriers/index', token: op.secret, query: 'per-page=1&page=2' });
    assert.deepEqual(page.json(), [expected[1]]);
    assert.match(String(page.headers.link), /rel=self.*rel=first.*rel=prev$/);
  },
);

storeTest('carriers/index: where no dispatcher runs, State is unknown and InFlight null', async (t) => {
  const ctx = await buildTestApp(t);
  const op = await operatorKey(ctx);
  assert.deepEqual(await adminOk(ctx, 200, { path: '/carriers/index', token: op.secret }), [
    { Name: 'sandbox', Type: 'sandbox', State: 'unknown', InFlight: null, Submitted: 0, Failed: 0 },
  ]);
});

interface Entry {
  Id: number;
  DateCreated: string;
  Actor: string;
  Ip: string;
  Operation: string;
  ObjectId: string;
  Status: number;
  RequestId: string;
  AccountId: number;
}

storeTest('audit/index: every account, newest first, AccountId in each entry and as a filter; the /v1 filters; 422s', async (t) => {
  const clock = createManualClock(Date.UTC(2030, 4, 10, 12, 0, 0));
  const ctx = await buildTestApp(t, {}, { clock });
  const demo = await ctx.seed('Demo');
  const op = await operatorKey(ctx, 'ops', clock);
  // An account's own write, then the operator's in another account.
  const mine = await call(ctx.app, { method: 'POST', path: '/v1/groups/create', token: demo.token, body: { fname: 'Team' } });
  assert.equal(mine.statusCode, 201, mine.body);
  clock.advance(86_400_000);
  const acme = await adminOk<AccountRec>(ctx, 201, { method: 'POST', path: '/accounts/create', token: op.secret, body: { Name: 'Acme' } });
  await adminOk(ctx, 200, { method: 'POST', path: '/accounts/credits', token: op.secret, query: `id=${acme.Id}`, body: { Amount: 10 } });

  const all = await adminOk<Entry[]>(ctx, 200, { path: '/audit/index', token: op.secret });
  assert.deepEqual(
    all.map((e) => [e.AccountId, e.Operation, e.Actor.split(':')[0]]),
    [
      [acme.Id, 'admin.accounts.credits', 'operator'],
      [acme.Id, 'admin.accounts.create', 'operator'],
      [demo.account.id, 'groups.create', 'key'],
    ],
  );
  assert.deepEqual(Object.keys(all[0]!), ['Id', 'DateCreated', 'Actor', 'Ip', 'Operation', 'ObjectId', 'Status', 'RequestId', 'AccountId']);
  assert.equal(all[0]!.Actor, `operator:${op.id}:ops`);
  assert.equal(all[0]!.DateCreated, '2030-05-11 12:00:00');
  // The account sees the operator's entries in its own log, without AccountId.
  const key = await adminOk<{ Secret: string }>(ctx, 201, {
    method: 'POST',
    path: '/accounts/keys',
    token: op.secret,
    query: `id=${acme.Id}`,
    body: { Name: 'k' },
  });
  const own = await call(ctx.app, { path: '/v1/audit/index', token: key.Secret });
  const { AccountId: _dropped, ...first } = all[0]!;
  assert.deepEqual(own.json<unknown[]>()[1], first);

  for (const wire of WIRES) {
    const byAccount = await admin(ctx, { path: '/audit/index', token: op.secret, wire, query: `AccountId=${demo.account.id}` });
    assertBody(byAccount, wire, 200, [all[2]]);
    assertBody(
      await admin(ctx, {
        path: '/audit/index',
        token: op.secret,
        wire,
        query: `Operation=admin.accounts.create&Actor=operator:${op.id}:ops`,
      }),
      wire,
      200,
      [all[1]],
    );
    assertBody(await admin(ctx, { path: '/audit/index', token: op.secret, wire, query: 'to=2030-05-10' }), wire, 200, [all[2]]);
    assertBody(await admin(ctx, { path: '/audit/index', token: op.secret, wire, query: 'AccountId=99999999999' }), wire, 200, []);
    assert422(
      await admin(ctx, { path: '/audit/index', token: op.secret, wire, query: 'from=soon&AccountId=x' }),
      [fieldError('from', 'The format of From is invalid.'), fieldError('AccountId', 'Account Id must be an integer.')],
      wire,
    );
  }
  const page = await admin(ctx, { path: '/audit/index', token: op.secret, query: 'per-page=2&page=2' });
  assert.equal(page.headers['x-pagination-total-count'], '4');
  assert.deepEqual(
    page.json<Entry[]>().map((e) => e.Operation),
    ['admin.accounts.create', 'groups.create'],
  );
});
