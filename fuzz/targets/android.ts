/**
 * The events of an Android phone carrier ("SMS Gateway for Android"), read as the route
 * `POST /v1/carriers/{name}/events` reads them (docs/API.md §14.1): `androidEventAction` with the
 * carrier's key and number, the raw body, the request's headers and the clock's seconds, which
 * checks `verifyAndroidEvent` and then reads the body with `parseAndroidEvent` (and
 * `androidReasonCode` for a failure's reason); the route answers 400 to an `ignore` whose body is
 * not a JSON object. Bodies are the app's events (sms:delivered, sms:failed, sms:received,
 * sms:sent, system:ping…) built whole and then broken, signed as the app signs them (hex
 * HMAC-SHA256 of the body followed by X-Timestamp), then one thing changed: the body, the
 * timestamp, the key or the signature, or the headers repeated or re-cased.
 *
 * Oracle: nothing throws; the request is `forbidden` exactly unless X-Timestamp (one header, 1-12
 * digits) is within 300 s of now, X-Signature (one header, 64 hex digits, any case) is the
 * HMAC-SHA256 under the carrier's key of the exact body bytes followed by the timestamp's text, and
 * the key is not empty: so a correctly signed event within the tolerance verifies, and one outside
 * it, or with any change of body, timestamp or signature that changes the signed bytes or the
 * header, does not. A verified event means what the module documents (delivered/failed → a
 * receipt with the messageId, the reason cleaned to at most 64 characters without control
 * characters, `UNDELIV` when empty; received → an inbound text from the sender's digits to the
 * carrier's number with the event id; anything else → ignore), and `ignore` comes with a reason.
 */
import { createHmac } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import {
  ANDROID_EVENT_TOLERANCE_SECONDS,
  ANDROID_REASON_MAX,
  androidEventAction,
  androidReasonCode,
  parseAndroidEvent,
  type AndroidEventAction,
} from '../../src/carriers/android-events.ts';
import { check, type FuzzTarget } from '../target.ts';

type Input = {
  /** The carrier's signing key and number. */
  key: string;
  number: string;
  /** The event, as JSON text (built whole, then maybe broken). */
  body: string;
  /** Raw bytes to send instead, when not empty. */
  raw: Uint8Array;
  /** X-Timestamp's distance from now (seconds), or its text when `timestamp` is set. */
  skew: number;
  timestamp: string;
  /** right, upper (hex in upper case), none, short, garbage. */
  sign: string;
  /** How the headers are sent: lower, mixed (X-Signature), dup-ts, dup-sig, list (an array value). */
  headers: string;
  /** The one change after signing: none, body, timestamp, key, signature, boundary. */
  what: string;
  op: string;
  at: number;
  with: string;
};

const NOW = 1_750_000_000;

// ------------------------------------------------------------------ grammar

const isoTime = fc.oneof(
  fc
    .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true })
    .map((d) => d.toISOString()),
  fc.constantFrom('2024-05-01T12:00:00.000+02:00', '2024-05-01', 'yesterday', '', '2024-13-45T99:99:99Z', '+275760-09-13T00:00:00.000Z'),
);
const digitsLike = fc.oneof(fc.stringMatching(/^\+?[0-9]{6,15}$/), fc.constantFrom('+1 (555) 123-4567', 'MyBank', '', '١٢٣٤', '+', '0'));
const reason = fc.oneof(
  fc.constantFrom(
    'RESULT_ERROR_GENERIC_FAILURE',
    'Generic failure',
    '',
    '   ',
    'a\u0000b\nc\u007fd',
    'x'.repeat(65),
    `${'😀'.repeat(63)} é`,
    '\u0085\u2028',
  ),
  fc.string({ maxLength: 80, unit: 'grapheme' }),
  fc.string({ maxLength: 80, unit: 'binary' }).map((s) => s.toWellFormed()),
);
const anyJson = fc.oneof(fc.constant(null), fc.integer(), fc.string({ maxLength: 6 }), fc.constant([]), fc.constant({}));

const payload = fc.record(
  {
    messageId: fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{1,21}$/), fc.constant(''), anyJson),
    message: fc.oneof(fc.string({ maxLength: 40, unit: 'grapheme' }), anyJson),
    sender: fc.oneof(digitsLike, anyJson),
    recipient: fc.oneof(digitsLike, fc.constant(null)),
    phoneNumber: digitsLike,
    simNumber: fc.oneof(fc.constantFrom(1, 2), fc.constant(null)),
    partsCount: fc.integer({ min: 1, max: 3 }),
    sentAt: isoTime,
    deliveredAt: fc.oneof(isoTime, anyJson),
    failedAt: isoTime,
    receivedAt: fc.oneof(isoTime, anyJson),
    reason: fc.oneof(reason, anyJson),
  },
  { requiredKeys: [] },
);
const eventName = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('sms:delivered', 'sms:failed', 'sms:received') },
  {
    weight: 1,
    arbitrary: fc.constantFrom('sms:sent', 'system:ping', 'sms:data-received', 'mms:received', 'SMS:DELIVERED', '', 'x'.repeat(40)),
  },
);
const event = fc.record(
  {
    id: fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{21}$/), fc.constant(''), anyJson),
    webhookId: fc.string({ maxLength: 8 }),
    event: fc.oneof({ weight: 9, arbitrary: eventName }, { weight: 1, arbitrary: anyJson }),
    deviceId: fc.string({ maxLength: 8 }),
    payload: fc.oneof({ weight: 9, arbitrary: payload }, { weight: 1, arbitrary: anyJson }),
  },
  { requiredKeys: ['event'] },
);
const body = fc.oneof(
  { weight: 10, arbitrary: event.map((e) => JSON.stringify(e)) },
  { weight: 1, arbitrary: event.map((e) => JSON.stringify(e, null, 2)) },
  { weight: 1, arbitrary: event.map((e) => JSON.stringify(e).slice(0, -1)) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('', 'null', '[]', '"x"', '1', '{', '{"event":"sms:received","payload":{}}', '\ufeff{"event":"sms:sent"}'),
  },
);

const inputArb: fc.Arbitrary<Input> = fc.record({
  key: fc.oneof(fc.stringMatching(/^[A-Za-z0-9]{8,32}$/), fc.constantFrom('key', 'é-clé', 'k'.repeat(100))),
  number: fc.constantFrom('15551234567', '447700900123'),
  body,
  raw: fc.oneof(
    { weight: 12, arbitrary: fc.constant(new Uint8Array(0)) },
    { weight: 1, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 40 }) },
  ),
  skew: fc.oneof(fc.constantFrom(0, 0, 0, 1, -1, 299, 300, 301, -300, -301, 86400, -NOW), fc.integer({ min: -1000, max: 1000 })),
  timestamp: fc.oneof(
    { weight: 10, arbitrary: fc.constant('') },
    { weight: 1, arbitrary: fc.constantFrom(`0${NOW}`, `${NOW}.0`, ` ${NOW}`, '-1', '1e9', '9'.repeat(13), `+${NOW}`) },
  ),
  sign: fc.constantFrom('right', 'right', 'right', 'upper', 'none', 'short', 'garbage'),
  headers: fc.constantFrom('lower', 'lower', 'lower', 'mixed', 'dup-ts', 'dup-sig', 'list'),
  what: fc.constantFrom('none', 'none', 'body', 'timestamp', 'key', 'signature', 'boundary'),
  op: fc.constantFrom('replace', 'insert', 'delete', 'append'),
  at: fc.nat({ max: 300 }),
  with: fc.oneof(fc.constantFrom('', '0', '1', ' ', 'a', 'A', '\u0000', 'é', '}'), fc.string({ maxLength: 3 })),
});

// ------------------------------------------------------------------ the model

const hmac = (key: string, data: Buffer, ts: string): string =>
  createHmac('sha256', Buffer.from(key, 'utf8')).update(data).update(ts, 'utf8').digest('hex');

function edit(s: string, op: string, at: number, w: string): string {
  const i = Number.isFinite(at) ? Math.abs(Math.trunc(at)) % (s.length + 1) : 0;
  if (op === 'insert') return s.slice(0, i) + w + s.slice(i);
  if (op === 'delete') return s.slice(0, i) + s.slice(i + 1);
  if (op === 'append') return s + w;
  return s.slice(0, i) + w + s.slice(i + 1);
}

function editBytes(b: Buffer, op: string, at: number, w: string): Buffer {
  const i = Number.isFinite(at) ? Math.abs(Math.trunc(at)) % (b.length + 1) : 0;
  const wb = Buffer.from(w, 'utf8');
  if (op === 'insert') return Buffer.concat([b.subarray(0, i), wb, b.subarray(i)]);
  if (op === 'delete') return Buffer.concat([b.subarray(0, i), b.subarray(i + 1)]);
  if (op === 'append') return Buffer.concat([b, wb]);
  return Buffer.concat([b.subarray(0, i), wb, b.subarray(i + 1)]);
}

type Headers = Record<string, string | string[] | undefined>;

/** The single value of a header named `name` in any case; undefined when absent, repeated or not a string. */
function single(headers: Headers, name: string): string | undefined {
  const values = Object.entries(headers).filter(([k]) => k.toLowerCase() === name);
  return values.length === 1 && typeof values[0]![1] === 'string' ? values[0]![1] : undefined;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const when = (v: unknown): number | undefined => {
  const ms = typeof v === 'string' ? Date.parse(v) : NaN;
  return Number.isFinite(ms) ? ms : undefined;
};
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What a verified body means, as the module documents it (undefined: ignore). */
function meaning(raw: Buffer, number: string): AndroidEventAction | undefined {
  let b: unknown;
  try {
    b = JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!isObject(b) || typeof b.event !== 'string' || !isObject(b.payload)) return undefined;
  const p = b.payload;
  const id = str(b.id) ?? '';
  if (b.event === 'sms:received') {
    const text = str(p.message);
    const sender = str(p.sender) ?? str(p.phoneNumber);
    const from = sender?.replace(/[^0-9]/g, '') ?? '';
    if (text === undefined || id === '' || from === '') return undefined;
    return { kind: 'inbound', inbound: { from, to: number, text, carrierMessageId: id } };
  }
  if (b.event !== 'sms:delivered' && b.event !== 'sms:failed') return undefined;
  const messageId = str(p.messageId);
  if (!messageId) return undefined;
  const delivered = b.event === 'sms:delivered';
  const at = when(delivered ? p.deliveredAt : p.failedAt);
  return {
    kind: 'receipt',
    receipt: {
      carrierMessageId: messageId,
      status: delivered ? 'delivered' : 'undelivered',
      errorCode: delivered ? '' : reasonModel(p.reason),
    },
    ...(at !== undefined ? { occurredAtMs: at } : {}),
  };
}

function reasonModel(reason: unknown): string {
  const chars = Array.from((typeof reason === 'string' ? reason : '').replace(/[\u0000-\u001f\u007f]+/g, ' ').trim());
  if (chars.length === 0) return 'UNDELIV';
  return chars.slice(0, ANDROID_REASON_MAX).join('').trimEnd();
}

export const target: FuzzTarget<Input> = {
  name: 'android',
  oracle:
    'no throw; forbidden unless one X-Timestamp of 1-12 digits within 300 s and one X-Signature = hex HMAC-SHA256(key, body ‖ timestamp) ' +
    '(non-empty key): a signed event in tolerance verifies, any change of body/timestamp/signature/key or a stale one does not; ' +
    'a verified event means what the module documents (receipt, inbound, ignore with a reason); reasons ≤ 64 chars, no controls',
  files: ['src/carriers/android-events.ts'],
  arbitrary: inputArb,
  dictionary: [
    '"event":"sms:delivered"',
    '"event":"sms:failed"',
    '"event":"sms:received"',
    '"payload":{',
    '"messageId":"',
    '"sender":"+1555',
    '"reason":"',
    '"id":"',
    '\\u0000',
    '\\ud800',
    '}',
    '{',
    'null',
    ',',
    '"',
    String(NOW),
  ],
  run(input) {
    const number = input.number;
    const data = input.raw.length > 0 ? Buffer.from(input.raw) : Buffer.from(input.body, 'utf8');
    const skew = Number.isFinite(input.skew) ? Math.trunc(input.skew) : 0;
    let ts = input.timestamp !== '' ? input.timestamp : String(NOW + skew);
    let sent: Buffer = data;
    let signature = hmac(input.key, data, ts);
    if (input.sign === 'upper') signature = signature.toUpperCase();
    else if (input.sign === 'short') signature = signature.slice(0, 63);
    else if (input.sign === 'garbage') signature = input.with;
    let key = input.key;
    // The one change after signing.
    if (input.what === 'body') sent = editBytes(data, input.op, input.at, input.with);
    else if (input.what === 'timestamp') ts = edit(ts, input.op, input.at, input.with);
    else if (input.what === 'key') key = edit(key, input.op, input.at, input.with);
    else if (input.what === 'signature') signature = edit(signature, input.op, input.at, input.with);
    else if (input.what === 'boundary' && /^[0-9]/.test(ts)) {
      // The timestamp's first digit moves to the end of the body: the same signed bytes.
      sent = Buffer.concat([data, Buffer.from(ts[0]!)]);
      ts = ts.slice(1);
    }
    const headers: Headers = {};
    if (input.headers === 'mixed') headers['X-Timestamp'] = ts;
    else headers['x-timestamp'] = input.headers === 'list' ? [ts] : ts;
    if (input.sign !== 'none') headers[input.headers === 'mixed' ? 'X-Signature' : 'x-signature'] = signature;
    if (input.headers === 'dup-ts') headers['X-TIMESTAMP'] = ts;
    if (input.headers === 'dup-sig') headers['X-Signature'] = signature;

    const action = androidEventAction({ signingKey: key, number }, sent, headers, NOW);

    // The signature model.
    const tsText = single(headers, 'x-timestamp');
    const sigText = single(headers, 'x-signature');
    const valid =
      key !== '' &&
      tsText !== undefined &&
      sigText !== undefined &&
      /^[0-9]{1,12}$/.test(tsText) &&
      /^[0-9a-fA-F]{64}$/.test(sigText) &&
      Math.abs(NOW - Number(tsText)) <= ANDROID_EVENT_TOLERANCE_SECONDS &&
      sigText.toLowerCase() === hmac(key, sent, tsText);
    check(
      (action.kind !== 'forbidden') === valid,
      `${valid ? 'refused' : 'accepted'}: what=${input.what} sign=${input.sign} headers=${input.headers} ts=${tsText}`,
    );
    if (
      input.what === 'none' &&
      input.sign === 'right' &&
      input.headers !== 'list' &&
      !input.headers.startsWith('dup') &&
      key !== '' &&
      input.timestamp === ''
    ) {
      check(valid === Math.abs(skew) <= ANDROID_EVENT_TOLERANCE_SECONDS, 'a correctly signed event was judged wrongly by its age');
    }
    if (!valid) return;

    // What it means.
    const expected = meaning(sent, number);
    if (expected === undefined) {
      check(
        action.kind === 'ignore' && typeof action.reason === 'string' && action.reason !== '',
        `expected ignore, got ${JSON.stringify(action)}`,
      );
    } else check(isDeepStrictEqual(action, expected), `${JSON.stringify(action)} ≠ ${JSON.stringify(expected)}`);
    const parsed = parseAndroidEvent(sent);
    if (parsed.kind === 'inbound') {
      check(/^[0-9]+$/.test(parsed.from) && (parsed.to === undefined || /^[0-9]+$/.test(parsed.to)), 'inbound numbers are not digits');
    }
    if (action.kind === 'receipt' && action.receipt.status === 'undelivered') {
      const code = action.receipt.errorCode;
      check(Array.from(code).length <= ANDROID_REASON_MAX && code !== '' && code === code.trim(), `bad ErrorCode ${JSON.stringify(code)}`);
      check(!/[\u0000-\u001f\u007f]/.test(code), `ErrorCode with a control character: ${JSON.stringify(code)}`);
      check(
        code === androidReasonCode((JSON.parse(sent.toString('utf8')) as { payload: { reason?: unknown } }).payload.reason),
        'androidReasonCode disagrees',
      );
    }
  },
};
