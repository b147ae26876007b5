import type { Socket } from 'node:net';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { DestinationStream } from 'pino';
import type { Config } from './config.ts';
import { recordMappers } from './domain/records.ts';
import { createTimeFormat } from './domain/time.ts';
import { createAuthenticator } from './http/plugins/auth.ts';
import { collectRawBodies } from './http/plugins/body.ts';
import { createErrorHandler, sendError } from './http/plugins/error-handler.ts';
import { negotiate, negotiateFormat } from './http/plugins/negotiate.ts';
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

/** Answers a malformed HTTP message (bad request line, oversized headers) in the CONVENTIONS shape. */
function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const body = JSON.stringify(errorBody(status, REASON_PHRASES[status] ?? 'Bad Request'));
  socket.end(
    `HTTP/1.1 ${status} ${REASON_PHRASES[status]}\r\nContent-Type: application/json; charset=UTF-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
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
    bodyLimit: config.bodyLimitBytes,
    requestTimeout: 30_000,
    // On SIGTERM, requests already on open connections are served; Fastify's own 503 would not be
    // in the CONVENTIONS error shape. New connections are refused once closing starts.
    return503OnClosing: false,
    // Query strings are read the PHP way in the first onRequest hook (src/http/query.ts).
    routerOptions: { querystringParser: () => ({}) },
    clientErrorHandler,
  });

  app.decorateRequest('format', 'json');
  app.decorateRequest('accountId', 0);
  app.decorateRequest('queryParams', null as never);
  app.decorateRequest('rawQuery', '');

  app.addHook('onRequest', async (request) => {
    const q = request.url.indexOf('?');
    request.rawQuery = q === -1 ? '' : request.url.slice(q + 1);
    request.queryParams = parseParams(request.rawQuery);
  });
  app.addHook('onResponse', logRequest);
  collectRawBodies(app);
  app.setErrorHandler(createErrorHandler(config.bodyLimitBytes));

  // Unknown paths are 404 (rendered in the negotiated format when it can be negotiated); known
  // paths reached with another method are 406-checked, then 405 with Allow.
  app.setNotFoundHandler(async (request: FastifyRequest, reply: FastifyReply) => {
    const allow = allowedMethods(pathOf(request.url));
    if (allow === undefined) {
      try {
        request.format = negotiateFormat(request.queryParams.get('_format'), request.headers.accept);
        setWireHeader(reply, 'Vary', 'Accept');
      } catch {
        request.format = 'json';
      }
      return sendError(request, reply, 404, 'Page not found.');
    }
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
    api.addHook('onRequest', negotiate);
    api.addHook('onRequest', createAuthenticator(deps.store));
    api.addHook('onRequest', createRateLimit(config.rateLimit, config.rateWindowSeconds, limits.limiter));
    for (const op of OPERATIONS) op.register(api, { store: deps.store, mappers, config });
  });

  return app;
}
