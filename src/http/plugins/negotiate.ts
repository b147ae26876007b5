import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError, setWireHeader, useFormat, type Format } from '../wire.ts';
import type { ParamValue } from '../query.ts';

/**
 * Content negotiation, step 6 of the request path but decided first (API.md §1.5, §2):
 * `_format=json|xml` overrides Accept; otherwise media ranges are sorted by q (specific types
 * before wildcards, then by position) and the first exact application/json or application/xml wins.
 * No Accept header, or any `*∕*`, falls back to JSON.
 */

const FORMATS: Readonly<Record<string, Format>> = { 'application/json': 'json', 'application/xml': 'xml' };

interface MediaRange {
  type: string;
  q: number;
  index: number;
}

// The numeric prefix PHP's (float) cast reads, after leading whitespace; anything else is 0.
const PHP_FLOAT = /^[ \t\n\r\v\f]*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)/;

/**
 * PHP's `(float)` cast of a string (API.md §2.1): the leading number, whitespace before it
 * allowed, anything after it ignored (`0.5x` → 0.5, `1e3` → 1000); no number (`abc`,
 * `Infinity`, `NaN`) → 0.
 */
export function phpFloat(text: string): number {
  const m = PHP_FLOAT.exec(text);
  return m === null ? 0 : Number(m[1]);
}

// PHP trim()'s characters, and PCRE's \s around `;` (Yii2: preg_split('/\s*;\s*/', trim($part))).
const PHP_TRIM = /^[ \t\n\r\0\x0B]+|[ \t\n\r\0\x0B]+$/g;
const PARAM_SEPARATOR = /[ \t\n\x0B\f\r]*;[ \t\n\x0B\f\r]*/;

/**
 * Media ranges of an Accept header, best first, as Yii2's Request::parseAcceptHeader reads them
 * (API.md §2, §2.1): parts split at `,`, trimmed of PHP's trim characters, split
 * at `;` with PCRE whitespace around it, empty pieces dropped. Types are kept exactly as written,
 * case included, and only a lower-case `q` parameter is a weight, read as PHP's (float).
 */
export function parseAccept(header: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  header.split(',').forEach((part, index) => {
    const params = part
      .replace(PHP_TRIM, '')
      .split(PARAM_SEPARATOR)
      .filter((p) => p !== '');
    const type = params.shift();
    if (type === undefined) return;
    let q = 1;
    for (const p of params) {
      const eq = p.indexOf('=');
      if (eq === 1 && p.charCodeAt(0) === 0x71 /* q */) q = phpFloat(p.slice(2));
    }
    ranges.push({ type, q, index });
  });
  const wildness = (t: string) => (t === '*/*' ? 2 : t.endsWith('*') ? 1 : 0);
  return ranges.sort((a, b) => b.q - a.q || wildness(a.type) - wildness(b.type) || a.index - b.index);
}

/**
 * Picks the response format of a request (API.md §2, §2.1): `_format` first,
 * then the first range of Accept, best first, that is exactly `application/json` or
 * `application/xml`; JSON when there is no Accept, no range in it, or a `*∕*` among them.
 * @throws HttpError 406 when `_format` names another format or Accept matches neither.
 * @throws HttpError 400 when `_format` is sent as an array.
 */
export function negotiateFormat(formatParam: ParamValue | undefined, accept: string | undefined): Format {
  if (formatParam !== undefined) {
    if (Array.isArray(formatParam)) throw new HttpError(400, "Invalid data received for GET parameter '_format'.");
    if (formatParam === 'json' || formatParam === 'xml') return formatParam;
    throw new HttpError(406, `The requested response format is not supported: ${formatParam}`);
  }
  if (accept === undefined || accept === '' || accept === 'application/json' || accept === '*/*') return 'json';
  if (accept === 'application/xml') return 'xml';
  // An Accept header of no media range at all (` `, `,`) counts as none: `*/*`.
  const ranges = parseAccept(accept);
  if (ranges.length === 0) return 'json';
  for (const r of ranges) {
    const format = FORMATS[r.type];
    if (format) return format;
  }
  if (ranges.some((r) => r.type === '*/*')) return 'json';
  throw new HttpError(406, 'None of your requested content types is supported.');
}

/**
 * Negotiates, sets Vary and prepares the reply's format. Errors render as JSON.
 * @throws HttpError 406 or 400, as negotiateFormat.
 */
export function negotiate(request: FastifyRequest, reply: FastifyReply): void {
  setWireHeader(reply, 'Vary', 'Accept');
  request.format = negotiateFormat(request.queryParams.get('_format'), request.headers.accept);
  useFormat(reply, request.format);
}

/**
 * `negotiate` as a callback hook: the same step without a promise per request. An operation that
 * produces no record (bytes of its own Content-Type: a media download, a CSV export) is not
 * refused for its Accept header; its errors are rendered in the negotiated format, or JSON when
 * none matches.
 */
export function negotiateHook(request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void {
  try {
    setWireHeader(reply, 'Vary', 'Accept');
    try {
      request.format = negotiateFormat(request.queryParams.get('_format'), request.headers.accept);
    } catch (err) {
      const produces = request.routeOptions.config.operation?.produces;
      if (produces === undefined || produces === 'record') throw err;
      request.format = 'json';
    }
    useFormat(reply, request.format);
  } catch (err) {
    return done(err as Error);
  }
  done();
}
