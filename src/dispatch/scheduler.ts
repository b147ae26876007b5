import { randomUUID } from 'node:crypto';
import { PollLoop } from './poll-loop.ts';
import { inTransaction, type Store } from '../store/db.ts';
import { emitEvent } from '../domain/webhooks.ts';
import { debitCredits, refundCredits } from '../store/repositories/credits.ts';
import { setMessageErrorCode } from '../store/repositories/inbound.ts';
import { insertMessage } from '../store/repositories/message-log.ts';
import * as scheduled from '../store/repositories/scheduled.ts';
import type { ClaimedScheduled } from '../store/repositories/scheduled.ts';
import type { Prices } from '../domain/segments.ts';
import { personalise, storeLinks, type PersonaliseDeps } from '../domain/personalise.ts';
import { DAILY_LIMIT, releaseDailyRoom, takeDailyRoom, type QuotaTime } from '../domain/quotas.ts';
import { NUMBER_LIMIT, senderFor, storedSender } from '../domain/sender-pool.ts';
import { ValidationFailedError } from '../domain/errors.ts';
import { nextOccurrence, parseRRule, type Occurrence } from '../domain/recurrence.ts';
import { DIRECTION_OUTBOUND, LOG_STATUS, MESSAGE_TYPE_MMS } from '../records/statuses.ts';
import type { Clock } from '../lib/time.ts';
import type { Db } from '../store/types.ts';

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
 *    recipient has not opted out, an MMS's template still holds a medium (API.md §10.7; else
 *    `NO_MEDIA`), and the cost can be debited now. Then 3 Approved and Scheduled,
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
 * Merge fields and tracked links (API.md §10.6): the scheduled message keeps `Message` as written.
 * The check reserves the cost of the text personalised for the recipient as it is then
 * (src/domain/personalise.ts). The send personalises it again (the contact may have changed since),
 * stores its links, and settles the difference with the reservation in its transaction: the
 * excess is refunded, the shortfall debited; a shortfall the balance cannot pay ends the message
 * Rejected `NO_CREDITS` at once (logged, its Credits its price, nothing kept: the reservation is
 * refunded; `message.rejected` is emitted).
 *
 * `MaxPerDay` (API.md §16, src/domain/quotas.ts): an occurrence counts on the day it is queued (the
 * send, step 4), in the service's time zone, not on the day it was scheduled; the check (step 2)
 * does not look at it, since the day's count is only known on the day. An occurrence that comes
 * when the account has reached its MaxPerDay is not queued: like one its credits cannot pay, it
 * ends Rejected at once, here with `ErrorCode` `DAILY_LIMIT` (logged, its Credits its price, the
 * reservation refunded, `message.rejected` emitted, not counted), and a recurring message moves on
 * to its next occurrence as after any send. It is not held over to the next day: a message
 * scheduled for its time is not sent at another one. The limit is looked at first: an occurrence
 * both over the limit and short of credits is `DAILY_LIMIT`.
 *
 * Recurring messages (`RRule`, src/domain/recurrence.ts): the row is the occurrence due next.
 * - The send of an occurrence that is not the last one does not delete the row: in the SAME
 *   transaction that queues the message it moves the row to the next occurrence (`scheduled_at`,
 *   its number), 1 Pending with nothing reserved, its check due at once. So the reservation of the
 *   next occurrence is an ordinary check, and a scheduler that dies between the two leaves a
 *   Pending row whose check any scheduler does later: no occurrence is skipped or sent twice.
 * - The occurrences whose time passed while no scheduler ran (the service was down) are not sent
 *   one by one: the late one is sent once, and the next is the first occurrence still ahead (the
 *   skipped ones count for COUNT).
 * - A recurring message Action Required waits with its check due at its occurrence; when the
 *   occurrence passes unsent it moves to the next occurrence, Pending (checked at once); after the
 *   last one it stays listed, unsent, as a single message does.
 *
 * A scheduler that dies after a claim leaves its rows leased; they are due again when the lease
 * runs out, and the next round does their work (a check or a send) once: every write is guarded by
 * the claim's token, and a send deletes or moves the row in the transaction that queues the message.
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
  /** MSGSVC_LINK_DOMAIN: the base of the tracked links of messages scheduled with `ShortenLinks` 1 (unset: links are left alone). */
  linkDomain?: string | undefined;
  /** MSGSVC_TIMEZONE: the IANA zone whose calendar days MaxPerDay counts (API.md §16); default `UTC`, the setting's default. */
  timeZone?: string;
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
  /** Recurring ones Action Required past their occurrence: moved to the next occurrence, unsent. */
  skipped: number;
  /** Sent: now Messages of the log. */
  sent: number;
  /** Outcomes not written because the claim was lost meanwhile (updated, cancelled, or taken after the lease). */
  lost: number;
}

const noLog = { info() {}, warn() {}, error() {} };

/** ErrorCode of an occurrence whose personalised text costs more than the balance can pay (API.md §9.11). */
const NO_CREDITS = 'NO_CREDITS';
const NUMBER_INACTIVE = 'NUMBER_INACTIVE';
const emptyRound = (): ScheduleRound => ({ claimed: 0, approved: 0, actionRequired: 0, waiting: 0, skipped: 0, sent: 0, lost: 0 });

/** The occurrence after the one a recurring row stands for that is after `nowSeconds`; undefined for the last (or a single message). */
function nextOf(m: ClaimedScheduled, nowSeconds: number): Occurrence | undefined {
  if (m.rrule === '' || m.rrule_start === null) return undefined;
  const rule = parseRRule(m.rrule);
  if (!rule) return undefined;
  return nextOccurrence(
    { rule, startSeconds: m.rrule_start, zone: m.rrule_zone || 'UTC' },
    { index: m.rrule_occurrence, atSeconds: m.scheduled_at },
    nowSeconds,
  );
}

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
    const skip: { row: ClaimedScheduled; next: Occurrence }[] = [];
    for (const m of claimed) {
      const at = m.scheduled_at * 1000;
      if (m.status_id === 3) {
        if (at <= now) toSend.push(m);
        else putBack.push({ row: m, dueAt: at }); // not yet (a lease ran out early): back to its time
      } else if (m.status_id === 2 && at <= now) {
        const next = nextOf(m, clock.nowSeconds());
        if (next) skip.push({ row: m, next });
        else putBack.push({ row: m, dueAt: null });
      } else toCheck.push(m);
    }
    if (putBack.length > 0 || skip.length > 0) {
      const counts = { waiting: 0, skipped: 0, lost: 0 };
      await inTransaction(
        store,
        async (tx) => {
          counts.waiting = counts.skipped = counts.lost = 0;
          for (const p of putBack) {
            if (!(await scheduled.releaseClaim(tx, p.row.id, token, p.dueAt))) counts.lost++;
            else if (p.dueAt === null) counts.waiting++;
          }
          // Nothing was reserved while Action Required: nothing to settle.
          for (const { row, next } of skip) {
            const moved = await scheduled.advanceOccurrence(
              tx,
              row.id,
              token,
              2,
              { scheduledAt: next.atSeconds, occurrence: next.index },
              now,
            );
            if (moved) counts.skipped++;
            else counts.lost++;
          }
        },
        { immediate: true },
      );
      round.waiting += counts.waiting;
      round.skipped += counts.skipped;
      round.lost += counts.lost;
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
    const { store, clock } = this.options;
    const deps = this.personaliseDeps();
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
              const cost = (await personalise(tx, deps, accountId, m.mobile_phone, m.message, m.type_id, m.shorten_links === 1)).credits;
              if (await debitCredits(tx, accountId, cost, nowSeconds, `scheduled:${m.id}`)) {
                if (await scheduled.markChecked(tx, m.id, token, 3, cost, m.scheduled_at * 1000, '')) counts.approved++;
                else {
                  await refundCredits(tx, accountId, cost, nowSeconds, `scheduled:${m.id}`);
                  counts.lost++;
                }
                continue;
              }
            }
            // A recurring one waits due at its occurrence (to move on when it passes unsent).
            const waitUntil = m.rrule === '' ? null : m.scheduled_at * 1000;
            if (await scheduled.markChecked(tx, m.id, token, 2, 0, waitUntil, reason ?? 'NO_CREDITS')) {
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

  private personaliseDeps(): PersonaliseDeps {
    return { prices: this.options.prices, linkDomain: this.options.linkDomain };
  }

  /**
   * Step 4 of the class comment: per account (ascending; its balance row locked first), the
   * messages whose time has come leave the list (the last or only occurrence) or move to their
   * next occurrence, and become Messages of the log, personalised now, the reservation settled.
   */
  private async send(rows: ClaimedScheduled[], token: string, round: ScheduleRound): Promise<void> {
    const { store, clock } = this.options;
    const deps = this.personaliseDeps();
    const nowMs = clock.nowMs();
    const nowSeconds = clock.nowSeconds();
    // The next occurrences are pure arithmetic: computed before the transaction.
    const next = new Map<number, Occurrence>();
    for (const m of rows) {
      const o = nextOf(m, nowSeconds);
      if (o) next.set(m.id, o);
    }
    let sent = 0;
    await inTransaction(
      store,
      async (tx) => {
        sent = 0;
        for (const [accountId, mine] of byAccount(rows)) {
          await scheduled.lockCredits(tx, accountId);
          const taken = await scheduled.takeForSending(
            tx,
            accountId,
            mine.filter((m) => !next.has(m.id)).map((m) => m.id),
            token,
          );
          for (const m of mine) {
            const o = next.get(m.id);
            if (o && (await scheduled.advanceOccurrence(tx, m.id, token, 3, { scheduledAt: o.atSeconds, occurrence: o.index }, nowMs)))
              taken.push(m);
          }
          for (const m of taken.sort((a, b) => a.id - b.id)) {
            await this.queueOccurrence(tx, deps, accountId, m, nowMs, nowSeconds);
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

  /**
   * The number an occurrence goes from (API.md §17), counted: its stored number when it has room
   * for this recipient, or (none stored) the sender pool's choice, or the first Active number when
   * the account no longer uses a pool. `NUMBER_LIMIT` when that number (or every number) is full
   * for this recipient, `NUMBER_INACTIVE` when it is no longer Active (or none is).
   */
  private async numberFor(
    tx: Db,
    accountId: number,
    m: ClaimedScheduled,
    at: QuotaTime,
  ): Promise<{ number: string } | { errorCode: typeof NUMBER_LIMIT | typeof NUMBER_INACTIVE }> {
    const sender = await storedSender(tx, accountId, m.number);
    if (sender === undefined) return { errorCode: NUMBER_INACTIVE };
    try {
      return { number: await senderFor(tx, accountId, m.mobile_phone, sender, at) };
    } catch (err) {
      if (err instanceof ValidationFailedError) return { errorCode: NUMBER_LIMIT };
      throw err;
    }
  }

  /**
   * Queues one taken occurrence (see the class comment): counted against MaxPerDay, the text
   * personalised now, its links stored, the reservation settled; Rejected `DAILY_LIMIT` when the
   * account has reached its MaxPerDay today, `NO_CREDITS` when the balance cannot pay the rest.
   */
  private async queueOccurrence(
    tx: Db,
    deps: PersonaliseDeps,
    accountId: number,
    m: ClaimedScheduled,
    nowMs: number,
    nowSeconds: number,
  ): Promise<void> {
    const p = await personalise(tx, deps, accountId, m.mobile_phone, m.message, m.type_id, m.shorten_links === 1);
    const reserved = m.reserved_credits;
    let errorCode: typeof DAILY_LIMIT | typeof NUMBER_LIMIT | typeof NUMBER_INACTIVE | typeof NO_CREDITS | undefined;
    const reference = `scheduled:${m.id}`;
    // MaxPerDay (API.md §16), on the day it is queued: the caller holds the balance row (lockCredits),
    // the lock order of src/store/repositories/quotas.ts.
    const at: QuotaTime = { nowSeconds, timeZone: this.options.timeZone ?? 'UTC' };
    let sender: { number: string } | { errorCode: typeof NUMBER_LIMIT | typeof NUMBER_INACTIVE } = { number: m.number };
    if (!(await takeDailyRoom(tx, accountId, 1, at)).ok) {
      await refundCredits(tx, accountId, reserved, nowSeconds, reference);
      errorCode = DAILY_LIMIT;
    } else if ('errorCode' in (sender = await this.numberFor(tx, accountId, m, at))) {
      // Its number (or every number of the pool) is full, or none is Active (API.md §17): not
      // queued, not counted.
      await refundCredits(tx, accountId, reserved, nowSeconds, reference);
      await releaseDailyRoom(tx, accountId, 1, at);
      errorCode = sender.errorCode;
    } else if (p.credits < reserved) await refundCredits(tx, accountId, reserved - p.credits, nowSeconds, reference);
    else if (p.credits > reserved && !(await debitCredits(tx, accountId, p.credits - reserved, nowSeconds, reference))) {
      await refundCredits(tx, accountId, reserved, nowSeconds, reference);
      await releaseDailyRoom(tx, accountId, 1, at); // not queued: not counted
      errorCode = NO_CREDITS;
    }
    const rejected = errorCode !== undefined;
    const message = await insertMessage(
      tx,
      accountId,
      {
        direction: DIRECTION_OUTBOUND,
        number: 'number' in sender ? sender.number : m.number,
        mobilePhone: m.mobile_phone,
        message: p.message,
        typeId: m.type_id,
        statusId: rejected ? LOG_STATUS.REJECTED : LOG_STATUS.QUEUED,
        segments: p.segments,
        credits: p.credits,
        batchId: null,
        scheduledMessageId: m.id,
        optOutExempt: 0,
        dueAt: rejected ? null : nowMs,
        mmsTemplateId: m.type_id === MESSAGE_TYPE_MMS ? m.mms_template_id : null,
        priority: Number(m.priority),
      },
      nowSeconds,
    );
    if (p.links.length > 0) await storeLinks(tx, accountId, message.id, p.links, nowSeconds);
    if (errorCode !== undefined) {
      await setMessageErrorCode(tx, accountId, message.id, errorCode);
      // API.md §12.1: message.rejected, in the transaction that logs it Rejected.
      await emitEvent(tx, accountId, 'message.rejected', { ...message, error_code: errorCode }, nowSeconds);
    }
  }
}
