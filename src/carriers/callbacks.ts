/**
 * The callbacks a Twilio-compatible provider makes to msgsvc (docs/API.md "Carriers over HTTP"),
 * read from their form bodies. Pure functions: no I/O, no clock; nothing here throws on input.
 *
 * - Status callback (`POST {PUBLIC_URL}/v1/carriers/{name}/status`): `MessageSid`,
 *   `MessageStatus`, optional `ErrorCode`. `delivered` → Delivered; `undelivered` and `failed` →
 *   Undelivered with ErrorCode `TWILIO_{ErrorCode}` (`UNDELIV` without one); any other status
 *   (queued, sending, sent, accepted, scheduled, read, …) changes nothing.
 * - Inbound (`POST {PUBLIC_URL}/v1/carriers/{name}/inbound`): `MessageSid`, `From`, `To`, `Body`
 *   (other fields ignored); numbers as digits.
 */
import type { Receipt } from '../dispatch/carrier.ts';
import type { TwilioParams } from './twilio-signature.ts';

/** The body of the reply to an inbound callback (an empty TwiML response: replies go out as messages). */
export const INBOUND_REPLY_BODY = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>';
/** The Content-Type of the reply to an inbound callback. */
export const INBOUND_REPLY_CONTENT_TYPE = 'text/xml';
/** Undelivered without a provider error code (as SMPP's receipts say it). */
export const UNDELIVERED_WITHOUT_CODE = 'UNDELIV';

/** A form field's single value: the first when repeated, undefined when absent. */
function field(params: TwilioParams, name: string): string | undefined {
  if (!Object.prototype.hasOwnProperty.call(params, name)) return undefined;
  const v = params[name];
  if (typeof v === 'string') return v;
  return Array.isArray(v) && typeof v[0] === 'string' ? v[0] : undefined;
}

/** One percent-decoded part of a form body (`+` is a space); undefined when the escapes are not valid UTF-8. */
function decodeFormPart(s: string): string | undefined {
  try {
    return decodeURIComponent(s.replaceAll('+', ' '));
  } catch {
    return undefined;
  }
}

/**
 * Parses an `application/x-www-form-urlencoded` body strictly: `name=value` pairs joined by `&`,
 * `+` for a space, `%XX` escapes that must decode to valid UTF-8. A repeated name keeps every
 * value, in order (an array); a single one is a string. Empty pairs (`a=1&&b=2`) are skipped.
 * @returns the fields (a null-prototype object), or 'malformed' for a bad escape or a pair with
 *   an empty name. Never throws.
 */
export function parseFormBody(body: string | Buffer): Record<string, string | string[]> | 'malformed' {
  let text: string;
  try {
    text = typeof body === 'string' ? body : new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    return 'malformed';
  }
  const out: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  if (text === '') return out;
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = decodeFormPart(eq === -1 ? pair : pair.slice(0, eq));
    const value = decodeFormPart(eq === -1 ? '' : pair.slice(eq + 1));
    if (name === undefined || value === undefined || name === '') return 'malformed';
    const prev = out[name];
    if (prev === undefined) out[name] = value;
    else if (typeof prev === 'string') out[name] = [prev, value];
    else prev.push(value);
  }
  return out;
}

/** What a status callback asks for. */
export type StatusCallback =
  /** Apply this receipt (unknown ids are the sink's business: ignored there). */
  | { readonly kind: 'receipt'; readonly receipt: Receipt }
  /** A status that changes nothing (queued, sent, …): answer 200. */
  | { readonly kind: 'ignore'; readonly status: string }
  /** `MessageSid` or `MessageStatus` missing or empty: answer 400. */
  | { readonly kind: 'malformed'; readonly reason: string };

/** Provider error codes are numbers (30003); anything else is kept out of ErrorCode. */
const ERROR_CODE = /^[0-9A-Za-z_-]{1,32}$/;

/**
 * Reads a status callback's fields (already parsed and signature-checked).
 * `delivered` → receipt Delivered (errorCode ''); `undelivered` / `failed` → Undelivered with
 * `TWILIO_{ErrorCode}` (`UNDELIV` when ErrorCode is absent, empty or not a plain code); any
 * other MessageStatus → ignore. Statuses are compared case-insensitively.
 */
export function parseStatusCallback(params: TwilioParams): StatusCallback {
  const sid = field(params, 'MessageSid')?.trim();
  const status = field(params, 'MessageStatus')?.trim().toLowerCase();
  if (!sid) return { kind: 'malformed', reason: 'MessageSid is missing' };
  if (!status) return { kind: 'malformed', reason: 'MessageStatus is missing' };
  if (status === 'delivered') return { kind: 'receipt', receipt: { carrierMessageId: sid, status: 'delivered', errorCode: '' } };
  if (status === 'undelivered' || status === 'failed') {
    const code = field(params, 'ErrorCode')?.trim() ?? '';
    const errorCode = ERROR_CODE.test(code) ? `TWILIO_${code}` : UNDELIVERED_WITHOUT_CODE;
    return { kind: 'receipt', receipt: { carrierMessageId: sid, status: 'undelivered', errorCode } };
  }
  return { kind: 'ignore', status };
}

/** An inbound text as the provider posted it. */
export interface InboundCallback {
  /** The provider's id of the inbound message: a repeat with the same id runs API.md §11.5 once. */
  readonly messageSid: string;
  /** Sender digits (E.164 without `+`, or a short code). */
  readonly from: string;
  /** The account number it was sent to, digits. */
  readonly to: string;
  /** `Body` ('' when absent, e.g. an MMS with media only). */
  readonly text: string;
}

/** `+` and 1 to 15 digits, or digits alone: the phone numbers msgsvc takes. */
const NUMBER = /^\+?([0-9]{1,15})$/;

/**
 * Reads an inbound callback's fields (already parsed and signature-checked): `MessageSid`, `From`
 * and `To` required (numbers as `+digits` or digits), `Body` optional; other fields ignored.
 * @returns the inbound text, or `{ kind: 'malformed', reason }` (answer 400). Never throws.
 */
export function parseInboundCallback(
  params: TwilioParams,
): ({ readonly kind: 'inbound' } & InboundCallback) | { readonly kind: 'malformed'; readonly reason: string } {
  const messageSid = field(params, 'MessageSid')?.trim();
  if (!messageSid) return { kind: 'malformed', reason: 'MessageSid is missing' };
  const from = NUMBER.exec(field(params, 'From')?.trim() ?? '');
  if (!from) return { kind: 'malformed', reason: 'From is not a phone number' };
  const to = NUMBER.exec(field(params, 'To')?.trim() ?? '');
  if (!to) return { kind: 'malformed', reason: 'To is not a phone number' };
  return { kind: 'inbound', messageSid, from: from[1]!, to: to[1]!, text: field(params, 'Body') ?? '' };
}
