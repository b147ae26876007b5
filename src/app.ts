import { randomUUID } from 'node:crypto';
import { METHODS, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { PassThrough, Readable } from 'node:stream';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { DestinationStream } from 'pino';
import type { Config } from './config.ts';
import { createTimeFormat, systemClock, type Clock } from './lib/time.ts';
import { authorize, createAuthenticator } from './http/plugins/auth.ts';
import { NOBODY } from './domain/principal.ts';
import { setAuditStatus, writeAuditEntry } from './domain/audit.ts';
import { collectRawBodies, mediaTypeOf } from './http/plugins/body.ts';
import { createErrorHandler, sendError } from './http/plugins/error-handler.ts';
import { negotiate, negotiateFormat, negotiateHook } from './http/plugins/negotiate.ts';
import { createRateLimit } from './http/plugins/rate-limit.ts';
import { createLogger, logRequest } from './http/log.ts';
import { parseParams } from './http/query.ts';
import { allowedMethodsOf, CONTROLLERS, operationsFor, registerCarrierRoutes } from './http/routes/index.ts';
import { auditEntryOf, operationOf, registerOperations } from './http/operation.ts';
import { createIdempotency } from './http/plugins/idempotency.ts';
import { registerApiDocs } from './http/docs.ts';
import { registerConsole } from './http/console.ts';
import { registerLinkRoutes } from './http/links.ts';
import { registerSessionRoutes } from './http/session.ts';
import { ADMIN_CONTROLLERS, adminOperationsFor, checkRegistries, registerAdminApi } from './http/admin/index.ts';
import { fieldsHook } from './http/serializers/fields.ts';
import {
  castHeaderNames,
  errorBody,
  escapeJsonLineTerminators,
  HttpError,
  JSON_TYPE,
  REASON_PHRASES,
  setWireHeader,
  WireResponse,
} from './http/wire.ts';
import { storeReady, type Store } from './domain/store.ts';
import { createRateLimiterBackend } from './http/rate-limiter-backend.ts';
import { createMetrics, requestIdOf, type DispatcherStats, type WebhookDeliveryStats } from './http/metrics.ts';
import type { RateLimitStats } from './http/plugins/rate-limit.ts';

export interface AppDeps {
  store: Store;
  /** Time source of the domain and of Idempotency-Key expiry (tests pass a manual clock); default the system clock. */
  clock?: Clock;
  /**
   * The carrier's state for /readyz (`ok` or `unavailable`), when a dispatcher runs in this
   * process; absent: `not running`. Informational: messages queue while the carrier is away.
   */
  carrierState?: () => string;
  /**
   * Each carrier's state for /readyz (`carriers`: name → `ok` or `unavailable`, in MSGSVC_CARRIERS
   * order; docs/API.md §14.1), when a dispatcher runs in this process (or the primary's, for a
   * worker); absent or undefined: the field is left out.
   */
  carrierStates?: () => Readonly<Record<string, string>> | undefined;
  /**
   * This process is a `serve --workers` worker (src/cluster.ts): without REDIS_URL its rate-limit
   * counters are kept by the primary, exact across the workers; absent: kept in this process.
   */
  clusterRateLimit?: boolean;
  /** Where log lines go (default stdout). */
  logDestination?: DestinationStream;
  /** The counters of the dispatcher running in this process, for GET /metrics (absent: none runs here). */
  dispatcherStats?: () => DispatcherStats | undefined;
  /** The counters of the webhook delivery loop running in this process, for GET /metrics (absent: none runs here). */
  webhookStats?: () => WebhookDeliveryStats | undefined;
  /** The built console GET /console serves (src/http/console.ts; default dist/console). */
  consoleDir?: string;
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

/**
 * True when `{prefix}<controller>` (`/v1/` or `/admin/v1/`) has a default action, `index`, and is
 * no operation's own path (the operator's `usage`): read from the registry on each call.
 */
function hasIndexAction(prefix: string, controller: string): boolean {
  const registry = prefix === '/v1/' ? CONTROLLERS : ADMIN_CONTROLLERS;
  if (!Object.hasOwn(registry, controller)) return false;
  const own = `${prefix}${controller}`;
  const path = `${own}/index`;
  return registry[controller]!.some((op) => op.path === path) && !registry[controller]!.some((op) => op.path === own);
}

/** The prefix (`/v1/` or `/admin/v1/`) of a path that is one segment past it, else undefined. */
function controllerPrefix(path: string): string | undefined {
  if (path.length > 4 && path.startsWith('/v1/') && path.indexOf('/', 4) === -1) return '/v1/';
  if (path.length > 10 && path.startsWith('/admin/v1/') && path.indexOf('/', 10) === -1) return '/admin/v1/';
  return undefined;
}

/**
 * The request target Yii2 routes (API.md §3.5): leading repeated slashes are one
 * (`//v1/numbers/index`), trailing slashes are dropped (`/v1/numbers/index/`), and a controller path
 * without an action gets its default action `index` when the controller has one (`/v1/numbers` →
 * `/v1/numbers/index`, `/admin/v1/accounts` → `/admin/v1/accounts/index`). Repeated slashes inside the path stay (no route: 404). The query is kept as
 * it is. A target that needs none of this (every ordinary one) is returned as it is after a few
 * character tests, without slicing.
 */
export function canonicalUrl(url: string): string {
  const q = url.indexOf('?');
  const end = q === -1 ? url.length : q;
  if (
    url.charCodeAt(1) !== 0x2f &&
    url.charCodeAt(end - 1) !== 0x2f &&
    !(end > 4 && url.lastIndexOf('/', end - 1) === 3 && url.startsWith('/v1/')) &&
    !(end > 10 && url.lastIndexOf('/', end - 1) === 9 && url.startsWith('/admin/v1/'))
  ) {
    return url;
  }
  const path = url.slice(0, end);
  let p = path;
  if (p.length > 1 && p.charCodeAt(1) === 0x2f) {
    let i = 1;
    while (p.charCodeAt(i) === 0x2f) i++;
    p = p.slice(i - 1);
  }
  if (p.length > 1 && p.charCodeAt(p.length - 1) === 0x2f) {
    let j = p.length - 1;
    while (j > 1 && p.charCodeAt(j - 1) === 0x2f) j--;
    p = p.slice(0, j);
  }
  const prefix = controllerPrefix(p);
  if (prefix !== undefined && hasIndexAction(prefix, p.slice(prefix.length))) p += '/index';
  return p === path ? url : p + url.slice(end);
}

const FORM_MEDIA = 'application/x-www-form-urlencoded';
/** The body a POST carried, read before routing for its `_method` field (see overrideFromBody). */
const kPeekedBody = Symbol('msgsvc.peekedBody');
/** Set when `_method` decided the method, so X-Http-Method-Override is not read. */
const kMethodFromBody = Symbol('msgsvc.methodFromBody');
type PeekedRequest = IncomingMessage & { [kPeekedBody]?: Readable; [kMethodFromBody]?: boolean };

/** PHP strtoupper: ASCII letters only. */
function asciiUpper(text: string): string {
  return /[a-z]/.test(text) ? text.replace(/[a-z]+/g, (m) => m.toUpperCase()) : text;
}

const KNOWN_METHODS: ReadonlySet<string> = new Set(METHODS);

/**
 * The method a request is routed by after an override (API.md §3.4):
 * `override` as Yii2's Request::getMethod returns it (upper-cased, PHP strtoupper), with two
 * adjustments that keep the HTTP exchange sound and the answer Yii2's:
 * - HEAD on a request that is not a HEAD is routed as GET: Yii2 serves it as the GET-able action
 *   it is, body included (only a real HEAD loses its body, and Node decided that from the request
 *   line), whereas a HEAD route here would announce a body it does not send;
 * - a method that is no HTTP method Node knows (`FOO`, ``, `PUT, GET`) is routed as TRACE, which no
 *   operation answers, so it gets the routing 404 or the 405 with Allow like any other method
 *   (Fastify's router has no catch-all for unknown methods).
 */
export function overriddenMethod(actual: string | undefined, override: string): string {
  const method = asciiUpper(override);
  if (method === 'HEAD') return actual === 'HEAD' ? 'HEAD' : 'GET';
  return KNOWN_METHODS.has(method) ? method : 'TRACE';
}

/**
 * Fastify's rewriteUrl, run before routing, so the route, the 405 check (not-found handler +
 * allowedMethods) and Allow all see the method override and the canonical path (API.md §3.4
 * "Method override", "Routing"). `X-Http-Method-Override: PUT` makes any request a PUT, unless a form
 * body's `_method` already decided (Yii2 Request::getMethod reads `_method` first). Without the
 * header this is one property read, then canonicalUrl.
 */
function rewriteRequest(req: IncomingMessage): string {
  const override = req.headers['x-http-method-override'];
  if (override !== undefined && (req as PeekedRequest)[kMethodFromBody] !== true) {
    req.method = overriddenMethod(req.method, Array.isArray(override) ? override.join(', ') : override);
  }
  return canonicalUrl(req.url ?? '/');
}

/**
 * `_method` in a POST form body (API.md §3.4, Yii2 Request::getMethod reading
 * `$_POST['_method']`): the method must be known before routing, but the body comes after the
 * head. So the HTTP server's 'request' listener is wrapped: a POST whose Content-Type media type is
 * exactly `application/x-www-form-urlencoded` and whose body is within `limit` bytes is read whole
 * first; a `_method` other than GET, HEAD or OPTIONS (upper-cased) becomes the request's method; then
 * the request goes to Fastify, and the root preParsing hook hands the body parser the bytes read
 * (replayBody). A larger body is not read ahead (Fastify answers 413 as usual). Every other
 * request goes straight to Fastify. `app.inject` calls Fastify's handler directly, so it does not
 * pass here: `_method` is a property of the HTTP server.
 */
function overrideFromBody(app: FastifyInstance, limit: number): void {
  const listeners = app.server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  if (listeners.length !== 1) throw new Error('expected Fastify to be the only request listener');
  const handle = listeners[0]!;
  app.server.removeAllListeners('request');
  app.server.on('request', (req: PeekedRequest, res: ServerResponse) => {
    if (req.method !== 'POST' || mediaTypeOf(req.headers['content-type']) !== FORM_MEDIA) return handle(req, res);
    const declared = Number(req.headers['content-length']);
    if (declared > limit) return handle(req, res);
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size > limit) {
        // Too large to peek: hand over what was read followed by the rest, unread.
        cleanup();
        req.pause();
        const rest = new PassThrough();
        rest.write(Buffer.concat(chunks));
        req.pipe(rest);
        req[kPeekedBody] = rest;
        handle(req, res);
      }
    };
    const onEnd = () => {
      cleanup();
      const body = Buffer.concat(chunks);
      // PHP's $_POST['_method']: the form read as PHP reads it (`.method` and `%5Fmethod` are `_method` too).
      const value = body.length === 0 ? undefined : parseParams(decodeForm(body)).get('_method');
      if (typeof value === 'string') {
        const method = asciiUpper(value);
        if (method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS') {
          req.method = overriddenMethod(req.method, method);
          req[kMethodFromBody] = true;
        }
      }
      req[kPeekedBody] = Readable.from([body], { objectMode: false });
      handle(req, res);
    };
    const onAbort = () => cleanup();
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
  });
}

/** A form body as text: UTF-8 when it is UTF-8, else byte by byte (as readBody reads it). */
function decodeForm(body: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    return body.toString('latin1');
  }
}

/** preParsing (root): the body overrideFromBody already read, replayed for the parser. */
function replayBody(
  request: FastifyRequest,
  _reply: FastifyReply,
  payload: Readable,
  done: (err: Error | null, stream?: Readable) => void,
): void {
  const peeked = (request.raw as PeekedRequest)[kPeekedBody];
  done(null, peeked ?? payload);
}

/**
 * onSend (root), the last step before the head is written (API.md §2.4):
 * - header names exactly cased: on the wire the server's WireResponse does it; a response built by
 *   `app.inject` gets the same casing here (castHeaderNames), so both show the names Node writes;
 * - no Content-Type on a 204;
 * - JSON escapes U+2028 and U+2029 (escapeJsonLineTerminators: one regex test).
 */
function wireOnSend(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (err: Error | null, value?: unknown) => void,
): void {
  castHeaderNames(reply.raw);
  if (reply.statusCode === 204) reply.raw.removeHeader('Content-Type');
  if (
    typeof payload === 'string' &&
    request.format === 'json' &&
    payload.length > 0 &&
    (payload.charCodeAt(0) === 0x7b || payload.charCodeAt(0) === 0x5b)
  ) {
    return done(null, escapeJsonLineTerminators(payload));
  }
  done(null, payload);
}

/** Largest request target (path and query) in bytes; longer: 414. Below the 16 KiB head limit, like Apache and nginx. */
export const MAX_URL_BYTES = 8192;
/** Largest request head (request line and headers) in bytes; larger: 431 (Node's default, made explicit). */
export const MAX_HEADER_BYTES = 16_384;

/**
 * Writes an API.md error (JSON) straight onto a socket whose HTTP parsing failed or that
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
  // No request was read (or it could not be parsed), so the request id is always a new one.
  socket.end(
    `HTTP/1.1 ${status} ${REASON_PHRASES[status]}\r\nContent-Type: application/json; charset=UTF-8\r\nX-Request-Id: ${randomUUID()}\r\n${extraHeaders}` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  setTimeout(() => socket.destroy(), 1000).unref();
}

/** Answers a malformed HTTP message (bad request line, oversized headers, too slow) in the API.md shape. */
function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  endSocketWithError(socket, status, REASON_PHRASES[status] ?? 'Bad Request');
}

/** Routing 404 (API.md §4), in the negotiated format when it can be negotiated, else JSON. */
function pageNotFound(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  try {
    request.format = negotiateFormat(request.queryParams.get('_format'), request.headers.accept);
    setWireHeader(reply, 'Vary', 'Accept');
  } catch {
    request.format = 'json';
  }
  // The console's API is never cached, its 404s included (API.md §15.4).
  if (request.url.startsWith('/console/api/')) setWireHeader(reply, 'Cache-Control', 'no-store');
  return sendError(request, reply, 404, 'Page not found.');
}

/**
 * Builds the msgsvc HTTP application without listening. The request path, in order
 * (API.md §1.5): routing 404 → negotiate 406 → method 405 → auth 401 → rate limit 429 →
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
    // The request id: the client's X-Request-Id when it is 1 to 200 visible ASCII characters, else a
    // new UUID. Every response carries it as X-Request-Id, and the request's log line as `reqId`.
    genReqId: requestIdOf,
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
      // Header names exactly cased on the wire, Fastify's lower-case ones included (API.md §2.4).
      ServerResponse: WireResponse,
      // Node's own 400 for a missing Host has an empty body; the first onRequest hook answers it instead.
      requireHostHeader: false,
    },
    // On SIGTERM, requests already on open connections are served; Fastify's own 503 would not be
    // in the API.md error shape. New connections are refused once closing starts.
    return503OnClosing: false,
    // Query strings are read the PHP way in the first onRequest hook (src/http/query.ts).
    routerOptions: { querystringParser: () => ({}) },
    // Method override and the canonical path, before routing (API.md §3.5).
    rewriteUrl: rewriteRequest,
    clientErrorHandler,
    // A path with a broken %-escape matches no route (Yii2 urldecodes it and finds none): the
    // API.md 404, not Fastify's own 400 body, which also echoes the URL with its token.
    frameworkErrors: (error, request, reply) => {
      reply.raw.once('finish', () => logRequest(request, reply));
      reply.raw.setHeader('X-Request-Id', request.id);
      const q = request.url.indexOf('?');
      request.rawQuery = q === -1 ? '' : request.url.slice(q + 1);
      request.queryParams = parseParams(request.rawQuery);
      request.accountId = 0;
      request.principal = NOBODY;
      // Fastify ignores what this returns; the reply is sent either way.
      if (error.code !== 'FST_ERR_BAD_URL' && error.code !== 'FST_ERR_MAX_PARAM_LENGTH') {
        request.format = 'json';
        void sendError(request, reply, 500, 'An internal server error occurred.');
      } else {
        void pageNotFound(request, reply);
      }
    },
  });

  app.decorateRequest('format', 'json');
  app.decorateRequest('accountId', 0);
  // Set to NOBODY by the first onRequest hook (a decorator cannot hold an object).
  app.decorateRequest('principal', null as never);
  app.decorateRequest('auditEntry', undefined);
  app.decorateRequest('queryParams', null as never);
  app.decorateRequest('rawQuery', '');

  // Synchronous hooks take `done`: no promise per request (src/http/plugins/* do the same).
  app.addHook('onRequest', (request, reply, done) => {
    reply.raw.setHeader('X-Request-Id', request.id);
    request.principal = NOBODY;
    if (request.url.length > MAX_URL_BYTES) {
      // The query of a 414 is not read; the steps that still run (error rendering) see none.
      request.queryParams = new Map();
      return done(new HttpError(414, `Request-URI Too Long: the URL is over the limit of ${MAX_URL_BYTES} bytes.`));
    }
    const q = request.url.indexOf('?');
    request.rawQuery = q === -1 ? '' : request.url.slice(q + 1);
    request.queryParams = parseParams(request.rawQuery);
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      return done(new HttpError(400, 'Bad Request: an HTTP/1.1 request must carry a Host header.'));
    }
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    // API.md §15.5 (the audit step sits in the root hook: one hook less on every request).
    if (request.principal.accountId !== 0 && request.method !== 'GET' && request.method !== 'HEAD') auditAfterResponse(request, reply);
    logRequest(request, reply);
    metrics.observe(request, reply);
    done();
  });
  const clock = deps.clock ?? systemClock;
  /**
   * API.md §15.5: every authenticated request that is not GET or HEAD has its entry, whatever its
   * status. A change's entry was written in its transaction with the status of success; this
   * corrects it when the answer differs, and writes the entry of a request refused before or by
   * its handler (403, 429, 400, 404, 422, …). (Requests of /console/api have their own step.)
   */
  function auditAfterResponse(request: FastifyRequest, reply: FastifyReply): void {
    const status = reply.statusCode;
    const entry = request.auditEntry;
    const write =
      entry?.entryId !== undefined
        ? entry.status === status
          ? undefined
          : setAuditStatus(deps.store, entry.entryId, status)
        : writeAuditEntry(deps.store, { ...(entry ?? auditEntryOf(request, operationOf(request), status, clock.nowSeconds())), status });
    if (write) write.catch((err: unknown) => request.log.error({ err, reqId: request.id }, 'audit entry not written'));
  }
  // The operations of this configuration (a disabled one's path is unknown: 404 before any check).
  const operations = operationsFor(config);
  // The operator's operations, /admin/v1/… (docs/API.md §16.4; src/http/admin/): a registry of their own.
  const adminOperations = adminOperationsFor(config);
  checkRegistries(operations, adminOperations);
  const allowedMethods = allowedMethodsOf([...operations, ...adminOperations]);
  const rateLimitStats: RateLimitStats = { rejected: 0 };
  const metricsClock = deps.clock ?? systemClock;
  const metrics = createMetrics(
    {
      store: deps.store,
      ...(deps.dispatcherStats ? { dispatcherStats: deps.dispatcherStats } : {}),
      ...(deps.webhookStats ? { webhookStats: deps.webhookStats } : {}),
      rateLimitRejections: () => rateLimitStats.rejected,
      knownPath: (path) => allowedMethods(path) !== undefined,
      nowSeconds: () => metricsClock.nowSeconds(),
    },
    config.metricsToken,
  );
  // Requests Node would not hand to Fastify: CONNECT (Node's default drops the connection without
  // a word) gets the API.md 405 or 404; an Expect other than 100-continue (Node's default is an
  // empty 417) is ignored, as RFC 9110 allows, and the request is served.
  app.server.on('connect', (req: { url?: string }, socket: Socket) => {
    const allow = allowedMethods(pathOf(canonicalUrl(req.url ?? '/')));
    if (allow === undefined) endSocketWithError(socket, 404, 'Page not found.');
    else
      endSocketWithError(
        socket,
        405,
        `Method Not Allowed. This URL can only handle the following request methods: ${allow}.`,
        `Allow: ${allow}\r\n`,
      );
  });
  app.server.on('checkExpectation', (req, res) => app.server.emit('request', req, res));
  collectRawBodies(app);
  overrideFromBody(app, config.bodyLimitBytes);
  app.addHook('preParsing', replayBody);
  app.addHook('onSend', wireOnSend);
  app.setErrorHandler(createErrorHandler(config.bodyLimitBytes));

  // Unknown paths are 404 (rendered in the negotiated format when it can be negotiated); known
  // paths reached with another method are 406-checked, then 405 with Allow.
  app.setNotFoundHandler(async (request: FastifyRequest, reply: FastifyReply) => {
    const allow = allowedMethods(pathOf(request.url));
    if (allow === undefined) return pageNotFound(request, reply);
    negotiate(request, reply);
    setWireHeader(reply, 'Allow', allow);
    throw new HttpError(405, `Method Not Allowed. This URL can only handle the following request methods: ${allow}.`);
  });

  const limits = createRateLimiterBackend(config.rateLimit, config.rateWindowSeconds, config.redisUrl, config.rateKeyPrefix, app.log, {
    cluster: deps.clusterRateLimit === true,
  });
  app.addHook('onClose', async () => limits.close());

  // Operational probes, outside /v1 and without a token: liveness, and readiness of the
  // database and (when configured) Redis.
  app.get('/healthz', async (_request, reply) => {
    setWireHeader(reply, 'Content-Type', JSON_TYPE);
    return reply.send({ status: 'ok' });
  });
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
      check(() => storeReady(deps.store)),
      limits.kind === 'redis' ? check(() => limits.ping()) : Promise.resolve('not configured'),
    ]);
    const ready = database === 'ok' && redis !== 'unavailable';
    setWireHeader(reply, 'Content-Type', JSON_TYPE);
    const carrier = deps.carrierState?.() ?? 'not running';
    const carriers = deps.carrierStates?.();
    return reply
      .code(ready ? 200 : 503)
      .send({ status: ready ? 'ok' : 'unavailable', database, redis, carrier, ...(carriers ? { carriers } : {}) });
  });
  // GET /openapi.json and the Swagger UI at /docs, without a token, built from the operations (src/http/docs.ts).
  registerApiDocs(app, operations);
  // GET /console, the web console (docs/guides/console.md): static files, no token, own CSP (src/http/console.ts).
  registerConsole(app, deps.consoleDir);

  // GET /metrics (Prometheus text), only when MSGSVC_METRICS_TOKEN is set and only with
  // `Authorization: Bearer <token>` (docs/guides/metrics.md); no /v1 token, no rate limit.
  if (config.metricsToken !== undefined) {
    app.get('/metrics', async (request, reply) => {
      if (!metrics.authorized(request.headers.authorization)) {
        setWireHeader(reply, 'WWW-Authenticate', 'Bearer realm="metrics"');
        return sendError(request, reply, 401, 'Your request was made with invalid credentials.');
      }
      const text = await metrics.registry.metrics();
      setWireHeader(reply, 'Content-Type', metrics.registry.contentType);
      return reply.send(text);
    });
  }

  const routeDeps = { store: deps.store, config, time: createTimeFormat(config.timeZone), clock };
  const idempotency = createIdempotency(deps.store, { now: () => clock.nowSeconds() });
  // What carriers call back (receipts, inbound texts, MMS media; docs/API.md §14.1), outside the /v1
  // scope below: no token, no rate limit, no Idempotency-Key. Only while an HTTP carrier is configured.
  registerCarrierRoutes(app, routeDeps);
  // GET /l/{code}, the short links of tracked links (docs/API.md §14.4): no token, no rate limit (src/http/links.ts).
  registerLinkRoutes(app, routeDeps);
  // /console/api/…: sign-in, the session, invites, two-factor and passkeys (docs/API.md §15.3; src/http/session.ts).
  registerSessionRoutes(app, routeDeps);
  // eslint-disable-next-line @typescript-eslint/require-await -- an async plugin: a throw while registering rejects app.ready()
  app.register(async (api) => {
    api.addHook('onRequest', negotiateHook);
    api.addHook('onRequest', createAuthenticator(deps.store, config.tokenCacheMs, clock));
    // The rate limit, then the scope step (API.md §15.2: 429 before 403), in one hook: a hook
    // costs its dispatch on every request.
    const rateLimit = createRateLimit(config.rateLimit, config.rateWindowSeconds, limits.limiter, rateLimitStats);
    api.addHook('onRequest', (request, reply, done) =>
      rateLimit(request, reply, (err) => (err ? done(err) : authorize(request, reply, done))),
    );
    api.addHook('preSerialization', fieldsHook);
    registerOperations(api, operations, routeDeps, idempotency);
  });
  // /admin/v1/…: the operator, with an operator key (docs/API.md §16.4; src/http/admin/index.ts).
  registerAdminApi(
    app,
    {
      ...routeDeps,
      ...(deps.carrierStates ? { carrierStates: deps.carrierStates } : {}),
      ...(deps.dispatcherStats ? { dispatcherStats: deps.dispatcherStats } : {}),
    },
    adminOperations,
    createRateLimit(config.rateLimit, config.rateWindowSeconds, limits.limiter, rateLimitStats),
    idempotency,
  );

  return app;
}
