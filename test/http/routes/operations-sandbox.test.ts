/**
 * `POST /v1/sandbox/inbound` (API.md §11.3), on each store: its
 * body (`From` a phone number, `To` an account number of the caller, `Message` required) with
 * every 422 in field order and nothing stored; `To` in its accepted writings and any status; 201
 * with the list of the caller's inbound records (one, or none) in JSON and XML; Idempotency-Key
 * (API.md §7); 404 `Page not found.` when the sandbox is not the carrier; and once over a real socket
 * with `msgsvc serve` dispatching, a message's whole life: a send Delivered, a STOP, its
 * confirmation Delivered, the next send refused, a keyword's autoreply Delivered (bounded polling).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../../../src/app.ts';
import type { Config } from '../../../src/config.ts';
import { parseDatabaseUrl } from '../../../src/config.ts';
import { parseCarriers } from '../../../src/lib/carrier-settings.ts';
import { createDemoAccount, type DemoAccount } from '../../../src/domain/demo.ts';
import { createTimeFormat } from '../../../src/lib/time.ts';
import { recordMappers } from '../../../src/records/index.ts';
import { migrateToLatest, openStore } from '../../../src/store/db.ts';
import { insertNumber } from '../../../src/store/repositories/numbers.ts';
import { buildTestApp, testDatabaseUrl, type TestApp } from '../../helpers/app.ts';
import { assertBody, assertError, call, expectRejected, fieldError, WIRES, type Wire } from '../../helpers/operations.ts';
import { countMessages, messageFromDb, setNumberStatus } from '../../helpers/sms.ts';
import { startServerProcess } from '../../helpers/net.ts';
import { storeTest } from '../../helpers/stores.ts';

const INBOUND = '/v1/sandbox/inbound';

async function lastInbound(ctx: TestApp, accountId: number) {
  const r = await ctx.store.db
    .selectFrom('messages')
    .select('id')
    .where('account_id', '=', accountId)
    .where('direction', '=', 2)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirstOrThrow();
  return messageFromDb(ctx, r.id);
}

storeTest(
  'sandbox/inbound: 201, a list of the one inbound Message stored for the caller, Location to sms/view (JSON, XML, _format=xml, form body)',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    for (const wire of WIRES) {
      const res = await call(ctx.app, {
        method: 'POST',
        path: INBOUND,
        token: demo.token,
        wire,
        body: { From: '+1 (555) 123-4567', To: '55155', Message: `Hi there ${wire}` },
      });
      const record = await lastInbound(ctx, demo.account.id);
      assertBody(res, wire, 201, [record]);
      assert.equal(res.headers.location, `http://localhost:80/v1/sms/view?id=${record.Id}`);
      assert.deepEqual(
        [record.MobilePhone, record.Number, record.Message, record.Status_Description],
        ['15551234567', '55155', `Hi there ${wire}`, 'Received'],
      );
      // The Location works.
      const view = await call(ctx.app, { path: '/v1/sms/view', token: demo.token, query: `id=${record.Id}`, wire });
      assertBody(view, wire, 200, record);
    }
    const form = await call(ctx.app, {
      method: 'POST',
      path: INBOUND,
      token: demo.token,
      rawBody: 'From=%2B15551234567&To=55155&Message=form+body',
      contentType: 'application/x-www-form-urlencoded',
    });
    assert.equal(form.statusCode, 201, form.body);
    assert.equal((await lastInbound(ctx, demo.account.id)).Message, 'form body');
  },
);

storeTest(
  'sandbox/inbound: To is any number of the caller (any status), as an integer, digits with +, or a phone number in any format',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    await setNumberStatus(ctx, demo.account.id, '15550100004', 302);
    for (const [to, number] of [
      [55155, '55155'],
      ['55155', '55155'],
      ['+55155', '55155'],
      [15550100001, '15550100001'],
      ['+15550100001', '15550100001'],
      ['+1 555-010-0001', '15550100001'],
      ['(555) 010-0001', '15550100001'],
      ['15550100002', '15550100002'], // Inactive
      ['15550100004', '15550100004'], // Permanently blocked
    ] as const) {
      const res = await call(ctx.app, {
        method: 'POST',
        path: INBOUND,
        token: demo.token,
        body: { From: '5551234567', To: to, Message: 'hello' },
      });
      assert.equal(res.statusCode, 201, `${JSON.stringify(to)}: ${res.body}`);
      assert.equal((JSON.parse(res.body) as { Number: string }[])[0]!.Number, number, JSON.stringify(to));
    }
  },
);

storeTest('sandbox/inbound: every rule with its exact message, in the order From, To, Message; nothing stored', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const other = await ctx.seed('Other');
  // A number only the other account holds (demo accounts share their numbers).
  await insertNumber(ctx.store.db, other.account.id, '15559990000', 0, null, Math.floor(Date.now() / 1000));
  const ok = { From: '+15551234567', To: '55155', Message: 'hi' };
  const before = await countMessages(ctx);
  await expectRejected(ctx, demo, { method: 'POST', path: INBOUND }, [
    {
      name: 'empty body',
      body: {},
      errors: [
        fieldError('From', 'From cannot be blank.'),
        fieldError('To', 'To cannot be blank.'),
        fieldError('Message', 'Message cannot be blank.'),
      ],
    },
    {
      name: 'null body',
      body: null,
      errors: [
        fieldError('From', 'From cannot be blank.'),
        fieldError('To', 'To cannot be blank.'),
        fieldError('Message', 'Message cannot be blank.'),
      ],
    },
    { name: 'blank message', body: { ...ok, Message: ' \t\n' }, errors: [fieldError('Message', 'Message cannot be blank.')] },
    { name: 'message not a string', body: { ...ok, Message: 5 }, errors: [fieldError('Message', 'Message must be a string.')] },
    {
      name: 'message too long',
      body: { ...ok, Message: 'x'.repeat(1601) },
      errors: [fieldError('Message', 'Message should contain at most 1,600 characters.')],
    },
    { name: 'bad sender', body: { ...ok, From: 'ACME' }, errors: [fieldError('From', 'From is invalid.')] },
    { name: 'short sender', body: { ...ok, From: '123' }, errors: [fieldError('From', 'From is invalid.')] },
    { name: 'sender an array', body: { ...ok, From: ['+15551234567'] }, errors: [fieldError('From', 'From is invalid.')] },
    { name: "another account's number", body: { ...ok, To: '15559990000' }, errors: [fieldError('To', 'To is invalid.')] },
    { name: 'nobody’s number', body: { ...ok, To: 99999 }, errors: [fieldError('To', 'To is invalid.')] },
    { name: 'not a number', body: { ...ok, To: 'abc' }, errors: [fieldError('To', 'To is invalid.')] },
    { name: 'negative', body: { ...ok, To: -55155 }, errors: [fieldError('To', 'To is invalid.')] },
    { name: 'a fraction', body: { ...ok, To: 55155.5 }, errors: [fieldError('To', 'To is invalid.')] },
    { name: 'an array', body: { ...ok, To: ['55155'] }, errors: [fieldError('To', 'To is invalid.')] },
    { name: 'blank To', body: { ...ok, To: '  ' }, errors: [fieldError('To', 'To cannot be blank.')] },
    {
      name: 'all wrong, in API.md §11.2 order',
      body: { Message: ['x'], To: 'nope', From: 'nope' },
      errors: [
        fieldError('From', 'From is invalid.'),
        fieldError('To', 'To is invalid.'),
        fieldError('Message', 'Message must be a string.'),
      ],
    },
  ]);
  assert.equal(await countMessages(ctx), before, 'nothing stored');
  // The other account can use its own number.
  const res = await call(ctx.app, { method: 'POST', path: INBOUND, token: other.token, body: { ...ok, To: '15559990000' } });
  assert.equal(res.statusCode, 201, res.body);
});

storeTest(
  `sandbox/inbound: an empty list (no Location) when the text went to another account's keyword on a shared short code`,
  async (t) => {
    const ctx = await buildTestApp(t);
    const a = await ctx.seed('A');
    const b = await ctx.seed('B');
    const reserve = await call(ctx.app, {
      method: 'POST',
      path: '/v1/keyword/reserve',
      token: b.token,
      body: { Keyword: 'PIZZA', Number: '55155', AutoreplyMessage: 'One slice coming up' },
    });
    assert.equal(reserve.statusCode, 201);
    for (const wire of WIRES) {
      const res = await call(ctx.app, {
        method: 'POST',
        path: INBOUND,
        token: a.token,
        wire,
        body: { From: '+15551234567', To: 55155, Message: 'pizza please' },
      });
      assertBody(res, wire, 201, []);
      assert.equal(res.headers.location, undefined);
    }
    assert.equal(await countMessages(ctx, a.account.id), 0);
    assert.equal(await countMessages(ctx, b.account.id), 6, 'three texts and three autoreplies, all in B');
  },
);

storeTest('sandbox/inbound honours Idempotency-Key: a replay stores, opts out and replies nothing twice', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const post = (wire: Wire, message = 'STOP') =>
    ctx.app.inject({
      method: 'POST',
      url: `${INBOUND}?access_token=${demo.token}${wire === 'xml-param' ? '&_format=xml' : ''}`,
      headers: {
        'content-type': 'application/json',
        'idempotency-key': 'inbound-1',
        accept: wire === 'xml' ? 'application/xml' : 'application/json',
      },
      payload: JSON.stringify({ From: '+15551234567', To: '55155', Message: message }),
    });
  const first = await post('json');
  assert.equal(first.statusCode, 201, first.body);
  const again = await post('json');
  assert.equal(again.body, first.body);
  assert.equal(again.headers['idempotent-replayed'], 'true');
  assert.equal(again.headers.location, first.headers.location);
  const xml = await post('xml');
  assert.equal(xml.statusCode, 201);
  assert.equal(xml.headers['idempotent-replayed'], 'true');
  assert.equal(await countMessages(ctx, demo.account.id), 2, 'one inbound, one confirmation');
  const other = await post('json', 'START');
  assert.equal(other.statusCode, 409);
  assert.equal(JSON.parse(other.body).message, 'Idempotency-Key was used with a different request.');
});

storeTest(
  'sandbox/inbound: when the sandbox is not the carrier the path is unknown (404 before the method and token checks, nothing stored); with it, 405 and 401 as any operation',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    // What any other carrier's configuration looks like to the route (the SMPP carrier's setting comes with it).
    const smppOnly = parseCarriers(undefined, { carrier: 'smpp', smppUrl: 'smpp://msgsvc:secret@127.0.0.1:2775' });
    const app = buildApp({ ...ctx.config, carrier: 'smpp', carriers: smppOnly } as unknown as Config, { store: ctx.store });
    t.after(() => app.close());
    await app.ready();
    for (const wire of WIRES) {
      const res = await call(app, {
        method: 'POST',
        path: INBOUND,
        token: demo.token,
        wire,
        body: { From: '+15551234567', To: '55155', Message: 'STOP' },
      });
      assertError(res, 404, 'Page not found.', wire);
    }
    // An unknown path: no 405 for another method, no 401 without a token.
    assertError(await call(app, { path: INBOUND, token: demo.token }), 404, 'Page not found.');
    assertError(await call(app, { method: 'POST', path: INBOUND, token: 'nope', body: {} }), 404, 'Page not found.');
    assert.equal(await countMessages(ctx), 0);
    // With the sandbox: the usual method and token checks.
    const get = await call(ctx.app, { path: INBOUND, token: demo.token });
    assert.equal(get.statusCode, 405);
    assert.equal(get.headers.allow, 'POST');
    assertError(
      await call(ctx.app, { method: 'POST', path: INBOUND, token: 'nope', body: {} }),
      401,
      'Your request was made with invalid credentials.',
    );
  },
);

// ------------------------------------------------------------------ over a real socket

async function seeded(t: { after(fn: () => unknown): void }): Promise<{ databaseUrl: string; demo: DemoAccount }> {
  const dir = mkdtempSync(join(tmpdir(), 'msgsvc-sandbox-socket-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const databaseUrl = await testDatabaseUrl(dir);
  const store = openStore(parseDatabaseUrl(databaseUrl));
  try {
    await migrateToLatest(store);
    return { databaseUrl, demo: await createDemoAccount(store, recordMappers(createTimeFormat('UTC')), 'US', 'Socket') };
  } finally {
    await store.close();
  }
}

interface Logged {
  Id: number;
  Direction: string;
  Message: string;
  Status_Description: string;
}

/** Polls sms/index (newest first) until `done` holds, at most `ms`; returns the last page read. */
async function logUntil(url: string, done: (log: Logged[]) => boolean, ms = 10_000): Promise<Logged[]> {
  const deadline = Date.now() + ms;
  let log: Logged[] = [];
  while (Date.now() < deadline) {
    log = (await (await fetch(url)).json()) as Logged[];
    if (done(log)) return log;
    await new Promise((r) => setTimeout(r, 25));
  }
  return log;
}

storeTest(
  `over a real socket with the dispatcher running: send Delivered, STOP, its confirmation Delivered, the next send refused; a keyword's autoreply Delivered`,
  { timeout: 60_000 },
  async (t) => {
    const { databaseUrl, demo } = await seeded(t);
    const token = encodeURIComponent(demo.token);
    const server = await startServerProcess({ DATABASE_URL: databaseUrl, MSGSVC_SANDBOX_RECEIPT_MS: '100', MSGSVC_DISPATCH_POLL_MS: '20' });
    t.after(() => server.stop('SIGKILL'));
    const post = (path: string, body: unknown) =>
      fetch(`${server.url}${path}?access_token=${token}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const index = `${server.url}/v1/sms/index?access_token=${token}&MobilePhone=%2B15551234567`;

    assert.equal((await post('/v1/sms/send', { Message: 'Hello from the sandbox', MobilePhone: '+15551234567' })).status, 201);
    let log = await logUntil(index, (l) => l[0]?.Status_Description === 'Delivered');
    assert.equal(log[0]?.Status_Description, 'Delivered');

    const stop = await post(INBOUND, { From: '+15551234567', To: '55155', Message: 'STOP' });
    assert.equal(stop.status, 201);
    assert.equal(((await stop.json()) as Logged[])[0]!.Direction, 'Inbound');
    log = await logUntil(index, (l) => l[0]?.Direction === 'Outbound' && l[0].Status_Description === 'Delivered');
    assert.deepEqual(
      log.map((m) => `${m.Direction} ${m.Status_Description} ${m.Message}`),
      [
        'Outbound Delivered You have been unsubscribed and will receive no more messages. Reply START to resubscribe.',
        'Inbound Received STOP',
        'Outbound Delivered Hello from the sandbox',
      ],
    );
    const refused = await post('/v1/sms/send', { Message: 'one more?', MobilePhone: '+15551234567' });
    assert.equal(refused.status, 422);
    assert.deepEqual(await refused.json(), [{ field: 'MobilePhone', message: 'Mobile Phone has opted out.' }]);

    const reserved = await post('/v1/keyword/reserve', { Keyword: 'JOIN', Number: '55155', AutoreplyMessage: 'Welcome aboard!' });
    assert.equal(reserved.status, 201);
    assert.equal((await post(INBOUND, { From: '+15557654321', To: '55155', Message: 'join' })).status, 201);
    const joined = await logUntil(
      `${server.url}/v1/sms/index?access_token=${token}&MobilePhone=15557654321`,
      (l) => l[0]?.Status_Description === 'Delivered',
    );
    assert.deepEqual(
      joined.map((m) => `${m.Direction} ${m.Status_Description} ${m.Message}`),
      ['Outbound Delivered Welcome aboard!', 'Inbound Received join'],
    );
    assert.equal(await server.stop('SIGTERM'), 0);
  },
);
