import type { Store } from '../store/db.ts';
import { countMessagesByUnit } from '../store/repositories/message-stats.ts';
import type { StatsBucketRow } from '../records/message-stats.ts';
import { createTimeFormat, type TimeFormat } from '../lib/time.ts';
import { ValidationFailedError, type FieldError } from './errors.ts';
import { parseScheduleDateTime, zonedTimeToEpochMs } from './schedule-time.ts';
import { fieldLabel, isEmpty, messages } from './validation.ts';

/**
 * `sms/stats` (docs/API.md §10.9): the account's messages counted per hour or per day of the
 * service's time zone, every bucket present.
 *
 * The buckets are the wall-clock hours or calendar days of the zone, so that every `Time` is
 * unique, increasing, and read back as `from` it gives its bucket's first instant again:
 * - a day is a calendar day: 23 or 25 hours on the days the clocks change;
 * - an hour is an hour of the wall clock: the hour the clocks skip has no bucket, and the hour
 *   they repeat is one bucket of two real hours (labelled once, e.g. `01:00:00`);
 * - a bucket's `Time` is the wall-clock time of its first instant (where the zone skips the
 *   start of an hour or day, the first instant after the gap: `02:00:00` after a spring-forward
 *   at 01:00).
 * The range is whole buckets: from the one holding `from` to the one holding `to`, both included.
 */

/** The most buckets one request may ask for (docs/API.md §10.9: else `To is invalid.`). */
export const MAX_STATS_BUCKETS = 366;

/** The default range: `to` is now, `from` 7 × 24 hours before `to`. */
const DEFAULT_SPAN_SECONDS = 7 * 86_400;

export type StatsInterval = 'hour' | 'day';

/** The sms/stats query parameters as sent (query text, a list for `key[]=`, or absent). */
export interface StatsInput {
  from?: unknown;
  to?: unknown;
  interval?: unknown;
}

/**
 * A checked sms/stats query: the bucket boundaries, epoch seconds, increasing; bucket i is
 * [`bounds[i]`, `bounds[i + 1]`), so there is one bucket fewer than boundaries (1 to 366).
 */
export interface StatsQuery {
  bounds: number[];
}

const formats = new Map<string, TimeFormat>();
function formatFor(timeZone: string): TimeFormat {
  let f = formats.get(timeZone);
  if (!f) formats.set(timeZone, (f = createTimeFormat(timeZone)));
  return f;
}

/** The wall-clock [year, month, day, hour] of an instant (epoch seconds) in the zone. */
function wallOf(time: TimeFormat, seconds: number): [number, number, number, number] {
  const text = time.dateTime(seconds); // YYYY-MM-DD HH:MM:SS
  return [Number(text.slice(0, 4)), Number(text.slice(5, 7)), Number(text.slice(8, 10)), Number(text.slice(11, 13))];
}

/** `YYYY-MM-DD HH:00:00`: the start of a wall-clock hour as TimeFormat writes it. */
function wallText([y, mo, d, h]: [number, number, number, number]): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return `${String(y).padStart(4, '0')}-${two(mo)}-${two(d)} ${two(h)}:00:00`;
}

/** The next wall-clock hour or day after [y, mo, d, h] (plain calendar arithmetic, no zone). */
function nextWall([y, mo, d, h]: [number, number, number, number], interval: StatsInterval): [number, number, number, number] {
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, interval === 'day' ? d + 1 : d);
  t.setUTCHours(interval === 'day' ? 0 : h + 1, 0, 0, 0);
  return [t.getUTCFullYear(), t.getUTCMonth() + 1, t.getUTCDate(), t.getUTCHours()];
}

/** The first instant (epoch seconds) of a wall-clock hour in the zone: the first after a gap. */
function instantOf(timeZone: string, [y, mo, d, h]: [number, number, number, number]): number {
  return Math.floor(zonedTimeToEpochMs(timeZone, y, mo, d, h, 0, 0) / 1000);
}

/**
 * The boundaries of the buckets from the one holding `from` to the one holding `to` (epoch
 * seconds, `from` ≤ `to`), or null when that is more than MAX_STATS_BUCKETS buckets.
 */
export function bucketBounds(timeZone: string, interval: StatsInterval, from: number, to: number): number[] | null {
  // Surely more than 366 buckets (a day bucket lasts at most 25 hours, an hour bucket 2): no walk.
  if (to - from > (MAX_STATS_BUCKETS + 1) * (interval === 'day' ? 90_000 : 7_200)) return null;
  const time = formatFor(timeZone);
  let wall = wallOf(time, from);
  if (interval === 'day') wall = [wall[0], wall[1], wall[2], 0];
  const bounds = [instantOf(timeZone, wall)];
  const nominal = interval === 'day' ? 86_400 : 3_600;
  for (;;) {
    wall = nextWall(wall, interval);
    // Most buckets last their nominal length: one look at the wall clock confirms it, where the
    // zone's rule (instantOf) costs several (the clocks changed in between: ask the rule).
    const guess = bounds.at(-1)! + nominal;
    const next = time.dateTime(guess) === wallText(wall) ? guess : instantOf(timeZone, wall);
    // A wall-clock hour the zone skips starts where the next one does: no bucket of its own.
    if (next <= bounds.at(-1)!) continue;
    bounds.push(next);
    if (next > to) return bounds;
    if (bounds.length > MAX_STATS_BUCKETS) return null;
  }
}

/** `from` or `to`: absent or empty (the default), or an instant in epoch seconds, or an error. */
function readTime(value: unknown, field: string, timeZone: string): number | undefined | FieldError {
  if (isEmpty(value)) return undefined;
  const ms = parseScheduleDateTime(value, timeZone);
  if (ms === null) return { field, message: `The format of ${fieldLabel(field)} is invalid.` };
  return Math.floor(ms / 1000);
}

const isError = (v: unknown): v is FieldError => typeof v === 'object' && v !== null;

/** `from` and `to` as read: epoch seconds (undefined when absent or empty), and the errors of the two, in that order. */
export interface TimeRange {
  from: number | undefined;
  to: number | undefined;
  errors: FieldError[];
}

/**
 * Reads `from` and `to` as sms/stats reads them (docs/API.md §10.9), for sms/stats and sms/export:
 * `YYYY-MM-DD HH:MM:SS` in the service's zone (or the other forms of `sms/schedule`'s DateTime),
 * else `The format of From is invalid.` / `The format of To is invalid.`; absent or empty:
 * undefined (the caller's default). Whether `to` comes before `from` is the caller's check.
 */
export function readTimeRange(input: { from?: unknown; to?: unknown }, timeZone: string): TimeRange {
  const from = readTime(input.from, 'from', timeZone);
  const to = readTime(input.to, 'to', timeZone);
  const errors = [from, to].filter(isError);
  return { from: isError(from) ? undefined : from, to: isError(to) ? undefined : to, errors };
}

/**
 * Reads the sms/stats query (docs/API.md §10.9).
 * - `interval`: `hour` or `day` (default `day`), else `Interval is invalid.`;
 * - `from`, `to`: `YYYY-MM-DD HH:MM:SS` in the service's zone (or the other forms of
 *   `sms/schedule`'s DateTime), else `The format of From is invalid.` / `The format of To is
 *   invalid.`; default `to` now and `from` 7 × 24 hours before `to`;
 * - `to` before `from`, or more than 366 buckets: `To is invalid.`
 * @param nowSeconds the clock's now, epoch seconds.
 * @throws ValidationFailedError (422) with the first error of each field, in the order from, to,
 *   interval.
 */
export function readStatsQuery(input: StatsInput, timeZone: string, nowSeconds: number): StatsQuery {
  const { from, to, errors } = readTimeRange(input, timeZone);
  let interval: StatsInterval = 'day';
  if (!isEmpty(input.interval)) {
    if (input.interval === 'hour' || input.interval === 'day') interval = input.interval;
    else errors.push({ field: 'interval', message: messages.invalid('interval') });
  }
  if (errors.length > 0) throw new ValidationFailedError(errors);
  const end = to ?? nowSeconds;
  const start = from ?? end - DEFAULT_SPAN_SECONDS;
  const bounds = end < start ? null : bucketBounds(timeZone, interval, start, end);
  if (bounds === null) throw new ValidationFailedError([{ field: 'to', message: messages.invalid('to') }]);
  return { bounds };
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/**
 * The buckets of a checked query for the account, every one present (zeros when empty), by time
 * ascending: the messages created in each, counted by their status now, and the credits they
 * spent less what was refunded (docs/API.md §10.9, §11.1). One grouped query: the store counts
 * per unit of time that divides every bucket (an hour, a day, or less where the zone's changes
 * are not whole hours), and the units are summed into their buckets here.
 */
export async function messageStats(store: Store, accountId: number, query: StatsQuery): Promise<StatsBucketRow[]> {
  const { bounds } = query;
  const start = bounds[0]!;
  let unit = 0;
  for (let i = 1; i < bounds.length; i++) unit = gcd(unit, bounds[i]! - bounds[i - 1]!);
  const buckets: StatsBucketRow[] = bounds
    .slice(0, -1)
    .map((s) => ({ start: s, outbound: 0, inbound: 0, delivered: 0, undelivered: 0, failed: 0, rejected: 0, credits: 0 }));
  for (const u of await countMessagesByUnit(store.db, accountId, start, bounds.at(-1)!, unit)) {
    const at = start + u.unit * unit;
    // The last bucket starting at or before `at` (binary search over the boundaries).
    let lo = 0;
    let hi = buckets.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (bounds[mid]! <= at) lo = mid;
      else hi = mid - 1;
    }
    const b = buckets[lo]!;
    b.outbound += u.outbound;
    b.inbound += u.inbound;
    b.delivered += u.delivered;
    b.undelivered += u.undelivered;
    b.failed += u.failed;
    b.rejected += u.rejected;
    b.credits += u.credits;
  }
  return buckets;
}
