/**
 * A Twilio-compatible carrier's callbacks (docs/API.md §14.1), read as the routes
 * `POST /v1/carriers/{name}/status` and `…/inbound` read them: `signedTwilioForm` (the media type,
 * `parseFormBody` on the exact bytes, `verifyTwilioSignature` over
 * `{PUBLIC_URL}/v1/carriers/{name}/{action}`), then `parseStatusCallback` or
 * `parseInboundCallback`. The provider's side signs with `twilioSignature` what it sent, and then
 * one thing is changed: the URL it signed, a field (name or value, one added or dropped), the
 * token, or the signature itself. MSGSVC_PUBLIC_URL goes through `parsePublicUrl` as at start.
 *
 * Oracle:
 * - signedTwilioForm throws only HttpError 415 (a non-empty body that is not a form), 400 (a form
 *   parseFormBody calls malformed) or 403, and returns exactly parseFormBody's fields otherwise;
 * - parseFormBody returns 'malformed' or a null-prototype record of non-empty names to a string or
 *   a list of 2+ strings, equal to what WHATWG URLSearchParams reads from the same text (repeated
 *   names in order); a form built from fields, in any of four encodings, reads back as exactly those
 *   fields; 'malformed' only for bytes that are not UTF-8, a bad %-escape or an empty name;
 * - the signature: twilioSignature equals the official `twilio` package's
 *   getExpectedTwilioSignature, and verifyTwilioSignature accepts a header exactly when it is the
 *   official signature (with the server's token and the fields received) over the route's URL as is,
 *   without its port, or with its scheme's default port. So a correctly signed body verifies, and any
 *   single mutation of URL, fields, token or signature fails unless it leaves the signed string (or
 *   the HMAC key) unchanged, e.g. moving a boundary between a field's name and its value, which
 *   Twilio's algorithm does not see; whatever we accept, the official validateRequest accepts too;
 * - parseStatusCallback and parseInboundCallback never throw and decide as documented.
 */
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import type { FastifyRequest } from 'fastify';
import { getExpectedTwilioSignature, validateRequest } from 'twilio/lib/webhooks/webhooks.js';
import { UNDELIVERED_WITHOUT_CODE, parseFormBody, parseInboundCallback, parseStatusCallback } from '../../src/carriers/callbacks.ts';
import { twilioSignature, verifyTwilioSignature, type TwilioParams } from '../../src/carriers/twilio-signature.ts';
import { parsePublicUrl } from '../../src/lib/carrier-settings.ts';
import { mediaTypeOf } from '../../src/http/plugins/body.ts';
import { carrierUrl, type CarrierOf } from '../../src/http/routes/carriers/common.ts';
import { signedTwilioForm } from '../../src/http/routes/carriers/twilio-form.ts';
import { HttpError } from '../../src/http/wire.ts';
import { check, refusesOnlyWithSync, type FuzzTarget } from '../target.ts';

type Input = {
  /** MSGSVC_PUBLIC_URL as configured. */
  publicUrl: string;
  /** The carrier's name and auth token. */
  name: string;
  token: string;
  action: string;
  /** The form's fields, [name, value], in order (a name may repeat). */
  fields: [string, string][];
  /** How they are written: form, component, lower, minimal. */
  encoding: string;
  /** Text appended to the body (broken forms). */
  extra: string;
  /** A whole other body, when not empty (bytes that need not be UTF-8). */
  raw: Uint8Array;
  contentType: string;
  /** right, none, empty, dup (two headers, as Node joins them), garbage. */
  sign: string;
  /** The provider's one change: none, url, field, token, signature. */
  what: string;
  /** How: replace, insert, delete, upper, add-port, drop-port, other-port, add, drop, swap. */
  op: string;
  at: number;
  with: string;
};

// ------------------------------------------------------------------ grammar

const sid = fc.stringMatching(/^(SM|MM)[0-9a-f]{32}$/);
const status = fc.oneof(
  fc.constantFrom('delivered', 'undelivered', 'failed', 'queued', 'sent', 'sending', 'accepted', 'read', 'receiving', 'received'),
  fc.constantFrom('Delivered', ' DELIVERED ', 'failed\t', '', ' ', 'délivered', 'ınvalid'),
);
const errorCode = fc.constantFrom('30003', '30005', '', ' 30007 ', '0', 'abc_DEF-1', 'x'.repeat(32), 'x'.repeat(33), '3 0', '30003\n', 'é');
const phone = fc.oneof(
  fc.stringMatching(/^\+?[0-9]{1,15}$/),
  fc.constantFrom('+15551234567', '15551234567', ' +447700900123 ', '+1234567890123456', '+', '', 'abc', '+1 555', '55155', '١٢٣'),
);
const text = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ maxLength: 20, unit: 'grapheme' }),
  fc.constantFrom('a&b=c', '100%', 'x+y', 'STOP', '😀', 'é\u0301', '\u2028', ''),
);
const field: fc.Arbitrary<[string, string]> = fc.oneof(
  fc.tuple(fc.constant('MessageSid'), fc.oneof(sid, fc.constantFrom('', ' ', 'SM1'))),
  fc.tuple(fc.constant('SmsSid'), sid),
  fc.tuple(fc.constant('MessageStatus'), status),
  fc.tuple(fc.constant('ErrorCode'), errorCode),
  fc.tuple(fc.constantFrom('From', 'To'), phone),
  fc.tuple(fc.constant('Body'), text),
  fc.tuple(fc.constantFrom('AccountSid', 'ApiVersion', 'NumMedia', 'MediaUrl0', 'SmsStatus'), fc.string({ maxLength: 12 })),
  fc.tuple(fc.constantFrom('', 'a b', 'a.b', 'x[]', '__proto__', 'constructor', 'é', '=', '&'), text),
);
const statusFields = fc
  .tuple(sid, status, fc.option(errorCode), fc.array(field, { maxLength: 3 }))
  .map(([s, st, e, rest]): [string, string][] => [
    ['MessageSid', s],
    ['MessageStatus', st],
    ...(e === null ? [] : [['ErrorCode', e] as [string, string]]),
    ...rest,
  ]);
const inboundFields = fc
  .tuple(sid, phone, phone, text, fc.array(field, { maxLength: 3 }))
  .map(([s, f, t, b, rest]): [string, string][] => [['MessageSid', s], ['From', f], ['To', t], ['Body', b], ...rest]);

const inputArb: fc.Arbitrary<Input> = fc.record({
  publicUrl: fc.oneof(
    fc.constantFrom(
      'https://sms.example.com',
      'https://sms.example.com/msgsvc/',
      'http://127.0.0.1:8080',
      'https://[::1]:8443/x',
      'HTTPS://Sms.Example.COM:443/A%20b',
      'http://sms.example.com:80',
      'https://sms.example.com/caf%C3%A9',
      'https://xn--caf-dma.example/',
      'https://sms.example.com/a?b=c',
      'ftp://x',
    ),
    fc.webUrl({ withQueryParameters: false, withFragments: false }),
  ),
  name: fc.oneof(fc.constantFrom('tw', 'twilio-main', 'a_1'), fc.stringMatching(/^[a-z0-9_-]{1,32}$/)),
  token: fc.oneof(fc.stringMatching(/^[0-9a-f]{32}$/), fc.constantFrom('tw-auth-token-0123456789abcdef', 'é', 'x'.repeat(100))),
  action: fc.constantFrom('status', 'inbound'),
  fields: fc.oneof(statusFields, inboundFields, fc.array(field, { maxLength: 5 })),
  encoding: fc.constantFrom('form', 'component', 'lower', 'minimal'),
  extra: fc.oneof(
    { weight: 8, arbitrary: fc.constant('') },
    {
      weight: 2,
      arbitrary: fc.constantFrom('&', '&&', '&=x', '&a', '&%', '&a=%zz', '&a=%C3', '&%C3%A9=1', '&a=%E2%82', '&=', '&+=1', '&a=%ED%A0%80'),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 10 }).map((s) => `&${s}`) },
  ),
  raw: fc.oneof(
    { weight: 10, arbitrary: fc.constant(new Uint8Array(0)) },
    { weight: 1, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 24 }) },
    { weight: 1, arbitrary: fc.constantFrom(new Uint8Array([0x61, 0x3d, 0xff]), new Uint8Array([0xef, 0xbb, 0xbf, 0x61, 0x3d, 0x31])) },
  ),
  contentType: fc.constantFrom(
    'application/x-www-form-urlencoded',
    'application/x-www-form-urlencoded; charset=utf-8',
    'Application/X-WWW-Form-Urlencoded',
    ' application/x-www-form-urlencoded ;x',
    'application/json',
    'text/plain',
    '',
  ),
  sign: fc.constantFrom('right', 'right', 'right', 'right', 'none', 'empty', 'dup', 'garbage'),
  what: fc.constantFrom('none', 'none', 'url', 'field', 'token', 'signature'),
  op: fc.constantFrom('replace', 'insert', 'delete', 'upper', 'add-port', 'drop-port', 'other-port', 'add', 'drop', 'swap'),
  at: fc.nat({ max: 200 }),
  with: fc.oneof(fc.constantFrom('', 'a', '/', ':', '%', '=', '&', ' ', 'é', '\0', ':443', 'A'), fc.string({ maxLength: 4 })),
});

// ------------------------------------------------------------------ the provider's side

const FORM = 'application/x-www-form-urlencoded';

function encodePart(s: string, encoding: string): string {
  switch (encoding) {
    case 'component':
      return encodeURIComponent(s);
    case 'lower':
      return [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
    case 'minimal':
      // Only what the form's syntax needs; other characters go as their raw UTF-8 bytes.
      return s.replace(/[%&=+]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
    default:
      return new URLSearchParams([['', s]]).toString().slice(1);
  }
}

function group(pairs: readonly (readonly [string, string])[]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  for (const [k, v] of pairs) {
    const prev = out[k];
    out[k] = prev === undefined ? v : typeof prev === 'string' ? [prev, v] : [...prev, v];
  }
  return out;
}

const edit = (s: string, op: string, at: number, w: string): string => {
  const i = Number.isFinite(at) ? Math.abs(Math.trunc(at)) % (s.length + 1) : 0;
  switch (op) {
    case 'insert':
      return s.slice(0, i) + w + s.slice(i);
    case 'delete':
      return s.slice(0, i) + s.slice(i + 1);
    case 'upper':
      return s.toUpperCase();
    default:
      return s.slice(0, i) + w + s.slice(i + 1);
  }
};

/** The authority of an http(s) URL as Twilio's own validator splits it (twilio-node splitUrl). */
function splitUrl(url: string): { scheme: string; userInfo: string; host: string; port: string; rest: string } | undefined {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)/i.exec(url);
  if (!m) return undefined;
  const authority = m[2]!;
  const at = authority.lastIndexOf('@');
  const hostPort = authority.slice(at + 1);
  const colon = hostPort.indexOf(':', hostPort.lastIndexOf(']') + 1);
  return {
    scheme: m[1]!,
    userInfo: authority.slice(0, at + 1),
    host: colon === -1 ? hostPort : hostPort.slice(0, colon),
    port: colon === -1 ? '' : hostPort.slice(colon),
    rest: url.slice(m[0].length),
  };
}

function withPort(url: string, port: string | undefined): string {
  const p = splitUrl(url);
  if (!p) return url;
  const def = p.scheme.toLowerCase() === 'https://' ? ':443' : ':80';
  return p.scheme + p.userInfo + p.host + (port === undefined ? def : port) + p.rest;
}

function mutateUrl(url: string, op: string, at: number, w: string): string {
  if (op === 'add-port') return withPort(url, undefined);
  if (op === 'drop-port') return withPort(url, '');
  if (op === 'other-port') return withPort(url, ':8443');
  return edit(url, op, at, w);
}

function mutateFields(params: TwilioParams, op: string, at: number, w: string): TwilioParams {
  const entries = Object.entries(params).map(([k, v]): [string, string[]] => [k, typeof v === 'string' ? [v] : [...v]]);
  const i = entries.length === 0 ? 0 : (Number.isFinite(at) ? Math.abs(Math.trunc(at)) : 0) % entries.length;
  const e = entries[i];
  if (op === 'add' || !e) entries.push([w === '' ? 'Extra' : w, [w]]);
  else if (op === 'drop') entries.splice(i, 1);
  else if (op === 'swap') {
    // Move a boundary: the name takes the value's first character (or gives its last one back).
    const [name, values] = e;
    const v = values[0] ?? '';
    entries[i] = v !== '' ? [name + v[0]!, [v.slice(1), ...values.slice(1)]] : [name.slice(0, -1), [name.slice(-1)]];
  } else if (op === 'upper' || op === 'insert') e[0] = edit(e[0], op, at, w);
  else e[1][0] = edit(e[1][0] ?? '', op, at, w);
  const out: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  for (const [k, vs] of entries) {
    const prev = out[k];
    const all = [...(prev === undefined ? [] : typeof prev === 'string' ? [prev] : prev), ...vs];
    out[k] = all.length === 1 ? all[0]! : all;
  }
  return out;
}

// ------------------------------------------------------------------ oracles

const show = (r: unknown): string => (r instanceof HttpError ? `HttpError ${r.status}: ${r.message}` : JSON.stringify(r));

function checkForm(body: Buffer, parsed: ReturnType<typeof parseFormBody>, built: [string, string][] | undefined): void {
  let text: string | undefined;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    text = undefined;
  }
  if (built !== undefined) {
    const expected = built.some(([k]) => k === '') ? 'malformed' : group(built);
    check(isDeepStrictEqual(parsed, expected), `form round trip: ${JSON.stringify(built)} → ${JSON.stringify(parsed)}`);
  }
  if (parsed === 'malformed') {
    const pairs = text === undefined ? [] : text.split('&').filter((p) => p !== '');
    const bad = (s: string): boolean => {
      try {
        decodeURIComponent(s.replaceAll('+', ' '));
        return false;
      } catch {
        return true;
      }
    };
    const reason =
      text === undefined ||
      pairs.some((p) => {
        const eq = p.indexOf('=');
        const name = eq === -1 ? p : p.slice(0, eq);
        return bad(name) || bad(eq === -1 ? '' : p.slice(eq + 1)) || decodeURIComponent(name.replaceAll('+', ' ')) === '';
      });
    check(reason, `malformed without a reason: ${JSON.stringify(text)}`);
    return;
  }
  check(text !== undefined, 'bytes that are not UTF-8 were read as a form');
  check(Object.getPrototypeOf(parsed) === null, 'the fields object has a prototype');
  for (const [k, v] of Object.entries(parsed)) {
    check(k !== '', 'a field without a name');
    check(
      typeof v === 'string' || (Array.isArray(v) && v.length >= 2 && v.every((x) => typeof x === 'string')),
      `field ${k} has a bad value`,
    );
  }
  // WHATWG's reading of the same text (it keeps a leading BOM as text, as parseFormBody does).
  const whatwg = group([...new URLSearchParams(`?${text}`)]); // (the constructor drops one leading ?)
  check(isDeepStrictEqual(parsed, whatwg), `parseFormBody ${JSON.stringify(parsed)} ≠ URLSearchParams ${JSON.stringify(whatwg)}`);
}

const first = (p: TwilioParams, name: string): string | undefined => {
  if (!Object.prototype.hasOwnProperty.call(p, name)) return undefined;
  const v = p[name];
  return typeof v === 'string' ? v : v?.[0];
};

function checkCallbacks(params: TwilioParams): void {
  const st = parseStatusCallback(params);
  const sidV = first(params, 'MessageSid')?.trim() ?? '';
  const statusV = first(params, 'MessageStatus')?.trim().toLowerCase() ?? '';
  if (sidV === '' || statusV === '') check(st.kind === 'malformed', `status callback without sid/status: ${JSON.stringify(st)}`);
  else if (statusV === 'delivered') {
    check(
      isDeepStrictEqual(st, { kind: 'receipt', receipt: { carrierMessageId: sidV, status: 'delivered', errorCode: '' } }),
      `delivered: ${JSON.stringify(st)}`,
    );
  } else if (statusV === 'undelivered' || statusV === 'failed') {
    const code = first(params, 'ErrorCode')?.trim() ?? '';
    const plain = code.length >= 1 && code.length <= 32 && [...code].every((c) => /[0-9A-Za-z_-]/.test(c));
    const errorCode = plain ? `TWILIO_${code}` : UNDELIVERED_WITHOUT_CODE;
    check(
      isDeepStrictEqual(st, { kind: 'receipt', receipt: { carrierMessageId: sidV, status: 'undelivered', errorCode } }),
      `undelivered: ${JSON.stringify(st)}`,
    );
  } else check(isDeepStrictEqual(st, { kind: 'ignore', status: statusV }), `other status: ${JSON.stringify(st)}`);

  const inb = parseInboundCallback(params);
  const digits = (v: string | undefined): string | undefined => {
    const t = v?.trim() ?? '';
    const d = t.startsWith('+') ? t.slice(1) : t;
    return d.length >= 1 && d.length <= 15 && [...d].every((c) => c >= '0' && c <= '9') ? d : undefined;
  };
  const from = digits(first(params, 'From'));
  const to = digits(first(params, 'To'));
  if (sidV === '' || from === undefined || to === undefined) check(inb.kind === 'malformed', `inbound accepted: ${JSON.stringify(inb)}`);
  else {
    const expected = { kind: 'inbound', messageSid: sidV, from, to, text: first(params, 'Body') ?? '' };
    check(isDeepStrictEqual(inb, expected), `inbound ${JSON.stringify(inb)} ≠ ${JSON.stringify(expected)}`);
  }
}

export const target: FuzzTarget<Input> = {
  name: 'twilio',
  oracle:
    'only HttpError 415/400/403 from signedTwilioForm; parseFormBody = URLSearchParams or malformed (non-UTF-8, bad escape, empty name), ' +
    'fields round-trip; signature = official twilio package; verify ⇔ header is the official signature over the URL as is / without port / ' +
    'with default port, so any mutation of url/fields/token/signature fails unless the signed string is unchanged; callbacks as documented',
  files: ['src/carriers/callbacks.ts', 'src/carriers/twilio-signature.ts', 'src/http/routes/carriers/twilio-form.ts'],
  arbitrary: inputArb,
  dictionary: [
    'MessageSid=',
    'MessageStatus=delivered',
    'MessageStatus=undelivered',
    'ErrorCode=30003',
    'From=%2B15551234567',
    'To=',
    'Body=',
    '&',
    '=',
    '+',
    '%',
    '%2B',
    '%C3%A9',
    '%zz',
    '%E2%82',
    ':443',
    ':80',
    'https://',
    '/v1/carriers/',
  ],
  run(input) {
    const publicUrl = refusesOnlyWithSync([Error], () => parsePublicUrl(input.publicUrl, []));
    const base = typeof publicUrl === 'string' ? publicUrl : 'https://sms.example.com';
    const action = input.action === 'inbound' ? 'inbound' : 'status';
    const url = carrierUrl(base, input.name, action);
    const fields = Array.isArray(input.fields) ? input.fields.filter((f) => Array.isArray(f) && f.length === 2) : [];
    const built = fields.map(([k, v]): [string, string] => [String(k).toWellFormed(), String(v).toWellFormed()]);
    const form = built.map(([k, v]) => `${encodePart(k, input.encoding)}=${encodePart(v, input.encoding)}`).join('&');
    const body = input.raw.length > 0 ? Buffer.from(input.raw) : Buffer.from(form + input.extra, 'utf8');
    const parsed = parseFormBody(body);
    checkForm(body, parsed, input.raw.length === 0 && input.extra === '' ? built : undefined);

    // The provider signs what it sent, then changes one thing.
    const sent: TwilioParams = parsed === 'malformed' ? group(built) : parsed;
    const signedUrl = input.what === 'url' ? mutateUrl(url, input.op, input.at, input.with) : url;
    const signedParams = input.what === 'field' ? mutateFields(sent, input.op, input.at, input.with) : sent;
    const signedToken = input.what === 'token' ? edit(input.token, input.op, input.at, input.with) : input.token;
    const right = twilioSignature(signedToken, signedUrl, signedParams);
    check(right === getExpectedTwilioSignature(signedToken, signedUrl, signedParams), 'twilioSignature differs from the official package');
    const signature = input.what === 'signature' ? edit(right, input.op, input.at, input.with) : right;
    const header: string | undefined =
      input.sign === 'none'
        ? undefined
        : input.sign === 'empty'
          ? ''
          : input.sign === 'dup'
            ? `${signature}, ${signature}`
            : input.sign === 'garbage'
              ? input.with
              : signature;

    const request = {
      body: { mediaType: mediaTypeOf(input.contentType), raw: body },
      headers: header === undefined ? {} : { 'x-twilio-signature': header },
    };
    const carrier = { kind: 'twilio', name: input.name, authToken: input.token } as unknown as CarrierOf<'twilio'>;
    const result = refusesOnlyWithSync([HttpError], () => signedTwilioForm(request as unknown as FastifyRequest, carrier, base, action));

    // The model: 415, 400, then the signature as the official package computes it.
    const isForm = mediaTypeOf(input.contentType).trim().toLowerCase() === FORM;
    if (body.length > 0 && !isForm) {
      check(result instanceof HttpError && result.status === 415, `expected 415, got ${show(result)}`);
      return;
    }
    if (parsed === 'malformed') {
      check(result instanceof HttpError && result.status === 400, `expected 400, got ${show(result)}`);
      return;
    }
    const candidates = [url, withPort(url, ''), withPort(url, undefined)];
    const split = splitUrl(url);
    // As the module says: without the port only when there is one; with the default one only when there is none.
    const accepted = split?.port ? [url, candidates[1]!] : [url, candidates[2]!];
    // An empty token (parseCarriers never gives one) verifies nothing.
    const valid =
      input.token !== '' &&
      header !== undefined &&
      header !== '' &&
      accepted.some((u) => header === getExpectedTwilioSignature(input.token, u, parsed));
    check(
      verifyTwilioSignature(input.token, url, parsed, header) === valid,
      `verify ${valid ? 'refused' : 'accepted'} ${input.what}/${input.op}: signed ${JSON.stringify(signedUrl)} vs ${JSON.stringify(url)}`,
    );
    if (valid) {
      check(isDeepStrictEqual(result, parsed), `a verified form was not returned: ${show(result)}`);
      check(validateRequest(input.token, header ?? '', url, parsed), 'the official validateRequest refuses what we accept');
      checkCallbacks(parsed);
    } else check(result instanceof HttpError && result.status === 403, `expected 403, got ${show(result)}`);
    if (input.what === 'none' && input.sign === 'right' && input.token !== '') check(valid, 'a correctly signed request did not verify');
  },
};
