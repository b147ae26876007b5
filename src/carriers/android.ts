/**
 * The Android phone carrier (docs/API.md "Several carriers and routing", `android://`): an Android phone running the
 * open-source app "SMS Gateway for Android" (capcom6) in Local Server mode sends the texts, and
 * pushes what becomes of them back to msgsvc as webhooks.
 *
 * App version followed: v1.58.0 and later (checked against the app's source up to v1.68.0):
 * - v1.58.0 answers a send whose `id` the phone already holds with 409 Conflict (before, a 500),
 *   which is what makes submits idempotent below;
 * - webhook signing (X-Signature/X-Timestamp) exists since v1.33.0, `sender`/`recipient` in
 *   event payloads since v1.54.0 (android-events.ts reads older payloads too).
 *
 * It talks to the phone through the app's own TypeScript client (`android-sms-gateway` 3.0.0),
 * given an HTTP adapter of ours over node:http/https (below), not fetch: that way the socket's
 * own DNS lookup is the SSRF guard's (src/lib/ssrf.ts), redirects are never followed, and each
 * request has a hard timeout. The local server's routes sit at the root of `http://host:port`
 * (`/message`, `/webhooks`; the cloud's `/3rdparty/v1` prefix is not used), HTTP Basic auth with
 * the user and password shown in the app.
 *
 * - Submit: `POST {base}/message` `{ id, message, phoneNumbers: ["+digits"], withDeliveryReport:
 *   true }` (a short code, 3 to 8 digits, goes as it is with `skipPhoneValidation=true`). `id` is
 *   ours, `msgsvc-{message id}`, so a submit made again after a crash or a timeout whose answer
 *   was lost cannot send twice: the phone answers 409, the message it holds under that id is read
 *   back (`GET {base}/message/{id}`) and, when it is to the same number (and, when the app shows
 *   it, with the same text), counts as accepted. The reply's `id` is the carrierMessageId (the
 *   events' `messageId`). 2xx → accepted (Sent). 429, 5xx, a timeout, a refused or broken
 *   connection → retry. 401/403 → retry and not ready (the credentials are the operator's to fix,
 *   the messages are not at fault: they wait, Queued). Any other 4xx → failed, ErrorCode
 *   `ANDROID_{status}` (a 409 for an id held by another message: `ANDROID_409`). SMS only:
 *   an MMS is failed `NO_MMS_ROUTE` (supportsMms is false, so the dispatcher never routes one here).
 * - Events: at start, the four webhooks `sms:sent`, `sms:delivered`, `sms:failed`,
 *   `sms:received` are registered at `{publicUrl}/v1/carriers/{name}/events`, each under a stable
 *   id `msgsvc-{name}-sms-{sent|delivered|failed|received}` (POST /webhooks with an id replaces
 *   the webhook of that id: registering again is harmless); stale ones of ours, and any other
 *   webhook pointing at our URL (it would send each event twice), are deleted. The app takes
 *   only `https://` webhook URLs (or `http://127.0.0.1`), so MSGSVC_PUBLIC_URL must be https.
 *   The route verifies and reads the events with android-events.ts.
 * - Readiness: ready once registered. Until then, and again after a submit finds the phone
 *   unreachable (timeout, refused, reset) or refuses our credentials, it is not ready and
 *   registers again in the background, after min(max, min × 2^n) × (0.5 + random/2) (default
 *   1 s to 60 s); start() never throws for an unreachable phone: it stays not ready.
 * - SSRF: the phone is on a LAN in the normal case (192.168.x.y), and its address is the
 *   operator's own configuration, not a user's input, so private addresses are allowed by
 *   default (`allowPrivate`, default true). With `allowPrivate: false` the guard of
 *   src/lib/ssrf.ts refuses loopback/private/link-local addresses at connect time.
 * - Secrets: the password travels only in the Authorization header; the signing key never leaves
 *   msgsvc. Neither appears in an error, an ErrorCode or a log line.
 *
 * Two settings this carrier needs beyond the common URL (query parameters of its
 * MSGSVC_CARRIERS entry, both required; the events route reads them, android-events.ts):
 * - `number`: the phone's own number (digits; a leading `+` as `%2B`), the To of every text the
 *   phone receives. The app's `sms:received` names the receiving SIM's number only when Android
 *   tells it (often not: permission, carrier) and then in whatever form the SIM reports, national
 *   or international; one phone, one account number keeps the routing of incoming texts
 *   (docs/API.md §11.5) exact.
 * - `key`: the app's webhook signing key (Settings → Webhooks → Signing Key). The app makes it
 *   itself and offers no API to read it (its settings export leaves it out), so the operator
 *   copies it; it lives on the carrier's URL, beside the password, because each phone has its own
 *   (one process-wide setting could not say which key is whose). Characters other than letters,
 *   digits and `-_.~` must be percent-encoded (`+` as `%2B`; the app's own keys are letters,
 *   digits, `-` and `_`).
 */
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
// The package's code is ESM but its package.json does not say so: Node loads it as ESM (its
// default export is the Client class) while TypeScript reads it as CommonJS (the class one level
// deeper). Taken from the namespace, whichever way it was loaded.
import * as androidSmsGateway from 'android-sms-gateway';
import type { HttpClient, WebHook } from 'android-sms-gateway';
import type { Carrier, CarrierSink, OutboundMessage, SubmitResult } from '../dispatch/carrier.ts';
import { TokenBucket } from '../lib/token-bucket.ts';
import { guardedLookup, isForbiddenAddress } from '../lib/ssrf.ts';

type ClientClass = (typeof androidSmsGateway)['default']['default'];
type Client = InstanceType<ClientClass>;
const loaded = androidSmsGateway as unknown as { default: ClientClass | { default: ClientClass } };
const Client: ClientClass = typeof loaded.default === 'function' ? loaded.default : loaded.default.default;
const { WebHookEventType } = androidSmsGateway;

/** ErrorCode of an MMS (a phone takes SMS only). */
export const NO_MMS_ROUTE = 'NO_MMS_ROUTE';
/** Retry ErrorCodes. */
export const ANDROID_TIMEOUT = 'ANDROID_TIMEOUT';
export const ANDROID_UNREACHABLE = 'ANDROID_UNREACHABLE';
export const ANDROID_NOT_READY = 'ANDROID_NOT_READY';

/** The events registered on the phone, in this order. */
export const ANDROID_EVENTS = [
  WebHookEventType.SmsSent,
  WebHookEventType.SmsDelivered,
  WebHookEventType.SmsFailed,
  WebHookEventType.SmsReceived,
] as const;

/** How the carrier is set up. Times in milliseconds. */
export interface AndroidCarrierOptions {
  /** The carrier's name in MSGSVC_CARRIERS (`a-z0-9_-`, 1 to 32): in its events URL, webhook ids and logs. */
  name: string;
  /** The app's API without credentials: `http://host:port` (the local server's routes are at its root) or `https://host[:port][/base-path]`. */
  baseUrl: string;
  username: string;
  password: string;
  /** MSGSVC_PUBLIC_URL: the absolute base URL at which the phone reaches msgsvc. */
  publicUrl: string;
  /** Submits per second (URL parameter `rate`; default 10 for HTTP carriers). */
  rate: number;
  /** Submits awaiting their answer at most (URL parameter `window`; default 10). */
  window: number;
  /** Each request to the phone must be answered within this (default 10,000). */
  timeoutMs?: number;
  /** Let the phone be at a loopback/private address (default true: see the file comment). */
  allowPrivate?: boolean;
  /** Registration backoff: first and largest delay (default 1,000 and 60,000). */
  registerMinMs?: number;
  registerMaxMs?: number;
  log?: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void; error(obj: object, msg?: string): void };
}

/** Where the carrier stands, for /readyz: registering its webhooks (or again, after losing the phone), ready, or stopped. */
export type AndroidState = 'connecting' | 'ready' | 'stopped';

/** The Android phone carrier: a Carrier, plus what the wiring and /readyz need. */
export interface AndroidCarrier extends Carrier {
  /** `{publicUrl}/v1/carriers/{name}/events`: where the phone posts its events. */
  readonly eventsUrl: string;
  state(): AndroidState;
}

/** A non-2xx answer of the phone. The message says only the status (never a body, a header or a credential). */
export class AndroidHttpError extends Error {
  constructor(readonly status: number) {
    super(`the phone answered HTTP ${status}`);
    this.name = 'AndroidHttpError';
  }
}

/** No answer: `code` is ANDROID_TIMEOUT or ANDROID_UNREACHABLE (refused, reset, DNS, a refused address). */
export class AndroidTransportError extends Error {
  constructor(
    readonly code: typeof ANDROID_TIMEOUT | typeof ANDROID_UNREACHABLE,
    detail: string,
  ) {
    super(`the phone could not be reached (${detail})`);
    this.name = 'AndroidTransportError';
  }
}

const noLog = { info() {}, warn() {}, error() {} };
/** Largest reply read from the phone (a message state or a webhook list is a few KB). */
const MAX_REPLY_BYTES = 1 << 20;

/**
 * The HTTP adapter the app's Client calls: JSON in and out over node:http/https, each request
 * bounded by `timeoutMs`, the SSRF guard at connect time unless `allowPrivate`. A 2xx resolves
 * with the parsed JSON reply (undefined when empty or not JSON); anything else rejects with
 * AndroidHttpError (any other status) or AndroidTransportError (no answer).
 */
export function createAndroidHttpClient(options: {
  timeoutMs: number;
  allowPrivate: boolean;
  maxSockets: number;
}): HttpClient & { destroy(): void } {
  const lookup = guardedLookup(options.allowPrivate) as unknown as http.AgentOptions['lookup'];
  const agents = {
    http: new http.Agent({ keepAlive: true, maxSockets: options.maxSockets, lookup }),
    https: new https.Agent({ keepAlive: true, maxSockets: options.maxSockets, lookup }),
  };
  const request = <T>(method: string, target: string, body: unknown, headers: Record<string, string> = {}): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      let url: URL;
      try {
        url = new URL(target);
      } catch {
        return reject(new AndroidTransportError(ANDROID_UNREACHABLE, 'bad URL'));
      }
      const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
      // A literal address never goes through the lookup: it is checked here.
      if (!options.allowPrivate && isIP(host) !== 0 && isForbiddenAddress(host)) {
        return reject(new AndroidTransportError(ANDROID_UNREACHABLE, 'address not allowed'));
      }
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body), 'utf8');
      const secure = url.protocol === 'https:';
      const req = (secure ? https : http).request(url, {
        method,
        agent: secure ? agents.https : agents.http,
        headers: { Accept: 'application/json', ...headers, ...(payload ? { 'Content-Length': String(payload.length) } : {}) },
      });
      let settled = false;
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.destroy();
        reject(err);
      };
      const timer = setTimeout(
        () => fail(new AndroidTransportError(ANDROID_TIMEOUT, `no answer within ${options.timeoutMs} ms`)),
        options.timeoutMs,
      );
      req.on('error', (err: NodeJS.ErrnoException) => {
        const detail = err.code === 'EWEBHOOKFORBIDDEN' ? 'address not allowed' : (err.code ?? 'connection error');
        fail(new AndroidTransportError(ANDROID_UNREACHABLE, detail));
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_REPLY_BYTES) fail(new AndroidTransportError(ANDROID_UNREACHABLE, 'reply too large'));
          else chunks.push(c);
        });
        res.on('error', () => fail(new AndroidTransportError(ANDROID_UNREACHABLE, 'reply cut')));
        res.on('aborted', () => fail(new AndroidTransportError(ANDROID_UNREACHABLE, 'reply cut')));
        res.on('end', () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          const status = res.statusCode ?? 0;
          if (status < 200 || status > 299) return reject(new AndroidHttpError(status));
          const text = Buffer.concat(chunks).toString('utf8');
          let value: unknown;
          try {
            value = text === '' ? undefined : JSON.parse(text);
          } catch {
            value = undefined;
          }
          resolve(value as T);
        });
      });
      req.end(payload);
    });
  return {
    get: (url, headers) => request('GET', url, undefined, headers),
    post: (url, body, headers) => request('POST', url, body, headers),
    put: (url, body, headers) => request('PUT', url, body, headers),
    patch: (url, body, headers) => request('PATCH', url, body, headers),
    delete: (url, headers) => request('DELETE', url, undefined, headers),
    destroy() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

/** The id a message has on the phone: ours, so that sending it again is recognised (409). */
export function androidMessageId(messageId: number): string {
  return `msgsvc-${messageId}`;
}

/** The id of our webhook for `event` on the phone: stable, so registering again replaces it. */
export function androidWebhookId(carrierName: string, event: string): string {
  return `msgsvc-${carrierName}-${event.replace(/[^a-z0-9]+/gi, '-')}`;
}

/** `{publicUrl}/v1/carriers/{name}/events` (publicUrl's trailing slashes dropped). */
export function androidEventsUrl(publicUrl: string, carrierName: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/v1/carriers/${encodeURIComponent(carrierName)}/events`;
}

/** A message's state as the app answers it (the client's MessageState, and what v1.58+ adds). */
interface PhoneMessage {
  id?: string;
  recipients?: { phoneNumber?: string }[];
  textMessage?: { text?: string } | null;
}

class AndroidCarrierImpl implements AndroidCarrier {
  readonly name: string;
  readonly supportsMms = false;
  readonly window: number;
  readonly eventsUrl: string;
  private readonly http: ReturnType<typeof createAndroidHttpClient>;
  private readonly client: Client;
  private readonly bucket: TokenBucket;
  private readonly log: NonNullable<AndroidCarrierOptions['log']>;
  private readonly minMs: number;
  private readonly maxMs: number;
  private current: AndroidState = 'connecting';
  private connecting: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private running = 0;
  private idle: (() => void)[] = [];

  constructor(o: AndroidCarrierOptions) {
    let base: URL;
    try {
      base = new URL(o.baseUrl);
    } catch {
      throw new Error(`android carrier ${o.name}: baseUrl is not a URL`);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:')
      throw new Error(`android carrier ${o.name}: baseUrl must be http:// or https://`);
    if (base.username || base.password) throw new Error(`android carrier ${o.name}: baseUrl must not carry credentials`);
    this.name = o.name;
    this.window = o.window;
    this.eventsUrl = androidEventsUrl(o.publicUrl, o.name);
    this.http = createAndroidHttpClient({
      timeoutMs: o.timeoutMs ?? 10_000,
      allowPrivate: o.allowPrivate ?? true,
      maxSockets: Math.max(1, o.window) + 1,
    });
    this.client = new Client(o.username, o.password, this.http, base.origin + base.pathname.replace(/\/+$/, ''));
    this.bucket = new TokenBucket(o.rate);
    this.log = o.log ?? noLog;
    this.minMs = o.registerMinMs ?? 1_000;
    this.maxMs = o.registerMaxMs ?? 60_000;
    if (!/^https:\/\//i.test(this.eventsUrl) && !/^http:\/\/127\.0\.0\.1[:/]/.test(this.eventsUrl)) {
      this.log.warn(
        { carrier: o.name },
        'android carrier: the app accepts only https:// webhook URLs (or http://127.0.0.1); registration will be refused',
      );
    }
  }

  state(): AndroidState {
    return this.current;
  }

  private stopped(): boolean {
    return this.current === 'stopped';
  }

  ready(): boolean {
    return this.current === 'ready';
  }

  /**
   * Registers the webhooks (one attempt, awaited); when that fails the carrier stays not ready and
   * keeps trying in the background. Never throws for an unreachable or refusing phone.
   */
  async start(_sink: CarrierSink): Promise<void> {
    // Events reach msgsvc over HTTP (the events route), not through the sink.
    this.current = 'connecting';
    await this.reconnect(true);
  }

  async stop(): Promise<void> {
    this.current = 'stopped';
    this.wake?.();
    await this.connecting;
    while (this.running > 0) await new Promise<void>((r) => this.idle.push(r));
    this.http.destroy();
  }

  /** Starts the registration loop unless one runs; `firstOnly` resolves after its first attempt. */
  private reconnect(firstOnly = false): Promise<void> {
    if (!this.connecting) {
      let first!: () => void;
      const firstDone = new Promise<void>((r) => (first = r));
      this.connecting = this.registerLoop(first).finally(() => {
        this.connecting = undefined;
        first();
      });
      return firstOnly ? firstDone : this.connecting;
    }
    return firstOnly ? Promise.resolve() : this.connecting;
  }

  private async registerLoop(firstDone: () => void): Promise<void> {
    for (let n = 0; !this.stopped(); n++) {
      try {
        await this.register();
        if (!this.stopped()) {
          this.current = 'ready';
          this.log.info({ carrier: this.name }, 'android carrier: webhooks registered, ready');
        }
        return;
      } catch (err) {
        const delay = Math.round(Math.min(this.maxMs, this.minMs * 2 ** Math.min(n, 20)) * (0.5 + Math.random() / 2));
        this.log.warn(
          { carrier: this.name, error: describe(err), retryInMs: delay },
          'android carrier: webhook registration failed; not ready',
        );
        firstDone();
        if (this.stopped()) return;
        await new Promise<void>((r) => {
          const t = setTimeout(r, delay);
          this.wake = () => {
            clearTimeout(t);
            r();
          };
        });
        this.wake = undefined;
      }
    }
  }

  /** GET the phone's webhooks, delete the stale ones pointing at us, POST ours (unless already there as they should be). */
  private async register(): Promise<void> {
    const ours = new Map(ANDROID_EVENTS.map((e) => [androidWebhookId(this.name, e), e] as const));
    const prefix = androidWebhookId(this.name, '');
    const listed = await this.client.getWebhooks();
    const existing = Array.isArray(listed) ? listed : [];
    for (const w of existing) {
      const id = typeof w?.id === 'string' ? w.id : '';
      // Only plain ids go into a path (the client does not encode them; the app's own are nanoids).
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(id) || ours.has(id)) continue;
      if (id.startsWith(prefix) || w.url === this.eventsUrl) await this.client.deleteWebhook(id);
    }
    for (const [id, event] of ours) {
      const same = existing.some((w: WebHook) => w?.id === id && w.url === this.eventsUrl && w.event === event);
      if (!same) await this.client.registerWebhook({ id, url: this.eventsUrl, event });
    }
  }

  /** The phone is gone (or refuses us): not ready until registered again. */
  private lost(): void {
    if (this.current !== 'ready') return;
    this.current = 'connecting';
    this.log.warn({ carrier: this.name }, 'android carrier: phone unreachable; not ready');
    void this.reconnect();
  }

  async submit(message: OutboundMessage): Promise<SubmitResult> {
    if (message.typeId === 2) return { kind: 'failed', errorCode: NO_MMS_ROUTE };
    if (this.current !== 'ready') return { kind: 'retry', errorCode: ANDROID_NOT_READY };
    this.running++;
    try {
      await this.bucket.take();
      return await this.send(message);
    } finally {
      if (--this.running === 0) for (const r of this.idle.splice(0)) r();
    }
  }

  private async send(message: OutboundMessage): Promise<SubmitResult> {
    const id = androidMessageId(message.id);
    const shortCode = /^[0-9]{3,8}$/.test(message.to);
    try {
      const reply = (await this.client.send(
        { id, message: message.text, phoneNumbers: [shortCode ? message.to : `+${message.to}`], withDeliveryReport: true },
        shortCode ? { skipPhoneValidation: true } : undefined,
      )) as PhoneMessage | undefined;
      return { kind: 'accepted', carrierMessageId: typeof reply?.id === 'string' && reply.id !== '' ? reply.id : id };
    } catch (err) {
      if (err instanceof AndroidHttpError && err.status === 409) return this.confirmHeld(message, id);
      return this.outcome(err);
    }
  }

  /** A 409: the phone holds a message under our id. Ours (same number, same text when shown) → accepted; another's → failed. */
  private async confirmHeld(message: OutboundMessage, id: string): Promise<SubmitResult> {
    try {
      const held = (await this.client.getState(id)) as unknown as PhoneMessage | undefined;
      const numbers = (held?.recipients ?? []).map((r) => (typeof r?.phoneNumber === 'string' ? r.phoneNumber.replace(/\D/g, '') : ''));
      const text = held?.textMessage?.text;
      if (numbers.includes(message.to) && (typeof text !== 'string' || text === message.text)) {
        return { kind: 'accepted', carrierMessageId: typeof held?.id === 'string' && held.id !== '' ? held.id : id };
      }
      this.log.warn({ carrier: this.name, messageId: message.id }, 'android carrier: the phone holds another message under this id');
      return { kind: 'failed', errorCode: 'ANDROID_409' };
    } catch (err) {
      return this.outcome(err);
    }
  }

  /** A failed request as a SubmitResult (file comment). */
  private outcome(err: unknown): SubmitResult {
    if (err instanceof AndroidHttpError) {
      const code = `ANDROID_${err.status}`;
      if (err.status === 401 || err.status === 403) {
        this.log.error({ carrier: this.name, status: err.status }, 'android carrier: the phone refuses our credentials');
        this.lost();
        return { kind: 'retry', errorCode: code };
      }
      if (err.status === 429 || err.status >= 500 || err.status < 400) return { kind: 'retry', errorCode: code };
      return { kind: 'failed', errorCode: code };
    }
    if (err instanceof AndroidTransportError) {
      this.lost();
      return { kind: 'retry', errorCode: err.code };
    }
    return { kind: 'retry', errorCode: ANDROID_UNREACHABLE };
  }
}

/** A short, secret-free description of a failure, for logs. */
function describe(err: unknown): string {
  if (err instanceof AndroidHttpError || err instanceof AndroidTransportError) return err.message;
  return err instanceof Error ? err.name : 'error';
}

/**
 * Builds the Android phone carrier (file comment); nothing is sent before start().
 * @throws Error when `baseUrl` is not http(s) or carries credentials (the message names the
 *   carrier, never a secret), RangeError for a rate that is not a positive number.
 */
export function createAndroidCarrier(options: AndroidCarrierOptions): AndroidCarrier {
  return new AndroidCarrierImpl(options);
}
