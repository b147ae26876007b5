import { randomUUID } from 'node:crypto';
import { PollLoop } from '../dispatch/poll-loop.ts';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { Store } from '../store/db.ts';
import * as repo from '../store/repositories/webhooks.ts';
import type { ClaimedDelivery } from '../store/repositories/webhooks.ts';
import { createTimeFormat, type Clock, type TimeFormat } from '../lib/time.ts';
import { eventBody, UnknownPayloadVersionError, type WebhookRow } from '../records/webhooks.ts';
import { ForbiddenAddressError, guardedLookup, isForbiddenAddress } from '../lib/ssrf.ts';

/**
 * The webhook delivery loop (API.md §12). `msgsvc serve` runs one beside the dispatcher,
 * `msgsvc worker` too; any number may share one database.
 *
 * One round (`runOnce`):
 * 1. up to `batchSize` due deliveries are claimed in ONE statement that commits them with a
 *    lease (src/store/repositories/webhooks.ts, the dispatcher's kind of claim: FOR UPDATE SKIP
 *    LOCKED on PostgreSQL): no other instance takes them until the lease runs out, so across
 *    instances each attempt is made by one only;
 * 2. each is POSTed to its webhook's Url, `concurrency` at a time: the body
 *    `{"type","timestamp","data"}`, signed by the Standard Webhooks scheme (`standardwebhooks`:
 *    `webhook-id` the delivery's id, the same on every attempt; `webhook-timestamp` this attempt's
 *    Unix seconds on the injected clock; `webhook-signature: v1,<base64 HMAC-SHA256>`). The host
 *    is checked by the SSRF guard when the socket connects (src/lib/ssrf.ts); redirects are
 *    not followed (a 3xx is `HTTP 3xx`, a failure);
 * 3. a 2xx within `timeoutMs` (10 s) is Delivered; anything else is retried after 5 s, 30 s,
 *    2 min, 10 min, 1 h, 6 h (each from the attempt before, on the injected clock), then Failed.
 *    Each outcome is written only while the claim's token still holds the delivery.
 *
 * Guarantee: at least once. An instance that dies between 2 and 3 leaves its claims leased; when
 * the lease runs out another instance sends them again, with the same `webhook-id` (receivers
 * drop duplicates by it).
 */

/** API.md §12.4: retries after about 5 s, 30 s, 2 min, 10 min, 1 h and 6 h; then the delivery is Failed. */
export const RETRY_SCHEDULE_MS = [5_000, 30_000, 120_000, 600_000, 3_600_000, 21_600_000] as const;
/** Attempts in all: the first and one per retry. */
export const MAX_ATTEMPTS = RETRY_SCHEDULE_MS.length + 1;

export interface DelivererOptions {
  store: Store;
  clock: Clock;
  /** MSGSVC_WEBHOOK_ALLOW_PRIVATE: let loopback/private receivers through the SSRF guard. */
  allowPrivate: boolean;
  /** A 2xx must arrive within this many ms (real time; API.md §12.4: 10 s). */
  timeoutMs: number;
  batchSize: number;
  concurrency: number;
  /** Lease of a claimed delivery, ms (default: timeoutMs + 5 s: longer than any attempt). */
  leaseMs?: number;
  /** Pause of an idle loop, ms (real time). */
  pollMs: number;
  /** Renders record times (API.md §9); default UTC. */
  timeZone?: string;
  log?: { warn(obj: object, msg?: string): void; error(obj: object, msg?: string): void };
}

export interface DeliveryRound {
  claimed: number;
  delivered: number;
  retried: number;
  failed: number;
  /** Outcomes not written: the lease was lost meanwhile. */
  lost: number;
}

interface AttemptResult {
  statusCode: number | null;
  error: string;
}

const noLog = { warn() {}, error() {} };

export class WebhookDeliverer {
  private readonly time: TimeFormat;
  private readonly log: NonNullable<DelivererOptions['log']>;
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;
  private readonly poll: PollLoop;
  /** Running totals since start, for GET /metrics. */
  private readonly totals = { delivered: 0, retried: 0, failed: 0 };

  /** Attempts delivered (2xx), retried and deliveries Failed since this process started (GET /metrics). */
  stats(): { delivered: number; retried: number; failed: number } {
    return { ...this.totals };
  }

  constructor(private readonly options: DelivererOptions) {
    this.time = createTimeFormat(options.timeZone ?? 'UTC');
    this.log = options.log ?? noLog;
    const lookup = guardedLookup(options.allowPrivate) as unknown as http.AgentOptions['lookup'];
    this.httpAgent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency, lookup });
    this.httpsAgent = new https.Agent({ keepAlive: true, maxSockets: options.concurrency, lookup });
    this.poll = new PollLoop({
      pollMs: options.pollMs,
      round: async () => (await this.runOnce()).claimed > 0,
      onError: (err) => this.log.error({ err }, 'webhook delivery round failed'),
    });
  }

  start(): void {
    this.poll.start();
  }

  /** Stops after the round in progress (its outcomes are written). */
  async stop(): Promise<void> {
    await this.poll.stop();
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  /** One round (class comment). Tests call it directly with a manual clock. */
  async runOnce(): Promise<DeliveryRound> {
    const { store, clock, batchSize, concurrency, timeoutMs } = this.options;
    const round: DeliveryRound = { claimed: 0, delivered: 0, retried: 0, failed: 0, lost: 0 };
    const token = randomUUID();
    const leaseMs = this.options.leaseMs ?? timeoutMs + 5_000;
    // A read first: an idle loop takes no write lock (SQLite runs one writer at a time).
    if (!(await repo.hasDueDeliveries(store.db, clock.nowMs()))) return round;
    const claimed = await repo.claimDueDeliveries(store.db, clock.nowMs(), batchSize, clock.nowMs() + leaseMs, token);
    round.claimed = claimed.length;
    // Each webhook read once per round (its Url and secret as they are now: API.md §12.3 checks at each attempt).
    const webhooks = new Map<number, Promise<WebhookRow | undefined>>();
    const webhookOf = (id: number) => {
      let w = webhooks.get(id);
      if (!w) webhooks.set(id, (w = repo.webhookById(store.db, id)));
      return w;
    };
    let next = 0;
    const worker = async () => {
      while (next < claimed.length) {
        const d = claimed[next++]!;
        const result = await this.attempt(d, await webhookOf(d.webhook_id));
        const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
        const now = clock.nowMs();
        const ended = ok || d.attempts >= MAX_ATTEMPTS;
        const status = ok ? 'Delivered' : ended ? 'Failed' : 'Pending';
        const written = await repo.recordAttempt(store.db, d.id, token, {
          status,
          statusCode: result.statusCode,
          error: ok ? '' : result.error,
          dueAt: ended ? null : now + RETRY_SCHEDULE_MS[d.attempts - 1]!,
          now: clock.nowSeconds(),
        });
        if (!written) round.lost++;
        else if (ok) round.delivered++;
        else if (ended) round.failed++;
        else round.retried++;
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, claimed.length)) }, worker));
    this.totals.delivered += round.delivered;
    this.totals.retried += round.retried;
    this.totals.failed += round.failed;
    return round;
  }

  /** Runs rounds until one claims nothing (tests with a manual clock). */
  async drain(maxRounds = 100): Promise<DeliveryRound> {
    const sum: DeliveryRound = { claimed: 0, delivered: 0, retried: 0, failed: 0, lost: 0 };
    for (let i = 0; i < maxRounds; i++) {
      const r = await this.runOnce();
      for (const k of Object.keys(sum) as (keyof DeliveryRound)[]) sum[k] += r[k];
      if (r.claimed === 0) break;
    }
    return sum;
  }

  /**
   * The POST body of a stored payload (API.md §12.2), rendered by its version
   * (src/records/webhooks.ts `eventBody`), record times in this loop's zone.
   * @throws UnknownPayloadVersionError, SyntaxError as eventBody.
   */
  body(payload: string): string {
    return eventBody(payload, this.time);
  }

  /** One attempt: the POST, its answer's status or a short reason. Never throws. */
  private async attempt(d: ClaimedDelivery, webhook: WebhookRow | undefined): Promise<AttemptResult> {
    if (!webhook) return { statusCode: null, error: 'webhook deleted' };
    let url: URL;
    try {
      url = new URL(webhook.url);
    } catch {
      return { statusCode: null, error: 'invalid url' };
    }
    // A literal address never goes through the lookup: it is checked here.
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    if (!this.options.allowPrivate && isIP(host) !== 0 && isForbiddenAddress(host))
      return { statusCode: null, error: 'address not allowed' };
    let body: string;
    try {
      body = this.body(d.payload);
    } catch (err) {
      if (err instanceof UnknownPayloadVersionError) {
        // Written by a newer release sharing the database (a rolling deploy, or a rollback after
        // one): not sent, and kept on the retry schedule rather than failed at once, so an
        // instance that knows the version can still deliver it; Failed after the last attempt as
        // any other, and `webhooks/redeliver` can queue it again once the newer release runs.
        this.log.warn({ deliveryId: d.id, version: err.version }, 'webhook payload of an unknown version: kept for a newer instance');
        return { statusCode: null, error: 'unknown payload version' };
      }
      this.log.error({ err, deliveryId: d.id }, 'webhook payload cannot be rendered');
      return { statusCode: null, error: 'internal error' };
    }
    // One reading of the clock for the header and the signed content alike.
    const seconds = this.options.clock.nowSeconds();
    const signature = new Webhook(webhook.secret).sign(d.msg_id, new Date(seconds * 1000), body);
    return this.post(url, body, { 'webhook-id': d.msg_id, 'webhook-timestamp': String(seconds), 'webhook-signature': signature });
  }

  private post(url: URL, body: string, sig: Record<string, string>): Promise<AttemptResult> {
    return new Promise((resolve) => {
      let settled = false;
      const done = (r: AttemptResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(r);
      };
      const secure = url.protocol === 'https:';
      const req = (secure ? https : http).request(url, {
        method: 'POST',
        agent: secure ? this.httpsAgent : this.httpAgent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': 'msgsvc-webhooks/1',
          ...sig,
        },
      });
      const timer = setTimeout(() => {
        done({ statusCode: null, error: 'timeout' });
        req.destroy();
      }, this.options.timeoutMs);
      req.on('response', (res) => {
        res.resume();
        const code = res.statusCode ?? 0;
        done({ statusCode: code, error: code >= 200 && code < 300 ? '' : `HTTP ${code}` });
      });
      req.on('error', (err) => done({ statusCode: null, error: reasonOf(err) }));
      req.end(body);
    });
  }
}

/** A short reason for LastError (API.md §12.4: `timeout`, `connection refused`, …). */
function reasonOf(err: unknown): string {
  if (err instanceof ForbiddenAddressError) return 'address not allowed';
  const code = (err as { code?: string }).code;
  switch (code) {
    case 'EWEBHOOKFORBIDDEN':
      return 'address not allowed';
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
    case 'EPIPE':
      return 'connection reset';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'ETIMEDOUT':
      return 'timeout';
    default:
      return code ? `network error (${code})` : 'network error';
  }
}
