/**
 * The SMPP 3.4 carrier (API.md §11.4): msgsvc as an ESME bound as a transceiver to one
 * SMSC, configured by MSGSVC_SMPP_URL (`smpp://system_id:password@host:port`, `smpps://` for TLS),
 * MSGSVC_SMPP_RATE, MSGSVC_SMPP_WINDOW, MSGSVC_SMPP_TIMEOUT_MS and MSGSVC_SMPP_ENQUIRE_MS.
 *
 * LIBRARY DECISION: our own codec (smpp-codec.ts, ~480 lines with comments) and session
 * (smpp-session.ts, ~240 lines), not npm `smpp` 0.5.1. Weighed by what we write either way: what
 * that package would have given us is the PDU codec, the smallest and most mechanical part (the
 * bodies of the 6 PDUs we use, TLVs, framing: about 300 lines of code here, written and tested in
 * under an hour). Everything the issue asks beyond the codec — the window, the per-PDU response timeout,
 * reconnect with backoff and jitter, the rate limit, throttling backoff, receipts and
 * concatenation — that package does not do, so a wrapper would have been this same code plus an
 * untyped, unmaintained dependency whose event-emitter session owns the socket (its reconnect
 * and timeout semantics would have had to be worked around rather than written), and which sends
 * GSM text as IA5 unless told otherwise. Owning the bytes also makes the encoding explicit and
 * testable: data_coding 0 with GSM 03.38 septets one per octet (unpacked, the SMPP convention that
 * Kannel, Jasmin and most SMSCs use; the SMSC packs them for the air interface), data_coding 8
 * UTF-16BE, and the concatenation UDH `05 00 03 ref total seq`. Interoperability is not taken on
 * trust: every test runs against an SMSC built on Perl's Net::SMPP, an independent codec
 * (test/smsc/fake-smsc.pl).
 *
 * How it works:
 * - Bind: one transceiver session; enquire_link every MSGSVC_SMPP_ENQUIRE_MS (unanswered within
 *   the timeout: the connection is dropped); on any loss, reconnect after
 *   min(30 s, 250 ms × 2^n) × (0.5 + random/2) (exponential backoff, "equal jitter"), n reset by a
 *   successful bind.
 * - Flow control: at most `window` submit_sm awaiting their response, at most `rate` submit_sm PDUs
 *   per second (token bucket, 50 ms of burst), each response awaited at most `timeoutMs`.
 * - Outcomes (SubmitResult): every part answered ESME_ROK → accepted, carrier id = the first
 *   part's message_id. ESME_RTHROTTLED / ESME_RMSGQFUL → all submits pause (backoff 100 ms × 2^n
 *   with jitter, at most 10 s) and the part is sent again; after `throttleBudgetMs` of throttling,
 *   the message goes back to the dispatcher as `retry`. ESME_RINVBNDSTS → the session is re-bound
 *   and the message retried. Any other status → `failed` with the status name as ErrorCode
 *   (ESME_RINVDSTADR, …; the dispatcher refunds). A response timeout or a lost connection →
 *   `retry` (the outcome is unknown: the SMSC may have taken it, so it may go twice; at most one
 *   window per loss, see docs/RELIABILITY.md). Not bound → waits up to `bindWaitMs`, then `retry`.
 *   An MMS → `failed` NO_MMS_ROUTE (the dispatcher already ends it so, since supportsMms is false).
 * - Receipts: a deliver_sm whose esm_class says receipt (type 0x04, or 0x20 intermediate) is
 *   matched by its receipted_message_id TLV and by the `id:` of its text; DELIVRD → Delivered,
 *   EXPIRED/DELETED/UNDELIV/UNKNOWN/REJECTD → Undelivered with ErrorCode `STAT` or `STAT:err`
 *   (when err is not zero); ENROUTE/ACCEPTD are ignored. The parts of a long text share one
 *   message: the segment ids → message map (in memory, bounded) waits for every part's receipt
 *   (Delivered when all are delivered) except that the first undelivered part decides at once.
 *   After a restart the map is gone, and the first part's receipt (its id is the message's
 *   carrier id) decides alone. A receipt that arrives before the dispatcher has committed the
 *   Sent (the SMSC can be faster than our transaction) is held and applied again, with backoff,
 *   for up to `receiptHoldMs`: `receiptLanded` tells whether it has taken effect.
 * - Inbound: any other deliver_sm is an inbound text for API.md §11.5; the parts of a concatenated text
 *   (UDH IEI 0x00 or 0x08, or the sar_* TLVs) are held (in memory, up to `inboundPartsMs`) and
 *   joined before API.md §11.5 sees them. The deliver_sm_resp is sent once the sink has recorded it; a sink
 *   error answers ESME_RX_T_APPN, so the SMSC delivers it again later.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type tls from 'node:tls';
import { TokenBucket } from '../lib/token-bucket.ts';
import type { Carrier, CarrierSink, OutboundMessage, Receipt, SubmitResult } from './carrier.ts';
import {
  CMD,
  ESM,
  STATUS,
  TAG,
  decodeMessageId,
  decodeShortMessage,
  decodeText,
  encodeMessageId,
  encodeShortMessage,
  encodeText,
  parseReceipt,
  receiptOutcome,
  splitUdh,
  statusName,
  type Concatenation,
  type Pdu,
  type ShortMessage,
} from './smpp-codec.ts';
import { SmppClosedError, SmppTimeoutError, openSession, type SmppSession } from './smpp-session.ts';
import { parseSmppUrl, redactSmppUrl, type SmppUrl } from '../lib/smpp-url.ts';

export { parseSmppUrl, type SmppUrl } from '../lib/smpp-url.ts';

/** ErrorCode of an MMS on SMPP (API.md §11.4). */
export const NO_MMS_ROUTE = 'NO_MMS_ROUTE';
/** Retry ErrorCodes (never final unless the attempts run out). */
export const SMPP_NOT_BOUND = 'SMPP_NOT_BOUND';
export const SMPP_TIMEOUT = 'SMPP_TIMEOUT';
export const SMPP_CONNECTION_LOST = 'SMPP_CONNECTION_LOST';

/** How the carrier is set up. Times in milliseconds. */
export interface SmppCarrierOptions {
  /** MSGSVC_SMPP_URL. */
  url: string;
  /** submit_sm PDUs per second (MSGSVC_SMPP_RATE). */
  rate: number;
  /** submit_sm awaiting their response at most (MSGSVC_SMPP_WINDOW). */
  window: number;
  /** Response timeout per PDU, also for connect and bind (MSGSVC_SMPP_TIMEOUT_MS). */
  timeoutMs: number;
  /** enquire_link period (MSGSVC_SMPP_ENQUIRE_MS; 0 = never). */
  enquireMs: number;
  /** Extra TLS options for smpps:// (e.g. `{ ca }`; default: the system's CAs and NODE_EXTRA_CA_CERTS). */
  tls?: tls.ConnectionOptions;
  /** system_type in the bind (default ''). */
  systemType?: string;
  /** Reconnect backoff: first and largest delay (default 250 and 30,000). */
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  /** Throttling backoff: first and largest pause (default 100 and 10,000). */
  throttleMinMs?: number;
  throttleMaxMs?: number;
  /** How long one submit keeps retrying a throttled part before handing it back as `retry` (default 30,000). */
  throttleBudgetMs?: number;
  /** How long a submit waits for a bind before handing the message back as `retry` (default 10,000). */
  bindWaitMs?: number;
  /**
   * Whether a pushed receipt has taken effect: true when the message with this carrier id exists
   * and is no longer Sent. Without it receipts are applied once (no hold). createDispatcher wires it
   * to the store (src/store/repositories/smpp.ts).
   */
  receiptLanded?: (carrierMessageId: string) => Promise<boolean>;
  /** How long an early receipt is held and applied again (default 30,000). */
  receiptHoldMs?: number;
  /** How long the parts of an inbound concatenated text wait for the rest (default 600,000). */
  inboundPartsMs?: number;
  /** Largest number of segment ids remembered for long texts' receipts (default 200,000). */
  segmentMapSize?: number;
  log?: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void; error(obj: object, msg?: string): void };
}

/** Bind state, for /readyz. */
export type SmppState = 'connecting' | 'bound' | 'disconnected' | 'stopped';

/** Counters kept for metrics (monotonic since start). */
export interface SmppCounters {
  /** submit_sm PDUs sent (one per part; retries included). */
  submits: number;
  /** Messages handed to submit(). */
  messages: number;
  /** submit_sm_resp by command status name (`ESME_ROK`, `ESME_RTHROTTLED`, …). */
  responses: Record<string, number>;
  /** submit_sm without a response in time. */
  timeouts: number;
  /** Receipts received (deliver_sm with a receipt esm_class), intermediate ones included. */
  receipts: number;
  /** Receipts that had to be held because the Sent was not committed yet. */
  receiptsHeld: number;
  /** Receipts that never matched a message within the hold. */
  receiptsUnmatched: number;
  /** Inbound texts delivered to the sink (a concatenated text counts once). */
  inbound: number;
  /** Inbound concatenated texts dropped because a part never came. */
  inboundIncomplete: number;
  /** Successful binds. */
  binds: number;
  /** Reconnect attempts (after a loss or a failed attempt). */
  reconnects: number;
}

/** A snapshot of the carrier for /readyz and logs. */
export interface SmppStatus {
  state: SmppState;
  /** Whether a transceiver bind is up. */
  bound: boolean;
  /** `smpp://host:port` (no credentials). */
  url: string;
  /** Epoch ms of the last state change. */
  since: number;
  /** Why the last connection or attempt ended, if it did. */
  lastError: string | undefined;
  /** submit_sm awaiting their response. */
  inFlight: number;
  /** Receipts held until their Sent is committed. */
  heldReceipts: number;
  counters: SmppCounters;
}

/** The SMPP carrier: a Carrier with its bind state and counters. */
export interface SmppCarrier extends Carrier {
  /** Bound: submits can go. */
  ready(): boolean;
  /** The bind state and counters (for /readyz; cheap, synchronous). */
  status(): SmppStatus;
}

/** A long text's parts, for its receipts. */
interface SegmentGroup {
  /** The message's carrier id (the first part's message_id). */
  messageId: string;
  parts: number;
  /** Part ids that reported Delivered. */
  delivered: Set<string>;
  done: boolean;
}

/** An inbound concatenated text being put together. */
interface InboundParts {
  parts: Map<number, Buffer>;
  total: number;
  dataCoding: number;
  timer: NodeJS.Timeout;
}

/** An SMPP address as msgsvc writes numbers: digits for a phone number (`+`, spaces, dashes dropped); an alphanumeric sender as it is. */
function address(raw: string): string {
  return /^\+?[\d\s-]+$/.test(raw) ? raw.replace(/\D/g, '') : raw.trim();
}

const THROTTLE_STATUSES = new Set<number>([STATUS.ESME_RTHROTTLED, STATUS.ESME_RMSGQFUL]);
const noLog = { info() {}, warn() {}, error() {} };

/**
 * Creates the SMPP carrier (not connected: the dispatcher's `start(sink)` binds it). See the file
 * comment for its behaviour.
 * @throws Error when `options.url` is not a valid smpp:// or smpps:// URL.
 */
export function createSmppCarrier(options: SmppCarrierOptions): SmppCarrier {
  return new SmppCarrierImpl(options);
}

class SmppCarrierImpl implements SmppCarrier {
  readonly name: string;
  readonly supportsMms = false;
  readonly window: number;
  private readonly url: SmppUrl;
  private readonly log: NonNullable<SmppCarrierOptions['log']>;
  private readonly o: Required<Omit<SmppCarrierOptions, 'tls' | 'systemType' | 'receiptLanded' | 'log'>> &
    Pick<SmppCarrierOptions, 'tls' | 'systemType' | 'receiptLanded'>;

  private sink: CarrierSink | undefined;
  private session: SmppSession | undefined;
  private state: SmppState = 'disconnected';
  private since = Date.now();
  private lastError: string | undefined;
  private loop: Promise<void> | undefined;
  private stopped = false;
  private wakeLoop: (() => void) | undefined;
  private bindWaiters = new Set<() => void>();

  // Flow control.
  private inFlight = 0;
  private windowWaiters: (() => void)[] = [];
  private readonly bucket: TokenBucket;
  private pausedUntil = 0;
  private throttleStreak = 0;
  private reference = Math.floor(Math.random() * 256);
  private submitsRunning = 0;
  private submitsIdle: (() => void)[] = [];

  // Receipts and inbound.
  private readonly segments = new Map<string, SegmentGroup>();
  private readonly held = new Set<NodeJS.Timeout>();
  private readonly inboundParts = new Map<string, InboundParts>();

  private readonly counters: SmppCounters = {
    submits: 0,
    messages: 0,
    responses: {},
    timeouts: 0,
    receipts: 0,
    receiptsHeld: 0,
    receiptsUnmatched: 0,
    inbound: 0,
    inboundIncomplete: 0,
    binds: 0,
    reconnects: 0,
  };

  constructor(options: SmppCarrierOptions) {
    this.url = parseSmppUrl(options.url);
    this.name = redactSmppUrl(this.url);
    this.window = Math.max(1, options.window);
    this.log = options.log ?? noLog;
    this.o = {
      reconnectMinMs: 250,
      reconnectMaxMs: 30_000,
      throttleMinMs: 100,
      throttleMaxMs: 10_000,
      throttleBudgetMs: 30_000,
      bindWaitMs: 10_000,
      receiptHoldMs: 30_000,
      inboundPartsMs: 600_000,
      segmentMapSize: 200_000,
      ...options,
    };
    this.bucket = new TokenBucket(this.o.rate);
  }

  /** Bound: submits can go (the dispatcher claims nothing otherwise, see Carrier.ready). */
  ready(): boolean {
    return this.state === 'bound';
  }

  status(): SmppStatus {
    return {
      state: this.state,
      bound: this.state === 'bound',
      url: this.name,
      since: this.since,
      lastError: this.lastError,
      inFlight: this.inFlight,
      heldReceipts: this.held.size,
      counters: { ...this.counters, responses: { ...this.counters.responses } },
    };
  }

  /** Starts the bind loop; resolves after the first attempt (bound or not: it keeps trying in the background). */
  async start(sink: CarrierSink): Promise<void> {
    this.sink = sink;
    if (this.loop) return;
    this.stopped = false;
    let firstAttempt!: () => void;
    const attempted = new Promise<void>((r) => (firstAttempt = r));
    this.loop = this.run(firstAttempt);
    await attempted;
  }

  /** Waits (at most the timeout) for submits in progress, unbinds, and stops reconnecting. Held receipts are dropped. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.submitsRunning > 0) {
      await Promise.race([new Promise<void>((r) => this.submitsIdle.push(r)), sleep(this.o.timeoutMs, undefined, { ref: false })]);
    }
    this.wakeLoop?.();
    for (const wake of this.bindWaiters) wake();
    for (const t of this.held) clearTimeout(t);
    this.held.clear();
    for (const p of this.inboundParts.values()) clearTimeout(p.timer);
    this.inboundParts.clear();
    await this.session?.close();
    await this.loop;
    this.loop = undefined;
    this.setState('stopped');
  }

  private setState(state: SmppState, error?: string): void {
    if (error !== undefined) this.lastError = error;
    if (this.state !== state) {
      this.state = state;
      this.since = Date.now();
    }
  }

  // ---------------------------------------------------------------- bind loop

  private async run(firstAttempt: () => void): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      this.setState('connecting');
      try {
        const session = await openSession({
          host: this.url.host,
          port: this.url.port,
          tls: this.url.tls,
          ...(this.o.tls ? { tlsOptions: this.o.tls } : {}),
          systemId: this.url.systemId,
          password: this.url.password,
          ...(this.o.systemType ? { systemType: this.o.systemType } : {}),
          timeoutMs: this.o.timeoutMs,
          enquireMs: this.o.enquireMs,
          onRequest: (s, pdu) => this.onRequest(s, pdu),
        });
        if (this.stopped) {
          await session.close();
          break;
        }
        this.session = session;
        this.counters.binds++;
        failures = 0;
        this.setState('bound');
        this.log.info({ carrier: this.name }, 'smpp: bound as transceiver');
        for (const wake of this.bindWaiters) wake();
        firstAttempt();
        const err = await session.closed;
        this.session = undefined;
        if (this.stopped) break;
        this.setState('disconnected', err?.message ?? 'closed');
        this.log.warn({ carrier: this.name, err: err?.message }, 'smpp: connection lost; reconnecting');
      } catch (err) {
        this.setState('disconnected', (err as Error).message);
        this.log.warn({ carrier: this.name, err: (err as Error).message }, 'smpp: connect or bind failed');
        firstAttempt();
      }
      if (this.stopped) break;
      const delay = Math.min(this.o.reconnectMaxMs, this.o.reconnectMinMs * 2 ** Math.min(failures, 20)) * (0.5 + Math.random() / 2);
      failures++;
      this.counters.reconnects++;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, delay);
        this.wakeLoop = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wakeLoop = undefined;
    }
    this.session = undefined;
    firstAttempt();
  }

  /** The bound session, waiting up to `ms` for one. */
  private async boundSession(ms: number): Promise<SmppSession | undefined> {
    if (this.session?.open) return this.session;
    if (this.stopped) return undefined;
    let wake!: () => void;
    const woken = new Promise<void>((r) => (wake = r));
    this.bindWaiters.add(wake);
    const timer = setTimeout(wake, ms);
    try {
      await woken;
    } finally {
      clearTimeout(timer);
      this.bindWaiters.delete(wake);
    }
    return this.session?.open ? this.session : undefined;
  }

  // ---------------------------------------------------------------- flow control

  /** Waits for a rate token (in order of arrival; src/lib/token-bucket.ts, 50 ms of burst). */
  private takeToken(): Promise<void> {
    return this.bucket.take();
  }

  private async acquireWindow(): Promise<void> {
    while (this.inFlight >= this.window) await new Promise<void>((r) => this.windowWaiters.push(r));
    this.inFlight++;
  }

  private releaseWindow(): void {
    this.inFlight--;
    this.windowWaiters.shift()?.();
  }

  /** Jittered exponential delay: min(max, base × 2^n) × (0.5 + random/2). */
  private static backoff(base: number, max: number, n: number): number {
    return Math.round(Math.min(max, base * 2 ** Math.min(n, 20)) * (0.5 + Math.random() / 2));
  }

  // ---------------------------------------------------------------- submit

  async submit(message: OutboundMessage): Promise<SubmitResult> {
    if (message.typeId === 2) return { kind: 'failed', errorCode: NO_MMS_ROUTE };
    this.counters.messages++;
    this.submitsRunning++;
    try {
      return await this.submitText(message);
    } finally {
      if (--this.submitsRunning === 0) for (const r of this.submitsIdle.splice(0)) r();
    }
  }

  private async submitText(message: OutboundMessage): Promise<SubmitResult> {
    this.reference = (this.reference + 1) & 0xff;
    const text = encodeText(message.text, this.reference);
    const international = message.to.length > 8;
    const ids: string[] = [];
    // A long text's parts are remembered as each is accepted, so that a receipt racing the next part's response still finds them.
    const group: SegmentGroup | undefined =
      text.parts.length > 1 ? { messageId: '', parts: text.parts.length, delivered: new Set(), done: false } : undefined;
    for (const part of text.parts) {
      const body = encodeShortMessage({
        serviceType: '',
        // A long number as international/ISDN; a short code as unknown TON, ISDN plan.
        sourceTon: message.from.length > 8 ? 1 : 0,
        sourceNpi: 1,
        source: message.from,
        destTon: international ? 1 : 0,
        destNpi: 1,
        dest: message.to,
        esmClass: text.esmClass,
        protocolId: 0,
        priority: 0,
        scheduleDeliveryTime: '',
        validityPeriod: '',
        registeredDelivery: 1,
        replaceIfPresent: 0,
        dataCoding: text.dataCoding,
        smDefaultMsgId: 0,
        shortMessage: part,
      });
      const started = Date.now();
      for (;;) {
        const outcome = await this.submitPart(body);
        if (outcome.kind === 'ok') {
          ids.push(outcome.messageId);
          if (group) this.rememberSegment(outcome.messageId, group);
          break;
        }
        if (outcome.kind === 'result') return outcome.result;
        // Throttled: pause everyone, then send this part again (or hand it back).
        const pause = SmppCarrierImpl.backoff(this.o.throttleMinMs, this.o.throttleMaxMs, this.throttleStreak++);
        this.pausedUntil = Math.max(this.pausedUntil, Date.now() + pause);
        if (Date.now() - started + pause > this.o.throttleBudgetMs) return { kind: 'retry', errorCode: outcome.errorCode, afterMs: pause };
      }
    }
    return { kind: 'accepted', carrierMessageId: ids[0]! };
  }

  /** One submit_sm through the gates (bind, throttle pause, rate, window). */
  private async submitPart(
    body: Buffer,
  ): Promise<{ kind: 'ok'; messageId: string } | { kind: 'throttled'; errorCode: string } | { kind: 'result'; result: SubmitResult }> {
    const session = await this.boundSession(this.o.bindWaitMs);
    if (!session) return { kind: 'result', result: { kind: 'retry', errorCode: SMPP_NOT_BOUND, afterMs: 1000 } };
    const wait = this.pausedUntil - Date.now();
    if (wait > 0) await sleep(wait);
    await this.acquireWindow();
    let resp: Pdu;
    try {
      await this.takeToken();
      this.counters.submits++;
      resp = await session.request(CMD.submit_sm, body);
    } catch (err) {
      if (err instanceof SmppTimeoutError) {
        this.counters.timeouts++;
        return { kind: 'result', result: { kind: 'retry', errorCode: SMPP_TIMEOUT } };
      }
      if (err instanceof SmppClosedError) return { kind: 'result', result: { kind: 'retry', errorCode: SMPP_CONNECTION_LOST } };
      throw err;
    } finally {
      this.releaseWindow();
    }
    const name = statusName(resp.status);
    this.counters.responses[name] = (this.counters.responses[name] ?? 0) + 1;
    if (resp.status === STATUS.ESME_ROK && resp.commandId !== CMD.generic_nack) {
      this.throttleStreak = 0;
      const messageId = decodeMessageId(resp.body);
      if (messageId) return { kind: 'ok', messageId };
      return { kind: 'result', result: { kind: 'failed', errorCode: 'SMPP_NO_MESSAGE_ID' } };
    }
    if (THROTTLE_STATUSES.has(resp.status)) return { kind: 'throttled', errorCode: name };
    if (resp.status === STATUS.ESME_RINVBNDSTS) {
      session.destroy(new Error('SMSC answered ESME_RINVBNDSTS: binding again'));
      return { kind: 'result', result: { kind: 'retry', errorCode: name } };
    }
    return { kind: 'result', result: { kind: 'failed', errorCode: name } };
  }

  /** Remembers one accepted part of a long text (bounded: the oldest ids are forgotten first). The first part's id is the message's. */
  private rememberSegment(id: string, group: SegmentGroup): void {
    if (!group.messageId) group.messageId = id;
    this.segments.set(id, group);
    while (this.segments.size > this.o.segmentMapSize) {
      const oldest = this.segments.keys().next().value as string;
      this.segments.delete(oldest);
    }
  }

  // ---------------------------------------------------------------- receipts and inbound

  private onRequest(session: SmppSession, pdu: Pdu): void {
    if (pdu.commandId !== CMD.deliver_sm) {
      session.respond(pdu, STATUS.ESME_RINVCMDID);
      return;
    }
    let sm: ShortMessage;
    try {
      sm = decodeShortMessage(pdu.body);
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'smpp: undecodable deliver_sm');
      session.respond(pdu, STATUS.ESME_RSYSERR, encodeMessageId(''));
      return;
    }
    const type = sm.esmClass & ESM.TYPE_MASK;
    const done = (ok: boolean) => session.respond(pdu, ok ? STATUS.ESME_ROK : STATUS.ESME_RX_T_APPN, encodeMessageId(''));
    const work = type === ESM.DELIVERY_RECEIPT || type === 0x20 ? this.onReceipt(sm) : this.onInbound(sm);
    work.then(
      () => done(true),
      (err: unknown) => {
        this.log.error({ err }, 'smpp: could not record a deliver_sm; asking the SMSC to send it again');
        done(false);
      },
    );
  }

  private async onReceipt(sm: ShortMessage): Promise<void> {
    this.counters.receipts++;
    // The submit_sm_resp read just before this receipt (same chunk) has resolved its promise, but
    // the submit's continuation (which records a long text's part id) runs in later microtasks:
    // let it run first, so that the part is known here.
    await new Promise<void>((r) => setImmediate(r));
    const parsed = parseReceipt(sm);
    if (!parsed) {
      this.log.warn({ text: sm.shortMessage.toString('latin1').slice(0, 160) }, 'smpp: receipt without a message id');
      return;
    }
    const outcome = receiptOutcome(parsed.stat);
    if (outcome === 'intermediate') return;
    const errorCode = outcome === 'delivered' ? '' : parsed.err && !/^0+$/.test(parsed.err) ? `${parsed.stat}:${parsed.err}` : parsed.stat;
    const groupId = parsed.ids.find((id) => this.segments.has(id));
    let carrierIds = parsed.ids;
    if (groupId !== undefined) {
      const group = this.segments.get(groupId)!;
      if (group.done) return;
      if (outcome === 'delivered') {
        group.delivered.add(groupId);
        if (group.delivered.size < group.parts) return;
      }
      group.done = true;
      carrierIds = [group.messageId];
    }
    await this.applyReceipt(carrierIds.map((id) => ({ carrierMessageId: id, status: outcome, errorCode })));
  }

  /**
   * Applies a receipt (one entry per id it names: TLV and text ids may differ); when none has taken
   * effect yet (the Sent is not committed), holds it and applies it again with backoff.
   */
  private async applyReceipt(receipts: Receipt[]): Promise<void> {
    const landedAny = async () => {
      for (const r of receipts) if (await this.o.receiptLanded!(r.carrierMessageId)) return true;
      return false;
    };
    for (const r of receipts) await this.sink!.receipt(r);
    if (!this.o.receiptLanded || (await landedAny())) return;
    this.counters.receiptsHeld++;
    const ids = receipts.map((r) => r.carrierMessageId);
    const deadline = Date.now() + this.o.receiptHoldMs;
    const retry = (n: number) => {
      const attempt = async () => {
        this.held.delete(t);
        if (this.stopped) return;
        try {
          for (const r of receipts) await this.sink!.receipt(r);
          if (await landedAny()) return;
        } catch (err) {
          this.log.warn({ err, carrierMessageIds: ids }, 'smpp: applying a held receipt failed');
        }
        if (Date.now() < deadline) retry(n + 1);
        else {
          this.counters.receiptsUnmatched++;
          this.log.warn({ carrierMessageIds: ids }, 'smpp: receipt matched no Sent message; dropped');
        }
      };
      const t = setTimeout(() => void attempt(), Math.min(2000, 50 * 2 ** n));
      t.unref();
      this.held.add(t);
    };
    retry(0);
  }

  private async onInbound(sm: ShortMessage): Promise<void> {
    const from = address(sm.source);
    const to = address(sm.dest);
    let payload = sm.tlvs.get(TAG.message_payload) ?? sm.shortMessage;
    let concat: Concatenation | undefined;
    if (sm.esmClass & ESM.UDHI) ({ concat, payload } = splitUdh(payload));
    const sarRef = sm.tlvs.get(TAG.sar_msg_ref_num);
    const sarTotal = sm.tlvs.get(TAG.sar_total_segments);
    const sarSeq = sm.tlvs.get(TAG.sar_segment_seqnum);
    if (!concat && sarRef && sarRef.length === 2 && sarTotal?.length === 1 && sarSeq?.length === 1) {
      concat = { reference: sarRef.readUInt16BE(0), total: sarTotal[0]!, seq: sarSeq[0]! };
    }
    if (!concat || concat.total <= 1) {
      await this.sink!.inbound({ from, to, text: decodeText(sm.dataCoding, payload) });
      this.counters.inbound++;
      return;
    }
    const key = `${from}|${to}|${concat.reference}|${concat.total}`;
    let entry = this.inboundParts.get(key);
    if (!entry) {
      const timer = setTimeout(() => {
        this.inboundParts.delete(key);
        this.counters.inboundIncomplete++;
        this.log.warn({ from, to, reference: concat.reference }, 'smpp: concatenated inbound text incomplete; dropped');
      }, this.o.inboundPartsMs);
      timer.unref();
      entry = { parts: new Map(), total: concat.total, dataCoding: sm.dataCoding, timer };
      this.inboundParts.set(key, entry);
    }
    entry.parts.set(concat.seq, Buffer.from(payload));
    if (entry.parts.size < entry.total) return;
    const bytes = Buffer.concat([...entry.parts.entries()].sort((a, b) => a[0] - b[0]).map(([, b]) => b));
    // Recorded first, forgotten after: a failure leaves the parts for the SMSC's next try.
    await this.sink!.inbound({ from, to, text: decodeText(entry.dataCoding, bytes) });
    clearTimeout(entry.timer);
    this.inboundParts.delete(key);
    this.counters.inbound++;
  }
}
