/**
 * Webhooks (API.md §12.5) on each store, with a REAL receiver on loopback that
 * verifies every signature with two independent implementations (test/helpers/webhook-receiver.ts):
 * CRUD and its rules, the SSRF guard (IPv4, IPv6, IPv4-mapped IPv6, a name resolving to loopback,
 * a redirect), the outbox (each event of the API.md §12.4 table written with its change), retries on the
 * API.md §12.3 schedule with the same webhook-id, the 10-second timeout (shortened), Failed after the last
 * retry, and redeliver.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createManualClock, type ManualClock } from '../../src/lib/time.ts';
import { isForbiddenAddress } from '../../src/lib/ssrf.ts';
import { MAX_ATTEMPTS, RETRY_SCHEDULE_MS, WebhookDeliverer } from '../../src/webhooks/deliverer.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { assert422, call } from '../helpers/operations.ts';
import { testDispatcher } from '../helpers/sms.ts';
import { testScheduler } from '../helpers/scheduled.ts';
import { storeTest } from '../helpers/stores.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';

const ALLOW = { MSGSVC_WEBHOOK_ALLOW_PRIVATE: '1' };

function deliverer(ctx: TestApp, clock: ManualClock, o: { allowPrivate?: boolean; timeoutMs?: number } = {}) {
  return new WebhookDeliverer({
    store: ctx.store,
    clock,
    allowPrivate: o.allowPrivate ?? true,
    timeoutMs: o.timeoutMs ?? 2000,
    batchSize: 50,
    concurrency: 8,
    pollMs: 5,
  });
}

async function createHook(ctx: TestApp, token: string, body: Record<string, unknown>) {
  const res = await call(ctx.app, { method: 'POST', path: '/v1/webhooks/create', token, body });
  assert.equal(res.statusCode, 201, res.body);
  return JSON.parse(res.body) as { Id: number; Url: string; Events: string[]; Active: number; Secret: string };
}

async function deliveries(ctx: TestApp, token: string, webhookId: number) {
  const res = await call(ctx.app, { path: '/v1/webhooks/deliveries', token, query: `id=${webhookId}` });
  assert.equal(res.statusCode, 200, res.body);
  return JSON.parse(res.body) as {
    Id: number;
    WebhookId: number;
    Event: string;
    Status: string;
    Attempts: number;
    LastStatusCode: number | null;
    LastError: string;
  }[];
}

async function withReceiver(t: { after(fn: () => unknown): void }): Promise<Receiver> {
  const r = await startReceiver();
  t.after(() => r.close());
  return r;
}

test('SSRF guard: loopback, private, link-local and unspecified in IPv4, IPv6 and IPv4-mapped IPv6 forms', () => {
  for (const a of [
    '127.0.0.1',
    '127.1.2.3',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '169.254.169.254',
    '0.0.0.0',
    '100.64.0.1',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:a9fe:a9fe',
    '::127.0.0.1',
    '64:ff9b::7f00:1',
    '[::1]',
    '0:0:0:0:0:ffff:7f00:0001',
  ]) {
    assert.equal(isForbiddenAddress(a), true, a);
  }
  for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8', '172.32.0.1', '11.0.0.1'])
    assert.equal(isForbiddenAddress(a), false, a);
});

storeTest('webhooks CRUD: create 201 with Location and Secret (once), view/index without it, update, delete; every rule', async (t) => {
  const ctx = await buildTestApp(t, ALLOW);
  const demo = await ctx.seed();
  const token = demo.token;
  const res = await call(ctx.app, {
    method: 'POST',
    path: '/v1/webhooks/create',
    token,
    body: { Url: 'http://127.0.0.1:9/x', Events: ['message.delivered', 'contact.opted_out'] },
  });
  assert.equal(res.statusCode, 201, res.body);
  const created = JSON.parse(res.body) as Record<string, unknown> & { Id: number };
  assert.deepEqual(Object.keys(created), ['Id', 'Url', 'Events', 'Active', 'DateCreated', 'DateUpdated', 'Secret']);
  assert.match(String(created.Secret), /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.equal(Buffer.from(String(created.Secret).slice(6), 'base64').length, 32);
  assert.equal(created.Active, 1);
  assert.match(String(res.headers.location), new RegExp(`^http://localhost(:80)?/v1/webhooks/view\\?id=${created.Id}$`));
  const view = JSON.parse((await call(ctx.app, { path: '/v1/webhooks/view', token, query: `id=${created.Id}` })).body) as Record<
    string,
    unknown
  >;
  assert.deepEqual(Object.keys(view), ['Id', 'Url', 'Events', 'Active', 'DateCreated', 'DateUpdated']);
  const xml = await call(ctx.app, { path: '/v1/webhooks/view', token, query: `id=${created.Id}`, wire: 'xml' });
  assert.match(
    xml.body,
    new RegExp(
      `<response><Id>${created.Id}</Id><Url>http://127.0.0.1:9/x</Url><Events><item>message.delivered</item><item>contact.opted_out</item></Events><Active>1</Active><DateCreated>`,
    ),
  );
  const list = await call(ctx.app, { path: '/v1/webhooks/index', token });
  assert.equal(list.statusCode, 200);
  assert.equal(list.headers['x-pagination-total-count'], '1');
  assert.ok(!list.body.includes('whsec_'));
  const upd = await call(ctx.app, { method: 'PATCH', path: '/v1/webhooks/update', token, query: `id=${created.Id}`, body: { Active: 0 } });
  assert.equal(upd.statusCode, 200, upd.body);
  assert.deepEqual((JSON.parse(upd.body) as { Active: number; Events: string[] }).Events, ['message.delivered', 'contact.opted_out']);
  assert.equal((JSON.parse(upd.body) as { Active: number }).Active, 0);
  // Idempotency-Key: the replay is the same reply, Secret included; nothing created twice.
  const key = { 'idempotency-key': 'wh-1' };
  const a = await ctx.app.inject({
    method: 'POST',
    url: `/v1/webhooks/create?access_token=${token}`,
    headers: { ...key, 'content-type': 'application/json' },
    payload: JSON.stringify({ Url: 'https://example.com/h', Events: ['message.sent'] }),
  });
  const b = await ctx.app.inject({
    method: 'POST',
    url: `/v1/webhooks/create?access_token=${token}`,
    headers: { ...key, 'content-type': 'application/json' },
    payload: JSON.stringify({ Url: 'https://example.com/h', Events: ['message.sent'] }),
  });
  assert.equal(a.statusCode, 201);
  assert.equal(b.body, a.body);
  assert.equal(b.headers['idempotent-replayed'], 'true');
  assert.equal((await call(ctx.app, { path: '/v1/webhooks/index', token })).headers['x-pagination-total-count'], '2');
  // Rules.
  const bad = (body: unknown) => call(ctx.app, { method: 'POST', path: '/v1/webhooks/create', token, body });
  assert422(await bad({}), [
    { field: 'Url', message: 'Url cannot be blank.' },
    { field: 'Events', message: 'Events cannot be blank.' },
  ]);
  assert422(await bad({ Url: 'ftp://x.example/', Events: [] }), [
    { field: 'Url', message: 'Url is not a valid URL.' },
    { field: 'Events', message: 'Events cannot be blank.' },
  ]);
  assert422(await bad({ Url: 'not a url', Events: ['message.nope'] }), [
    { field: 'Url', message: 'Url is not a valid URL.' },
    { field: 'Events', message: 'Events is invalid.' },
  ]);
  assert422(await bad({ Url: `https://example.com/${'a'.repeat(2048)}`, Events: 'message.sent' }), [
    { field: 'Url', message: 'Url is not a valid URL.' },
    { field: 'Events', message: 'Events is invalid.' },
  ]);
  assert422(await bad({ Url: 42, Events: ['message.sent', 'message.sent '] }), [
    { field: 'Url', message: 'Url is not a valid URL.' },
    { field: 'Events', message: 'Events is invalid.' },
  ]);
  assert.equal(
    (await bad({ Url: `https://example.com/${'a'.repeat(2048 - 20)}`, Events: ['message.sent'] })).statusCode,
    201,
    'exactly 2,048 characters',
  );
  const blank = await call(ctx.app, {
    method: 'PATCH',
    path: '/v1/webhooks/update',
    token,
    query: `id=${created.Id}`,
    body: { Events: [], Url: '' },
  });
  assert422(blank, [
    { field: 'Url', message: 'Url cannot be blank.' },
    { field: 'Events', message: 'Events cannot be blank.' },
  ]);
  assert422(await bad({ Url: 'https://example.com/', Events: ['message.sent'], Active: 2 }), [
    { field: 'Active', message: 'Active is invalid.' },
  ]);
  // Another account's webhook is a 404; delete gives 204 and then 404.
  const other = await ctx.seed('Other');
  assert.equal((await call(ctx.app, { path: '/v1/webhooks/view', token: other.token, query: `id=${created.Id}` })).statusCode, 404);
  assert.equal((await call(ctx.app, { path: '/v1/webhooks/deliveries', token: other.token, query: `id=${created.Id}` })).statusCode, 404);
  assert.equal((await call(ctx.app, { method: 'DELETE', path: '/v1/webhooks/delete', token, query: `id=${created.Id}` })).statusCode, 204);
  assert.equal((await call(ctx.app, { path: '/v1/webhooks/view', token, query: `id=${created.Id}` })).statusCode, 404);
});

storeTest('webhooks/update: the stored values again leave DateUpdated; a changed value moves it', async (t) => {
  const ctx = await buildTestApp(t, ALLOW);
  const demo = await ctx.seed();
  const token = demo.token;
  const PAST = 1_000_000_000;
  const every = { Url: 'http://127.0.0.1:9/same', Events: ['message.delivered', 'contact.opted_out'], Active: 1 };
  const created = JSON.parse((await call(ctx.app, { method: 'POST', path: '/v1/webhooks/create', token, body: every })).body) as {
    Id: number;
  };
  const past = () => ctx.store.db.updateTable('webhooks').set({ updated_at: PAST }).where('id', '=', created.Id).execute();
  const update = (body: object) => call(ctx.app, { method: 'PATCH', path: '/v1/webhooks/update', token, query: `id=${created.Id}`, body });
  const view = async () => (await call(ctx.app, { path: '/v1/webhooks/view', token, query: `id=${created.Id}` })).body;
  for (const body of [every, { Events: [...every.Events, 'contact.opted_out'], Active: '1' }, {}]) {
    await past();
    const res = await update(body);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(
      (JSON.parse(res.body) as { DateUpdated: string }).DateUpdated,
      '2001-09-09 01:46:40',
      `${JSON.stringify(body)}: nothing saved`,
    );
    assert.equal(res.body, await view());
  }
  for (const body of [{ Url: 'http://127.0.0.1:9/other' }, { Events: [...every.Events].reverse() }, { Active: 0 }]) {
    await update(every);
    await past();
    const res = await update(body);
    assert.notEqual(
      (JSON.parse(res.body) as { DateUpdated: string }).DateUpdated,
      '2001-09-09 01:46:40',
      `${JSON.stringify(body)}: DateUpdated moves`,
    );
    assert.equal(res.body, await view());
  }
});

storeTest(
  'SSRF guard at write: private, loopback, link-local and unspecified hosts are refused unless MSGSVC_WEBHOOK_ALLOW_PRIVATE=1',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    for (const host of [
      '127.0.0.1',
      '10.1.2.3',
      '192.168.0.10',
      '169.254.169.254',
      '0.0.0.0',
      '[::1]',
      '[::]',
      '[fe80::1]',
      '[fd00::1]',
      '[::ffff:127.0.0.1]',
      '[::ffff:7f00:1]',
      'localhost',
      'api.localhost',
      '2130706433',
      '0x7f.1',
    ]) {
      const res = await call(ctx.app, {
        method: 'POST',
        path: '/v1/webhooks/create',
        token: demo.token,
        body: { Url: `http://${host}:8080/hook`, Events: ['message.sent'] },
      });
      assert422(res, [{ field: 'Url', message: 'Url is invalid.' }]);
    }
    const allowed = await buildTestApp(t, ALLOW);
    const d2 = await allowed.seed();
    assert.equal(
      (
        await call(allowed.app, {
          method: 'POST',
          path: '/v1/webhooks/create',
          token: d2.token,
          body: { Url: 'http://[::ffff:127.0.0.1]:8080/hook', Events: ['message.sent'] },
        })
      ).statusCode,
      201,
    );
  },
);

storeTest(
  'a real receiver: the first two attempts fail, the third is Delivered with the same webhook-id; retries at 5 s and 30 s; signatures verify',
  async (t) => {
    const ctx = await buildTestApp(t, ALLOW);
    const demo = await ctx.seed();
    const r = await withReceiver(t);
    const hook = await createHook(ctx, demo.token, { Url: r.url, Events: ['message.sent'] });
    r.secret = hook.Secret;
    r.answer = (_rec, n) => (n <= 2 ? 500 : 204);
    const sent = await call(ctx.app, {
      method: 'POST',
      path: '/v1/sms/send',
      token: demo.token,
      body: { MobilePhone: '+15551234567', Message: 'hello webhooks' },
    });
    assert.equal(sent.statusCode, 201);
    const messageId = (JSON.parse(sent.body) as { Id: number }[])[0]!.Id;
    const { dispatcher, clock } = testDispatcher(ctx);
    await dispatcher.drain();
    const d = deliverer(ctx, clock);
    assert.deepEqual(await d.runOnce(), { claimed: 1, delivered: 0, retried: 1, failed: 0, lost: 0 });
    let [row] = await deliveries(ctx, demo.token, hook.Id);
    assert.deepEqual(
      { ...row, Id: 0, WebhookId: 0 },
      { ...row, Id: 0, WebhookId: 0, Event: 'message.sent', Status: 'Pending', Attempts: 1, LastStatusCode: 500, LastError: 'HTTP 500' },
    );
    clock.advance(RETRY_SCHEDULE_MS[0] - 1);
    assert.equal((await d.runOnce()).claimed, 0, 'not before 5 s');
    clock.advance(1);
    assert.equal((await d.runOnce()).retried, 1);
    clock.advance(RETRY_SCHEDULE_MS[1] - 1);
    assert.equal((await d.runOnce()).claimed, 0, 'not before 30 s after the second attempt');
    clock.advance(1);
    assert.equal((await d.runOnce()).delivered, 1);
    assert.deepEqual(d.stats(), { delivered: 1, retried: 2, failed: 0 }, 'running totals for GET /metrics');
    [row] = await deliveries(ctx, demo.token, hook.Id);
    assert.equal(row!.Status, 'Delivered');
    assert.equal(row!.Attempts, 3);
    assert.equal(row!.LastStatusCode, 204);
    assert.equal(row!.LastError, '');
    assert.equal(r.received.length, 3);
    assert.equal(new Set(r.received.map((x) => x.id)).size, 1, 'the same webhook-id on every attempt');
    assert.match(r.received[0]!.id, /^msg_[0-9a-f]{32}$/);
    assert.ok(
      r.received.every((x) => x.verified),
      'every signature verifies (library and direct HMAC)',
    );
    assert.deepEqual(
      r.received.map((x) => x.timestamp - r.received[0]!.timestamp),
      [0, 5, 35],
      "webhook-timestamp is each attempt's",
    );
    const body = r.received[2]!.json;
    assert.equal(r.received[2]!.contentType, 'application/json');
    assert.deepEqual(Object.keys(body), ['type', 'timestamp', 'data']);
    assert.equal(body.type, 'message.sent');
    assert.match(body.timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    assert.equal(body.data.Id, messageId);
    assert.equal(body.data.Status_Description, 'Sent');
    assert.deepEqual(Object.keys(body.data), [
      'Id',
      'Direction',
      'Number',
      'MobilePhone',
      'Message',
      'Type_Id',
      'Type_Description',
      'Status_Id',
      'Status_Description',
      'Segments',
      'Credits',
      'BatchId',
      'ScheduledMessageId',
      'ErrorCode',
      'DateCreated',
      'DateSent',
      'DateDelivered',
    ]);
  },
);

storeTest(
  'a receiver that hangs past the timeout: LastError timeout, retried; a redirect is not followed (HTTP 302); connection refused',
  async (t) => {
    const ctx = await buildTestApp(t, ALLOW);
    const demo = await ctx.seed();
    const hanging = await withReceiver(t);
    const target = await withReceiver(t);
    const redirecting = await withReceiver(t);
    hanging.answer = () => 'hang';
    redirecting.answer = () => ({ status: 302, headers: { location: target.url } });
    const h1 = await createHook(ctx, demo.token, { Url: hanging.url, Events: ['message.received'] });
    const h2 = await createHook(ctx, demo.token, { Url: redirecting.url, Events: ['message.received'] });
    const h3 = await createHook(ctx, demo.token, { Url: 'http://127.0.0.1:1/closed', Events: ['message.received'] });
    const inbound = await call(ctx.app, {
      method: 'POST',
      path: '/v1/sandbox/inbound',
      token: demo.token,
      body: { From: '+15557654321', To: demo.numbers[0]!.Number, Message: 'hi there' },
    });
    assert.equal(inbound.statusCode, 201, inbound.body);
    const clock = createManualClock();
    const started = Date.now();
    const round = await deliverer(ctx, clock, { timeoutMs: 300 }).runOnce();
    assert.ok(Date.now() - started < 3000, 'the timeout ends the attempt');
    assert.deepEqual(round, { claimed: 3, delivered: 0, retried: 3, failed: 0, lost: 0 });
    assert.equal((await deliveries(ctx, demo.token, h1.Id))[0]!.LastError, 'timeout');
    assert.equal((await deliveries(ctx, demo.token, h1.Id))[0]!.LastStatusCode, null);
    const redirected = (await deliveries(ctx, demo.token, h2.Id))[0]!;
    assert.deepEqual([redirected.LastStatusCode, redirected.LastError, redirected.Status], [302, 'HTTP 302', 'Pending']);
    assert.equal(target.received.length, 0, 'the redirect is not followed');
    assert.equal((await deliveries(ctx, demo.token, h3.Id))[0]!.LastError, 'connection refused');
  },
);

storeTest(
  'SSRF guard at each attempt (at connect time): a loopback literal, an IPv4-mapped IPv6 literal, an IPv6 literal, and a name resolving to loopback',
  async (t) => {
    const ctx = await buildTestApp(t, ALLOW);
    const demo = await ctx.seed();
    const r = await withReceiver(t);
    const hooks = [];
    for (const url of [r.url, `http://[::ffff:127.0.0.1]:${r.port}/hook`, `http://localhost:${r.port}/hook`, `http://[::1]:${r.port}/hook`])
      hooks.push(await createHook(ctx, demo.token, { Url: url, Events: ['message.received'] }));
    await call(ctx.app, {
      method: 'POST',
      path: '/v1/sandbox/inbound',
      token: demo.token,
      body: { From: '+15557654321', To: demo.numbers[0]!.Number, Message: 'hi' },
    });
    const clock = createManualClock();
    // The operator turned the setting off after the webhooks were written: every attempt is refused.
    assert.equal((await deliverer(ctx, clock, { allowPrivate: false }).runOnce()).retried, 4);
    for (const h of hooks) assert.equal((await deliveries(ctx, demo.token, h.Id))[0]!.LastError, 'address not allowed');
    assert.equal(r.received.length, 0);
  },
);

storeTest(
  'the outbox: each event of the API.md §12.1 table is written with its change (receipts, inbound, STOP/START, API opt-out, Rejected, Failed, action required)',
  async (t) => {
    const ctx = await buildTestApp(t, ALLOW);
    const demo = await ctx.seed();
    const r = await withReceiver(t);
    const hook = await createHook(ctx, demo.token, {
      Url: r.url,
      Events: [
        'message.sent',
        'message.delivered',
        'message.undelivered',
        'message.failed',
        'message.rejected',
        'message.received',
        'contact.opted_out',
        'contact.opted_in',
        'scheduled.action_required',
      ],
    });
    r.secret = hook.Secret;
    const send = async (token: string, to: string) =>
      assert.equal(
        (await call(ctx.app, { method: 'POST', path: '/v1/sms/send', token, body: { MobilePhone: to, Message: 'x' } })).statusCode,
        201,
      );
    // Another account's changes never reach this account's webhook.
    const other = await ctx.seed('Other');
    await send(other.token, '+15551239999');
    for (const to of ['+15551230001', '+15005550001', '+15005550002', '+15559990002']) await send(demo.token, to);
    const number = demo.numbers.find((n) => n.Status_Id === 0)!.Number;
    const inbound = (from: string, text: string) =>
      call(ctx.app, { method: 'POST', path: '/v1/sandbox/inbound', token: demo.token, body: { From: from, To: number, Message: text } });
    // +15559990002 opts out while its message is queued: the dispatcher rejects it.
    await inbound('+15559990002', 'STOP');
    await inbound('+15559990001', 'STOP');
    await inbound('+15559990001', 'start');
    const { dispatcher, clock } = testDispatcher(ctx, { receiptMs: 1000 });
    await dispatcher.drain();
    clock.advance(1000);
    await dispatcher.drain();
    const contact = demo.contacts.find((c) => c.OptedOut === 0)!;
    await call(ctx.app, {
      method: 'PATCH',
      path: '/v1/contacts/update',
      token: demo.token,
      query: `id=${contact.Id}`,
      body: { OptedOut: 1 },
    });
    await call(ctx.app, {
      method: 'PATCH',
      path: '/v1/contacts/update',
      token: demo.token,
      query: `id=${contact.Id}`,
      body: { FirstName: 'Same' },
    });
    const imported = await call(ctx.app, {
      method: 'POST',
      path: '/v1/contacts/import',
      token: demo.token,
      rawBody: 'Number,OptedOut\n+15551230077,1\n+15551230078,0\n',
      contentType: 'text/csv',
    });
    assert.equal(imported.statusCode, 200, imported.body);
    // No credits: a new scheduled message becomes 2 Action Required.
    await ctx.store.db.updateTable('credit_balances').set({ available_credits: 0 }).where('account_id', '=', demo.account.id).execute();
    const at = new Date((clock.nowSeconds() + 3600) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const scheduled = await call(ctx.app, {
      method: 'POST',
      path: '/v1/sms/schedule',
      token: demo.token,
      body: { MobilePhone: '+15551230003', Message: 'later', DateTime: at },
    });
    assert.equal(scheduled.statusCode, 201, scheduled.body);
    const scheduledId = (JSON.parse(scheduled.body) as { Id: number }).Id;
    await testScheduler(ctx, clock).drain();
    await deliverer(ctx, clock).drain();
    assert.ok(r.received.every((x) => x.verified));
    const got = (type: string, key: string, value: unknown) => r.received.filter((x) => x.json.type === type && x.json.data[key] === value);
    assert.equal(got('message.sent', 'MobilePhone', '15551230001').length, 1);
    assert.equal(got('message.delivered', 'MobilePhone', '15551230001').length, 1);
    assert.equal(got('message.delivered', 'MobilePhone', '15551230001')[0]!.json.data.Status_Description, 'Delivered');
    assert.equal(got('message.undelivered', 'MobilePhone', '15005550001')[0]!.json.data.ErrorCode, 'UNDELIV');
    assert.equal(got('message.failed', 'MobilePhone', '15005550002').length, 1);
    assert.equal(got('message.rejected', 'MobilePhone', '15559990002')[0]!.json.data.ErrorCode, 'OPTED_OUT');
    assert.equal(got('message.received', 'MobilePhone', '15559990001').length, 2);
    assert.equal(got('contact.opted_out', 'Number', '15559990001').length, 1);
    assert.equal(got('contact.opted_out', 'Number', '15559990002').length, 1);
    assert.equal(got('contact.opted_in', 'Number', '15559990001')[0]!.json.data.OptedOut, 0);
    const api = got('contact.opted_out', 'Number', contact.Number);
    assert.equal(api.length, 1, 'OptedOut set through the API; a change of another field emits nothing');
    assert.deepEqual(Object.keys(api[0]!.json.data).slice(0, 3), ['Id', 'Number', 'OptedOut']);
    assert.equal(got('contact.opted_out', 'Number', '15551230077').length, 1, 'OptedOut set by contacts/import');
    assert.equal(got('contact.opted_out', 'Number', '15551230078').length, 0);
    const action = got('scheduled.action_required', 'Id', scheduledId);
    assert.equal(action.length, 1);
    assert.equal(action[0]!.json.data.Status_Id, 2);
    assert.equal(r.received.filter((x) => x.json.data.MobilePhone === '15551239999').length, 0, "another account's events stay there");
    assert.equal(new Set(r.received.map((x) => x.id)).size, r.received.length, 'one delivery per event');
  },
);

storeTest('after the last retry (6 h) the delivery is Failed; redeliver queues it once more (200, the delivery record)', async (t) => {
  const ctx = await buildTestApp(t, ALLOW);
  const demo = await ctx.seed();
  const r = await withReceiver(t);
  const hook = await createHook(ctx, demo.token, { Url: r.url, Events: ['message.received'] });
  r.secret = hook.Secret;
  r.answer = () => 503;
  await call(ctx.app, {
    method: 'POST',
    path: '/v1/sandbox/inbound',
    token: demo.token,
    body: { From: '+15557654321', To: demo.numbers[0]!.Number, Message: 'hi' },
  });
  const clock = createManualClock();
  const d = deliverer(ctx, clock);
  await d.runOnce();
  for (const wait of RETRY_SCHEDULE_MS) {
    clock.advance(wait);
    assert.equal((await d.runOnce()).claimed, 1);
  }
  const [row] = await deliveries(ctx, demo.token, hook.Id);
  assert.deepEqual([row!.Status, row!.Attempts, row!.LastStatusCode, row!.LastError], ['Failed', MAX_ATTEMPTS, 503, 'HTTP 503']);
  clock.advance(86_400_000);
  assert.equal((await d.runOnce()).claimed, 0, 'Failed is final');
  assert.equal(r.received.length, 7);
  assert.equal(new Set(r.received.map((x) => x.id)).size, 1);
  r.answer = () => 200;
  const re = await call(ctx.app, { method: 'POST', path: '/v1/webhooks/redeliver', token: demo.token, query: `id=${row!.Id}` });
  assert.equal(re.statusCode, 200, re.body);
  assert.deepEqual(Object.keys(JSON.parse(re.body) as object), [
    'Id',
    'WebhookId',
    'Event',
    'Status',
    'Attempts',
    'LastStatusCode',
    'LastError',
    'DateCreated',
    'DateUpdated',
  ]);
  assert.equal((JSON.parse(re.body) as { Status: string }).Status, 'Pending');
  assert.equal(
    (await call(ctx.app, { method: 'POST', path: '/v1/webhooks/redeliver', token: demo.token, query: 'id=987654' })).statusCode,
    404,
  );
  const real = new WebhookDeliverer({
    store: ctx.store,
    clock: { nowMs: () => Date.now(), nowSeconds: () => Math.floor(Date.now() / 1000) },
    allowPrivate: true,
    timeoutMs: 2000,
    batchSize: 10,
    concurrency: 2,
    pollMs: 5,
  });
  assert.equal((await real.runOnce()).delivered, 1);
  assert.equal(r.received.length, 8);
  assert.equal(r.received[7]!.id, r.received[0]!.id, 'the same webhook-id');
  assert.ok(r.received[7]!.verified);
});

storeTest('the signing secret never reaches the log (create, replay, deliveries)', async (t) => {
  const lines: string[] = [];
  const ctx = await buildTestApp(
    t,
    { ...ALLOW, LOG_LEVEL: 'trace' },
    { logDestination: { write: (line: string) => void lines.push(line) } },
  );
  const demo = await ctx.seed();
  const r = await withReceiver(t);
  const headers = { 'idempotency-key': 'secret-log', 'content-type': 'application/json' };
  const payload = JSON.stringify({ Url: r.url, Events: ['message.received'] });
  const first = await ctx.app.inject({ method: 'POST', url: `/v1/webhooks/create?access_token=${demo.token}`, headers, payload });
  const replay = await ctx.app.inject({ method: 'POST', url: `/v1/webhooks/create?access_token=${demo.token}`, headers, payload });
  const secret = (JSON.parse(first.body) as { Secret: string }).Secret;
  assert.equal((JSON.parse(replay.body) as { Secret: string }).Secret, secret);
  r.secret = secret;
  await call(ctx.app, {
    method: 'POST',
    path: '/v1/sandbox/inbound',
    token: demo.token,
    body: { From: '+15557654321', To: demo.numbers[0]!.Number, Message: 'hi' },
  });
  await deliverer(ctx, createManualClock()).drain();
  assert.equal(r.received.length, 1);
  assert.ok(r.received[0]!.verified);
  assert.ok(lines.length > 0, 'requests were logged');
  const log = lines.join('');
  assert.ok(!log.includes(secret) && !log.includes(secret.slice(6)), 'no secret in the log');
});
