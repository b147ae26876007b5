/**
 * The Twilio-compatible carrier's wire, checked by Twilio's own description of its API: the
 * OpenAPI document that @twilio/cli-core ships, served by Prism (`prism mock`, request validation
 * on, `--errors`) as the provider. Prism answers a request the document accepts with the
 * document's 201 example, and one it rejects with a 4xx (422 for a body or path violation, 401
 * without Basic credentials), which the carrier turns into a permanent failure: so a submit that
 * Twilio's document rejects fails these tests (shown below with deliberately broken requests).
 *
 * Prism 5.14 reads a repeated form field only with an explicit `encoding` and then validates its
 * last value only (test/helpers/prism.ts): every MediaUrl is also validated here with Ajv against
 * the same operation's schema.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { createTwilioCarrier, twilioSubmitForm, type TwilioCarrierOptions } from '../../src/carriers/twilio.ts';
import type { OutboundMessage } from '../../src/dispatch/carrier.ts';
import { signMediaLink } from '../../src/lib/signed-link.ts';
import { MESSAGES_PATH, startPrism, twilioApiDocument, twilioDocumentForPrism, type Prism } from '../helpers/prism.ts';
import { readForm } from '../helpers/fake-twilio.ts';

const SID = 'AC0123456789abcdef0123456789abcdef';
const TOKEN = 'prism-token-0123456789';
const PUBLIC_URL = 'https://msgsvc.example.com';
const LINK_SECRET = 'media-link-secret-0123456789abcdef';

let prism: Prism;
before(async () => {
  prism = await startPrism(twilioDocumentForPrism());
});
after(async () => {
  await prism?.close();
});

function carrier(o: Partial<TwilioCarrierOptions> = {}) {
  return createTwilioCarrier({
    name: 'twilio',
    baseUrl: prism.url,
    accountSid: SID,
    authToken: TOKEN,
    publicUrl: PUBLIC_URL,
    rate: 1000,
    window: 4,
    timeoutMs: 10_000,
    allowPrivate: true,
    mediaUrls: (m) =>
      (m.mediaIds ?? []).map(
        (mediaId) =>
          `${PUBLIC_URL}/v1/carriers/twilio/media?${signMediaLink(LINK_SECRET, { carrier: 'twilio', accountId: m.accountId, mediaId }, 1_900_000_000)}`,
      ),
    ...o,
  });
}

function sms(o: Partial<OutboundMessage> = {}): OutboundMessage {
  return {
    id: 1,
    accountId: 7,
    from: '15550100001',
    to: '447700900123',
    text: 'Hello from msgsvc',
    typeId: 1,
    segments: 1,
    attempt: 1,
    ...o,
  };
}

/** The Messages create operation's form schema, compiled with Ajv (formats: ajv-formats' `uri`; Twilio's `phone-number` as E.164 or a short code). */
function operationValidator() {
  const doc = twilioApiDocument();
  const schema = doc.paths[MESSAGES_PATH]!.post.requestBody.content['application/x-www-form-urlencoded'].schema;
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addFormat('phone-number', /^(\+[1-9][0-9]{1,14}|[0-9]{3,8})$/);
  // The operation's schema refers to the document's components (`#/components/schemas/…`).
  const validate = ajv.compile({ ...schema, components: doc.components });
  const arrays = Object.entries(schema.properties as Record<string, { type?: string }>)
    .filter(([, p]) => p.type === 'array')
    .map(([k]) => k);
  return (raw: string) => {
    const form: Record<string, unknown> = readForm(raw);
    for (const k of arrays) if (typeof form[k] === 'string') form[k] = [form[k]];
    return validate(form) ? [] : validate.errors!;
  };
}

test("Prism: an SMS submit is accepted by Twilio's document (201 → accepted, carrier id = the sid)", async () => {
  const c = carrier();
  try {
    const r = await c.submit(sms());
    assert.equal(r.kind, 'accepted', `Prism refused the submit: ${JSON.stringify(r)}\n${prism.output().slice(-2000)}`);
    assert.match(r.kind === 'accepted' ? r.carrierMessageId : '', /^SM[0-9a-f]{32}$/i);
    const short = await c.submit(sms({ from: '46645', text: 'Short code sender' }));
    assert.equal(short.kind, 'accepted', 'a short code From');
  } finally {
    await c.stop();
  }
});

test('Prism: an MMS with several media links is accepted (one MediaUrl per medium)', async () => {
  const c = carrier();
  try {
    const r = await c.submit(sms({ typeId: 2, text: 'Look at these ✨', mediaIds: [11, 12, 13] }));
    assert.equal(r.kind, 'accepted', `Prism refused the MMS: ${JSON.stringify(r)}\n${prism.output().slice(-2000)}`);
    const pictures = await c.submit(sms({ typeId: 2, text: '', mediaIds: [11] }));
    assert.equal(pictures.kind, 'accepted', 'an MMS of pictures only');
  } finally {
    await c.stop();
  }
});

test('Prism: random messages (unicode texts, long and short numbers) are all accepted', async () => {
  const c = carrier();
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.stringMatching(/^[1-9][0-9]{7,14}$/),
        fc.oneof(fc.stringMatching(/^[1-9][0-9]{7,14}$/), fc.stringMatching(/^[1-9][0-9]{2,7}$/)),
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 160 }),
        fc.array(fc.integer({ min: 1, max: 1_000_000 }), { maxLength: 10 }),
        async (to, from, text, media) => {
          const r = await c.submit(sms({ to, from, text, typeId: media.length > 0 ? 2 : 1, mediaIds: media }));
          assert.equal(r.kind, 'accepted', JSON.stringify({ to, from, text, r }));
        },
      ),
      { numRuns: 40 },
    );
  } finally {
    await c.stop();
  }
});

test("Prism: submits Twilio's document rejects end as permanent failures (so the tests above would fail)", async () => {
  const url = `${prism.url}/2010-04-01/Accounts/${SID}/Messages.json`;
  const auth = `Basic ${Buffer.from(`${SID}:${TOKEN}`).toString('base64')}`;
  const post = (body: string, authorization = auth) =>
    fetch(url, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
      body,
      signal: AbortSignal.timeout(10_000),
    });
  const good = twilioSubmitForm({
    to: '447700900123',
    from: '15550100001',
    body: 'hi',
    statusCallback: `${PUBLIC_URL}/v1/carriers/twilio/status`,
  });
  assert.equal((await post(good)).status, 201, 'the form as the carrier builds it');
  const noTo = new URLSearchParams(good);
  noTo.delete('To');
  const refused = await post(noTo.toString());
  assert.equal(refused.status, 422, 'a submit without To');
  assert.match(await refused.text(), /required property 'To'/);
  assert.equal((await post(good, '')).status, 401, 'a submit without Basic credentials');

  // Through the carrier: a media link that is not a URI, and an account SID the document's path pattern refuses.
  const badMedia = carrier({ mediaUrls: () => ['not a link'] });
  const wrongSid = carrier({ accountSid: 'AC-not-a-valid-sid' });
  try {
    assert.deepEqual(await badMedia.submit(sms({ typeId: 2, mediaIds: [1] })), { kind: 'failed', errorCode: 'HTTP_422' });
    const r = await wrongSid.submit(sms());
    assert.equal(r.kind, 'failed');
    assert.match(r.kind === 'failed' ? r.errorCode : '', /^HTTP_4\d\d$/);
  } finally {
    await badMedia.stop();
    await wrongSid.stop();
  }
});

test('Prism: the readiness probe (GET the account) makes a started carrier ready', async () => {
  const c = carrier();
  assert.equal(c.ready!(), true, 'before start: a plain submitter');
  await c.start({ receipt: async () => {}, inbound: async () => {} });
  try {
    assert.equal(c.status().state, 'starting');
    assert.equal(c.ready!(), false, 'not ready until the provider has answered');
    const deadline = Date.now() + 10_000;
    while (!c.ready!() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.equal(c.status().state, 'ready');
    assert.equal(c.stats().probes, 1);
  } finally {
    await c.stop();
  }
  assert.equal(c.ready!(), false, 'stopped');
});

test("Ajv: every field of every form the carrier builds (each MediaUrl included) matches the operation's schema", () => {
  const validate = operationValidator();
  const statusCallback = `${PUBLIC_URL}/v1/carriers/twilio/status`;
  const media = Array.from(
    { length: 10 },
    (_, i) =>
      `${PUBLIC_URL}/v1/carriers/twilio/media?${signMediaLink(LINK_SECRET, { carrier: 'twilio', accountId: 7, mediaId: i + 1 }, 1_900_000_000)}`,
  );
  for (const f of [
    { to: '447700900123', from: '15550100001', body: 'hi', statusCallback },
    { to: '+15550100002', from: '46645', body: 'from a short code', statusCallback },
    { to: '15550100002', from: '15550100001', body: 'ten pictures', statusCallback, mediaUrls: media },
    { to: '15550100002', from: '15550100001', body: '', statusCallback, mediaUrls: media.slice(0, 1) },
  ]) {
    const raw = twilioSubmitForm(f);
    assert.deepEqual(validate(raw), [], raw);
  }
  // The check itself bites: a MediaUrl that is not a URI in the FIRST place (Prism would only see the last).
  assert.notDeepEqual(
    validate(twilioSubmitForm({ to: '1555', from: '1555', body: '', statusCallback, mediaUrls: ['not a link', media[0]!] })),
    [],
  );
  fc.assert(
    fc.property(
      fc.stringMatching(/^[1-9][0-9]{7,14}$/),
      fc.string({ unit: 'grapheme', maxLength: 200 }),
      fc.integer({ min: 0, max: 10 }),
      (to, body, n) => {
        assert.deepEqual(validate(twilioSubmitForm({ to, from: '15550100001', body, statusCallback, mediaUrls: media.slice(0, n) })), []);
      },
    ),
  );
});
