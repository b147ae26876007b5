/**
 * The consent ledger and `GET /v1/contacts/consent?id=` (API.md §14.4.2), on each store, over
 * app.inject in JSON and XML. The oracle is the raw `contact_consent` rows and the API.md table of
 * sources, never the server's mappers:
 * - each source: `keyword` (STOP/START through POST /v1/sandbox/inbound, the dispatcher's carrier
 *   sink and an HTTP carrier's callback: Detail the text received, trimmed, case kept; Carrier the
 *   configured carrier's name), `api` (contacts/create with OptedOut 1, contacts/update 0 → 1),
 *   `import` (contacts/import and the CLI's importContacts), `console` (X-Msgsvc-Client: console);
 * - a change that changes nothing adds nothing (STOP from an opted-out contact, OptedOut 1 to an
 *   opted-out contact, a contact created with OptedOut 0, START from an unknown sender);
 * - a shared short code's STOP writes one entry per account whose contact changed;
 * - order (Id ascending), pagination headers and Link, GET and HEAD;
 * - 400 for a missing or non-integer id, 404 for an unknown or another account's contact;
 * - append-only in the database: UPDATE and DELETE through the store's own handle fail; the
 *   contact's deletion (and its account's) removes its ledger;
 * - the same transaction: a ledger write that fails undoes the change, and a change whose
 *   transaction fails after the ledger write leaves no entry.
 */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { sql } from 'kysely';
import { receiveCarrierInbound } from '../../../src/domain/carrier-callbacks.ts';
import { importContacts } from '../../../src/domain/contacts-import.ts';
import type { DemoAccount } from '../../../src/domain/demo.ts';
import { createInboundHandler, inboundDeps } from '../../../src/domain/inbound.ts';
import { Dispatcher } from '../../../src/dispatch/dispatcher.ts';
import { createSandboxCarrier } from '../../../src/dispatch/sandbox.ts';
import { createManualClock } from '../../../src/lib/time.ts';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import { emptyAccount, MSG } from '../../helpers/conventions.ts';
import { assert422, assertBody, assertError, call, fieldError, fmtTime, isXml, WIRES, type Wire } from '../../helpers/operations.ts';
import { storeTest, testStoreKind } from '../../helpers/stores.ts';

const CONSENT = '/v1/contacts/consent';
const INBOUND = '/v1/sandbox/inbound';
const SHORT = '55155'; // every demo account holds it: two seeded accounts share a short code
const SENDER = '+15551234567';
const OPT_OUT_CLEAR = 'Opted Out can only be cleared by the contact texting START.';

interface Entry {
  Id: number;
  OptedOut: number;
  Source: string;
  Detail: string;
  Carrier: string;
  DateCreated: string;
}

/** The contact's ledger as the database holds it, as API.md §14.4.2 records (Id ascending). */
async function ledgerFromDb(ctx: TestApp, contactId: number, tz = 'UTC'): Promise<Entry[]> {
  const rows = await ctx.store.db.selectFrom('contact_consent').selectAll().where('contact_id', '=', contactId).orderBy('id').execute();
  return rows.map((r) => ({
    Id: Number(r.id),
    OptedOut: Number(r.opted_out),
    Source: r.source,
    Detail: r.detail,
    Carrier: r.carrier,
    DateCreated: fmtTime(Number(r.created_at), tz),
  }));
}

/** The ledger as compact lines: `OptedOut Source Detail Carrier`. */
async function lines(ctx: TestApp, contactId: number | undefined): Promise<string[]> {
  if (contactId === undefined) return [];
  return (await ledgerFromDb(ctx, contactId)).map((e) => `${e.OptedOut} ${e.Source} ${e.Detail} ${e.Carrier}`.trimEnd());
}

async function countLedger(ctx: TestApp): Promise<number> {
  const r = await ctx.store.db
    .selectFrom('contact_consent')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** The id of the account's contact with this number (E.164 with `+`), if any. */
async function contactId(ctx: TestApp, accountId: number, e164: string): Promise<number | undefined> {
  const r = await ctx.store.db
    .selectFrom('contacts')
    .select('id')
    .where('account_id', '=', accountId)
    .where('number_e164', '=', e164)
    .executeTakeFirst();
  return r ? Number(r.id) : undefined;
}

async function optedOutOf(ctx: TestApp, id: number): Promise<number> {
  const r = await ctx.store.db.selectFrom('contacts').select('opted_out').where('id', '=', id).executeTakeFirstOrThrow();
  return Number(r.opted_out);
}

/** POST sandbox/inbound as `demo`: a text from `from` to the shared short code. */
async function text(ctx: TestApp, demo: DemoAccount, message: string, from = SENDER): Promise<void> {
  const res = await call(ctx.app, { method: 'POST', path: INBOUND, token: demo.token, body: { From: from, To: SHORT, Message: message } });
  assert.equal(res.statusCode, 201, res.body);
}

/** A contacts write with an optional X-Msgsvc-Client header. */
function write(
  ctx: TestApp,
  token: string,
  o: { method: 'POST' | 'PUT'; path: string; query?: string; body?: unknown; csv?: string; client?: string },
) {
  return ctx.app.inject({
    method: o.method,
    url: `${o.path}?access_token=${encodeURIComponent(token)}${o.query ? `&${o.query}` : ''}`,
    headers: {
      accept: 'application/json',
      'content-type': o.csv !== undefined ? 'text/csv' : 'application/json',
      ...(o.client !== undefined ? { 'x-msgsvc-client': o.client } : {}),
    },
    payload: o.csv ?? JSON.stringify(o.body),
  });
}

async function create(ctx: TestApp, token: string, body: Record<string, unknown>, client?: string): Promise<number> {
  const res = await write(ctx, token, { method: 'POST', path: '/v1/contacts/create', body, ...(client !== undefined ? { client } : {}) });
  assert.equal(res.statusCode, 201, res.body);
  return (JSON.parse(res.body) as { Id: number }).Id;
}

async function update(ctx: TestApp, token: string, id: number, body: Record<string, unknown>, client?: string) {
  return write(ctx, token, {
    method: 'PUT',
    path: '/v1/contacts/update',
    query: `id=${id}`,
    body,
    ...(client !== undefined ? { client } : {}),
  });
}

/** GET contacts/consent?id= and check the 200 byte for byte against the database's ledger. */
async function assertLedger(ctx: TestApp, token: string, id: number, wire: Wire = 'json'): Promise<Entry[]> {
  const res = await call(ctx.app, { path: CONSENT, token, query: `id=${id}`, wire });
  const expected = await ledgerFromDb(ctx, id);
  assertBody(res, wire, 200, expected);
  assert.equal(res.headers['x-pagination-total-count'], String(expected.length));
  return expected;
}

/** Makes every INSERT into `table` fail (a trigger), on either store. */
async function failInserts(ctx: TestApp, table: string): Promise<void> {
  if (testStoreKind() === 'postgres') {
    await sql
      .raw(`CREATE FUNCTION test_fail_${table}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'test: no insert'; END $$`)
      .execute(ctx.store.db);
    await sql
      .raw(`CREATE TRIGGER test_fail_${table} BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION test_fail_${table}()`)
      .execute(ctx.store.db);
  } else {
    await sql
      .raw(`CREATE TRIGGER test_fail_${table} BEFORE INSERT ON ${table} BEGIN SELECT RAISE(ABORT, 'test: no insert'); END`)
      .execute(ctx.store.db);
  }
}

async function dropFailInserts(ctx: TestApp, table: string): Promise<void> {
  await sql.raw(`DROP TRIGGER test_fail_${table}${testStoreKind() === 'postgres' ? ` ON ${table}` : ''}`).execute(ctx.store.db);
}

// ------------------------------------------------------------------ keyword

storeTest(
  'consent: STOP and START through sandbox/inbound are `keyword` entries (Detail as received, trimmed; Carrier sandbox); a STOP that changes nothing adds none; JSON, XML and HEAD',
  async (t) => {
    const clock = createManualClock(1_700_000_000_000);
    const ctx = await buildTestApp(t, {}, { clock });
    const demo = await ctx.seed();
    const account = demo.account.id;

    // START from an unknown sender: no contact, nothing to record.
    await text(ctx, demo, 'START');
    assert.equal(await contactId(ctx, account, SENDER), undefined);

    // STOP from a new sender creates the contact opted out: one entry.
    await text(ctx, demo, '  Stop \n');
    const id = (await contactId(ctx, account, SENDER))!;
    assert.deepEqual(await lines(ctx, id), ['1 keyword Stop sandbox']);
    // A second STOP (another word) changes nothing: no entry.
    clock.advance(60_000);
    await text(ctx, demo, 'QUIT');
    assert.deepEqual(await lines(ctx, id), ['1 keyword Stop sandbox']);
    clock.advance(60_000);
    await text(ctx, demo, 'unstop');
    clock.advance(60_000);
    await text(ctx, demo, 'start'); // already opted in: nothing
    await text(ctx, demo, 'UNSUBSCRIBE');
    assert.deepEqual(await lines(ctx, id), ['1 keyword Stop sandbox', '0 keyword unstop sandbox', '1 keyword UNSUBSCRIBE sandbox']);
    // A keyword-like text that is no carrier word, and HELP, change nothing.
    await text(ctx, demo, 'stop please');
    await text(ctx, demo, 'HELP');
    assert.equal((await lines(ctx, id)).length, 3);

    const rows = await ledgerFromDb(ctx, id);
    assert.deepEqual(
      rows.map((r) => r.DateCreated),
      [fmtTime(1_700_000_000), fmtTime(1_700_000_120), fmtTime(1_700_000_180)],
      'DateCreated: the time of each change',
    );
    assert.ok(rows[0]!.Id < rows[1]!.Id && rows[1]!.Id < rows[2]!.Id);
    for (const wire of WIRES) await assertLedger(ctx, demo.token, id, wire);

    // HEAD: the headers of GET, no body.
    const head = await call(ctx.app, { method: 'HEAD', path: CONSENT, token: demo.token, query: `id=${id}` });
    assert.equal(head.statusCode, 200);
    assert.equal(head.body, '');
    assert.equal(head.headers['x-pagination-total-count'], '3');
  },
);

storeTest(
  'consent: Carrier is the configured name of the carrier a keyword came through (sandbox, dispatcher sink, HTTP carrier callback)',
  async (t) => {
    const ctx = await buildTestApp(t, { MSGSVC_CARRIERS: 'lab=sandbox:' });
    const demo = await ctx.seed();
    const account = demo.account.id;

    // sandbox/inbound: the sandbox carrier's configured name.
    await text(ctx, demo, 'STOP', '+15551230001');
    assert.deepEqual(await lines(ctx, await contactId(ctx, account, '+15551230001')), ['1 keyword STOP lab']);

    // The dispatcher's sink of a carrier (SMPP, sandbox, Twilio's own sink): its lane's name.
    const clock = createManualClock();
    const dispatcher = new Dispatcher({
      store: ctx.store,
      carriers: [
        { name: 'smsc-eu', carrier: createSandboxCarrier({ receiptMs: 1000 }) },
        { name: 'smsc-us', carrier: createSandboxCarrier({ receiptMs: 1000 }) },
      ],
      clock,
      batchSize: 10,
      leaseMs: 30_000,
      maxAttempts: 3,
      pollMs: 5,
      inbound: createInboundHandler(inboundDeps(ctx.config, ctx.store, clock)),
    });
    await dispatcher.sinkFor('smsc-us').inbound({ from: '15551230002', to: SHORT, text: 'cancel ' });
    await dispatcher.sinkFor('smsc-eu').inbound({ from: '15551230002', to: SHORT, text: 'Start' });
    assert.deepEqual(await lines(ctx, await contactId(ctx, account, '+15551230002')), [
      '1 keyword cancel smsc-us',
      '0 keyword Start smsc-eu',
    ]);

    // A Twilio or Android callback (src/domain/carrier-callbacks.ts): the carrier's name from the route.
    const deps = inboundDeps(ctx.config, ctx.store, clock);
    await receiveCarrierInbound(deps, 'twilio-1', { from: '+15551230003', to: `+${SHORT}`, text: 'END', carrierMessageId: 'SM1' });
    await receiveCarrierInbound(deps, 'twilio-1', { from: '+15551230003', to: `+${SHORT}`, text: 'END', carrierMessageId: 'SM1' }); // a repeat
    await receiveCarrierInbound(deps, 'pixel', { from: '+15551230003', to: SHORT, text: 'UNSTOP', carrierMessageId: 'ev-1' });
    assert.deepEqual(await lines(ctx, await contactId(ctx, account, '+15551230003')), ['1 keyword END twilio-1', '0 keyword UNSTOP pixel']);
  },
);

storeTest('consent: a STOP to a shared short code writes one entry per account whose contact changed', async (t) => {
  const ctx = await buildTestApp(t);
  const a = await ctx.seed('A');
  const b = await ctx.seed('B');
  const c = await ctx.seed('C');
  // In B the sender is already opted out (by the API): B's STOP changes nothing.
  const inB = await create(ctx, b.token, { Number: SENDER, OptedOut: 1 });
  // In C the sender is a contact opted in.
  const inC = await create(ctx, c.token, { Number: SENDER });
  assert.deepEqual(await lines(ctx, inC), []);

  await text(ctx, a, 'STOP');
  const inA = (await contactId(ctx, a.account.id, SENDER))!;
  assert.deepEqual(await lines(ctx, inA), ['1 keyword STOP sandbox']);
  assert.deepEqual(await lines(ctx, inB), ['1 api contacts/create']);
  assert.deepEqual(await lines(ctx, inC), ['1 keyword STOP sandbox']);
  assert.equal(await countLedger(ctx), 3);

  // START applies to every holder as well; each account sees only its own contact's ledger.
  await text(ctx, b, 'START');
  for (const [demo, id] of [
    [a, inA],
    [b, inB],
    [c, inC],
  ] as const) {
    assert.equal((await lines(ctx, id)).at(-1), '0 keyword START sandbox');
    await assertLedger(ctx, demo.token, id);
  }
});

// ------------------------------------------------------------------ api, import, console

storeTest(
  'consent: contacts/create and contacts/update are `api` entries; creating with OptedOut 0 and a change that changes nothing add none',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const plain = await create(ctx, demo.token, { Number: '+15551230011', FirstName: 'Ann' });
    const zero = await create(ctx, demo.token, { Number: '+15551230012', OptedOut: 0 });
    assert.deepEqual(await lines(ctx, plain), []);
    assert.deepEqual(await lines(ctx, zero), []);

    const out = await create(ctx, demo.token, { Number: '+15551230013', OptedOut: '1' });
    assert.deepEqual(await lines(ctx, out), ['1 api contacts/create']);

    let res = await update(ctx, demo.token, plain, { City: 'Oslo' });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(await lines(ctx, plain), [], 'a change of other fields is no change of consent');
    res = await update(ctx, demo.token, plain, { OptedOut: 1 });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(await lines(ctx, plain), ['1 api contacts/update']);
    // The time of the opt-out, before the next update (FirstName) moves updated_at on.
    const optedOut = await ctx.store.db.selectFrom('contacts').select('updated_at').where('id', '=', plain).executeTakeFirstOrThrow();
    // OptedOut 1 sent to an opted-out contact: no change, no entry.
    res = await update(ctx, demo.token, plain, { OptedOut: 1, FirstName: 'Anna' });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(await lines(ctx, plain), ['1 api contacts/update']);
    // Clearing it is refused (422): no entry.
    res = await update(ctx, demo.token, plain, { OptedOut: 0 });
    assert422(res, [fieldError('OptedOut', OPT_OUT_CLEAR)]);
    // A create that fails validation writes nothing.
    res = await write(ctx, demo.token, { method: 'POST', path: '/v1/contacts/create', body: { Number: '+15551230013', OptedOut: 1 } });
    assert.equal(res.statusCode, 422, res.body);
    assert.deepEqual(await lines(ctx, out), ['1 api contacts/create']);

    const [entry] = await assertLedger(ctx, demo.token, plain);
    assert.equal(entry!.DateCreated, fmtTime(Number(optedOut.updated_at)));
  },
);

storeTest(
  'consent: contacts/import rows that opt a contact out are `import` entries, the CLI import too; rows that change nothing add none',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const known = await create(ctx, demo.token, { Number: '+15551230021' });
    const already = await create(ctx, demo.token, { Number: '+15551230022', OptedOut: 1 });
    const csv = [
      'Number,OptedOut,FirstName',
      '+15551230021,1,Known', // 0 → 1
      '+15551230022,1,Already', // 1 → 1: nothing
      '+15551230023,1,New', // created opted out
      '+15551230024,0,Zero', // created with 0: nothing
      '+15551230025,,Blank', // created, OptedOut default 0: nothing
      '+15551230021,1,Again', // the same contact again, already 1: nothing
    ].join('\n');
    const res = await write(ctx, demo.token, { method: 'POST', path: '/v1/contacts/import', csv });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(JSON.parse(res.body).Failed, 0, res.body);
    const account = demo.account.id;
    assert.deepEqual(await lines(ctx, known), ['1 import contacts/import']);
    assert.deepEqual(await lines(ctx, already), ['1 api contacts/create']);
    assert.deepEqual(await lines(ctx, await contactId(ctx, account, '+15551230023')), ['1 import contacts/import']);
    assert.deepEqual(await lines(ctx, await contactId(ctx, account, '+15551230024')), []);
    assert.deepEqual(await lines(ctx, await contactId(ctx, account, '+15551230025')), []);

    // `msgsvc contacts import` runs the same function: `import`.
    await importContacts(ctx.store, account, Readable.from([Buffer.from('Number,OptedOut\n+15551230026,1\n')]), { region: 'US' });
    assert.deepEqual(await lines(ctx, await contactId(ctx, account, '+15551230026')), ['1 import contacts/import']);
    await assertLedger(ctx, demo.token, known, 'xml');
  },
);

storeTest(
  'consent: a contacts write with X-Msgsvc-Client: console is a `console` entry (create, update, import); any other value is `api`',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const created = await create(ctx, demo.token, { Number: '+15551230031', OptedOut: 1 }, 'console');
    assert.deepEqual(await lines(ctx, created), ['1 console contacts/create']);

    const a = await create(ctx, demo.token, { Number: '+15551230032' }, 'console');
    const res = await update(ctx, demo.token, a, { OptedOut: 1 }, ' Console ');
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(await lines(ctx, a), ['1 console contacts/update']);

    const b = await create(ctx, demo.token, { Number: '+15551230033' });
    assert.equal((await update(ctx, demo.token, b, { OptedOut: 1 }, 'curl')).statusCode, 200);
    assert.deepEqual(await lines(ctx, b), ['1 api contacts/update']);

    const imported = await write(ctx, demo.token, {
      method: 'POST',
      path: '/v1/contacts/import',
      csv: 'Number,OptedOut\n+15551230034,1\n',
      client: 'console',
    });
    assert.equal(imported.statusCode, 200, imported.body);
    assert.deepEqual(await lines(ctx, await contactId(ctx, demo.account.id, '+15551230034')), ['1 console contacts/import']);
  },
);

// ------------------------------------------------------------------ the list

storeTest('consent: oldest first and paginated as every list (headers, Link, page past the end)', async (t) => {
  const clock = createManualClock(1_700_000_000_000);
  const ctx = await buildTestApp(t, {}, { clock });
  const demo = await ctx.seed();
  const words = ['STOP', 'START', 'Stop', 'Start', 'stop'];
  for (const w of words) {
    await text(ctx, demo, w);
    clock.advance(1000);
  }
  const id = (await contactId(ctx, demo.account.id, SENDER))!;
  const all = await ledgerFromDb(ctx, id);
  assert.deepEqual(
    all.map((e) => `${e.OptedOut} ${e.Detail}`),
    ['1 STOP', '0 START', '1 Stop', '0 Start', '1 stop'],
  );
  for (const wire of WIRES) {
    const res = await call(ctx.app, { path: CONSENT, token: demo.token, query: `id=${id}&per-page=2&page=2`, wire });
    assertBody(res, wire, 200, all.slice(2, 4));
    assert.equal(res.headers['x-pagination-total-count'], '5');
    assert.equal(res.headers['x-pagination-page-count'], '3');
    assert.equal(res.headers['x-pagination-current-page'], '2');
    assert.equal(res.headers['x-pagination-per-page'], '2');
    const base = `http://localhost:80${CONSENT}?access_token=${demo.token}&id=${id}`;
    if (!isXml(wire)) {
      assert.equal(
        res.headers.link,
        `<${base}&per-page=2&page=2>; rel=self, <${base}&per-page=2&page=1>; rel=first, <${base}&per-page=2&page=1>; rel=prev, ` +
          `<${base}&per-page=2&page=3>; rel=next, <${base}&per-page=2&page=3>; rel=last`,
      );
    }
  }
  const past = await call(ctx.app, { path: CONSENT, token: demo.token, query: `id=${id}&per-page=2&page=99` });
  assertBody(past, 'json', 200, all.slice(4));
  assert.equal(past.headers['x-pagination-current-page'], '3');

  // A contact with no change: an empty list.
  const quiet = demo.contacts.find((c) => c.OptedOut === 0)!.Id;
  for (const wire of WIRES) {
    const res = await call(ctx.app, { path: CONSENT, token: demo.token, query: `id=${quiet}`, wire });
    assertBody(res, wire, 200, []);
    assert.equal(res.headers['x-pagination-total-count'], '0');
  }
});

storeTest("consent: 400 for a missing or non-integer id, 404 for an unknown or another account's contact, in JSON and XML", async (t) => {
  const ctx = await buildTestApp(t);
  const a = await ctx.seed('A');
  const b = await ctx.seed('B');
  const ofB = await create(ctx, b.token, { Number: '+15551230041', OptedOut: 1 });
  for (const wire of WIRES) {
    assertError(await call(ctx.app, { path: CONSENT, token: a.token, wire }), 400, MSG.missing('id'), wire);
    assertError(await call(ctx.app, { path: CONSENT, token: a.token, query: 'id=abc', wire }), 400, MSG.invalidId, wire);
    assertError(await call(ctx.app, { path: CONSENT, token: a.token, query: 'id=1.5', wire }), 400, MSG.invalidId, wire);
    assertError(await call(ctx.app, { path: CONSENT, token: a.token, query: `id=${ofB}`, wire }), 404, MSG.notFound(ofB), wire);
    assertError(await call(ctx.app, { path: CONSENT, token: a.token, query: 'id=987654321', wire }), 404, MSG.notFound(987654321), wire);
    assertError(
      await call(ctx.app, { path: CONSENT, token: a.token, query: 'id=99999999999', wire }),
      404,
      MSG.notFound('99999999999'),
      wire,
    );
    assertError(await call(ctx.app, { path: CONSENT, token: a.token, query: 'id=0', wire }), 404, MSG.notFound(0), wire);
  }
  // The owner sees it.
  assert.equal((await assertLedger(ctx, b.token, ofB)).length, 1);
  // POST is not allowed.
  const post = await call(ctx.app, { method: 'POST', path: CONSENT, token: b.token, query: `id=${ofB}`, body: {} });
  assert.equal(post.statusCode, 405);
});

// ------------------------------------------------------------------ append-only

storeTest(
  "consent: append-only in the database: UPDATE and DELETE through the store fail; the contact's deletion (and its account's) removes its ledger",
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const id = await create(ctx, demo.token, { Number: '+15551230051', OptedOut: 1 });
    const other = await create(ctx, demo.token, { Number: '+15551230052', OptedOut: 1 });
    const before = await ledgerFromDb(ctx, id);
    assert.equal(before.length, 1);

    await assert.rejects(
      ctx.store.db.updateTable('contact_consent').set({ detail: 'forged' }).where('contact_id', '=', id).execute(),
      /append-only/,
    );
    await assert.rejects(ctx.store.db.updateTable('contact_consent').set({ opted_out: 0 }).execute(), /append-only/);
    await assert.rejects(ctx.store.db.deleteFrom('contact_consent').where('contact_id', '=', id).execute(), /append-only/);
    await assert.rejects(ctx.store.db.deleteFrom('contact_consent').execute(), /append-only/);
    await assert.rejects(sql`delete from contact_consent`.execute(ctx.store.db), /append-only/);
    if (testStoreKind() === 'postgres') await assert.rejects(sql`truncate contact_consent`.execute(ctx.store.db), /append-only/);
    assert.deepEqual(await ledgerFromDb(ctx, id), before, 'nothing changed');

    // contacts/delete: its ledger goes with it, and only its.
    const res = await call(ctx.app, { method: 'DELETE', path: '/v1/contacts/delete', token: demo.token, query: `id=${id}` });
    assert.ok(res.statusCode === 204 || res.statusCode === 200, res.body);
    assert.deepEqual(await ledgerFromDb(ctx, id), []);
    assert.equal((await ledgerFromDb(ctx, other)).length, 1);
    assertError(await call(ctx.app, { path: CONSENT, token: demo.token, query: `id=${id}` }), 404, MSG.notFound(id));

    // An account's deletion (nothing in the API does it; the store's cascade must allow it).
    const lone = await emptyAccount(ctx, 'Lone');
    const loneContact = await create(ctx, lone.token, { Number: '+15551230053', OptedOut: 1 });
    assert.equal((await ledgerFromDb(ctx, loneContact)).length, 1);
    await ctx.store.db.deleteFrom('accounts').where('id', '=', lone.id).execute();
    assert.deepEqual(await ledgerFromDb(ctx, loneContact), []);
    assert.equal((await ledgerFromDb(ctx, other)).length, 1);
  },
);

// ------------------------------------------------------------------ same transaction

storeTest(
  'consent: the entry is written in the transaction of the change: a failed ledger write undoes the change, a failed change leaves no entry',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const account = demo.account.id;
    const id = await create(ctx, demo.token, { Number: '+15551230061' });

    // 1. The ledger refuses the insert: the change is rolled back with it (500, OptedOut still 0).
    await failInserts(ctx, 'contact_consent');
    let res = await update(ctx, demo.token, id, { OptedOut: 1 });
    assert.equal(res.statusCode, 500, res.body);
    assert.equal(await optedOutOf(ctx, id), 0);
    res = await write(ctx, demo.token, { method: 'POST', path: '/v1/contacts/create', body: { Number: '+15551230062', OptedOut: 1 } });
    assert.equal(res.statusCode, 500, res.body);
    assert.equal(await contactId(ctx, account, '+15551230062'), undefined);
    res = await write(ctx, demo.token, { method: 'POST', path: '/v1/contacts/import', csv: 'Number,OptedOut\n+15551230061,1\n' });
    assert.equal(res.statusCode, 500, res.body);
    assert.equal(await optedOutOf(ctx, id), 0);
    res = await call(ctx.app, {
      method: 'POST',
      path: INBOUND,
      token: demo.token,
      body: { From: '+15551230063', To: SHORT, Message: 'STOP' },
    });
    assert.equal(res.statusCode, 500, res.body);
    assert.equal(await contactId(ctx, account, '+15551230063'), undefined, 'no contact, no stored text');
    await dropFailInserts(ctx, 'contact_consent');

    // 2. The change's transaction fails after the ledger write (its webhook event cannot be
    //    queued): no entry is left.
    const hook = await call(ctx.app, {
      method: 'POST',
      path: '/v1/webhooks/create',
      token: demo.token,
      body: { Url: 'https://hooks.example.com/x', Events: ['contact.opted_out'] },
    });
    assert.equal(hook.statusCode, 201, hook.body);
    await failInserts(ctx, 'webhook_deliveries');
    res = await update(ctx, demo.token, id, { OptedOut: 1 });
    assert.equal(res.statusCode, 500, res.body);
    assert.equal(await optedOutOf(ctx, id), 0);
    assert.deepEqual(await lines(ctx, id), []);
    res = await call(ctx.app, {
      method: 'POST',
      path: INBOUND,
      token: demo.token,
      body: { From: '+15551230063', To: SHORT, Message: 'STOP' },
    });
    assert.equal(res.statusCode, 500, res.body);
    assert.equal(await countLedger(ctx), 0);
    await dropFailInserts(ctx, 'webhook_deliveries');

    // And once nothing fails, each writes its one entry.
    assert.equal((await update(ctx, demo.token, id, { OptedOut: 1 })).statusCode, 200);
    assert.deepEqual(await lines(ctx, id), ['1 api contacts/update']);
  },
);
