import type { Store } from '../store/db.ts';
import * as audit from '../store/audit.ts';
import * as auditLog from '../store/repositories/audit-log.ts';
import { ValidationFailedError, type FieldError } from './errors.ts';
import { parseScheduleDateTime } from './schedule-time.ts';
import { messages } from './validation.ts';

/**
 * The audit log (docs/API.md §15.5): one entry for every authenticated request that is not GET or
 * HEAD, whatever its status, and for every sign-in, failed sign-in and sign-out. An entry for a
 * change commits in the change's own transaction (src/store/audit.ts). Entries never hold a
 * secret, a password or a message text: only who, from where, which operation, on which record,
 * with what status, and the request id.
 */

export type AuditEntry = audit.AuditEntry;
export { auditedStore } from '../store/audit.ts';

/** Writes an entry that no change of the request committed (a refusal or an error). */
export function writeAuditEntry(store: Store, entry: AuditEntry): Promise<number> {
  return audit.writeAuditEntry(store.db, entry);
}

/** Corrects the status of an entry written in a change's transaction. */
export function setAuditStatus(store: Store, id: number, status: number): Promise<void> {
  return audit.setAuditStatus(store.db, id, status);
}

export type AuditRow = Awaited<ReturnType<typeof auditLog.listAudit>>[number];

/**
 * The filters of `audit/index` (`Actor`, `Operation`, `from`, `to`), read from the query.
 * `from` and `to` are `YYYY-MM-DD HH:MM:SS` (or `YYYY-MM-DD`, a whole day) in the service's zone.
 * @throws ValidationFailedError `The format of From is invalid.` / `… To …`.
 */
export function auditFilter(query: (name: string) => string | string[] | undefined, timeZone: string): auditLog.AuditFilter {
  const errors: FieldError[] = [];
  const text = (name: string): string | undefined => {
    const v = query(name);
    if (v === undefined || v === '') return undefined;
    if (typeof v !== 'string') {
      errors.push({ field: name, message: messages.invalid(name) });
      return undefined;
    }
    return v;
  };
  const time = (name: string, endOfDay: boolean): number | undefined => {
    const v = text(name);
    if (v === undefined) return undefined;
    const value = /^\d{4}-\d{2}-\d{2}$/.test(v) ? `${v} ${endOfDay ? '23:59:59' : '00:00:00'}` : v;
    const ms = parseScheduleDateTime(value, timeZone);
    if (ms === null) {
      errors.push({ field: name, message: `The format of ${name === 'from' ? 'From' : 'To'} is invalid.` });
      return undefined;
    }
    return Math.floor(ms / 1000);
  };
  const f: auditLog.AuditFilter = {};
  const actor = text('Actor');
  const operation = text('Operation');
  const from = time('from', false);
  const to = time('to', true);
  if (errors.length > 0) throw new ValidationFailedError(errors);
  if (actor !== undefined) f.actor = actor;
  if (operation !== undefined) f.operation = operation;
  if (from !== undefined) f.from = from;
  if (to !== undefined) f.to = to;
  return f;
}

export function countAudit(store: Store, accountId: number, f: auditLog.AuditFilter): Promise<number> {
  return auditLog.countAudit(store.db, accountId, f);
}

export function listAudit(store: Store, accountId: number, f: auditLog.AuditFilter, limit: number, offset: number): Promise<AuditRow[]> {
  return auditLog.listAudit(store.db, accountId, f, limit, offset);
}

/** The retention (MSGSVC_AUDIT_DAYS): deletes entries older than `days` days, in batches of 1,000; returns how many. */
export async function purgeAuditLog(store: Store, nowSeconds: number, days: number): Promise<number> {
  const before = nowSeconds - days * 86_400;
  let total = 0;
  for (;;) {
    const n = await auditLog.purgeAudit(store.db, before, 1000);
    total += n;
    if (n < 1000) return total;
  }
}
