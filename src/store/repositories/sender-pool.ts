import { sql } from 'kysely';
import { isPostgres, prepareQuery } from '../prepared.ts';
import type { Db } from '../types.ts';
import { jsonTexts } from './personalise.ts';

/**
 * The SQL of sender pools (docs/API.md §17): an account's Active numbers with their limits and
 * counts, the recipients a number already has this month, the sticky number of a recipient, and
 * the counters written when messages are queued (migration 025). Every query is scoped to the
 * account; the caller owns the transaction and has locked the account's balance row first, so
 * the counts it reads stay true until it commits.
 */

/** A number as the pool sees it: limits (0: none) and what it used today and this month. */
export interface PoolNumberRow {
  number: string;
  maxPerDay: number;
  maxRecipientsPerMonth: number;
  today: number;
  recipients: number;
}

type Raw = { number: string; max_per_day: number; max_recipients_per_month: number; today: number | null; recipients: number | null };

function poolRow(r: Raw): PoolNumberRow {
  return {
    number: r.number,
    maxPerDay: Number(r.max_per_day),
    maxRecipientsPerMonth: Number(r.max_recipients_per_month),
    today: Number(r.today ?? 0),
    recipients: Number(r.recipients ?? 0),
  };
}

function poolSelect(db: Db, accountId: number, day: string, month: string) {
  return db
    .selectFrom('account_numbers as n')
    .leftJoin('number_day_counts as d', (j) =>
      j.onRef('d.account_id', '=', 'n.account_id').onRef('d.number', '=', 'n.number').on('d.day', '=', day),
    )
    .select((eb) => [
      'n.number',
      'n.max_per_day',
      'n.max_recipients_per_month',
      'd.messages as today',
      eb
        .selectFrom('number_month_recipients as r')
        .select((e) => e.fn.countAll<number>().as('c'))
        .whereRef('r.account_id', '=', 'n.account_id')
        .whereRef('r.number', '=', 'n.number')
        .where('r.month', '=', month)
        .as('recipients'),
    ])
    .where('n.account_id', '=', accountId)
    .where('n.status_id', '=', 0);
}

const pool = prepareQuery((db, accountId: number, day: string, month: string) => poolSelect(db, accountId, day, month).orderBy('n.id'));

/** The account's Active numbers in numbers/index order, with their counts of `day` and `month`. */
export async function poolNumbers(db: Db, accountId: number, day: string, month: string): Promise<PoolNumberRow[]> {
  return (await pool.all(db, accountId, day, month)).map(poolRow);
}

const one = prepareQuery((db, accountId: number, number: string, day: string, month: string) =>
  poolSelect(db, accountId, day, month).where('n.number', '=', number),
);

/** One Active number of the account with its counts, or undefined. */
export async function poolNumber(
  db: Db,
  accountId: number,
  number: string,
  day: string,
  month: string,
): Promise<PoolNumberRow | undefined> {
  const row = await one.first(db, accountId, number, day, month);
  return row && poolRow(row);
}

/**
 * Per number of `numbers`, the recipients it has this month among `recipients` (every one it has
 * when undefined).
 */
export async function knownRecipients(
  db: Db,
  accountId: number,
  month: string,
  numbers: readonly string[],
  recipients?: readonly string[],
): Promise<Map<string, Set<string>>> {
  let q = db
    .selectFrom('number_month_recipients')
    .select(['number', 'mobile_phone'])
    .where('account_id', '=', accountId)
    .where('month', '=', month)
    .where('number', 'in', jsonTexts(db, JSON.stringify(numbers)));
  if (recipients !== undefined) q = q.where('mobile_phone', 'in', jsonTexts(db, JSON.stringify(recipients)));
  const out = new Map<string, Set<string>>();
  for (const r of await q.execute()) {
    let set = out.get(r.number);
    if (!set) out.set(r.number, (set = new Set()));
    set.add(r.mobile_phone);
  }
  return out;
}

/** Recipients per statement of the sticky lookup. */
const CHUNK = 5000;

/**
 * The number of each conversation's newest message when it was created at or after `since`, or
 * null. A correlated subquery, not a join: the plan must start from the conversations' primary key
 * (account, recipient) and read one message by id. As a join, SQLite (no statistics) started from
 * the account's messages of the last 30 days instead: a cost that grew with the account's volume on
 * every send (bench/sender-pool.ts (c1)).
 */
function stickyOf(db: Db, since: number) {
  return db
    .selectFrom('conversations as c')
    .select((eb) => [
      'c.mobile_phone',
      eb
        .selectFrom('messages as m')
        .select('m.number')
        .whereRef('m.account_id', '=', 'c.account_id')
        .whereRef('m.id', '=', 'c.last_message_id')
        .where('m.created_at', '>=', since)
        .as('number'),
    ]);
}

const stickyOne = prepareQuery((db, accountId: number, recipient: string, since: number) =>
  stickyOf(db, since).where('c.account_id', '=', accountId).where('c.mobile_phone', '=', recipient),
);

/**
 * The sticky number of each recipient (digits) whose thread's newest message was created at or
 * after `since` (epoch seconds): the account number that message went from or came to.
 */
export async function stickyNumbers(db: Db, accountId: number, recipients: readonly string[], since: number): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (recipients.length === 1) {
    const row = await stickyOne.first(db, accountId, recipients[0]!, since);
    if (row?.number) out.set(row.mobile_phone, row.number);
    return out;
  }
  for (let i = 0; i < recipients.length; i += CHUNK) {
    const rows = await stickyOf(db, since)
      .where('c.account_id', '=', accountId)
      .where('c.mobile_phone', 'in', jsonTexts(db, JSON.stringify(recipients.slice(i, i + CHUNK))))
      .execute();
    for (const r of rows) if (r.number) out.set(r.mobile_phone, r.number);
  }
  return out;
}

const addDay = prepareQuery((db, accountId: number, number: string, day: string, n: number) =>
  db
    .insertInto('number_day_counts')
    .values({ account_id: accountId, number, day, messages: n })
    .onConflict((oc) =>
      oc
        .columns(['account_id', 'number', 'day'])
        .doUpdateSet((eb) => ({ messages: eb('number_day_counts.messages', '+', eb.ref('excluded.messages')) })),
    ),
);

/** Adds `n` messages to a number's count of `day`. */
export async function addNumberDayCount(db: Db, accountId: number, number: string, day: string, n: number): Promise<void> {
  await addDay.run(db, accountId, number, day, n);
}

/** Adds `recipients` (digits) to a number's recipients of `month`; those it has already stay once. */
export async function addMonthRecipients(
  db: Db,
  accountId: number,
  number: string,
  month: string,
  recipients: readonly string[],
): Promise<void> {
  for (let i = 0; i < recipients.length; i += CHUNK) {
    const json = JSON.stringify(recipients.slice(i, i + CHUNK));
    await (
      isPostgres(db)
        ? sql`insert into number_month_recipients (account_id, number, month, mobile_phone)
          select cast(${accountId} as integer), cast(${number} as text), cast(${month} as text), value
          from json_array_elements_text(cast(${json} as json)) as r(value)
          on conflict do nothing`
        : sql`insert into number_month_recipients (account_id, number, month, mobile_phone)
          select ${accountId}, ${number}, ${month}, value from json_each(${json}) where true
          on conflict do nothing`
    ).execute(db);
  }
}

const byDigits = prepareQuery((db, accountId: number, digits: string) =>
  db
    .selectFrom('account_numbers')
    .select(['number', 'status_id', 'max_per_day', 'max_recipients_per_month'])
    .where('account_id', '=', accountId)
    .where('number', '=', digits),
);

/** The account's number with exactly these digits, with its status and limits, if any. */
export async function sendingNumber(
  db: Db,
  accountId: number,
  digits: string,
): Promise<{ number: string; status_id: number; max_per_day: number; max_recipients_per_month: number } | undefined> {
  return byDigits.first(db, accountId, digits);
}

/** Deletes the counters of days before `day` and months before `month` (they can no longer limit anything). */
export async function purgeCounters(db: Db, day: string, month: string): Promise<void> {
  await db.deleteFrom('number_day_counts').where('day', '<', day).execute();
  await db.deleteFrom('number_month_recipients').where('month', '<', month).execute();
}
