/**
 * RRULE (docs/API.md §14.2): `parseRRule` reads a scheduled message's `RRule`; `checkSeries`,
 * `firstOccurrences` and `nextOccurrence` walk its occurrences in the account's zone, as the
 * scheduler does.
 *
 * Oracle: no throw; a rule longer than 255 characters or not a string is refused; the occurrences
 * never go back, are numbered 1, 2, 3…, start at DTSTART, never pass COUNT or UNTIL;
 * `nextOccurrence` after occurrence k is the first one strictly later (never the same instant twice); each input within the time bound (a rule
 * that never matches must give up at the 10-year horizon, not loop).
 */
import fc from 'fast-check';
import { checkSeries, firstOccurrences, nextOccurrence, parseRRule, RRULE_MAX_LENGTH } from '../../src/domain/recurrence.ts';
import { check, type FuzzTarget } from '../target.ts';

const ZONES = ['UTC', 'Europe/London', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'Pacific/Apia', 'America/Sao_Paulo'];
const part = fc.oneof(
  fc.constantFrom('FREQ=DAILY', 'FREQ=WEEKLY', 'FREQ=MONTHLY', 'FREQ=YEARLY', 'FREQ=HOURLY', 'freq=daily', 'FREQ='),
  fc.integer({ min: -2, max: 400 }).map((n) => `INTERVAL=${n}`),
  fc.integer({ min: -1, max: 30 }).map((n) => `COUNT=${n}`),
  fc
    .array(
      fc.tuple(fc.constantFrom('', '1', '-1', '2', '5', '+3', '53'), fc.constantFrom('MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU', 'XX')),
      { minLength: 1, maxLength: 4 },
    )
    .map((ds) => `BYDAY=${ds.map(([n, d]) => n + d).join(',')}`),
  fc.array(fc.integer({ min: -32, max: 32 }), { minLength: 1, maxLength: 4 }).map((ds) => `BYMONTHDAY=${ds.join(',')}`),
  fc.constantFrom(
    'UNTIL=20300101',
    'UNTIL=20300101T000000Z',
    'UNTIL=20240229',
    'UNTIL=20230229',
    'UNTIL=19991231T235959Z',
    'UNTIL=2030',
    'UNTIL=20301301',
  ),
  fc.constantFrom('BYMONTH=2', 'WKST=MO', 'X=1', '=', 'FREQ=DAILY;FREQ=DAILY'),
);
type Input = { rule: string; start: number; zone: string };

export const target: FuzzTarget<Input> = {
  name: 'rrule',
  oracle:
    'no throw; >255 characters refused; occurrences non-decreasing from DTSTART, numbered, within COUNT and UNTIL; nextOccurrence(k) is the first strictly later',
  files: ['src/domain/recurrence.ts'],
  maxMs: 1000,
  arbitrary: fc.record({
    rule: fc.oneof(
      fc.array(part, { minLength: 1, maxLength: 5 }).map((ps) => ps.join(';')),
      fc.string({ maxLength: 30 }),
    ),
    // 2001-09-09 … 2033-05-18, whole minutes as the API takes them.
    start: fc.integer({ min: 16_666_666, max: 33_333_333 }).map((m) => m * 60),
    zone: fc.constantFrom(...ZONES),
  }),
  dictionary: [
    'FREQ=',
    'DAILY',
    'WEEKLY',
    'MONTHLY',
    'YEARLY',
    'BYDAY=',
    'BYMONTHDAY=',
    'COUNT=',
    'UNTIL=',
    'INTERVAL=',
    ';',
    ',',
    '-1',
    '31',
    '29',
    'T000000Z',
  ],
  run({ rule: text, start, zone }) {
    const rule = parseRRule(text);
    if (text.length > RRULE_MAX_LENGTH) check(rule === null, 'a rule over 255 characters was read');
    if (rule === null) return;
    const series = { rule, startSeconds: start, zone: ZONES.includes(zone) ? zone : 'UTC' };
    if (!checkSeries(series)) return;
    const occurrences = firstOccurrences(series, 6);
    check(
      occurrences.length >= 1 && occurrences[0]!.atSeconds === start && occurrences[0]!.index === 1,
      'the first occurrence is not DTSTART',
    );
    for (let i = 1; i < occurrences.length; i++) {
      const [a, b] = [occurrences[i - 1]!, occurrences[i]!];
      // Equal instants happen only where a zone skips a whole day (Pacific/Apia, 2011-12-30): that
      // day's occurrence moves forward by the gap, onto the next day's (docs/API.md §14.2).
      check(b.atSeconds >= a.atSeconds && b.index === a.index + 1, `occurrences out of order: ${JSON.stringify(occurrences)}`);
      check(rule.count === undefined || b.index <= rule.count, 'past COUNT');
      if (rule.until && 'ms' in rule.until) check(b.atSeconds * 1000 <= rule.until.ms, 'past UNTIL');
      // What the scheduler relies on: the next occurrence after one sent is strictly later, and the first such.
      const next = nextOccurrence(series, a, a.atSeconds);
      const want = occurrences.slice(i).find((o) => o.atSeconds > a.atSeconds);
      check(next === undefined ? want === undefined : next.atSeconds > a.atSeconds, `nextOccurrence not later at ${a.index}`);
      // (Its number counts distinct instants: after a collapsed day it is one less than the list's.)
      if (want && next) check(next.atSeconds === want.atSeconds, `nextOccurrence disagrees at ${a.index}`);
      if (want && next && want === b) check(next.index === b.index, `nextOccurrence numbers ${a.index}'s next ${next.index}`);
    }
  },
};
