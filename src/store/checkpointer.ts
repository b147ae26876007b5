import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * WAL checkpoints off the event loop (issue 15, "WAL checkpoints off the event loop").
 *
 * SQLite's own automatic checkpoint runs inside the COMMIT that takes the WAL past 1,000 pages:
 * that request's thread copies up to 4 MB of pages into the database file, a stall of several
 * milliseconds for every request queued behind it on the one event loop. Instead, the request
 * connection is opened with `wal_autocheckpoint = 0` and a worker thread with its own connection
 * to the same file runs `PRAGMA wal_checkpoint(PASSIVE)` every `intervalMs`: PASSIVE never waits
 * for or blocks readers and writers (it copies what it can and leaves the rest for next time), so
 * the request thread only ever appends to the WAL. The next writer after a complete checkpoint
 * rewinds the WAL to its start, as before; `journal_size_limit` truncates the file back to
 * 64 MiB when a burst made it larger.
 *
 * If the thread fails or exits, the request connection gets its automatic checkpoint back
 * (`onLost`), so the WAL never grows without bound.
 *
 * Opt-in (MSGSVC_SQLITE_CHECKPOINT_MS > 0): it pays where the thread has a core of its own
 * (bench/levers.ts: commit p99 ~1 ms → 0.04 ms, max ~4 ms → ≤ 1 ms at 200 ms); with the whole
 * process on one core the checkpoint competes with the event loop for it, and the writes' p99 at
 * half load in npm run bench got worse (docs/PERFORMANCE.md, third round).
 */
export interface Checkpointer {
  /** Stops the thread (its connection is closed). Idempotent. */
  close(): Promise<void>;
  /**
   * The number of checkpoints the thread has completed so far; 0 before its first and after it
   * stopped. Lets a test wait for a round instead of guessing at the scheduler (time in ms is not
   * a promise of a round on a loaded machine).
   */
  rounds(): Promise<number>;
}

/**
 * The thread's whole program, evaluated as a CommonJS script (`eval: true`): no file of its own to
 * find next to a build or under tsx. better-sqlite3 is loaded from the path the main thread
 * resolved, so it is the same module whatever the working directory.
 */
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
// Never wait on a lock: a checkpoint that finds the database busy is simply retried next tick.
db.pragma('busy_timeout = 0');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
let rounds = 0;
const timer = setInterval(() => {
  try {
    checkpoint.get();
    rounds++;
  } catch (err) {
    // SQLITE_BUSY/LOCKED: another connection is checkpointing or the file is being set up.
    if (!/busy|locked/i.test(String(err && err.code))) throw err;
  }
}, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message === 'stats') parentPort.postMessage({ rounds });
  if (message === 'close') {
    clearInterval(timer);
    db.close();
    parentPort.close();
  }
});
`;

/** Bytes the WAL file is truncated back to after a checkpoint rewinds it (journal_size_limit). */
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * Starts the checkpoint thread for the SQLite file at `path`.
 * @param intervalMs milliseconds between two PASSIVE checkpoints (MSGSVC_SQLITE_CHECKPOINT_MS).
 * @param onLost called once if the thread stops on its own (error or exit): the caller turns the
 *   connection's automatic checkpoint back on.
 */
export function startCheckpointer(path: string, intervalMs: number, onLost: (err?: Error) => void): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(THREAD_SOURCE, { eval: true, workerData: { path, intervalMs, driver }, execArgv: [] });
  // The thread must not keep a process alive that has nothing else to do.
  worker.unref();
  let closing = false;
  let lost = false;
  // Callers of rounds() waiting for the thread's answer, oldest first; answered 0 if it goes.
  const waiting: ((rounds: number) => void)[] = [];
  const lose = (err?: Error) => {
    for (const answer of waiting.splice(0)) answer(0);
    if (closing || lost) return;
    lost = true;
    onLost(err);
  };
  worker.on('error', (err) => lose(err));
  worker.on('exit', () => lose());
  let closed: Promise<void> | undefined;
  worker.on('message', (message: { rounds: number }) => waiting.shift()?.(message.rounds));
  return {
    rounds() {
      if (closing || lost) return Promise.resolve(0);
      return new Promise<number>((resolve) => {
        waiting.push(resolve);
        worker.postMessage('stats');
      });
    },
    close() {
      if (closed) return closed;
      closing = true;
      closed = new Promise<void>((resolve) => {
        if (lost) return resolve();
        worker.once('exit', () => resolve());
        // Whoever awaits the close keeps the process alive until the thread is gone.
        worker.ref();
        worker.postMessage('close');
        // A thread stuck in a checkpoint still goes: terminate after a bound.
        setTimeout(() => void worker.terminate(), 2000).unref();
      });
      return closed;
    },
  };
}
