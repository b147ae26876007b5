/**
 * Recurrence rules (API.md §10.6 `RRule`; src/domain/recurrence.ts), pure: the grammar (what is a
 * rule and what is `R Rule is invalid.`, by example and by property over random part strings), the
 * occurrences counted from DTSTART (included in COUNT even when it does not match), their
 * wall-clock time in the service zone across daylight saving changes (spring and autumn, Paris and
 * New York, a skipped wall-clock time), BYMONTHDAY=31, UNTIL as a date and as a UTC date-time,
 * INTERVAL, the next occurrence after missed ones, and the pattern checked against the `rrule`
 * package as an oracle.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import rrule from 'rrule';
import { checkSeries, firstOccurrences, nextOccurrence, parseRRule, type RecurrenceRule } from '../../src/domain/recurrence.ts';
import { parseScheduleDateTime } from '../../src/domain/schedule-time.ts';

const { RRule, Weekday } = rrule;

/** Epoch seconds of a wall-clock time in `zone`. */
const at = (wall: string, zone: string) => Math.floor(parseScheduleDateTime(wall, zone)! / 1000);
/** The wall-clock time of an instant in `zone`, `YYYY-MM-DD HH:MM:SS`. */
const wall = (seconds: number, zone: string) => new Date(seconds * 1000).toLocaleString('sv-SE', { timeZone: zone });
const series = (text: string, start: string, zone: string) => ({ rule: parseRRule(text)!, startSeconds: at(start, zone), zone });
const walls = (text: string, start: string, zone: string, n = 10) =>
  firstOccurrences(series(text, start, zone), n).map((o) => wall(o.atSeconds, zone));

test('rules that read: every allowed part, any case, ordinals for MONTHLY/YEARLY, both UNTIL forms', () => {
  for (const ok of [
    'FREQ=DAILY',
    'FREQ=WEEKLY;BYDAY=MO;COUNT=10',
    'freq=weekly;byday=mo,we;interval=2',
    'FREQ=MONTHLY;BYMONTHDAY=31',
    'FREQ=MONTHLY;BYMONTHDAY=-1,1,15',
    'FREQ=MONTHLY;BYDAY=1MO,-1FR',
    'FREQ=MONTHLY;BYDAY=+2TU',
    'FREQ=YEARLY;BYDAY=20MO',
    'FREQ=YEARLY;BYDAY=-53SU',
    'FREQ=DAILY;BYDAY=MO,TU;BYMONTHDAY=1,2',
    'FREQ=DAILY;UNTIL=20261231',
    'FREQ=DAILY;UNTIL=20261231T235959Z',
    'COUNT=3;FREQ=DAILY',
    'FREQ=DAILY;INTERVAL=999999999',
  ])
    assert.ok(parseRRule(ok), ok);
  assert.deepEqual(parseRRule('FREQ=MONTHLY;BYDAY=-1FR;INTERVAL=2;COUNT=4'), {
    freq: 'MONTHLY',
    interval: 2,
    byDay: [{ weekday: 4, n: -1 }],
    byMonthDay: undefined,
    count: 4,
    until: undefined,
  } satisfies RecurrenceRule);
});

test('not rules: other parts, repeats, bad values, COUNT with UNTIL, non-strings, too long', () => {
  for (const bad of [
    '',
    'FREQ=HOURLY',
    'FREQ=MINUTELY',
    'FREQ=',
    'INTERVAL=2',
    'FREQ=DAILY;FREQ=WEEKLY',
    'FREQ=DAILY;COUNT=2;COUNT=3',
    'FREQ=DAILY;COUNT=0',
    'FREQ=DAILY;COUNT=-1',
    'FREQ=DAILY;COUNT=+1',
    'FREQ=DAILY;COUNT=1.5',
    'FREQ=DAILY;COUNT=1234567890',
    'FREQ=DAILY;INTERVAL=0',
    'FREQ=DAILY;INTERVAL=x',
    'FREQ=DAILY;COUNT=3;UNTIL=20261231',
    'FREQ=DAILY;UNTIL=20260230',
    'FREQ=DAILY;UNTIL=20261231T240000Z',
    'FREQ=DAILY;UNTIL=20261231T120000',
    'FREQ=DAILY;UNTIL=2026-12-31',
    'FREQ=WEEKLY;BYDAY=1MO',
    'FREQ=DAILY;BYDAY=-1FR',
    'FREQ=MONTHLY;BYDAY=6MO',
    'FREQ=MONTHLY;BYDAY=0MO',
    'FREQ=YEARLY;BYDAY=54MO',
    'FREQ=WEEKLY;BYDAY=XX',
    'FREQ=WEEKLY;BYDAY=MO,',
    'FREQ=WEEKLY;BYDAY=',
    'FREQ=WEEKLY;BYMONTHDAY=1',
    'FREQ=MONTHLY;BYMONTHDAY=0',
    'FREQ=MONTHLY;BYMONTHDAY=32',
    'FREQ=MONTHLY;BYMONTHDAY=-32',
    'FREQ=MONTHLY;BYDAY=1MO;BYMONTHDAY=1',
    'FREQ=YEARLY;BYMONTH=1',
    'FREQ=WEEKLY;WKST=SU',
    'FREQ=DAILY;BYSETPOS=1',
    'FREQ=DAILY;BYHOUR=9',
    'RRULE:FREQ=DAILY',
    'FREQ=DAILY;',
    ';FREQ=DAILY',
    'FREQ=DAILY;;COUNT=2',
    ' FREQ=DAILY',
    'FREQ=DAILY ',
    'FREQ=DAILY\n',
    'FREQ=DAILY;COUNT',
    `FREQ=DAILY;BYMONTHDAY=${Array(118).fill('1').join(',')}`, // 257 characters
  ])
    assert.equal(parseRRule(bad), null, JSON.stringify(bad));
  assert.ok(parseRRule(`FREQ=DAILY;BYMONTHDAY=${Array(117).fill('1').join(',')}`), '255 characters');
  for (const v of [null, undefined, 1, true, ['FREQ=DAILY'], { FREQ: 'DAILY' }]) assert.equal(parseRRule(v), null);
});

test('property: any text made of rule-like parts reads as a rule or not, never throws; a rule read round-trips its parts', () => {
  const name = fc.constantFrom('FREQ', 'INTERVAL', 'BYDAY', 'BYMONTHDAY', 'COUNT', 'UNTIL', 'BYMONTH', 'WKST', 'freq', 'X', '');
  const value = fc.oneof(
    fc.constantFrom(
      'DAILY',
      'WEEKLY',
      'MONTHLY',
      'YEARLY',
      'HOURLY',
      'MO',
      '1MO',
      '-1FR',
      '53SU',
      '0',
      '1',
      '31',
      '-31',
      '20261231',
      '20261231T000000Z',
      '',
    ),
    fc.string({ maxLength: 12 }),
  );
  const part = fc.tuple(name, fc.constantFrom('=', ':', ''), value).map(([n, eq, v]) => `${n}${eq}${v}`);
  fc.assert(
    fc.property(fc.array(part, { minLength: 0, maxLength: 6 }), fc.constantFrom(';', ',', ' ;'), (parts, sep) => {
      const text = parts.join(sep);
      const rule = parseRRule(text);
      if (rule === null) return;
      assert.ok(['DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY'].includes(rule.freq));
      assert.ok(rule.interval >= 1);
      assert.ok(!(rule.count !== undefined && rule.until !== undefined));
      const names = text.split(';').map((p) => p.split('=')[0]!.toUpperCase());
      assert.equal(new Set(names).size, names.length, 'no part twice');
    }),
    { numRuns: 2000 },
  );
});

test('DTSTART is the first occurrence and counts in COUNT, even when it does not match the pattern', () => {
  const z = 'UTC';
  // 2026-03-23 is a Monday; BYDAY=TU: Monday itself, then Tuesdays.
  assert.deepEqual(walls('FREQ=WEEKLY;BYDAY=TU;COUNT=3', '2026-03-23 09:00:00', z), [
    '2026-03-23 09:00:00',
    '2026-03-24 09:00:00',
    '2026-03-31 09:00:00',
  ]);
  assert.deepEqual(walls('FREQ=WEEKLY;COUNT=3', '2026-03-23 09:00:00', z), [
    '2026-03-23 09:00:00',
    '2026-03-30 09:00:00',
    '2026-04-06 09:00:00',
  ]);
  assert.deepEqual(walls('FREQ=DAILY;COUNT=1', '2026-03-23 09:00:00', z), ['2026-03-23 09:00:00']);
});

test('weekly keeps 09:00 wall-clock across both daylight saving changes (Europe/Paris, America/New_York)', () => {
  const paris = 'Europe/Paris';
  assert.deepEqual(walls('FREQ=WEEKLY;COUNT=3', '2026-03-23 09:00:00', paris), [
    '2026-03-23 09:00:00',
    '2026-03-30 09:00:00',
    '2026-04-06 09:00:00',
  ]);
  const spring = firstOccurrences(series('FREQ=WEEKLY;COUNT=2', '2026-03-23 09:00:00', paris), 2);
  assert.equal(spring[1]!.atSeconds - spring[0]!.atSeconds, 7 * 86_400 - 3600, 'a week less the hour the clocks went forward');
  const autumn = firstOccurrences(series('FREQ=WEEKLY;COUNT=2', '2026-10-19 09:00:00', paris), 2);
  assert.deepEqual(
    autumn.map((o) => wall(o.atSeconds, paris)),
    ['2026-10-19 09:00:00', '2026-10-26 09:00:00'],
  );
  assert.equal(autumn[1]!.atSeconds - autumn[0]!.atSeconds, 7 * 86_400 + 3600);
  const ny = 'America/New_York';
  assert.deepEqual(walls('FREQ=WEEKLY;COUNT=3', '2026-03-02 09:00:00', ny), [
    '2026-03-02 09:00:00',
    '2026-03-09 09:00:00',
    '2026-03-16 09:00:00',
  ]);
  assert.deepEqual(walls('FREQ=WEEKLY;COUNT=3', '2026-10-26 09:00:00', ny), [
    '2026-10-26 09:00:00',
    '2026-11-02 09:00:00',
    '2026-11-09 09:00:00',
  ]);
});

test('a skipped wall-clock time moves forward by the gap that day only; a repeated one takes the first instant', () => {
  const paris = 'Europe/Paris';
  // Sundays at 02:30: on 2026-03-29 Paris skips 02:00–03:00.
  assert.deepEqual(walls('FREQ=WEEKLY;COUNT=3', '2026-03-22 02:30:00', paris), [
    '2026-03-22 02:30:00',
    '2026-03-29 03:30:00',
    '2026-04-05 02:30:00',
  ]);
  // 02:30 on 2026-10-25 happens twice: the first (CEST, 00:30 UTC).
  const o = firstOccurrences(series('FREQ=WEEKLY;COUNT=2', '2026-10-18 02:30:00', paris), 2)[1]!;
  assert.equal(new Date(o.atSeconds * 1000).toISOString(), '2026-10-25T00:30:00.000Z');
  // The series goes on from a shifted occurrence as from any other.
  const s = series('FREQ=WEEKLY', '2026-03-22 02:30:00', paris);
  const shifted = firstOccurrences(s, 2)[1]!;
  assert.equal(wall(nextOccurrence(s, shifted, shifted.atSeconds)!.atSeconds, paris), '2026-04-05 02:30:00');
});

test('BYMONTHDAY=31 skips the months without a 31st; MONTHLY from a 31st likewise; INTERVAL=2; -1 is the last day', () => {
  const z = 'Europe/Paris';
  assert.deepEqual(walls('FREQ=MONTHLY;BYMONTHDAY=31;COUNT=5', '2026-01-31 08:00:00', z), [
    '2026-01-31 08:00:00',
    '2026-03-31 08:00:00',
    '2026-05-31 08:00:00',
    '2026-07-31 08:00:00',
    '2026-08-31 08:00:00',
  ]);
  assert.deepEqual(walls('FREQ=MONTHLY;COUNT=3', '2026-01-31 08:00:00', z), [
    '2026-01-31 08:00:00',
    '2026-03-31 08:00:00',
    '2026-05-31 08:00:00',
  ]);
  assert.deepEqual(walls('FREQ=MONTHLY;BYMONTHDAY=-1;COUNT=3', '2026-01-31 08:00:00', z), [
    '2026-01-31 08:00:00',
    '2026-02-28 08:00:00',
    '2026-03-31 08:00:00',
  ]);
  assert.deepEqual(walls('FREQ=WEEKLY;INTERVAL=2;COUNT=3', '2026-03-02 10:00:00', z), [
    '2026-03-02 10:00:00',
    '2026-03-16 10:00:00',
    '2026-03-30 10:00:00',
  ]);
  assert.deepEqual(walls('FREQ=MONTHLY;BYDAY=-1FR;COUNT=3', '2026-01-30 10:00:00', z), [
    '2026-01-30 10:00:00',
    '2026-02-27 10:00:00',
    '2026-03-27 10:00:00',
  ]);
});

test('UNTIL: a date keeps that whole wall-clock day; a UTC date-time keeps occurrences at or before it', () => {
  const z = 'America/New_York';
  assert.deepEqual(walls('FREQ=DAILY;UNTIL=20260305', '2026-03-03 22:00:00', z), [
    '2026-03-03 22:00:00',
    '2026-03-04 22:00:00',
    '2026-03-05 22:00:00',
  ]);
  // 22:00 EST is 03:00Z the next day: UNTIL=20260305T030000Z keeps 03-04 22:00 (= 03-05T03:00Z), not 03-05.
  assert.deepEqual(walls('FREQ=DAILY;UNTIL=20260305T030000Z', '2026-03-03 22:00:00', z), ['2026-03-03 22:00:00', '2026-03-04 22:00:00']);
});

test('no occurrence is not a rule: UNTIL before DateTime, a pattern that does not come again within 10 years', () => {
  const z = 'UTC';
  assert.equal(checkSeries(series('FREQ=DAILY;UNTIL=20260301', '2026-03-02 09:00:00', z)), false);
  assert.equal(checkSeries(series('FREQ=DAILY;UNTIL=20260302', '2026-03-02 09:00:00', z)), true);
  assert.equal(checkSeries(series('FREQ=DAILY;INTERVAL=7;BYDAY=TU', '2026-03-02 09:00:00', z)), false, 'Mondays only, never a Tuesday');
  assert.equal(checkSeries(series('FREQ=YEARLY;INTERVAL=11', '2026-03-02 09:00:00', z)), false);
  assert.equal(checkSeries(series('FREQ=YEARLY;INTERVAL=10', '2026-03-02 09:00:00', z)), true);
  assert.equal(checkSeries(series('FREQ=YEARLY', '2028-02-29 09:00:00', z)), true, 'the next 29 February');
  const started = performance.now();
  checkSeries(series('FREQ=DAILY;INTERVAL=7;BYDAY=TU', '2026-03-02 09:00:00', z));
  assert.ok(performance.now() - started < 500, 'a pattern that never comes costs a bounded search');
});

test('next occurrence: the first after the current one that is still ahead; the missed ones are skipped and counted', () => {
  const z = 'UTC';
  const s = series('FREQ=DAILY;COUNT=10', '2026-03-02 09:00:00', z);
  const first = { index: 1, atSeconds: s.startSeconds };
  assert.deepEqual(nextOccurrence(s, first, s.startSeconds), { index: 2, atSeconds: s.startSeconds + 86_400 });
  // Three days late: occurrences 2 and 3 are skipped; the next is 4 (still ahead).
  assert.deepEqual(nextOccurrence(s, first, s.startSeconds + 3 * 86_400 - 1), { index: 4, atSeconds: s.startSeconds + 3 * 86_400 });
  assert.equal(
    nextOccurrence(s, { index: 10, atSeconds: s.startSeconds + 9 * 86_400 }, s.startSeconds + 9 * 86_400),
    undefined,
    'COUNT reached',
  );
  assert.equal(nextOccurrence(s, first, s.startSeconds + 20 * 86_400), undefined, 'all passed');
});

const FREQ = { DAILY: RRule.DAILY, WEEKLY: RRule.WEEKLY, MONTHLY: RRule.MONTHLY, YEARLY: RRule.YEARLY } as const;

test('property: the pattern after DTSTART is the rrule package’s (the oracle), in UTC', () => {
  const weekday = fc.integer({ min: 0, max: 6 });
  const rule = fc
    .record({
      freq: fc.constantFrom('DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY'),
      interval: fc.integer({ min: 1, max: 3 }),
      days: fc.option(fc.uniqueArray(weekday, { minLength: 1, maxLength: 3 }), { nil: undefined }),
      nth: fc.option(
        fc.integer({ min: -4, max: 4 }).filter((n) => n !== 0),
        { nil: undefined },
      ),
      monthDays: fc.option(
        fc.uniqueArray(
          fc.integer({ min: -28, max: 28 }).filter((n) => n !== 0),
          { minLength: 1, maxLength: 3 },
        ),
        { nil: undefined },
      ),
    })
    .map(({ freq, interval, days, nth, monthDays }): RecurrenceRule => {
      const ordinal = (freq === 'MONTHLY' || freq === 'YEARLY') && !monthDays ? nth : undefined;
      return {
        freq: freq,
        interval,
        byDay: days?.map((d) => ({ weekday: d, n: ordinal })),
        byMonthDay: freq === 'WEEKLY' ? undefined : monthDays,
        count: undefined,
        until: undefined,
      };
    });
  const start = fc.integer({ min: Date.UTC(2025, 0, 1) / 1000, max: Date.UTC(2030, 0, 1) / 1000 }).map((s) => s - (s % 60));
  fc.assert(
    fc.property(rule, start, (r, startSeconds) => {
      const s = { rule: r, startSeconds, zone: 'UTC' };
      if (!checkSeries(s)) return;
      const mine = firstOccurrences(s, 25)
        .slice(1)
        .map((o) => o.atSeconds);
      const oracle = new RRule({
        freq: FREQ[r.freq],
        interval: r.interval,
        dtstart: new Date(startSeconds * 1000),
        wkst: RRule.MO,
        ...(r.byDay ? { byweekday: r.byDay.map((d) => new Weekday(d.weekday, d.n)) } : {}),
        ...(r.byMonthDay ? { bymonthday: r.byMonthDay } : {}),
      })
        .all((_d, i) => i < 30)
        .map((d) => d.getTime() / 1000)
        .filter((t) => t > startSeconds)
        .slice(0, mine.length);
      assert.deepEqual(mine, oracle, JSON.stringify(r));
    }),
    { numRuns: 300 },
  );
});
