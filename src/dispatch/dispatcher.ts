import { randomUUID } from 'node:crypto';
import { PollLoop } from './poll-loop.ts';
import { inTransaction, type Store } from '../store/db.ts';
import * as dispatch from '../store/repositories/dispatch.ts';
import type { ClaimedMessage } from '../store/repositories/dispatch.ts';
import { refundCredits } from '../store/repositories/credits.ts';
import { LOG_STATUS, MESSAGE_TYPE_MMS } from '../records/statuses.ts';
import type { Clock } from '../lib/time.ts';
import type { Carrier, CarrierSink, InboundText, Receipt, SubmitResult } from './carrier.ts';
import { emitMessageEvents } from '../domain/webhooks.ts';
import type { SmppStatus } from './smpp.ts';

/**
 * The dispatcher (API-EXTENSIONS §8): takes queued messages to the carrier and the carrier's
 * receipts back to the log. `msgsvc serve` runs one (unless MSGSVC_DISPATCHER=0); `msgsvc worker`
 * runs one alone. Any number of them may share one database.
 *
 * One round (`runOnce`):
 * 1. announced receipts that are due are applied (Sent → Delivered / Undelivered), one statement;
 * 2. up to `batchSize` due messages are claimed in ONE atomic statement that also commits them as
 *    `sending` with a lease (src/store/repositories/dispatch.ts): from here on no other dispatcher
 *    takes them until the lease runs out;
 * 3. claimed messages that must not go out end at once: Rejected (recipient opted out, number no
 *    longer Active), Failed (`NO_MMS_ROUTE` for an MMS the carrier cannot take; attempts exhausted);
 * 4. the rest are submitted to the carrier, `carrier.window` at a time;
 * 5. every outcome is written in ONE transaction, each only while the claim's lease token still
 *    holds the message: Sent (with the carrier id and any announced receipt), Failed or Rejected
 *    (with the refund of its credits, in the same transaction), or back to the queue for a retry.
 *
 * Delivery guarantee: at least once to the carrier. A dispatcher that dies between 4 and 5 has
 * handed messages to the carrier without recording it; their lease runs out and another round
 * submits them again. So at most one batch (`batchSize` messages) per crash can reach the carrier
 * twice (docs/RELIABILITY.md, "Delivery guarantees"). Refunds happen exactly once: only the write
 * that ends a message (guarded by its lease token) refunds it.
 */

export interface DispatcherOptions {
  store: Store;
  carrier: Carrier;
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
  /** Inbound texts from the carrier (API-EXTENSIONS §7). Default: logged and dropped (§7 comes with its own change). */
  inbound?: (text: InboundText) => Promise<void>;
  log?: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void; error(obj: object, msg?: string): void };
}

/** What one round did (counts of messages). */
export interface DispatchRound {
  /** Announced receipts applied. */
  receipts: number;
  claimed: number;
  /** Accepted by the carrier (Sent). */
  sent: number;
  /** Ended Failed (refunded). */
  failed: number;
  /** Ended Rejected (refunded). */
  rejected: number;
  /** Back in the queue for a later attempt. */
  retried: number;
  /** Outcomes not written because the lease was lost meanwhile. */
  lost: number;
}

/** Counters a dispatcher keeps since it started (Dispatcher.stats(), shown by GET /metrics: src/http/metrics.ts). */
export interface DispatcherStats {
  /** Rounds run, and rounds that failed (database unavailable…). */
  rounds: number;
  roundErrors: number;
  /** Messages claimed, and their outcomes (API-EXTENSIONS §8). */
  claimed: number;
  sent: number;
  failed: number;
  rejected: number;
  retried: number;
  lost: number;
  /** Announced receipts applied. */
  receipts: number;
  /** Carrier submits by result: `accepted`, `failed` (permanent), `retry` (temporary), `error` (the submit threw). */
  submits: Readonly<Record<'accepted' | 'failed' | 'retry' | 'error', number>>;
  /** The carrier: `ready` false while it cannot take submits; `smpp` only on the SMPP carrier. */
  carrier: {
    ready: boolean;
    smpp?: {
      bound: boolean;
      /** `smpp://host:port` (no credentials). */
      url: string;
      state: string;
      inFlight: number;
      heldReceipts: number;
      counters: {
        submits: number;
        messages: number;
        responses: Readonly<Record<string, number>>;
        timeouts: number;
        receipts: number;
        receiptsUnmatched: number;
        inbound: number;
        binds: number;
        reconnects: number;
      };
    };
  };
}

/** ErrorCode of a message that used up its attempts. */
export const RETRIES_EXHAUSTED = 'RETRIES_EXHAUSTED';
/** ErrorCode of an MMS for a carrier without MMS (API-EXTENSIONS §8). */
export const NO_MMS_ROUTE = 'NO_MMS_ROUTE';

type Outcome =
  | { kind: 'sent'; carrierMessageId: string; receipt: dispatch.AnnouncedReceipt | undefined }
  | { kind: 'ended'; statusId: 5 | 6; errorCode: string }
  | { kind: 'retry'; dueAt: number };

const noLog = { info() {}, warn() {}, error() {} };

export class Dispatcher {
  private readonly log: NonNullable<DispatcherOptions['log']>;
  private readonly poll: PollLoop;
  /** Counts since construction, for metrics (stats()). */
  private readonly totals = { rounds: 0, roundErrors: 0, claimed: 0, sent: 0, failed: 0, rejected: 0, retried: 0, lost: 0, receipts: 0 };
  private readonly submits = { accepted: 0, failed: 0, retry: 0, error: 0 };

  /**
   * Read-only counters for GET /metrics (src/http/metrics.ts): rounds, claims and outcomes, carrier
   * submits by result, and the carrier's state (with the SMPP carrier's own counters when it is
   * the carrier). Cheap and synchronous: a few object copies.
   */
  stats(): DispatcherStats {
    const carrier = this.options.carrier as Carrier & { status?: () => SmppStatus };
    const smpp = typeof carrier.status === 'function' ? carrier.status() : undefined;
    return {
      ...this.totals,
      submits: { ...this.submits },
      carrier: { ready: carrier.ready?.() !== false, ...(smpp ? { smpp } : {}) },
    };
  }

  /**
   * The carrier as /readyz shows it: `ok` when it can take submits, `unavailable` while it cannot
   * (an SMPP link down). Messages still queue meanwhile, so it does not make the API unready.
   */
  carrierState(): 'ok' | 'unavailable' {
    return this.options.carrier.ready?.() === false ? 'unavailable' : 'ok';
  }

  constructor(private readonly options: DispatcherOptions) {
    this.log = options.log ?? noLog;
    this.poll = new PollLoop({
      pollMs: options.pollMs,
      round: async () => {
        const round = await this.runOnce();
        return round.claimed > 0 || round.receipts > 0;
      },
      onError: (err) => {
        this.totals.roundErrors++;
        this.log.error({ err }, 'dispatcher round failed');
      },
    });
  }

  /** The sink the carrier pushes receipts and inbound texts to. */
  readonly sink: CarrierSink = {
    receipt: async (receipt: Receipt) => {
      const statusId = receipt.status === 'delivered' ? LOG_STATUS.DELIVERED : LOG_STATUS.UNDELIVERED;
      // API-EXTENSIONS §10: message.delivered / message.undelivered in the receipt's transaction.
      const nowSeconds = this.options.clock.nowSeconds();
      await inTransaction(this.options.store, async (tx) => {
        const changed = await dispatch.applyReceiptReturning(tx, receipt.carrierMessageId, statusId, receipt.errorCode, nowSeconds);
        await emitMessageEvents(tx, changed, nowSeconds);
      }, { immediate: true });
    },
    inbound: async (text: InboundText) => {
      if (this.options.inbound) return this.options.inbound(text);
      this.log.warn({ from: text.from, to: text.to }, 'inbound text dropped: no inbound handler');
    },
  };

  /**
   * Starts the carrier and the loop: rounds back to back while there is work, one every
   * `pollMs` (real time) when idle. Errors of a round (database unavailable…) are logged and
   * the loop goes on after `pollMs`.
   */
  async start(): Promise<void> {
    if (this.poll.running) return;
    await this.options.carrier.start(this.sink);
    this.poll.start();
  }

  /** Stops the loop after the round in progress (its outcomes are written), then the carrier. */
  async stop(): Promise<void> {
    await this.poll.stop();
    await this.options.carrier.stop();
  }

  /**
   * One round (see the class comment): due receipts, one claim, rejections, submits, outcomes.
   * Tests call it directly with a manual clock instead of `start()`.
   */
  async runOnce(): Promise<DispatchRound> {
    const { store, clock, carrier, batchSize, leaseMs, maxAttempts } = this.options;
    const round: DispatchRound = { receipts: 0, claimed: 0, sent: 0, failed: 0, rejected: 0, retried: 0, lost: 0 };
    this.totals.rounds++;
    // API-EXTENSIONS §10: the receipts' message events are written in the receipts' transaction.
    // (A read first: an idle round takes no write lock.)
    round.receipts = !(await dispatch.hasDueReceipts(store.db, clock.nowMs())) ? 0 : await inTransaction(store, async (tx) => {
      const applied = await dispatch.applyDueReceiptRows(tx, clock.nowMs(), batchSize, clock.nowSeconds());
      await emitMessageEvents(tx, applied, clock.nowSeconds());
      return applied.length;
    }, { immediate: true });
    this.totals.receipts += round.receipts;

    // A carrier that cannot take submits now (link down): claim nothing, spend no attempt.
    if (carrier.ready?.() === false) return round;
    const token = randomUUID();
    const claimed = await dispatch.claimDue(store.db, clock.nowMs(), batchSize, clock.nowMs() + leaseMs, token);
    round.claimed = claimed.length;
    this.totals.claimed += claimed.length;
    if (claimed.length === 0) return round;

    const outcomes = new Map<number, Outcome>();
    const blocked = await dispatch.findBlocked(store.db, claimed.map((m) => m.id));
    const toSubmit: ClaimedMessage[] = [];
    for (const m of claimed) {
      const reason = blocked.get(m.id);
      if (reason) outcomes.set(m.id, { kind: 'ended', statusId: LOG_STATUS.REJECTED, errorCode: reason });
      else if (m.type_id === MESSAGE_TYPE_MMS && !carrier.supportsMms) outcomes.set(m.id, { kind: 'ended', statusId: LOG_STATUS.FAILED, errorCode: NO_MMS_ROUTE });
      else if (m.attempts > maxAttempts) outcomes.set(m.id, { kind: 'ended', statusId: LOG_STATUS.FAILED, errorCode: RETRIES_EXHAUSTED });
      else toSubmit.push(m);
    }

    await this.submitAll(toSubmit, outcomes);
    await this.record(claimed, token, outcomes, round);
    return round;
  }

  /**
   * Runs rounds until one finds nothing to do (no claim, no receipt), at most `maxRounds`.
   * For tests and tools with a manual clock. Returns the sum of the rounds.
   */
  async drain(maxRounds = 1000): Promise<DispatchRound> {
    const sum: DispatchRound = { receipts: 0, claimed: 0, sent: 0, failed: 0, rejected: 0, retried: 0, lost: 0 };
    for (let i = 0; i < maxRounds; i++) {
      const r = await this.runOnce();
      for (const k of Object.keys(sum) as (keyof DispatchRound)[]) sum[k] += r[k];
      if (r.claimed === 0 && r.receipts === 0) break;
    }
    return sum;
  }

  /** Submits with at most `carrier.window` awaiting an answer; a throw is a temporary refusal. */
  private async submitAll(messages: ClaimedMessage[], outcomes: Map<number, Outcome>): Promise<void> {
    const { carrier, clock } = this.options;
    let next = 0;
    const worker = async () => {
      while (next < messages.length) {
        const m = messages[next++]!;
        let result: SubmitResult;
        try {
          result = await carrier.submit({ id: m.id, accountId: m.account_id, from: m.number, to: m.mobile_phone, text: m.message, typeId: m.type_id, segments: m.segments, attempt: m.attempts });
          this.submits[result.kind === 'accepted' ? 'accepted' : result.kind === 'failed' ? 'failed' : 'retry']++;
        } catch (err) {
          this.log.warn({ err, messageId: m.id }, 'carrier submit failed; will retry');
          result = { kind: 'retry', errorCode: 'SUBMIT_ERROR' };
          this.submits.error++;
        }
        outcomes.set(m.id, this.outcomeOf(m, result, clock.nowMs()));
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(carrier.window, messages.length)) }, worker));
  }

  private outcomeOf(m: ClaimedMessage, result: SubmitResult, now: number): Outcome {
    if (result.kind === 'accepted') {
      const r = result.receipt;
      return {
        kind: 'sent',
        carrierMessageId: result.carrierMessageId,
        receipt: r && { statusId: r.status === 'delivered' ? LOG_STATUS.DELIVERED : LOG_STATUS.UNDELIVERED, errorCode: r.errorCode, dueAt: now + r.afterMs },
      };
    }
    if (result.kind === 'failed') return { kind: 'ended', statusId: LOG_STATUS.FAILED, errorCode: result.errorCode };
    if (m.attempts >= this.options.maxAttempts) return { kind: 'ended', statusId: LOG_STATUS.FAILED, errorCode: result.errorCode || RETRIES_EXHAUSTED };
    const delay = result.afterMs ?? (this.options.retryDelayMs ?? defaultRetryDelay)(m.attempts);
    return { kind: 'retry', dueAt: now + delay };
  }

  /** Writes every outcome of a claim in one transaction, refunds included (see the class comment). */
  private async record(claimed: ClaimedMessage[], token: string, outcomes: Map<number, Outcome>, round: DispatchRound): Promise<void> {
    const { store, clock } = this.options;
    const nowSeconds = clock.nowSeconds();
    const counts = { sent: 0, failed: 0, rejected: 0, retried: 0, lost: 0 };
    await inTransaction(store, async (tx) => {
      counts.sent = counts.failed = counts.rejected = counts.retried = counts.lost = 0;
      const refunds = new Map<number, number>();
      // The Sent ones (nearly all) in one statement; the rest one by one.
      const sent: dispatch.SentItem[] = [];
      for (const m of claimed) {
        const o = outcomes.get(m.id)!;
        if (o.kind === 'sent') sent.push({ id: m.id, carrierId: o.carrierMessageId, receipt: o.receipt });
      }
      const written = await dispatch.markSentMany(tx, token, nowSeconds, sent);
      // API-EXTENSIONS §10: the message events of this round's outcomes, in its transaction.
      const changed = claimed.filter((m) => written.has(m.id));
      counts.sent = written.size;
      counts.lost += sent.length - written.size;
      for (const m of claimed) {
        const o = outcomes.get(m.id)!;
        if (o.kind === 'sent') continue;
        if (o.kind === 'retry') {
          if (await dispatch.markRetry(tx, m.id, token, o.dueAt)) counts.retried++;
          else counts.lost++;
        } else {
          const ended = await dispatch.markEnded(tx, m.id, token, o.statusId, o.errorCode);
          if (!ended) counts.lost++;
          else {
            if (o.statusId === LOG_STATUS.FAILED) counts.failed++;
            else counts.rejected++;
            refunds.set(ended.account_id, (refunds.get(ended.account_id) ?? 0) + ended.credits);
            changed.push(m);
          }
        }
      }
      await emitMessageEvents(tx, changed, nowSeconds);
      // In account order, so that two dispatchers refunding the same accounts never deadlock.
      for (const [accountId, credits] of [...refunds].sort((x, y) => x[0] - y[0])) await refundCredits(tx, accountId, credits, nowSeconds);
    }, { immediate: true });
    Object.assign(round, counts);
    for (const k of ['sent', 'failed', 'rejected', 'retried', 'lost'] as const) this.totals[k] += counts[k];
    if (counts.lost > 0) this.log.warn({ lost: counts.lost }, 'lease lost before the outcome was written (another dispatcher took the messages)');
  }
}

/** 1 s × 2^(attempt − 1), at most 5 minutes. */
function defaultRetryDelay(attempt: number): number {
  return Math.min(300_000, 1000 * 2 ** Math.max(0, attempt - 1));
}
