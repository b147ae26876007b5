import { boundCount } from '../prepared.ts';
import type { Db } from '../types.ts';

/** The audit log's reads and its retention (docs/API.md §15.5); the writer is src/store/audit.ts. */

export interface AuditFilter {
  actor?: string;
  operation?: string;
  /** Epoch seconds, inclusive. */
  from?: number;
  to?: number;
}

function filtered(db: Db, accountId: number, f: AuditFilter) {
  let q = db.selectFrom('audit_log').where('account_id', '=', accountId);
  if (f.actor !== undefined) q = q.where('actor', '=', f.actor);
  if (f.operation !== undefined) q = q.where('operation', '=', f.operation);
  if (f.from !== undefined) q = q.where('created_at', '>=', f.from);
  if (f.to !== undefined) q = q.where('created_at', '<=', f.to);
  return q;
}

export async function countAudit(db: Db, accountId: number, f: AuditFilter): Promise<number> {
  const r = await filtered(db, accountId, f)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** A page of the account's entries, newest first. */
export async function listAudit(db: Db, accountId: number, f: AuditFilter, limit: number, offset: number) {
  return filtered(db, accountId, f).selectAll().orderBy('id', 'desc').limit(boundCount(limit)).offset(boundCount(offset)).execute();
}

/** Deletes entries older than `before` (epoch seconds), at most `batch` of them; returns how many. */
export async function purgeAudit(db: Db, before: number, batch: number): Promise<number> {
  const ids = await db
    .selectFrom('audit_log')
    .select('id')
    .where('created_at', '<', before)
    .orderBy('id')
    .limit(boundCount(batch))
    .execute();
  if (ids.length === 0) return 0;
  const r = await db
    .deleteFrom('audit_log')
    .where(
      'id',
      'in',
      ids.map((i) => i.id),
    )
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}
