import {
  ServerResponse,
  validateHeaderName,
  validateHeaderValue,
  type IncomingMessage,
  type OutgoingHttpHeader,
  type OutgoingHttpHeaders,
} from 'node:http';
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

type HeaderValue = number | string | readonly string[];

/** ASCII case-insensitive equality of two header names (RFC 9110 §5.1), without allocating. */
function sameName(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  if (a === b) return true;
  for (let i = 0; i < a.length; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0x41 && x <= 0x5a) x += 0x20;
    if (y >= 0x41 && y <= 0x5a) y += 0x20;
    if (x !== y) return false;
  }
  return true;
}

/**
 * The Node response of the HTTP server (`http.ServerResponse` option), which writes every header
 * name exactly cased (API.md §2.4): Node writes a name as it is given, and Fastify gives the
 * ones it manages in lower case (`content-length`, anything set with `reply.header`), through
 * `writeHead(status, headers)` or `setHeader`. Both come here and lower-case names get their wire
 * form (wireHeaderName); a name that starts with a capital, as all of ours do, costs one character
 * test.
 *
 * The headers are kept here, as one flat `[name, value, …]` list in the order they were first set,
 * and handed to Node's `writeHead` in one piece: Node then writes them as given, validating each
 * name and value once (as `setHeader` would have), without its per-header bookkeeping (a lower-cased
 * key in a dictionary object, enumerated and sorted again at `writeHead`), which cost about a tenth
 * of a cheap request. `getHeader`, `hasHeader`, `getHeaders`, `removeHeader` and the rest read and
 * change this list, with Node's semantics: names match case-insensitively, a header set again keeps
 * its place and takes the new name and value, and removing `Content-Length`, `Date`… still tells
 * Node not to add its own.
 */
export class WireResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  /** Headers set so far: name (wire case), value, name, value… */
  #fields: (string | HeaderValue)[] = [];

  #indexOf(name: string): number {
    const fields = this.#fields;
    for (let i = 0; i < fields.length; i += 2) if (sameName(fields[i] as string, name)) return i;
    return -1;
  }

  override setHeader(name: string, value: HeaderValue): this {
    // Once the head is written Node's own setHeader throws ERR_HTTP_HEADERS_SENT, as it should.
    if (this.headersSent) return super.setHeader(name, value);
    if (typeof name !== 'string' || name === '') return super.setHeader(name, value);
    const wire = casedName(name);
    const i = this.#indexOf(wire);
    if (i === -1) this.#fields.push(wire, value);
    else {
      this.#fields[i] = wire;
      this.#fields[i + 1] = value;
    }
    return this;
  }

  override appendHeader(name: string, value: string | readonly string[]): this {
    if (this.headersSent || typeof name !== 'string' || name === '') return super.appendHeader(name, value);
    const i = this.#indexOf(name);
    if (i === -1) return this.setHeader(name, value);
    const list = (v: HeaderValue): string[] => (typeof v === 'string' || typeof v === 'number' ? [String(v)] : [...v]);
    this.#fields[i + 1] = [...list(this.#fields[i + 1] as HeaderValue), ...list(value)];
    return this;
  }

  override getHeader(name: string): number | string | string[] | undefined {
    const i = this.#indexOf(name);
    return i === -1 ? undefined : (this.#fields[i + 1] as number | string | string[]);
  }

  override hasHeader(name: string): boolean {
    return this.#indexOf(name) !== -1;
  }

  override getHeaderNames(): string[] {
    const names: string[] = [];
    for (let i = 0; i < this.#fields.length; i += 2) names.push((this.#fields[i] as string).toLowerCase());
    return names;
  }

  getRawHeaderNames(): string[] {
    const names: string[] = [];
    for (let i = 0; i < this.#fields.length; i += 2) names.push(this.#fields[i] as string);
    return names;
  }

  override getHeaders(): OutgoingHttpHeaders {
    const headers: OutgoingHttpHeaders = Object.create(null) as OutgoingHttpHeaders;
    for (let i = 0; i < this.#fields.length; i += 2)
      headers[(this.#fields[i] as string).toLowerCase()] = this.#fields[i + 1] as number | string | string[];
    return headers;
  }

  override removeHeader(name: string): void {
    // Node's: the headers-sent check, and the flags that keep it from adding its own
    // Content-Length, Transfer-Encoding, Connection or Date.
    super.removeHeader(name);
    const i = this.#indexOf(name);
    if (i !== -1) this.#fields.splice(i, 2);
  }

  override writeHead(
    statusCode: number,
    reason?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
    headers?: OutgoingHttpHeaders | OutgoingHttpHeader[],
  ): this {
    const message = typeof reason === 'string' ? reason : undefined;
    const given = typeof reason === 'string' ? headers : reason;
    if (given !== undefined && !this.headersSent) {
      if (Array.isArray(given)) {
        // [[name, value], …] or [name, value, name, value, …], as Node takes them.
        if (given.length > 0 && Array.isArray(given[0])) {
          for (const pair of given as unknown as [string, HeaderValue][]) this.setHeader(pair[0], pair[1]);
        } else {
          for (let n = 0; n + 1 < given.length; n += 2) if (given[n]) this.setHeader(given[n] as string, given[n + 1] as HeaderValue);
        }
      } else {
        for (const name in given) {
          const value = given[name];
          if (value !== undefined) this.setHeader(name, value);
        }
      }
    }
    const fields = this.#fields.length > 0 ? (this.#fields as OutgoingHttpHeader[]) : undefined;
    try {
      if (message !== undefined) return super.writeHead(statusCode, message, fields);
      return fields === undefined ? super.writeHead(statusCode) : super.writeHead(statusCode, fields);
    } catch (err) {
      // A name or value Node refuses (setHeader would have refused it when it was set): the head is
      // written without it, so the answer still goes out whole; the error is for the caller to log.
      if (this.headersSent || !this.#dropInvalid()) throw err;
      if (message !== undefined) return super.writeHead(statusCode, message, this.#fields as OutgoingHttpHeader[]);
      return super.writeHead(statusCode, this.#fields as OutgoingHttpHeader[]);
    }
  }

  /** Removes the headers Node would refuse; true when there was one. */
  #dropInvalid(): boolean {
    const before = this.#fields.length;
    const kept: (string | HeaderValue)[] = [];
    for (let i = 0; i < this.#fields.length; i += 2) {
      const name = this.#fields[i] as string;
      const value = this.#fields[i + 1] as HeaderValue;
      try {
        validateHeaderName(name);
        for (const v of typeof value === 'string' || typeof value === 'number' ? [String(value)] : value) validateHeaderValue(name, v);
        kept.push(name, value);
      } catch {
        /* dropped */
      }
    }
    this.#fields = kept;
    return kept.length !== before;
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
