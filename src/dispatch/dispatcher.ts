import { randomUUID } from 'node:crypto';
import { PollLoop } from './poll-loop.ts';
import { inTransaction, type Store } from '../store/db.ts';
import * as dispatch from '../store/repositories/dispatch.ts';
import type { ClaimedMessage } from '../store/repositories/dispatch.ts';
import { refundCredits } from '../store/repositories/credits.ts';
import { findTemplate } from '../store/repositories/media.ts';
import { LOG_STATUS, MESSAGE_TYPE_MMS } from '../records/statuses.ts';
import type { MmsTemplateRow } from '../records/media.ts';
import type { Clock } from '../lib/time.ts';
import type { Carrier, CarrierSink, InboundText, OutboundMessage, Receipt, SubmitResult } from './carrier.ts';
import { emitMessageEvents } from '../domain/webhooks.ts';
import { mergeFields } from '../domain/personalise.ts';
import { applyCarrierReceipt, applyMatchedParkedReceipts, applyParkedReceipts } from '../domain/carrier-receipts.ts';
import { createRouter, type Router, type RouteRule } from '../carriers/config.ts';
import { quietCheck, type QuietCheck, type QuietSettings } from '../domain/quiet-hours.ts';
import { findSettingsMany } from '../store/repositories/account-settings.ts';
import type { SmppStatus } from './smpp.ts';
import { createMemorySendCounter, sendWindow, type SendCounter, type SendGrants } from './send-counter.ts';

/**
 * The dispatcher (API.md §11.2): takes queued messages to the carriers and the carriers'
 * receipts back to the log. `msgsvc serve` runs one (unless MSGSVC_DISPATCHER=0); `msgsvc worker`
 * runs one alone. Any number of them may share one database.
 *
 * Several carriers (API.md §14.1): each message goes where MSGSVC_ROUTES sends it
 * (src/carriers/config.ts createRouter): the first carrier of its route that takes its type and is
 * ready. One carrier (the single-carrier settings, or `carrier` in the options) is one route `*`.
 *
 * One round (`runOnce`):
 * 1. announced receipts that are due are applied (Sent → Delivered / Undelivered), one statement;
 *    now and then, receipts parked before their Sent was visible are applied
 *    (src/domain/carrier-receipts.ts);
 * 2. when no carrier is ready, nothing is claimed (an outage of every carrier spends no attempt).
 *    Else up to `batchSize` due messages are claimed in ONE atomic statement that also commits
 *    them as `sending` with a lease (src/store/repositories/dispatch.ts): from here on no other
 *    dispatcher takes them until the lease runs out. The claim is SHARED BETWEEN ACCOUNTS (API.md
 *    §16 "Quotas and fairness"; src/store/claim.ts fairMessageClaim): round-robin over the
 *    accounts with due messages, each getting an even share of the batch (what small accounts
 *    leave goes to the big ones), so one account's backlog of a million messages delays another
 *    account's message by a round, not by the backlog. Only `active` accounts' messages are
 *    claimed: a suspended account's wait Queued, untouched, until it is active again. An account
 *    with MaxPerSecond gets at most what the send counter grants it for the current second
 *    (src/dispatch/send-counter.ts: asked before the claim for the accounts with due messages,
 *    the unused part given back after it); its other messages stay Queued, untouched, for the
 *    next second. A claim serves at most 10 accounts with a backlog (and any number with a few
 *    messages: BACKLOGGED_PER_CLAIM in src/store/repositories/dispatch.ts); when more accounts
 *    have due messages than one claim serves, the next claim starts after the last account served
 *    (a cursor), so that all get their turn;
 *    Before that claim, the PRIORITY LANE (API.md §17, src/store/claim.ts priorityMessageClaim):
 *    the due messages of Priority 1, oldest due first, within the same account rules and grants;
 *    the fair claim fills what is left of the batch.
 * 2b. a claimed message whose number has a MaxPerSecond of its own (API.md §17) and whose number's
 *    grant of the current second is used up (the same counter, key `n:{account}:{number}`) is
 *    released unattempted, due again a second later (`notReadyDelayMs`).
 * 3. claimed messages that must not go out end at once: Rejected (recipient opted out, number no
 *    longer Active, `ACCOUNT_CLOSED` when the account was closed since the claim), Failed
 *    (`NO_ROUTE`, or `NO_MMS_ROUTE` for an MMS, when no carrier of its route takes its type;
 *    attempts exhausted). A message whose account was suspended since the claim is released, as
 *    in 4;
 * 3b. a claimed message whose recipient is inside the quiet hours of its account (API.md §14.3.5)
 *    is HELD: back to Queued, due when they end in the recipient's zone, marked `quiet_state` 1,
 *    its attempt given back; no carrier is asked, so it counts as no carrier failure. The replies
 *    of API.md §11.6 (`opt_out_exempt`) and keyword autoreplies (`quiet_state` 2) are never held.
 *    The settings of the round's accounts are read once per round, the recipient's zone comes
 *    from a cache per country (src/domain/quiet-hours.ts), and each (account, zone) is decided
 *    once per round. The write that holds them first reads the settings again in its
 *    transaction (`FOR SHARE` on PostgreSQL): a `PUT /v1/account/settings` committed since the
 *    round read them makes those messages due at once instead, so a change is never missed;
 * 4. a claimed message none of whose route's carriers is ready now is RELEASED: back to Queued,
 *    due again in `notReadyDelayMs`, its attempt given back (the claim's count is undone in the
 *    same guarded write). Why claim-and-release rather than a claim that filters by route: the
 *    route is a function of the recipient's digits, which SQL cannot evaluate cheaply on both
 *    stores; a release costs one statement per round, and only while some carrier is down;
 * 5. the rest are submitted, each to the first ready carrier of its route, at most
 *    `carrier.window` awaiting their answer per carrier. A temporary refusal (`retry`, or a
 *    throw) is submitted again at once to the next ready carrier of the route after that one,
 *    when there is one; else the message goes back to the queue with backoff. For `troubledMs`
 *    after that, the carrier is passed over when a later carrier of the route is ready and not
 *    troubled itself (a carrier that hangs holds at most its window). A permanent refusal
 *    (`failed`) ends it Failed, refunded, with no failover;
 * 6. every outcome is written in ONE transaction, each only while the claim's lease token still
 *    holds the message: Sent (with the carrier's name, its id and any announced receipt, and any
 *    receipt parked for that id, applied), Failed or Rejected (with the refund of its credits, in
 *    the same transaction), back to the queue for a retry, or released.
 *
 * Delivery guarantee: at least once to a carrier. A dispatcher that dies between 5 and 6 has
 * handed messages to carriers without recording it; their lease runs out and another round
 * submits them again. So at most one batch (`batchSize` messages) per crash can reach a carrier
 * twice (docs/RELIABILITY.md, "Delivery guarantees"); a failover after a timeout (the first
 * carrier may have taken the message) can send it twice too, at most one window of that carrier
 * per failure. Refunds happen exactly once: only the write that ends a message (guarded by its
 * lease token) refunds it.
 */

/** One configured carrier: its name (MSGSVC_CARRIERS; `smpp` or `sandbox` for the single-carrier settings) and the carrier. */
export interface NamedCarrier {
  readonly name: string;
  readonly carrier: Carrier;
}

export interface DispatcherOptions {
  store: Store;
  /**
   * One carrier (tests, tools): the same as `carriers: [{ name: carrierName ?? …, carrier }]`, the
   * name being `smpp` for an SMPP carrier and the carrier's own `name` otherwise. Give `carrier`
   * or `carriers`.
   */
  carrier?: Carrier;
  /** The name `carrier` is recorded under (default: see `carrier`). */
  carrierName?: string;
  /** The carriers, in MSGSVC_CARRIERS order (names unique). */
  carriers?: readonly NamedCarrier[];
  /** MSGSVC_ROUTES (src/carriers/config.ts parseRoutes); default one rule `*` = every carrier in order. */
  routes?: readonly RouteRule[];
  /** The time source (epoch ms): due times, leases, receipts, DateSent, DateDelivered. */
  clock: Clock;
  /** Messages claimed per round (MSGSVC_DISPATCH_BATCH). */
  batchSize: number;
  /** Lease of a claimed message, ms (MSGSVC_DISPATCH_LEASE_MS). */
  leaseMs: number;
  /** Carrier attempts before a message ends Failed (MSGSVC_DISPATCH_MAX_ATTEMPTS). */
  maxAttempts: number;
  /** Pause of an idle loop between rounds, ms, in real time (MSGSVC_DISPATCH_POLL_MS). */
  pollMs: number;
  /** Delay before retry `attempt` (1-based) after a temporary refusal, ms. Default 1 s × 2^(attempt−1), at most 5 min. */
  retryDelayMs?: (attempt: number) => number;
  /**
   * After a temporary refusal (or a throw) of a carrier, how long its route's other ready carriers
   * are preferred to it, ms (default 2,000): a carrier that hangs then holds at most its window
   * of messages (each of which may have been sent) instead of one window per round.
   */
  troubledMs?: number;
  /** How long a message whose carriers are all not ready waits before it is claimed again, ms (default 1,000). */
  notReadyDelayMs?: number;
  /** MSGSVC_TIMEZONE: the zone of quiet hours for accounts that chose none (API.md §14.3.5). Default `UTC`. */
  timeZone?: string;
  /**
   * Where MaxPerSecond is counted (API.md §16; src/dispatch/send-counter.ts): shared through Redis
   * by every instance (createDispatcher does so when REDIS_URL is set), or, by default, in this
   * process only (the cap then holds per process). Closed by stop().
   */
  sendCounter?: SendCounter;
  /** Inbound texts from the carriers (API.md §11.5), with the configured name of the carrier each came through. Default: logged and dropped. */
  inbound?: (text: InboundText, carrier: string) => Promise<void>;
  log?: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void; error(obj: object, msg?: string): void };
}

/** What one round did (counts of messages). */
export interface DispatchRound {
  /** Announced receipts applied (and parked receipts applied with their Sent). */
  receipts: number;
  claimed: number;
  /** Accepted by a carrier (Sent). */
  sent: number;
  /** Ended Failed (refunded). */
  failed: number;
  /** Ended Rejected (refunded). */
  rejected: number;
  /** Back in the queue for a later attempt. */
  retried: number;
  /** Outcomes not written because the lease was lost meanwhile. */
  lost: number;
  /** Claimed but released unattempted: no carrier of their route was ready (optional: 0 when absent). */
  waiting?: number;
  /** Claimed but held unattempted by quiet hours (API.md §14.3.5; optional: 0 when absent). */
  held?: number;
}

/** Submits by result: `accepted`, `failed` (permanent), `retry` (temporary), `error` (the submit threw). */
export type SubmitCounts = Readonly<Record<'accepted' | 'failed' | 'retry' | 'error', number>>;

/** One carrier in DispatcherStats. */
export interface CarrierStats {
  /** False while it cannot take submits. */
  ready: boolean;
  /** Submits awaiting their answer now (this dispatcher's). */
  inFlight: number;
  submits: SubmitCounts;
  /** The SMPP carrier's own counters (SMPP carriers only). */
  smpp?: SmppStatus;
}

/** Counters a dispatcher keeps since it started (Dispatcher.stats(), shown by GET /metrics: src/http/metrics.ts). */
export interface DispatcherStats {
  /** Rounds run, and rounds that failed (database unavailable…). */
  rounds: number;
  roundErrors: number;
  /** Messages claimed, and their outcomes (API.md §11.2). */
  claimed: number;
  sent: number;
  failed: number;
  rejected: number;
  retried: number;
  lost: number;
  /** Claimed and released unattempted (no carrier of their route ready). */
  waiting: number;
  /** Claimed and held unattempted by quiet hours (API.md §14.3.5). */
  held: number;
  /** Announced receipts applied. */
  receipts: number;
  /** Submits to every carrier by result. */
  submits: SubmitCounts;
  /**
   * The carriers together, as one carrier was shown before several: `ready` when at least one is;
   * `smpp`: the first SMPP carrier's counters.
   */
  carrier: {
    ready: boolean;
    smpp?: SmppStatus;
  };
  /** Per carrier, by configured name, in MSGSVC_CARRIERS order. */
  carriers: Readonly<Record<string, CarrierStats>>;
}

/** ErrorCode of a message that used up its attempts. */
export const RETRIES_EXHAUSTED = 'RETRIES_EXHAUSTED';
/** ErrorCode of an MMS no carrier of its route takes (API.md §11.2, §14.1). */
export const NO_MMS_ROUTE = 'NO_MMS_ROUTE';
/** ErrorCode of an SMS no carrier of its route takes (no rule matches its recipient; API.md §14.1). */
export const NO_ROUTE = 'NO_ROUTE';

/** The MMS templates one dispatch round has read, by `accountId:templateId`. */
type TemplateCache = Map<string, Promise<MmsTemplateRow | undefined>>;

type Outcome =
  | { kind: 'sent'; carrier: string; carrierMessageId: string; receipt: dispatch.AnnouncedReceipt | undefined }
  | { kind: 'ended'; statusId: 5 | 6; errorCode: string }
  | { kind: 'retry'; dueAt: number }
  | { kind: 'release' }
  | { kind: 'hold'; dueAt: number };

const noLog = { info() {}, warn() {}, error() {} };

/** A carrier with its dispatcher-side state: a window gate and counters. */
class Lane {
  readonly submits = { accepted: 0, failed: 0, retry: 0, error: 0 };
  inFlight = 0;
  /**
   * Until when (clock ms) a submit refused for now (or thrown) makes this carrier TROUBLED: the
   * submits meanwhile prefer the next ready, untroubled carrier of their route.
   */
  troubledUntil = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(
    readonly name: string,
    readonly carrier: Carrier,
  ) {}

  ready(): boolean {
    return this.carrier.ready?.() !== false;
  }

  /** Waits for a free slot of the carrier's window (first come, first served). */
  async acquire(): Promise<void> {
    if (this.inFlight < Math.max(1, this.carrier.window)) {
      this.inFlight++;
      return;
    }
    await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** Frees a slot, handing it straight to the next waiter if any. */
  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.inFlight--;
  }
}

/** The name a lone carrier is recorded under: `smpp` for an SMPP carrier (`smpp://…`), else its own name. */
function defaultCarrierName(carrier: Carrier): string {
  return /^smpps?:\/\//.test(carrier.name) ? 'smpp' : carrier.name;
}

export class Dispatcher {
  private readonly log: NonNullable<DispatcherOptions['log']>;
  private readonly poll: PollLoop;
  private readonly lanes: readonly Lane[];
  private readonly byName: ReadonlyMap<string, Lane>;
  private readonly router: Router;
  /** Counts since construction, for metrics (stats()). */
  private readonly totals = {
    rounds: 0,
    roundErrors: 0,
    claimed: 0,
    sent: 0,
    failed: 0,
    rejected: 0,
    retried: 0,
    lost: 0,
    waiting: 0,
    held: 0,
    receipts: 0,
  };
  /** When parked receipts were last looked at (clock ms). */
  private parkedCheckedAt = -Infinity;
  private readonly sendCounter: SendCounter;
  /**
   * The round-robin cursor of the claim: the next claim looks at accounts above it (0: from the
   * first). Moved past the last account served when a claim filled its batch (moveCursor).
   */
  private cursor = 0;
  /** True after a round whose claim, from a cursor above 0, found nothing: the next round starts at once. */
  private wrapped = false;
  /** The active accounts with MaxPerSecond (id → per second), and when (clock ms) they were read: at most once a second. */
  private rateLimited: { at: number; caps: ReadonlyMap<number, number> } | undefined;
  /** The numbers with a MaxPerSecond (API.md §17), read at most once a second of the clock. */
  private numberCaps: { at: number; caps: ReadonlyMap<string, number> } | undefined;

  constructor(private readonly options: DispatcherOptions) {
    this.log = options.log ?? noLog;
    this.sendCounter = options.sendCounter ?? createMemorySendCounter();
    const named: readonly NamedCarrier[] =
      options.carriers ??
      (options.carrier ? [{ name: options.carrierName ?? defaultCarrierName(options.carrier), carrier: options.carrier }] : []);
    if (named.length === 0) throw new Error('Dispatcher: no carrier (give carrier or carriers)');
    this.lanes = named.map((c) => new Lane(c.name, c.carrier));
    this.byName = new Map(this.lanes.map((l) => [l.name, l]));
    if (this.byName.size !== this.lanes.length) throw new Error('Dispatcher: carrier names must be unique');
    const rules = options.routes ?? [{ match: '*', type: undefined, prefix: '', carriers: this.lanes.map((l) => l.name) }];
    this.router = createRouter(
      rules,
      this.lanes.map((l) => ({ name: l.name, supportsMms: l.carrier.supportsMms })),
    );
    this.poll = new PollLoop({
      pollMs: options.pollMs,
      round: async () => {
        const round = await this.runOnce();
        return round.claimed - (round.waiting ?? 0) > 0 || round.receipts > 0 || this.wrapped;
      },
      onError: (err) => {
        this.totals.roundErrors++;
        this.log.error({ err }, 'dispatcher round failed');
      },
    });
  }

  /** The configured carriers by name, in MSGSVC_CARRIERS order (for the callback routes and /readyz). */
  get carriers(): ReadonlyMap<string, Carrier> {
    return new Map(this.lanes.map((l) => [l.name, l.carrier]));
  }

  /**
   * Read-only counters for GET /metrics (src/http/metrics.ts): rounds, claims and outcomes,
   * submits by result (all carriers, and per carrier), and each carrier's state (with the SMPP
   * carrier's own counters). Cheap and synchronous: a few object copies.
   */
  stats(): DispatcherStats {
    const carriers: Record<string, CarrierStats> = {};
    const submits = { accepted: 0, failed: 0, retry: 0, error: 0 };
    let firstSmpp: SmppStatus | undefined;
    for (const lane of this.lanes) {
      const c = lane.carrier as Carrier & { status?: () => unknown };
      const smpp = /^smpps?:\/\//.test(c.name) && typeof c.status === 'function' ? (c.status() as SmppStatus) : undefined;
      firstSmpp ??= smpp;
      for (const k of Object.keys(submits) as (keyof typeof submits)[]) submits[k] += lane.submits[k];
      carriers[lane.name] = { ready: lane.ready(), inFlight: lane.inFlight, submits: { ...lane.submits }, ...(smpp ? { smpp } : {}) };
    }
    return {
      ...this.totals,
      submits,
      carrier: { ready: this.lanes.some((l) => l.ready()), ...(firstSmpp ? { smpp: firstSmpp } : {}) },
      carriers,
    };
  }

  /**
   * The carriers as /readyz shows them, together: `ok` when at least one can take submits,
   * `unavailable` while none can (an SMPP link down). Messages still queue meanwhile, so it does
   * not make the API unready. With one carrier: that carrier's state, as before several.
   */
  carrierState(): 'ok' | 'unavailable' {
    return this.lanes.some((l) => l.ready()) ? 'ok' : 'unavailable';
  }

  /** Each carrier's state for /readyz, by name in MSGSVC_CARRIERS order: `ok` or `unavailable`. */
  carrierStates(): Record<string, 'ok' | 'unavailable'> {
    const out: Record<string, 'ok' | 'unavailable'> = {};
    for (const l of this.lanes) out[l.name] = l.ready() ? 'ok' : 'unavailable';
    return out;
  }

  /**
   * The sink of the carrier named `name`: its receipts are applied by (name, carrier id)
   * (src/domain/carrier-receipts.ts: once, parked when early), its inbound texts run the inbound
   * rules (API.md §11.5).
   */
  sinkFor(name: string): CarrierSink {
    return {
      receipt: async (receipt: Receipt) => {
        await applyCarrierReceipt(this.options.store, this.options.clock, name, receipt);
      },
      inbound: async (text: InboundText) => {
        if (this.options.inbound) return this.options.inbound(text, name);
        this.log.warn({ carrier: name, from: text.from, to: text.to }, 'inbound text dropped: no inbound handler');
      },
    };
  }

  /** The sink of the first carrier (the only one, before several). */
  get sink(): CarrierSink {
    return this.sinkFor(this.lanes[0]!.name);
  }

  /**
   * Starts every carrier and the loop: rounds back to back while there is work, one every
   * `pollMs` (real time) when idle. Errors of a round (database unavailable…) are logged and the
   * loop goes on after `pollMs`. A carrier that cannot be reached at start stays not ready (its
   * own start does not throw for that; API.md §14.1).
   */
  async start(): Promise<void> {
    if (this.poll.running) return;
    await Promise.all(this.lanes.map((l) => l.carrier.start(this.sinkFor(l.name))));
    this.poll.start();
  }

  /** Stops the loop after the round in progress (its outcomes are written), then the carriers and the send counter's connection. */
  async stop(): Promise<void> {
    await this.poll.stop();
    await Promise.all(this.lanes.map((l) => l.carrier.stop()));
    await this.sendCounter.close();
  }

  /**
   * One round (see the class comment): due receipts, one claim, rejections, submits, outcomes.
   * Tests call it directly with a manual clock instead of `start()`.
   */
  async runOnce(): Promise<DispatchRound> {
    const { store, clock, batchSize, leaseMs, maxAttempts } = this.options;
    const round: DispatchRound = { receipts: 0, claimed: 0, sent: 0, failed: 0, rejected: 0, retried: 0, lost: 0 };
    this.totals.rounds++;
    this.wrapped = false;
    // API.md §12.1: the receipts' message events are written in the receipts' transaction.
    // (A read first: an idle round takes no write lock.)
    round.receipts = !(await dispatch.hasDueReceipts(store.db, clock.nowMs()))
      ? 0
      : await inTransaction(
          store,
          async (tx) => {
            const applied = await dispatch.applyDueReceiptRows(tx, clock.nowMs(), batchSize, clock.nowSeconds());
            await emitMessageEvents(tx, applied, clock.nowSeconds());
            return applied.length;
          },
          { immediate: true },
        );
    // Parked receipts whose Sent committed beside them (src/domain/carrier-receipts.ts): once a second.
    if (clock.nowMs() - this.parkedCheckedAt >= 1000) {
      this.parkedCheckedAt = clock.nowMs();
      round.receipts += await applyMatchedParkedReceipts(store, clock, batchSize);
    }
    this.totals.receipts += round.receipts;

    // No carrier can take submits now (links down): claim nothing, spend no attempt.
    if (!this.lanes.some((l) => l.ready())) return round;
    const token = randomUUID();
    const now = clock.nowMs();
    const grants = await this.takeGrants(now);
    let claimed: ClaimedMessage[];
    let fair: ClaimedMessage[];
    try {
      // The priority lane first (API.md §17), then the fair claim fills the rest of the batch.
      const lane = await dispatch.claimPriorityDue(store.db, now, batchSize, now + leaseMs, token, grants?.byAccount);
      const rest = batchSize - lane.length;
      fair =
        rest <= 0
          ? []
          : await dispatch.claimDue(store.db, now, rest, now + leaseMs, token, {
              cursor: this.cursor,
              ...(grants ? { grants: lane.length > 0 ? lessClaimed(grants.byAccount, lane) : grants.byAccount } : {}),
            });
      if (rest > 0) this.moveCursor(fair, rest);
      claimed = lane.length > 0 ? [...lane, ...fair] : fair;
    } catch (err) {
      if (grants) await grants.giveBack(grants.byAccount);
      throw err;
    }
    round.claimed = claimed.length;
    this.totals.claimed += claimed.length;
    // MaxPerSecond: what the claim did not use goes back to the counter at once, for the other
    // instances in this second; what it claimed but no carrier was asked for, after the submits.
    const perAccount = grants ? countByAccount(claimed, grants.byAccount) : undefined;
    if (grants) await grants.giveBack(unusedGrants(grants.byAccount, perAccount!));
    if (claimed.length === 0) return round;

    const outcomes = new Map<number, Outcome>();
    const numbers = await this.takeNumberGrants(claimed, now);
    const blocked = await dispatch.findBlocked(
      store.db,
      claimed.map((m) => m.id),
    );
    const quiet = await this.quietHours(claimed);
    const toSubmit: { m: ClaimedMessage; route: readonly string[] }[] = [];
    for (const m of claimed) {
      const reason = blocked.get(m.id);
      // Suspended since the claim (API.md §16): back to the queue unattempted, to go when active again.
      if (reason === dispatch.ACCOUNT_NOT_ACTIVE) {
        outcomes.set(m.id, { kind: 'release' });
        continue;
      }
      if (reason) {
        outcomes.set(m.id, { kind: 'ended', statusId: LOG_STATUS.REJECTED, errorCode: reason });
        continue;
      }
      // Its number's MaxPerSecond is used up this second (API.md §17): back to the queue, unattempted.
      if (numbers?.over.has(m.id)) {
        outcomes.set(m.id, { kind: 'release' });
        continue;
      }
      const route = this.router.route(m.mobile_phone, m.type_id === MESSAGE_TYPE_MMS ? 'mms' : 'sms');
      if (route.carriers.length === 0) outcomes.set(m.id, { kind: 'ended', statusId: LOG_STATUS.FAILED, errorCode: route.errorCode });
      else if (m.attempts > maxAttempts) outcomes.set(m.id, { kind: 'ended', statusId: LOG_STATUS.FAILED, errorCode: RETRIES_EXHAUSTED });
      else if (quiet.until(m) !== null) outcomes.set(m.id, { kind: 'hold', dueAt: quiet.until(m)! });
      else if (!route.carriers.some((name) => this.byName.get(name)!.ready())) outcomes.set(m.id, { kind: 'release' });
      else toSubmit.push({ m, route: route.carriers });
    }

    // One read of each MMS template per round, however many of its messages the round submits.
    const templates: TemplateCache = new Map();
    const submitted = new Set<number>();
    await Promise.all(toSubmit.map(({ m, route }) => this.submitOne(m, route, outcomes, templates, submitted)));
    if (grants) {
      // MaxPerSecond counts messages handed to a carrier: the claimed ones no carrier was asked
      // for (rejected, held by quiet hours, released) are given back.
      await grants.giveBack(countByAccount(claimed, perAccount!, (m) => !submitted.has(m.id)));
    }
    if (numbers) await numbers.giveBack(submitted);
    await this.record(claimed, token, outcomes, round, quiet.settings);
    return round;
  }

  /**
   * MaxPerSecond (API.md §16): the grants of the current second (⌊now / 1000⌋) for the active
   * accounts with a MaxPerSecond that have a message due, each asking for as many as a claim may
   * take (its cap, at most `batchSize`). Undefined when no such account has a message due (no
   * read of the counter). The accounts with MaxPerSecond are read at most once a second of the
   * clock, so a change of an account's MaxPerSecond applies within a second (until then a newly
   * capped account's messages wait, one no longer capped goes at once).
   * @param now epoch ms.
   */
  private async takeGrants(now: number): Promise<SendGrants | undefined> {
    const { store, batchSize } = this.options;
    if (!this.rateLimited || now - this.rateLimited.at >= 1000 || now < this.rateLimited.at)
      this.rateLimited = { at: now, caps: await dispatch.findRateLimitedAccounts(store.db) };
    const caps = this.rateLimited.caps;
    if (caps.size === 0) return undefined;
    const due = await dispatch.accountsWithDue(store.db, [...caps.keys()], now);
    if (due.length === 0) return undefined;
    return this.sendCounter.take(
      sendWindow(now),
      due.map((account) => ({ account, want: Math.min(caps.get(account)!, batchSize), cap: caps.get(account)! })),
    );
  }

  /**
   * MaxPerSecond of a number (API.md §17): for the claimed messages whose number has one, a grant
   * of the current second from the same counter as the accounts' (shared through Redis), keyed
   * `n:{account id}:{digits}`. The messages past a number's grant are `over`: released, unattempted,
   * to be claimed again (the release's delay is a second by default). `giveBack(submitted)` returns
   * what was granted to messages no carrier was asked for. Undefined when no claimed message's
   * number has a MaxPerSecond (no read of the counter).
   * @param now epoch ms.
   */
  private async takeNumberGrants(
    claimed: readonly ClaimedMessage[],
    now: number,
  ): Promise<{ over: ReadonlySet<number>; giveBack(submitted: ReadonlySet<number>): Promise<void> } | undefined> {
    if (!this.numberCaps || now - this.numberCaps.at >= 1000 || now < this.numberCaps.at)
      this.numberCaps = { at: now, caps: await dispatch.findRateLimitedNumbers(this.options.store.db) };
    const caps = this.numberCaps.caps;
    if (caps.size === 0) return undefined;
    const byNumber = new Map<string, ClaimedMessage[]>();
    for (const m of claimed) {
      const key = `${m.account_id}:${m.number}`;
      if (!caps.has(key)) continue;
      let list = byNumber.get(key);
      if (!list) byNumber.set(key, (list = []));
      list.push(m);
    }
    if (byNumber.size === 0) return undefined;
    const grants = await this.sendCounter.take(
      sendWindow(now),
      [...byNumber].map(([key, list]) => ({ account: `n:${key}`, want: list.length, cap: caps.get(key)! })),
    );
    const over = new Set<number>();
    const granted: ClaimedMessage[] = [];
    for (const [key, list] of byNumber) {
      const n = grants.byAccount.get(`n:${key}`) ?? 0;
      list.forEach((m, i) => (i < n ? granted.push(m) : over.add(m.id)));
    }
    return {
      over,
      giveBack: async (submitted) => {
        const unused = new Map<string, number>();
        for (const m of granted) {
          if (submitted.has(m.id)) continue;
          const key = `n:${m.account_id}:${m.number}`;
          unused.set(key, (unused.get(key) ?? 0) + 1);
        }
        await grants.giveBack(unused);
      },
    };
  }

  /**
   * Moves the round-robin cursor after a claim (the claim walks the accounts in id order from the
   * cursor up, and stops once it has a batch's worth of work): past the last account served when
   * the claim filled its batch (the walk may have stopped there, more accounts may follow), else
   * back to 0 (a claim short of its batch reached the last account). A full claim that did reach
   * the last account costs the next round one empty claim (the walk finds nothing above), which
   * then starts again from 0 at once.
   */
  private moveCursor(claimed: readonly ClaimedMessage[], batchSize: number): void {
    // A claim from a cursor that found nothing above it is not an idle round: the accounts below
    // it are looked at by the next round at once, not after the poll interval.
    this.wrapped = this.cursor > 0 && claimed.length === 0;
    this.cursor = claimed.length >= batchSize ? Math.max(...claimed.map((m) => m.account_id)) : 0;
  }

  /**
   * The round's quiet hours (step 3b of the class comment): the settings of the claimed
   * messages' accounts, read in one statement, and `until(m)`: null when `m` may go now, else when
   * its quiet hours end (epoch ms). Exempt messages, and every message when no account of the
   * round has quiet hours, are never held.
   */
  private async quietHours(
    claimed: readonly ClaimedMessage[],
  ): Promise<{ until(m: ClaimedMessage): number | null; settings: readonly QuietSettings[] }> {
    const { store, clock } = this.options;
    const candidates = claimed.filter((m) => m.opt_out_exempt !== 1 && m.quiet_state !== 2);
    const settings = candidates.length === 0 ? [] : await findSettingsMany(store.db, [...new Set(candidates.map((m) => m.account_id))]);
    const check: QuietCheck | null = quietCheck(settings, this.options.timeZone ?? 'UTC', clock.nowMs());
    if (check === null) return { until: () => null, settings };
    const memo = new Map<number, number | null>();
    return {
      settings,
      until: (m) => {
        if (m.opt_out_exempt === 1 || m.quiet_state === 2) return null;
        let u = memo.get(m.id);
        if (u === undefined) memo.set(m.id, (u = check(m.account_id, m.mobile_phone)));
        return u;
      },
    };
  }

  /**
   * The holds of a round, checked against the settings as they are in the outcomes' transaction
   * (`tx`; read `FOR SHARE` on PostgreSQL): a message of an account whose settings changed since
   * the round read them (`settings`) is made due at once instead, to be checked again.
   */
  private async recheckHolds(
    tx: Parameters<typeof findSettingsMany>[0],
    claimed: readonly ClaimedMessage[],
    hold: dispatch.HeldItem[],
    settings: readonly QuietSettings[],
  ): Promise<dispatch.HeldItem[]> {
    if (hold.length === 0) return hold;
    const accountOf = new Map(claimed.map((m) => [m.id, m.account_id]));
    const accounts = [...new Set(hold.map((h) => accountOf.get(h.id)!))];
    const before = new Map(settings.map((r) => [Number(r.account_id), quietKey(r)]));
    const now = new Map((await findSettingsMany(tx, accounts, true)).map((r) => [r.account_id, quietKey(r)]));
    const changed = new Set(accounts.filter((a) => (before.get(a) ?? '') !== (now.get(a) ?? '')));
    if (changed.size === 0) return hold;
    const nowMs = this.options.clock.nowMs();
    return hold.map((h) => (changed.has(accountOf.get(h.id)!) ? { id: h.id, dueAt: nowMs } : h));
  }

  /**
   * Runs rounds until one finds nothing to do (no claim, no receipt), at most `maxRounds`.
   * For tests and tools with a manual clock. Returns the sum of the rounds.
   */
  async drain(maxRounds = 1000): Promise<DispatchRound> {
    const sum: DispatchRound = { receipts: 0, claimed: 0, sent: 0, failed: 0, rejected: 0, retried: 0, lost: 0 };
    for (let i = 0; i < maxRounds; i++) {
      const r = await this.runOnce();
      for (const k of Object.keys(sum) as (keyof DispatchRound)[]) sum[k] = (sum[k] ?? 0) + (r[k] ?? 0);
      if (r.claimed === 0 && r.receipts === 0 && !this.wrapped) break;
    }
    return sum;
  }

  /**
   * What the carrier is handed: an MMS with a template (queued since migration 011) goes with the
   * template's Message and MediaIds as they are now (API.md §10.7), the Message's merge fields
   * replaced with the recipient's values (API.md §10.6); a template deleted since, or an SMS, with
   * the message's own text (personalised when it was queued). A template whose media have all been
   * deleted since the MMS was queued gives no MediaIds: a queued message is not taken back
   * (docs/API.md §10.7). "Now" is this round: the round's
   * messages of one template share one read of it (`templates`).
   */
  private async outbound(m: ClaimedMessage, templates: TemplateCache): Promise<OutboundMessage> {
    const base = {
      id: m.id,
      accountId: m.account_id,
      from: m.number,
      to: m.mobile_phone,
      text: m.message,
      typeId: m.type_id,
      segments: m.segments,
      attempt: m.attempts,
    };
    if (m.type_id !== MESSAGE_TYPE_MMS || m.mms_template_id === null) return base;
    const key = `${m.account_id}:${m.mms_template_id}`;
    let read = templates.get(key);
    if (!read) templates.set(key, (read = findTemplate(this.options.store.db, m.account_id, m.mms_template_id)));
    const template = await read;
    // The template is read now, so its merge fields are merged now, for this recipient (API.md §10.6).
    const text = template ? await mergeFields(this.options.store.db, m.account_id, m.mobile_phone, template.message) : '';
    return template ? { ...base, text, mediaIds: template.media_ids } : base;
  }

  /**
   * Submits one message to the first ready carrier of its route, within that carrier's window;
   * on a temporary refusal, to the next ready carrier of the route after it, and so on. A throw is
   * a temporary refusal.
   */
  private async submitOne(
    m: ClaimedMessage,
    route: readonly string[],
    outcomes: Map<number, Outcome>,
    templates: TemplateCache,
    submitted: Set<number>,
  ): Promise<void> {
    let message: OutboundMessage | undefined;
    let result: SubmitResult | undefined;
    let carrier = '';
    for (let i = 0; i < route.length; i++) {
      const lane = this.byName.get(route[i]!)!;
      if (!lane.ready()) continue;
      await lane.acquire();
      try {
        // Readiness may have changed while waiting for the window: a carrier gone down passes the
        // message on (to the next ready one, or back to the queue unattempted). A troubled one
        // (it refused a submit for now lately: a timeout, it may be hanging) passes it on too when
        // a later carrier of the route is ready and not troubled: so at most its window of
        // messages is caught in a hang that may have sent them.
        const now = this.options.clock.nowMs();
        if (!lane.ready()) continue;
        if (
          lane.troubledUntil > now &&
          route.slice(i + 1).some((n) => this.byName.get(n)!.ready() && !(this.byName.get(n)!.troubledUntil > now))
        )
          continue;
        message ??= await this.outbound(m, templates);
        carrier = lane.name;
        submitted.add(m.id);
        try {
          result = await lane.carrier.submit(message);
          lane.submits[result.kind === 'accepted' ? 'accepted' : result.kind === 'failed' ? 'failed' : 'retry']++;
        } catch (err) {
          this.log.warn({ err, messageId: m.id, carrier: lane.name }, 'carrier submit failed; will retry');
          result = { kind: 'retry', errorCode: 'SUBMIT_ERROR' };
          lane.submits.error++;
        }
        if (result.kind === 'retry') lane.troubledUntil = this.options.clock.nowMs() + (this.options.troubledMs ?? 2000);
      } finally {
        lane.release();
      }
      if (result.kind !== 'retry') break;
    }
    if (!result) outcomes.set(m.id, { kind: 'release' });
    else outcomes.set(m.id, this.outcomeOf(m, carrier, result, this.options.clock.nowMs()));
  }

  private outcomeOf(m: ClaimedMessage, carrier: string, result: SubmitResult, now: number): Outcome {
    if (result.kind === 'accepted') {
      const r = result.receipt;
      return {
        kind: 'sent',
        carrier,
        carrierMessageId: result.carrierMessageId,
        receipt: r && {
          statusId: r.status === 'delivered' ? LOG_STATUS.DELIVERED : LOG_STATUS.UNDELIVERED,
          errorCode: r.errorCode,
          dueAt: now + r.afterMs,
        },
      };
    }
    if (result.kind === 'failed') return { kind: 'ended', statusId: LOG_STATUS.FAILED, errorCode: result.errorCode };
    if (m.attempts >= this.options.maxAttempts)
      return { kind: 'ended', statusId: LOG_STATUS.FAILED, errorCode: result.errorCode || RETRIES_EXHAUSTED };
    const delay = result.afterMs ?? (this.options.retryDelayMs ?? defaultRetryDelay)(m.attempts);
    return { kind: 'retry', dueAt: now + delay };
  }

  /** Writes every outcome of a claim in one transaction, refunds included (see the class comment). */
  private async record(
    claimed: ClaimedMessage[],
    token: string,
    outcomes: Map<number, Outcome>,
    round: DispatchRound,
    settings: readonly QuietSettings[] = [],
  ): Promise<void> {
    const { store, clock } = this.options;
    const nowSeconds = clock.nowSeconds();
    const counts = { sent: 0, failed: 0, rejected: 0, retried: 0, lost: 0, waiting: 0, held: 0, receipts: 0 };
    await inTransaction(
      store,
      async (tx) => {
        for (const k of Object.keys(counts) as (keyof typeof counts)[]) counts[k] = 0;
        // Refunds by account, then by reference: one ledger entry per batch (API.md §10.1.1), one per message outside a batch.
        const refunds = new Map<number, Map<string, number>>();
        // The Sent ones (nearly all) in one statement; the released in one; the rest one by one.
        const sent: dispatch.SentItem[] = [];
        const release: number[] = [];
        const hold: dispatch.HeldItem[] = [];
        const unhold: number[] = [];
        for (const m of claimed) {
          const o = outcomes.get(m.id)!;
          if (o.kind === 'sent') sent.push({ id: m.id, carrier: o.carrier, carrierId: o.carrierMessageId, receipt: o.receipt });
          else if (o.kind === 'release') release.push(m.id);
          else if (o.kind === 'hold') hold.push({ id: m.id, dueAt: o.dueAt });
          if (o.kind !== 'hold' && m.quiet_state === 1) unhold.push(m.id);
        }
        // API.md §14.3.5: quiet hours over; then the held, against the settings as they are now.
        await dispatch.clearQuietHeld(tx, unhold, token);
        counts.held = await dispatch.holdQuiet(tx, await this.recheckHolds(tx, claimed, hold, settings), token);
        counts.lost += hold.length - counts.held;
        const written = await dispatch.markSentMany(tx, token, nowSeconds, sent);
        // API.md §12.1: the message events of this round's outcomes, in its transaction.
        const changed = claimed.filter((m) => written.has(m.id));
        counts.sent = written.size;
        counts.lost += sent.length - written.size;
        counts.waiting = await dispatch.releaseUnattempted(tx, release, token, clock.nowMs() + (this.options.notReadyDelayMs ?? 1000));
        counts.lost += release.length - counts.waiting;
        for (const m of claimed) {
          const o = outcomes.get(m.id)!;
          if (o.kind === 'sent' || o.kind === 'release' || o.kind === 'hold') continue;
          if (o.kind === 'retry') {
            if (await dispatch.markRetry(tx, m.id, token, o.dueAt)) counts.retried++;
            else counts.lost++;
          } else {
            const ended = await dispatch.markEnded(tx, m.id, token, o.statusId, o.errorCode);
            if (!ended) counts.lost++;
            else {
              if (o.statusId === LOG_STATUS.FAILED) counts.failed++;
              else counts.rejected++;
              let mine = refunds.get(ended.account_id);
              if (!mine) refunds.set(ended.account_id, (mine = new Map<string, number>()));
              const reference = ended.batch_id === null ? `message:${m.id}` : `batch:${ended.batch_id}`;
              mine.set(reference, (mine.get(reference) ?? 0) + ended.credits);
              changed.push(m);
            }
          }
        }
        await emitMessageEvents(tx, changed, nowSeconds);
        // Receipts that came before this Sent was committed (after the Sent events: Sent, then Delivered).
        counts.receipts = await applyParkedReceipts(tx, [...written], nowSeconds);
        // In account order, so that two dispatchers refunding the same accounts never deadlock.
        for (const [accountId, mine] of [...refunds].sort((x, y) => x[0] - y[0]))
          for (const [reference, credits] of mine) await refundCredits(tx, accountId, credits, nowSeconds, reference);
      },
      { immediate: true },
    );
    const { receipts, waiting, held, ...outcomeCounts } = counts;
    Object.assign(round, outcomeCounts);
    if (waiting > 0) round.waiting = waiting;
    if (held > 0) round.held = held;
    round.receipts += receipts;
    for (const k of ['sent', 'failed', 'rejected', 'retried', 'lost', 'waiting', 'held', 'receipts'] as const) this.totals[k] += counts[k];
    if (counts.lost > 0)
      this.log.warn({ lost: counts.lost }, 'lease lost before the outcome was written (another dispatcher took the messages)');
  }
}

/** The quiet-hours fields of a settings row, compared to tell a change (undefined: no row). */
function quietKey(r: QuietSettings | undefined): string {
  return r === undefined ? '' : JSON.stringify([r.quiet_start, r.quiet_end, r.time_zone]);
}

/**
 * The claimed messages counted by account, for the accounts of `grants` only (those with
 * MaxPerSecond), each account of `grants` present (0 included); `which` selects the messages counted.
 */
function countByAccount(
  claimed: readonly ClaimedMessage[],
  grants: ReadonlyMap<number, number>,
  which: (m: ClaimedMessage) => boolean = () => true,
): Map<number, number> {
  const out = new Map<number, number>([...grants.keys()].map((a) => [a, 0]));
  for (const m of claimed) if (out.has(m.account_id) && which(m)) out.set(m.account_id, out.get(m.account_id)! + 1);
  return out;
}

/** Per account, what a grant left unused: granted − claimed (never below 0). */
function unusedGrants(grants: ReadonlyMap<number, number>, claimed: ReadonlyMap<number, number>): Map<number, number> {
  return new Map([...grants].map(([a, n]) => [a, Math.max(0, n - (claimed.get(a) ?? 0))]));
}

/** The grants left for the fair claim after the priority lane took `lane` (API.md §17). */
function lessClaimed(grants: ReadonlyMap<number, number>, lane: readonly ClaimedMessage[]): Map<number, number> {
  return unusedGrants(grants, countByAccount(lane, grants));
}

/** 1 s × 2^(attempt − 1), at most 5 minutes. */
function defaultRetryDelay(attempt: number): number {
  return Math.min(300_000, 1000 * 2 ** Math.max(0, attempt - 1));
}
