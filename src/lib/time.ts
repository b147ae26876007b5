/**
 * Renders stored times (Unix epoch seconds, UTC) in the configured time zone (API.md §9).
 * Formatters are built once per zone; UTC takes a fast path without Intl.
 */
export interface TimeFormat {
  /** `YYYY-MM-DD HH:MM:SS`: DateCreated, DateUpdated, Blocked_Date. */
  dateTime(epochSeconds: number): string;
  /** `YYYY:MM:DD HH:MM:SS`: the scheduled message DateTime (API.md: colons in the date part). */
  scheduleDateTime(epochSeconds: number): string;
  /**
   * True when times render in UTC: the store may then render them itself (SQLite's strftime gives
   * the same text for every time the service stores), as the JSON pages of src/store/repositories (listContactsJson, listScheduledMessagesJson) do.
   */
  readonly utc: boolean;
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

const TWO_DIGITS = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));

/** Returns the calendar fields of an instant in a zone: [year, month, day, hour, minute, second]. */
type Parts = [number, number, number, number, number, number];

export function createTimeFormat(timeZone: string): TimeFormat {
  let parts: (epochSeconds: number) => Parts;
  if (timeZone === 'UTC' || timeZone === 'Etc/UTC') {
    parts = (s) => {
      const d = new Date(s * 1000);
      return [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()];
    };
  } else {
    const fmt = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    parts = (s) => {
      const out: Parts = [0, 0, 0, 0, 0, 0];
      for (const p of fmt.formatToParts(new Date(s * 1000))) {
        const v = Number(p.value);
        if (p.type === 'year') out[0] = v;
        else if (p.type === 'month') out[1] = v;
        else if (p.type === 'day') out[2] = v;
        else if (p.type === 'hour') out[3] = v;
        else if (p.type === 'minute') out[4] = v;
        else if (p.type === 'second') out[5] = v;
      }
      return out;
    };
  }
  const generic = (s: number, dateSep: string) => {
    const [y, mo, d, h, mi, se] = parts(s);
    return `${pad(y, 4)}${dateSep}${pad(mo)}${dateSep}${pad(d)} ${pad(h)}:${pad(mi)}:${pad(se)}`;
  };
  const utc = timeZone === 'UTC' || timeZone === 'Etc/UTC';
  // UTC fast path (a page of 100 records renders 100+ times): the date part is cached per day
  // and the time of day is plain arithmetic; same text as the generic path.
  const days = new Map<number, [string, string]>();
  const render = (s: number, dateSep: string) => {
    if (!utc || !Number.isInteger(s) || Math.abs(s) > 8_640_000_000_000) return generic(s, dateSep);
    const sod = ((s % 86_400) + 86_400) % 86_400;
    const day = (s - sod) / 86_400;
    let date = days.get(day);
    if (date === undefined) {
      const [y, mo, d] = parts(s);
      date = [`${pad(y, 4)}-${pad(mo)}-${pad(d)}`, `${pad(y, 4)}:${pad(mo)}:${pad(d)}`];
      if (days.size >= 10_000) days.clear();
      days.set(day, date);
    }
    return `${dateSep === '-' ? date[0] : date[1]} ${TWO_DIGITS[Math.floor(sod / 3600)]}:${TWO_DIGITS[Math.floor(sod / 60) % 60]}:${TWO_DIGITS[sod % 60]}`;
  };
  return {
    dateTime: (s) => render(s, '-'),
    scheduleDateTime: (s) => render(s, ':'),
    utc,
  };
}

/** Current time in epoch seconds. */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/**
 * The time source of the domain and the dispatcher, injected so that tests move time forward
 * instead of sleeping (issue 11: "inject the clock into the domain and the dispatcher").
 * `nowMs()` is Unix epoch milliseconds (UTC); `nowSeconds()` is the same instant in whole epoch
 * seconds (what the tables store as created_at, sent_at, …), floor of `nowMs() / 1000`.
 */
export interface Clock {
  /** Unix epoch milliseconds. */
  nowMs(): number;
  /** Unix epoch seconds (whole, rounded down). */
  nowSeconds(): number;
}

/** The real time (Date.now). */
export const systemClock: Clock = Object.freeze({
  nowMs: () => Date.now(),
  nowSeconds: () => Math.floor(Date.now() / 1000),
});

/** A clock that only moves when told to: for tests. */
export interface ManualClock extends Clock {
  /** Moves the clock forward by `ms` milliseconds (≥ 0). */
  advance(ms: number): void;
  /** Sets the clock to `epochMs`. */
  set(epochMs: number): void;
}

/**
 * A manual clock starting at `startMs` (epoch milliseconds; default: the real time now, rounded
 * down to a whole second so that `nowSeconds() * 1000 === nowMs()` at the start).
 */
export function createManualClock(startMs: number = Math.floor(Date.now() / 1000) * 1000): ManualClock {
  let now = startMs;
  return {
    nowMs: () => now,
    nowSeconds: () => Math.floor(now / 1000),
    advance(ms: number) {
      if (!(ms >= 0)) throw new RangeError(`a clock only moves forward (advance(${ms}))`);
      now += ms;
    },
    set(epochMs: number) {
      now = epochMs;
    },
  };
}
