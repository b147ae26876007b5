import { setBeforeCommit } from './db.ts';
import { prepareQuery } from './prepared.ts';
import type { Db } from './types.ts';

/**
 * The audit log's writer (docs/API.md §15.5). A request that changes something runs its handler
 * with `auditedStore(store, entry)`, a view of the store that carries the request's entry; the
 * first transaction committed through that view (inTransaction in db.ts) writes the entry inside
 * itself, just before COMMIT: the change and its entry commit together or not at all, across
 * kill -9. A request that commits no transaction of its own (a refusal, an error) gets its entry
 * written on its own (`writeAuditEntry`).
 *
 * Why a view and not AsyncLocalStorage: on Node 20 one `AsyncLocalStorage.run` turns on promise
 * hooks for the whole process, for good, and every promise of every request then costs more
 * (measured here: a promise-bound loop 2.5–4 × slower). The view costs one object per write.
 */

/** One entry, as the request knows it. */
export interface AuditEntry {
  accountId: number;
  /** `key:{Id}:{Name}`, `user:{Id}:{Email}`, `operator:{Id}:{Name}` or `system`. */
  actor: string;
  ip: string;
  /** The OpenAPI operationId, or `session.create` / `session.delete`. */
  operation: string;
  /** The record's id (`""` when none): the `id` parameter, else the id of what the first transaction returned. */
  objectId: string;
  /** The HTTP status expected on success; corrected after the response when it differs. */
  status: number;
  requestId: string;
  /** Epoch seconds of the entry. */
  at: number;
  /** The row written, once written. */
  entryId?: number;
}

const kEntry = Symbol('msgsvc.auditEntry');

/**
 * A view of `store` (same database, same connection) whose first committed transaction writes
 * `entry`: hand it to the domain functions of one request.
 */
export function auditedStore<S extends object>(store: S, entry: AuditEntry): S {
  const view = Object.create(store) as S & { [kEntry]?: AuditEntry };
  view[kEntry] = entry;
  return view;
}

/** The id of a transaction's result, when it is a row or holds one (`{ id }`, `{ row: { id } }`). */
function idOf(result: unknown): string {
  if (typeof result !== 'object' || result === null) return '';
  const r = result as { id?: unknown; row?: { id?: unknown } };
  if (typeof r.id === 'number' || typeof r.id === 'string') return String(r.id);
  if (typeof r.row === 'object' && r.row !== null && (typeof r.row.id === 'number' || typeof r.row.id === 'string'))
    return String(r.row.id);
  return '';
}

/**
 * Runs inside every transaction of inTransaction just before COMMIT (registered below): writes the
 * entry of the request whose store view (`auditedStore`) runs this transaction, if not written
 * yet. Returns undefined (no promise) for every other transaction.
 */
function auditBeforeCommit(store: object, tx: Db, result: unknown): Promise<void> | undefined {
  const entry = (store as { [kEntry]?: AuditEntry })[kEntry];
  if (entry === undefined || entry.entryId !== undefined) return undefined;
  if (entry.objectId === '') entry.objectId = idOf(result);
  // No account, no entry: an operator's write that names no account (§16.4) has no log to go to.
  if (entry.accountId <= 0) return undefined;
  return insertEntry(tx, entry).then((id) => {
    entry.entryId = id;
  });
}
setBeforeCommit(auditBeforeCommit);

/** Writes `entry` on its own (no change of the request committed it). */
export async function writeAuditEntry(db: Db, entry: AuditEntry): Promise<number> {
  entry.entryId = await insertEntry(db, entry);
  return entry.entryId;
}

/** Sets the status of an entry already written (the response's status differed from the expected one). */
export async function setAuditStatus(db: Db, id: number, status: number): Promise<void> {
  await db.updateTable('audit_log').set({ status }).where('id', '=', id).execute();
}

// Compiled once (src/store/prepared.ts): a write pays for one more INSERT, not for building one.
const insert = prepareQuery(
  (db, accountId: number, at: number, actor: string, ip: string, operation: string, objectId: string, status: number, requestId: string) =>
    db
      .insertInto('audit_log')
      .values({ account_id: accountId, created_at: at, actor, ip, operation, object_id: objectId, status, request_id: requestId })
      .returning('id'),
);

async function insertEntry(db: Db, e: AuditEntry): Promise<number> {
  const row = await insert.first(
    db,
    e.accountId,
    e.at,
    e.actor,
    e.ip,
    e.operation,
    e.objectId.slice(0, 255),
    e.status,
    e.requestId.slice(0, 255),
  );
  return Number(row!.id);
}
