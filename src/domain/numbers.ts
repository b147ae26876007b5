import type { CountryCode } from 'libphonenumber-js';
import { inTransaction, type Store } from '../store/db.ts';
import type { NumberLimitsRow, NumberRow, NumberUsageRow } from '../records/numbers.ts';
import * as numbers from '../store/repositories/numbers.ts';
import { lockCredits } from '../store/repositories/scheduled.ts';
import type { Db } from '../store/types.ts';
import type { Clock } from '../lib/time.ts';
import { MAX_PER_DAY_LIMIT, MAX_PER_SECOND_LIMIT, numberDigits } from './account-admin.ts';
import { NotFoundError, ValidationFailedError } from './errors.ts';
import { quotaDay } from './quotas.ts';
import { zonedTimeToEpochMs } from './schedule-time.ts';
import { defineRules, validate, type Input } from './validation.ts';

/**
 * The account's numbers (docs/API.md §10.1 `numbers/index`, §17 `numbers/view`, `numbers/update`,
 * `numbers/usage`).
 *
 * A number has no `Id` on the wire: `view` and `update` name it by `?number=`, read as
 * `contacts/find` reads a phone number (any common format, national numbers in the default
 * region), or a short code of 3 to 8 digits as it is. A number the account does not hold, one
 * that cannot be read as either, and a blank one are all 404 `Object not found: {number as sent}`:
 * the lookup key names no number of the account (as the operator's `numbers/update?number=`).
 *
 * Limits (`MaxPerSecond`, `MaxPerDay`, `MaxRecipientsPerMonth`; 0: none) are bounded like an
 * account's quotas (docs/API.md §16.1): 0 to 100,000 per second, 0 to 2,147,483,647 per day and
 * per month. Setting `MaxPerDay` (or `MaxRecipientsPerMonth`) from 0 fills the number's counter of
 * today (this month) from the message log in the same transaction, so a limit set in the afternoon
 * counts the morning's messages; taking it off (back to 0) deletes the number's counters: they are
 * kept only while a limit needs them. The transaction first takes the account's balance row, the
 * lock every queueing transaction takes before it counts, so a fill never races a send.
 */

/** What the number operations need: the store, the clock and the service's zone (days and months), the default region. */
export interface NumberDeps {
  store: Store;
  clock: Clock;
  /** MSGSVC_TIMEZONE: the zone whose calendar days and months the limits count. */
  timeZone: string;
  /** MSGSVC_DEFAULT_REGION: the region of numbers written without a country code. */
  region: CountryCode;
}

/** How many numbers the account has. */
export function countNumbers(store: Store, accountId: number): Promise<number> {
  return numbers.countNumbers(store.db, accountId);
}

/** One page of the account's numbers by Id ascending (`limit` rows from `offset`). */
export function listNumbers(store: Store, accountId: number, limit: number, offset: number): Promise<NumberRow[]> {
  return numbers.listNumbers(store.db, accountId, limit, offset);
}

/** The account's number named by `number` (as sent), with its row id. @throws NotFoundError. */
async function findOr404(db: Db, accountId: number, number: string, region: CountryCode): Promise<NumberLimitsRow & { id: number }> {
  const digits = numberDigits(number, region);
  const row = digits === null ? undefined : await numbers.findNumberLimits(db, accountId, digits);
  if (row === undefined) throw new NotFoundError(number);
  return row;
}

/** The row without its id (a number has none on the wire, and the audit log names it by `number`). */
function withoutId({ id, ...row }: NumberLimitsRow & { id: number }): NumberLimitsRow {
  void id;
  return row;
}

/**
 * `numbers/view?number=`: the account's number with its limits.
 * @throws NotFoundError `Object not found: {number}` (as sent) when the account holds no such number.
 */
export async function viewNumber(deps: Pick<NumberDeps, 'store' | 'region'>, accountId: number, number: string): Promise<NumberLimitsRow> {
  return withoutId(await findOr404(deps.store.db, accountId, number, deps.region));
}

/** The rules of `numbers/update`'s body, in the record's order (the errors come in this order). */
const LIMIT_RULES = defineRules([
  { field: 'MaxPerSecond', rule: 'integer', min: 0, max: MAX_PER_SECOND_LIMIT },
  { field: 'MaxPerDay', rule: 'integer', min: 0, max: MAX_PER_DAY_LIMIT },
  { field: 'MaxRecipientsPerMonth', rule: 'integer', min: 0, max: MAX_PER_DAY_LIMIT },
]);

/** The day (`YYYY-MM-DD`) and month (`YYYY-MM`) of `nowSeconds` in `timeZone`, with their bounds in epoch seconds [from, to). */
function periodsOf(
  nowSeconds: number,
  timeZone: string,
): { day: string; dayFrom: number; dayTo: number; month: string; monthFrom: number; monthTo: number } {
  const day = quotaDay(nowSeconds, timeZone);
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  // The first instant of a calendar date in the zone (a midnight the zone skips: the first one it has).
  const start = (year: number, month: number, date: number) => {
    const t = new Date(0);
    t.setUTCFullYear(year, month - 1, date); // normalises the day after the last, the month after December
    return Math.floor(zonedTimeToEpochMs(timeZone, t.getUTCFullYear(), t.getUTCMonth() + 1, t.getUTCDate(), 0, 0, 0) / 1000);
  };
  return {
    day,
    dayFrom: start(y, m, d),
    dayTo: start(y, m, d + 1),
    month: day.slice(0, 7),
    monthFrom: start(y, m, 1),
    monthTo: start(y, m + 1, 1),
  };
}

/**
 * `numbers/update?number=`: sets the fields sent of `MaxPerSecond`, `MaxPerDay` and
 * `MaxRecipientsPerMonth` (integers, 0: none; `""` or `null` change nothing). A limit raised from
 * 0 fills its counter from the message log (today's outbound messages from the number; this
 * month's distinct recipients); one taken back to 0 deletes the number's counters of that kind.
 * @returns the number with its limits after the change.
 * @throws NotFoundError `Object not found: {number}` first; then ValidationFailedError, the first
 *   error of each field in that order: `{Label} must be an integer.`, `{Label} must be no less than
 *   0.`, `{Label} must be no greater than {max}.` (100,000 per second; 2,147,483,647 otherwise).
 */
export async function updateNumberLimits(deps: NumberDeps, accountId: number, number: string, input: Input): Promise<NumberLimitsRow> {
  const checked = validate(input, LIMIT_RULES);
  const now = deps.clock.nowSeconds();
  return inTransaction(deps.store, async (tx) => {
    // The lock order of the queueing transactions (src/domain/sender-pool.ts): the balance row first.
    await lockCredits(tx, accountId);
    const row = await findOr404(tx, accountId, number, deps.region);
    if (checked.errors.length > 0) throw new ValidationFailedError(checked.errors);
    const v = checked.values;
    const next = {
      maxPerSecond: v.MaxPerSecond ?? Number(row.max_per_second),
      maxPerDay: v.MaxPerDay ?? Number(row.max_per_day),
      maxRecipientsPerMonth: v.MaxRecipientsPerMonth ?? Number(row.max_recipients_per_month),
    };
    const was = { perDay: Number(row.max_per_day), perMonth: Number(row.max_recipients_per_month) };
    if (next.maxPerSecond !== Number(row.max_per_second) || next.maxPerDay !== was.perDay || next.maxRecipientsPerMonth !== was.perMonth) {
      await numbers.setNumberLimits(tx, accountId, row.id, next);
    }
    const p = periodsOf(now, deps.timeZone);
    if (was.perDay === 0 && next.maxPerDay > 0) await numbers.fillNumberDayCount(tx, accountId, row.number, p.day, p.dayFrom, p.dayTo);
    else if (was.perDay > 0 && next.maxPerDay === 0) await numbers.deleteNumberDayCounts(tx, accountId, row.number);
    if (was.perMonth === 0 && next.maxRecipientsPerMonth > 0)
      await numbers.fillNumberMonthRecipients(tx, accountId, row.number, p.month, p.monthFrom, p.monthTo);
    else if (was.perMonth > 0 && next.maxRecipientsPerMonth === 0) await numbers.deleteNumberMonthRecipients(tx, accountId, row.number);
    return {
      ...withoutId(row),
      max_per_second: next.maxPerSecond,
      max_per_day: next.maxPerDay,
      max_recipients_per_month: next.maxRecipientsPerMonth,
    };
  });
}

/**
 * `numbers/usage` (docs/API.md §17): one page of the account's numbers in `numbers/index` order,
 * each with its limits, its outbound messages queued today and its distinct recipients this month
 * (the service's zone). A number with `MaxPerDay` (`MaxRecipientsPerMonth`) reads its counter, the
 * figure its limit is checked against; one without reads the message log, one grouped query per
 * page for each of the two.
 */
export async function numberUsage(
  deps: Pick<NumberDeps, 'store' | 'clock' | 'timeZone'>,
  accountId: number,
  limit: number,
  offset: number,
): Promise<NumberUsageRow[]> {
  const db = deps.store.db;
  const p = periodsOf(deps.clock.nowSeconds(), deps.timeZone);
  const rows = await numbers.listNumberUsage(db, accountId, p.day, p.month, limit, offset);
  const unlimited = (limitOf: (r: (typeof rows)[number]) => number) => rows.filter((r) => limitOf(r) === 0).map((r) => r.number);
  const today = await numbers.countOutbound(
    db,
    accountId,
    unlimited((r) => r.max_per_day),
    p.dayFrom,
    p.dayTo,
    false,
  );
  const month = await numbers.countOutbound(
    db,
    accountId,
    unlimited((r) => r.max_recipients_per_month),
    p.monthFrom,
    p.monthTo,
    true,
  );
  return rows.map((r) => ({
    number: r.number,
    max_per_second: r.max_per_second,
    max_per_day: r.max_per_day,
    max_recipients_per_month: r.max_recipients_per_month,
    messages_today: r.max_per_day > 0 ? (r.day_count ?? 0) : (today.get(r.number) ?? 0),
    recipients_this_month: r.max_recipients_per_month > 0 ? (r.month_count ?? 0) : (month.get(r.number) ?? 0),
  }));
}
