import { sql } from 'kysely';
import { boundCount, prepareQuery } from '../prepared.ts';
import { NUMBER_COLUMNS, NUMBER_LIMITS_COLUMNS, type NumberLimitsRow, type NumberRow } from '../../records/numbers.ts';
import { DIRECTION_OUTBOUND } from '../../records/statuses.ts';
import type { Db } from '../types.ts';

/** The account's own numbers (short codes and long numbers). */

const count = prepareQuery((db, accountId: number) =>
  db
    .selectFrom('account_numbers')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId),
);

// An account has a handful of numbers: counting them by index is cheap, no stored total needed.
export async function countNumbers(db: Db, accountId: number): Promise<number> {
  const row = await count.first(db, accountId);
  return Number(row?.n ?? 0);
}

const page = prepareQuery((db, accountId: number, limit: number, offset: number) =>
  db
    .selectFrom('account_numbers')
    .select(NUMBER_COLUMNS)
    .where('account_id', '=', accountId)
    .orderBy('id')
    .limit(boundCount(limit))
    .offset(boundCount(offset)),
);

/** One page of numbers in id order. */
export async function listNumbers(db: Db, accountId: number, limit: number, offset: number): Promise<NumberRow[]> {
  return page.all(db, accountId, limit, offset);
}

export async function insertNumber(
  db: Db,
  accountId: number,
  number: string,
  statusId: number,
  blockedAt: number | null,
  now: number,
): Promise<number> {
  const { id } = await db
    .insertInto('account_numbers')
    .values({ account_id: accountId, number, status_id: statusId, blocked_at: blockedAt, created_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}

/** The account's number with exactly these digits, if any. */
const byDigits = prepareQuery((db, accountId: number, digits: string) =>
  db.selectFrom('account_numbers').select(['id', 'number', 'status_id']).where('account_id', '=', accountId).where('number', '=', digits),
);

export async function findNumber(db: Db, accountId: number, digits: string) {
  return byDigits.first(db, accountId, digits);
}

/*
 * A number's limits and their counters (docs/API.md §17, migration 025). `number_day_counts` and
 * `number_month_recipients` are kept only while the number has the matching limit: the queueing
 * transaction adds to them (src/domain/sender-pool.ts), these functions fill them from the message
 * log when a limit is set and delete them when it is taken off. The caller owns the transaction
 * and has locked the account's balance row first (lockCredits), the lock the queueing
 * transactions take before they count, so a fill and a send never interleave.
 */

const limitsByDigits = prepareQuery((db, accountId: number, digits: string) =>
  db
    .selectFrom('account_numbers')
    .select(['id', ...NUMBER_LIMITS_COLUMNS])
    .where('account_id', '=', accountId)
    .where('number', '=', digits),
);

/** The account's number with exactly these digits, with its limits and its row id, if any. */
export async function findNumberLimits(db: Db, accountId: number, digits: string): Promise<(NumberLimitsRow & { id: number }) | undefined> {
  return limitsByDigits.first(db, accountId, digits);
}

/** A number's three limits (0: none). */
export interface NumberLimits {
  maxPerSecond: number;
  maxPerDay: number;
  maxRecipientsPerMonth: number;
}

const setLimits = prepareQuery((db, accountId: number, id: number, perSecond: number, perDay: number, perMonth: number) =>
  db
    .updateTable('account_numbers')
    .set({ max_per_second: perSecond, max_per_day: perDay, max_recipients_per_month: perMonth })
    .where('account_id', '=', accountId)
    .where('id', '=', id),
);

/** Writes the three limits of the account's number row `id`. */
export async function setNumberLimits(db: Db, accountId: number, id: number, limits: NumberLimits): Promise<void> {
  await setLimits.run(db, accountId, id, limits.maxPerSecond, limits.maxPerDay, limits.maxRecipientsPerMonth);
}

/** Outbound messages of the account from `number` created in [from, to) (epoch seconds); messages_account_created_ix. */
function outboundFrom(accountId: number, number: string, from: number, to: number) {
  return sql`from messages where account_id = ${accountId} and created_at >= ${from} and created_at < ${to}
    and number = ${number} and direction = ${DIRECTION_OUTBOUND}`;
}

/**
 * Sets a number's count of `day` to its outbound messages created in [from, to) (the day's bounds
 * in epoch seconds): what the message log says it queued that day, before it was counted.
 */
export async function fillNumberDayCount(db: Db, accountId: number, number: string, day: string, from: number, to: number): Promise<void> {
  await sql`insert into number_day_counts (account_id, number, day, messages)
    select cast(${accountId} as integer), cast(${number} as text), cast(${day} as text), count(*)
    ${outboundFrom(accountId, number, from, to)}
    on conflict (account_id, number, day) do update set messages = excluded.messages`.execute(db);
}

/**
 * Adds to a number's recipients of `month` every distinct recipient of its outbound messages
 * created in [from, to) (the month's bounds in epoch seconds).
 */
export async function fillNumberMonthRecipients(
  db: Db,
  accountId: number,
  number: string,
  month: string,
  from: number,
  to: number,
): Promise<void> {
  await sql`insert into number_month_recipients (account_id, number, month, mobile_phone)
    select distinct cast(${accountId} as integer), cast(${number} as text), cast(${month} as text), mobile_phone
    ${outboundFrom(accountId, number, from, to)}
    on conflict do nothing`.execute(db);
}

const dropDays = prepareQuery((db, accountId: number, number: string) =>
  db.deleteFrom('number_day_counts').where('account_id', '=', accountId).where('number', '=', number),
);
const dropMonths = prepareQuery((db, accountId: number, number: string) =>
  db.deleteFrom('number_month_recipients').where('account_id', '=', accountId).where('number', '=', number),
);

/** Deletes every day count of the account's `number` (its MaxPerDay taken off). */
export async function deleteNumberDayCounts(db: Db, accountId: number, number: string): Promise<void> {
  await dropDays.run(db, accountId, number);
}

/** Deletes every month's recipients of the account's `number` (its MaxRecipientsPerMonth taken off). */
export async function deleteNumberMonthRecipients(db: Db, accountId: number, number: string): Promise<void> {
  await dropMonths.run(db, accountId, number);
}

/** One number of a `numbers/usage` page: its limits, and its counters of the day and month (null: no row). */
export interface NumberUsagePageRow {
  number: string;
  max_per_second: number;
  max_per_day: number;
  max_recipients_per_month: number;
  day_count: number | null;
  month_count: number | null;
}

const usagePage = prepareQuery((db, accountId: number, day: string, month: string, limit: number, offset: number) =>
  db
    .selectFrom('account_numbers as n')
    .leftJoin('number_day_counts as d', (j) =>
      j.onRef('d.account_id', '=', 'n.account_id').onRef('d.number', '=', 'n.number').on('d.day', '=', day),
    )
    .select((eb) => [
      'n.number',
      'n.max_per_second',
      'n.max_per_day',
      'n.max_recipients_per_month',
      'd.messages as day_count',
      eb
        .selectFrom('number_month_recipients as r')
        .select((e) => e.fn.countAll<number>().as('c'))
        .whereRef('r.account_id', '=', 'n.account_id')
        .whereRef('r.number', '=', 'n.number')
        .where('r.month', '=', month)
        .as('month_count'),
    ])
    .where('n.account_id', '=', accountId)
    .orderBy('n.id')
    .limit(boundCount(limit))
    .offset(boundCount(offset)),
);

/**
 * One page of the account's numbers in id order (numbers/index's), with their limits and their
 * counters of `day` and `month` (each by primary key).
 */
export async function listNumberUsage(
  db: Db,
  accountId: number,
  day: string,
  month: string,
  limit: number,
  offset: number,
): Promise<NumberUsagePageRow[]> {
  return (await usagePage.all(db, accountId, day, month, limit, offset)).map((r) => ({
    number: r.number,
    max_per_second: Number(r.max_per_second),
    max_per_day: Number(r.max_per_day),
    max_recipients_per_month: Number(r.max_recipients_per_month),
    day_count: r.day_count === null ? null : Number(r.day_count),
    month_count: r.month_count === null ? null : Number(r.month_count),
  }));
}

/**
 * From the message log, per number of `numbers` (at most a page of them): its outbound messages
 * created in [from, to) (epoch seconds), or with `distinct` its distinct recipients in that range.
 * One range of the account's messages by messages_account_created_ix, grouped by number.
 */
export async function countOutbound(
  db: Db,
  accountId: number,
  numbers: readonly string[],
  from: number,
  to: number,
  distinct: boolean,
): Promise<Map<string, number>> {
  if (numbers.length === 0) return new Map();
  const rows = await db
    .selectFrom('messages')
    .select((eb) => ['number', (distinct ? eb.fn.count<number>('mobile_phone').distinct() : eb.fn.countAll<number>()).as('n')])
    .where('account_id', '=', accountId)
    .where('created_at', '>=', from)
    .where('created_at', '<', to)
    .where('number', 'in', [...numbers])
    .where('direction', '=', DIRECTION_OUTBOUND)
    .groupBy('number')
    .execute();
  return new Map(rows.map((r) => [r.number, Number(r.n)]));
}
