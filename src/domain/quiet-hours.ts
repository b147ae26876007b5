import { getAllTimezones, getCountry } from 'countries-and-timezones';
import parsePhoneNumber, { Metadata } from 'libphonenumber-js/core';
import metadata from 'libphonenumber-js/min/metadata';

/**
 * Quiet hours (API.md §14.3.5): the time arithmetic and the recipient's time zone, with no store.
 * The dispatcher (src/dispatch/dispatcher.ts) asks `quietHolder(...)` once per round and then,
 * per message, `zoneOfRecipient` (a calling-code table and a cache per country) and the round's
 * decision per zone, so a message costs a few map look-ups.
 *
 * Choices API.md §14.3.5 leaves open, written down here:
 * - A window `start`–`end` (`HH:MM`, minutes of the local day) holds from `start` included to
 *   `end` excluded: 22:00–07:00 holds at 06:59:59.999 and releases at 07:00:00.000. A start
 *   later than the end spans midnight. The hours are local wall-clock times: on a day the clocks
 *   change, a message waits until the local clock first shows a time outside the window (when
 *   the end falls in the hour skipped in spring, that is the moment the clocks jump).
 * - The recipient's country: the one country of its calling code; where several countries
 *   share a code (+1, +7, +44, …), the one whose leading digits (libphonenumber's metadata) the
 *   number starts with, else the country libphonenumber finds for the whole number; a number of
 *   no country (a non-geographic code, a +1 number of no NANP country) has none.
 * - A country has ONE zone when every IANA zone countries-and-timezones lists for it keeps the
 *   same UTC offset as the first at every instant of the two years after the first look-up (the
 *   offsets every 3 days compared, and each change of offset to the second): Germany (Berlin and
 *   Busingen), Argentina (twelve zones, one time) have one; the US, Canada, Mexico, Brazil,
 *   Russia and Australia several. That zone is the first listed. Computed once per country, on
 *   first use, then kept (`countryZone`).
 * - A valid TimeZone is an IANA zone or link name, exact case, that the service's ICU accepts:
 *   `UTC`, `Etc/GMT+5`, `Asia/Calcutta`, `US/Eastern`, `CET` are; `utc`, `europe/paris`,
 *   `+05:00`, `GMT+5`, `Factory` are not (`isTimeZoneName`).
 */

const MINUTE = 60_000;
const DAY = 86_400_000;

/** `HH:MM`, 24-hour, two digits each: `00:00` to `23:59`. */
export const HOURS_PATTERN = /^(?:[01]\d|2[0-3]):[0-5]\d$/;

/** Minutes since midnight of an `HH:MM` text (HOURS_PATTERN). */
export function minutesOf(hhmm: string): number {
  return Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
}

/** A quiet window in minutes of the local day: from `start` included to `end` excluded; `start > end` spans midnight. */
export interface QuietWindow {
  readonly start: number;
  readonly end: number;
}

/** True when the minute of the day `m` lies in the window. */
export function inWindow(w: QuietWindow, m: number): boolean {
  return w.start < w.end ? m >= w.start && m < w.end : m >= w.start || m < w.end;
}

// ------------------------------------------------------------------ zones and offsets

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    if (formatters.size >= 2000) formatters.clear();
    formatters.set(zone, f);
  }
  return f;
}

/** The zone's UTC offset at instant `t` (epoch ms), in ms (local − UTC); constant within each second. */
export function offsetAt(zone: string, t: number): number {
  const second = Math.floor(t / 1000) * 1000;
  let y = 1970,
    mo = 1,
    d = 1,
    h = 0,
    mi = 0,
    s = 0;
  for (const p of formatter(zone).formatToParts(second)) {
    switch (p.type) {
      case 'year':
        y = Number(p.value);
        break;
      case 'month':
        mo = Number(p.value);
        break;
      case 'day':
        d = Number(p.value);
        break;
      case 'hour':
        h = Number(p.value);
        break;
      case 'minute':
        mi = Number(p.value);
        break;
      case 'second':
        s = Number(p.value);
        break;
      default:
    }
  }
  return Date.UTC(y, mo - 1, d, h, mi, s) - second;
}

/** The minute of the local day (0–1439) in `zone` at `t` (epoch ms). */
export function localMinute(zone: string, t: number): number {
  const local = t + offsetAt(zone, t);
  return Math.floor((((local % DAY) + DAY) % DAY) / MINUTE);
}

/** The first whole second in (`from`, `to`] where the zone's offset is no longer `off` (it is at `to`). */
function offsetChange(zone: string, from: number, to: number, off: number): number {
  let lo = Math.floor(from / 1000);
  let hi = Math.ceil(to / 1000);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (offsetAt(zone, mid * 1000) === off) lo = mid;
    else hi = mid;
  }
  return hi * 1000;
}

/**
 * When the quiet window ends for a recipient in `zone` at instant `t` (epoch ms): null when `t`
 * is outside the window (the message may go), else the first instant after `t` at which the
 * local clock shows a time outside it (see the module comment for the days the clocks change).
 */
export function quietUntil(zone: string, w: QuietWindow, t: number): number | null {
  if (!inWindow(w, localMinute(zone, t))) return null;
  let from = t;
  // Each turn passes at most one change of offset; two changes within one day do not happen.
  for (let turn = 0; turn < 4; turn++) {
    const off = offsetAt(zone, from);
    const local = (((from + off) % DAY) + DAY) % DAY;
    const ahead = (((w.end * MINUTE - local) % DAY) + DAY) % DAY || DAY;
    const end = from + ahead;
    if (offsetAt(zone, end) === off) return end;
    const change = offsetChange(zone, from, end, off);
    if (!inWindow(w, localMinute(zone, change))) return change;
    from = change;
  }
  return from;
}

// ------------------------------------------------------------------ time zone names

let zoneNames: ReadonlySet<string> | undefined;

/**
 * True for an IANA time zone or link name, exact case, that Intl accepts (see the module
 * comment): `Europe/Paris`, `UTC`, `Etc/GMT+5`, `Asia/Calcutta`; not `utc`, `+05:00`, `Factory`.
 */
export function isTimeZoneName(name: string): boolean {
  zoneNames ??= new Set(Object.keys(getAllTimezones({ deprecated: true })));
  if (!zoneNames.has(name)) return false;
  try {
    formatter(name);
    return true;
  } catch {
    return false;
  }
}

// ------------------------------------------------------------------ the recipient's zone

const signatures = new Map<string, string>();

/**
 * A zone's offsets over the two years from `from`: the offset every 3 days and, wherever it
 * changed since the previous sample, the second it changed. Two zones with the same signature keep
 * the same offset at every instant of those years (two changes within 3 days do not happen).
 * Cached per zone (the first `from` counts).
 */
function signature(zone: string, from: number): string {
  let sig = signatures.get(zone);
  if (sig !== undefined) return sig;
  const step = 3 * DAY;
  let prev = offsetAt(zone, from);
  const parts = [String(prev)];
  for (let t = from + step; t <= from + 731 * DAY; t += step) {
    const off = offsetAt(zone, t);
    if (off !== prev) {
      parts.push(`${offsetChange(zone, t - step, t, prev)}:${off}`);
      prev = off;
    }
  }
  sig = parts.join(' ');
  signatures.set(zone, sig);
  return sig;
}

/** True when `a` and `b` keep the same offset at every instant of the two years from `from`. */
function sameOffsets(a: string, b: string, from: number): boolean {
  return a === b || signature(a, from) === signature(b, from);
}

const byCountry = new Map<string, string | null>();

/**
 * The one IANA zone of a country (ISO 3166 alpha-2), or null when it has several (or none
 * known): see the module comment. Computed on the first call for that country, comparing
 * offsets over the two years from `fromMs` (epoch ms, default now), then cached.
 */
export function countryZone(country: string, fromMs: number = Date.now()): string | null {
  const cached = byCountry.get(country);
  if (cached !== undefined) return cached;
  const zones = (getCountry(country)?.timezones ?? []).filter((z) => isTimeZoneName(z));
  let zone: string | null = zones[0] ?? null;
  if (zone !== null) {
    // A first pass at a few instants answers most countries of several zones at once.
    const probes = [0, 91, 182, 273].map((d) => fromMs + d * DAY);
    const first = zone;
    if (zones.some((z) => probes.some((t) => offsetAt(z, t) !== offsetAt(first, t)))) zone = null;
    else if (zones.some((z) => !sameOffsets(first, z, fromMs))) zone = null;
  }
  byCountry.set(country, zone);
  return zone;
}

/** Per calling code: its countries, those with leading digits first as regexes, and the rest. */
interface CallingCode {
  /** Countries picked by the start of the national number. */
  readonly byLeadingDigits: readonly { readonly country: string; readonly pattern: RegExp }[];
  /** The others, in libphonenumber's order (the main country first). */
  readonly rest: readonly string[];
  /**
   * Where several countries share the code: the national prefix rule of its main country, which
   * libphonenumber strips when it follows the code (`+44 0…`, `+1 1…`); numbers that start with
   * it take the slow path. Null: none.
   */
  readonly prefix: RegExp | null;
}

let callingCodes: ReadonlyMap<string, CallingCode> | undefined;

function codeTable(): ReadonlyMap<string, CallingCode> {
  if (callingCodes) return callingCodes;
  const m = new Metadata(metadata);
  const out = new Map<string, CallingCode>();
  for (const [code, countries] of Object.entries(metadata.country_calling_codes)) {
    const byLeadingDigits: { country: string; pattern: RegExp }[] = [];
    const rest: string[] = [];
    let prefix: RegExp | null = null;
    if (countries.length > 1) {
      m.selectNumberingPlan(countries[0]!);
      const rule = (m.numberingPlan as unknown as { nationalPrefixForParsing(): unknown }).nationalPrefixForParsing();
      if (typeof rule === 'string' && rule !== '') prefix = new RegExp(`^(?:${rule})`);
    }
    for (const country of countries) {
      if ((country as string) === '001') continue; // non-geographic
      if (countries.length === 1) {
        rest.push(country);
        continue;
      }
      m.selectNumberingPlan(country);
      const leading = (m.numberingPlan as unknown as { leadingDigits(): string | undefined }).leadingDigits();
      if (typeof leading === 'string' && leading !== '' && leading !== '0')
        byLeadingDigits.push({ country, pattern: new RegExp(`^(?:${leading})`) });
      else rest.push(country);
    }
    out.set(code, { byLeadingDigits, rest, prefix });
  }
  callingCodes = out;
  return out;
}

/** The zone shared by every country of `rest` (undefined when they differ: the number decides). */
const restZones = new Map<string, string | null | undefined>();

function restZone(code: string, rest: readonly string[], fromMs: number): string | null | undefined {
  if (restZones.has(code)) return restZones.get(code);
  const zones = rest.map((c) => countryZone(c, fromMs));
  const first = zones[0] ?? null;
  let zone: string | null | undefined;
  if (first === null) zone = zones.every((z) => z === null) ? null : undefined;
  else zone = zones.every((z) => z !== null && (z === first || sameOffsets(first, z, fromMs))) ? first : undefined;
  restZones.set(code, zone);
  return zone;
}

/**
 * The IANA zone of the country of a recipient (digits of its E.164 form, without `+`) when that
 * country has one zone; null when it has several or the number has no country (the account's
 * TimeZone applies then: API.md §14.3.5). `fromMs`: the start of the two years the countries'
 * zones are compared over, on their first use.
 */
export function zoneOfRecipient(digits: string, fromMs: number = Date.now()): string | null {
  const table = codeTable();
  for (let k = 1; k <= 3 && k <= digits.length; k++) {
    const code = table.get(digits.slice(0, k));
    if (code === undefined) continue;
    const national = digits.slice(k);
    // A national prefix written after the code (`+44 0…`): libphonenumber strips it first.
    if (code.prefix?.test(national)) return parsedZone(digits, fromMs);
    for (const c of code.byLeadingDigits) if (c.pattern.test(national)) return countryZone(c.country, fromMs);
    if (code.rest.length === 0 && code.byLeadingDigits.length === 0) return null; // non-geographic
    if (code.byLeadingDigits.length === 0 && code.rest.length === 1) return countryZone(code.rest[0]!, fromMs);
    const shared = code.rest.length === 0 ? undefined : restZone(digits.slice(0, k), code.rest, fromMs);
    if (shared !== undefined) return shared;
    // Leading digits of no country of the code: libphonenumber decides.
    return parsedZone(digits, fromMs);
  }
  return null;
}

/** The zone of the country libphonenumber finds for the whole number (the slow path: about 80 µs). */
function parsedZone(digits: string, fromMs: number): string | null {
  const country = parsePhoneNumber(`+${digits}`, metadata)?.country;
  return country === undefined ? null : countryZone(country, fromMs);
}

// ------------------------------------------------------------------ one dispatcher round

/** An account's stored settings, as the dispatcher reads them (src/store/repositories/account-settings.ts). */
export interface QuietSettings {
  readonly account_id: number;
  readonly quiet_start: string | null;
  readonly quiet_end: string | null;
  readonly time_zone: string | null;
}

/** For one round: when a message of `accountId` to `digits` may go (null: now), else when its quiet hours end (epoch ms). */
export type QuietCheck = (accountId: number, digits: string) => number | null;

/**
 * The quiet-hours check of one dispatcher round at `nowMs` (API.md §14.3.5), from the settings of
 * the round's accounts (read once per round); null when none of them has quiet hours. Per
 * message it looks up the recipient's zone (`zoneOfRecipient`, else the account's TimeZone, else
 * `defaultZone`, MSGSVC_TIMEZONE) and the round's decision for that account and zone, computed
 * once per (account, zone). A stored zone the service no longer knows counts as `defaultZone`.
 */
export function quietCheck(rows: readonly QuietSettings[], defaultZone: string, nowMs: number): QuietCheck | null {
  const accounts = new Map<number, { window: QuietWindow; zone: string; decided: Map<string, number | null> }>();
  for (const r of rows) {
    if (r.quiet_start === null || r.quiet_end === null || !HOURS_PATTERN.test(r.quiet_start) || !HOURS_PATTERN.test(r.quiet_end)) continue;
    const window = { start: minutesOf(r.quiet_start), end: minutesOf(r.quiet_end) };
    if (window.start === window.end) continue;
    const zone = r.time_zone !== null && isTimeZoneName(r.time_zone) ? r.time_zone : defaultZone;
    accounts.set(Number(r.account_id), { window, zone, decided: new Map() });
  }
  if (accounts.size === 0) return null;
  return (accountId, digits) => {
    const a = accounts.get(accountId);
    if (a === undefined) return null;
    const zone = zoneOfRecipient(digits, nowMs) ?? a.zone;
    let until = a.decided.get(zone);
    if (until === undefined) {
      until = quietUntil(zone, a.window, nowMs);
      a.decided.set(zone, until);
    }
    return until;
  };
}
