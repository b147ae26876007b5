/**
 * The events an Android phone running "SMS Gateway for Android" (capcom6) pushes to msgsvc, and
 * how they are authenticated. Pure: no I/O, no clock of its own; bad input never throws.
 *
 * What the app sends (checked against the app's source and docs, app v1.58.0 to v1.68.0; signing
 * exists since v1.33.0, `sender`/`recipient` since v1.54.0):
 * - a POST of JSON `{ "id", "webhookId", "event", "deviceId", "payload" }`. `id` is made once
 *   per event and kept by every retry of it (the app retries any non-2xx answer after 10 s,
 *   20 s, 40 s, … 14 times by default), so it is the event's identity.
 * - `payload` by event: `sms:sent` `{ messageId, sender, recipient, phoneNumber, simNumber,
 *   partsCount, sentAt }`; `sms:delivered` `{ messageId, …, deliveredAt }`; `sms:failed`
 *   `{ messageId, …, failedAt, reason }`; `sms:received` `{ messageId, message, sender,
 *   recipient (the phone's own number, or null when Android does not tell it), phoneNumber
 *   (= sender, deprecated), simNumber, receivedAt }`. Times are ISO 8601 with the device's offset.
 *   The `messageId` of `sms:received` is a hash of the content, not unique (the app's docs say so).
 * - headers `X-Timestamp` (Unix seconds, at the moment of this attempt) and `X-Signature`:
 *   lower-case hex of HMAC-SHA256, keyed with the app's webhook signing key (UTF-8 bytes of the
 *   string shown in Settings → Webhooks → Signing Key), over the raw body followed by the
 *   timestamp's decimal text. The app's docs advise a ±5 minute window against replays.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { InboundText, Receipt } from '../dispatch/carrier.ts';

/** The app's signature header (HTTP headers are case-insensitive; Node gives them lower-case). */
export const ANDROID_SIGNATURE_HEADER = 'x-signature';
/** The app's timestamp header. */
export const ANDROID_TIMESTAMP_HEADER = 'x-timestamp';
/** Accepted distance between X-Timestamp and now, seconds (the app's docs: ±5 minutes). */
export const ANDROID_EVENT_TOLERANCE_SECONDS = 300;
/** Longest ErrorCode kept from an `sms:failed` reason (docs/API.md "Several carriers and routing"). */
export const ANDROID_REASON_MAX = 64;

/** Request headers as Node's IncomingMessage (or Fastify) gives them. */
export type AndroidEventHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

/** The single value of a header, case-insensitively; undefined when absent or repeated. */
function header(headers: AndroidEventHeaders, name: string): string | undefined {
  let found: string | undefined;
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() !== name) continue;
    if (typeof v !== 'string' || found !== undefined) return undefined;
    found = v;
  }
  return found;
}

/**
 * Whether an event really comes from the phone: `X-Signature` is the HMAC-SHA256 (hex) of
 * `rawBody` followed by `X-Timestamp`, keyed with `signingKey`, and `X-Timestamp` is within
 * `toleranceSeconds` of `nowSeconds` either way (a replay of an old event is refused).
 * Compared in constant time. Never throws: a missing, repeated or malformed header, an empty key
 * or body of the wrong type answers false.
 * @param signingKey the app's webhook signing key (carrier URL parameter `key`).
 * @param rawBody the request body exactly as received (bytes, before any JSON parsing).
 * @param nowSeconds Unix seconds now (injected: tests move time).
 */
export function verifyAndroidEvent(
  signingKey: string,
  rawBody: Buffer | string,
  headers: AndroidEventHeaders,
  nowSeconds: number,
  toleranceSeconds: number = ANDROID_EVENT_TOLERANCE_SECONDS,
): boolean {
  try {
    if (typeof signingKey !== 'string' || signingKey === '') return false;
    if (typeof rawBody !== 'string' && !Buffer.isBuffer(rawBody)) return false;
    const timestamp = header(headers, ANDROID_TIMESTAMP_HEADER);
    const signature = header(headers, ANDROID_SIGNATURE_HEADER);
    if (timestamp === undefined || signature === undefined) return false;
    if (!/^[0-9]{1,12}$/.test(timestamp) || !/^[0-9a-fA-F]{64}$/.test(signature)) return false;
    if (!Number.isFinite(nowSeconds) || Math.abs(nowSeconds - Number(timestamp)) > toleranceSeconds) return false;
    const expected = createHmac('sha256', Buffer.from(signingKey, 'utf8')).update(rawBody).update(timestamp, 'utf8').digest();
    return timingSafeEqual(expected, Buffer.from(signature, 'hex'));
  } catch {
    return false;
  }
}

/** What an event means to msgsvc. */
export type AndroidEvent =
  /** `sms:delivered` (Delivered) or `sms:failed` (Undelivered, `errorCode` the reason). */
  | {
      readonly kind: 'receipt';
      /** The message id on the phone: the one submit sent and got back (android.ts). */
      readonly carrierMessageId: string;
      readonly status: 'delivered' | 'undelivered';
      /** '' for Delivered; the app's reason (at most 64 characters, `UNDELIV` when empty) for Undelivered. */
      readonly errorCode: string;
      /** The event's `id` (the same on every retry of it). */
      readonly eventId: string;
      /** When it happened on the phone (epoch ms), when the payload says so. */
      readonly occurredAtMs?: number;
    }
  /** `sms:received`: an inbound text (docs/API.md §11.5). */
  | {
      readonly kind: 'inbound';
      /** The sender's digits. */
      readonly from: string;
      /** The phone's own number as the SIM reports it (digits), when it does; see android.ts for the To msgsvc uses. */
      readonly to?: string;
      readonly text: string;
      /** The event's `id`: a retry of the same event carries the same one (drop duplicates by it). */
      readonly eventId: string;
      readonly occurredAtMs?: number;
    }
  /** Nothing to do: `sms:sent` (the message is already Sent since the phone accepted it), other events, or a payload that is not one of the app's. */
  | { readonly kind: 'ignore'; readonly reason: string };

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function time(v: unknown): number | undefined {
  if (typeof v !== 'string') return undefined;
  const ms = Date.parse(v);
  return Number.isFinite(ms) ? ms : undefined;
}

/** A failure reason as an ErrorCode: control characters out, trimmed, at most 64 characters (code points). */
export function androidReasonCode(reason: unknown): string {
  const clean = (typeof reason === 'string' ? reason : '').replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  if (clean === '') return 'UNDELIV';
  const chars = Array.from(clean);
  return chars.length <= ANDROID_REASON_MAX ? clean : chars.slice(0, ANDROID_REASON_MAX).join('').trimEnd();
}

/**
 * Reads an event body (the parsed JSON, or its raw text/bytes) into what it means to msgsvc:
 * - `sms:delivered` → receipt, Delivered; `sms:failed` → receipt, Undelivered, ErrorCode the
 *   `reason` (at most 64 characters; `UNDELIV` when none);
 * - `sms:received` → inbound: `from` the digits of `sender` (`phoneNumber` before app v1.54.0),
 *   `to` the digits of `recipient` when present, `text` the `message`, `eventId` the event `id`;
 *   a sender without digits (an alphanumeric sender id) cannot be answered and is ignored;
 * - `sms:sent` and every other event (`system:ping`, `sms:data-received`, `mms:*`, …) → ignore:
 *   a message is Sent from the moment the phone accepted it, so `sms:sent` changes nothing.
 * Anything malformed → ignore with a reason (never throws).
 */
export function parseAndroidEvent(input: unknown): AndroidEvent {
  let body = input;
  if (typeof body === 'string' || Buffer.isBuffer(body)) {
    try {
      body = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
    } catch {
      return { kind: 'ignore', reason: 'body is not JSON' };
    }
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { kind: 'ignore', reason: 'body is not an object' };
  const b = body as Record<string, unknown>;
  const event = str(b['event']);
  const eventId = str(b['id']) ?? '';
  const p = b['payload'];
  if (event === undefined) return { kind: 'ignore', reason: 'no event' };
  if (event !== 'sms:delivered' && event !== 'sms:failed' && event !== 'sms:received')
    return { kind: 'ignore', reason: `event ${event.slice(0, 32)}` };
  if (typeof p !== 'object' || p === null || Array.isArray(p)) return { kind: 'ignore', reason: 'no payload' };
  const payload = p as Record<string, unknown>;
  if (event === 'sms:received') {
    const text = str(payload['message']);
    const sender = str(payload['sender']) ?? str(payload['phoneNumber']);
    if (text === undefined || sender === undefined || eventId === '') return { kind: 'ignore', reason: 'malformed sms:received' };
    const from = sender.replace(/\D/g, '');
    if (from === '') return { kind: 'ignore', reason: 'sender has no digits' };
    const to = (str(payload['recipient']) ?? '').replace(/\D/g, '');
    const at = time(payload['receivedAt']);
    return { kind: 'inbound', from, ...(to ? { to } : {}), text, eventId, ...(at !== undefined ? { occurredAtMs: at } : {}) };
  }
  const carrierMessageId = str(payload['messageId']);
  if (!carrierMessageId) return { kind: 'ignore', reason: `malformed ${event}` };
  const delivered = event === 'sms:delivered';
  const at = time(delivered ? payload['deliveredAt'] : payload['failedAt']);
  return {
    kind: 'receipt',
    carrierMessageId,
    status: delivered ? 'delivered' : 'undelivered',
    errorCode: delivered ? '' : androidReasonCode(payload['reason']),
    eventId,
    ...(at !== undefined ? { occurredAtMs: at } : {}),
  };
}

/** What the events route does with one request (`POST {PUBLIC_URL}/v1/carriers/{name}/events`). */
export type AndroidEventAction =
  /** Not signed as the app signs, or too old/new: answer 403, change nothing. */
  | { readonly kind: 'forbidden' }
  /** Apply the receipt (an unknown id is ignored by the receipt's handler), then answer 200. */
  | { readonly kind: 'receipt'; readonly receipt: Receipt; readonly occurredAtMs?: number }
  /** Run the inbound rules (docs/API.md §11.5) once per `inbound.carrierMessageId` (the event id), then answer 200. */
  | { readonly kind: 'inbound'; readonly inbound: InboundText }
  /** Nothing to do: answer 200 (a non-2xx would only make the phone send it again). */
  | { readonly kind: 'ignore'; readonly reason: string };

/**
 * One events request, start to end, for the HTTP route: checks the signature
 * (verifyAndroidEvent), then reads the body (parseAndroidEvent). An inbound text's To is the
 * carrier's configured `number` (android.ts says why), its `carrierMessageId` the
 * event id. Never throws.
 * @param carrier the carrier's `signingKey` and `number` (digits), from its URL.
 * @param nowSeconds Unix seconds now.
 */
export function androidEventAction(
  carrier: { readonly signingKey: string; readonly number: string },
  rawBody: Buffer | string,
  headers: AndroidEventHeaders,
  nowSeconds: number,
): AndroidEventAction {
  if (!verifyAndroidEvent(carrier.signingKey, rawBody, headers, nowSeconds)) return { kind: 'forbidden' };
  const event = parseAndroidEvent(rawBody);
  switch (event.kind) {
    case 'ignore':
      return event;
    case 'receipt':
      return {
        kind: 'receipt',
        receipt: { carrierMessageId: event.carrierMessageId, status: event.status, errorCode: event.errorCode },
        ...(event.occurredAtMs !== undefined ? { occurredAtMs: event.occurredAtMs } : {}),
      };
    case 'inbound':
      return { kind: 'inbound', inbound: { from: event.from, to: carrier.number, text: event.text, carrierMessageId: event.eventId } };
  }
}
