import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError, setWireHeader, useFormat, type Format } from '../wire.ts';

/**
 * Content negotiation, step 6 of the request path but decided first (CONVENTIONS §1, §4):
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

/** Media ranges of an Accept header, best first (Yii2 Request::parseAcceptHeader order). */
export function parseAccept(header: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  header.split(',').forEach((part, index) => {
    const params = part.trim().split(/\s*;\s*/).filter((p) => p !== '');
    const type = params.shift();
    if (type === undefined) return;
    let q = 1;
    for (const p of params) {
      const eq = p.indexOf('=');
      if (eq > 0 && p.slice(0, eq).trim().toLowerCase() === 'q') {
        const v = Number.parseFloat(p.slice(eq + 1));
        q = Number.isNaN(v) ? 0 : v;
      }
    }
    ranges.push({ type: type.toLowerCase(), q, index });
  });
  const wildness = (t: string) => (t === '*/*' ? 2 : t.endsWith('*') ? 1 : 0);
  return ranges.sort((a, b) => b.q - a.q || wildness(a.type) - wildness(b.type) || a.index - b.index);
}

/**
 * Picks the response format of a request.
 * @throws HttpError 406 when `_format` names another format or Accept matches neither.
 * @throws HttpError 400 when `_format` is sent as an array.
 */
export function negotiateFormat(formatParam: unknown, accept: string | undefined): Format {
  if (formatParam !== undefined) {
    if (Array.isArray(formatParam)) throw new HttpError(400, "Invalid data received for GET parameter '_format'.");
    if (formatParam === 'json' || formatParam === 'xml') return formatParam;
    throw new HttpError(406, `The requested response format is not supported: ${String(formatParam)}`);
  }
  if (accept === undefined || accept.trim() === '') return 'json';
  const ranges = parseAccept(accept);
  for (const r of ranges) {
    const format = FORMATS[r.type];
    if (format) return format;
  }
  if (ranges.some((r) => r.type === '*/*')) return 'json';
  throw new HttpError(406, 'None of your requested content types is supported.');
}

/** onRequest step: negotiates, sets Vary and prepares the reply's format. Errors render as JSON. */
export async function negotiate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  setWireHeader(reply, 'Vary', 'Accept');
  request.format = negotiateFormat(request.queryParams.get('_format'), request.headers.accept);
  useFormat(reply, request.format);
}

/** `negotiate` as a callback hook: the same step without a promise per request. */
export function negotiateHook(request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void {
  try {
    setWireHeader(reply, 'Vary', 'Accept');
    request.format = negotiateFormat(request.queryParams.get('_format'), request.headers.accept);
    useFormat(reply, request.format);
  } catch (err) {
    return done(err as Error);
  }
  done();
}
