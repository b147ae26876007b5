import * as counts from '../store/repositories/quotas.ts';
import type { Db } from '../store/types.ts';
import { createTimeFormat, type TimeFormat } from '../lib/time.ts';
import { ValidationFailedError } from './errors.ts';
import { formatCount } from './validation.ts';

/**
 * `MaxPerDay` (docs/API.md §16 "Quotas and fairness"): an account's cap on the messages it queues
 * per day, a day being a calendar day of the service's time zone (MSGSVC_TIMEZONE). 0 is no limit.
 * A sub-account's MaxPerDay is its own: its messages count against it, not against its parent's.
 *
 * What counts, and when: each message queued by `sms/send` (one, whatever its segments), by
 * `sms/send-group` (one per recipient queued; opted-out members skipped are not), and by the
 * scheduler when a scheduled message's occurrence comes (one, counted on the day it is queued,
 * not on the day it was scheduled). The count is kept in `account_day_counts`
 * (src/store/repositories/quotas.ts), written in the transaction that queues the messages, for
 * every account (limited or not), so a limit set or lowered during a day applies at once to what
 * was already queued that day.
 *
 * The check adds first and compares after, inside that transaction: a send that takes the count
 * past the limit is refused and rolled back with its messages and its debit, so concurrent sends
 * can never together pass the limit (SQLite serialises the queueing transactions; PostgreSQL
 * serialises them on the counter's row). A `send-group` is all or nothing: when its recipients do
 * not all fit, none is queued. Refused: 422 `[{"field":"Message","message":"Daily limit of {n}
 * messages reached."}]`, {n} the account's MaxPerDay with thousands commas (the same message when
 * a group would only go past it). MaxPerDay lowered below the day's count: every further message
 * of that day is refused; nothing already queued is undone.
 */

/**
 * The ErrorCode of a scheduled occurrence not queued because the account had reached MaxPerDay when
 * it was due (src/dispatch/scheduler.ts; src/domain/error-codes.ts).
 */
export const DAILY_LIMIT = 'DAILY_LIMIT';

/** `Daily limit of {n} messages reached.` (API.md §16), `limit` (messages per day) with thousands commas. */
export function dailyLimitMessage(limit: number): string {
  return `Daily limit of ${formatCount(limit)} messages reached.`;
}

/** The 422 of a send past MaxPerDay (API.md §16), on `Message`. */
export function dailyLimitError(limit: number): ValidationFailedError {
  return new ValidationFailedError([{ field: 'Message', message: dailyLimitMessage(limit) }]);
}

const formats = new Map<string, TimeFormat>();

/**
 * The day an instant falls on in `timeZone` (an IANA zone, MSGSVC_TIMEZONE): `YYYY-MM-DD`, the key
 * of the day's count. Days follow the zone's wall clock: a day of a daylight saving change is 23 or
 * 25 hours long.
 * @param epochSeconds Unix epoch seconds.
 */
export function quotaDay(epochSeconds: number, timeZone: string): string {
  let format = formats.get(timeZone);
  if (!format) formats.set(timeZone, (format = createTimeFormat(timeZone)));
  return format.dateTime(epochSeconds).slice(0, 10);
}

/** When messages are queued: the instant (Unix epoch seconds) and the service's time zone (MSGSVC_TIMEZONE). */
export interface QuotaTime {
  nowSeconds: number;
  timeZone: string;
}

/** What `takeDailyRoom` decided: room taken, or refused with the account's MaxPerDay (messages per day). */
export type DailyRoom = { ok: true } | { ok: false; limit: number };

/**
 * Counts `n` messages (≥ 0) the caller is queueing now for the account in its open transaction
 * `tx`, if they fit under its MaxPerDay: adds them to the day's count, then compares. When they do
 * not fit, the addition is taken back in `tx` (so a caller that goes on, the scheduler, leaves the
 * count right; a caller that throws rolls it back anyway) and the limit is returned. `n` 0 fits
 * always and writes nothing. Call it after the account's balance row is locked (the debit, or
 * `lockCredits`): see the lock order in src/store/repositories/quotas.ts.
 */
export async function takeDailyRoom(tx: Db, accountId: number, n: number, at: QuotaTime): Promise<DailyRoom> {
  if (n <= 0) return { ok: true };
  const day = quotaDay(at.nowSeconds, at.timeZone);
  const count = await counts.addDayCount(tx, accountId, day, n);
  if (count.maxPerDay <= 0 || count.messages <= count.maxPerDay) return { ok: true };
  await counts.subtractDayCount(tx, accountId, day, n);
  return { ok: false, limit: count.maxPerDay };
}

/**
 * Gives back `n` messages counted by `takeDailyRoom` in the same transaction that were not queued
 * after all (a scheduled occurrence then Rejected for its credits).
 */
export async function releaseDailyRoom(tx: Db, accountId: number, n: number, at: QuotaTime): Promise<void> {
  if (n > 0) await counts.subtractDayCount(tx, accountId, quotaDay(at.nowSeconds, at.timeZone), n);
}

/**
 * Whether `n` more messages would fit today, read without counting (`sms/preview`, which answers
 * what `sms/send` would).
 * @throws ValidationFailedError `Daily limit of {n} messages reached.` on `Message` when they would not.
 */
export async function assertDailyRoom(db: Db, accountId: number, n: number, at: QuotaTime): Promise<void> {
  if (n <= 0) return;
  const count = await counts.readDayCount(db, accountId, quotaDay(at.nowSeconds, at.timeZone));
  if (count.maxPerDay > 0 && count.messages + n > count.maxPerDay) throw dailyLimitError(count.maxPerDay);
}
