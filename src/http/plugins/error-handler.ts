import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { HttpStatusError, NotFoundError, ValidationFailedError } from '../../domain/errors.ts';
import { isStoreUnavailable } from '../../domain/store.ts';
import { errorBody, HttpError, REASON_PHRASES, useFormat } from '../wire.ts';

/** Headers that only a successful list response may carry (API.md §1.5). */
const SUCCESS_ONLY_HEADERS = [
  'X-Pagination-Total-Count',
  'X-Pagination-Page-Count',
  'X-Pagination-Current-Page',
  'X-Pagination-Per-Page',
  'Link',
];

// Fastify's own request errors that are the client's fault, by code.
const FASTIFY_CLIENT_ERRORS: Readonly<Record<string, [number, string]>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: [413, ''],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, 'Request body size did not match Content-Length.'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, ''],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, 'Invalid JSON data in request body: Syntax error'],
};

/** Sends the API.md error for `status` in the request's negotiated format. */
export function sendError(request: FastifyRequest, reply: FastifyReply, status: number, message: string): FastifyReply {
  for (const name of SUCCESS_ONLY_HEADERS) reply.raw.removeHeader(name);
  useFormat(reply, request.format);
  reply.raw.statusMessage = REASON_PHRASES[status] ?? '';
  return reply.code(status).send(errorBody(status, message));
}

/**
 * The one error handler (API.md §4, §4.4): maps domain, HTTP and Fastify errors to status and
 * body; anything unexpected becomes a 500 with the generic message and is logged with its stack.
 */
export function createErrorHandler(bodyLimitBytes: number) {
  return function errorHandler(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) {
    if (error instanceof ValidationFailedError) {
      for (const name of SUCCESS_ONLY_HEADERS) reply.raw.removeHeader(name);
      useFormat(reply, request.format);
      reply.raw.statusMessage = 'Data Validation Failed.';
      return reply.code(422).send(error.errors);
    }
    if (error instanceof NotFoundError) return sendError(request, reply, 404, error.message);
    if (error instanceof HttpError || error instanceof HttpStatusError) {
      for (const [name, value] of Object.entries(error.headers)) reply.raw.setHeader(name, value);
      return sendError(request, reply, error.status, error.message);
    }
    const code = (error as FastifyError).code;
    const known = code ? FASTIFY_CLIENT_ERRORS[code] : undefined;
    if (known) {
      const [status, message] = known;
      if (status === 413) {
        const limit = request.routeOptions.bodyLimit ?? bodyLimitBytes;
        return sendError(request, reply, 413, `Request Entity Too Large: the body is over the limit of ${limit} bytes.`);
      }
      if (status === 415) {
        return sendError(
          request,
          reply,
          415,
          'Unsupported Media Type: send the body as application/json or application/x-www-form-urlencoded.',
        );
      }
      return sendError(request, reply, status, message);
    }
    const status = (error as FastifyError).statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      return sendError(request, reply, status, REASON_PHRASES[status] ?? 'Bad Request');
    }
    if (isStoreUnavailable(error)) {
      // The database is down or timed out: say so, and let the client retry (no stack in the body).
      request.log.warn({ reqId: request.id, err: { message: error.message, code: (error as FastifyError).code } }, 'database unavailable');
      reply.raw.setHeader('Retry-After', '1');
      return sendError(request, reply, 503, 'The service is temporarily unavailable. Please retry later.');
    }
    request.log.error({ reqId: request.id, err: error }, 'unexpected error');
    return sendError(request, reply, 500, 'An internal server error occurred.');
  };
}
