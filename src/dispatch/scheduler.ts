import { randomUUID } from 'node:crypto';
import { PollLoop } from './poll-loop.ts';
import { inTransaction, type Store } from '../store/db.ts';
import { emitEvent } from '../domain/webhooks.ts';
import { debitCredits, refundCredits } from '../store/repositories/credits.ts';
import { insertMessage } from '../store/repositories/message-log.ts';
import * as scheduled from '../store/repositories/scheduled.ts';
import type { ClaimedScheduled } from '../store/repositories/scheduled.ts';
import { messageCost, type Prices } from '../domain/segments.ts';
import { DIRECTION_OUTBOUND, LOG_STATUS, MESSAGE_TYPE_MMS } from '../records/statuses.ts';
import type { Clock } from '../lib/time.ts';

/**
 * The scheduler (API.md §11.7): the status life of scheduled
 * messages, in the dispatcher process (`msgsvc serve` unless MSGSVC_DISPATCHER=0, and `msgsvc
 * worker`), beside the dispatcher and on the same injected clock. The API only writes a message
 * Pending (schedule, update) or deletes it (cancel); everything else happens here.
 *
 * One round (`runOnce`):
 * 1. up to `batchSize` scheduled messages with work due (`due_at <= now`) are claimed in ONE atomic
 *    statement per store, leased until now + `leaseMs` (src/store/repositories/scheduled.ts);
 * 2. the check, for the Pending ones and the Action Required ones whose credits went up (the
 *    trigger of migration 005 made them due): the number is an Active number of the account, the
 *    recipient has not opted out, and the cost can be debited now. Then 3 Approved and Scheduled,
 *    the cost kept as its reservation, due at its DateTime; else 2 Action Required with nothing
 *    debited, waiting for credits or an update. One transaction; per account (ascending) the
 *    balance row is locked first (the lock order of the repository), and each outcome is written
 *    only while the claim's token still holds the row (an update or cancel meanwhile wins, and a
 *    debit made for a row whose claim was lost is given back in the same transaction);
 * 3. an Action Required message whose DateTime has passed is not checked again: it stays listed,
 *    unsent, until it is updated or cancelled;
 * 4. the approved ones whose DateTime has come are sent: in one transaction, per account, they
 *    leave the scheduled list and become Messages of the log, Queued, with `ScheduledMessageId`
 *    and their reservation as `Credits` (no second debit; the dispatcher refunds it if the message
 *    ends Failed or Rejected).
 *
 * A scheduler that dies after a claim leaves its rows leased; they are due again when the lease
 * runs out, and the next round does their work (a check or a send) once: every write is guarded by
 * the claim's token, and a send deletes the row in the transaction that queues the message.
 */

export interface SchedulerOptions {
  store: Store;
  /** The time source (epoch ms): checks due, DateTimes, leases, DateCreated of the messages. */
  clock: Clock;
  /** Prices in credits (MSGSVC_SMS_SEGMENT_CREDITS, MSGSVC_MMS_CREDITS): what a check reserves. */
  prices: Prices;
  /** Scheduled messages claimed per round (MSGSVC_DISPATCH_BATCH). */
  batchSize: number;
  /** Lease of a claimed row, ms (MSGSVC_DISPATCH_LEASE_MS). */
  leaseMs: number;
  /** Pause of an idle loop between rounds, ms, real time (MSGSVC_SCHEDULER_POLL_MS; ≤ 1,000 so a check comes within a second). */
  pollMs: number;
  log?: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void; error(obj: object, msg?: string): void };
}

/** What one round did (counts of scheduled messages). */
export interface ScheduleRound {
  claimed: number;
  /** Checked and now 3 Approved and Scheduled (credits reserved). */
  approved: number;
  /** Checked and now 2 Action Required (nothing reserved). */
  actionRequired: number;
  /** Action Required past their DateTime: left waiting, unsent. */
  waiting: number;
  /** Sent: now Messages of the log. */
  sent: number;
  /** Outcomes not written because the claim was lost meanwhile (updated, cancelled, or taken after the lease). */
  lost: number;
}

const noLog = { info() {}, warn() {}, error() {} };
const emptyRound = (): ScheduleRound => ({ claimed: 0, approved: 0, actionRequired: 0, waiting: 0, sent: 0, lost: 0 });

/** Groups rows by account, accounts ascending, rows in id order. */
function byAccount(rows: readonly ClaimedScheduled[]): [number, ClaimedScheduled[]][] {
  const groups = new Map<number, ClaimedScheduled[]>();
  for (const r of [...rows].sort((a, b) => a.id - b.id)) {
    let g = groups.get(r.account_id);
    if (!g) groups.set(r.account_id, (g = []));
    g.push(r);
  }
  return [...groups].sort((a, b) => a[0] - b[0]);
}

export class Scheduler {
  private readonly log: NonNullable<SchedulerOptions['log']>;
  private readonly poll: PollLoop;

  constructor(private readonly options: SchedulerOptions) {
    this.log = options.log ?? noLog;
    this.poll = new PollLoop({
      pollMs: options.pollMs,
      round: async () => (await this.runOnce()).claimed > 0,
      onError: (err) => this.log.error({ err }, 'scheduler round failed'),
    });
  }

  /** Starts the loop: rounds back to back while there is work, one every `pollMs` (real time) when idle. */
  start(): void {
    this.poll.start();
  }

  /** Stops the loop after the round in progress (its outcomes are written). */
  async stop(): Promise<void> {
    await this.poll.stop();
  }

  /** One round (see the class comment). Tests call it (or `drain`) with a manual clock instead of `start()`. */
  async runOnce(): Promise<ScheduleRound> {
    const { store, clock, batchSize, leaseMs } = this.options;
    const round = emptyRound();
    const now = clock.nowMs();
    const token = randomUUID();
    const claimed = await scheduled.claimDueScheduled(store.db, now, batchSize, now + leaseMs, token);
    round.claimed = claimed.length;
    if (claimed.length === 0) return round;

    const toCheck: ClaimedScheduled[] = [];
    const toSend: ClaimedScheduled[] = [];
    const putBack: { row: ClaimedScheduled; dueAt: number | null }[] = [];
    for (const m of claimed) {
      const at = m.scheduled_at * 1000;
      if (m.status_id === 3) {
        if (at <= now) toSend.push(m);
        else putBack.push({ row: m, dueAt: at }); // not yet (a lease ran out early): back to its time
      } else if (m.status_id === 2 && at <= now) {
        putBack.push({ row: m, dueAt: null });
        round.waiting++;
      } else toCheck.push(m);
    }
    if (putBack.length > 0) {
      await inTransaction(
        store,
        async (tx) => {
          for (const p of putBack) if (!(await scheduled.releaseClaim(tx, p.row.id, token, p.dueAt))) round.lost++;
        },
        { immediate: true },
      );
    }
    if (toCheck.length > 0) await this.check(toCheck, token, round);
    if (toSend.length > 0) await this.send(toSend, token, round);
    return round;
  }

  /** Runs rounds until one claims nothing, at most `maxRounds`. For tests with a manual clock. Returns the sum. */
  async drain(maxRounds = 1000): Promise<ScheduleRound> {
    const sum = emptyRound();
    for (let i = 0; i < maxRounds; i++) {
      const r = await this.runOnce();
      for (const k of Object.keys(sum) as (keyof ScheduleRound)[]) sum[k] += r[k];
      if (r.claimed === 0) break;
    }
    return sum;
  }

  /** Step 2 of the class comment. */
  private async check(rows: ClaimedScheduled[], token: string, round: ScheduleRound): Promise<void> {
    const { store, clock, prices } = this.options;
    const nowSeconds = clock.nowSeconds();
    const counts = { approved: 0, actionRequired: 0, lost: 0 };
    await inTransaction(
      store,
      async (tx) => {
        counts.approved = counts.actionRequired = counts.lost = 0;
        const blocked = await scheduled.findBlockedScheduled(
          tx,
          rows.map((r) => r.id),
        );
        for (const [accountId, mine] of byAccount(rows)) {
          await scheduled.lockCredits(tx, accountId);
          for (const m of mine) {
            const reason = blocked.get(m.id);
            if (reason === undefined) {
              const cost = messageCost(m.type_id, m.message, prices).credits;
              if (await debitCredits(tx, accountId, cost, nowSeconds)) {
                if (await scheduled.markChecked(tx, m.id, token, 3, cost, m.scheduled_at * 1000, '')) counts.approved++;
                else {
                  await refundCredits(tx, accountId, cost, nowSeconds);
                  counts.lost++;
                }
                continue;
              }
            }
            if (await scheduled.markChecked(tx, m.id, token, 2, 0, null, reason ?? 'NO_CREDITS')) {
              counts.actionRequired++;
              // API.md §12: scheduled.action_required, in the transaction that sets it.
              await emitEvent(tx, accountId, 'scheduled.action_required', () => scheduled.findScheduled(tx, accountId, m.id), nowSeconds);
            } else counts.lost++;
          }
        }
      },
      { immediate: true },
    );
    round.approved += counts.approved;
    round.actionRequired += counts.actionRequired;
    round.lost += counts.lost;
  }

  /** Step 4 of the class comment. */
  private async send(rows: ClaimedScheduled[], token: string, round: ScheduleRound): Promise<void> {
    const { store, clock, prices } = this.options;
    const nowMs = clock.nowMs();
    const nowSeconds = clock.nowSeconds();
    let sent = 0;
    await inTransaction(
      store,
      async (tx) => {
        sent = 0;
        for (const [accountId, mine] of byAccount(rows)) {
          const taken = await scheduled.takeForSending(
            tx,
            accountId,
            mine.map((m) => m.id),
            token,
          );
          for (const m of taken.sort((a, b) => a.id - b.id)) {
            await insertMessage(
              tx,
              accountId,
              {
                direction: DIRECTION_OUTBOUND,
                number: m.number,
                mobilePhone: m.mobile_phone,
                message: m.message,
                typeId: m.type_id,
                statusId: LOG_STATUS.QUEUED,
                segments: messageCost(m.type_id, m.message, prices).segments,
                credits: m.reserved_credits,
                batchId: null,
                scheduledMessageId: m.id,
                optOutExempt: 0,
                dueAt: nowMs,
                mmsTemplateId: m.type_id === MESSAGE_TYPE_MMS ? m.mms_template_id : null,
              },
              nowSeconds,
            );
            sent++;
          }
        }
      },
      { immediate: true },
    );
    round.sent += sent;
    round.lost += rows.length - sent;
    if (sent > 0) this.log.info({ sent }, 'scheduled messages queued');
  }
}
