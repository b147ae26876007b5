import type { Clock } from '../lib/time.ts';
import { inTransaction, type Store } from '../store/db.ts';
import * as repo from '../store/repositories/retention.ts';

/**
 * Retention of the message log (MSGSVC_RETENTION_DAYS; docs/guides/backup.md "Retention").
 *
 * What goes, once a day, when the setting is above 0 (cutoff = now − days × 86,400 s):
 * - messages created before the cutoff (their DateCreated), in every status but Queued (1): a
 *   Queued message, claimed or waiting (quiet hours, a retry), has still to be sent, and is never
 *   deleted; a Sent one that never got its receipt is deleted like a final one (a receipt that
 *   comes later finds no message, is parked and dropped as stale);
 * - their tracked links and those links' clicks;
 * - conversations none of whose messages is left (one whose newest message went points at its
 *   newest remaining one; `unread` drops by the deleted inbound messages it counted);
 * - webhook deliveries created before the cutoff that ended (Delivered or Failed; a Pending one is
 *   kept);
 * - inbound once-keys (`carrier_inbound`) received before the cutoff.
 * Kept: the credit ledger and the consent ledger (with the balances), scheduled messages, batches,
 * contacts and everything else.
 *
 * How: per account, windows of at most `batchSize` messages in created_at order, each deleted in
 * one short transaction of its own (the window's link clicks before it, in statements of at most
 * `batchSize` rows). The size shrinks (halves, down to 50) after a step that took over twice
 * `targetStepMs` and grows back after quick ones, so that a step takes about that long on any
 * disk. After each step the purge rests as long as the step took (`restRatio` 1): at most half of
 * the database's time (on SQLite, of the event loop's, which it shares with the requests) goes to
 * it. On SQLite the WAL checkpoints run on a thread of their own while the purge runs, and after
 * each write the purge waits for that thread to checkpoint it (src/store/repositories/retention.ts
 * withCheckpointThread): so no COMMIT on the event loop ever copies the purge's pages into the
 * database, and the WAL stays small. bench/retention.ts, 1,000,000 old messages purged while
 * sms/send went on: the longest step 11 ms on SQLite, 93 ms on PostgreSQL. A window whose rows are
 * locked by others (PostgreSQL) is retried `busyRetries` times, then left for the next day.
 */

/** How often the purge runs: once a day, in seconds. */
export const RETENTION_INTERVAL_SECONDS = 86_400;

/** Tuning of one purge. */
export interface PurgeOptions {
  /** Rows per statement and messages per transaction at most (default 500). */
  batchSize?: number;
  /** The time a step should take, in ms (default 20): the batch shrinks after a step above twice that, grows after one below half. */
  targetStepMs?: number;
  /** Rest after each step, as a multiple of the time the step took (default 1; 0: only yield to the event loop). */
  restRatio?: number;
  /** Retries of a window found locked by others (default 10), `busyWaitMs` × attempt apart (default 100 ms). */
  busyRetries?: number;
  busyWaitMs?: number;
  /** Stops the purge between two steps (what was deleted stays deleted). */
  signal?: AbortSignal;
}

/** What one purge did. */
export interface PurgeResult {
  /** Epoch seconds: what was created before this went. */
  cutoff: number;
  messages: number;
  links: number;
  clicks: number;
  conversations: number;
  deliveries: number;
  inboundKeys: number;
  /** Statements and transactions run, and the longest of them, in ms: the longest a lock was held. */
  steps: number;
  maxStepMs: number;
  /** Which step that was: `messages` (a window's read), `clicks`, `window` (a window's transaction), `deliveries` or `inbound`. */
  maxStepKind: string;
  /** Messages of windows left for the next run because their rows stayed locked by others. */
  skipped: number;
  /** Wall time, in seconds. */
  seconds: number;
  /** True when `signal` stopped it before the end. */
  aborted: boolean;
}

class Aborted extends Error {}

/**
 * Deletes what MSGSVC_RETENTION_DAYS no longer keeps (see the module's comment).
 * @param now epoch seconds.
 * @param days MSGSVC_RETENTION_DAYS; 0 deletes nothing.
 * @throws what the store throws (a window found locked by others is retried, then skipped, not thrown).
 */
export async function purgeOldMessages(store: Store, now: number, days: number, options: PurgeOptions = {}): Promise<PurgeResult> {
  const started = performance.now();
  const batch = options.batchSize ?? 500;
  const restRatio = options.restRatio ?? 1;
  const targetStepMs = options.targetStepMs ?? 20;
  // The window's size now: at most `batch`, at least 50 (or `batch`, when smaller).
  const floorSize = Math.min(50, batch);
  let size = batch;
  const busyRetries = options.busyRetries ?? 10;
  const busyWaitMs = options.busyWaitMs ?? 100;
  const cutoff = now - days * 86_400;
  const result: PurgeResult = {
    cutoff,
    messages: 0,
    links: 0,
    clicks: 0,
    conversations: 0,
    deliveries: 0,
    inboundKeys: 0,
    steps: 0,
    maxStepMs: 0,
    maxStepKind: '',
    skipped: 0,
    seconds: 0,
    aborted: false,
  };
  if (days <= 0) return result;

  /**
   * Runs one statement or transaction, timed; sizes the next ones from its time; rests
   * (restRatio) and checks the signal.
   */
  const step = async <T>(kind: string, fn: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    const value = await fn();
    const ms = performance.now() - t0;
    result.steps++;
    if (ms > result.maxStepMs) {
      result.maxStepMs = ms;
      result.maxStepKind = kind;
    }
    if (ms > 2 * targetStepMs) size = Math.max(floorSize, Math.floor(size / 2));
    else if (ms < targetStepMs / 2) size = Math.min(batch, Math.ceil(size * 1.25));
    await rest(ms * restRatio);
    if (options.signal?.aborted) throw new Aborted();
    return value;
  };

  // After each window's transaction: the SQLite WAL checkpointed (src/store/repositories/retention.ts).
  let settle: () => Promise<void> = () => Promise.resolve();

  /** One window's messages: their clicks, then the messages, links and threads in one transaction; retried while locked. */
  const deleteWindow = async (accountId: number, ids: number[]): Promise<number> => {
    for (let attempt = 0; ; attempt++) {
      try {
        for (;;) {
          const limit = size;
          const n = await step('clicks', () => repo.deleteLinkClicks(store.db, accountId, ids, limit));
          result.clicks += n;
          if (n > 0) await settle();
          if (n < limit) break;
        }
        const deleted = await step('window', () => inTransaction(store, (tx) => repo.deleteMessageWindow(tx, accountId, ids)));
        await settle();
        result.messages += deleted.messages;
        result.links += deleted.links;
        result.conversations += deleted.conversations;
        return deleted.messages;
      } catch (err) {
        if (!repo.isRetentionBusy(err)) throw err;
        if (attempt >= busyRetries) {
          result.skipped += ids.length;
          return 0;
        }
        await rest(busyWaitMs * (attempt + 1));
        if (options.signal?.aborted) throw new Aborted();
      }
    }
  };

  try {
    await repo.withCheckpointThread(store, (settled) => {
      settle = settled;
      return purgeAll();
    });
  } catch (err) {
    if (!(err instanceof Aborted)) throw err;
    result.aborted = true;
  }
  result.seconds = (performance.now() - started) / 1000;
  return result;

  async function purgeAll(): Promise<void> {
    for (const accountId of await repo.accountIds(store.db)) {
      // Windows in created_at order. Deleted rows are gone from the next window; the kept ones of
      // the last window's second are read again, and a window of one second that deleted nothing
      // (all Queued, or locked by others) moves on to the next second: what is left of that
      // second waits for the next day.
      for (let fromAt = Number.MIN_SAFE_INTEGER; ;) {
        const limit = size;
        const rows = await step('messages', () => repo.oldMessageWindow(store.db, accountId, cutoff, fromAt, limit));
        if (rows.length === 0) break;
        const ids = rows.filter((r) => r.status_id !== 1).map((r) => r.id);
        const deleted = ids.length > 0 ? await deleteWindow(accountId, ids) : 0;
        if (rows.length < limit) break;
        const lastAt = rows[rows.length - 1]!.created_at;
        fromAt = lastAt === fromAt && deleted === 0 ? lastAt + 1 : lastAt;
      }
    }
    for (let afterId = 0; ;) {
      const limit = size;
      const window = await step('deliveries', () => repo.deleteEndedDeliveries(store.db, afterId, cutoff, limit));
      result.deliveries += window.deleted;
      if (window.deleted > 0) await settle();
      // Deliveries are written in id order: a window with nothing old in it ends the old ones.
      if (window.lastId === undefined || window.old === 0) break;
      afterId = window.lastId;
    }
    for (;;) {
      const limit = size;
      const n = await step('inbound', () => repo.deleteInboundKeys(store.db, cutoff * 1000, limit));
      result.inboundKeys += n;
      if (n > 0) await settle();
      if (n < limit) break;
    }
  }
}

/** Waits `ms` (real time) when above 0, else lets the event loop run once (setImmediate). */
function rest(ms: number): Promise<void> {
  return new Promise((resolve) => (ms >= 1 ? setTimeout(resolve, ms) : setImmediate(resolve)));
}

/** Where the purge reports (the host's pino logger). */
export interface RetentionLog {
  info(obj: object, msg: string): void;
}

/** The daily purge of one host (src/server.ts runs `runIfDue` in its hourly housekeeping round). */
export interface Retention {
  /**
   * Runs the purge when MSGSVC_RETENTION_DAYS is above 0 and none started in the last
   * RETENTION_INTERVAL_SECONDS by the clock (the first call always runs it); resolves when it is
   * done, with its result, or at once with undefined when it was not due.
   */
  runIfDue(): Promise<PurgeResult | undefined>;
  /** Stops a purge in progress between two steps and waits for it. */
  stop(): Promise<void>;
}

/**
 * The daily purge (see purgeOldMessages), run at most once per RETENTION_INTERVAL_SECONDS of
 * `clock`: the last start is kept in memory, so each host that runs the background loops purges
 * when it starts and then once a day (several hosts purging the same rows delete each row once).
 * @param deps.days MSGSVC_RETENTION_DAYS (0: never runs).
 * @throws from runIfDue, what the purge threw (the database unavailable…); that run is then due
 *   again at the next call.
 */
export function createRetention(deps: { store: Store; clock: Clock; days: number; log?: RetentionLog; options?: PurgeOptions }): Retention {
  let lastStart: number | undefined;
  let running: Promise<PurgeResult> | undefined;
  const controller = new AbortController();
  return {
    async runIfDue() {
      if (deps.days <= 0 || running || controller.signal.aborted) return undefined;
      const now = deps.clock.nowSeconds();
      if (lastStart !== undefined && now - lastStart < RETENTION_INTERVAL_SECONDS) return undefined;
      lastStart = now;
      running = purgeOldMessages(deps.store, now, deps.days, { ...deps.options, signal: controller.signal });
      try {
        const result = await running;
        deps.log?.info({ retention: { ...result, seconds: Math.round(result.seconds * 100) / 100 } }, 'retention purge done');
        return result;
      } catch (err) {
        lastStart = undefined; // failed (the database was unavailable…): due again at the next round
        throw err;
      } finally {
        running = undefined;
      }
    },
    async stop() {
      controller.abort();
      await running?.catch(() => undefined);
    },
  };
}
