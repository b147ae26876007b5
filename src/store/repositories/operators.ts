import { sql } from 'kysely';
import { boundCount, prepareQuery } from '../prepared.ts';
import type { Db } from '../types.ts';
import type { AuditFilter } from './audit-log.ts';

/**
 * The operator's side (docs/API.md §16.4): operator keys (`operator_keys`, only their SHA-256
 * hash), the audit log of every account, and what the carriers did in a time range. Every function
 * takes the db (or a transaction) first.
 */

/** An operator key as listed: never its hash. Times in epoch seconds. */
export interface OperatorKeyRow {
  id: number;
  name: string;
  prefix: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

function keyRow(r: OperatorKeyRow): OperatorKeyRow {
  return {
    id: Number(r.id),
    name: r.name,
    prefix: r.prefix,
    created_at: Number(r.created_at),
    last_used_at: r.last_used_at === null ? null : Number(r.last_used_at),
    revoked_at: r.revoked_at === null ? null : Number(r.revoked_at),
  };
}

const KEY_COLUMNS = ['id', 'name', 'prefix', 'created_at', 'last_used_at', 'revoked_at'] as const;

/** Stores a new operator key by the hash of its secret; returns its id. */
export async function insertOperatorKey(db: Db, k: { name: string; hash: string; prefix: string; now: number }): Promise<number> {
  const { id } = await db
    .insertInto('operator_keys')
    .values({ name: k.name, token_hash: k.hash, prefix: k.prefix, created_at: k.now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(id);
}

/** Every operator key, revoked ones included, by id. */
export async function listOperatorKeys(db: Db): Promise<OperatorKeyRow[]> {
  const rows = await db.selectFrom('operator_keys').select(KEY_COLUMNS).orderBy('id').execute();
  return rows.map(keyRow);
}

export async function findOperatorKey(db: Db, id: number): Promise<OperatorKeyRow | undefined> {
  const row = await db.selectFrom('operator_keys').select(KEY_COLUMNS).where('id', '=', id).executeTakeFirst();
  return row && keyRow(row);
}

const liveByHash = prepareQuery((db, hash: string) =>
  db
    .selectFrom('operator_keys')
    .select([...KEY_COLUMNS, 'token_hash'])
    .where('token_hash', '=', hash)
    .where('revoked_at', 'is', null),
);

/** The live (not revoked) operator key whose secret hashes to `hash`, with that hash. */
export async function findLiveOperatorKey(db: Db, hash: string): Promise<(OperatorKeyRow & { token_hash: string }) | undefined> {
  const row = await liveByHash.first(db, hash);
  return row && { ...keyRow(row), token_hash: row.token_hash };
}

/** Revokes a live key; returns how many were revoked (0 or 1). */
export async function revokeOperatorKey(db: Db, id: number, now: number): Promise<number> {
  const res = await db
    .updateTable('operator_keys')
    .set({ revoked_at: now })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/** Records a key's last use. */
export async function touchOperatorKey(db: Db, id: number, now: number): Promise<void> {
  await db.updateTable('operator_keys').set({ last_used_at: now }).where('id', '=', id).execute();
}

/** The filters of the operator's audit/index: those of /v1/audit/index plus the account. */
export interface AllAuditFilter extends AuditFilter {
  accountId?: number;
}

function allAudit(db: Db, f: AllAuditFilter) {
  let q = db.selectFrom('audit_log');
  if (f.accountId !== undefined) q = q.where('account_id', '=', f.accountId);
  if (f.actor !== undefined) q = q.where('actor', '=', f.actor);
  if (f.operation !== undefined) q = q.where('operation', '=', f.operation);
  if (f.from !== undefined) q = q.where('created_at', '>=', f.from);
  if (f.to !== undefined) q = q.where('created_at', '<=', f.to);
  return q;
}

export async function countAllAudit(db: Db, f: AllAuditFilter): Promise<number> {
  const r = await allAudit(db, f)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** A page of every account's entries (or one account's), newest first. */
export async function listAllAudit(db: Db, f: AllAuditFilter, limit: number, offset: number) {
  return allAudit(db, f).selectAll().orderBy('id', 'desc').limit(boundCount(limit)).offset(boundCount(offset)).execute();
}

/** What one carrier did since a moment: messages it accepted, and how many of those then failed. */
export interface CarrierActivityRow {
  carrier: string;
  submitted: number;
  failed: number;
}

/**
 * Per carrier name, the outbound messages it accepted (`sent_at`, set when the carrier took the
 * message) at or after `since` (epoch seconds), and how many of those ended Undelivered (4) or
 * Failed (5). One grouped count over the message log of every account and every instance.
 */
export async function carrierActivity(db: Db, since: number): Promise<CarrierActivityRow[]> {
  const { rows } = await sql<CarrierActivityRow>`
    select carrier, count(*) as submitted,
      coalesce(sum(case when status_id in (4, 5) then 1 else 0 end), 0) as failed
    from messages
    where direction = 1 and carrier is not null and sent_at >= ${since}
    group by carrier`.execute(db);
  return rows.map((r) => ({ carrier: r.carrier, submitted: Number(r.submitted), failed: Number(r.failed) }));
}
