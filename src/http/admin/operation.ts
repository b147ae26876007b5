import type { FastifyReply, FastifyRequest } from 'fastify';
import { viewAccount, type AccountRecordRow } from '../../domain/account-admin.ts';
import { auditedStore, setAuditStatus, writeAuditEntry, type AuditEntry } from '../../domain/audit.ts';
import { NotFoundError } from '../../domain/errors.ts';
import type { Resource } from '../../domain/scopes.ts';
import type { Store } from '../../domain/store.ts';
import { toId } from '../../domain/validation.ts';
import { systemClock } from '../../lib/time.ts';
import { defineOperation, operationIdOf, operationOf, type Operation, type OperationContext, type RouteDeps } from '../operation.ts';

/**
 * The operator's operations (docs/API.md §16.4, `/admin/v1/…`) are ordinary operation descriptors
 * (src/http/operation.ts), registered by the same `registerOperations` in a scope of their own
 * (src/http/admin/index.ts), so docs/API.md §2 to §5 apply to them unchanged: negotiation, errors, 422
 * lists, pagination, `fields=`, 405 with Allow.
 *
 * Their scope. Every descriptor names a resource; an operator operation's is `admin`, a marker kept
 * outside RESOURCES (src/domain/scopes.ts): its scopes, `admin:read` and `admin:write`, are no
 * scope an account key can be given (keys/create refuses a scope outside the list), no role holds
 * them, and only the `/admin/v1` scope's own step (authorizeOperator) grants them, to an operator
 * key alone. `/v1`'s scope step never sees them: the two registries are separate, and app.ts
 * refuses to start if an operation sits in the wrong one.
 */

/** The marker resource of every `/admin/v1` operation (outside RESOURCES on purpose; see above). */
export const ADMIN_RESOURCE = 'admin' as unknown as Resource;

/** The path every operator operation lives under. */
export const ADMIN_PREFIX = '/admin/v1/';

type AdminOperationInput = Omit<Parameters<typeof defineOperation>[0], 'resource'>;

/**
 * Declares an operator operation: as defineOperation, with the `admin` marker for its scope
 * (`admin:read` for GET, `admin:write` otherwise). Its path must be `/admin/v1/<controller>/<action>`.
 */
export function defineAdminOperation(op: AdminOperationInput): Operation {
  if (!op.path.startsWith(ADMIN_PREFIX)) throw new Error(`operator operation ${op.id}: path ${op.path} is not under ${ADMIN_PREFIX}`);
  // Every POST honours Idempotency-Key, here as on /v1 (API.md §7), its keys the operator key's.
  return defineOperation({ ...op, resource: ADMIN_RESOURCE, idempotent: op.idempotent ?? op.methods.includes('POST') });
}

/** True for an operator operation (declared by defineAdminOperation). */
export function isAdminOperation(op: Operation): boolean {
  return op.resource === ADMIN_RESOURCE;
}

/** What the operator's operations need besides the routes' deps: this process's view of the carriers. */
export interface AdminRouteDeps extends RouteDeps {
  /** Each carrier's state by name (`ok` or `unavailable`), where a dispatcher runs in this process (or its primary). */
  carrierStates?: () => Readonly<Record<string, string>> | undefined;
  /** The counters of the dispatcher running in this process (its submits in flight per carrier). */
  dispatcherStats?: () => { carriers: Readonly<Record<string, { inFlight: number }>> } | undefined;
}

/** The largest row id either store keeps (PostgreSQL `integer`): a larger `id` names no account. */
const MAX_ROW_ID = 2_147_483_647;

/**
 * The account `?id=` names, any account (sub-accounts and closed ones included).
 * @throws HttpError 400 (missing or not an integer); NotFoundError `Object not found: {id}`.
 */
export async function accountOf(deps: Pick<RouteDeps, 'store'>, ctx: OperationContext): Promise<AccountRecordRow> {
  const id = ctx.id();
  const n = toId(id);
  if (n === null || n > MAX_ROW_ID) throw new NotFoundError(id);
  return viewAccount(deps, undefined, id);
}

/**
 * The audit entry of an operator's write (docs/API.md §16.4): it goes into the log of the account
 * the write touches, with Actor `operator:{Id}:{Name}`. That account is known before the write
 * (`?id=`, a number's holder), or, for `accounts/create`, only once the account exists: then it is
 * the id the write's first transaction returned (ObjectId), read when the entry is written inside
 * that very transaction (src/store/audit.ts). An entry whose account is still unknown (0) is never
 * written: a refused `accounts/create`, a request for an account or number that does not exist.
 */
export class OperatorAuditEntry implements AuditEntry {
  #accountId: number;
  /** True when the account is the record the write makes (accounts/create): its id becomes ObjectId at commit. */
  readonly #madeAccount: boolean;
  actor: string;
  ip: string;
  operation: string;
  objectId: string;
  status: number;
  requestId: string;
  at: number;
  entryId?: number;

  constructor(init: Omit<AuditEntry, 'entryId'>, madeAccount = false) {
    this.#accountId = init.accountId;
    this.#madeAccount = madeAccount;
    this.actor = init.actor;
    this.ip = init.ip;
    this.operation = init.operation;
    this.objectId = init.objectId;
    this.status = init.status;
    this.requestId = init.requestId;
    this.at = init.at;
  }

  /** The account whose log holds the entry: the one named up front, else the record the write made. */
  get accountId(): number {
    if (this.#accountId > 0 || !this.#madeAccount) return this.#accountId;
    const made = toId(this.objectId);
    return made === null ? 0 : made;
  }

  set accountId(value: number) {
    this.#accountId = value;
  }
}

/**
 * What an operator's write touches: the account whose log gets the entry (an existing account; or
 * `created`, the account the write makes), and ObjectId (default: the `id` parameter, else the id
 * of what the first transaction returned). No account: no entry.
 */
export interface OperatorTarget {
  account?: number | 'created';
  objectId?: string;
}

/**
 * Runs an operator's write (any method but GET and HEAD) with its audit entry: `run` gets the
 * route's deps over a store that writes the entry inside the first transaction it commits, so the
 * change and its entry commit together (docs/API.md §15.5). A write that committed no transaction
 * gets its entry on its own afterwards; a refusal gets it from the scope's onResponse hook
 * (operatorAuditHook), with its status.
 */
export async function operatorWrite<D extends RouteDeps, T>(
  deps: D,
  ctx: OperationContext,
  target: OperatorTarget,
  run: (deps: D) => Promise<T>,
): Promise<T> {
  const op = operationOf(ctx.request);
  const request = ctx.request;
  const id = request.queryParams.get('id');
  const entry = new OperatorAuditEntry(
    {
      accountId: typeof target.account === 'number' ? target.account : 0,
      actor: request.principal.actor,
      ip: request.ip,
      operation: op ? operationIdOf(op, request.method) : (request.routeOptions.url ?? ''),
      objectId: target.objectId ?? (typeof id === 'string' ? id : ''),
      status: op?.success ?? 200,
      requestId: request.id,
      at: (deps.clock ?? systemClock).nowSeconds(),
    },
    target.account === 'created',
  );
  request.auditEntry = entry;
  const result = await run({ ...deps, store: auditedStore(deps.store, entry) });
  if (entry.entryId === undefined && entry.accountId > 0) await writeAuditEntry(deps.store, entry);
  return result;
}

/**
 * A second entry of the same write in another account's log (a number moved from one account to
 * another is in both logs), written after the change.
 */
export async function alsoAudit(store: Store, ctx: OperationContext, accountId: number): Promise<void> {
  const first = ctx.request.auditEntry;
  if (!(first instanceof OperatorAuditEntry)) return;
  const copy = new OperatorAuditEntry({
    accountId,
    actor: first.actor,
    ip: first.ip,
    operation: first.operation,
    objectId: first.objectId,
    status: first.status,
    requestId: first.requestId,
    at: first.at,
  });
  await writeAuditEntry(store, copy);
}

/**
 * onResponse of the `/admin/v1` scope: an operator's entry already committed with its change gets
 * the response's status when it differs; an entry not written (the write was refused: 404, 422, …)
 * is written now with that status, when the account it concerns is known.
 */
export function operatorAuditHook(store: Store) {
  return function operatorAudit(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
    const entry = request.auditEntry;
    if (!(entry instanceof OperatorAuditEntry)) return done();
    const status = reply.statusCode;
    let write: Promise<unknown> | undefined;
    if (entry.entryId !== undefined) {
      if (entry.status !== status) write = setAuditStatus(store, entry.entryId, status);
    } else if (entry.accountId > 0) {
      entry.status = status;
      write = writeAuditEntry(store, entry);
    }
    if (write) write.catch((err: unknown) => request.log.error({ err, reqId: request.id }, 'audit entry not written'));
    done();
  };
}
