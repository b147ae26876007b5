import type { Socket } from 'node:net';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { DestinationStream } from 'pino';
import type { Config } from './config.ts';
import { recordMappers } from './domain/records.ts';
import { createTimeFormat } from './domain/time.ts';
import { createAuthenticator } from './http/plugins/auth.ts';
import { collectRawBodies } from './http/plugins/body.ts';
import { createErrorHandler, sendError } from './http/plugins/error-handler.ts';
import { negotiate, negotiateFormat, negotiateHook } from './http/plugins/negotiate.ts';
import { createRateLimit } from './http/plugins/rate-limit.ts';
import { createLogger, logRequest } from './http/log.ts';
import { parseParams } from './http/query.ts';
import { allowedMethods, OPERATIONS } from './http/routes/index.ts';
import { errorBody, HttpError, JSON_TYPE, REASON_PHRASES, setWireHeader } from './http/wire.ts';
import { pingStore, type Store } from './store/db.ts';
import { createRateLimiterBackend } from './http/rate-limiter-backend.ts';

export interface AppDeps {
  store: Store;
  /** Where log lines go (default stdout). */
  logDestination?: DestinationStream;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timeout')), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/** Largest request target (path and query) in bytes; longer: 414. Below the 16 KiB head limit, like Apache and nginx. */
export const MAX_URL_BYTES = 8192;
/** Largest request head (request line and headers) in bytes; larger: 431 (Node's default, made explicit). */
export const MAX_HEADER_BYTES = 16_384;

/**
 * Writes a CONVENTIONS error (JSON) straight onto a socket whose HTTP parsing failed or that
 * Fastify never sees, then closes it: as soon as the client closes its side after reading the
 * reply, and one second later at the latest, so a client that ignores the close cannot keep it.
 */
function endSocketWithError(socket: Socket, status: number, message: string, extraHeaders = ''): void {
  const httpMessage = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!socket.writable || socket.writableEnded || httpMessage?.headersSent) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(errorBody(status, message));
  socket.end(
    `HTTP/1.1 ${status} ${REASON_PHRASES[status]}\r\nContent-Type: application/json; charset=UTF-8\r\n${extraHeaders}` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  setTimeout(() => socket.destroy(), 1000).unref();
}

/** Answers a malformed HTTP message (bad request line, oversized headers, too slow) in the CONVENTIONS shape. */
function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  endSocketWithError(socket, status, REASON_PHRASES[status] ?? 'Bad Request');
}

/** Routing 404 (CONVENTIONS §2), in the negotiated format when it can be negotiated, else JSON. */
function pageNotFound(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  try {
    request.format = negotiateFormat(request.queryParams.get('_format'), request.headers.accept);
    setWireHeader(reply, 'Vary', 'Accept');
  } catch {
    request.format = 'json';
  }
  return sendError(request, reply, 404, 'Page not found.');
}

/**
 * Builds the msgsvc HTTP application without listening. The request path, in order
 * (CONVENTIONS §1): routing 404 → negotiate 406 → method 405 → auth 401 → rate limit 429 →
 * handler (400 parameters and body, 404 record, 422 validation) → JSON or XML.
 */
export function buildApp(config: Config, deps: AppDeps): FastifyInstance {
  const app = Fastify({
    loggerInstance: createLogger(config.logLevel, deps.logDestination),
    // One line per request comes from logRequest (onResponse), with the token masked.
    logController: new LogController({ disableRequestLogging: true }),
    // request.log is the root logger, not a pino child per request (a child costs a few µs on
    // every request); the lines that need the request id carry `reqId` themselves.
    childLoggerFactory: (logger) => logger,
    bodyLimit: config.bodyLimitBytes,
    // Slow clients (slowloris): the whole request, headers included, must arrive within
    // requestTimeoutMs or the client gets 408 and the connection is closed; Node checks open
    // connections every connectionsCheckingInterval. A connection silent for connectionTimeout in
    // the middle of a request is dropped; an idle keep-alive one after keepAliveTimeout.
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    connectionTimeout: Math.max(60_000, config.requestTimeoutMs),
    http: {
      headersTimeout: config.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, Math.max(50, Math.floor(config.requestTimeoutMs / 4))),
      maxHeaderSize: MAX_HEADER_BYTES,
      // Node's own 400 for a missing Host has an empty body; the first onRequest hook answers it instead.
      requireHostHeader: false,
    },
    // On SIGTERM, requests already on open connections are served; Fastify's own 503 would not be
    // in the CONVENTIONS error shape. New connections are refused once closing starts.
    return503OnClosing: false,
    // Query strings are read the PHP way in the first onRequest hook (src/http/query.ts).
    routerOptions: { querystringParser: () => ({}) },
    clientErrorHandler,
    // A path with a broken %-escape matches no route (Yii2 urldecodes it and finds none): the
    // CONVENTIONS 404, not Fastify's own 400 body, which also echoes the URL with its token.
    frameworkErrors: (error, request, reply) => {
      reply.raw.once('finish', () => void logRequest(request, reply));
      const q = request.url.indexOf('?');
      request.rawQuery = q === -1 ? '' : request.url.slice(q + 1);
      request.queryParams = parseParams(request.rawQuery);
      request.accountId = 0;
      if (error.code !== 'FST_ERR_BAD_URL' && error.code !== 'FST_ERR_MAX_PARAM_LENGTH') {
        request.format = 'json';
        return sendError(request, reply, 500, 'An internal server error occurred.');
      }
      return pageNotFound(request, reply);
    },
  });

  app.decorateRequest('format', 'json');
  app.decorateRequest('accountId', 0);
  app.decorateRequest('queryParams', null as never);
  app.decorateRequest('rawQuery', '');

  // Synchronous hooks take `done`: no promise per request (src/http/plugins/* do the same).
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.url.length > MAX_URL_BYTES) {
      return done(new HttpError(414, `Request-URI Too Long: the URL is over the limit of ${MAX_URL_BYTES} bytes.`));
    }
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      return done(new HttpError(400, 'Bad Request: an HTTP/1.1 request must carry a Host header.'));
    }
    const q = request.url.indexOf('?');
    request.rawQuery = q === -1 ? '' : request.url.slice(q + 1);
    request.queryParams = parseParams(request.rawQuery);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    void logRequest(request, reply);
    done();
  });
  // Requests Node would not hand to Fastify: CONNECT (Node's default drops the connection without
  // a word) gets the CONVENTIONS 405 or 404; an Expect other than 100-continue (Node's default is an
  // empty 417) is ignored, as RFC 9110 allows, and the request is served.
  app.server.on('connect', (req: { url?: string }, socket: Socket) => {
    const allow = allowedMethods(pathOf(req.url ?? ''));
    if (allow === undefined) endSocketWithError(socket, 404, 'Page not found.');
    else endSocketWithError(socket, 405, `Method Not Allowed. This URL can only handle the following request methods: ${allow}.`, `Allow: ${allow}\r\n`);
  });
  app.server.on('checkExpectation', (req, res) => app.server.emit('request', req, res));
  collectRawBodies(app);
  app.setErrorHandler(createErrorHandler(config.bodyLimitBytes));

  // Unknown paths are 404 (rendered in the negotiated format when it can be negotiated); known
  // paths reached with another method are 406-checked, then 405 with Allow.
  app.setNotFoundHandler(async (request: FastifyRequest, reply: FastifyReply) => {
    const allow = allowedMethods(pathOf(request.url));
    if (allow === undefined) return pageNotFound(request, reply);
    await negotiate(request, reply);
    setWireHeader(reply, 'Allow', allow);
    throw new HttpError(405, `Method Not Allowed. This URL can only handle the following request methods: ${allow}.`);
  });

  const limits = createRateLimiterBackend(config.rateLimit, config.rateWindowSeconds, config.redisUrl, config.rateKeyPrefix, app.log);
  app.addHook('onClose', async () => limits.close());

  // Operational probes, outside /v1 and without a token: liveness, and readiness of the
  // database and (when configured) Redis.
  app.get('/healthz', async (_request, reply) => reply.type(JSON_TYPE).send({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const check = async (fn: () => Promise<void>) => {
      try {
        await withTimeout(fn(), 2000);
        return 'ok';
      } catch {
        return 'unavailable';
      }
    };
    const [database, redis] = await Promise.all([
      check(() => pingStore(deps.store)),
      limits.kind === 'redis' ? check(() => limits.ping()) : Promise.resolve('not configured'),
    ]);
    const ready = database === 'ok' && redis !== 'unavailable';
    return reply.code(ready ? 200 : 503).type(JSON_TYPE).send({ status: ready ? 'ok' : 'unavailable', database, redis });
  });

  const mappers = recordMappers(createTimeFormat(config.timeZone));
  app.register(async (api) => {
    api.addHook('onRequest', negotiateHook);
    api.addHook('onRequest', createAuthenticator(deps.store, config.tokenCacheMs));
    api.addHook('onRequest', createRateLimit(config.rateLimit, config.rateWindowSeconds, limits.limiter));
    for (const op of OPERATIONS) op.register(api, { store: deps.store, mappers, config });
  });

  return app;
}
