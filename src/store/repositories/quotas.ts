import { prepareQuery } from '../prepared.ts';
import type { Db } from '../types.ts';

/**
 * The counter behind `MaxPerDay` (docs/API.md §16 "Quotas and fairness"; migration 022
 * `account_day_counts`): how many messages each account queued on each day of the service's time
 * zone (`day`, `YYYY-MM-DD`, computed by the caller: src/domain/quotas.ts). It is written in the
 * transaction that queues the messages, so the check is one primary-key upsert, never a count of
 * the message log, and it is race-free on both stores: on SQLite the queueing transaction holds
 * the write lock (BEGIN IMMEDIATE); on PostgreSQL the upsert locks the `(account_id, day)` row until
 * COMMIT, and a concurrent upsert waits for it and then adds to the committed count (READ
 * COMMITTED re-reads the row it waited for; a first insert that loses the race takes the update
 * path). The caller owns the transaction.
 *
 * Lock order: the row is taken after the account's `credit_balances` row (the debit, a refund or
 * `lockCredits`), and nothing else of the account is locked after it while the transaction
 * queues, so it adds no cycle to the order of src/store/repositories/scheduled.ts.
 */

const add = prepareQuery((db, accountId: number, day: string, n: number) =>
  db
    .insertInto('account_day_counts')
    .values({ account_id: accountId, day, messages: n })
    .onConflict((oc) =>
      oc.columns(['account_id', 'day']).doUpdateSet((eb) => ({
        messages: eb('account_day_counts.messages', '+', eb.ref('excluded.messages')),
      })),
    )
    .returning((eb) => [
      'account_day_counts.messages',
      eb
        .selectFrom('accounts')
        .select('accounts.max_per_day')
        .whereRef('accounts.id', '=', 'account_day_counts.account_id')
        .as('max_per_day'),
    ]),
);

/** The account's count of a day after an addition, and its MaxPerDay (0: no limit). */
export interface DayCount {
  /** Messages queued on the day, this addition included. */
  messages: number;
  /** The account's `max_per_day` (messages per day; 0: no limit). */
  maxPerDay: number;
}

/**
 * Adds `n` (> 0) messages to the account's count of `day` (one upsert), and reads back the new
 * count with the account's MaxPerDay in the same statement. The row stays locked (PostgreSQL)
 * until the transaction ends: the caller compares, and throws (rolling back) or calls
 * `subtractDayCount` when the count went past the limit.
 */
export async function addDayCount(db: Db, accountId: number, day: string, n: number): Promise<DayCount> {
  const row = await add.first(db, accountId, day, n);
  return { messages: Number(row?.messages ?? n), maxPerDay: Number(row?.max_per_day ?? 0) };
}

const subtract = prepareQuery((db, accountId: number, day: string, n: number) =>
  db
    .updateTable('account_day_counts')
    .set((eb) => ({ messages: eb('messages', '-', n) }))
    .where('account_id', '=', accountId)
    .where('day', '=', day),
);

/**
 * Takes back `n` messages from the account's count of `day`: an addition that went past the limit
 * (or whose messages were not queued after all), undone inside the same transaction when the
 * transaction itself goes on (the scheduler's round). The caller holds the row since `addDayCount`.
 */
export async function subtractDayCount(db: Db, accountId: number, day: string, n: number): Promise<void> {
  await subtract.run(db, accountId, day, n);
}

const read = prepareQuery((db, accountId: number, day: string) =>
  db
    .selectFrom('accounts')
    .leftJoin('account_day_counts', (j) =>
      j.onRef('account_day_counts.account_id', '=', 'accounts.id').on('account_day_counts.day', '=', day),
    )
    .select(['accounts.max_per_day', 'account_day_counts.messages'])
    .where('accounts.id', '=', accountId),
);

/**
 * The account's count of `day` (0 when nothing was queued) and its MaxPerDay, read without
 * writing or locking anything: for `sms/preview`, which answers what a send would.
 */
export async function readDayCount(db: Db, accountId: number, day: string): Promise<DayCount> {
  const row = await read.first(db, accountId, day);
  return { messages: Number(row?.messages ?? 0), maxPerDay: Number(row?.max_per_day ?? 0) };
}
