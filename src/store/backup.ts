/**
 * `msgsvc backup` and `msgsvc restore` for SQLite (docs/guides/backup.md).
 *
 * Backup: SQLite's online backup API copies the database while servers keep writing to it. The
 * copy is one step of every page, so it is the database as one read transaction saw it (a
 * consistent snapshot: every transaction committed before the step began, none after), and writers
 * are never blocked (WAL: a reader does not stop them). The copy is written beside its destination
 * under a temporary name, checked (`PRAGMA integrity_check`), turned into a single file (rollback
 * journal mode, no `-wal` beside it) and only then renamed onto the destination; a failed backup
 * removes its partial file.
 *
 * Restore: the file must be a SQLite database that passes `PRAGMA integrity_check` and carries
 * msgsvc's migrations (none unknown to this version). It is refused, with nothing changed, while
 * any process has the database open (src/store/in-use.ts, and an exclusive lock on the database
 * file itself for processes other than msgsvc). Otherwise the file is copied next to the database
 * under a temporary name, checked again, and renamed onto it: a crash at any point leaves either the
 * old database or the new one, whole. The old database's `-wal` is checkpointed into it first and
 * its `-wal`, `-shm` and `-journal` removed before the rename, so none of them can be replayed onto
 * the restored file.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { holdInUseLock, lockPathOf, takeExclusiveLock } from './in-use.ts';

/** A backup or restore that cannot be done, for a reason the user can act on (the message says which). */
export class BackupError extends Error {
  override name = 'BackupError';
}

/** `msgsvc restore` refused: some process has the database open. Nothing was changed. */
export class DatabaseInUseError extends BackupError {
  override name = 'DatabaseInUseError';
}

/** What `backupSqlite` made. */
export interface BackupReport {
  /** The backup file (absolute path). */
  file: string;
  bytes: number;
  pages: number;
  /** Wall time of the whole backup, copy and check, in seconds. */
  seconds: number;
}

/** What `restoreSqlite` did. */
export interface RestoreReport {
  /** The database written (absolute path). */
  database: string;
  /** The file it was restored from (absolute path). */
  from: string;
  bytes: number;
  /** Migrations of this version the restored file does not have yet: the next start (or `msgsvc migrate`) applies them. */
  pendingMigrations: string[];
  /** Wall time, in seconds. */
  seconds: number;
}

// Every page in one step of the backup API: one read transaction, so the copy is one snapshot, and
// a write by another process between steps cannot make it start over (and over, under load).
const ALL_PAGES = 0x7fffffff;
const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');

// The migrations of this version, by name, as src/store/db.ts finds them (migrations/NNN_name.ts
// beside this module, .js once built): a database carries the names it has applied in `kysely_migration`.
const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);
const MODULE_EXT = extname(new URL(import.meta.url).pathname);
const MIGRATION_FILE = /^\d{3}_[a-z0-9_]+$/;

/** The names of this version's migrations, in order. */
export function knownMigrations(): string[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((file) => extname(file) === MODULE_EXT && MIGRATION_FILE.test(file.slice(0, -MODULE_EXT.length)))
    .map((file) => file.slice(0, -MODULE_EXT.length))
    .sort();
}

/** The files SQLite may keep beside a database (its journal, WAL and shared memory). */
function sidecars(path: string): string[] {
  return [`${path}-journal`, `${path}-wal`, `${path}-shm`];
}

function removeWithSidecars(path: string): void {
  for (const file of [path, ...sidecars(path)]) rmSync(file, { force: true });
}

/** Flushes a file (or a directory's entries) to disk. */
function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** True when the file at `path` starts with SQLite's 16-byte header string. */
function looksLikeSqlite(path: string): boolean {
  const fd = openSync(path, 'r');
  try {
    const head = Buffer.alloc(16);
    return readSync(fd, head, 0, 16, 0) === 16 && head.equals(SQLITE_MAGIC);
  } finally {
    closeSync(fd);
  }
}

/** `PRAGMA integrity_check` of an open database: [] when it answers `ok`, else its lines (at most 10). */
function integrityProblems(db: SQLite.Database): string[] {
  const rows = db.pragma('integrity_check') as { integrity_check: string }[];
  const lines = rows.map((r) => r.integrity_check);
  return lines.length === 1 && lines[0] === 'ok' ? [] : lines.slice(0, 10);
}

/**
 * Checks a copy made by backup or restore (it is the only connection to it): integrity_check
 * answers ok, and it becomes a single file (journal_mode DELETE: nothing in a `-wal` beside it).
 * @returns the names in its `kysely_migration` table ([] when it has none).
 * @throws BackupError naming what integrity_check found.
 */
function checkCopy(path: string, label: string): string[] {
  let db: SQLite.Database | undefined;
  try {
    db = new SQLite(path, { fileMustExist: true });
    const problems = integrityProblems(db);
    if (problems.length > 0) throw new BackupError(`${label} fails PRAGMA integrity_check: ${problems.join('; ')}`);
    db.pragma('journal_mode = DELETE');
    const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'kysely_migration'").get();
    return table ? (db.prepare('SELECT name FROM kysely_migration ORDER BY name').pluck().all() as string[]) : [];
  } catch (err) {
    // SQLITE_CORRUPT, SQLITE_NOTADB…: what integrity_check could not even run on.
    if (err instanceof BackupError) throw err;
    throw new BackupError(`${label} fails PRAGMA integrity_check: ${(err as Error).message}`);
  } finally {
    db?.close();
  }
}

/** `to` must not be the database or one of the files SQLite or msgsvc keep beside it. */
function refuseOwnFiles(database: string, other: string, what: string): void {
  if ([database, ...sidecars(database), lockPathOf(database)].includes(other)) {
    throw new BackupError(`${what} ${other} is the database itself or one of its own files`);
  }
}

/**
 * Copies the SQLite database at `dbPath` to `to` while servers use it (see the module's comment).
 * An existing file at `to` is replaced only by a copy that passed the check.
 * @throws BackupError when there is no database at `dbPath`, `to` is one of its files, or the copy
 *   fails `PRAGMA integrity_check` (the partial file is removed); DatabaseBeingRestoredError
 *   (src/store/in-use.ts) while a restore runs.
 */
export async function backupSqlite(dbPath: string, to: string): Promise<BackupReport> {
  const started = performance.now();
  const database = resolve(dbPath);
  const file = resolve(to);
  if (!existsSync(database)) throw new BackupError(`no database at ${database} (DATABASE_URL)`);
  refuseOwnFiles(database, file, '--to');
  mkdirSync(dirname(file), { recursive: true });
  const partial = `${file}.partial-${process.pid}`;
  // A restore must not replace the database during the copy: hold the lock every msgsvc process holds.
  const inUse = holdInUseLock(database);
  try {
    removeWithSidecars(partial);
    const source = new SQLite(database, { fileMustExist: true, timeout: 5000 });
    let pages: number;
    try {
      pages = (await source.backup(partial, { progress: () => ALL_PAGES })).totalPages;
    } finally {
      source.close();
    }
    checkCopy(partial, 'the copy');
    fsyncPath(partial);
    renameSync(partial, file);
    fsyncPath(dirname(file));
    return { file, bytes: statSync(file).size, pages, seconds: (performance.now() - started) / 1000 };
  } catch (err) {
    removeWithSidecars(partial);
    throw err;
  } finally {
    inUse.release();
  }
}

/**
 * True when some process has the SQLite database at `path` open, msgsvc or not: an exclusive lock
 * on the file cannot be had without waiting. When it can, the database's WAL is checkpointed into
 * it (so the file alone holds every committed transaction) before the lock is let go.
 */
function openElsewhere(path: string): boolean {
  if (!existsSync(path)) return false;
  let db: SQLite.Database;
  try {
    db = new SQLite(path, { fileMustExist: true, timeout: 0 });
  } catch {
    return false; // not a database we can open: it is being replaced anyway
  }
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('COMMIT');
  } catch (err) {
    db.close();
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' && /^SQLITE_(BUSY|LOCKED)/.test(code);
  }
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
  } catch {
    // An old database that cannot be checkpointed is replaced all the same.
  }
  db.close();
  return false;
}

/**
 * Writes the SQLite database file `from` (a backup) to the database at `dbPath` (see the module's
 * comment).
 * @throws DatabaseInUseError when some process has the database open (nothing is changed);
 *   BackupError when `from` is missing, is not a SQLite database, fails `PRAGMA integrity_check`,
 *   carries no msgsvc migration or one this version does not know (a backup of a newer msgsvc).
 */
export async function restoreSqlite(dbPath: string, from: string): Promise<RestoreReport> {
  const started = performance.now();
  const database = resolve(dbPath);
  const source = resolve(from);
  if (!existsSync(source) || !statSync(source).isFile()) throw new BackupError(`no file at ${source}`);
  refuseOwnFiles(database, source, '--from');
  if (!looksLikeSqlite(source)) throw new BackupError(`${source} is not a SQLite database`);
  mkdirSync(dirname(database), { recursive: true });

  const lock = takeExclusiveLock(database);
  const inUse = (by: string) =>
    new DatabaseInUseError(`refused: ${database} is in use by ${by}; stop it, then restore again (nothing was changed)`);
  if (!lock) throw inUse('a msgsvc process (serve, worker or another command)');
  const temp = `${database}.restore-${process.pid}.tmp`;
  try {
    if (openElsewhere(database)) throw inUse('another process');
    // What an earlier restore killed half-way left behind (no other restore runs: we hold the lock).
    const prefix = `${basename(database)}.restore-`;
    for (const name of readdirSync(dirname(database))) {
      if (name.startsWith(prefix) && /\.tmp(-journal|-wal|-shm)?$/.test(name)) rmSync(join(dirname(database), name), { force: true });
    }

    // The copy, through the backup API: it reads `from` consistently, its own -wal included.
    let reader: SQLite.Database;
    try {
      reader = new SQLite(source, { readonly: true, fileMustExist: true });
    } catch (err) {
      throw new BackupError(`cannot open ${source}: ${(err as Error).message}`);
    }
    try {
      await reader.backup(temp, { progress: () => ALL_PAGES });
    } catch (err) {
      throw new BackupError(`cannot read ${source}: ${(err as Error).message}`);
    } finally {
      reader.close();
    }
    const applied = checkCopy(temp, source);
    const known = knownMigrations();
    if (!applied.includes(known[0]!)) throw new BackupError(`${source} is not a msgsvc database (its kysely_migration has no ${known[0]})`);
    const unknown = applied.filter((name) => !known.includes(name));
    if (unknown.length > 0) {
      throw new BackupError(
        `${source} was made by a newer msgsvc (migrations ${unknown.join(', ')} are unknown here): upgrade msgsvc first`,
      );
    }
    fsyncPath(temp);

    // The swap: no -wal, -shm or -journal of the old file may stay to be replayed onto the new one.
    for (const file of sidecars(database)) rmSync(file, { force: true });
    renameSync(temp, database);
    fsyncPath(dirname(database));
    return {
      database,
      from: source,
      bytes: statSync(database).size,
      pendingMigrations: known.filter((name) => !applied.includes(name)),
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    removeWithSidecars(temp);
    lock.release();
  }
}
