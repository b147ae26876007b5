import * as log from '../store/repositories/message-log.ts';
import * as repo from '../store/repositories/sender-pool.ts';
import type { Db } from '../store/types.ts';
import { ValidationFailedError } from './errors.ts';
import { callingCodeOf } from './phone.ts';
import { quotaDay, type QuotaTime } from './quotas.ts';

/**
 * Sender pools (docs/API.md §17): which of the account's numbers a message goes from, and the
 * limits carriers put on a number (`MaxPerDay`, `MaxRecipientsPerMonth`).
 *
 * With `SenderSelection` `pool`, a message whose `Number` is not given gets, when it is queued,
 * the first of: the **sticky** number (the one that last exchanged a message with the recipient,
 * within 30 days), a **local** number (the recipient's country calling code; in the NANP, calling
 * code 1, also its area code), **any** Active number; each step skips a number that is full (its
 * `MaxPerDay` reached today, or its `MaxRecipientsPerMonth` reached this month for a recipient it
 * has not sent to this month), and among the numbers a step allows, the one with the most room
 * left today wins (no MaxPerDay: unbounded room), the first in `numbers/index` order on a tie.
 * A `Number` given (or the first Active number under `first`) is used as before, but refused when
 * it is full for this recipient.
 *
 * The choice itself (`chooseSender`) is a pure function of the recipient, the numbers, their
 * limits and counts; the counts are read and written in the transaction that queues the messages,
 * after the account's balance row is locked (the debit), so concurrent sends of one account are
 * counted one after another on both stores and no number goes past its limits.
 */

/** How long a thread keeps its number (sticky sender), in seconds: 30 days. */
export const STICKY_SECONDS = 30 * 86_400;

/** One Active number of a pool, with its limits and what it has used. */
export interface PoolNumber {
  /** Digits (E.164 without `+`, or a short code). */
  readonly number: string;
  /** Messages per day of the service's time zone; 0: none. */
  readonly maxPerDay: number;
  /** Distinct recipients per calendar month; 0: none. */
  readonly maxRecipientsPerMonth: number;
  /** Messages queued from it today (counted while it has a MaxPerDay). */
  today: number;
  /** Distinct recipients this month (counted while it has a MaxRecipientsPerMonth). */
  recipients: number;
  /** This month's recipients already counted (only while it has a MaxRecipientsPerMonth). */
  readonly known: Set<string>;
}

/** Messages it may still queue today (Infinity without a MaxPerDay). */
export function roomToday(n: PoolNumber): number {
  return n.maxPerDay > 0 ? n.maxPerDay - n.today : Number.POSITIVE_INFINITY;
}

/** True when `n` may send one more message to `recipient` now (docs/API.md §17). */
export function fits(n: PoolNumber, recipient: string): boolean {
  if (roomToday(n) <= 0) return false;
  return n.maxRecipientsPerMonth <= 0 || n.known.has(recipient) || n.recipients < n.maxRecipientsPerMonth;
}

/** True when a number is local to a recipient: the same calling code, and in the NANP the same area code. */
export function isLocal(number: string, recipient: string): boolean {
  return localTo(recipient, callingCodeOf(recipient))(number);
}

/** The test of `isLocal` for one recipient (its calling code worked out once). */
function localTo(recipient: string, code: string | undefined): (number: string) => boolean {
  if (code === undefined) return () => false;
  return (number) => numberCode(number) === code && (code !== '1' || number.slice(1, 4) === recipient.slice(1, 4));
}

// A pool's numbers are few and asked about for every recipient of a batch.
const numberCodes = new Map<string, string | undefined>();
function numberCode(number: string): string | undefined {
  if (numberCodes.has(number)) return numberCodes.get(number);
  if (numberCodes.size >= 10_000) numberCodes.clear();
  const code = callingCodeOf(number);
  numberCodes.set(number, code);
  return code;
}

/** The best of `numbers` that fit: the most room today, the first on a tie. */
function best(numbers: readonly PoolNumber[], recipient: string, allowed: (n: PoolNumber) => boolean): PoolNumber | undefined {
  let chosen: PoolNumber | undefined;
  for (const n of numbers) {
    if (!allowed(n) || !fits(n, recipient)) continue;
    if (chosen === undefined || roomToday(n) > roomToday(chosen)) chosen = n;
  }
  return chosen;
}

/**
 * The number a message to `recipient` goes from under `pool` (docs/API.md §17): sticky, then
 * local, then any; undefined when every number is full for this recipient.
 * @param numbers the account's Active numbers in numbers/index order.
 * @param sticky the number of the recipient's thread when its newest message is at most 30 days old.
 */
export function chooseSender(recipient: string, numbers: readonly PoolNumber[], sticky: string | undefined): PoolNumber | undefined {
  if (sticky !== undefined) {
    const n = numbers.find((x) => x.number === sticky);
    if (n !== undefined && fits(n, recipient)) return n;
  }
  const local = localTo(recipient, callingCodeOf(recipient));
  return best(numbers, recipient, (n) => local(n.number)) ?? best(numbers, recipient, () => true);
}

/** Counts one message from `n` to `recipient` in the pool's state (the caller writes it with `countQueued`). */
export function take(n: PoolNumber, recipient: string): void {
  n.today += 1;
  if (n.maxRecipientsPerMonth > 0 && !n.known.has(recipient)) {
    n.known.add(recipient);
    n.recipients += 1;
  }
}

/** `Every number has reached its limit.` (docs/API.md §17), on `Number`. */
export function poolFullError(): ValidationFailedError {
  return new ValidationFailedError([{ field: 'Number', message: 'Every number has reached its limit.' }]);
}

/** `Number has reached its limit.` (docs/API.md §17), on `Number`. */
export function numberFullError(): ValidationFailedError {
  return new ValidationFailedError([{ field: 'Number', message: 'Number has reached its limit.' }]);
}

/** The ErrorCode of a scheduled occurrence not queued because its number (or every number) was full. */
export const NUMBER_LIMIT = 'NUMBER_LIMIT';

/** The day and month keys of the counters at `at` (the service's time zone). */
function periods(at: QuotaTime): { day: string; month: string } {
  const day = quotaDay(at.nowSeconds, at.timeZone);
  return { day, month: day.slice(0, 7) };
}

/**
 * The account's Active numbers as a pool, with their counts for `at`'s day and month, and what each
 * limited number's month already knows of `recipients` (all of them when undefined).
 * Read inside the queueing transaction, after the balance row is locked.
 */
export async function loadPool(tx: Db, accountId: number, at: QuotaTime, recipients?: readonly string[]): Promise<PoolNumber[]> {
  const { day, month } = periods(at);
  const rows = await repo.poolNumbers(tx, accountId, day, month);
  const limited = rows.filter((r) => r.maxRecipientsPerMonth > 0).map((r) => r.number);
  const known = limited.length > 0 ? await repo.knownRecipients(tx, accountId, month, limited, recipients) : new Map<string, Set<string>>();
  return rows.map((r) => ({ ...r, known: known.get(r.number) ?? new Set<string>() }));
}

/** One number's state for `recipient` (an explicit Number): its counts, or undefined when it is not Active. */
export async function loadNumber(
  tx: Db,
  accountId: number,
  number: string,
  recipient: string,
  at: QuotaTime,
): Promise<PoolNumber | undefined> {
  const { day, month } = periods(at);
  const row = await repo.poolNumber(tx, accountId, number, day, month);
  if (!row) return undefined;
  const known =
    row.maxRecipientsPerMonth > 0
      ? ((await repo.knownRecipients(tx, accountId, month, [number], [recipient])).get(number) ?? new Set<string>())
      : new Set<string>();
  return { ...row, known };
}

/** The sticky numbers of `recipients` (thread's number when its newest message is within 30 days). */
export function stickyNumbers(tx: Db, accountId: number, recipients: readonly string[], nowSeconds: number): Promise<Map<string, string>> {
  return repo.stickyNumbers(tx, accountId, recipients, nowSeconds - STICKY_SECONDS);
}

/**
 * Writes what was queued to the counters of the limited numbers: per number, how many messages
 * and to whom. A number without a MaxPerDay (or a MaxRecipientsPerMonth) keeps no count of it.
 */
export async function countQueued(
  tx: Db,
  accountId: number,
  at: QuotaTime,
  queued: ReadonlyMap<PoolNumber, readonly string[]>,
): Promise<void> {
  const { day, month } = periods(at);
  for (const [n, recipients] of queued) {
    if (recipients.length === 0) continue;
    if (n.maxPerDay > 0) await repo.addNumberDayCount(tx, accountId, n.number, day, recipients.length);
    if (n.maxRecipientsPerMonth > 0) await repo.addMonthRecipients(tx, accountId, n.number, month, recipients);
  }
}

/** The number a message goes from, as resolved before its transaction. */
export interface Sender {
  /** Digits of the number given, or (none given) of the account's first Active number. */
  readonly number: string;
  /** None given and SenderSelection `pool`: the pool chooses when the message is queued. */
  readonly pool: boolean;
  /** The number has a MaxPerDay or a MaxRecipientsPerMonth: checked and counted when queued. */
  readonly limited: boolean;
}

/** A Sender of a number row (its limits) under SenderSelection `selection` (for a number not given). */
export function senderOf(row: { number: string; max_per_day: number; max_recipients_per_month: number }, pool: boolean): Sender {
  return { number: row.number, pool, limited: Number(row.max_per_day) > 0 || Number(row.max_recipients_per_month) > 0 };
}

/**
 * The number one message to `recipient` goes from (docs/API.md §17), decided inside the queueing
 * transaction `tx` (after the balance row is locked): the pool's choice, or the sender's own number
 * when it has room; counted when `count` (sms/preview only reads).
 * A sender that is neither pooled nor limited is its number, with no query.
 * @throws ValidationFailedError `Every number has reached its limit.`, `Number has reached its limit.`
 *   (a number no longer Active by then: `Number is invalid.`).
 */
export async function senderFor(
  tx: Db,
  accountId: number,
  recipient: string,
  sender: Sender,
  at: QuotaTime,
  count = true,
): Promise<string> {
  if (!sender.pool && !sender.limited) return sender.number;
  let chosen: PoolNumber | undefined;
  if (sender.pool) {
    const numbers = await loadPool(tx, accountId, at, [recipient]);
    const sticky = (await stickyNumbers(tx, accountId, [recipient], at.nowSeconds)).get(recipient);
    chosen = chooseSender(recipient, numbers, sticky);
    if (!chosen) throw poolFullError();
  } else {
    chosen = await loadNumber(tx, accountId, sender.number, recipient, at);
    if (!chosen) throw new ValidationFailedError([{ field: 'Number', message: 'Number is invalid.' }]);
    if (!fits(chosen, recipient)) throw numberFullError();
  }
  if (count) await countQueued(tx, accountId, at, new Map([[chosen, [recipient]]]));
  return chosen.number;
}

/**
 * The numbers of a batch's messages, one per recipient in order (docs/API.md §17), all or nothing:
 * each recipient as `senderFor` would choose, the counts moving as the batch fills, then counted.
 * @throws ValidationFailedError `Every number has reached its limit.` (pool) or `Number has reached
 *   its limit.` (the sender's own number) when any recipient finds no room: nothing is counted.
 */
export async function sendersFor(
  tx: Db,
  accountId: number,
  recipients: readonly string[],
  sender: Sender,
  at: QuotaTime,
): Promise<string[]> {
  if (!sender.pool && !sender.limited) return recipients.map(() => sender.number);
  const numbers = sender.pool
    ? await loadPool(tx, accountId, at)
    : (await loadPool(tx, accountId, at)).filter((n) => n.number === sender.number);
  if (!sender.pool && numbers.length === 0) throw new ValidationFailedError([{ field: 'Number', message: 'Number is invalid.' }]);
  const sticky = sender.pool ? await stickyNumbers(tx, accountId, recipients, at.nowSeconds) : new Map<string, string>();
  const queued = new Map<PoolNumber, string[]>();
  const out = new Array<string>(recipients.length);
  for (let i = 0; i < recipients.length; i++) {
    const recipient = recipients[i]!;
    const n = sender.pool ? chooseSender(recipient, numbers, sticky.get(recipient)) : fits(numbers[0]!, recipient) ? numbers[0] : undefined;
    if (!n) throw sender.pool ? poolFullError() : numberFullError();
    take(n, recipient);
    let list = queued.get(n);
    if (!list) queued.set(n, (list = []));
    list.push(recipient);
    out[i] = n.number;
  }
  await countQueued(tx, accountId, at, queued);
  return out;
}

/**
 * The Sender of a scheduled message's stored number: that number (Active) with its limits, or for
 * none stored ('': scheduled under `pool`) the account's first Active number under its
 * SenderSelection as it is now. Undefined when that number is not Active (or none is).
 */
export async function storedSender(tx: Db, accountId: number, number: string): Promise<Sender | undefined> {
  if (number !== '') {
    const row = await repo.sendingNumber(tx, accountId, number);
    return row && Number(row.status_id) === 0 ? senderOf(row, false) : undefined;
  }
  const first = await log.firstActiveNumber(tx, accountId);
  return first && senderOf(first, first.sender_selection === 'pool');
}
