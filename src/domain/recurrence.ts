import { zonedTimeToEpochMs } from './schedule-time.ts';

/**
 * Recurrence rules of scheduled messages (API.md §10.6 `RRule`, API.md §11.7): reading the rule
 * (RFC 5545 RECUR, a subset) and the occurrences it gives from a scheduled message's `DateTime`.
 * Pure: no store, no clock. The rule's pattern is computed over "floating" times (the wall-clock
 * fields in the service's zone, held as if UTC), and each wall-clock time is then turned into an
 * instant in the zone, so an occurrence keeps its wall-clock time across daylight saving changes.
 * The pattern is this module's own, bounded walk (`eachAfter`), checked against the `rrule`
 * package in test/domain/unit-rrule.test.ts: `rrule` itself runs to the year 9999 on a pattern
 * with no further occurrence (seconds per call), which a request must never cost.
 *
 * The rule, written down here:
 * - Parts `NAME=VALUE` separated by `;`, names and the values' words in any case (RFC 5545 §3.1);
 *   at most 255 characters. `FREQ` (required) is `DAILY`, `WEEKLY`, `MONTHLY` or `YEARLY`;
 *   `INTERVAL` and `COUNT` are positive integers of at most 9 digits; `BYDAY` a comma list of
 *   `MO`…`SU`, each with an ordinal (`1MO`, `-1FR`, `+2TU`) only when `FREQ` is `MONTHLY`
 *   (±1…5) or `YEARLY` (±1…53); `BYMONTHDAY` a comma list of ±1…31, not with `WEEKLY` (RFC
 *   5545) nor with an ordinal `BYDAY`; `UNTIL` a date `YYYYMMDD` or a UTC date-time
 *   `YYYYMMDDTHHMMSSZ`. Anything else (another part such as `BYMONTH` or `WKST`, a part twice, an
 *   empty part or list item, `COUNT` with `UNTIL`, a `RRULE:` prefix) is not a rule.
 * - `DateTime` is the first occurrence (RFC 5545's DTSTART), counted in `COUNT` even when it does
 *   not match the pattern; the next ones are the pattern's occurrences after it. The pattern keeps
 *   DTSTART's time of day; the parts it lacks come from DTSTART as RFC 5545 says (`WEEKLY` its
 *   weekday, `MONTHLY` its day of the month, `YEARLY` its month and day). A day a month lacks is
 *   skipped (`BYMONTHDAY=31` skips April; `FREQ=MONTHLY` from a 31st likewise).
 * - A rule with no occurrence is not a rule either: `UNTIL` before `DateTime`, or a pattern that
 *   does not come again within 10 years after `DateTime` (`FREQ=DAILY;INTERVAL=7;BYDAY=TU` from a
 *   Monday, `FREQ=YEARLY;INTERVAL=11`).
 * - A series ends when its next occurrence would be more than 10 years after the one before.
 * - `UNTIL` as a date keeps the occurrences whose wall-clock date in the zone is that date or
 *   before; as a date-time, those at that instant or before.
 * - Wall-clock time in the zone: an occurrence whose wall-clock time the zone skips (a
 *   spring-forward night) is sent that day at the time moved forward by the gap (02:30 → 03:30),
 *   as `DateTime` itself is read; one the zone repeats (autumn) at its first instant.
 */

/** The longest `RRule` text (characters). */
export const RRULE_MAX_LENGTH = 255;

/** Yii2's label of `RRule` (Inflector::camel2words): the 422 message is `R Rule is invalid.` */
export const RRULE_LABEL = 'R Rule';

/** Years after DTSTART within which occurrences are looked for. */
const HORIZON_YEARS = 10;

type Freq = 'DAILY' | 'WEEKLY' | 'MONTHLY' | 'YEARLY';
const FREQS: ReadonlySet<string> = new Set<Freq>(['DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY']);
const WEEKDAYS = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'] as const;

/** A rule read by `parseRRule`. */
export interface RecurrenceRule {
  freq: Freq;
  interval: number;
  /** Weekdays, 0 Monday … 6 Sunday, with an ordinal (nth in the month or year) or none. */
  byDay: { weekday: number; n: number | undefined }[] | undefined;
  byMonthDay: number[] | undefined;
  count: number | undefined;
  /** A date (inclusive, the zone's wall-clock date) or an instant (epoch ms, inclusive). */
  until: { date: [number, number, number] } | { ms: number } | undefined;
}

const PART = /^([A-Za-z]+)=(.+)$/s;
const POSITIVE = /^[0-9]{1,9}$/;
const DAY = /^([+-]?[0-9]{1,2})?(MO|TU|WE|TH|FR|SA|SU)$/;
const MONTHDAY = /^[+-]?[0-9]{1,2}$/;
const UNTIL = /^([0-9]{4})([0-9]{2})([0-9]{2})(?:T([0-9]{2})([0-9]{2})([0-9]{2})Z)?$/;

function positive(value: string): number | null {
  if (!POSITIVE.test(value)) return null;
  const n = Number(value);
  return n >= 1 ? n : null;
}

function list<T>(value: string, item: (s: string) => T | null): T[] | null {
  const out: T[] = [];
  for (const s of value.split(',')) {
    const v = item(s);
    if (v === null) return null;
    out.push(v);
  }
  return out;
}

function daysInMonth(y: number, m: number): number {
  const t = new Date(0);
  t.setUTCFullYear(y, m, 0);
  return t.getUTCDate();
}

function readUntil(value: string): RecurrenceRule['until'] | null {
  const m = UNTIL.exec(value);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return null;
  if (m[4] === undefined) return { date: [y, mo, d] };
  const [h, mi, s] = [Number(m[4]), Number(m[5]), Number(m[6])];
  if (h > 23 || mi > 59 || s > 59) return null;
  return { ms: utcMs(y, mo, d, h, mi, s) };
}

/**
 * Reads an `RRule` (see the module comment). Pure; the occurrences are not checked here (see
 * `checkSeries`).
 * @returns the rule, or null when `value` is not a rule (`R Rule is invalid.`): not a string, empty,
 *   longer than 255 characters, or not of the grammar.
 */
export function parseRRule(value: unknown): RecurrenceRule | null {
  if (typeof value !== 'string' || value === '' || value.length > RRULE_MAX_LENGTH) return null;
  const seen = new Map<string, string>();
  for (const part of value.split(';')) {
    const m = PART.exec(part);
    if (!m) return null;
    const name = m[1]!.toUpperCase();
    if (seen.has(name)) return null;
    seen.set(name, m[2]!.toUpperCase());
  }
  const freq = seen.get('FREQ');
  if (freq === undefined || !FREQS.has(freq)) return null;
  const rule: RecurrenceRule = {
    freq: freq as Freq,
    interval: 1,
    byDay: undefined,
    byMonthDay: undefined,
    count: undefined,
    until: undefined,
  };
  for (const [name, v] of seen) {
    switch (name) {
      case 'FREQ':
        break;
      case 'INTERVAL': {
        const n = positive(v);
        if (n === null) return null;
        rule.interval = n;
        break;
      }
      case 'COUNT': {
        const n = positive(v);
        if (n === null) return null;
        rule.count = n;
        break;
      }
      case 'UNTIL': {
        const u = readUntil(v);
        if (!u) return null;
        rule.until = u;
        break;
      }
      case 'BYDAY': {
        const maxN = rule.freq === 'MONTHLY' ? 5 : rule.freq === 'YEARLY' ? 53 : 0;
        const days = list(v, (s) => {
          const d = DAY.exec(s);
          if (!d) return null;
          const n = d[1] === undefined ? undefined : Number(d[1]);
          if (n !== undefined && (n === 0 || Math.abs(n) > maxN)) return null;
          return { weekday: WEEKDAYS.indexOf(d[2] as (typeof WEEKDAYS)[number]), n };
        });
        if (!days) return null;
        rule.byDay = days;
        break;
      }
      case 'BYMONTHDAY': {
        if (rule.freq === 'WEEKLY') return null;
        const days = list(v, (s) => {
          if (!MONTHDAY.test(s)) return null;
          const n = Number(s);
          return n === 0 || Math.abs(n) > 31 ? null : n;
        });
        if (!days) return null;
        rule.byMonthDay = days;
        break;
      }
      default:
        return null;
    }
  }
  if (rule.count !== undefined && rule.until !== undefined) return null;
  // An nth weekday that must also be a given day of the month rarely or never comes (and the
  // pattern is costly to search): not supported.
  if (rule.byMonthDay && rule.byDay?.some((d) => d.n !== undefined)) return null;
  return rule;
}

// ------------------------------------------------------------------ floating time

/** Epoch ms of a UTC calendar time (years 0–99 read as such). */
function utcMs(y: number, mo: number, d: number, h: number, mi: number, s: number): number {
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d);
  t.setUTCHours(h, mi, s, 0);
  return t.getTime();
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The wall-clock time of an instant in `zone`, as a "floating" Date (its UTC fields are the wall-clock fields). */
export function floatingOf(epochSeconds: number, zone: string): Date {
  if (zone === 'UTC' || zone === 'Etc/UTC') return new Date(epochSeconds * 1000);
  let fmt = formatters.get(zone);
  if (!fmt) {
    fmt = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, fmt);
  }
  const p: Record<string, string> = {};
  for (const part of fmt.formatToParts(new Date(epochSeconds * 1000))) p[part.type] = part.value;
  return new Date(utcMs(Number(p.year), Number(p.month), Number(p.day), Number(p.hour), Number(p.minute), Number(p.second)));
}

/** The instant (epoch seconds) of a floating wall-clock time in `zone` (gaps move forward, repeats take the first). */
export function instantOf(floating: Date, zone: string): number {
  const ms = zonedTimeToEpochMs(
    zone,
    floating.getUTCFullYear(),
    floating.getUTCMonth() + 1,
    floating.getUTCDate(),
    floating.getUTCHours(),
    floating.getUTCMinutes(),
    floating.getUTCSeconds(),
  );
  return Math.floor(ms / 1000);
}

// ------------------------------------------------------------------ occurrences

/** A rule counted from its first occurrence (DTSTART, epoch seconds) in a zone. */
export interface Series {
  rule: RecurrenceRule;
  /** The first occurrence (the DateTime the rule is counted from), epoch seconds. */
  startSeconds: number;
  /** The IANA zone whose wall-clock time the occurrences keep. */
  zone: string;
}

/** An occurrence: its number in the series (1 is DTSTART) and its instant (epoch seconds). */
export interface Occurrence {
  index: number;
  atSeconds: number;
}

const DAY_MS = 86_400_000;

const DOW_OF_EPOCH = 3; // 1970-01-01 was a Thursday (0 Monday … 6 Sunday)

/** Monday-based weekday of a day number (days since 1970-01-01). */
const weekdayOf = (day: number) => (((day + DOW_OF_EPOCH) % 7) + 7) % 7;

/** Day number of a calendar date (month 1–12; a day past the month's end is not asked for). */
const dayOf = (y: number, m: number, d: number) => Math.floor(utcMs(y, m, d, 0, 0, 0) / DAY_MS);

/** The days (numbers) of month `m` of year `y` the rule's BYMONTHDAY names, BYDAY (no ordinals) filtering them. */
function monthDays(rule: RecurrenceRule, y: number, m: number, baseDay: number): number[] {
  const length = daysInMonth(y, m);
  const first = dayOf(y, m, 1);
  const out: number[] = [];
  if (rule.byMonthDay) {
    for (const md of rule.byMonthDay) {
      const d = md > 0 ? md : length + md + 1;
      if (d >= 1 && d <= length) out.push(first + d - 1);
    }
  } else if (rule.byDay) {
    for (const { weekday, n } of rule.byDay) {
      const firstOfDay = first + ((weekday - weekdayOf(first) + 7) % 7);
      const all: number[] = [];
      for (let d = firstOfDay; d < first + length; d += 7) all.push(d);
      if (n === undefined) out.push(...all);
      else {
        const pick = n > 0 ? all[n - 1] : all[all.length + n];
        if (pick !== undefined) out.push(pick);
      }
    }
    return out;
  } else if (baseDay <= length) out.push(first + baseDay - 1);
  return rule.byDay ? out.filter((d) => rule.byDay!.some((b) => b.weekday === weekdayOf(d))) : out;
}

/** The days (numbers) of year `y` a YEARLY rule gives (see the module comment). */
function yearDays(rule: RecurrenceRule, y: number, base: Date): number[] {
  if (rule.byMonthDay) {
    const out: number[] = [];
    for (let m = 1; m <= 12; m++) out.push(...monthDays(rule, y, m, 0));
    return out;
  }
  if (rule.byDay) {
    const first = dayOf(y, 1, 1);
    const end = dayOf(y + 1, 1, 1);
    const out: number[] = [];
    for (const { weekday, n } of rule.byDay) {
      const all: number[] = [];
      for (let d = first + ((weekday - weekdayOf(first) + 7) % 7); d < end; d += 7) all.push(d);
      if (n === undefined) out.push(...all);
      else {
        const pick = n > 0 ? all[n - 1] : all[all.length + n];
        if (pick !== undefined) out.push(pick);
      }
    }
    return out;
  }
  const m = base.getUTCMonth() + 1;
  const d = base.getUTCDate();
  return d <= daysInMonth(y, m) ? [dayOf(y, m, d)] : [];
}

/**
 * The rule's pattern after `base` (a floating time: DTSTART, or an occurrence of the pattern), in
 * order, as floating times at `base`'s time of day, while `visit` returns true, up to 10 years
 * after `base`. RFC 5545's table: DAILY filters by BYMONTHDAY and BYDAY; WEEKLY expands BYDAY
 * (default: DTSTART's weekday) within weeks starting on Monday; MONTHLY expands BYMONTHDAY (BYDAY
 * then filters) or BYDAY (all such weekdays, or the nth from the start or the end of the month),
 * default DTSTART's day; YEARLY expands BYMONTHDAY over every month, or BYDAY over the year (the
 * nth of the year), default DTSTART's month and day. Every step costs one period, so the search is
 * bounded (at most 3,653 periods) whatever the rule.
 */
function eachAfter(rule: RecurrenceRule, base: Date, visit: (floating: Date) => boolean): void {
  const baseMs = base.getTime();
  const baseDay = Math.floor(baseMs / DAY_MS);
  const tod = baseMs - baseDay * DAY_MS;
  const y0 = base.getUTCFullYear();
  const m0 = base.getUTCMonth() + 1;
  const horizon = dayOf(
    Math.min(9999, y0 + HORIZON_YEARS),
    m0,
    Math.min(base.getUTCDate(), daysInMonth(Math.min(9999, y0 + HORIZON_YEARS), m0)),
  );
  const emit = (days: number[]): boolean => {
    for (const d of [...new Set(days)].sort((a, b) => a - b)) {
      if (d <= baseDay) continue;
      if (d > horizon) return false;
      if (!visit(new Date(d * DAY_MS + tod))) return false;
    }
    return true;
  };
  for (let k = 0; ; k++) {
    let days: number[];
    let start: number;
    switch (rule.freq) {
      case 'DAILY': {
        start = baseDay + k * rule.interval;
        const date = new Date(start * DAY_MS);
        const ok =
          (!rule.byDay || rule.byDay.some((b) => b.weekday === weekdayOf(start))) &&
          (!rule.byMonthDay || monthDays(rule, date.getUTCFullYear(), date.getUTCMonth() + 1, 0).includes(start));
        days = ok ? [start] : [];
        break;
      }
      case 'WEEKLY': {
        start = baseDay - weekdayOf(baseDay) + 7 * k * rule.interval;
        const weekdays = rule.byDay ? rule.byDay.map((b) => b.weekday) : [weekdayOf(baseDay)];
        days = weekdays.map((w) => start + w);
        break;
      }
      case 'MONTHLY': {
        const months = m0 - 1 + k * rule.interval;
        const y = y0 + Math.floor(months / 12);
        if (y > 9999) return;
        const m = (months % 12) + 1;
        start = dayOf(y, m, 1);
        days = monthDays(rule, y, m, base.getUTCDate());
        break;
      }
      default: {
        const y = y0 + k * rule.interval;
        if (y > 9999) return;
        start = dayOf(y, 1, 1);
        days = yearDays(rule, y, base);
      }
    }
    if (start > horizon) return;
    if (!emit(days)) return;
  }
}

function withinUntil(rule: RecurrenceRule, floating: Date, atSeconds: number): boolean {
  const u = rule.until;
  if (u === undefined) return true;
  if ('ms' in u) return atSeconds * 1000 <= u.ms;
  return floating.getTime() < utcMs(u.date[0], u.date[1], u.date[2] + 1, 0, 0, 0);
}

/**
 * The floating time the rule gave for an occurrence stored at `atSeconds`: its wall-clock date at
 * DTSTART's time of day (the stored time differs only when the zone skipped that wall-clock time,
 * by less than a day, forward).
 */
function nominalOf(series: Series, atSeconds: number): Date {
  const tod = ((floatingOf(series.startSeconds, series.zone).getTime() % DAY_MS) + DAY_MS) % DAY_MS;
  const f = floatingOf(atSeconds, series.zone).getTime();
  let nominal = Math.floor(f / DAY_MS) * DAY_MS + tod;
  if (nominal > f) nominal -= DAY_MS;
  return new Date(nominal);
}

/**
 * Visits the occurrences after occurrence `from` (DTSTART itself when `from` is undefined), in
 * order, while `visit` returns true and the series (COUNT, UNTIL, the horizon) lasts.
 * Starting from an occurrence of the pattern rather than from DTSTART gives the same occurrences
 * (it lies on the INTERVAL grid, and the parts RFC 5545 takes from DTSTART are the same on every
 * occurrence) at a cost that does not grow with the series' age.
 */
function walk(series: Series, from: Occurrence | undefined, visit: (o: Occurrence) => boolean): void {
  const { rule, zone, startSeconds } = series;
  const origin = floatingOf(startSeconds, zone);
  if (from === undefined) {
    if (!withinUntil(rule, origin, startSeconds) || !visit({ index: 1, atSeconds: startSeconds })) return;
    from = { index: 1, atSeconds: startSeconds };
  }
  const base = from.index === 1 ? origin : nominalOf(series, from.atSeconds);
  let index = from.index;
  eachAfter(rule, base, (d) => {
    index++;
    const o = { index, atSeconds: instantOf(d, zone) };
    if ((rule.count !== undefined && index > rule.count) || !withinUntil(rule, d, o.atSeconds)) return false;
    return visit(o);
  });
}

/**
 * The first occurrence after occurrence `current` whose time is after `notBeforeSeconds`;
 * occurrences in between whose time has passed are skipped.
 * @param current the occurrence the scheduled message stands for (its number and its stored time).
 * @returns it, or undefined when the series has none (it ends).
 */
export function nextOccurrence(series: Series, current: Occurrence, notBeforeSeconds: number): Occurrence | undefined {
  let found: Occurrence | undefined;
  walk(series, current, (o) => {
    if (o.atSeconds <= notBeforeSeconds) return true;
    found = o;
    return false;
  });
  return found;
}

/** The first `n` occurrences of a series, DTSTART first (for tests and docs). */
export function firstOccurrences(series: Series, n: number): Occurrence[] {
  const out: Occurrence[] = [];
  walk(series, undefined, (o) => {
    out.push(o);
    return out.length < n;
  });
  return out;
}

/**
 * True when the series has an occurrence (DTSTART within UNTIL) and its pattern comes again after
 * DTSTART within the horizon (COUNT and UNTIL aside): the last rule of `R Rule is invalid.`
 */
export function checkSeries(series: Series): boolean {
  const { rule, zone, startSeconds } = series;
  const origin = floatingOf(startSeconds, zone);
  if (!withinUntil(rule, origin, startSeconds)) return false;
  let again = false;
  eachAfter(rule, origin, () => {
    again = true;
    return false;
  });
  return again;
}
