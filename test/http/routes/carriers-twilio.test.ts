/**
 * The Twilio-compatible carrier's callbacks (API.md §14.1), on each store: `POST
 * /v1/carriers/{name}/status` and `…/inbound`, signed by the OFFICIAL `twilio` package
 * (`getExpectedTwilioSignature`, and `validateRequest` to check the test's own signing), never by
 * msgsvc's code. Receipts set Delivered / Undelivered once; other statuses and unknown ids change
 * nothing; inbound texts run API.md §11.5 once per MessageSid, also when two identical callbacks
 * race; a missing, wrong or altered signature is 403 and changes nothing; a malformed form 400, a
 * body over 64 KiB 413, an unknown or wrong-kind carrier 404, another method 405 — all in the
 * usual error shape, with nothing stored. No access_token and no rate limit. Over app.inject and
 * over a real socket (where the provider signs the public URL and the request arrives at another
 * address, as behind a proxy, and where it signs the very URL it posts to).
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import twilio from 'twilio';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import { postSignedCallback } from '../../helpers/fake-twilio.ts';
import { assertError, call } from '../../helpers/operations.ts';
import { messageFromDb } from '../../helpers/sms.ts';
import { storeTest } from '../../helpers/stores.ts';
import { freePort } from '../../helpers/net.ts';

const SID = `AC${'a1'.repeat(16)}`;
const TOKEN = 'tw-auth-token-0123456789abcdef';
const OTHER_TOKEN = 'another-token-fedcba9876543210';
const PUBLIC_URL = 'https://sms.example.com/msgsvc';
const SHORT = '55155'; // held by every demo account
const SENDER = '15551234567';
const TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>';
const BAD_SIGNATURE = 'The request signature is missing or invalid.';
const STOP_REPLY = 'You have been unsubscribed and will receive no more messages. Reply START to resubscribe.';

/** Two Twilio carriers (different tokens), one SMPP carrier (a name of the wrong kind), the sandbox. */
function carriersEnv(publicUrl = PUBLIC_URL): Record<string, string> {
  return {
    MSGSVC_CARRIERS: `tw=twilio+http://${SID}:${TOKEN}@127.0.0.1:9,tw2=twilio+http://${SID}:${OTHER_TOKEN}@127.0.0.1:9,sm=smpp://sys:pw@127.0.0.1:9,sandbox=sandbox:`,
    MSGSVC_PUBLIC_URL: publicUrl,
    // The fake providers listen on 127.0.0.1 (a literal private address stops the start without it).
    MSGSVC_CARRIER_ALLOW_PRIVATE: '1',
    // Low enough that the callbacks would run into it if it applied to them.
    MSGSVC_RATE_LIMIT: '3',
  };
}

type Params = Record<string, string | string[]>;

function formOf(params: Params): string {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) for (const x of [v].flat()) form.append(k, x);
  return form.toString();
}

/** The signature the official package computes, checked with its own validator too. */
function officialSignature(token: string, url: string, params: Params): string {
  const signature = twilio.getExpectedTwilioSignature(token, url, params);
  assert.equal(twilio.validateRequest(token, signature, url, params), true, 'the twilio package accepts its own signature');
  return signature;
}

interface CallbackOptions {
  carrier?: string;
  token?: string;
  /** The URL signed (default: the public URL of the route). */
  signedUrl?: string;
  /** The header as sent; null: none. Default: the official signature. */
  signature?: string | null;
  /** The body as sent (default: the form of `params`). */
  body?: string | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
  method?: 'POST' | 'GET' | 'PUT';
}

function callback(ctx: TestApp, action: 'status' | 'inbound', params: Params, o: CallbackOptions = {}): Promise<LightMyRequestResponse> {
  const carrier = o.carrier ?? 'tw';
  const signedUrl = o.signedUrl ?? `${PUBLIC_URL}/v1/carriers/${carrier}/${action}`;
  const signature = o.signature === undefined ? officialSignature(o.token ?? TOKEN, signedUrl, params) : o.signature;
  const headers: Record<string, string> = { 'content-type': o.contentType ?? 'application/x-www-form-urlencoded', ...(o.headers ?? {}) };
  if (signature !== null) headers['x-twilio-signature'] = signature;
  return ctx.app.inject({
    method: o.method ?? 'POST',
    url: `/v1/carriers/${carrier}/${action}`,
    headers,
    payload: o.body ?? formOf(params),
  });
}

/** A message of the account handed to carrier `carrier` under its id `sid`: Sent, as the dispatcher leaves it. */
async function sentMessage(ctx: TestApp, accountId: number, carrier: string, sid: string): Promise<number> {
  const row = await ctx.store.db
    .insertInto('messages')
    .values({
      account_id: accountId,
      direction: 1,
      number: SHORT,
      mobile_phone: SENDER,
      message: 'Hello',
      type_id: 1,
      status_id: 2,
      segments: 1,
      credits: 1,
      created_at: 1_700_000_000,
      sent_at: 1_700_000_001,
      carrier,
      carrier_message_id: sid,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Everything a refused callback must leave alone. */
async function snapshot(ctx: TestApp) {
  return {
    messages: await ctx.store.db.selectFrom('messages').selectAll().orderBy('id').execute(),
    contacts: await ctx.store.db.selectFrom('contacts').selectAll().orderBy('id').execute(),
    keys: await ctx.store.db.selectFrom('carrier_inbound').selectAll().orderBy('carrier_message_id').execute(),
    parked: await ctx.store.db.selectFrom('carrier_receipts_pending').selectAll().orderBy('carrier_message_id').execute(),
    events: await ctx.store.db.selectFrom('webhook_deliveries').selectAll().orderBy('id').execute(),
  };
}

function assertEmpty200(res: LightMyRequestResponse): void {
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.body, '');
}

function assertTwiml(res: LightMyRequestResponse): void {
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers['content-type'], 'text/xml');
  assert.equal(res.body, TWIML);
}

/** The account's messages after `afterId`, compactly: `Direction Status Number→MobilePhone "text"`. */
async function newMessages(ctx: TestApp, accountId: number, afterId = 0): Promise<string[]> {
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

// ------------------------------------------------------------------ status

storeTest('status: delivered sets Delivered once; a repeat and other statuses change nothing', async (t) => {
  const ctx = await buildTestApp(t, carriersEnv());
  const demo = await ctx.seed();
  const sid = `SM${'0'.repeat(31)}1`;
  const id = await sentMessage(ctx, demo.account.id, 'tw', sid);

  for (const status of ['queued', 'sending', 'sent', 'accepted', 'scheduled', 'read', 'something-new']) {
    assertEmpty200(await callback(ctx, 'status', { MessageSid: sid, MessageStatus: status, AccountSid: SID }));
    assert.equal((await messageFromDb(ctx, id)).Status_Description, 'Sent', `${status} changes nothing`);
  }

  assertEmpty200(await callback(ctx, 'status', { MessageSid: sid, MessageStatus: 'delivered', AccountSid: SID, ApiVersion: '2010-04-01' }));
  const delivered = await messageFromDb(ctx, id);
  assert.equal(delivered.Status_Description, 'Delivered');
  assert.equal(delivered.ErrorCode, '');
  assert.notEqual(delivered.DateDelivered, null);

  const before = await snapshot(ctx);
  assertEmpty200(await callback(ctx, 'status', { MessageSid: sid, MessageStatus: 'delivered', AccountSid: SID }));
  assertEmpty200(await callback(ctx, 'status', { MessageSid: sid, MessageStatus: 'undelivered', ErrorCode: '30003' }));
  assert.deepEqual(await snapshot(ctx), before, 'a repeat, or a later receipt, changes nothing');
  const events = before.events.filter((e) => e.event === 'message.delivered');
  assert.ok(events.length <= 1, 'at most one message.delivered event');
});

storeTest('status: undelivered and failed set Undelivered with TWILIO_{ErrorCode}, UNDELIV without one', async (t) => {
  const ctx = await buildTestApp(t, carriersEnv());
  const demo = await ctx.seed();
  const cases: [Params, string][] = [
    [{ MessageStatus: 'undelivered', ErrorCode: '30003' }, 'TWILIO_30003'],
    [{ MessageStatus: 'failed', ErrorCode: '30008' }, 'TWILIO_30008'],
    [{ MessageStatus: 'undelivered' }, 'UNDELIV'],
    [{ MessageStatus: 'failed', ErrorCode: '' }, 'UNDELIV'],
    [{ MessageStatus: 'Undelivered', ErrorCode: '30005' }, 'TWILIO_30005'],
  ];
  let n = 0;
  for (const [fields, code] of cases) {
    const sid = `SM${String(++n).padStart(32, '0')}`;
    const id = await sentMessage(ctx, demo.account.id, 'tw', sid);
    assertEmpty200(await callback(ctx, 'status', { MessageSid: sid, ...fields }));
    const m = await messageFromDb(ctx, id);
    assert.equal(m.Status_Description, 'Undelivered', JSON.stringify(fields));
    assert.equal(m.ErrorCode, code, JSON.stringify(fields));
    assert.equal(m.Credits, 1, 'an Undelivered message is not refunded');
  }
});

storeTest(
  'status: a receipt names the message of THIS carrier; an unknown MessageSid is answered 200 and changes no message',
  async (t) => {
    const ctx = await buildTestApp(t, carriersEnv());
    const demo = await ctx.seed();
    const sid = `SM${'7'.repeat(32)}`;
    const id = await sentMessage(ctx, demo.account.id, 'tw', sid);
    // tw2 is another carrier: the same id there names no message of tw2.
    assertEmpty200(await callback(ctx, 'status', { MessageSid: sid, MessageStatus: 'delivered' }, { carrier: 'tw2', token: OTHER_TOKEN }));
    assert.equal((await messageFromDb(ctx, id)).Status_Description, 'Sent');
    const messages = await ctx.store.db.selectFrom('messages').selectAll().orderBy('id').execute();
    assertEmpty200(await callback(ctx, 'status', { MessageSid: `SM${'9'.repeat(32)}`, MessageStatus: 'delivered' }));
    assert.deepEqual(await ctx.store.db.selectFrom('messages').selectAll().orderBy('id').execute(), messages, 'no message changed');
  },
);

storeTest('status: a missing, wrong or altered signature is 403 and changes nothing', async (t) => {
  const ctx = await buildTestApp(t, carriersEnv());
  const demo = await ctx.seed();
  const sid = `SM${'3'.repeat(32)}`;
  await sentMessage(ctx, demo.account.id, 'tw', sid);
  const params = { MessageSid: sid, MessageStatus: 'delivered' };
  const url = `${PUBLIC_URL}/v1/carriers/tw/status`;
  const good = officialSignature(TOKEN, url, params);
  const before = await snapshot(ctx);
  const cases: [string, CallbackOptions, Params?][] = [
    ['no header', { signature: null }],
    ['empty header', { signature: '' }],
    ['garbage', { signature: 'not-a-signature' }],
    ['another token', { token: OTHER_TOKEN }],
    ['the other carrier’s signature', { signature: officialSignature(OTHER_TOKEN, url, params) }],
    ['signed over the inbound URL', { signedUrl: `${PUBLIC_URL}/v1/carriers/tw/inbound` }],
    ['signed over another carrier’s URL', { signedUrl: `${PUBLIC_URL}/v1/carriers/tw2/status` }],
    ['signed over the wrong host', { signedUrl: 'https://evil.example.com/msgsvc/v1/carriers/tw/status' }],
    ['a field altered after signing', { signature: good, body: formOf({ ...params, MessageStatus: 'undelivered' }) }],
    ['a field added after signing', { signature: good, body: `${formOf(params)}&ErrorCode=30003` }],
    ['a field removed after signing', { signature: good, body: formOf({ MessageSid: sid }) }],
    ['the signature altered', { signature: good.slice(0, -2) + (good.endsWith('A=') ? 'B=' : 'A=') }],
    ['the signature twice', { headers: { 'x-twilio-signature': `${good}, ${good}` }, signature: null }],
  ];
  for (const [name, o, p] of cases) {
    const res = await callback(ctx, 'status', p ?? params, o);
    assertError(res, 403, BAD_SIGNATURE);
    assert.equal(res.headers['x-rate-limit-limit'], undefined, name);
  }
  assert.deepEqual(await snapshot(ctx), before, 'nothing changed');
  // The genuine one still works afterwards.
  assertEmpty200(await callback(ctx, 'status', params));
});

storeTest(
  'callbacks: 400 malformed, 415 not a form, 413 over 64 KiB, 404 unknown or wrong-kind carrier, 405 another method; nothing stored',
  async (t) => {
    const ctx = await buildTestApp(t, carriersEnv());
    const demo = await ctx.seed();
    await sentMessage(ctx, demo.account.id, 'tw', `SM${'4'.repeat(32)}`);
    const before = await snapshot(ctx);
    const ok = { MessageSid: `SM${'4'.repeat(32)}`, MessageStatus: 'delivered' };
    // Malformed form bodies: no signature can even be computed over them.
    for (const body of ['MessageSid=%ZZ&MessageStatus=delivered', 'MessageSid=SM1&=x', Buffer.from([0x4d, 0x3d, 0xff, 0xfe])]) {
      assertError(
        await callback(ctx, 'status', ok, { body, signature: 'x' }),
        400,
        'Bad Request: the body is not a valid application/x-www-form-urlencoded form.',
      );
      assertError(
        await callback(ctx, 'inbound', ok, { body, signature: 'x' }),
        400,
        'Bad Request: the body is not a valid application/x-www-form-urlencoded form.',
      );
    }
    // Signed, but without what the callback needs.
    assertError(await callback(ctx, 'status', { MessageStatus: 'delivered' }), 400, 'Bad Request: MessageSid is missing.');
    assertError(await callback(ctx, 'status', { MessageSid: 'SM1' }), 400, 'Bad Request: MessageStatus is missing.');
    assertError(await callback(ctx, 'inbound', { From: `+${SENDER}`, To: SHORT, Body: 'hi' }), 400, 'Bad Request: MessageSid is missing.');
    assertError(
      await callback(ctx, 'inbound', { MessageSid: 'SM1', From: 'not a number', To: SHORT, Body: 'hi' }),
      400,
      'Bad Request: From is not a phone number.',
    );
    assertError(
      await callback(ctx, 'inbound', { MessageSid: 'SM1', From: `+${SENDER}`, Body: 'hi' }),
      400,
      'Bad Request: To is not a phone number.',
    );
    // Not a form.
    assertError(
      await callback(ctx, 'status', ok, { contentType: 'application/json', body: JSON.stringify(ok) }),
      415,
      'Unsupported Media Type: send the body as application/x-www-form-urlencoded.',
    );
    // Over 64 KiB (a signed one: the limit comes before the signature).
    const big = { ...ok, Body: 'x'.repeat(64 * 1024) };
    assertError(await callback(ctx, 'status', big), 413, 'Request Entity Too Large: the body is over the limit of 65536 bytes.');
    assertError(
      await callback(ctx, 'inbound', { MessageSid: 'SM1', From: `+${SENDER}`, To: SHORT, Body: 'x'.repeat(70_000) }),
      413,
      'Request Entity Too Large: the body is over the limit of 65536 bytes.',
    );
    // Unknown names, and names of another kind (SMPP, the sandbox), whatever the body.
    for (const carrier of ['nope', 'sm', 'sandbox', 'TW', 'tw ']) {
      assertError(await callback(ctx, 'status', ok, { carrier: encodeURIComponent(carrier) }), 404, 'Page not found.');
      assertError(
        await callback(ctx, 'inbound', ok, { carrier: encodeURIComponent(carrier), body: 'x'.repeat(70_000) }),
        404,
        'Page not found.',
      );
    }
    // Another method on a known carrier's path: 405 with Allow; on an unknown one: 404.
    const get = await ctx.app.inject({ method: 'GET', url: '/v1/carriers/tw/status' });
    assertError(get, 405, 'Method Not Allowed. This URL can only handle the following request methods: POST.');
    assert.equal(get.headers.allow, 'POST');
    assertError(
      await ctx.app.inject({ method: 'PUT', url: '/v1/carriers/tw/inbound' }),
      405,
      'Method Not Allowed. This URL can only handle the following request methods: POST.',
    );
    assertError(await ctx.app.inject({ method: 'GET', url: '/v1/carriers/nope/status' }), 404, 'Page not found.');
    assertError(await ctx.app.inject({ method: 'POST', url: '/v1/carriers/tw/unknown' }), 404, 'Page not found.');
    // Errors follow Accept, as every error does (XML when asked for; JSON for anything else).
    const xml = await callback(ctx, 'status', ok, { signature: null, headers: { accept: 'application/xml' } });
    assertError(xml, 403, BAD_SIGNATURE, 'xml');
    const odd = await callback(ctx, 'status', ok, { signature: null, headers: { accept: 'text/html' } });
    assertError(odd, 403, BAD_SIGNATURE);
    assert.deepEqual(await snapshot(ctx), before, 'nothing stored');
  },
);

storeTest('callbacks take no access_token and no rate limit; an API request still needs both', async (t) => {
  const ctx = await buildTestApp(t, carriersEnv());
  const demo = await ctx.seed();
  for (let i = 0; i < 10; i++) {
    const res = await callback(ctx, 'status', { MessageSid: `SM${String(i).padStart(32, '0')}`, MessageStatus: 'sent' });
    assertEmpty200(res);
    assert.equal(res.headers['x-rate-limit-limit'], undefined);
  }
  // A token in the query changes nothing: not read, not counted (the signature is over the URL the provider was given).
  const withToken = await ctx.app.inject({
    method: 'POST',
    url: `/v1/carriers/tw/status?access_token=${demo.token}`,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': officialSignature(TOKEN, `${PUBLIC_URL}/v1/carriers/tw/status`, { MessageSid: 'SM1', MessageStatus: 'sent' }),
    },
    payload: 'MessageSid=SM1&MessageStatus=sent',
  });
  assertEmpty200(withToken);
  assert.equal(withToken.headers['x-rate-limit-limit'], undefined);
  assertError(await ctx.app.inject({ method: 'GET', url: '/v1/numbers/index' }), 401, 'Your request was made with invalid credentials.');
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) statuses.push((await call(ctx.app, { path: '/v1/numbers/index', token: demo.token })).statusCode);
  assert.deepEqual(statuses, [200, 200, 200, 429], 'the API keeps its limit of 3');
});

// ------------------------------------------------------------------ inbound

storeTest('inbound: the text runs §11.5 once per MessageSid; a repeat gets the same TwiML and stores nothing', async (t) => {
  const ctx = await buildTestApp(t, carriersEnv());
  const demo = await ctx.seed();
  const other = await ctx.seed('Second account');
  const start = await maxMessageId(ctx);
  const sid = `SM${'5'.repeat(32)}`;
  const params = { MessageSid: sid, AccountSid: SID, From: `+${SENDER}`, To: `+${SHORT}`, Body: 'Hello there', NumMedia: '0' };
  assertTwiml(await callback(ctx, 'inbound', params));
  // A shared short code: any other text is stored in each account that holds it.
  assert.deepEqual(await newMessages(ctx, demo.account.id, start), [`Inbound Received ${SHORT}→${SENDER} "Hello there"`]);
  assert.deepEqual(await newMessages(ctx, other.account.id, start), [`Inbound Received ${SHORT}→${SENDER} "Hello there"`]);
  const after = await snapshot(ctx);
  for (let i = 0; i < 3; i++) assertTwiml(await callback(ctx, 'inbound', params));
  assert.deepEqual(await snapshot(ctx), after, 'a repeat runs nothing');

  // STOP: opted out in both accounts, ONE confirmation in all; its repeat sends none again.
  const stop = { MessageSid: `SM${'6'.repeat(32)}`, From: SENDER, To: SHORT, Body: '  stop ' };
  const mark = await maxMessageId(ctx);
  assertTwiml(await callback(ctx, 'inbound', stop));
  assertTwiml(await callback(ctx, 'inbound', stop));
  const first = Math.min(demo.account.id, other.account.id);
  const second = Math.max(demo.account.id, other.account.id);
  assert.deepEqual(await newMessages(ctx, first, mark), [
    `Inbound Received ${SHORT}→${SENDER} "  stop "`,
    `Outbound Queued ${SHORT}→${SENDER} "${STOP_REPLY}"`,
  ]);
  assert.deepEqual(await newMessages(ctx, second, mark), [`Inbound Received ${SHORT}→${SENDER} "  stop "`]);
  for (const accountId of [first, second]) {
    const c = await ctx.store.db
      .selectFrom('contacts')
      .select('opted_out')
      .where('account_id', '=', accountId)
      .where('number', '=', SENDER)
      .executeTakeFirstOrThrow();
    assert.equal(Number(c.opted_out), 1);
  }

  // The same MessageSid at another carrier is another text.
  assertTwiml(await callback(ctx, 'inbound', params, { carrier: 'tw2', token: OTHER_TOKEN }));
  assert.equal((await newMessages(ctx, demo.account.id, start)).filter((m) => m.endsWith('"Hello there"')).length, 2);

  // A text to a number no account holds: nothing stored but its key; the same answer.
  const before = await snapshot(ctx);
  assertTwiml(await callback(ctx, 'inbound', { MessageSid: `SM${'8'.repeat(32)}`, From: SENDER, To: '15559999999', Body: 'anyone?' }));
  assert.deepEqual((await snapshot(ctx)).messages, before.messages);
});

storeTest('inbound: two identical callbacks at the same moment run §11.5 once', async (t) => {
  const ctx = await buildTestApp(t, carriersEnv());
  // One account: every number of it is its own, so one text is one message.
  const demo = await ctx.seed('Only account');
  const own = '15550100001';
  for (let round = 0; round < 5; round++) {
    const mark = await maxMessageId(ctx);
    const params = { MessageSid: `SM${String(round).padStart(32, 'c')}`, From: SENDER, To: own, Body: 'HELP' };
    const replies = await Promise.all(Array.from({ length: 6 }, () => callback(ctx, 'inbound', params)));
    for (const r of replies) assertTwiml(r);
    assert.deepEqual(await newMessages(ctx, demo.account.id, mark), [
      `Inbound Received ${own}→${SENDER} "HELP"`,
      `Outbound Queued ${own}→${SENDER} "Reply STOP to unsubscribe."`,
    ]);
  }
});

storeTest('over a real socket: signed over the public URL behind a proxy, and over the very URL posted to', async (t) => {
  // Behind a proxy: the provider signs PUBLIC_URL; the request reaches us at 127.0.0.1.
  const proxied = await buildTestApp(t, carriersEnv());
  const demo = await proxied.seed();
  const sid = `SM${'d'.repeat(32)}`;
  const id = await sentMessage(proxied, demo.account.id, 'tw', sid);
  await proxied.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(proxied.app.server.address() as AddressInfo).port}`;
  const params = { MessageSid: sid, MessageStatus: 'delivered' };
  const signature = officialSignature(TOKEN, `${PUBLIC_URL}/v1/carriers/tw/status`, params);
  const res = await fetch(`${base}/v1/carriers/tw/status`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
    body: formOf(params),
  });
  assert.equal(res.status, 200);
  assert.equal(await res.text(), '');
  assert.equal((await messageFromDb(proxied, id)).Status_Description, 'Delivered');
  // Signed over the address it was posted to instead: not the URL the provider was given.
  const wrong = await postSignedCallback(`${base}/v1/carriers/tw/status`, TOKEN, params);
  assert.equal(wrong.status, 403);
  assert.equal(wrong.contentType, 'application/json; charset=UTF-8');
  assert.deepEqual(JSON.parse(wrong.body), { name: 'Forbidden', message: BAD_SIGNATURE, code: 0, status: 403 });

  // No proxy: PUBLIC_URL is the listening address itself, and fake-twilio's poster signs the URL it posts to.
  const port = await freePort();
  const direct = await buildTestApp(t, carriersEnv(`http://127.0.0.1:${port}`));
  const demo2 = await direct.seed();
  await direct.app.listen({ port, host: '127.0.0.1' });
  const mark = await maxMessageId(direct);
  const inbound = { MessageSid: `SM${'e'.repeat(32)}`, From: `+${SENDER}`, To: SHORT, Body: 'HELP', SmsStatus: 'received' };
  for (let i = 0; i < 2; i++) {
    const reply = await postSignedCallback(`http://127.0.0.1:${port}/v1/carriers/tw/inbound`, TOKEN, inbound);
    assert.deepEqual(reply, { status: 200, contentType: 'text/xml', body: TWIML });
  }
  assert.deepEqual(await newMessages(direct, demo2.account.id, mark), [
    `Inbound Received ${SHORT}→${SENDER} "HELP"`,
    `Outbound Queued ${SHORT}→${SENDER} "Reply STOP to unsubscribe."`,
  ]);
  const missing = await postSignedCallback(
    `http://127.0.0.1:${port}/v1/carriers/tw/inbound`,
    TOKEN,
    { ...inbound, MessageSid: 'SM2' },
    null,
  );
  assert.equal(missing.status, 403);
  // A body over 64 KiB on the wire: 413 in the usual shape.
  const huge = await postSignedCallback(`http://127.0.0.1:${port}/v1/carriers/tw/inbound`, TOKEN, {
    ...inbound,
    MessageSid: 'SM3',
    Body: 'y'.repeat(80_000),
  });
  assert.equal(huge.status, 413);
  assert.deepEqual(JSON.parse(huge.body), {
    name: 'Request Entity Too Large',
    message: 'Request Entity Too Large: the body is over the limit of 65536 bytes.',
    code: 0,
    status: 413,
  });
});

storeTest('without an HTTP carrier the carrier paths do not exist', async (t) => {
  const ctx = await buildTestApp(t);
  for (const action of ['status', 'inbound', 'media', 'events']) {
    assertError(await ctx.app.inject({ method: 'POST', url: `/v1/carriers/tw/${action}` }), 404, 'Page not found.');
  }
});
