/**
 * The Android phone carrier's events (API.md §14.1): `POST /v1/carriers/{name}/events`, signed as
 * "SMS Gateway for Android" signs them (test/helpers/fake-phone.ts builds and signs them on its
 * own, never with msgsvc's code): `sms:delivered` / `sms:failed` set Delivered / Undelivered once,
 * `sms:received` runs API.md §11.5 once per event id (also when the same event arrives twice at
 * once), everything else changes nothing; a missing or wrong signature, a body altered after
 * signing and a stale or future timestamp (on the test clock) are 403 and change nothing. On each
 * store; over app.inject, and over real sockets with the phone carrier registering its webhooks
 * on a fake phone and the phone firing its events at msgsvc.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { createAndroidCarrier } from '../../../src/carriers/android.ts';
import { createManualClock, type ManualClock } from '../../../src/lib/time.ts';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import { FakePhone } from '../../helpers/fake-phone.ts';
import { assertError } from '../../helpers/operations.ts';
import { messageFromDb } from '../../helpers/sms.ts';
import { storeTest } from '../../helpers/stores.ts';
import { freePort } from '../../helpers/net.ts';

const KEY = 'k3y-Of-The-Ph0ne';
const OWN = '15550100001'; // a number of the demo account: the phone's own
const SENDER = '+15551234567';
const SENDER_DIGITS = '15551234567';
const BAD_SIGNATURE = 'The request signature is missing or invalid.';

function env(phonePort: number, publicUrl = 'https://sms.example.com'): Record<string, string> {
  return {
    MSGSVC_CARRIERS: `ph=android://sms:Ph0ne-Pa55@127.0.0.1:${phonePort}?number=%2B${OWN}&key=${KEY},tw=twilio+http://ACx:tok@127.0.0.1:9`,
    MSGSVC_PUBLIC_URL: publicUrl,
    // The Twilio entry names 127.0.0.1 (a literal private address stops the start without it).
    MSGSVC_CARRIER_ALLOW_PRIVATE: '1',
    MSGSVC_RATE_LIMIT: '3',
  };
}

interface Setup {
  ctx: TestApp;
  phone: FakePhone;
  clock: ManualClock;
  accountId: number;
}

async function setup(t: { after(fn: () => unknown): void }): Promise<Setup> {
  const phone = await FakePhone.create({ signingKey: KEY });
  t.after(() => phone.stop());
  const clock = createManualClock(Math.floor(Date.now() / 1000) * 1000);
  const ctx = await buildTestApp(t, env(phone.port), { clock });
  const demo = await ctx.seed();
  return { ctx, phone, clock, accountId: demo.account.id };
}

/** POSTs an event through app.inject: the phone's signed request, or `o.body` / `o.headers` instead. */
function post(
  s: Setup,
  event: string,
  payload: Record<string, unknown>,
  o: { id?: string; timestamp?: number; key?: string; body?: string | Buffer; headers?: Record<string, string>; carrier?: string } = {},
): Promise<LightMyRequestResponse> {
  const signed = s.phone.signedEvent(event, payload, {
    id: o.id,
    timestamp: o.timestamp ?? s.clock.nowSeconds(),
    ...(o.key ? { key: o.key } : {}),
  });
  return s.ctx.app.inject({
    method: 'POST',
    url: `/v1/carriers/${o.carrier ?? 'ph'}/events`,
    headers: o.headers ?? signed.headers,
    payload: o.body ?? signed.body,
  });
}

function received(text: string, sender = SENDER): Record<string, unknown> {
  return {
    messageId: 'a1b2c3d4',
    message: text,
    sender,
    recipient: null,
    phoneNumber: sender,
    simNumber: 1,
    receivedAt: '2026-11-23T10:00:00.000+01:00',
  };
}

async function sentMessage(ctx: TestApp, accountId: number, carrier: string, carrierId: string): Promise<number> {
  const row = await ctx.store.db
    .insertInto('messages')
    .values({
      account_id: accountId,
      direction: 1,
      number: OWN,
      mobile_phone: SENDER_DIGITS,
      message: 'Hello',
      type_id: 1,
      status_id: 2,
      segments: 1,
      credits: 1,
      created_at: 1_700_000_000,
      sent_at: 1_700_000_001,
      carrier,
      carrier_message_id: carrierId,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

async function snapshot(ctx: TestApp) {
  return {
    messages: await ctx.store.db.selectFrom('messages').selectAll().orderBy('id').execute(),
    contacts: await ctx.store.db.selectFrom('contacts').selectAll().orderBy('id').execute(),
    keys: await ctx.store.db.selectFrom('carrier_inbound').selectAll().orderBy('carrier_message_id').execute(),
    parked: await ctx.store.db.selectFrom('carrier_receipts_pending').selectAll().orderBy('carrier_message_id').execute(),
  };
}

function assertOk(res: LightMyRequestResponse): void {
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.body, '');
}

async function newMessages(ctx: TestApp, accountId: number, afterId: number): Promise<string[]> {
  const rows = await ctx.store.db
    .selectFrom('messages')
    .select('id')
    .where('account_id', '=', accountId)
    .where('id', '>', afterId)
    .orderBy('id')
    .execute();
  const out: string[] = [];
  for (const r of rows) {
    const m = await messageFromDb(ctx, r.id);
    out.push(`${m.Direction} ${m.Status_Description} ${m.Number}→${m.MobilePhone} "${m.Message}"`);
  }
  return out;
}

async function maxMessageId(ctx: TestApp): Promise<number> {
  const r = await ctx.store.db
    .selectFrom('messages')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirst();
  return Number(r?.id ?? 0);
}

storeTest('sms:delivered and sms:failed set Delivered / Undelivered once; sms:sent and other events change nothing', async (t) => {
  const s = await setup(t);
  const a = await sentMessage(s.ctx, s.accountId, 'ph', 'msgsvc-1001');
  const b = await sentMessage(s.ctx, s.accountId, 'ph', 'msgsvc-1002');
  const c = await sentMessage(s.ctx, s.accountId, 'ph', 'msgsvc-1003');
  const common = { sender: null, recipient: SENDER, phoneNumber: SENDER, simNumber: 1, partsCount: 1 };

  assertOk(await post(s, 'sms:sent', { messageId: 'msgsvc-1001', ...common, sentAt: '2026-11-23T10:00:00.000+01:00' }));
  assert.equal((await messageFromDb(s.ctx, a)).Status_Description, 'Sent');
  assertOk(await post(s, 'system:ping', { health: {} }));
  assertOk(await post(s, 'sms:delivered', { messageId: 'msgsvc-1001', ...common, deliveredAt: '2026-11-23T10:00:01.000+01:00' }));
  assert.equal((await messageFromDb(s.ctx, a)).Status_Description, 'Delivered');

  assertOk(
    await post(s, 'sms:failed', {
      messageId: 'msgsvc-1002',
      ...common,
      failedAt: '2026-11-23T10:00:01.000+01:00',
      reason: 'RESULT_ERROR_GENERIC_FAILURE',
    }),
  );
  const failed = await messageFromDb(s.ctx, b);
  assert.deepEqual([failed.Status_Description, failed.ErrorCode], ['Undelivered', 'RESULT_ERROR_GENERIC_FAILURE']);
  assertOk(
    await post(s, 'sms:failed', {
      messageId: 'msgsvc-1003',
      ...common,
      failedAt: '2026-11-23T10:00:01.000+01:00',
      reason: `x${'y'.repeat(100)}`,
    }),
  );
  assert.equal((await messageFromDb(s.ctx, c)).ErrorCode, `x${'y'.repeat(63)}`, 'the reason, at most 64 characters');

  const before = await snapshot(s.ctx);
  // The app retries an event with the same id; a later contrary event changes nothing either.
  assertOk(await post(s, 'sms:delivered', { messageId: 'msgsvc-1001', ...common, deliveredAt: '2026-11-23T10:00:01.000+01:00' }));
  assertOk(await post(s, 'sms:failed', { messageId: 'msgsvc-1001', ...common, failedAt: '2026-11-23T10:00:02.000+01:00', reason: 'late' }));
  assertOk(await post(s, 'sms:delivered', { messageId: 'msgsvc-1002', ...common, deliveredAt: '2026-11-23T10:00:01.000+01:00' }));
  assert.deepEqual(await snapshot(s.ctx), before, 'repeats change nothing');
  // A receipt of another carrier's message with the same id changes nothing.
  const tw = await sentMessage(s.ctx, s.accountId, 'tw', 'msgsvc-2000');
  assertOk(await post(s, 'sms:delivered', { messageId: 'msgsvc-2000', ...common, deliveredAt: '2026-11-23T10:00:01.000+01:00' }));
  assert.equal((await messageFromDb(s.ctx, tw)).Status_Description, 'Sent');
});

storeTest('sms:received runs §11.5 once per event id, To the carrier’s number; the same event twice at once too', async (t) => {
  const s = await setup(t);
  const mark = await maxMessageId(s.ctx);
  assertOk(await post(s, 'sms:received', received('Hello phone'), { id: 'evt-0001' }));
  assertOk(await post(s, 'sms:received', received('Hello phone'), { id: 'evt-0001' }));
  assert.deepEqual(await newMessages(s.ctx, s.accountId, mark), [`Inbound Received ${OWN}→${SENDER_DIGITS} "Hello phone"`]);
  // Another event with the same text (the app's messageId is a hash of it) is another text.
  assertOk(await post(s, 'sms:received', received('Hello phone'), { id: 'evt-0002' }));
  assert.equal((await newMessages(s.ctx, s.accountId, mark)).length, 2);

  // STOP: opted out, one confirmation; its retry sends none again.
  const m2 = await maxMessageId(s.ctx);
  for (let i = 0; i < 2; i++) assertOk(await post(s, 'sms:received', received('Stop'), { id: 'evt-0003' }));
  assert.deepEqual(await newMessages(s.ctx, s.accountId, m2), [
    `Inbound Received ${OWN}→${SENDER_DIGITS} "Stop"`,
    `Outbound Queued ${OWN}→${SENDER_DIGITS} "You have been unsubscribed and will receive no more messages. Reply START to resubscribe."`,
  ]);

  // Six deliveries of one event at the same moment (the app's retry racing the first attempt).
  for (let round = 0; round < 3; round++) {
    const m = await maxMessageId(s.ctx);
    const replies = await Promise.all(
      Array.from({ length: 6 }, () => post(s, 'sms:received', received('INFO', '+15557654321'), { id: `race-${round}` })),
    );
    for (const r of replies) assertOk(r);
    assert.deepEqual(await newMessages(s.ctx, s.accountId, m), [
      `Inbound Received ${OWN}→15557654321 "INFO"`,
      `Outbound Queued ${OWN}→15557654321 "Reply STOP to unsubscribe."`,
    ]);
  }
  // An alphanumeric sender cannot be answered: ignored (200), nothing stored.
  const before = await snapshot(s.ctx);
  assertOk(await post(s, 'sms:received', received('promo', 'ACME'), { id: 'evt-acme' }));
  assert.deepEqual(await snapshot(s.ctx), before);
});

storeTest('unsigned, wrongly signed, altered, stale or future events: 403 and nothing changes', async (t) => {
  const s = await setup(t);
  await sentMessage(s.ctx, s.accountId, 'ph', 'msgsvc-1');
  const delivered = {
    messageId: 'msgsvc-1',
    sender: null,
    recipient: SENDER,
    phoneNumber: SENDER,
    simNumber: 1,
    partsCount: 1,
    deliveredAt: '2026-11-23T10:00:01.000+01:00',
  };
  const now = s.clock.nowSeconds();
  const genuine = s.phone.signedEvent('sms:delivered', delivered, { id: 'e1', timestamp: now });
  const before = await snapshot(s.ctx);
  const cases: [string, Parameters<typeof post>[3], string?, Record<string, unknown>?][] = [
    ['no headers', { headers: { 'content-type': 'application/json' } }],
    ['no signature', { headers: { 'content-type': 'application/json', 'x-timestamp': String(now) } }],
    ['no timestamp', { headers: { 'content-type': 'application/json', 'x-signature': genuine.headers['X-Signature'] } }],
    ['another key', { key: 'not-the-key' }],
    ['the body altered after signing', { body: genuine.body.replace('msgsvc-1', 'msgsvc-2'), headers: genuine.headers }],
    ['the timestamp altered after signing', { body: genuine.body, headers: { ...genuine.headers, 'X-Timestamp': String(now + 1) } }],
    [
      'the signature in upper case, altered',
      // One hex digit changed (never to itself: a signature ending in 0 would otherwise pass).
      {
        body: genuine.body,
        headers: {
          ...genuine.headers,
          'X-Signature': `${genuine.headers['X-Signature'].slice(0, -1)}${genuine.headers['X-Signature'].endsWith('0') ? '1' : '0'}`,
        },
      },
    ],
    ['five minutes and a second old', { timestamp: now - 301 }],
    ['five minutes and a second ahead', { timestamp: now + 301 }],
    ['an inbound text, stale', { timestamp: now - 3600, id: 'old' }, 'sms:received', received('STOP')],
  ];
  for (const [what, o, event, payload] of cases) {
    const res = await post(s, event ?? 'sms:delivered', payload ?? delivered, o);
    try {
      assertError(res, 403, BAD_SIGNATURE);
    } catch (err) {
      (err as Error).message = `${what}: ${(err as Error).message}`;
      throw err;
    }
    assert.equal(res.headers['x-rate-limit-limit'], undefined);
  }
  assert.deepEqual(await snapshot(s.ctx), before, 'nothing changed');
  // Within the window either way: accepted.
  assertOk(await post(s, 'sms:delivered', delivered, { timestamp: now - 300 }));
  s.clock.advance(299_000);
  assertOk(await post(s, 'sms:received', received('Hi'), { timestamp: now, id: 'e-late-ok' }));
  // The very same signed request, replayed once the clock has moved past the window: refused.
  s.clock.advance(2_000);
  const replay = await s.ctx.app.inject({ method: 'POST', url: '/v1/carriers/ph/events', headers: genuine.headers, payload: genuine.body });
  assertError(replay, 403, BAD_SIGNATURE);
});

storeTest('events: signed non-JSON 400, over 64 KiB 413, a Twilio or unknown name 404, another method 405; nothing stored', async (t) => {
  const s = await setup(t);
  const before = await snapshot(s.ctx);
  for (const body of ['not json', '[1,2]', '"text"', '{"id":"x","event":"sms:received",']) {
    const res = await s.ctx.app.inject({ method: 'POST', url: '/v1/carriers/ph/events', headers: signedHeaders(s, body), payload: body });
    assertError(res, 400, 'Bad Request: the body is not a JSON object.');
  }
  // Unsigned garbage is 403 (the signature is checked on the bytes first).
  assertError(
    await s.ctx.app.inject({
      method: 'POST',
      url: '/v1/carriers/ph/events',
      headers: { 'content-type': 'application/json' },
      payload: 'garbage',
    }),
    403,
    BAD_SIGNATURE,
  );
  const huge = received('x'.repeat(70_000));
  assertError(await post(s, 'sms:received', huge), 413, 'Request Entity Too Large: the body is over the limit of 65536 bytes.');
  for (const carrier of ['tw', 'nope', 'sandbox']) {
    assertError(await post(s, 'sms:received', received('hi'), { carrier }), 404, 'Page not found.');
  }
  const get = await s.ctx.app.inject({ method: 'GET', url: '/v1/carriers/ph/events' });
  assertError(get, 405, 'Method Not Allowed. This URL can only handle the following request methods: POST.');
  // A phone has no status, inbound or media routes: those are the Twilio carrier's.
  for (const action of ['status', 'inbound', 'media']) {
    assertError(
      await s.ctx.app.inject({ method: action === 'media' ? 'GET' : 'POST', url: `/v1/carriers/ph/${action}` }),
      404,
      'Page not found.',
    );
  }
  assert.deepEqual(await snapshot(s.ctx), before);
});

/** The app's headers for an arbitrary body: hex HMAC-SHA256(key, body + timestamp), as the app's docs give it (not src's code). */
function signedHeaders(s: Setup, body: string): Record<string, string> {
  const timestamp = String(s.clock.nowSeconds());
  return {
    'content-type': 'application/json',
    'x-timestamp': timestamp,
    'x-signature': createHmac('sha256', KEY)
      .update(body + timestamp)
      .digest('hex'),
  };
}

storeTest('over real sockets: the carrier registers its webhooks on the phone, and the phone’s events reach msgsvc', async (t) => {
  const phone = await FakePhone.create({ signingKey: KEY });
  t.after(() => phone.stop());
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const ctx = await buildTestApp(t, env(phone.port, publicUrl));
  const demo = await ctx.seed();
  await ctx.app.listen({ port, host: '127.0.0.1' });
  // The carrier as the configuration gives it (the dispatcher's wiring builds it the same way).
  const spec = ctx.config.carriers.find((c) => c.name === 'ph');
  if (spec?.kind !== 'android') throw new Error('ph is the android carrier');
  const carrier = createAndroidCarrier({
    name: spec.name,
    baseUrl: spec.baseUrl,
    username: spec.username,
    password: spec.password,
    publicUrl,
    rate: 100,
    window: 10,
    timeoutMs: 2_000,
    registerMinMs: 20,
    registerMaxMs: 100,
  });
  await carrier.start({ receipt: async () => {}, inbound: async () => {} });
  t.after(() => carrier.stop());
  const deadline = Date.now() + 20_000;
  while (phone.webhooks.size < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(
    [...phone.webhooks.values()].map((w) => w.url),
    Array(4).fill(`${publicUrl}/v1/carriers/ph/events`),
  );

  const id = await sentMessage(ctx, demo.account.id, 'ph', 'msgsvc-77');
  const common = { sender: null, recipient: SENDER, phoneNumber: SENDER, simNumber: 1, partsCount: 1 };
  assert.deepEqual(await phone.fire('sms:delivered', { messageId: 'msgsvc-77', ...common, deliveredAt: '2026-11-23T10:00:01.000+01:00' }), {
    status: 200,
    body: '',
  });
  assert.equal((await messageFromDb(ctx, id)).Status_Description, 'Delivered');

  const mark = await maxMessageId(ctx);
  for (let i = 0; i < 2; i++) assert.equal((await phone.fire('sms:received', received('help'), { id: 'wire-1' })).status, 200);
  assert.deepEqual(await newMessages(ctx, demo.account.id, mark), [
    `Inbound Received ${OWN}→${SENDER_DIGITS} "help"`,
    `Outbound Queued ${OWN}→${SENDER_DIGITS} "Reply STOP to unsubscribe."`,
  ]);

  const before = await snapshot(ctx);
  const tampered = await phone.fire('sms:received', received('STOP'), { id: 'wire-2', tamper: (b) => b.replace('STOP', 'START') });
  assert.equal(tampered.status, 403);
  assert.deepEqual(JSON.parse(tampered.body), { name: 'Forbidden', message: BAD_SIGNATURE, code: 0, status: 403 });
  assert.equal((await phone.fire('sms:received', received('STOP'), { id: 'wire-3', key: 'old-key' })).status, 403);
  assert.equal(
    (await phone.fire('sms:received', received('STOP'), { id: 'wire-4', timestamp: Math.floor(Date.now() / 1000) - 600 })).status,
    403,
  );
  assert.deepEqual(await snapshot(ctx), before);
});
