import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { isSupportedCountry, type CountryCode } from 'libphonenumber-js';
import { parseSmppUrl } from './lib/smpp-url.ts';
import { isForbiddenAddress } from './lib/ssrf.ts';
import {
  CarrierSettingError,
  parseCarriers,
  parsePublicUrl,
  parseRoutes,
  type CarrierSpec,
  type RouteRule,
} from './lib/carrier-settings.ts';

/**
 * Where the data lives. `sqlite` is the embedded default; `postgres` is selected by a
 * `postgres://` or `postgresql://` DATABASE_URL.
 */
export type DatabaseConfig =
  | {
      kind: 'sqlite';
      path: string;
      /**
       * Milliseconds between WAL checkpoints run by a thread of their own
       * (MSGSVC_SQLITE_CHECKPOINT_MS; default 0 = SQLite's automatic checkpoint inside the committing
       * request). The thread helps where it has a core to itself (bench/levers.ts: commit p99
       * 1 ms → 0.04 ms at 200 ms); with the process on one core, as the bench runs it, it made the
       * writes' p99 at half load worse (docs/PERFORMANCE.md, third round). See src/store/checkpointer.ts.
       */
      checkpointMs?: number;
    }
  | { kind: 'postgres'; url: string; poolSize: number; statementTimeoutMs: number };

/** The whole, validated configuration of one msgsvc process. Frozen once built. */
export interface Config {
  /** TCP port to listen on (PORT). */
  readonly port: number;
  /**
   * HTTP worker processes of `msgsvc serve` (`--workers`, MSGSVC_WORKERS: a whole number 1 to 256
   * or `auto`; default `auto` = the host's cores minus one, at least 1, leaving one core to the
   * primary). 1: one process, no cluster. More: node:cluster workers sharing the port, with the
   * dispatcher and the rate-limit counter in the primary (src/cluster.ts).
   */
  readonly workers: number;
  /** Interface to bind (HOST). */
  readonly host: string;
  readonly database: DatabaseConfig;
  /** Requests allowed per account per window (MSGSVC_RATE_LIMIT). API.md §6: default 60. */
  readonly rateLimit: number;
  /** Rate-limit window in seconds (MSGSVC_RATE_WINDOW). API.md §6: default 1. */
  readonly rateWindowSeconds: number;
  /** IANA time zone that timestamps are rendered in (MSGSVC_TIMEZONE). API.md §9: default UTC. */
  readonly timeZone: string;
  /** Region used to read phone numbers written without a country code (MSGSVC_DEFAULT_REGION). */
  readonly defaultRegion: CountryCode;
  /** Create a demo account on first start when the database has none (MSGSVC_DEMO, default on). */
  readonly demo: boolean;
  /** Largest accepted request body in bytes (MSGSVC_BODY_LIMIT); larger bodies get 413. */
  readonly bodyLimitBytes: number;
  /**
   * Largest contacts/import CSV body in bytes (MSGSVC_IMPORT_BODY_LIMIT, default 52,428,800 = 50 MB,
   * API.md §10.2); larger bodies get 413.
   */
  readonly importBodyLimitBytes: number;
  /**
   * Largest media/upload body in bytes (MSGSVC_MEDIA_BODY_LIMIT; 413 beyond, API.md §10.7).
   * Default 74,448,896: the 70.00MB file limit (73,400,320 bytes, then 422 `The file "{name}" is
   * too big.`) plus 1 MiB for the multipart envelope, so a file at the limit still fits.
   */
  readonly mediaBodyLimitBytes: number;
  /**
   * Time a client has to send a whole request, headers and body (MSGSVC_REQUEST_TIMEOUT_MS);
   * a slower one gets 408 and the connection is closed, so slow clients cannot hold connections.
   */
  readonly requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open (MSGSVC_KEEP_ALIVE_TIMEOUT_MS); above a load balancer's idle timeout. */
  readonly keepAliveTimeoutMs: number;
  /**
   * SQLite only: how long a resolved key is trusted before the database is asked again
   * (MSGSVC_TOKEN_CACHE_MS, default 2000, 0 = off). A change of a key by any process applies
   * before the next request all the same; on PostgreSQL keys are never cached (API.md §15.2).
   */
  readonly tokenCacheMs: number;
  /** Days audit log entries are kept (MSGSVC_AUDIT_DAYS, default 365; API.md §15.5). */
  readonly auditDays: number;
  /**
   * Days the message log is kept (MSGSVC_RETENTION_DAYS, default 0 = for ever): once a day older
   * messages but Queued ones, their links, clicks and emptied conversations, ended webhook
   * deliveries and inbound once-keys are deleted in small batches (src/domain/retention.ts,
   * docs/guides/backup.md "Retention"). The credit and consent ledgers are kept.
   */
  readonly retentionDays: number;
  /** pino level (LOG_LEVEL). */
  readonly logLevel: string;
  /** Redis for the shared rate limit (REDIS_URL); absent: the limit is kept in this process. */
  readonly redisUrl: string | undefined;
  /** Prefix of the rate-limit keys in Redis (MSGSVC_RATE_KEY_PREFIX), so deployments can share one Redis. */
  readonly rateKeyPrefix: string;
  /** Credits one SMS segment costs (MSGSVC_SMS_SEGMENT_CREDITS, default 1; API.md §11.1). */
  readonly smsSegmentCredits: number;
  /** Credits one MMS costs (MSGSVC_MMS_CREDITS, default 3; API.md §11.1). */
  readonly mmsCredits: number;
  /** Run the dispatcher inside `msgsvc serve` (MSGSVC_DISPATCHER, default on; API.md §11.2). `msgsvc worker` runs it regardless. */
  readonly dispatcher: boolean;
  /**
   * The carrier messages go to (API.md §11.4): `smpp` when MSGSVC_SMPP_URL is set, else
   * `sandbox`, the default when none is configured. MSGSVC_CARRIER may name either explicitly
   * (`smpp` needs the URL; `sandbox` wins over a URL that is set).
   */
  readonly carrier: 'sandbox' | 'smpp';
  /**
   * The carriers, in list order (docs/API.md §14.1; MSGSVC_CARRIERS, parsed by
   * src/lib/carrier-settings.ts). Unset: the one carrier of the single-carrier settings, `smpp`
   * (MSGSVC_SMPP_URL, MSGSVC_SMPP_RATE, MSGSVC_SMPP_WINDOW) or `sandbox` (MSGSVC_SANDBOX_WINDOW).
   */
  readonly carriers: readonly CarrierSpec[];
  /** The routing rules (MSGSVC_ROUTES); unset: `*=` every carrier in list order. src/carriers/config.ts chooses with them. */
  readonly routes: readonly RouteRule[];
  /**
   * API.md §14.1: let a Twilio-compatible carrier whose host is or resolves to a loopback, private,
   * link-local or unspecified address through the SSRF guard (MSGSVC_CARRIER_ALLOW_PRIVATE=1;
   * default off: a gateway on a private network, tests). Android phones are on a LAN: always allowed.
   */
  readonly carrierAllowPrivate: boolean;
  /** HTTP carriers (Twilio, Android): one request's whole exchange, ms (MSGSVC_CARRIER_TIMEOUT_MS, default 10,000). */
  readonly carrierTimeoutMs: number;
  /** The base URL carriers call back (MSGSVC_PUBLIC_URL), normalised, no trailing `/`; required with a Twilio or Android carrier. */
  readonly publicUrl: string | undefined;
  /**
   * The base of tracked links (MSGSVC_LINK_DOMAIN; API.md §10.6 `ShortenLinks`): an absolute
   * `http://` or `https://` URL, normalised (origin and path, no trailing `/`); a link is
   * `{linkDomain}/l/{code}`. Unset: `ShortenLinks` 1 is refused.
   */
  readonly linkDomain: string | undefined;
  /** Messages one dispatcher claims at a time (MSGSVC_DISPATCH_BATCH, default 500). */
  readonly dispatchBatchSize: number;
  /**
   * How long a claimed message stays `sending` before another dispatcher may take it again, in
   * milliseconds (MSGSVC_DISPATCH_LEASE_MS, default 60,000). It bounds how soon a message is
   * retried after a crash; it must be well above the time one batch takes to reach the carrier.
   */
  readonly dispatchLeaseMs: number;
  /** Carrier attempts before a message ends Failed (MSGSVC_DISPATCH_MAX_ATTEMPTS, default 5). */
  readonly dispatchMaxAttempts: number;
  /** How often an idle dispatcher looks for due work, in milliseconds (MSGSVC_DISPATCH_POLL_MS, default 100). */
  readonly dispatchPollMs: number;
  /**
   * How often an idle scheduler looks for scheduled messages to check or send, in milliseconds
   * (MSGSVC_SCHEDULER_POLL_MS, default 200, at most 1,000: API.md §10.6 checks a new or
   * changed scheduled message "within a second"). It runs wherever the dispatcher runs.
   */
  readonly schedulerPollMs: number;
  /** Sandbox carrier: milliseconds from Sent to the delivery receipt (MSGSVC_SANDBOX_RECEIPT_MS, default 1,000). */
  readonly sandboxReceiptMs: number;
  /**
   * API.md §12.5 SSRF guard: allow webhook URLs whose host is or resolves to a loopback,
   * private, link-local or unspecified address (MSGSVC_WEBHOOK_ALLOW_PRIVATE=1; default off).
   */
  readonly webhookAllowPrivate: boolean;
  /** API.md §12.4: time a receiver has to answer 2xx, ms (MSGSVC_WEBHOOK_TIMEOUT_MS, default 10,000). */
  readonly webhookTimeoutMs: number;
  /** Webhook deliveries claimed per round of the delivery loop (MSGSVC_WEBHOOK_BATCH, default 100). */
  readonly webhookBatchSize: number;
  /** Webhook deliveries in flight at once per delivery loop (MSGSVC_WEBHOOK_CONCURRENCY, default 32). */
  readonly webhookConcurrency: number;
  /** Sandbox carrier: milliseconds each submit takes, to imitate a carrier's latency (MSGSVC_SANDBOX_SUBMIT_MS, default 0). */
  readonly sandboxSubmitMs: number;
  /** Sandbox carrier: submits awaiting their answer at once, as a carrier's window (MSGSVC_SANDBOX_WINDOW, default 100). */
  readonly sandboxWindow: number;
  /**
   * Sandbox carrier: a file that gets one line per submit (`{message id} {carrier message id}`),
   * written before the submit is acknowledged (MSGSVC_SANDBOX_JOURNAL; unset: none). For tests
   * and demos that count what reached the carrier across processes.
   */
  readonly sandboxJournal: string | undefined;
  /**
   * SMPP carrier (API.md §11.4): `smpp://system_id:password@host:port`, `smpps://` for TLS
   * (MSGSVC_SMPP_URL; unset: no SMPP). Port default 2775. Validated at start (src/lib/smpp-url.ts).
   */
  readonly smppUrl: string | undefined;
  /** SMPP: submit_sm PDUs per second at most, one per segment (MSGSVC_SMPP_RATE, default 100). */
  readonly smppRate: number;
  /** SMPP: submit_sm awaiting their response at most, the window (MSGSVC_SMPP_WINDOW, default 10). */
  readonly smppWindow: number;
  /** SMPP: response timeout of each PDU, and of connect and bind, in milliseconds (MSGSVC_SMPP_TIMEOUT_MS, default 10,000). */
  readonly smppTimeoutMs: number;
  /** SMPP: enquire_link period in milliseconds, 0 = never (MSGSVC_SMPP_ENQUIRE_MS, default 30,000). */
  readonly smppEnquireMs: number;
  /**
   * API.md §11.5: the free confirmation of STOP, STOPALL, UNSUBSCRIBE, CANCEL, END and QUIT
   * (MSGSVC_STOP_REPLY, 1 to 1,600 characters; default `You have been unsubscribed and will
   * receive no more messages. Reply START to resubscribe.`).
   */
  readonly stopReply: string;
  /** API.md §11.5: the free confirmation of START and UNSTOP (MSGSVC_START_REPLY; default `You have been resubscribed. Reply STOP to unsubscribe.`). */
  readonly startReply: string;
  /** API.md §11.5: the free reply to HELP and INFO (MSGSVC_HELP_REPLY; default `Reply STOP to unsubscribe.`). */
  readonly helpReply: string;
  /**
   * The bearer token of `GET /metrics` (MSGSVC_METRICS_TOKEN: 16 to 200 visible ASCII characters;
   * unset: no /metrics, it answers 404). Prometheus sends it as `Authorization: Bearer <token>`.
   */
  readonly metricsToken: string | undefined;
}

/** Thrown when a setting has a value we cannot use; the message names the setting. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Raw settings, as strings, keyed by environment variable name. Flags are mapped onto these names. */
export type ConfigSource = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * One environment variable msgsvc reads: the machine-readable list that docs/configuration.md is
 * generated from (`npm run config:doc`, scripts/config-doc.ts; test/docs/docs-configuration.test.ts
 * fails when the page is stale or misses a variable read in src/). For a whole number (`integer`)
 * `fallback`, `min` and `max` are the very values loadConfig applies.
 */
export type SettingSpec = {
  /** The environment variable. */
  readonly name: string;
  /** The `msgsvc serve` flag that sets it (flags win over the environment), if any. */
  readonly flag?: string;
  /** Heading of docs/configuration.md the variable is listed under. */
  readonly group: string;
  /** Unit of the value (`ms`, `bytes`, `seconds`, …), if it has one. */
  readonly unit?: string;
  /** What it does, in Markdown (one line). */
  readonly meaning: string;
} & (
  | { readonly kind: 'integer'; readonly fallback: number; readonly min: number; readonly max: number }
  | { readonly kind: 'toggle'; readonly fallback: boolean }
  /** `fallback`: the default as the page shows it (`undefined`: unset by default). */
  | { readonly kind: 'text'; readonly fallback: string | undefined; readonly values?: string }
  /** Read by something other than loadConfig (bin/, Node itself, the cluster primary); documented only. */
  | { readonly kind: 'external'; readonly fallback: string | undefined; readonly values?: string }
);

const STOP_REPLY = 'You have been unsubscribed and will receive no more messages. Reply START to resubscribe.';
const START_REPLY = 'You have been resubscribed. Reply STOP to unsubscribe.';
const HELP_REPLY = 'Reply STOP to unsubscribe.';

/** Every environment variable of msgsvc, in the order docs/configuration.md lists them (one line each: a table). */
// prettier-ignore
export const SETTINGS: readonly SettingSpec[] = Object.freeze([
  // Server
  { name: 'PORT', flag: '--port', group: 'Server', kind: 'integer', fallback: 8080, min: 0, max: 65535, meaning: 'TCP port to listen on' },
  { name: 'HOST', flag: '--host', group: 'Server', kind: 'text', fallback: '127.0.0.1', meaning: 'interface to bind (`0.0.0.0`: every interface)' },
  { name: 'MSGSVC_WORKERS', flag: '--workers', group: 'Server', kind: 'text', fallback: 'auto', values: '`auto` or 1 to 256', meaning: 'HTTP worker processes of `serve`; `auto` = the host\'s cores minus one, at least 1; 1 = one process, no cluster ([guides/production.md](guides/production.md))' },
  { name: 'MSGSVC_DEMO', flag: '--no-demo', group: 'Server', kind: 'toggle', fallback: true, meaning: 'create a demo account with sample data on the first start (no account in the database); `0` turns it off' },
  { name: 'LOG_LEVEL', flag: '--log-level', group: 'Server', kind: 'text', fallback: 'info', values: 'fatal, error, warn, info, debug, trace, silent', meaning: 'pino log level' },
  { name: 'MSGSVC_TIMEZONE', flag: '--timezone', group: 'Server', kind: 'text', fallback: 'UTC', values: 'an IANA zone', meaning: 'time zone that timestamps are rendered and read in (API.md §9.1)' },
  { name: 'MSGSVC_DEFAULT_REGION', flag: '--default-region', group: 'Server', kind: 'text', fallback: 'US', values: 'an ISO 3166 region', meaning: 'region of phone numbers written without a country code (API.md §1.7)' },
  // Database
  { name: 'DATABASE_URL', flag: '--database-url', group: 'Database', kind: 'text', fallback: './data/msgsvc.db', values: 'a file path, `sqlite:PATH`, `postgres://…`', meaning: 'where the data lives: a SQLite file (embedded) or PostgreSQL' },
  { name: 'MSGSVC_PG_POOL_SIZE', group: 'Database', kind: 'integer', fallback: 10, min: 1, max: 1000, unit: 'connections', meaning: 'PostgreSQL connections per process (instances × workers × pool size must stay under `max_connections`)' },
  { name: 'MSGSVC_STATEMENT_TIMEOUT_MS', group: 'Database', kind: 'integer', fallback: 5000, min: 1, max: 600_000, unit: 'ms', meaning: 'PostgreSQL statement timeout (also bounds connecting)' },
  { name: 'MSGSVC_SQLITE_CHECKPOINT_MS', group: 'Database', kind: 'integer', fallback: 0, min: 0, max: 60_000, unit: 'ms', meaning: 'SQLite: `0`, the automatic WAL checkpoint runs inside the commit that fills the WAL past 1,000 pages; a number: checkpoints run that often on a thread of their own, so no request waits for one. Worth it where the process has a spare core; on one core it made the writes\' tail latency worse ([PERFORMANCE.md](PERFORMANCE.md))' },
  // Requests
  { name: 'MSGSVC_BODY_LIMIT', flag: '--body-limit', group: 'Requests', kind: 'integer', fallback: 102_400, min: 1, max: 1_073_741_824, unit: 'bytes', meaning: 'largest request body (larger: 413)' },
  { name: 'MSGSVC_IMPORT_BODY_LIMIT', group: 'Requests', kind: 'integer', fallback: 52_428_800, min: 1, max: 4_294_967_296, unit: 'bytes', meaning: 'largest `contacts/import` CSV body (larger: 413); at most this much is written to a private temporary file per running import' },
  { name: 'MSGSVC_MEDIA_BODY_LIMIT', group: 'Requests', kind: 'integer', fallback: 74_448_896, min: 1, max: 4_294_967_296, unit: 'bytes', meaning: 'largest `media/upload` body (larger: 413): the 70.00 MB file plus 1 MiB for the multipart envelope; a file over 70.00 MB inside it gets the 422 of API.md §10.7' },
  { name: 'MSGSVC_REQUEST_TIMEOUT_MS', group: 'Requests', kind: 'integer', fallback: 30_000, min: 100, max: 3_600_000, unit: 'ms', meaning: 'time a client has to send a whole request, headers and body (slower: 408, connection closed)' },
  { name: 'MSGSVC_KEEP_ALIVE_TIMEOUT_MS', group: 'Requests', kind: 'integer', fallback: 72_000, min: 100, max: 3_600_000, unit: 'ms', meaning: 'how long an idle keep-alive connection stays open; keep it above the load balancer\'s idle timeout' },
  { name: 'MSGSVC_TOKEN_CACHE_MS', group: 'Requests', kind: 'integer', fallback: 2000, min: 0, max: 60_000, unit: 'ms', meaning: 'SQLite only: how long a resolved key is trusted without asking the database (`0`: off). A change of a key (deleted, rolled, changed) by any process applies before the next request all the same (PRAGMA data_version is read on every request). On PostgreSQL keys are never cached: every request reads its key, so a deleted key is refused at once on every instance (API.md §15.2)' },
  { name: 'MSGSVC_AUDIT_DAYS', group: 'Requests', kind: 'integer', fallback: 365, min: 1, max: 36_500, unit: 'days', meaning: 'how long audit log entries are kept (API.md §15.5); older ones are deleted once an hour, in batches of 1,000' },
  // Rate limit
  { name: 'MSGSVC_RATE_LIMIT', flag: '--rate-limit', group: 'Rate limit', kind: 'integer', fallback: 60, min: 1, max: 1_000_000_000, unit: 'requests', meaning: 'requests per account per window (API.md §6)' },
  { name: 'MSGSVC_RATE_WINDOW', flag: '--rate-window', group: 'Rate limit', kind: 'integer', fallback: 1, min: 1, max: 86_400, unit: 'seconds', meaning: 'the rate-limit window (API.md §6)' },
  { name: 'REDIS_URL', group: 'Rate limit', kind: 'text', fallback: undefined, values: '`redis://…` or `rediss://…`', meaning: 'count the rate limit and each account\'s MaxPerSecond in Redis, so that they hold across instances; unset: each process counts on its own' },
  { name: 'MSGSVC_RATE_KEY_PREFIX', group: 'Rate limit', kind: 'text', fallback: 'msgsvc-rl', values: '1 to 64 of `A-Z a-z 0-9 : _ . -`', meaning: 'prefix of the rate-limit keys in Redis, so that deployments can share one Redis' },
  // Messages
  { name: 'MSGSVC_SMS_SEGMENT_CREDITS', group: 'Messages', kind: 'integer', fallback: 1, min: 0, max: 1_000_000, unit: 'credits', meaning: 'what one SMS segment costs (API.md §11.1)' },
  { name: 'MSGSVC_MMS_CREDITS', group: 'Messages', kind: 'integer', fallback: 3, min: 0, max: 1_000_000, unit: 'credits', meaning: 'what one MMS costs (API.md §11.1)' },
  { name: 'MSGSVC_STOP_REPLY', group: 'Messages', kind: 'text', fallback: STOP_REPLY, values: '1 to 1,600 characters', meaning: 'the free confirmation of STOP, STOPALL, UNSUBSCRIBE, CANCEL, END and QUIT (API.md §11.5)' },
  { name: 'MSGSVC_START_REPLY', group: 'Messages', kind: 'text', fallback: START_REPLY, values: '1 to 1,600 characters', meaning: 'the free confirmation of START and UNSTOP (API.md §11.5)' },
  { name: 'MSGSVC_HELP_REPLY', group: 'Messages', kind: 'text', fallback: HELP_REPLY, values: '1 to 1,600 characters', meaning: 'the free reply to HELP and INFO (API.md §11.5)' },
  { name: 'MSGSVC_LINK_DOMAIN', group: 'Messages', kind: 'text', fallback: undefined, values: 'an absolute `http://` or `https://` URL, no user, query or fragment, at most 200 characters', meaning: 'the base of tracked links: `ShortenLinks` 1 replaces each URL of a message by `{this}/l/{code}`, which answers `GET /l/{code}` with a redirect (API.md §10.6); unset: `ShortenLinks` 1 is refused' },
  { name: 'MSGSVC_RETENTION_DAYS', group: 'Messages', kind: 'integer', fallback: 0, min: 0, max: 36_500, unit: 'days', meaning: 'how long the message log is kept; `0`: for ever. Once a day, what is older is deleted in batches of 500 rows, each a short transaction: messages created more than this many days ago (every status but Queued), their tracked links and link clicks, conversations left with no message, webhook deliveries that ended (Delivered or Failed) and inbound once-keys. The credit and consent ledgers are kept ([guides/backup.md](guides/backup.md#retention))' },
  // Dispatcher
  { name: 'MSGSVC_DISPATCHER', group: 'Dispatcher and scheduler', kind: 'toggle', fallback: true, meaning: 'run the dispatcher, the scheduler and the webhook deliveries inside `msgsvc serve` (`msgsvc worker` runs them regardless)' },
  { name: 'MSGSVC_DISPATCH_BATCH', group: 'Dispatcher and scheduler', kind: 'integer', fallback: 500, min: 1, max: 10_000, unit: 'messages', meaning: 'messages one dispatcher claims at a time' },
  { name: 'MSGSVC_DISPATCH_LEASE_MS', group: 'Dispatcher and scheduler', kind: 'integer', fallback: 60_000, min: 100, max: 86_400_000, unit: 'ms', meaning: 'how long a claimed message stays claimed before another dispatcher may take it again: how soon a message is retried after a crash; keep it well above the time one batch takes to reach the carrier' },
  { name: 'MSGSVC_DISPATCH_MAX_ATTEMPTS', group: 'Dispatcher and scheduler', kind: 'integer', fallback: 5, min: 1, max: 100, unit: 'attempts', meaning: 'carrier attempts before a message ends Failed (`RETRIES_EXHAUSTED`)' },
  { name: 'MSGSVC_DISPATCH_POLL_MS', group: 'Dispatcher and scheduler', kind: 'integer', fallback: 100, min: 1, max: 60_000, unit: 'ms', meaning: 'how often an idle dispatcher looks for due work' },
  { name: 'MSGSVC_SCHEDULER_POLL_MS', group: 'Dispatcher and scheduler', kind: 'integer', fallback: 200, min: 1, max: 1000, unit: 'ms', meaning: 'how often an idle scheduler looks for scheduled messages to check or send (at most a second: API.md §11.7)' },
  { name: 'MSGSVC_CARRIER', group: 'Dispatcher and scheduler', kind: 'text', fallback: undefined, values: '`sandbox`, `smpp`', meaning: 'the carrier; unset: `smpp` when `MSGSVC_SMPP_URL` is set, else `sandbox`. `sandbox` wins over a URL that is set; `smpp` needs the URL' },
  // Carriers and routing
  { name: 'MSGSVC_CARRIERS', group: 'Carriers and routing', kind: 'text', fallback: undefined, values: 'comma-separated `name=URL`: `smpp://`, `smpps://`, `twilio://SID:TOKEN@host`, `twilio+http://…@host:port`, `android://user:password@host:port`, `android+https://…`, `sandbox:`; `?rate=` (1 to 100,000 per second) and `?window=` (1 to 1,000) on any', meaning: 'several carriers at once (API.md §14.1); names 1 to 32 of `a-z 0-9 _ -`; rate default 100 for SMPP, 10 for HTTP carriers, none for the sandbox; window default 10 (the sandbox: `MSGSVC_SANDBOX_WINDOW`); percent-encode `% , / ? #` in a password. Unset: `smpp` (`MSGSVC_SMPP_URL`) or `sandbox`; it cannot be set beside `MSGSVC_SMPP_URL` or `MSGSVC_CARRIER` ([guides/carriers.md](guides/carriers.md))' },
  { name: 'MSGSVC_ROUTES', group: 'Carriers and routing', kind: 'text', fallback: undefined, values: '`MATCH=name[>name…]` separated by `;`; MATCH `*` or 1 to 15 digits, optionally after `sms:` or `mms:`', meaning: 'which carriers take a message, in failover order: the rule with the longest prefix of the recipient\'s digits, of its type or of none (a typed rule wins a tie); unset: `*=` every carrier in `MSGSVC_CARRIERS` order (API.md §14.1)' },
  { name: 'MSGSVC_PUBLIC_URL', group: 'Carriers and routing', kind: 'text', fallback: undefined, values: 'an absolute `http://` or `https://` URL, no query', meaning: 'the base URL at which carriers reach this service (receipts, inbound texts, MMS media); required with a `twilio` or `android` carrier' },
  { name: 'MSGSVC_CARRIER_ALLOW_PRIVATE', group: 'Carriers and routing', kind: 'toggle', fallback: false, meaning: 'allow a `twilio` carrier whose host is or resolves to a loopback, private, link-local or unspecified address (a gateway on a private network; tests); without it, a `twilio` host written as such an address stops the start; `android` phones are always allowed (API.md §14.1)' },
  { name: 'MSGSVC_CARRIER_TIMEOUT_MS', group: 'Carriers and routing', kind: 'integer', fallback: 10_000, min: 100, max: 600_000, unit: 'ms', meaning: 'how long one request to an HTTP carrier (`twilio`, `android`) may take, connect to answer; a timeout is a temporary failure' },
  // Sandbox carrier
  { name: 'MSGSVC_SANDBOX_RECEIPT_MS', group: 'Sandbox carrier', kind: 'integer', fallback: 1000, min: 0, max: 86_400_000, unit: 'ms', meaning: 'time from Sent to the delivery receipt (API.md §11.3)' },
  { name: 'MSGSVC_SANDBOX_SUBMIT_MS', group: 'Sandbox carrier', kind: 'integer', fallback: 0, min: 0, max: 60_000, unit: 'ms', meaning: 'time each submit takes, to imitate a carrier\'s latency (benchmarks)' },
  { name: 'MSGSVC_SANDBOX_WINDOW', group: 'Sandbox carrier', kind: 'integer', fallback: 100, min: 1, max: 10_000, unit: 'submits', meaning: 'submits awaiting their answer at once, as a carrier\'s window' },
  { name: 'MSGSVC_SANDBOX_JOURNAL', group: 'Sandbox carrier', kind: 'text', fallback: undefined, values: 'a file path', meaning: 'a file that gets one line per submit (`{message id} {carrier message id}`), written before the submit is acknowledged: for tests and demos that count what reached the carrier across processes' },
  // SMPP carrier
  { name: 'MSGSVC_SMPP_URL', group: 'SMPP carrier', kind: 'text', fallback: undefined, values: '`smpp://system_id:password@host:port`, `smpps://…`', meaning: 'send through this SMPP 3.4 SMSC; `smpps://` for TLS; port 2775 when left out; system_id at most 15, password at most 8 characters (percent-encode `@`, `:`, `/`) ([guides/carriers.md](guides/carriers.md))' },
  { name: 'MSGSVC_SMPP_RATE', group: 'SMPP carrier', kind: 'integer', fallback: 100, min: 1, max: 100_000, unit: 'per second', meaning: 'submit_sm per second at most (one per segment), as the carrier contract allows' },
  { name: 'MSGSVC_SMPP_WINDOW', group: 'SMPP carrier', kind: 'integer', fallback: 10, min: 1, max: 1000, unit: 'submits', meaning: 'submit_sm awaiting their response at most (also the dispatcher\'s concurrency)' },
  { name: 'MSGSVC_SMPP_TIMEOUT_MS', group: 'SMPP carrier', kind: 'integer', fallback: 10_000, min: 100, max: 600_000, unit: 'ms', meaning: 'how long each PDU\'s response (and connect, and bind) is awaited' },
  { name: 'MSGSVC_SMPP_ENQUIRE_MS', group: 'SMPP carrier', kind: 'integer', fallback: 30_000, min: 0, max: 3_600_000, unit: 'ms', meaning: 'enquire_link period that keeps the bind alive (`0`: none)' },
  { name: 'NODE_EXTRA_CA_CERTS', group: 'SMPP carrier', kind: 'external', fallback: undefined, values: 'a PEM file', meaning: 'read by Node itself: extra CAs, for an `smpps://` SMSC whose certificate a private CA signed' },
  // Webhooks
  { name: 'MSGSVC_WEBHOOK_ALLOW_PRIVATE', group: 'Webhooks', kind: 'toggle', fallback: false, meaning: 'allow webhook URLs whose host is or resolves to a loopback, private, link-local or unspecified address (API.md §12.5)' },
  { name: 'MSGSVC_WEBHOOK_TIMEOUT_MS', group: 'Webhooks', kind: 'integer', fallback: 10_000, min: 1, max: 600_000, unit: 'ms', meaning: 'time a receiver has to answer 2xx (API.md §12.4)' },
  { name: 'MSGSVC_WEBHOOK_BATCH', group: 'Webhooks', kind: 'integer', fallback: 100, min: 1, max: 10_000, unit: 'deliveries', meaning: 'deliveries claimed per round of the delivery loop' },
  { name: 'MSGSVC_WEBHOOK_CONCURRENCY', group: 'Webhooks', kind: 'integer', fallback: 32, min: 1, max: 1000, unit: 'deliveries', meaning: 'deliveries in flight at once per delivery loop' },
  // Observability
  { name: 'MSGSVC_METRICS_TOKEN', group: 'Observability', kind: 'text', fallback: undefined, values: '16 to 200 visible ASCII characters', meaning: 'bearer token of `GET /metrics`; unset: no `/metrics` (404) ([guides/metrics.md](guides/metrics.md))' },
  // The command
  { name: 'MSGSVC_FROM_SOURCE', group: 'The msgsvc command', kind: 'external', fallback: undefined, values: '`1`', meaning: 'read by bin/msgsvc.js: run `src/` through tsx even when `dist/` is up to date (development)' },
  { name: 'NODE_OPTIONS', group: 'The msgsvc command', kind: 'external', fallback: undefined, meaning: 'read by Node itself; `--max-semi-space-size=8` is what `npm start` passes (about 25 MB less RSS, same speed)' },
  { name: 'MSGSVC_CLUSTER_WORKER', group: 'The msgsvc command', kind: 'external', fallback: undefined, values: '`1`', meaning: 'internal: set by `serve --workers N` on the worker processes it starts; never set it yourself' },
] satisfies SettingSpec[]);

const BY_NAME = new Map(SETTINGS.map((s) => [s.name, s]));

/** The table entry of `name`, of the given kind (a programming error otherwise). */
function spec<K extends SettingSpec['kind']>(name: string, kind: K): Extract<SettingSpec, { kind: K }> {
  const found = BY_NAME.get(name);
  if (!found || found.kind !== kind) throw new Error(`config.ts: ${name} is not a ${kind} setting of SETTINGS`);
  return found as Extract<SettingSpec, { kind: K }>;
}

/** The default of a text setting, as SETTINGS gives it. */
function textDefault(name: string): string {
  return spec(name, 'text').fallback ?? '';
}

/** A whole-number setting, with the default and bounds of its SETTINGS entry. @throws ConfigError */
function integer(source: ConfigSource, name: string): number {
  const { fallback, min, max } = spec(name, 'integer');
  const raw = source[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) {
    throw new ConfigError(`${name} must be a whole number between ${min} and ${max}, got ${JSON.stringify(raw)}`);
  }
  const value = Number(raw.trim());
  if (value < min || value > max) {
    throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  }
  return value;
}

/** MSGSVC_WORKERS: `auto` (or unset: cores − 1, at least 1) or a whole number 1 to 256. */
function workerCount(raw: string | undefined): number {
  const value = (raw ?? '').trim().toLowerCase();
  if (value === '' || value === 'auto') return Math.max(1, availableParallelism() - 1);
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 256) {
    throw new ConfigError(`MSGSVC_WORKERS must be a whole number between 1 and 256, or auto, got ${JSON.stringify(raw)}`);
  }
  return Number(value);
}

function toggle(source: ConfigSource, name: string): boolean {
  const { fallback } = spec(name, 'toggle');
  const raw = source[name];
  if (raw === undefined || raw === '') return fallback;
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(`${name} must be 1 or 0 (true/false), got ${JSON.stringify(raw)}`);
}

/**
 * Parses DATABASE_URL: a file path, `sqlite:PATH` (also `sqlite://PATH`), or a `postgres://` URL.
 * @throws ConfigError for any other scheme.
 */
export function parseDatabaseUrl(raw: string | undefined, pg = { poolSize: 10, statementTimeoutMs: 5000 }): DatabaseConfig {
  const value = (raw ?? '').trim();
  if (value === '') return { kind: 'sqlite', path: textDefault('DATABASE_URL') };
  if (/^postgres(ql)?:\/\//i.test(value)) return { kind: 'postgres', url: value, ...pg };
  const sqlite = /^sqlite:(\/\/)?(.*)$/i.exec(value);
  if (sqlite) {
    const path = sqlite[2] ?? '';
    if (path === '') throw new ConfigError('DATABASE_URL sqlite: needs a file path, e.g. sqlite:./data/msgsvc.db');
    return { kind: 'sqlite', path };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    throw new ConfigError(`DATABASE_URL has an unsupported scheme: ${value.split(':')[0]} (use a file path, sqlite:PATH or postgres://)`);
  }
  return { kind: 'sqlite', path: value };
}

/** A SQLite database's checkpoint interval (MSGSVC_SQLITE_CHECKPOINT_MS); PostgreSQL has none. */
function withCheckpoints(database: DatabaseConfig, checkpointMs: number): DatabaseConfig {
  return database.kind === 'sqlite' ? { ...database, checkpointMs } : database;
}

function rateKeyPrefix(raw: string | undefined): string {
  const value = (raw ?? '').trim() || textDefault('MSGSVC_RATE_KEY_PREFIX');
  if (!/^[A-Za-z0-9:_.-]{1,64}$/.test(value)) {
    throw new ConfigError(`MSGSVC_RATE_KEY_PREFIX must be 1-64 of A-Z a-z 0-9 : _ . -, got ${JSON.stringify(raw)}`);
  }
  return value;
}

function redisUrl(raw: string | undefined): string | undefined {
  const value = (raw ?? '').trim();
  if (value === '') return undefined;
  if (!/^rediss?:\/\//i.test(value)) throw new ConfigError(`REDIS_URL must start with redis:// or rediss://, got ${JSON.stringify(value)}`);
  return value;
}

/** MSGSVC_CARRIER: unset (SMPP when MSGSVC_SMPP_URL is set, else the sandbox), `sandbox`, or `smpp` (needs the URL). */
function carrierName(raw: string | undefined, smppUrl: string | undefined): 'sandbox' | 'smpp' {
  const value = (raw ?? '').trim().toLowerCase();
  if (value === '') return smppUrl ? 'smpp' : 'sandbox';
  if (value === 'sandbox') return 'sandbox';
  if (value === 'smpp') {
    if (!smppUrl) throw new ConfigError('MSGSVC_CARRIER=smpp needs MSGSVC_SMPP_URL (smpp://system_id:password@host:port)');
    return 'smpp';
  }
  throw new ConfigError(`MSGSVC_CARRIER must be sandbox or smpp (or unset), got ${JSON.stringify(raw)}`);
}

/** MSGSVC_SMPP_URL: unset or blank, or a valid smpp:// / smpps:// URL (the message never repeats the password). */
function smppUrl(raw: string | undefined): string | undefined {
  const value = (raw ?? '').trim();
  if (value === '') return undefined;
  try {
    parseSmppUrl(value);
  } catch (err) {
    throw new ConfigError(`MSGSVC_SMPP_URL ${(err as Error).message}`);
  }
  return value;
}

/**
 * A `twilio` entry whose host is a literal loopback, private, link-local or unspecified address can
 * never be reached: the carrier's address guard refuses it at every connection (HTTP_ADDRESS_NOT_ALLOWED,
 * docs/API.md §14.1), so the messages routed to it would stay Queued forever. That is a
 * configuration error, not an outage to probe for. A host NAME is not judged here: what it resolves
 * to may change, and the guard checks it at each connection. `android` phones are always allowed.
 * @throws ConfigError naming the entry (its URL without secrets) and the setting that allows it.
 */
function refuseForbiddenHosts(carriers: readonly CarrierSpec[]): void {
  for (const spec of carriers) {
    if (spec.kind !== 'twilio') continue;
    const host = new URL(spec.baseUrl).hostname.replace(/^\[(.*)\]$/, '$1');
    if (isIP(host) !== 0 && isForbiddenAddress(host))
      throw new ConfigError(
        `MSGSVC_CARRIERS entry ${spec.name} (${spec.display}): ${host} is a loopback, private, link-local or unspecified ` +
          'address, which the carrier address guard refuses at every connection (HTTP_ADDRESS_NOT_ALLOWED); ' +
          'set MSGSVC_CARRIER_ALLOW_PRIVATE=1 to allow it (a gateway on a private network)',
      );
  }
}

/**
 * MSGSVC_CARRIERS, MSGSVC_ROUTES and MSGSVC_PUBLIC_URL (src/lib/carrier-settings.ts), the
 * single-carrier settings being the fallback of the first.
 * @throws ConfigError naming the entry, never a password or token.
 */
function carrierSettings(source: ConfigSource): Pick<Config, 'carriers' | 'routes' | 'publicUrl'> {
  const smpp = smppUrl(source.MSGSVC_SMPP_URL);
  const listed = (source.MSGSVC_CARRIERS ?? '').trim() !== '';
  try {
    const carriers = parseCarriers(source.MSGSVC_CARRIERS, {
      // MSGSVC_CARRIER is read only without MSGSVC_CARRIERS; beside it, parseCarriers refuses it.
      carrier: listed ? 'sandbox' : carrierName(source.MSGSVC_CARRIER, smpp),
      carrierSetting: source.MSGSVC_CARRIER,
      smppUrl: smpp,
      smppRate: integer(source, 'MSGSVC_SMPP_RATE'),
      smppWindow: integer(source, 'MSGSVC_SMPP_WINDOW'),
      sandboxWindow: integer(source, 'MSGSVC_SANDBOX_WINDOW'),
    });
    if (!toggle(source, 'MSGSVC_CARRIER_ALLOW_PRIVATE')) refuseForbiddenHosts(carriers);
    return { carriers, routes: parseRoutes(source.MSGSVC_ROUTES, carriers), publicUrl: parsePublicUrl(source.MSGSVC_PUBLIC_URL, carriers) };
  } catch (err) {
    if (err instanceof CarrierSettingError) throw new ConfigError(err.message);
    throw err;
  }
}

/**
 * MSGSVC_LINK_DOMAIN: unset or blank, or an absolute http(s) URL without user, query or fragment,
 * at most 200 characters; normalised to its origin and path without trailing `/` (so
 * `https://Go.Example/` is `https://go.example`).
 * @throws ConfigError saying what is wrong.
 */
function linkDomain(raw: string | undefined): string | undefined {
  const text = (raw ?? '').trim();
  if (text === '') return undefined;
  const bad = (why: string): never => {
    throw new ConfigError(`MSGSVC_LINK_DOMAIN ${why}, got ${JSON.stringify(text.slice(0, 200))}`);
  };
  if (text.length > 200) bad('must be at most 200 characters');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return bad('must be an absolute http:// or https:// URL (e.g. https://go.example.com)');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') bad('must be an http:// or https:// URL (e.g. https://go.example.com)');
  if (url.username !== '' || url.password !== '') bad('must not carry a user or password');
  if (url.search !== '' || text.includes('?')) bad('must have no query (?…)');
  if (url.hash !== '' || text.includes('#')) bad('must have no fragment (#…)');
  return url.origin + url.pathname.replace(/\/+$/, '');
}

/** The three reply texts of API.md §11.5, word for word, used when their setting is unset or blank. */
export const DEFAULT_REPLIES = Object.freeze({ stop: STOP_REPLY, start: START_REPLY, help: HELP_REPLY });

/** MSGSVC_METRICS_TOKEN: trimmed; unset or blank: no /metrics; else 16 to 200 visible ASCII characters. */
function metricsToken(raw: string | undefined): string | undefined {
  const token = (raw ?? '').trim();
  if (token === '') return undefined;
  if (!/^[\x21-\x7e]{16,200}$/.test(token)) {
    throw new ConfigError('MSGSVC_METRICS_TOKEN must be 16 to 200 visible ASCII characters (no spaces)');
  }
  return token;
}

/** An API.md §11.5 reply text setting: trimmed; unset or blank gives `fallback`; over 1,600 characters (ten SMS segments' worth) is refused. */
function replyText(source: ConfigSource, name: string, fallback: string): string {
  const value = (source[name] ?? '').trim();
  if (value === '') return fallback;
  if ([...value].length > 1600) throw new ConfigError(`${name} must be at most 1600 characters, got ${[...value].length}`);
  return value;
}

/**
 * Builds the configuration from environment-style settings, validating every value once.
 * @throws ConfigError naming the first bad setting.
 */
export function loadConfig(source: ConfigSource = process.env): Config {
  const timeZone = (source.MSGSVC_TIMEZONE ?? '').trim() || textDefault('MSGSVC_TIMEZONE');
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
  } catch {
    throw new ConfigError(`MSGSVC_TIMEZONE is not a known IANA time zone: ${JSON.stringify(timeZone)}`);
  }
  const region = ((source.MSGSVC_DEFAULT_REGION ?? '').trim() || textDefault('MSGSVC_DEFAULT_REGION')).toUpperCase();
  if (!isSupportedCountry(region)) {
    throw new ConfigError(`MSGSVC_DEFAULT_REGION is not a supported ISO 3166 region code: ${JSON.stringify(region)}`);
  }
  const logLevel = ((source.LOG_LEVEL ?? '').trim() || textDefault('LOG_LEVEL')).toLowerCase();
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(source.LOG_LEVEL)}`);
  }
  const host = (source.HOST ?? '').trim() || textDefault('HOST');
  return Object.freeze({
    port: integer(source, 'PORT'),
    workers: workerCount(source.MSGSVC_WORKERS),
    host,
    database: withCheckpoints(
      parseDatabaseUrl(source.DATABASE_URL, {
        poolSize: integer(source, 'MSGSVC_PG_POOL_SIZE'),
        statementTimeoutMs: integer(source, 'MSGSVC_STATEMENT_TIMEOUT_MS'),
      }),
      integer(source, 'MSGSVC_SQLITE_CHECKPOINT_MS'),
    ),
    rateLimit: integer(source, 'MSGSVC_RATE_LIMIT'),
    rateWindowSeconds: integer(source, 'MSGSVC_RATE_WINDOW'),
    timeZone,
    defaultRegion: region,
    demo: toggle(source, 'MSGSVC_DEMO'),
    bodyLimitBytes: integer(source, 'MSGSVC_BODY_LIMIT'),
    importBodyLimitBytes: integer(source, 'MSGSVC_IMPORT_BODY_LIMIT'),
    mediaBodyLimitBytes: integer(source, 'MSGSVC_MEDIA_BODY_LIMIT'),
    requestTimeoutMs: integer(source, 'MSGSVC_REQUEST_TIMEOUT_MS'),
    keepAliveTimeoutMs: integer(source, 'MSGSVC_KEEP_ALIVE_TIMEOUT_MS'),
    tokenCacheMs: integer(source, 'MSGSVC_TOKEN_CACHE_MS'),
    auditDays: integer(source, 'MSGSVC_AUDIT_DAYS'),
    retentionDays: integer(source, 'MSGSVC_RETENTION_DAYS'),
    logLevel,
    redisUrl: redisUrl(source.REDIS_URL),
    rateKeyPrefix: rateKeyPrefix(source.MSGSVC_RATE_KEY_PREFIX),
    smsSegmentCredits: integer(source, 'MSGSVC_SMS_SEGMENT_CREDITS'),
    mmsCredits: integer(source, 'MSGSVC_MMS_CREDITS'),
    dispatcher: toggle(source, 'MSGSVC_DISPATCHER'),
    ...carrierSettings(source),
    carrier: carrierName(source.MSGSVC_CARRIER, smppUrl(source.MSGSVC_SMPP_URL)),
    dispatchBatchSize: integer(source, 'MSGSVC_DISPATCH_BATCH'),
    dispatchLeaseMs: integer(source, 'MSGSVC_DISPATCH_LEASE_MS'),
    dispatchMaxAttempts: integer(source, 'MSGSVC_DISPATCH_MAX_ATTEMPTS'),
    dispatchPollMs: integer(source, 'MSGSVC_DISPATCH_POLL_MS'),
    schedulerPollMs: integer(source, 'MSGSVC_SCHEDULER_POLL_MS'),
    sandboxReceiptMs: integer(source, 'MSGSVC_SANDBOX_RECEIPT_MS'),
    sandboxSubmitMs: integer(source, 'MSGSVC_SANDBOX_SUBMIT_MS'),
    webhookAllowPrivate: toggle(source, 'MSGSVC_WEBHOOK_ALLOW_PRIVATE'),
    carrierAllowPrivate: toggle(source, 'MSGSVC_CARRIER_ALLOW_PRIVATE'),
    carrierTimeoutMs: integer(source, 'MSGSVC_CARRIER_TIMEOUT_MS'),
    webhookTimeoutMs: integer(source, 'MSGSVC_WEBHOOK_TIMEOUT_MS'),
    webhookBatchSize: integer(source, 'MSGSVC_WEBHOOK_BATCH'),
    webhookConcurrency: integer(source, 'MSGSVC_WEBHOOK_CONCURRENCY'),
    sandboxWindow: integer(source, 'MSGSVC_SANDBOX_WINDOW'),
    sandboxJournal: (source.MSGSVC_SANDBOX_JOURNAL ?? '').trim() || undefined,
    smppUrl: smppUrl(source.MSGSVC_SMPP_URL),
    smppRate: integer(source, 'MSGSVC_SMPP_RATE'),
    smppWindow: integer(source, 'MSGSVC_SMPP_WINDOW'),
    smppTimeoutMs: integer(source, 'MSGSVC_SMPP_TIMEOUT_MS'),
    smppEnquireMs: integer(source, 'MSGSVC_SMPP_ENQUIRE_MS'),
    stopReply: replyText(source, 'MSGSVC_STOP_REPLY', DEFAULT_REPLIES.stop),
    startReply: replyText(source, 'MSGSVC_START_REPLY', DEFAULT_REPLIES.start),
    helpReply: replyText(source, 'MSGSVC_HELP_REPLY', DEFAULT_REPLIES.help),
    linkDomain: linkDomain(source.MSGSVC_LINK_DOMAIN),
    metricsToken: metricsToken(source.MSGSVC_METRICS_TOKEN),
  });
}
