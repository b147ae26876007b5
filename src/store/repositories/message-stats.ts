import { sql } from 'kysely';
import { LOG_STATUS } from '../../records/statuses.ts';
import { DIRECTION_INBOUND, DIRECTION_OUTBOUND } from '../../records/statuses.ts';
import type { Db } from '../types.ts';

/**
 * The SQL of `sms/stats` (docs/API.md §10.9): one grouped query over the account's messages
 * created in a time range, served by the index `messages_account_created_ix` (migration 013).
 */

/** The counts of the messages created in one unit of time (see `countMessagesByUnit`). */
export interface UnitCounts {
  /** The unit's number: its first second is `start + unit × unitSeconds`. */
  unit: number;
  outbound: number;
  inbound: number;
  delivered: number;
  undelivered: number;
  failed: number;
  rejected: number;
  /** The credits of the messages that kept them: all but the Failed and Rejected (refunded or never debited). */
  credits: number;
}

const countIf = (condition: ReturnType<typeof sql>) => sql<number>`sum(case when ${condition} then 1 else 0 end)`;

/**
 * The account's messages created in [`start`, `end`) (epoch seconds), counted per unit of
 * `unitSeconds` from `start` by their status now. Only units that hold a message come back, in no
 * particular order. The same SQL runs on SQLite and PostgreSQL (integer division of bigints).
 */
export async function countMessagesByUnit(
  db: Db,
  accountId: number,
  start: number,
  end: number,
  unitSeconds: number,
): Promise<UnitCounts[]> {
  const unit = sql<number>`("created_at" - cast(${start} as bigint)) / cast(${unitSeconds} as bigint)`;
  const rows = await db
    .selectFrom('messages')
    .select([
      unit.as('unit'),
      countIf(sql`"direction" = ${sql.lit(DIRECTION_OUTBOUND)}`).as('outbound'),
      countIf(sql`"direction" = ${sql.lit(DIRECTION_INBOUND)}`).as('inbound'),
      countIf(sql`"status_id" = ${sql.lit(LOG_STATUS.DELIVERED)}`).as('delivered'),
      countIf(sql`"status_id" = ${sql.lit(LOG_STATUS.UNDELIVERED)}`).as('undelivered'),
      countIf(sql`"status_id" = ${sql.lit(LOG_STATUS.FAILED)}`).as('failed'),
      countIf(sql`"status_id" = ${sql.lit(LOG_STATUS.REJECTED)}`).as('rejected'),
      sql<number>`sum(case when "status_id" in (${sql.lit(LOG_STATUS.FAILED)}, ${sql.lit(LOG_STATUS.REJECTED)}) then 0 else "credits" end)`.as(
        'credits',
      ),
    ])
    .where('account_id', '=', accountId)
    .where('created_at', '>=', start)
    .where('created_at', '<', end)
    .groupBy(sql.ref('unit'))
    .execute();
  // PostgreSQL answers sums and bigint arithmetic as text.
  return rows.map((r) => ({
    unit: Number(r.unit),
    outbound: Number(r.outbound),
    inbound: Number(r.inbound),
    delivered: Number(r.delivered),
    undelivered: Number(r.undelivered),
    failed: Number(r.failed),
    rejected: Number(r.rejected),
    credits: Number(r.credits),
  }));
}
