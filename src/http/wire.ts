import type { FastifyReply } from 'fastify';
import { toXmlDocument } from './serializers/xml.ts';
import type { Params } from './query.ts';

/** The response format a request negotiated (CONVENTIONS §4). */
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
 * Sets a header with the exact casing CONVENTIONS names (`X-Rate-Limit-Limit`, `Link`, ...).
 * Fastify lowercases names it manages, so these go straight onto the Node response; they also stay
 * in place when an error replaces the body, as CONVENTIONS §1 requires.
 */
export function setWireHeader(reply: FastifyReply, name: string, value: string): void {
  reply.raw.setHeader(name, value);
}

/** Prepares the reply to render its payload in `format`: content type and serializer. */
export function useFormat(reply: FastifyReply, format: Format): void {
  if (format === 'xml') {
    reply.type(XML_TYPE);
    reply.serializer(toXmlDocument);
  } else {
    reply.type(JSON_TYPE);
  }
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
  422: 'Unprocessable entity',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** An HTTP-level failure (CONVENTIONS §2): status, message and any headers to add. */
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

/** The CONVENTIONS §2 error body, keys in order. */
export function errorBody(status: number, message: string) {
  return { name: REASON_PHRASES[status] ?? 'Error', message, code: 0, status };
}
