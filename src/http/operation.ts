import { PassThrough, Readable, Transform } from 'node:stream';
import type { TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import type { Input } from '../domain/validation.ts';
import type { Clock, TimeFormat } from '../lib/time.ts';
import type { Store } from '../domain/store.ts';
import { scopeOf, type Resource, type Scope } from '../domain/scopes.ts';
import type { Principal } from '../domain/principal.ts';
import { auditedStore, writeAuditEntry, type AuditEntry } from '../domain/audit.ts';
import { systemClock } from '../lib/time.ts';
import { readBody } from './plugins/body.ts';
import { requiredId, requiredParam } from './params.ts';
import { resolvePage, setPaginationHeaders } from './serializers/pagination.ts';
import { HttpError, JSON_TYPE, setWireHeader } from './wire.ts';
import type { IdempotencyHooks } from './plugins/idempotency.ts';

/**
 * The route model: every operation of the API is one declarative descriptor (`defineOperation`),
 * and `registerOperations` turns descriptors into Fastify routes. The cross-cutting steps read
 * the descriptor from the route's options (`request.routeOptions.config.operation`):
 * negotiation (records vs bytes), the body (its kind and its own size limit), the success status
 * (200, 201 with `Location`, 204) and Idempotency-Key. The request path stays as API.md §1.5
 * orders it: routing 404 → 406 → 405 → 401 → 429 → handler (400 → 404 / 422 → success).
 */

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * What a request body may be:
 * - `json-or-form`: JSON or form-urlencoded fields (API.md §3.2), parsed when the handler asks;
 * - `csv`, `multipart`: the raw bytes as a stream, never held whole (import, media upload);
 * - `none`: reads and deletes; a body sent anyway is ignored.
 */
export type BodyKind = 'json-or-form' | 'multipart' | 'csv' | 'none';

/** What a route needs from the application: its store, settings and time rendering. */
export interface RouteDeps {
  store: Store;
  config: Config;
  /** Renders stored epoch seconds in the configured zone (API.md §9). */
  time: TimeFormat;
  /** The time source of the domain (issue 11: injected so tests move time); absent: the system clock. */
  clock?: Clock;
}

/** A request as an operation's handler sees it. */
export interface OperationContext {
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
  /** The authenticated account; every query is scoped to it. */
  readonly accountId: number;
  /** Who the request acts as: a key or a person, with the scopes held (API.md §15). */
  readonly principal: Principal;
  /** The negotiated response format (API.md §2). */
  readonly format: 'json' | 'xml';
  /**
   * The required `id` query parameter as canonical integer text.
   * @throws HttpError 400 `Missing required parameters: id` / `Invalid data received for parameter "id".`
   */
  id(): string;
  /**
   * A required query parameter as text.
   * @throws HttpError 400 when missing or sent as an array.
   */
  param(name: string): string;
  /** An optional query parameter: text, a list (for `key[]=`), or undefined. */
  query(name: string): string | string[] | undefined;
  /**
   * The body's fields (`json-or-form` operations).
   * @throws HttpError 400 bad JSON, 415 another content type (API.md §4, §3.2).
   */
  body(): Input;
  /**
   * The body's bytes as a stream, with the declared media type (`csv` and `multipart`
   * operations). The stream fails with HttpError 413 past the operation's body limit.
   */
  stream(): { mediaType: string; contentType: string; bytes: Readable };
  /**
   * Serves one page of a list (API.md §5): resolves the page from `total`, fetches its rows,
   * sets X-Pagination-* and Link, and returns the rows mapped to records.
   *
   * `json` (optional): the same page as finished JSON text, when the store can build it (SQLite's
   * json_group_array; undefined otherwise). Used only where it gives the very bytes the records
   * would: a JSON response without `fields=`, times in UTC. The text is then the response body.
   */
  paginate<Row, R>(
    total: number,
    fetch: (limit: number, offset: number) => Promise<Row[]>,
    map: (row: Row) => R,
    json?: (limit: number, offset: number) => Promise<string | undefined>,
  ): Promise<R[] | string>;
}

/** One operation of the API, declared once. */
export interface Operation {
  /** Stable operation id, `controller.action` (`groups.update`): logs and the OpenAPI operationId. */
  readonly id: string;
  /** `/v1/<controller>/<action>`. */
  readonly path: string;
  /** Methods it answers; GET also answers HEAD (API.md §1.4). */
  readonly methods: readonly Method[];
  /**
   * The resource whose scope it needs (API.md §15.1): required, so that no operation can be
   * declared without a scope.
   */
  readonly resource: Resource;
  /**
   * The scope a credential must hold: `{resource}:read` for GET, `{resource}:write` otherwise
   * (derived from `resource` and `methods` by defineOperation; `x-scope` in the OpenAPI document).
   */
  readonly scope: Scope;
  /** One line saying what it does (OpenAPI summary). */
  readonly summary: string;
  /** Its body: kind, and its own size limit in bytes (default: MSGSVC_BODY_LIMIT). */
  readonly body: { readonly kind: BodyKind; readonly limitBytes?: (config: Config) => number };
  /**
   * What a success carries: `record`, a record or list rendered in the negotiated JSON/XML;
   * `bytes`, a stored media's bytes with its own image Content-Type and `Range` (media/download);
   * `csv`, a CSV file (`text/csv`, sms/export). For `bytes` and `csv` only the errors are
   * negotiated: an Accept of neither JSON nor XML is not refused (errors then in JSON).
   */
  readonly produces: 'record' | 'bytes' | 'csv';
  /** Success status: 200, 201 (with `Location` when `location` is set) or 204 (empty body). */
  readonly success: 200 | 201 | 204;
  /**
   * For 201: the path of the view action of the created record. `Location` is
   * `<scheme>://<host><location>?id=<Id>`, with Id taken from the record (or the first record of
   * a list) (API.md §1.4).
   */
  readonly location?: string;
  /** Honours the Idempotency-Key header (API.md §7). */
  readonly idempotent: boolean;
  /**
   * The query parameter that names the record acted on, the audit entry's ObjectId (API.md §15.5):
   * `id` (the default), or `number` for the numbers addressed by their number (API.md §17).
   */
  readonly objectParam?: string;
  /**
   * When the operation exists at all under this configuration (default: always). A disabled
   * operation is not registered: its path is unknown (404 `Page not found.` before any other
   * check), as `sandbox/inbound` is when the sandbox is not the carrier (API.md §11.3).
   */
  readonly enabled?: (config: Config) => boolean;
  /**
   * TypeBox schemas: the query and body it reads (documentation and OpenAPI; the checks and their
   * exact Yii2 messages come from the domain's validation rules) and the success response, which
   * Fastify compiles into the JSON serialiser.
   */
  readonly schema: { readonly query?: TSchema; readonly body?: TSchema; readonly response?: TSchema };
  /** Builds the handler once per application; the handler returns what the response carries. */
  readonly handler: (deps: RouteDeps) => (ctx: OperationContext) => Promise<unknown>;
}

type OperationInput = Omit<Operation, 'body' | 'produces' | 'idempotent' | 'schema' | 'scope'> &
  Partial<Pick<Operation, 'body' | 'produces' | 'idempotent' | 'schema'>>;

/**
 * Declares an operation. Defaults: a `json-or-form` body for writes and none for reads, a record
 * response, no Idempotency-Key.
 */
export function defineOperation(op: OperationInput): Operation {
  const writes = op.methods.some((m) => m === 'POST' || m === 'PUT' || m === 'PATCH');
  return {
    ...op,
    scope: scopeOf(op.resource, op.methods),
    body: op.body ?? { kind: writes ? 'json-or-form' : 'none' },
    produces: op.produces ?? 'record',
    idempotent: op.idempotent ?? false,
    schema: op.schema ?? {},
  };
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The audit entry of a request that is not GET or HEAD (API.md §15.5), once its handler started. */
    auditEntry: AuditEntry | undefined;
  }
  interface FastifyContextConfig {
    /** The descriptor of the operation this route serves (absent on /healthz, /readyz). */
    operation?: Operation;
  }
}

/** The operation a request was routed to, if any. */
export function operationOf(request: FastifyRequest): Operation | undefined {
  return request.routeOptions.config.operation;
}

interface StreamedBody {
  mediaType: string;
  contentType: string;
  stream: Readable;
}

/** Counts bytes through and fails with 413 past `limit`. */
function limitBytes(limit: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > limit) callback(new HttpError(413, `Request Entity Too Large: the body is over the limit of ${limit} bytes.`));
      else callback(null, chunk);
    },
  });
}

class Context implements OperationContext {
  constructor(
    readonly request: FastifyRequest,
    readonly reply: FastifyReply,
    private readonly op: Operation,
    private readonly bodyLimit: number,
  ) {}
  get accountId() {
    return this.request.accountId;
  }
  get principal() {
    return this.request.principal;
  }
  get format() {
    return this.request.format;
  }
  id() {
    return requiredId(this.request);
  }
  param(name: string) {
    return requiredParam(this.request, name);
  }
  query(name: string) {
    const v = this.request.queryParams.get(name);
    return v === undefined ? undefined : Array.isArray(v) ? v.map(String) : v;
  }
  body() {
    return readBody(this.request);
  }
  stream() {
    const body = this.request.body as StreamedBody | undefined;
    if (!body) return { mediaType: '', contentType: '', bytes: Readable.from([]) };
    const out = new PassThrough();
    const limiter = limitBytes(this.bodyLimit);
    body.stream.on('error', (err) => out.destroy(err));
    limiter.on('error', (err) => out.destroy(err));
    body.stream.pipe(limiter).pipe(out);
    return { mediaType: body.mediaType, contentType: body.contentType, bytes: out };
  }
  async paginate<Row, R>(
    total: number,
    fetch: (limit: number, offset: number) => Promise<Row[]>,
    map: (row: Row) => R,
    json?: (limit: number, offset: number) => Promise<string | undefined>,
  ): Promise<R[] | string> {
    const page = resolvePage(this.request, total);
    if (json !== undefined && this.request.format === 'json' && this.request.queryParams.get('fields') === undefined) {
      const text = await json(page.size, page.offset);
      if (text !== undefined) {
        setPaginationHeaders(this.request, this.reply, page);
        // A string is sent as it is (no serializer); Fastify would otherwise label it text/plain.
        this.reply.header('Content-Type', JSON_TYPE);
        return text;
      }
    }
    const rows = await fetch(page.size, page.offset);
    setPaginationHeaders(this.request, this.reply, page);
    return rows.map(map);
  }
  toString() {
    return this.op.id;
  }
}

/** The OpenAPI operationId of `op` as reached with `method`: `groups.update`, `groups.update.patch` (API.md §15.5 Operation). */
export function operationIdOf(op: Operation, method: string): string {
  const index = op.methods.indexOf(method as Method);
  return index <= 0 ? op.id : `${op.id}.${method.toLowerCase()}`;
}

/**
 * A new audit entry for a request to `op` by its principal (API.md §15.5): ObjectId is the `id`
 * parameter (the operation's `objectParam`) when one was sent, else the id of the record the
 * change makes (filled in at commit).
 */
export function auditEntryOf(request: FastifyRequest, op: Operation | undefined, status: number, at: number): AuditEntry {
  const id = request.queryParams.get(op?.objectParam ?? 'id');
  return {
    accountId: request.principal.accountId,
    actor: request.principal.actor,
    ip: request.ip,
    operation: op ? operationIdOf(op, request.method) : (request.routeOptions.url ?? ''),
    objectId: typeof id === 'string' ? id : '',
    status,
    requestId: request.id,
    at,
  };
}

/** `<scheme>://<host><path>?id=<id>`: the Location of a created record (API.md §1.4). */
function locationOf(request: FastifyRequest, path: string, result: unknown): string | undefined {
  // The created record (src/records/): an Id is a number, or text; String() writes either as is.
  const record = (Array.isArray(result) ? result[0] : result) as { Id?: number | string } | undefined;
  if (record?.Id === undefined) return undefined;
  return `${request.protocol}://${request.host}${path}?id=${String(record.Id)}`;
}

/** The Location value a created record gets, for a 201 operation (used by replays too). */
export { locationOf };

function route(app: FastifyInstance, op: Operation, deps: RouteDeps, idempotency: IdempotencyHooks | undefined): void {
  const handle = op.handler(deps);
  const bodyLimit = op.body.limitBytes?.(deps.config) ?? deps.config.bodyLimitBytes;
  const response = op.success !== 204 && op.schema.response ? { response: { [op.success]: op.schema.response } } : {};
  app.route({
    method: [...op.methods],
    url: op.path,
    bodyLimit,
    config: { operation: op },
    schema: response,
    ...(op.idempotent && idempotency ? { preHandler: idempotency.preHandler, preSerialization: idempotency.preSerialization } : {}),
    handler: async (request, reply) => {
      const context = new Context(request, reply, op, bodyLimit);
      let result: unknown;
      // (A route registered without the authentication step, as some tests do, has no one to audit.)
      if (request.method === 'GET' || request.method === 'HEAD' || !request.principal?.accountId) result = await handle(context);
      else {
        // API.md §15.5: the entry commits in the change's own transaction (the first the handler
        // commits); a handler that committed none still gets its entry before its answer.
        const entry = auditEntryOf(request, op, op.success, (deps.clock ?? systemClock).nowSeconds());
        request.auditEntry = entry;
        // The handler is built for this request over a store view that carries the entry (its
        // factory only gathers dependencies): the first transaction it commits writes the entry.
        result = await op.handler({ ...deps, store: auditedStore(deps.store, entry) })(context);
        if (entry.entryId === undefined) {
          // Nothing committed a transaction (a change that needed none, or none at all): the entry
          // on its own, naming the record the reply holds.
          const record = (Array.isArray(result) ? result[0] : result) as { Id?: unknown } | undefined;
          if (entry.objectId === '' && (typeof record?.Id === 'number' || typeof record?.Id === 'string'))
            entry.objectId = String(record.Id);
          await writeAuditEntry(deps.store, entry);
        }
      }
      // Idempotency-Key keeps the result as returned, before `fields=` picks from it (API.md §7).
      if (op.idempotent) idempotency?.handled(request, result);
      if (op.success === 204) {
        reply.code(204);
        return reply.send();
      }
      if (op.success === 201) {
        reply.code(201);
        const location = op.location ? locationOf(request, op.location, result) : undefined;
        if (location !== undefined) setWireHeader(reply, 'Location', location);
      }
      return result;
    },
  });
}

/**
 * Registers operations on `app` (a scope that already carries negotiation, auth and the rate
 * limit). Streamed-body operations (`csv`, `multipart`) get a child scope whose content-type
 * parser hands the handler the unread stream instead of collecting the body.
 */
export function registerOperations(app: FastifyInstance, ops: readonly Operation[], deps: RouteDeps, idempotency?: IdempotencyHooks): void {
  const streamed = ops.filter((op) => op.body.kind === 'csv' || op.body.kind === 'multipart');
  for (const op of ops) if (!streamed.includes(op)) route(app, op, deps, idempotency);
  if (streamed.length === 0) return;
  // eslint-disable-next-line @typescript-eslint/require-await -- an async plugin: a throw while registering rejects app.ready()
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (request, payload, done) => {
      const contentType = request.headers['content-type'] ?? '';
      // API.md §3.2: the media type is compared exactly, lower case, up to any `;` (no trimming):
      // `Text/CSV` or `text/csv ;charset=utf-8` is not text/csv.
      const semicolon = contentType.indexOf(';');
      const mediaType = semicolon === -1 ? contentType : contentType.slice(0, semicolon);
      // A body declared larger than the limit is refused before a byte of it is read.
      const declared = Number(request.headers['content-length']);
      const limit = request.routeOptions.bodyLimit ?? deps.config.bodyLimitBytes;
      if (Number.isFinite(declared) && declared > limit) {
        payload.resume();
        return done(new HttpError(413, `Request Entity Too Large: the body is over the limit of ${limit} bytes.`), undefined);
      }
      done(null, { mediaType, contentType, stream: payload } satisfies StreamedBody);
    });
    for (const op of streamed) route(scope, op, deps, idempotency);
  });
}

/**
 * The `Allow` value of a path (API.md §1.4: GET also answers HEAD), or undefined for an unknown
 * path. A path served by several operations (`/v1/account/settings`: a read and an update) allows
 * the methods of each, in registry order.
 */
export function allowOf(ops: readonly Operation[], path: string): string | undefined {
  const same = ops.filter((o) => o.path === path);
  if (same.length === 0) return undefined;
  return same.flatMap((op) => op.methods.flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m]))).join(', ');
}
