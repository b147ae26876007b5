/**
 * The Twilio-compatible HTTP carrier (docs/API.md "Carriers over HTTP"): Twilio itself, and the
 * providers that speak its Messages API (SignalWire, Somleng, …).
 *
 * - Submit: `POST {base}/2010-04-01/Accounts/{SID}/Messages.json`, HTTP Basic `SID:TOKEN`,
 *   form-encoded `To` (`+` and the digits), `From` (`+` and the digits; a short code of 3 to 8
 *   digits as it is), `Body`, `StatusCallback` (`{PUBLIC_URL}/v1/carriers/{name}/status`); an
 *   MMS adds one `MediaUrl` per medium, in `MediaIds` order (the links come from the
 *   `mediaUrls` option: the caller signs them, src/lib/signed-link.ts).
 * - Outcomes (SubmitResult): a 2xx whose JSON has a `sid` → accepted, carrier id = sid. A 4xx
 *   other than 429 → failed, ErrorCode `TWILIO_{code}` from the reply's JSON `code`
 *   (`HTTP_{status}` without one). A 429 → retry `HTTP_429`, after its `Retry-After` when it
 *   has one, and every submit of this carrier pauses that long (at most `maxRetryAfterMs`). A
 *   5xx → retry `HTTP_{status}`. A timeout (`timeoutMs`, the whole exchange), a refused or
 *   broken connection, a reply cut off, or a 2xx that is not JSON with a sid → retry
 *   (`HTTP_TIMEOUT`, `HTTP_CONNECTION_FAILED`, `HTTP_BAD_REPLY`). A timeout or a cut-off 2xx may
 *   mean the provider took the message: it may then go twice (at-least-once, as SMPP's window).
 * - Flow control: at most `rate` submits per second (src/lib/token-bucket.ts, 50 ms of burst)
 *   and at most `window` awaiting their answer (also the keep-alive socket pool's size).
 * - Readiness ("reachable"): after `start()`, not ready until the first probe has an answer
 *   (before `start()`, a plain submitter such as a tool, it counts as ready). Then
 *   ready, until `downAfterFailures` (3) submits in a row end in a timeout, a connection failure
 *   or a 5xx: then not ready (the dispatcher claims nothing for it, routing fails over, and an
 *   outage spends no attempt), and a probe (`GET {base}/2010-04-01/Accounts/{SID}.json`) runs
 *   with backoff (`probeMinMs` × 2^n, at most `probeMaxMs`, jittered) until any HTTP answer
 *   below 500 comes back. Any answer below 500 to a submit also counts as reachable. A 429
 *   makes it not ready while its pause lasts.
 * - SSRF guard (src/lib/ssrf.ts): the provider's host may not be or resolve to a loopback,
 *   private, link-local or unspecified address unless `allowPrivate` (a gateway on a private
 *   network, tests). Checked at each connection; redirects are never followed. A refused
 *   address counts as a connection failure (`HTTP_ADDRESS_NOT_ALLOWED`). (A literal refused
 *   address in the configuration never gets this far: src/config.ts stops the start.)
 * - Callbacks: `handleStatusCallback` and `handleInboundCallback` check `X-Twilio-Signature`
 *   (src/carriers/twilio-signature.ts) over this carrier's own callback URL, read the form
 *   (src/carriers/callbacks.ts) and hand the receipt or the inbound text to the sink.
 *
 * The auth token never appears in an error, a log line or a result.
 */
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Carrier, CarrierSink, OutboundMessage, SubmitResult } from '../dispatch/carrier.ts';
import { guardedLookup, isForbiddenAddress } from '../lib/ssrf.ts';
import { MESSAGE_TYPE_MMS } from '../records/statuses.ts';
import { TokenBucket } from '../lib/token-bucket.ts';
import { parseInboundCallback, parseStatusCallback } from './callbacks.ts';
import { verifyTwilioSignature, type TwilioParams } from './twilio-signature.ts';

export const HTTP_TIMEOUT = 'HTTP_TIMEOUT';
export const HTTP_CONNECTION_FAILED = 'HTTP_CONNECTION_FAILED';
export const HTTP_ADDRESS_NOT_ALLOWED = 'HTTP_ADDRESS_NOT_ALLOWED';
export const HTTP_BAD_REPLY = 'HTTP_BAD_REPLY';

/** A carrier name (the `{name}` of its routes): 1 to 32 of a-z, 0-9, `_`, `-`. */
export const CARRIER_NAME = /^[a-z0-9_-]{1,32}$/;

export interface TwilioCarrierOptions {
  /** The carrier's configured name (routes `/v1/carriers/{name}/…`, logs, metrics). */
  readonly name: string;
  /** `https://host[:port][/path]` (`twilio://`) or `http://…` (`twilio+http://`); the API paths follow it. */
  readonly baseUrl: string;
  readonly accountSid: string;
  readonly authToken: string;
  /** MSGSVC_PUBLIC_URL: where the provider reaches msgsvc (callbacks, media links). */
  readonly publicUrl: string;
  /** Submits per second at most. */
  readonly rate: number;
  /** Submits awaiting their answer at most. */
  readonly window: number;
  /** One submit's whole exchange (connect, send, answer), ms. */
  readonly timeoutMs: number;
  /** Let a provider on a loopback/private/link-local address through the SSRF guard (default false). */
  readonly allowPrivate?: boolean;
  /**
   * The `MediaUrl`s of an MMS, in `MediaIds` order: signed links to
   * `{PUBLIC_URL}/v1/carriers/{name}/media?…` (src/lib/signed-link.ts). Throwing makes the submit
   * a retry. Absent: an MMS goes with its Body only.
   */
  readonly mediaUrls?: (message: OutboundMessage) => readonly string[] | Promise<readonly string[]>;
  /** Consecutive timeouts/connection failures/5xx that make it not ready (default 3). */
  readonly downAfterFailures?: number;
  /** Probe backoff while not ready, ms (defaults 500 and 30,000). */
  readonly probeMinMs?: number;
  readonly probeMaxMs?: number;
  /** Longest pause a `Retry-After` may impose, ms (default 300,000). */
  readonly maxRetryAfterMs?: number;
  readonly log?: { info?(obj: object, msg?: string): void; warn(obj: object, msg?: string): void };
}

/** Where the carrier stands, for /readyz. */
export interface TwilioCarrierStatus {
  /** `starting`: first probe not answered yet; `ready`; `unreachable`: probing with backoff; `throttled`: a 429 pause; `stopped`. */
  readonly state: 'starting' | 'ready' | 'unreachable' | 'throttled' | 'stopped';
  /** The provider's scheme, host and port (no credentials). */
  readonly endpoint: string;
  /** The last reason it was not reachable (`HTTP_TIMEOUT`, `HTTP_503`, …), if any. */
  readonly lastError?: string;
}

/** Running totals since start (metrics, labelled by the carrier's name). */
export interface TwilioCarrierStats {
  submits: number;
  accepted: number;
  failed: number;
  retried: number;
  timeouts: number;
  connectionFailures: number;
  throttled: number;
  probes: number;
  statusCallbacks: number;
  inboundCallbacks: number;
  forbiddenCallbacks: number;
}

/** What became of a callback; the route maps it to HTTP. */
export type CallbackOutcome =
  /** Missing or wrong `X-Twilio-Signature`: 403, nothing changed. */
  | { readonly kind: 'forbidden' }
  /** Required fields missing or invalid: 400, nothing changed. */
  | { readonly kind: 'malformed'; readonly reason: string }
  /** A status that changes nothing: 200. */
  | { readonly kind: 'ignored' }
  /** Handed to the sink and recorded: 200 (inbound: the TwiML reply of callbacks.ts). */
  | { readonly kind: 'applied' };

export interface TwilioCarrier extends Carrier {
  /** The exact callback URLs the provider is given and that signatures are checked against. */
  readonly statusCallbackUrl: string;
  readonly inboundCallbackUrl: string;
  /** `{PUBLIC_URL}/v1/carriers/{name}/media`: prefix of the signed media links (add `?` + query). */
  readonly mediaUrlBase: string;
  status(): TwilioCarrierStatus;
  stats(): TwilioCarrierStats;
  /**
   * A status callback (`POST …/status`): `params` the parsed form (callbacks.ts parseFormBody),
   * `signature` the `X-Twilio-Signature` header. Resolves once the receipt is recorded by the
   * sink (an unknown MessageSid is the sink's to ignore).
   * @throws what the sink throws (the route answers 500: the provider may try again); Error when
   *   the carrier is not started.
   */
  handleStatusCallback(params: TwilioParams, signature: string | readonly string[] | undefined): Promise<CallbackOutcome>;
  /**
   * An inbound callback (`POST …/inbound`): as handleStatusCallback; the sink gets the text with
   * `carrierMessageId` = MessageSid (the sink runs the inbound rules once per MessageSid).
   */
  handleInboundCallback(params: TwilioParams, signature: string | readonly string[] | undefined): Promise<CallbackOutcome>;
}

/** The submit's form fields, in this order. Pure; exported for tests and tools. */
export interface SubmitFields {
  /** Recipient digits (a leading `+` is accepted). */
  readonly to: string;
  /** Account number digits, or a short code. */
  readonly from: string;
  readonly body: string;
  readonly statusCallback: string;
  readonly mediaUrls?: readonly string[];
}

/**
 * The form body of a submit: `To=+digits&From=…&Body=…&StatusCallback=…&MediaUrl=…` (one
 * MediaUrl per link, repeated as Twilio's own libraries send them). `From` keeps a short code
 * (3 to 8 digits) as it is, else `+` and the digits. `Body` is left out when empty and media go
 * (an MMS of pictures only).
 */
export function twilioSubmitForm(f: SubmitFields): string {
  const digits = (n: string) => n.replace(/^\+/, '');
  const from = digits(f.from);
  const form = new URLSearchParams();
  form.append('To', `+${digits(f.to)}`);
  form.append('From', /^[0-9]{3,8}$/.test(from) ? from : `+${from}`);
  const media = f.mediaUrls ?? [];
  if (f.body !== '' || media.length === 0) form.append('Body', f.body);
  form.append('StatusCallback', f.statusCallback);
  for (const url of media) form.append('MediaUrl', url);
  return form.toString();
}

/** The ErrorCode of a permanent refusal: `TWILIO_{code}` from the JSON body, else `HTTP_{status}`. */
export function permanentErrorCode(status: number, body: string): string {
  try {
    const code = (JSON.parse(body) as { code?: unknown } | null)?.code;
    if ((typeof code === 'number' && Number.isSafeInteger(code)) || (typeof code === 'string' && /^[0-9A-Za-z_-]{1,32}$/.test(code)))
      return `TWILIO_${code}`;
  } catch {
    // not JSON: the status says it
  }
  return `HTTP_${status}`;
}

/** `Retry-After` (seconds or an HTTP date) in ms from now, or undefined. */
export function retryAfterMs(header: string | undefined, nowMs: number): number | undefined {
  if (header === undefined) return undefined;
  const h = header.trim();
  if (/^[0-9]{1,9}$/.test(h)) return Number(h) * 1000;
  const at = Date.parse(h);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/**
 * Builds a Twilio-compatible carrier. Nothing is sent until `start` (the probe) or `submit`.
 * @throws TypeError / RangeError for bad options (never naming the token): a name not matching
 *   CARRIER_NAME, a base or public URL that is not absolute http(s), an empty SID or token, a
 *   rate, window or timeout that is not positive.
 */
export function createTwilioCarrier(options: TwilioCarrierOptions): TwilioCarrier {
  return new TwilioCarrierImpl(options);
}

type Reply = { kind: 'reply'; status: number; headers: http.IncomingHttpHeaders; body: string };
type Transport = { kind: 'timeout' } | { kind: 'connection'; errorCode: string };

const MAX_REPLY_BYTES = 1024 * 1024;
const noLog = { warn() {} };

class TwilioCarrierImpl implements TwilioCarrier {
  readonly name: string;
  readonly supportsMms = true;
  readonly window: number;
  readonly statusCallbackUrl: string;
  readonly inboundCallbackUrl: string;
  readonly mediaUrlBase: string;

  private readonly base: URL;
  private readonly endpoint: string;
  private readonly messagesPath: string;
  private readonly accountPath: string;
  private readonly authorization: string;
  private readonly agent: http.Agent;
  private readonly bucket: TokenBucket;
  private readonly log: NonNullable<TwilioCarrierOptions['log']>;
  private readonly downAfter: number;
  private readonly probeMinMs: number;
  private readonly probeMaxMs: number;
  private readonly maxRetryAfterMs: number;

  private sink: CarrierSink | undefined;
  private state: 'idle' | 'starting' | 'ready' | 'unreachable' | 'stopped' = 'idle';
  private lastError: string | undefined;
  private failureStreak = 0;
  private pausedUntil = 0;
  private probeTimer: NodeJS.Timeout | undefined;
  private probing = false;
  private probeRound = 0;
  private inFlight = 0;
  private windowWaiters: (() => void)[] = [];
  private running = 0;
  private idleWaiters: (() => void)[] = [];
  private readonly counters: TwilioCarrierStats = {
    submits: 0,
    accepted: 0,
    failed: 0,
    retried: 0,
    timeouts: 0,
    connectionFailures: 0,
    throttled: 0,
    probes: 0,
    statusCallbacks: 0,
    inboundCallbacks: 0,
    forbiddenCallbacks: 0,
  };

  constructor(private readonly o: TwilioCarrierOptions) {
    if (typeof o.name !== 'string' || !CARRIER_NAME.test(o.name)) throw new TypeError('carrier name must be 1 to 32 of a-z, 0-9, _ and -');
    this.name = o.name;
    this.base = httpUrl(o.baseUrl, 'base URL');
    const publicUrl = httpUrl(o.publicUrl, 'public URL');
    if (typeof o.accountSid !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(o.accountSid))
      throw new TypeError(`carrier ${o.name}: the account SID must be 1 to 64 letters, digits, _ or -`);
    if (typeof o.authToken !== 'string' || o.authToken === '') throw new TypeError(`carrier ${o.name}: the auth token is empty`);
    if (!(o.rate > 0) || !Number.isFinite(o.rate)) throw new RangeError(`carrier ${o.name}: rate must be a positive number`);
    if (!Number.isSafeInteger(o.window) || o.window < 1) throw new RangeError(`carrier ${o.name}: window must be a positive integer`);
    if (!(o.timeoutMs > 0)) throw new RangeError(`carrier ${o.name}: timeoutMs must be positive`);
    this.window = o.window;
    this.endpoint = `${this.base.protocol}//${this.base.host}`;
    const prefix = this.base.pathname.replace(/\/+$/, '');
    this.messagesPath = `${prefix}/2010-04-01/Accounts/${encodeURIComponent(o.accountSid)}/Messages.json`;
    this.accountPath = `${prefix}/2010-04-01/Accounts/${encodeURIComponent(o.accountSid)}.json`;
    this.authorization = `Basic ${Buffer.from(`${o.accountSid}:${o.authToken}`, 'utf8').toString('base64')}`;
    const root = publicUrl.href.replace(/\/+$/, '');
    this.statusCallbackUrl = `${root}/v1/carriers/${o.name}/status`;
    this.inboundCallbackUrl = `${root}/v1/carriers/${o.name}/inbound`;
    this.mediaUrlBase = `${root}/v1/carriers/${o.name}/media`;
    const lookup = guardedLookup(o.allowPrivate ?? false) as unknown as http.AgentOptions['lookup'];
    const agentOptions = { keepAlive: true, maxSockets: o.window, lookup };
    this.agent = this.base.protocol === 'https:' ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
    this.bucket = new TokenBucket(o.rate);
    this.log = o.log ?? noLog;
    this.downAfter = Math.max(1, o.downAfterFailures ?? 3);
    this.probeMinMs = o.probeMinMs ?? 500;
    this.probeMaxMs = o.probeMaxMs ?? 30_000;
    this.maxRetryAfterMs = o.maxRetryAfterMs ?? 300_000;
  }

  // ---------------------------------------------------------------- lifecycle

  /** See the module comment ("Readiness"): reachable and not paused by a 429. */
  ready(): boolean {
    return (this.state === 'ready' || this.state === 'idle') && this.pausedUntil <= Date.now();
  }

  status(): TwilioCarrierStatus {
    const state = this.state === 'idle' || this.state === 'ready' ? (this.pausedUntil > Date.now() ? 'throttled' : 'ready') : this.state;
    return { state, endpoint: this.endpoint, ...(this.lastError !== undefined ? { lastError: this.lastError } : {}) };
  }

  stats(): TwilioCarrierStats {
    return { ...this.counters };
  }

  /** Keeps the sink and probes the provider in the background (never throws: an unreachable provider stays not ready). */
  start(sink: CarrierSink): Promise<void> {
    this.sink = sink;
    if (this.state === 'idle' || this.state === 'stopped') {
      this.state = 'starting';
      this.probeRound = 0;
      this.scheduleProbe(0);
    }
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    this.state = 'stopped';
    if (this.probeTimer) clearTimeout(this.probeTimer);
    this.probeTimer = undefined;
    while (this.running > 0) await new Promise<void>((r) => this.idleWaiters.push(r));
    this.agent.destroy();
  }

  // ---------------------------------------------------------------- submit

  async submit(message: OutboundMessage): Promise<SubmitResult> {
    this.running++;
    try {
      return await this.submitOnce(message);
    } finally {
      if (--this.running === 0) for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  private async submitOnce(message: OutboundMessage): Promise<SubmitResult> {
    const mediaUrls = message.typeId === MESSAGE_TYPE_MMS && this.o.mediaUrls ? await this.o.mediaUrls(message) : [];
    const body = twilioSubmitForm({
      to: message.to,
      from: message.from,
      body: message.text,
      statusCallback: this.statusCallbackUrl,
      mediaUrls,
    });
    const pause = this.pausedUntil - Date.now();
    if (pause > 0) {
      if (pause > this.o.timeoutMs) return this.retried({ kind: 'retry', errorCode: 'HTTP_429', afterMs: pause });
      await sleep(pause);
    }
    await this.acquireWindow();
    let outcome: Reply | Transport;
    try {
      await this.bucket.take();
      this.counters.submits++;
      outcome = await this.request('POST', this.messagesPath, body);
    } finally {
      this.releaseWindow();
    }
    return this.classify(outcome);
  }

  private classify(outcome: Reply | Transport): SubmitResult {
    if (outcome.kind === 'timeout') {
      this.counters.timeouts++;
      this.unhealthy(HTTP_TIMEOUT);
      return this.retried({ kind: 'retry', errorCode: HTTP_TIMEOUT });
    }
    if (outcome.kind === 'connection') {
      this.counters.connectionFailures++;
      this.unhealthy(outcome.errorCode);
      return this.retried({ kind: 'retry', errorCode: outcome.errorCode });
    }
    const { status, body } = outcome;
    if (status >= 500) {
      this.unhealthy(`HTTP_${status}`);
      return this.retried({ kind: 'retry', errorCode: `HTTP_${status}` });
    }
    this.reachable();
    if (status >= 200 && status < 300) {
      let sid: unknown;
      try {
        sid = (JSON.parse(body) as { sid?: unknown } | null)?.sid;
      } catch {
        sid = undefined;
      }
      if (typeof sid === 'string' && sid !== '' && sid.length <= 64) {
        this.counters.accepted++;
        return { kind: 'accepted', carrierMessageId: sid };
      }
      return this.retried({ kind: 'retry', errorCode: HTTP_BAD_REPLY });
    }
    if (status === 429) {
      this.counters.throttled++;
      const header: unknown = outcome.headers['retry-after'];
      const after = retryAfterMs(typeof header === 'string' ? header : undefined, Date.now());
      const afterMs = after === undefined ? undefined : Math.min(after, this.maxRetryAfterMs);
      this.pausedUntil = Math.max(this.pausedUntil, Date.now() + (afterMs ?? 1000));
      return this.retried({ kind: 'retry', errorCode: 'HTTP_429', ...(afterMs !== undefined ? { afterMs } : {}) });
    }
    if (status >= 400) {
      this.counters.failed++;
      return { kind: 'failed', errorCode: permanentErrorCode(status, body) };
    }
    // 1xx/3xx: redirects are not followed; the provider is misconfigured, maybe for a while.
    return this.retried({ kind: 'retry', errorCode: `HTTP_${status}` });
  }

  private retried(r: SubmitResult): SubmitResult {
    this.counters.retried++;
    return r;
  }

  private async acquireWindow(): Promise<void> {
    while (this.inFlight >= this.window) await new Promise<void>((r) => this.windowWaiters.push(r));
    this.inFlight++;
  }

  private releaseWindow(): void {
    this.inFlight--;
    this.windowWaiters.shift()?.();
  }

  // ---------------------------------------------------------------- readiness

  /** A timeout, connection failure or 5xx: after `downAfter` in a row, not ready and probing. */
  private unhealthy(reason: string): void {
    this.lastError = reason;
    this.failureStreak++;
    if (this.state === 'ready' || this.state === 'idle') {
      if (this.failureStreak >= this.downAfter) {
        this.state = 'unreachable';
        this.log.warn({ carrier: this.name, endpoint: this.endpoint, reason }, 'carrier unreachable; probing');
        this.probeRound = 0;
        this.scheduleProbe(this.probeDelay());
      }
    }
  }

  /** Any HTTP answer below 500: the provider is there. */
  private reachable(): void {
    this.failureStreak = 0;
    if (this.state === 'starting' || this.state === 'unreachable') {
      if (this.probeTimer) clearTimeout(this.probeTimer);
      this.probeTimer = undefined;
      this.state = 'ready';
      this.log.info?.({ carrier: this.name, endpoint: this.endpoint }, 'carrier reachable');
    }
  }

  /** (A method, so the compiler does not narrow `state` across an await.) */
  private isStopped(): boolean {
    return this.state === 'stopped';
  }

  private probeDelay(): number {
    const d = Math.min(this.probeMaxMs, this.probeMinMs * 2 ** Math.min(this.probeRound, 30));
    return Math.round(d * (0.5 + Math.random() / 2));
  }

  private scheduleProbe(delayMs: number): void {
    if (this.probeTimer || this.state === 'stopped') return;
    this.probeTimer = setTimeout(() => {
      this.probeTimer = undefined;
      void this.probe();
    }, delayMs);
    this.probeTimer.unref();
  }

  private async probe(): Promise<void> {
    if (this.probing || this.state === 'stopped') return;
    this.probing = true;
    try {
      this.counters.probes++;
      const r = await this.request('GET', this.accountPath, undefined);
      if (this.isStopped()) return;
      if (r.kind === 'reply' && r.status < 500) return this.reachable();
      this.lastError = r.kind === 'reply' ? `HTTP_${r.status}` : r.kind === 'timeout' ? HTTP_TIMEOUT : r.errorCode;
      if (this.state === 'starting') {
        this.state = 'unreachable';
        this.log.warn({ carrier: this.name, endpoint: this.endpoint, reason: this.lastError }, 'carrier unreachable at start; probing');
      }
      if (this.state === 'unreachable') {
        this.probeRound++;
        this.scheduleProbe(this.probeDelay());
      }
    } finally {
      this.probing = false;
    }
  }

  // ---------------------------------------------------------------- HTTP

  /** One exchange with the provider; never throws. */
  private request(method: 'GET' | 'POST', path: string, body: string | undefined): Promise<Reply | Transport> {
    const host = this.base.hostname.startsWith('[') ? this.base.hostname.slice(1, -1) : this.base.hostname;
    // A literal address never goes through the lookup: it is checked here.
    if (!this.o.allowPrivate && isIP(host) !== 0 && isForbiddenAddress(host))
      return Promise.resolve({ kind: 'connection', errorCode: HTTP_ADDRESS_NOT_ALLOWED });
    return new Promise((resolve) => {
      let settled = false;
      const done = (r: Reply | Transport) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(r);
      };
      const headers: http.OutgoingHttpHeaders = {
        authorization: this.authorization,
        accept: 'application/json',
        'user-agent': 'msgsvc-carrier/1',
      };
      if (body !== undefined) {
        headers['content-type'] = 'application/x-www-form-urlencoded';
        headers['content-length'] = Buffer.byteLength(body);
      }
      const req = (this.base.protocol === 'https:' ? https : http).request({
        protocol: this.base.protocol,
        hostname: host,
        port: this.base.port || undefined,
        method,
        path,
        agent: this.agent,
        headers,
      });
      const timer = setTimeout(() => {
        done({ kind: 'timeout' });
        req.destroy();
      }, this.o.timeoutMs);
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_REPLY_BYTES) {
            done({ kind: 'connection', errorCode: HTTP_BAD_REPLY });
            req.destroy();
          } else chunks.push(c);
        });
        res.on('end', () =>
          done({ kind: 'reply', status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', () => done({ kind: 'connection', errorCode: HTTP_CONNECTION_FAILED }));
        res.on('close', () => {
          if (!res.complete) done({ kind: 'connection', errorCode: HTTP_CONNECTION_FAILED });
        });
      });
      req.on('error', (err) => {
        const code = (err as { code?: string }).code;
        done({ kind: 'connection', errorCode: code === 'EWEBHOOKFORBIDDEN' ? HTTP_ADDRESS_NOT_ALLOWED : HTTP_CONNECTION_FAILED });
      });
      req.end(body);
    });
  }

  // ---------------------------------------------------------------- callbacks

  async handleStatusCallback(params: TwilioParams, signature: string | readonly string[] | undefined): Promise<CallbackOutcome> {
    if (!verifyTwilioSignature(this.o.authToken, this.statusCallbackUrl, params, signature)) {
      this.counters.forbiddenCallbacks++;
      return { kind: 'forbidden' };
    }
    const parsed = parseStatusCallback(params);
    if (parsed.kind === 'malformed') return parsed;
    if (parsed.kind === 'ignore') return { kind: 'ignored' };
    await this.sinkOrThrow().receipt(parsed.receipt);
    this.counters.statusCallbacks++;
    return { kind: 'applied' };
  }

  async handleInboundCallback(params: TwilioParams, signature: string | readonly string[] | undefined): Promise<CallbackOutcome> {
    if (!verifyTwilioSignature(this.o.authToken, this.inboundCallbackUrl, params, signature)) {
      this.counters.forbiddenCallbacks++;
      return { kind: 'forbidden' };
    }
    const parsed = parseInboundCallback(params);
    if (parsed.kind === 'malformed') return parsed;
    await this.sinkOrThrow().inbound({ from: parsed.from, to: parsed.to, text: parsed.text, carrierMessageId: parsed.messageSid });
    this.counters.inboundCallbacks++;
    return { kind: 'applied' };
  }

  private sinkOrThrow(): CarrierSink {
    if (!this.sink) throw new Error(`carrier ${this.name} is not started`);
    return this.sink;
  }
}

/** An absolute http(s) URL without credentials, query or fragment. @throws TypeError naming `what` only. */
function httpUrl(value: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError(`the ${what} is not an absolute URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TypeError(`the ${what} must be http or https`);
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '')
    throw new TypeError(`the ${what} may carry no credentials, query or fragment`);
  return url;
}
