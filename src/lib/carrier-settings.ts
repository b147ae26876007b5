/**
 * The carrier settings of docs/API.md §14.1 (several carriers and routing): MSGSVC_CARRIERS (which carriers), MSGSVC_ROUTES (which
 * carrier takes which message) and MSGSVC_PUBLIC_URL (where carriers call back). Pure parsing, no
 * I/O, and dependency-free but for smpp-url.ts, so that src/config.ts (the base layer) can validate
 * them at start; the choosing of a rule per message is src/carriers/config.ts.
 *
 * Every error is a CarrierSettingError whose message names the setting and the entry (its position,
 * and its name and scheme once they are known) and never repeats a password or token, in any form:
 * the URL of an entry is never echoed, only what was recognised in it.
 *
 * MSGSVC_CARRIERS grammar (comma-separated entries; blanks around entries are ignored):
 * - `name=URL`, name 1 to 32 of `a-z 0-9 _ -`, unique.
 * - `smpp://system_id:password@host[:port]`, `smpps://…` (API.md §11.4; src/lib/smpp-url.ts: port 2775 when
 *   left out, system_id at most 15 and password at most 8 characters). No path.
 * - `twilio://SID:TOKEN@host[:port][/base-path]` (HTTPS, port 443 when left out) and
 *   `twilio+http://SID:TOKEN@host:port[/base-path]` (plain HTTP, port required). The base path is
 *   for providers that serve Twilio's API below one (SignalWire: `/api/laml`); trailing `/` dropped.
 * - `android://user:password@host:port[/base-path]` (HTTP, port required: the app's local server,
 *   8080 by default, says which) and `android+https://user:password@host[:port][/base-path]` (443
 *   when left out; the app's cloud server has a base path, `/3rdparty/v1`).
 * - `sandbox:` (the sandbox of API.md §11.3; no host, user or path).
 * - User, password, SID and token are percent-decoded: write `%` `,` `/` `?` `#` in them as `%25`
 *   `%2C` `%2F` `%3F` `%23` (`:` and `@` in a password need no escaping, but may be escaped).
 * - An Android phone's entry also takes, and needs, `number` (the phone's own number: 3 to 15
 *   digits, a leading `+` written `%2B`; stored as digits) and `key` (the app's webhook signing
 *   key, 1 to 256 characters, percent-decoded; never repeated in an error, as a password).
 * - Query parameters, on any entry: `rate` (submits per second, a whole number 1 to 100,000; SMPP
 *   counts one per segment, as MSGSVC_SMPP_RATE) and `window` (submits awaiting their answer, 1 to
 *   1,000; the sandbox's 1 to 10,000, as MSGSVC_SANDBOX_WINDOW). Defaults: SMPP rate 100, window 10;
 *   Twilio and Android rate 10, window 10 (API.md §14.1); the sandbox has no rate limit unless `rate` is
 *   given, and its window defaults to MSGSVC_SANDBOX_WINDOW (100), so that a listed sandbox behaves
 *   as the single sandbox does. Any other parameter, or one given twice, or an empty value, is an
 *   error naming it. A `#fragment` is an error.
 * - Unset or blank: the single-carrier settings (API.md §11.3, §11.4), unchanged: one carrier named `smpp`
 *   (MSGSVC_SMPP_URL as it is, with MSGSVC_SMPP_RATE and MSGSVC_SMPP_WINDOW) or `sandbox` (no rate
 *   limit, MSGSVC_SANDBOX_WINDOW).
 * - MSGSVC_CARRIERS beside MSGSVC_SMPP_URL or MSGSVC_CARRIER is an error naming both: one of the two
 *   would be ignored, and an operator who set the old one would believe their SMPP contract (or the
 *   sandbox) in use while messages, and money, go elsewhere. Refusing costs one edit; guessing could
 *   cost a bill.
 * - Settings that a URL cannot carry (MSGSVC_SMPP_TIMEOUT_MS, MSGSVC_SMPP_ENQUIRE_MS and the
 *   sandbox settings) apply to every listed carrier of their kind.
 *
 * MSGSVC_ROUTES grammar (rules separated by `;`; blanks around rules, MATCH and names are ignored):
 * - `MATCH=name[>name…]`; MATCH is `*` or a prefix of 1 to 15 digits (E.164 has at most 15), either
 *   optionally preceded by `sms:` or `mms:` (lower case). `+44`, `44*`, `4 4`, `SMS:44` are errors.
 * - Each name is a carrier of MSGSVC_CARRIERS; a name given twice in one rule, an empty name
 *   (`44=`, `44=a>>b`, `44=a>`) and a MATCH given twice (`44` twice; `44` and `sms:44` are two) are
 *   errors. A `mms:` rule whose carriers take no MMS is allowed: it fails those MMS `NO_MMS_ROUTE`
 *   (the way to keep MMS to that prefix off a wider rule).
 * - Unset or blank: one rule, `*=` every carrier in MSGSVC_CARRIERS order.
 * - An empty rule (`;;`, a trailing `;`) or entry (`,,`, a trailing `,`) is an error: it is most
 *   often a half-deleted one.
 */
import { parseSmppUrl, redactSmppUrl, type SmppUrl } from './smpp-url.ts';

/** A bad MSGSVC_CARRIERS, MSGSVC_ROUTES or MSGSVC_PUBLIC_URL; config.ts rethrows it as a ConfigError with the same message. */
export class CarrierSettingError extends Error {
  override name = 'CarrierSettingError';
}

/** The four kinds of carrier. */
export type CarrierKind = 'smpp' | 'twilio' | 'android' | 'sandbox';

interface CarrierSpecCommon {
  /** The name of MSGSVC_CARRIERS (`smpp` or `sandbox` for the single-carrier settings): 1 to 32 of a-z 0-9 _ -. */
  readonly name: string;
  /** Submits awaiting their answer at most (the dispatcher's concurrency for this carrier). */
  readonly window: number;
  /** Whether it takes an MMS (API.md §14.1: Twilio and the sandbox yes; SMPP and an Android phone no). */
  readonly supportsMms: boolean;
  /** The URL without credentials, query or secrets, for logs and /readyz: `twilio://api.twilio.com`, `smpp://host:2775`, `sandbox`. */
  readonly display: string;
}

/** One configured carrier: what a carrier factory needs, validated. */
export type CarrierSpec =
  | (CarrierSpecCommon & {
      readonly kind: 'smpp';
      /** Submits (submit_sm, one per segment) per second at most. */
      readonly rate: number;
      /** The smpp:// or smpps:// URL without its query, as createSmppCarrier takes it. */
      readonly url: string;
      /** Its parts (src/lib/smpp-url.ts). */
      readonly smpp: SmppUrl;
    })
  | (CarrierSpecCommon & {
      readonly kind: 'twilio';
      /** Submits per second at most. */
      readonly rate: number;
      /** `https://host[:port][/base-path]` (`http://…` for twilio+http), no trailing `/`: `{baseUrl}/2010-04-01/Accounts/…`. */
      readonly baseUrl: string;
      /** The account SID (HTTP Basic user, and the `{SID}` of the path), percent-decoded. */
      readonly accountSid: string;
      /** The auth token (HTTP Basic password, and the key of X-Twilio-Signature), percent-decoded. Never log it. */
      readonly authToken: string;
    })
  | (CarrierSpecCommon & {
      readonly kind: 'android';
      /** Submits per second at most. */
      readonly rate: number;
      /** `http://host:port[/base-path]` (`https://…` for android+https), no trailing `/`. */
      readonly baseUrl: string;
      /** HTTP Basic user of the app's API, percent-decoded. */
      readonly username: string;
      /** HTTP Basic password of the app's API, percent-decoded. Never log it. */
      readonly password: string;
      /** `?number=`: the phone's own number, digits (E.164 without `+`, or a short code): the To of every text it receives. */
      readonly number: string;
      /** `?key=`: the app's webhook signing key (its events are checked with it), percent-decoded. Never log it. */
      readonly key: string;
    })
  | (CarrierSpecCommon & {
      readonly kind: 'sandbox';
      /** Submits per second at most; undefined: no limit (the single sandbox has none). */
      readonly rate: number | undefined;
    });

/** The single-carrier settings (API.md §11.3, §11.4), as src/config.ts reads them (used when MSGSVC_CARRIERS is unset or blank). */
export interface LegacyCarrierSettings {
  /** The carrier they choose (config.ts's MSGSVC_CARRIER / MSGSVC_SMPP_URL rule). Read only when MSGSVC_CARRIERS is unset. */
  readonly carrier: 'sandbox' | 'smpp';
  /** MSGSVC_SMPP_URL, validated, or undefined when unset or blank. */
  readonly smppUrl?: string | undefined;
  /** MSGSVC_CARRIER as written (undefined or blank: not set): refused beside MSGSVC_CARRIERS. */
  readonly carrierSetting?: string | undefined;
  /** MSGSVC_SMPP_RATE (default 100). */
  readonly smppRate?: number;
  /** MSGSVC_SMPP_WINDOW (default 10). */
  readonly smppWindow?: number;
  /** MSGSVC_SANDBOX_WINDOW (default 100): the sandbox's window, listed or not. */
  readonly sandboxWindow?: number;
}

/** One rule of MSGSVC_ROUTES. */
export interface RouteRule {
  /** The MATCH as written, trimmed: `*`, `44`, `sms:1415`, `mms:*`. */
  readonly match: string;
  /** The message type it is limited to; undefined: any. */
  readonly type: 'sms' | 'mms' | undefined;
  /** Digits a recipient must start with; '' for `*`. */
  readonly prefix: string;
  /** Carrier names in failover order (at least one, each configured, none twice). */
  readonly carriers: readonly string[];
}

/** Bounds of `rate` and `window` (whole numbers); `window` of the sandbox up to MSGSVC_SANDBOX_WINDOW's maximum. */
export const CARRIER_LIMITS = Object.freeze({ rateMax: 100_000, windowMax: 1000, sandboxWindowMax: 10_000 });

/** API.md §14.1: the defaults of `rate` and `window` for listed SMPP and HTTP carriers. */
export const CARRIER_DEFAULTS = Object.freeze({ smppRate: 100, httpRate: 10, window: 10, sandboxWindow: 100 });

const NAME = /^[a-z0-9_-]{1,32}$/;
const SCHEMES = ['smpp', 'smpps', 'twilio', 'twilio+http', 'android', 'android+https', 'sandbox'] as const;
type Scheme = (typeof SCHEMES)[number];
const SCHEME_LIST = 'smpp://, smpps://, twilio://, twilio+http://, android://, android+https:// or sandbox:';
const QUERY_KEYS = new Set(['rate', 'window']);
/** The parameters an Android phone's entry also takes (both required). */
const ANDROID_QUERY_KEYS = new Set(['number', 'key']);

/** `value` quoted when it is short and plain enough to be no one's secret (MATCH and names of MSGSVC_ROUTES); else undefined. */
function quoteSafe(value: string): string | undefined {
  return /^[A-Za-z0-9_.*+:-]{1,40}$/.test(value) ? JSON.stringify(value) : undefined;
}

/**
 * A query parameter's name, quoted, when it looks like one (a letter, then at most 15 of letters,
 * digits, `_`, `-`); else undefined. A password with a raw `?` puts its `@host` in the query, which
 * queryParams refuses before naming anything; this is a second fence.
 */
function quoteKey(key: string): string | undefined {
  return /^[A-Za-z][A-Za-z0-9_-]{0,15}$/.test(key) ? JSON.stringify(key) : undefined;
}

/** A rate or window value, quoted, when it looks like a number someone typed; else undefined. */
function quoteNumber(value: string): string | undefined {
  return /^[0-9.,+eE-]{1,12}$/.test(value) ? JSON.stringify(value) : undefined;
}

/** decodeURIComponent, or undefined for malformed percent-encoding. */
function decode(value: string): string | undefined {
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

/** A whole-number query parameter within 1..max. @throws CarrierSettingError */
function wholeParam(label: string, key: string, value: string, max: number): number {
  if (/^\d{1,7}$/.test(value)) {
    const n = Number(value);
    if (n >= 1 && n <= max) return n;
  }
  const got = quoteNumber(value);
  throw new CarrierSettingError(`${label}: ${key} must be a whole number from 1 to ${max}${got ? `, got ${got}` : ''}`);
}

/** The parameters of an entry's query: rate and window on any; number and key on an Android phone's. */
interface QueryParams {
  rate?: number;
  window?: number;
  number?: string;
  key?: string;
}

/**
 * rate and window (and, with `android`, number and key) from the query of `url`, refusing anything
 * else. The values of number and key are never echoed. @throws CarrierSettingError
 */
function queryParams(label: string, search: string, windowMax: number, android = false): QueryParams {
  const out: QueryParams = {};
  const allowed = android ? 'only rate, window, number and key are allowed' : 'only rate and window are allowed';
  // Only a password with a raw ? puts an @ here (its `…@host` follows it into the query): say so,
  // and echo nothing of it.
  if (search.includes('@')) throw new CarrierSettingError(`${label} has an @ after its ?: percent-encode ? in a user or password as %3F`);
  const seen = new Set<string>();
  for (const [key, value] of new URLSearchParams(search)) {
    if (!QUERY_KEYS.has(key) && !(android && ANDROID_QUERY_KEYS.has(key))) {
      const named = quoteKey(key);
      throw new CarrierSettingError(
        `${label}: unknown query parameter ${named ?? '(not shown)'}; ${allowed} (percent-encode ? # & in a password)`,
      );
    }
    if (seen.has(key)) throw new CarrierSettingError(`${label}: ${key} is given twice`);
    seen.add(key);
    if (key === 'rate') out.rate = wholeParam(label, key, value, CARRIER_LIMITS.rateMax);
    else if (key === 'window') out.window = wholeParam(label, key, value, windowMax);
    else if (key === 'number') {
      // URLSearchParams reads a raw + as a space: the + of an E.164 number must be written %2B.
      if (!/^\+?\d{3,15}$/.test(value))
        throw new CarrierSettingError(`${label}: number must be the phone's own number, 3 to 15 digits (write a leading + as %2B)`);
      out.number = value.replace(/^\+/, '');
    } else {
      if (value === '' || value.length > 256)
        throw new CarrierSettingError(
          `${label}: key must be the app's webhook signing key, 1 to 256 characters (percent-encode + & # % in it)`,
        );
      out.key = value;
    }
  }
  return out;
}

/** The user and password of an authority, percent-decoded, both required. @throws CarrierSettingError */
function credentials(label: string, url: URL, what: [string, string]): [string, string] {
  const user = decode(url.username);
  const password = decode(url.password);
  if (user === undefined || password === undefined) {
    throw new CarrierSettingError(`${label}: the ${what[0]} or ${what[1]} is not valid percent-encoding (write % as %25)`);
  }
  if (user === '' || password === '') {
    throw new CarrierSettingError(`${label} needs ${what[0]}:${what[1]}@ before the host (percent-encode / ? # , in them)`);
  }
  if (user.length > 256 || password.length > 256)
    throw new CarrierSettingError(`${label}: the ${what[0]} and ${what[1]} must be at most 256 characters each`);
  return [user, password];
}

/**
 * `{http|https}://host[:port][/path]` of an HTTP carrier's URL, normalised (host lower-cased,
 * default port dropped, trailing `/` dropped). @throws CarrierSettingError
 */
function httpBase(label: string, url: URL, https: boolean, portRequired: boolean): { baseUrl: string; display: string } {
  if (url.hostname === '') throw new CarrierSettingError(`${label} has no host`);
  if (url.port === '' && portRequired) throw new CarrierSettingError(`${label} needs a port (host:port)`);
  if (url.port === '0') throw new CarrierSettingError(`${label}: the port must be from 1 to 65535`);
  let origin: string;
  try {
    origin = new URL(`${https ? 'https' : 'http'}://${url.host}`).origin;
  } catch {
    throw new CarrierSettingError(`${label} has an invalid host`);
  }
  const path = url.pathname.replace(/\/+$/, '');
  const scheme = url.protocol.slice(0, -1);
  return { baseUrl: origin + path, display: `${scheme}://${origin.replace(/^https?:\/\//, '')}${path}` };
}

/** One `name=URL` entry of MSGSVC_CARRIERS, split and checked up to its scheme. */
interface EntryShape {
  readonly name: string;
  readonly scheme: Scheme;
  /** The URL as written, trimmed. */
  readonly raw: string;
  /** How messages name the entry: `MSGSVC_CARRIERS entry 2 (sms=twilio://…)`. */
  readonly label: string;
}

/** Splits an entry into name and URL and recognises the scheme. @throws CarrierSettingError */
function entryShape(entry: string, position: number): EntryShape {
  const at = `MSGSVC_CARRIERS entry ${position}`;
  if (entry === '') throw new CarrierSettingError(`${at} is empty (a stray comma? write , in a password as %2C)`);
  const eq = entry.indexOf('=');
  if (eq < 0) throw new CarrierSettingError(`${at} is not name=URL (write , in a password as %2C)`);
  const name = entry.slice(0, eq).trim();
  const raw = entry.slice(eq + 1).trim();
  if (!NAME.test(name)) throw new CarrierSettingError(`${at}: the name before = must be 1 to 32 of a-z, 0-9, _ and - (write name=URL)`);
  const schemeMatch = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(raw);
  const scheme = schemeMatch?.[1]?.toLowerCase();
  if (scheme === undefined || !(SCHEMES as readonly string[]).includes(scheme)) {
    throw new CarrierSettingError(`${at} (${name}): unknown URL scheme; use ${SCHEME_LIST}`);
  }
  return { name, scheme: scheme as Scheme, raw, label: `${at} (${name}=${scheme}${scheme === 'sandbox' ? ':' : '://'}…)` };
}

/** The URL of one entry, by its scheme. @throws CarrierSettingError naming `label`, never a secret */
function parseUrl(label: string, name: string, scheme: Scheme, raw: string, legacy: LegacyCarrierSettings): CarrierSpec {
  if (raw.includes('#')) throw new CarrierSettingError(`${label} has a #: write # in a password as %23`);
  if (scheme === 'sandbox') {
    const m = /^sandbox:(\?.*)?$/i.exec(raw);
    if (!m) throw new CarrierSettingError(`${label}: sandbox: takes no host, user or path, only ?rate= and ?window=`);
    const q = queryParams(label, m[1] ?? '', CARRIER_LIMITS.sandboxWindowMax);
    return {
      kind: 'sandbox',
      name,
      rate: q.rate,
      window: q.window ?? legacy.sandboxWindow ?? CARRIER_DEFAULTS.sandboxWindow,
      supportsMms: true,
      display: 'sandbox',
    };
  }
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(raw)) throw new CarrierSettingError(`${label} must be ${scheme}://… with a host`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CarrierSettingError(`${label} is not a valid URL (percent-encode / ? # , % in a user or password)`);
  }
  if (scheme === 'smpp' || scheme === 'smpps') {
    if (url.pathname !== '' && url.pathname !== '/')
      throw new CarrierSettingError(`${label} takes no path (percent-encode / in a password as %2F)`);
    const bare = new URL(raw);
    bare.search = '';
    let smpp: SmppUrl;
    try {
      smpp = parseSmppUrl(bare.href);
    } catch (err) {
      // parseSmppUrl's messages name no secret; decodeURIComponent's URIError says nothing useful.
      const why =
        err instanceof URIError
          ? 'has a system_id or password that is not valid percent-encoding (write % as %25)'
          : (err as Error).message;
      throw new CarrierSettingError(`${label} ${why}`);
    }
    const q = queryParams(label, url.search, CARRIER_LIMITS.windowMax);
    return {
      kind: 'smpp',
      name,
      rate: q.rate ?? CARRIER_DEFAULTS.smppRate,
      window: q.window ?? CARRIER_DEFAULTS.window,
      supportsMms: false,
      display: redactSmppUrl(smpp),
      url: bare.href,
      smpp,
    };
  }
  const twilio = scheme === 'twilio' || scheme === 'twilio+http';
  const https = scheme === 'twilio' || scheme === 'android+https';
  const [user, password] = credentials(label, url, twilio ? ['SID', 'TOKEN'] : ['user', 'password']);
  const { baseUrl, display } = httpBase(label, url, https, !https);
  const q = queryParams(label, url.search, CARRIER_LIMITS.windowMax, !twilio);
  const common = { name, rate: q.rate ?? CARRIER_DEFAULTS.httpRate, window: q.window ?? CARRIER_DEFAULTS.window, display, baseUrl };
  if (twilio) return { kind: 'twilio', ...common, supportsMms: true, accountSid: user, authToken: password };
  if (q.number === undefined) throw new CarrierSettingError(`${label} needs ?number= (the phone's own number, digits; a leading + as %2B)`);
  if (q.key === undefined) throw new CarrierSettingError(`${label} needs ?key= (the app's webhook signing key)`);
  return { kind: 'android', ...common, supportsMms: false, username: user, password, number: q.number, key: q.key };
}

/**
 * MSGSVC_CARRIERS (API.md §14.1; grammar and defaults in this file's header):
 * the configured carriers, in list order, frozen. Unset or blank: the one carrier of the
 * single-carrier settings (`smpp` with MSGSVC_SMPP_URL as it is, or `sandbox`).
 * @throws CarrierSettingError naming the entry (position, then name and scheme), never a secret;
 *   also when MSGSVC_CARRIERS is set beside MSGSVC_SMPP_URL or MSGSVC_CARRIER.
 */
export function parseCarriers(value: string | undefined, legacy: LegacyCarrierSettings): readonly CarrierSpec[] {
  const text = (value ?? '').trim();
  if (text === '') return Object.freeze([legacyCarrier(legacy)]);
  if ((legacy.smppUrl ?? '').trim() !== '') {
    throw new CarrierSettingError(
      'MSGSVC_CARRIERS and MSGSVC_SMPP_URL are both set: list the SMPP carrier in MSGSVC_CARRIERS (smpp=smpp://…) and unset MSGSVC_SMPP_URL',
    );
  }
  if ((legacy.carrierSetting ?? '').trim() !== '') {
    throw new CarrierSettingError(
      'MSGSVC_CARRIERS and MSGSVC_CARRIER are both set: MSGSVC_CARRIERS names every carrier (sandbox=sandbox: for the sandbox); unset MSGSVC_CARRIER',
    );
  }
  // Every entry's shape first: a raw comma in a password splits its entry, and the piece after it
  // (`…@host`) is then reported, before anything of the URL the secret is in could be.
  const names = new Set<string>();
  const shapes = text.split(',').map((entry, i) => {
    const shape = entryShape(entry.trim(), i + 1);
    if (names.has(shape.name))
      throw new CarrierSettingError(`MSGSVC_CARRIERS entry ${i + 1}: the name ${shape.name} is already used by an earlier entry`);
    names.add(shape.name);
    return shape;
  });
  return Object.freeze(shapes.map((e) => Object.freeze(parseUrl(e.label, e.name, e.scheme, e.raw, legacy))));
}

/** The one carrier of the single-carrier settings, exactly as they configure it today. */
function legacyCarrier(legacy: LegacyCarrierSettings): CarrierSpec {
  const window = legacy.sandboxWindow ?? CARRIER_DEFAULTS.sandboxWindow;
  if (legacy.carrier === 'smpp' && legacy.smppUrl) {
    let smpp: SmppUrl;
    try {
      smpp = parseSmppUrl(legacy.smppUrl);
    } catch (err) {
      const why = err instanceof URIError ? 'has a system_id or password that is not valid percent-encoding' : (err as Error).message;
      throw new CarrierSettingError(`MSGSVC_SMPP_URL ${why}`);
    }
    return Object.freeze({
      kind: 'smpp',
      name: 'smpp',
      rate: legacy.smppRate ?? CARRIER_DEFAULTS.smppRate,
      window: legacy.smppWindow ?? CARRIER_DEFAULTS.window,
      supportsMms: false,
      display: redactSmppUrl(smpp),
      url: legacy.smppUrl,
      smpp,
    });
  }
  return Object.freeze({ kind: 'sandbox', name: 'sandbox', rate: undefined, window, supportsMms: true, display: 'sandbox' });
}

/** A MATCH of MSGSVC_ROUTES: `*` or 1 to 15 digits, optionally after `sms:` or `mms:`. */
const MATCH = /^(?:(sms|mms):)?(\*|\d{1,15})$/;

/**
 * MSGSVC_ROUTES (API.md §14.1; grammar in this file's header): the rules, in
 * the order written, frozen. Unset or blank: one rule, `*=` every carrier in list order.
 * @throws CarrierSettingError naming the rule (position and MATCH) and what is wrong with it.
 */
export function parseRoutes(value: string | undefined, carriers: readonly CarrierSpec[]): readonly RouteRule[] {
  const text = (value ?? '').trim();
  const known = new Set(carriers.map((c) => c.name));
  if (text === '') {
    return Object.freeze([
      Object.freeze({ match: '*', type: undefined, prefix: '', carriers: Object.freeze(carriers.map((c) => c.name)) }),
    ]);
  }
  const rules: RouteRule[] = [];
  const seen = new Map<string, number>();
  text.split(';').forEach((part, i) => {
    const at = `MSGSVC_ROUTES rule ${i + 1}`;
    const rule = part.trim();
    if (rule === '') throw new CarrierSettingError(`${at} is empty (a stray ;?)`);
    const eq = rule.indexOf('=');
    if (eq < 0) throw new CarrierSettingError(`${at} is not MATCH=name[>name…]`);
    const match = rule.slice(0, eq).trim();
    const m = MATCH.exec(match);
    if (!m) {
      const shown = quoteSafe(match);
      const hint = match.includes('+')
        ? ': write the prefix as digits without +'
        : ': MATCH is * or 1 to 15 digits, optionally after sms: or mms:';
      throw new CarrierSettingError(`${at}${shown ? ` (${shown})` : ''} has a bad MATCH${hint}`);
    }
    const label = `${at} (${match})`;
    const earlier = seen.get(match);
    if (earlier !== undefined) throw new CarrierSettingError(`${label}: MATCH ${match} is already rule ${earlier}`);
    seen.set(match, i + 1);
    const names = rule
      .slice(eq + 1)
      .split('>')
      .map((n) => n.trim());
    const listed = new Set<string>();
    for (const name of names) {
      if (name === '') throw new CarrierSettingError(`${label} has an empty carrier name (write MATCH=name[>name…])`);
      if (!known.has(name)) {
        const shown = quoteSafe(name);
        throw new CarrierSettingError(
          `${label} names ${shown ? `the carrier ${shown}` : 'a carrier'}, which is not in MSGSVC_CARRIERS (${[...known].join(', ')})`,
        );
      }
      if (listed.has(name)) throw new CarrierSettingError(`${label} names the carrier ${name} twice`);
      listed.add(name);
    }
    const type = m[1] as 'sms' | 'mms' | undefined;
    rules.push(Object.freeze({ match, type, prefix: m[2] === '*' ? '' : m[2]!, carriers: Object.freeze(names) }));
  });
  return Object.freeze(rules);
}

/**
 * MSGSVC_PUBLIC_URL (API.md §14.1): the absolute base URL at which carriers
 * reach this service. Trimmed; an `http:` or `https:` URL with a host, no user or password, no query
 * and no fragment, at most 2,000 characters; returned normalised (`new URL`'s origin and path: host
 * lower-cased, default port dropped) without trailing `/`: `https://sms.example.com/msgsvc`.
 * Unset or blank: undefined, allowed only while no Twilio or Android carrier is configured.
 * @throws CarrierSettingError saying what is wrong (the value is never echoed: it could carry a
 *   password), or that a Twilio or Android carrier (named) needs it.
 */
export function parsePublicUrl(value: string | undefined, carriers: readonly CarrierSpec[]): string | undefined {
  const text = (value ?? '').trim();
  if (text === '') {
    const http = carriers.find((c) => c.kind === 'twilio' || c.kind === 'android');
    if (http) {
      throw new CarrierSettingError(
        `MSGSVC_PUBLIC_URL is required by the carrier ${http.name} (${http.kind}): set it to the https:// base URL at which the carrier reaches this service, for receipts, inbound texts and media`,
      );
    }
    return undefined;
  }
  const bad = (why: string): never => {
    throw new CarrierSettingError(`MSGSVC_PUBLIC_URL ${why}`);
  };
  if (text.length > 2000) bad('must be at most 2000 characters');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return bad('must be an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') bad('must be an absolute http:// or https:// URL');
  if (url.username !== '' || url.password !== '') bad('must not carry a user or password');
  if (url.search !== '' || text.includes('?')) bad('must have no query (?…)');
  if (url.hash !== '' || text.includes('#')) bad('must have no fragment (#…)');
  return url.origin + url.pathname.replace(/\/+$/, '');
}
