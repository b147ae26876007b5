import { LOG_STATUS } from '../../records/statuses.ts';
import type { Db } from '../types.ts';

/** What GET /metrics reads from the message log (all accounts). Every function takes the db first. */

/** How many messages the log holds per status id, all accounts (one grouped count). */
export async function countMessagesByStatus(db: Db): Promise<Map<number, number>> {
  const rows = await db
    .selectFrom('messages')
    .select((eb) => ['status_id', eb.fn.countAll().as('n')])
    .groupBy('status_id')
    .execute();
  return new Map(rows.map((r) => [Number(r.status_id), Number(r.n)]));
}

/**
 * The dispatcher's queue, all accounts: how many messages are Queued (due now or later, retries
 * waiting included) and the created_at (epoch seconds) of the oldest, null when none; read through
 * the partial index of due work.
 */
export async function queuedMessages(db: Db): Promise<{ depth: number; oldest: number | null }> {
  const row = await db
    .selectFrom('messages')
    .select((eb) => [eb.fn.countAll().as('n'), eb.fn.min('created_at').as('oldest')])
    .where('due_at', 'is not', null)
    .where('status_id', '=', LOG_STATUS.QUEUED)
    .executeTakeFirst();
  return { depth: Number(row?.n ?? 0), oldest: row?.oldest == null ? null : Number(row.oldest) };
}
