import { sql } from 'kysely';
import { boundCount, isPostgres } from '../prepared.ts';
import { MESSAGE_COLUMNS, type MessageRow } from '../../records/messages.ts';
import type { Db } from '../types.ts';
import type { MessageFilter } from './message-log.ts';

/**
 * The message log read for `sms/export` (docs/API.md §10.9): the account's messages matching
 * sms/index's filters and a `DateCreated` range, newest first, one keyset batch at a time.
 */

/** sms/index's filters (validated; `batchId` the account's or no row matches) and a range of `created_at`, epoch seconds, both ends included. */
export interface MessageExportFilter extends MessageFilter {
  from?: number;
  to?: number;
}

/**
 * Up to `limit` of the account's messages matching `f` with an id below `beforeId` (all of them
 * when undefined), by id descending: the next batch of an export after the one that ended at
 * `beforeId`. Each batch is one index range read from where the last one stopped, so an export
 * reads the log once, however many batches it takes (a batch never skips or repeats a row).
 *
 * The range on `created_at` is written `created_at + 0` so that neither store reads it through
 * `messages_account_created_ix`: that index gives the rows in time order, to be sorted by id
 * again for every batch, which over a wide range makes the export quadratic. Read through the
 * id-ordered indexes (`messages_account_id_uq`, or the filter's `(account_id, …, id)` index) a
 * batch stops after `limit` matches.
 *
 * PostgreSQL: run it in a transaction (the caller's, as always). There it first sets
 * `enable_sort = off` for that transaction alone: with no statistics yet on the rows (a log
 * loaded faster than autovacuum analyses it) the planner takes the account's rows for a dozen and
 * reads them all to sort them, for every batch; without a sort to choose, it walks the id-ordered
 * index backwards and stops at `limit`, whatever it believes. Every filter has such an index.
 */
export async function exportMessageBatch(
  db: Db,
  accountId: number,
  f: MessageExportFilter,
  beforeId: number | undefined,
  limit: number,
): Promise<MessageRow[]> {
  if (isPostgres(db)) await sql`set local enable_sort = off`.execute(db);
  let q = db.selectFrom('messages').select(MESSAGE_COLUMNS).where('account_id', '=', accountId);
  if (f.direction !== undefined) q = q.where('direction', '=', f.direction);
  if (f.statusId !== undefined) q = q.where('status_id', '=', f.statusId);
  if (f.mobilePhone !== undefined) q = q.where('mobile_phone', '=', f.mobilePhone);
  if (f.batchId !== undefined) q = q.where('batch_id', '=', f.batchId);
  if (f.from !== undefined) q = q.where(sql<number>`created_at + 0`, '>=', f.from);
  if (f.to !== undefined) q = q.where(sql<number>`created_at + 0`, '<=', f.to);
  if (beforeId !== undefined) q = q.where('id', '<', beforeId);
  return q.orderBy('id', 'desc').limit(boundCount(limit)).execute();
}
