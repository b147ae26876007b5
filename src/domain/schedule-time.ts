/**
 * The `DateTime` of a scheduled message as clients write it (API.md §10.6 `schedule`):
 * - `YYYY:MM:DD HH:MM:SS` (as the record shows it) or `YYYY-MM-DD HH:MM:SS`, both wall-clock time
 *   in the service's time zone (MSGSVC_TIMEZONE, an IANA zone);
 * - ISO 8601 with an offset: `YYYY-MM-DDTHH:MM:SS`, optionally with a decimal fraction of a
 *   second, then `Z` or `±HH:MM` (also `±HHMM`, `±HH`): `2026-12-01T09:00:00+01:00`,
 *   `2026-12-01T08:00:00Z`.
 * Anything else (another layout, a date that is not in the calendar, an hour past 23, an ISO time
 * without an offset) is not a DateTime: `The format of Date Time is invalid.`
 *
 * Wall-clock times the zone skips or repeats (daylight saving changes) are read as PHP's DateTime
 * reads them: a skipped time moves forward by the gap (02:30 on a spring-forward night in
 * America/New_York is 03:30 EDT), a repeated one is its first occurrence (the earlier instant).
 */

const LOCAL = /^(\d{4})([:-])(\d{2})\2(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;
const ISO = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?(Z|[+-]\d{2}(?::?\d{2})?)$/;

/** Epoch ms of a UTC calendar time (any year 0–9999; Date.UTC would read years 0–99 as 1900–1999). */
function utcMs(y: number, mo: number, d: number, h: number, mi: number, s: number): number {
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d);
  t.setUTCHours(h, mi, s, 0);
  return t.getTime();
}

function validFields(y: number, mo: number, d: number, h: number, mi: number, s: number): boolean {
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return false;
  const t = new Date(0);
  t.setUTCFullYear(y, mo, 0); // day 0 of the next month: the last day of this one
  return d <= t.getUTCDate();
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The zone's offset from UTC at instant `epochMs`, in ms (east positive). */
function offsetAt(timeZone: string, epochMs: number): number {
  if (timeZone === 'UTC' || timeZone === 'Etc/UTC') return 0;
  let fmt = formatters.get(timeZone);
  if (!fmt) {
    fmt = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, fmt);
  }
  const p: Record<string, string> = {};
  for (const part of fmt.formatToParts(new Date(epochMs))) p[part.type] = part.value;
  const year = p.era === 'BC' || p.era === 'B' ? 1 - Number(p.year) : Number(p.year);
  const wall = utcMs(year, Number(p.month), Number(p.day), Number(p.hour), Number(p.minute), Number(p.second));
  return wall - Math.floor(epochMs / 1000) * 1000;
}

/**
 * The instant (epoch ms) of a wall-clock time in `timeZone`; skipped times move forward by the
 * gap, repeated times take the earlier instant (see the file comment).
 */
export function zonedTimeToEpochMs(timeZone: string, y: number, mo: number, d: number, h: number, mi: number, s: number): number {
  const wall = utcMs(y, mo, d, h, mi, s);
  const before = offsetAt(timeZone, wall - 86_400_000);
  const after = offsetAt(timeZone, wall + 86_400_000);
  const candidates = [wall - before, wall - after].filter((t) => wall - offsetAt(timeZone, t) === t);
  if (candidates.length > 0) return Math.min(...candidates);
  // In a gap: the offset before the change carries the time past it.
  return wall - before;
}

/**
 * Reads a scheduled message `DateTime` in one of its three forms (see the file comment).
 * @param timeZone the service's zone (MSGSVC_TIMEZONE), for the two wall-clock forms.
 * @returns the instant in epoch ms (a fraction of a second kept), or null when the value is not
 *   a string in one of the forms (`The format of Date Time is invalid.`).
 */
export function parseScheduleDateTime(value: unknown, timeZone: string): number | null {
  if (typeof value !== 'string') return null;
  let m = LOCAL.exec(value);
  if (m) {
    const [y, mo, d, h, mi, s] = [m[1], m[3], m[4], m[5], m[6], m[7]].map(Number) as [number, number, number, number, number, number];
    if (!validFields(y, mo, d, h, mi, s)) return null;
    return zonedTimeToEpochMs(timeZone, y, mo, d, h, mi, s);
  }
  m = ISO.exec(value);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [number, number, number, number, number, number];
  if (!validFields(y, mo, d, h, mi, s)) return null;
  let offsetMs = 0;
  const zone = m[8]!;
  if (zone !== 'Z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
    if (oh > 23 || om > 59) return null;
    offsetMs = sign * (oh * 3_600_000 + om * 60_000);
  }
  const fraction = m[7] ? Math.floor(Number(`0.${m[7]}`) * 1000) : 0;
  return utcMs(y, mo, d, h, mi, s) + fraction - offsetMs;
}
