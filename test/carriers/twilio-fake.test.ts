/**
 * The Twilio-compatible carrier against a fake provider of our own (test/helpers/fake-twilio.ts)
 * for what Prism cannot play: throttling, 5xx, a hanging provider, permanent errors with codes,
 * replies that are not JSON or are cut off, an outage and its end, the rate limit and the
 * window, the SSRF guard, and signed callbacks (signed by the official `twilio` package).
 */
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import twilio from 'twilio';
import { createTwilioCarrier, type TwilioCarrier, type TwilioCarrierOptions } from '../../src/carriers/twilio.ts';
import type { InboundText, OutboundMessage, Receipt } from '../../src/dispatch/carrier.ts';
import { readForm, startFakeTwilio, type FakeAnswer, type FakeTwilio } from '../helpers/fake-twilio.ts';
import { freePort } from '../helpers/net.ts';

const PUBLIC_URL = 'http://127.0.0.1:8080/base';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function fake(o: Parameters<typeof startFakeTwilio>[0] = {}): Promise<FakeTwilio> {
  const f = await startFakeTwilio(o);
  cleanups.push(() => f.close());
  return f;
}

function carrier(f: { url: string; accountSid: string; authToken: string }, o: Partial<TwilioCarrierOptions> = {}): TwilioCarrier {
  const c = createTwilioCarrier({
    name: 'tw1',
    baseUrl: f.url,
    accountSid: f.accountSid,
    authToken: f.authToken,
    publicUrl: PUBLIC_URL,
    rate: 1000,
    window: 4,
    timeoutMs: 2000,
    allowPrivate: true,
    probeMinMs: 20,
    probeMaxMs: 100,
    ...o,
  });
  cleanups.push(() => c.stop());
  return c;
}

function sms(o: Partial<OutboundMessage> = {}): OutboundMessage {
  return { id: 1, accountId: 7, from: '15550100001', to: '15550100002', text: 'Hello', typeId: 1, segments: 1, attempt: 1, ...o };
}

async function until(cond: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

test('submit: the form, Basic auth and StatusCallback as Twilio takes them; the sid is the carrier id', async () => {
  const f = await fake();
  const c = carrier(f, { mediaUrls: (m) => (m.mediaIds ?? []).map((id) => `${PUBLIC_URL}/v1/carriers/tw1/media?id=${id}`) });
  const r = await c.submit(sms({ text: 'Hello & welcome +1 ✓' }));
  assert.deepEqual(r, { kind: 'accepted', carrierMessageId: f.submits[0]!.sid });
  const s = f.submits[0]!;
  assert.equal(s.authorization, `Basic ${Buffer.from(`${f.accountSid}:${f.authToken}`).toString('base64')}`);
  assert.equal(s.contentType, 'application/x-www-form-urlencoded');
  assert.equal(s.path, `/2010-04-01/Accounts/${f.accountSid}/Messages.json`);
  assert.deepEqual(s.form, {
    To: '+15550100002',
    From: '+15550100001',
    Body: 'Hello & welcome +1 ✓',
    StatusCallback: 'http://127.0.0.1:8080/base/v1/carriers/tw1/status',
  });

  await c.submit(sms({ from: '46645' }));
  assert.equal(f.submits[1]!.form.From, '46645', 'a short code goes as it is');
  await c.submit(sms({ from: '123456789' }));
  assert.equal(f.submits[2]!.form.From, '+123456789', 'nine digits are a number');

  await c.submit(sms({ typeId: 2, text: 'Template text', mediaIds: [30, 10, 20] }));
  assert.deepEqual(
    readForm(f.submits[3]!.raw).MediaUrl,
    [30, 10, 20].map((id) => `${PUBLIC_URL}/v1/carriers/tw1/media?id=${id}`),
    'one MediaUrl per medium, in MediaIds order',
  );
  assert.equal(f.submits[3]!.form.Body, 'Template text');
  assert.equal(c.supportsMms, true);
});

test('permanent refusals: a 4xx with a Twilio code → TWILIO_{code}; without one → HTTP_{status}', async () => {
  const f = await fake();
  const c = carrier(f);
  const answers = [
    {
      status: 400,
      json: {
        code: 21211,
        message: "The 'To' number is not a valid phone number.",
        more_info: 'https://www.twilio.com/docs/errors/21211',
        status: 400,
      },
    },
    { status: 403, json: { code: '21610', message: 'Attempt to send to unsubscribed recipient' } },
    { status: 404, body: '<html>not found</html>' },
    { status: 422, json: { message: 'no code' } },
  ];
  f.answer = (s) => answers[s.n - 1]!;
  assert.deepEqual(await c.submit(sms()), { kind: 'failed', errorCode: 'TWILIO_21211' });
  assert.deepEqual(await c.submit(sms()), { kind: 'failed', errorCode: 'TWILIO_21610' });
  assert.deepEqual(await c.submit(sms()), { kind: 'failed', errorCode: 'HTTP_404' });
  assert.deepEqual(await c.submit(sms()), { kind: 'failed', errorCode: 'HTTP_422' });
  const wrongToken = carrier(f, { authToken: 'not-the-token' });
  f.answer = () => 'default';
  assert.deepEqual(await wrongToken.submit(sms()), { kind: 'failed', errorCode: 'TWILIO_20003' });
  assert.equal(c.ready!(), true, 'refusals say the provider is there');
});

test('temporary failures: 429 (with Retry-After), 5xx, a hanging provider, a cut-off or non-JSON reply are retries, never a crash', async () => {
  const f = await fake();
  const c = carrier(f, { timeoutMs: 300, downAfterFailures: 100 });
  f.answer = () => ({ status: 429, json: { code: 20429, message: 'Too Many Requests' }, headers: { 'retry-after': '2' } });
  assert.deepEqual(await c.submit(sms()), { kind: 'retry', errorCode: 'HTTP_429', afterMs: 2000 });
  assert.equal(c.ready!(), false, 'not ready while the provider asks us to wait');
  assert.equal(c.status().state, 'throttled');
  const paused = await c.submit(sms());
  assert.equal(paused.kind, 'retry', 'a submit during a long pause is not sent');
  assert.equal(f.submits.length, 1);

  const d = await fake();
  const c2 = carrier(d, { timeoutMs: 300, downAfterFailures: 100 });
  const cases: [FakeAnswer, string][] = [
    [{ status: 429, json: { code: 20429 } }, 'HTTP_429'],
    [{ status: 500, json: { code: 20500, message: 'Internal Server Error' } }, 'HTTP_500'],
    [{ status: 503, body: 'Service Unavailable' }, 'HTTP_503'],
    ['hang', 'HTTP_TIMEOUT'],
    ['destroy', 'HTTP_CONNECTION_FAILED'],
    ['cut', 'HTTP_CONNECTION_FAILED'],
    [{ status: 201, body: 'this is not JSON' }, 'HTTP_BAD_REPLY'],
    [{ status: 200, json: { status: 'queued' } }, 'HTTP_BAD_REPLY'],
    [{ status: 302, body: '', headers: { location: 'http://169.254.169.254/' } }, 'HTTP_302'],
  ];
  for (const [answer, code] of cases) {
    d.answer = () => answer;
    // A 429 without Retry-After pauses a second; let the pause pass before the next case.
    await until(() => c2.ready!(), 'the pause to end', 10_000);
    const started = Date.now();
    const r = await c2.submit(sms());
    assert.deepEqual(r, { kind: 'retry', errorCode: code }, JSON.stringify(answer));
    if (answer === 'hang') assert.ok(Date.now() - started < 2000, 'the timeout bounds a hanging provider');
  }
  assert.equal(c2.stats().timeouts, 1);
  // Retry-After as an HTTP date.
  d.answer = () => ({ status: 429, body: '', headers: { 'retry-after': new Date(Date.now() + 60_000).toUTCString() } });
  const r = await c2.submit(sms());
  assert.ok(r.kind === 'retry' && r.afterMs !== undefined && r.afterMs > 55_000 && r.afterMs <= 60_000, JSON.stringify(r));
});

test('readiness: an outage makes it not ready after 3 failures in a row; a probe brings it back; no submit is spent meanwhile', async () => {
  const port = await freePort();
  const f = await fake({ port });
  const c = carrier(f, { timeoutMs: 500 });
  await c.start({ receipt: async () => {}, inbound: async () => {} });
  await until(() => c.ready!(), 'the first probe');
  assert.equal(f.probes, 1);
  assert.deepEqual(await c.submit(sms()), { kind: 'accepted', carrierMessageId: f.submits[0]!.sid });

  await f.goDown();
  for (let i = 1; i <= 3; i++) {
    assert.equal(c.ready!(), true, `still ready after ${i - 1} failures`);
    assert.deepEqual(await c.submit(sms()), { kind: 'retry', errorCode: 'HTTP_CONNECTION_FAILED' });
  }
  assert.equal(c.ready!(), false, 'not ready after 3 connection failures in a row');
  assert.deepEqual(c.status(), { state: 'unreachable', endpoint: f.url, lastError: 'HTTP_CONNECTION_FAILED' });
  const probesBefore = f.probes;
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(c.ready!(), false, 'probes fail while it is down');

  await f.comeBack();
  await until(() => c.ready!(), 'a probe to find it again');
  assert.ok(f.probes > probesBefore);
  assert.equal(c.status().state, 'ready');
  assert.equal(f.submits.length, 1, 'nothing reached the provider during the outage');
  assert.equal((await c.submit(sms())).kind, 'accepted');
});

test('readiness: 5xx in a row also make it unreachable; a provider unreachable at start stays not ready until reached', async () => {
  const f = await fake();
  const c = carrier(f);
  f.answer = () => ({ status: 503, body: 'down for maintenance' });
  f.probeAnswer = () => ({ status: 503, body: 'down for maintenance' });
  for (let i = 0; i < 3; i++) await c.submit(sms());
  assert.equal(c.ready!(), false);
  f.probeAnswer = () => ({ status: 401, json: { code: 20003 } });
  await until(() => c.ready!(), 'any answer below 500 to a probe');

  const port = await freePort();
  const late = carrier({ url: `http://127.0.0.1:${port}`, accountSid: f.accountSid, authToken: f.authToken });
  await late.start({ receipt: async () => {}, inbound: async () => {} });
  await until(() => late.status().state === 'unreachable', 'the first probe to fail');
  assert.equal(late.ready!(), false);
  const g = await fake({ port, accountSid: f.accountSid, authToken: f.authToken });
  await until(() => late.ready!(), 'the provider to come up');
  assert.ok(g.probes >= 1);
});

test('window: at most `window` submits await their answer; rate: at most `rate` per second', async () => {
  const f = await fake();
  const c = carrier(f, { window: 3, rate: 10_000 });
  const held: (() => void)[] = [];
  f.answer = () => new Promise((r) => held.push(() => r('default')));
  const all = Promise.all(Array.from({ length: 10 }, (_, i) => c.submit(sms({ id: i + 1 }))));
  await until(() => held.length === 3, 'three submits in flight');
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(f.submits.length, 3, 'the fourth waits for a free slot');
  while (f.submits.length < 10 || held.length > 0) {
    held.shift()?.();
    await new Promise((r) => setTimeout(r, 2));
  }
  assert.ok((await all).every((r) => r.kind === 'accepted'));
  assert.equal(f.inFlight.max, 3);

  const g = await fake();
  const slow = carrier(g, { rate: 20, window: 10 });
  const started = performance.now();
  await Promise.all(Array.from({ length: 11 }, () => slow.submit(sms())));
  const elapsed = performance.now() - started;
  // 20/s with one token of burst: the 11th submit leaves 500 ms after the first.
  assert.ok(elapsed >= 450, `11 submits at 20/s took ${elapsed.toFixed(0)} ms`);
});

test('SSRF guard: a provider on a loopback address is refused unless allowPrivate; never reached', async () => {
  const f = await fake();
  const guarded = carrier(f, { allowPrivate: false });
  assert.deepEqual(await guarded.submit(sms()), { kind: 'retry', errorCode: 'HTTP_ADDRESS_NOT_ALLOWED' });
  const byName = carrier({ ...f, url: `http://localhost:${f.port}` }, { allowPrivate: false });
  assert.deepEqual(await byName.submit(sms()), { kind: 'retry', errorCode: 'HTTP_ADDRESS_NOT_ALLOWED' }, 'a name resolving to loopback');
  assert.equal(f.submits.length, 0);
});

test('options: bad settings are refused without ever naming the token', () => {
  const base = {
    name: 'tw',
    baseUrl: 'https://api.twilio.com',
    accountSid: 'AC1',
    authToken: 'sekret-token-value',
    publicUrl: PUBLIC_URL,
    rate: 10,
    window: 10,
    timeoutMs: 1000,
  };
  for (const bad of [
    { name: 'Bad Name' },
    { baseUrl: 'ftp://x' },
    { baseUrl: 'https://u:sekret-token-value@api.twilio.com' },
    { publicUrl: 'not a url' },
    { accountSid: '' },
    { authToken: '' },
    { rate: 0 },
    { window: 0 },
    { timeoutMs: -1 },
  ]) {
    assert.throws(
      () => createTwilioCarrier({ ...base, ...bad }),
      (err: Error) => !err.message.includes('sekret-token-value'),
      JSON.stringify(bad),
    );
  }
  const c = createTwilioCarrier({ ...base, baseUrl: 'https://example.signalwire.com/api/laml/', publicUrl: 'https://sms.example.com/' });
  assert.equal(c.statusCallbackUrl, 'https://sms.example.com/v1/carriers/tw/status');
  assert.equal(c.inboundCallbackUrl, 'https://sms.example.com/v1/carriers/tw/inbound');
  assert.equal(c.mediaUrlBase, 'https://sms.example.com/v1/carriers/tw/media');
  assert.equal(c.status().endpoint, 'https://example.signalwire.com');
});

test('callbacks signed by the official twilio package: receipts and inbound reach the sink; a bad signature changes nothing', async () => {
  const token = 'callback-token-0123456789';
  const c = carrier({ url: 'http://127.0.0.1:9', accountSid: 'AC1', authToken: token });
  const receipts: Receipt[] = [];
  const inbound: InboundText[] = [];
  await c.start({
    receipt: (r) => {
      receipts.push(r);
      return Promise.resolve();
    },
    inbound: (t) => {
      inbound.push(t);
      return Promise.resolve();
    },
  });
  const sign = (url: string, params: Record<string, string | string[]>) => twilio.getExpectedTwilioSignature(token, url, params);

  const delivered = { MessageSid: 'SM1', MessageStatus: 'delivered', AccountSid: 'AC1', SmsSid: 'SM1', ApiVersion: '2010-04-01' };
  assert.deepEqual(await c.handleStatusCallback(delivered, sign(c.statusCallbackUrl, delivered)), { kind: 'applied' });
  const undelivered = { MessageSid: 'SM2', MessageStatus: 'undelivered', ErrorCode: '30003' };
  assert.deepEqual(await c.handleStatusCallback(undelivered, sign(c.statusCallbackUrl, undelivered)), { kind: 'applied' });
  const failed = { MessageSid: 'SM3', MessageStatus: 'failed' };
  assert.deepEqual(await c.handleStatusCallback(failed, sign(c.statusCallbackUrl, failed)), { kind: 'applied' });
  const sent = { MessageSid: 'SM4', MessageStatus: 'sent' };
  assert.deepEqual(await c.handleStatusCallback(sent, sign(c.statusCallbackUrl, sent)), { kind: 'ignored' });
  assert.deepEqual(receipts, [
    { carrierMessageId: 'SM1', status: 'delivered', errorCode: '' },
    { carrierMessageId: 'SM2', status: 'undelivered', errorCode: 'TWILIO_30003' },
    { carrierMessageId: 'SM3', status: 'undelivered', errorCode: 'UNDELIV' },
  ]);

  // Wrong or missing signatures, a signature for the other callback's URL, a tampered field: forbidden, nothing reaches the sink.
  assert.deepEqual(await c.handleStatusCallback(delivered, undefined), { kind: 'forbidden' });
  assert.deepEqual(await c.handleStatusCallback(delivered, 'AAAAAAAAAAAAAAAAAAAAAAAAAAA='), { kind: 'forbidden' });
  assert.deepEqual(await c.handleStatusCallback(delivered, sign(c.inboundCallbackUrl, delivered)), { kind: 'forbidden' });
  assert.deepEqual(await c.handleStatusCallback({ ...delivered, MessageStatus: 'undelivered' }, sign(c.statusCallbackUrl, delivered)), {
    kind: 'forbidden',
  });
  assert.deepEqual(
    await c.handleStatusCallback(delivered, twilio.getExpectedTwilioSignature('another-token', c.statusCallbackUrl, delivered)),
    { kind: 'forbidden' },
  );
  assert.equal(receipts.length, 3);
  const noSid = { MessageStatus: 'delivered' };
  assert.equal((await c.handleStatusCallback(noSid, sign(c.statusCallbackUrl, noSid))).kind, 'malformed');

  const text = { MessageSid: 'SMin1', From: '+447700900123', To: '+15550100001', Body: 'STOP', NumMedia: '0', AccountSid: 'AC1' };
  assert.deepEqual(await c.handleInboundCallback(text, sign(c.inboundCallbackUrl, text)), { kind: 'applied' });
  assert.deepEqual(inbound, [{ from: '447700900123', to: '15550100001', text: 'STOP', carrierMessageId: 'SMin1' }]);
  assert.deepEqual(await c.handleInboundCallback(text, sign(c.statusCallbackUrl, text)), { kind: 'forbidden' });
  assert.equal(inbound.length, 1);
  assert.equal(c.stats().forbiddenCallbacks, 6);
});
