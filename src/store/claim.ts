import { sql } from 'kysely';
import { isPostgres, prepareQuery } from './prepared.ts';
import type { Db } from './types.ts';

/** Tables of leased work: `due_at` (epoch ms) says when a row is due, `lease_token` who holds it. */
export type LeasedTable = 'messages' | 'scheduled_messages' | 'webhook_deliveries';

/**
 * The claim of the background workers (the dispatcher, the scheduler, the webhook deliverer;
 * API.md §11.2): up to `limit` rows with `due_at <= now`, oldest due first, leased to `token`
 * until `leaseUntil` (their `due_at` becomes the lease's end, so a worker that dies leaves them due
 * again then), in ONE autocommit statement per store, committed on return: PostgreSQL picks the
 * rows `FOR UPDATE SKIP LOCKED` (rows another worker is claiming are skipped), SQLite runs one
 * `UPDATE … WHERE id IN (SELECT … LIMIT n) RETURNING` (one writer at a time). No two workers hold
 * the same row.
 * @param columns the columns returned for each claimed row.
 * @param countAttempt also add one to `attempts`.
 * @returns `claim(db, now, limit, leaseUntil, token)`: the claimed rows.
 */
export function leaseClaim<R>(table: LeasedTable, columns: readonly string[], countAttempt: boolean) {
  const attempts = countAttempt ? sql`, attempts = attempts + 1` : sql``;
  const attemptsT = countAttempt ? sql`, attempts = t.attempts + 1` : sql``;
  const query = prepareQuery((db, now: number, limit: number, leaseUntil: number, token: string) => ({
    compile: () =>
      (isPostgres(db)
        ? sql`with due as materialized (
              select id from ${sql.table(table)} where due_at <= ${now} order by due_at limit ${limit} for update skip locked)
            update ${sql.table(table)} t set due_at = ${leaseUntil}, lease_token = ${token}${attemptsT}
            from due where t.id = due.id
            returning ${sql.raw(columns.map((c) => `t.${c}`).join(', '))}`
        : sql`update ${sql.table(table)} set due_at = ${leaseUntil}, lease_token = ${token}${attempts}
            where id in (select id from ${sql.table(table)} where due_at <= ${now} order by due_at limit ${limit})
            returning ${sql.raw(columns.join(', '))}`
      ).compile(db),
  }));
  return (db: Db, now: number, limit: number, leaseUntil: number, token: string): Promise<R[]> =>
    query.all(db, now, limit, leaseUntil, token) as Promise<R[]>;
}
