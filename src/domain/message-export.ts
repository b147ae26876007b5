import type { CountryCode } from 'libphonenumber-js';
import { inTransaction, type Store } from '../store/db.ts';
import { exportMessageBatch, type MessageExportFilter } from '../store/repositories/message-export.ts';
import type { MessageRow } from '../records/messages.ts';
import { ValidationFailedError, type FieldError } from './errors.ts';
import { readTimeRange } from './message-stats.ts';
import { readMessageFilters, type MessageFilterInput } from './messages.ts';
import { messages, toId } from './validation.ts';

/**
 * `sms/export` (docs/API.md §10.9): the account's message log, newest first, with sms/index's
 * filters and a range of `DateCreated`, read in keyset batches so that an export of any size
 * holds one batch in memory at a time.
 */

/**
 * Rows per batch: one query each (one short transaction on PostgreSQL). Measured with
 * bench/export.ts (docs/PERFORMANCE.md, "Log export"): during an export of 1 M messages the
 * server's RSS rose by about 37 MiB at 250 rows, 64 MiB at 500 and 140 MiB at 1,000 (V8 leaves a
 * batch's garbage for later, the more of it the larger the batch), and levels off at larger
 * exports; 500 keeps that low at half the queries of 250.
 */
export const EXPORT_BATCH_ROWS = 500;

/** The sms/export query parameters as sent: sms/index's filters, `from` and `to`. */
export interface MessageExportInput extends MessageFilterInput {
  from?: unknown;
  to?: unknown;
}

/** A checked sms/export query: the store's filter, or null when nothing can match (a `BatchId` that is no batch). */
export interface MessageExportQuery {
  filter: MessageExportFilter | null;
}

/**
 * Reads the sms/export query (docs/API.md §10.9): `Direction`, `Status_Id`, `MobilePhone`,
 * `BatchId` exactly as sms/index reads them (readMessageFilters, its messages), then `from` and
 * `to` as sms/stats reads them (readTimeRange: `The format of From is invalid.`, …), both
 * optional (absent or empty: no bound), both ends included, to the second. `to` before `from`:
 * `To is invalid.`
 * @throws ValidationFailedError (422) with the first error of each field, sms/index's filters
 *   first, then `from`, `to`.
 */
export function readExportQuery(input: MessageExportInput, region: CountryCode, timeZone: string): MessageExportQuery {
  const errors: FieldError[] = [];
  let filters: ReturnType<typeof readMessageFilters> = {};
  try {
    filters = readMessageFilters(
      { Direction: input.Direction, Status_Id: input.Status_Id, MobilePhone: input.MobilePhone, BatchId: input.BatchId },
      region,
    );
  } catch (err) {
    if (!(err instanceof ValidationFailedError)) throw err;
    errors.push(...err.errors);
  }
  const range = readTimeRange({ from: input.from, to: input.to }, timeZone);
  errors.push(...range.errors);
  if (errors.length > 0) throw new ValidationFailedError(errors);
  if (range.from !== undefined && range.to !== undefined && range.to < range.from)
    throw new ValidationFailedError([{ field: 'to', message: messages.invalid('to') }]);
  const filter: MessageExportFilter = {};
  if (filters.direction !== undefined) filter.direction = filters.direction;
  if (filters.statusId !== undefined) filter.statusId = filters.statusId;
  if (filters.mobilePhone !== undefined) filter.mobilePhone = filters.mobilePhone;
  if (filters.batchId !== undefined) {
    // An integer no batch can have (0, negative, past 2^53): nothing matches, as in sms/index.
    const id = toId(filters.batchId);
    if (id === null) return { filter: null };
    filter.batchId = id;
  }
  if (range.from !== undefined) filter.from = range.from;
  if (range.to !== undefined) filter.to = range.to;
  return { filter };
}

/**
 * The account's messages matching a checked query, newest first (Id descending), in batches of
 * at most `batchSize` rows: each batch is read when the previous one has been taken (a consumer
 * that stops early, e.g. a client gone away, stops the reading). Another account's messages never
 * match (every query is the account's), and so a `BatchId` of another account's batch gives none.
 * Messages created after the first batch was read are not included; each row is as it was when
 * its batch was read.
 */
export async function* exportMessages(
  store: Store,
  accountId: number,
  query: MessageExportQuery,
  batchSize: number = EXPORT_BATCH_ROWS,
): AsyncGenerator<MessageRow[], void, undefined> {
  if (query.filter === null) return;
  let before: number | undefined;
  for (;;) {
    const filter = query.filter;
    const after = before;
    // One short read-only transaction per batch (the repository's query plan needs one on PostgreSQL).
    const rows = await inTransaction(store, (tx) => exportMessageBatch(tx, accountId, filter, after, batchSize), { immediate: false });
    if (rows.length === 0) return;
    yield rows;
    if (rows.length < batchSize) return;
    before = Number(rows.at(-1)!.id);
  }
}
