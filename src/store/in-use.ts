/**
 * Whether a SQLite database is in use, for `msgsvc restore` (docs/guides/backup.md, "How restore
 * knows the database is in use").
 *
 * Every msgsvc process that opens a SQLite file (`serve` and its workers, `worker`, every other
 * command, `backup`) first takes a SHARED lock on a sidecar file next to it, `DB.lock` (an empty
 * SQLite database of its own, held by a read transaction that stays open until the store closes).
 * `msgsvc restore` takes the EXCLUSIVE lock on the same file, without waiting: it gets it only when
 * no msgsvc process has the database open, and while it holds it no msgsvc process can open the
 * database (opening waits up to `IN_USE_WAIT_MS`, then fails saying a restore is running).
 *
 * These are the operating system's advisory file locks (POSIX `fcntl`, through SQLite): they belong
 * to the process and go with it, whatever way it ends. A server killed with SIGKILL leaves nothing
 * behind that could block a restore, and no lease or heartbeat has to run out first. The sidecar,
 * not the database file itself, carries the lock: a read transaction held open on the database
 * would keep WAL checkpoints from ever completing.
 */
import SQLite from 'better-sqlite3';

/** How long opening a store waits for a running `msgsvc restore` to finish, in ms. */
export const IN_USE_WAIT_MS = 5000;

/** The sidecar lock file of the SQLite database at `path`: `{path}.lock`. */
export function lockPathOf(path: string): string {
  return `${path}.lock`;
}

/** Thrown when a SQLite database cannot be opened because `msgsvc restore` is replacing it. */
export class DatabaseBeingRestoredError extends Error {
  override name = 'DatabaseBeingRestoredError';
}

/** True when `err` is SQLite's "database is locked" (SQLITE_BUSY and its extended codes). */
function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/** A lock held on a database's sidecar; `release()` lets it go (idempotent). */
export interface HeldLock {
  release(): void;
}

/**
 * Takes the SHARED in-use lock of the SQLite database at `path` (see the module's comment), waiting
 * up to `waitMs` for a running restore. Paths SQLite does not keep in a file of their own
 * (`:memory:`, `file:` URIs) get a lock that holds nothing.
 * @param waitMs how long to wait for a restore to let go, in ms (default IN_USE_WAIT_MS).
 * @throws DatabaseBeingRestoredError when a restore still holds the lock after `waitMs`.
 */
export function holdInUseLock(path: string, waitMs = IN_USE_WAIT_MS): HeldLock {
  if (path === ':memory:' || path === '' || path.startsWith('file:')) return { release() {} };
  const lock = new SQLite(lockPathOf(path), { timeout: waitMs });
  try {
    lock.exec('BEGIN');
    // A read is what takes the SHARED lock; it is held until the transaction ends.
    lock.prepare('SELECT count(*) FROM sqlite_master').get();
  } catch (err) {
    lock.close();
    if (isBusy(err)) {
      throw new DatabaseBeingRestoredError(
        `the database ${path} is being restored (msgsvc restore holds ${lockPathOf(path)}); start again once it has finished`,
      );
    }
    throw err;
  }
  return {
    release() {
      if (lock.open) lock.close();
    },
  };
}

/**
 * Takes the EXCLUSIVE in-use lock of the SQLite database at `path` without waiting: held only when
 * no msgsvc process has the database open. While held, opening the database in msgsvc waits, then
 * fails (holdInUseLock).
 * @returns the held lock, or undefined when some process holds the SHARED lock (the database is in use).
 */
export function takeExclusiveLock(path: string): HeldLock | undefined {
  const lock = new SQLite(lockPathOf(path), { timeout: 0 });
  try {
    lock.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    lock.close();
    if (isBusy(err)) return undefined;
    throw err;
  }
  return {
    release() {
      if (lock.open) lock.close();
    },
  };
}
