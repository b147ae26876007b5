import { ServerResponse, type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders } from 'node:http';
import type { FastifyReply } from 'fastify';
import { toXmlDocument } from './serializers/xml.ts';
import type { Params } from './query.ts';

/** The response format a request negotiated (API.md §2). */
export type Format = 'json' | 'xml';

declare module 'fastify' {
  interface FastifyRequest {
    /** Negotiated response format; JSON until negotiation has run. */
    format: Format;
    /** The authenticated account (set by the auth step); 0 before it. */
    accountId: number;
    /** Query parameters read the PHP way (src/http/query.ts). */
    queryParams: Params;
    /** The query string as sent, without `?`. */
    rawQuery: string;
  }
}

export const JSON_TYPE = 'application/json; charset=UTF-8';
export const XML_TYPE = 'application/xml; charset=UTF-8';

/**
 * Sets a header with the exact casing API.md names (`X-Rate-Limit-Limit`, `Link`, ...).
 * Fastify lowercases names it manages, so these go straight onto the Node response; they also stay
 * in place when an error replaces the body, as API.md §1.5 requires.
 */
export function setWireHeader(reply: FastifyReply, name: string, value: string): void {
  reply.raw.setHeader(name, value);
}

/**
 * Prepares the reply to render its payload in `format`: content type and serializer. The
 * Content-Type goes onto the Node response as `Content-Type` (API.md §2.4: header names exactly
 * cased); Fastify sees it there and adds no lower-case one of its own.
 */
export function useFormat(reply: FastifyReply, format: Format): void {
  // A content type set earlier through Fastify (reply.type) would overwrite this one on the wire.
  reply.removeHeader('content-type');
  if (format === 'xml') {
    reply.raw.setHeader('Content-Type', XML_TYPE);
    reply.serializer(toXmlDocument);
  } else {
    reply.raw.setHeader('Content-Type', JSON_TYPE);
  }
}

/** Header names as they go on the wire (API.md §2.4), by their lower-case form. */
const WIRE_NAMES: Readonly<Record<string, string>> = {
  'content-type': 'Content-Type',
  'content-length': 'Content-Length',
  'content-disposition': 'Content-Disposition',
  vary: 'Vary',
  allow: 'Allow',
  link: 'Link',
  location: 'Location',
  'retry-after': 'Retry-After',
  'idempotent-replayed': 'Idempotent-Replayed',
  etag: 'ETag',
  'www-authenticate': 'WWW-Authenticate',
};

/**
 * The exact casing of a header name on the wire (API.md §2.4 "Header names are written as Yii2
 * writes them"): the names API.md and API.md write, else each `-`-separated word
 * capitalised (`x-rate-limit-limit` → `X-Rate-Limit-Limit`).
 */
export function wireHeaderName(name: string): string {
  const lower = name.toLowerCase();
  return WIRE_NAMES[lower] ?? lower.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
}

/** The name setHeader stores: a name starting with a lower-case letter in its wire form, any other as it is. */
function casedName(name: string): string {
  const c = name.charCodeAt(0);
  return c >= 0x61 && c <= 0x7a ? wireHeaderName(name) : name;
}

/**
 * The Node response of the HTTP server (`http.ServerResponse` option), which writes every header
 * name exactly cased (API.md §2.4): Node writes a name as it is given, and Fastify gives the
 * ones it manages in lower case (`content-length`, anything set with `reply.header`), through
 * `writeHead(status, headers)` or `setHeader`. Both come here and lower-case names get their wire
 * form (wireHeaderName); a name that starts with a capital, as all of ours do, costs one character
 * test.
 */
export class WireResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  override setHeader(name: string, value: number | string | readonly string[]): this {
    return super.setHeader(casedName(name), value);
  }

  override writeHead(
    statusCode: number,
    reason?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
    headers?: OutgoingHttpHeaders | OutgoingHttpHeader[],
  ): this {
    const message = typeof reason === 'string' ? reason : undefined;
    let fields = typeof reason === 'string' ? headers : reason;
    if (fields !== undefined && !Array.isArray(fields)) {
      const named = fields;
      for (const name in named) {
        const value = named[name];
        if (value !== undefined) this.setHeader(name, value);
      }
      fields = undefined;
    }
    if (message !== undefined) return super.writeHead(statusCode, message, fields);
    return fields === undefined ? super.writeHead(statusCode) : super.writeHead(statusCode, fields);
  }
}

/**
 * Gives a Node response that is not a WireResponse (`app.inject` builds its own) the same header
 * casing, for the headers Fastify writes at the end (API.md §2.4): its `setHeader` casts names
 * as WireResponse does, and Node's writeHead sets the managed headers through it.
 */
export function castHeaderNames(res: ServerResponse): void {
  if (res instanceof WireResponse || Object.hasOwn(res, 'setHeader')) return;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called below with the response as `this`
  const setHeader = res.setHeader;
  res.setHeader = function (this: ServerResponse, name: string, value: number | string | readonly string[]) {
    return setHeader.call(this, casedName(name), value);
  };
}

const LINE_TERMINATORS = /[\u2028\u2029]/;
const LINE_TERMINATORS_G = /[\u2028\u2029]/g;

/**
 * JSON text with U+2028 and U+2029 escaped as `\u2028` / `\u2029`, as PHP's json_encode writes
 * them (API.md §2.2). Returns the same string when it holds neither (one regex test; a
 * one-byte string cannot hold them, so that test fails at once).
 */
export function escapeJsonLineTerminators(json: string): string {
  if (!LINE_TERMINATORS.test(json)) return json;
  return json.replace(LINE_TERMINATORS_G, (c) => (c === '\u2028' ? '\\u2028' : '\\u2029'));
}

/** Yii2's reason phrases (yii\web\Response::$httpStatuses), used as error `name` and status text. */
export const REASON_PHRASES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  408: 'Request Timeout',
  413: 'Request Entity Too Large',
  414: 'Request-URI Too Long',
  415: 'Unsupported Media Type',
  416: 'Range Not Satisfiable',
  409: 'Conflict',
  422: 'Unprocessable entity',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** An HTTP-level failure (API.md §4): status, message and any headers to add. */
export class HttpError extends Error {
  override name = 'HttpError';
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  constructor(status: number, message: string, headers: Readonly<Record<string, string>> = {}) {
    // An expected client error: its stack is never shown or logged, and capturing one costs
    // several microseconds on every 4xx (the 401 path included).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.status = status;
    this.headers = headers;
  }
}

/** The API.md §4 error body, keys in order. */
export function errorBody(status: number, message: string) {
  return { name: REASON_PHRASES[status] ?? 'Error', message, code: 0, status };
}
