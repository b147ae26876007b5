/**
 * The store's errors. A constraint that refuses a write reaches the layers above as a typed error
 * (UniqueViolation, ForeignKeyViolation), translated from the driver's error where the query runs
 * (src/store/driver-errors.ts): the domain catches the type, and never reads SQLite's `SQLITE_*`
 * names or PostgreSQL's SQLSTATE codes. Any other driver error passes through unchanged.
 */

/** A write the database refused on a constraint. `code` and `message` are the driver's; `cause` is its error. */
export class StoreError extends Error {
  /** The driver's code (`SQLITE_CONSTRAINT_UNIQUE`, `23505`, …), kept for logs. */
  readonly code: string;

  constructor(driverError: Error, code: string) {
    super(driverError.message, { cause: driverError });
    this.name = new.target.name;
    this.code = code;
  }
}

/** A write would have put a second row under a unique index or primary key. */
export class UniqueViolation extends StoreError {}

/** A write referenced a row that does not exist (or deleted one still referenced): a foreign key. */
export class ForeignKeyViolation extends StoreError {}

const UNIQUE_CODES: ReadonlySet<string> = new Set(['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY', '23505']);
const FOREIGN_KEY_CODES: ReadonlySet<string> = new Set(['SQLITE_CONSTRAINT_FOREIGNKEY', '23503']);

/**
 * The store's typed error for a driver error (better-sqlite3's SqliteError, pg's DatabaseError):
 * UniqueViolation or ForeignKeyViolation for those constraints, else `err` itself.
 */
export function storeErrorOf(err: unknown): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !(err instanceof Error) || err instanceof StoreError) return err;
  if (UNIQUE_CODES.has(code)) return new UniqueViolation(err, code);
  if (FOREIGN_KEY_CODES.has(code)) return new ForeignKeyViolation(err, code);
  return err;
}

/**
 * True when a write failed on a unique index: a UniqueViolation, or a driver error that would
 * become one (for code holding the driver's error directly, e.g. the CLI and the store's tests).
 */
export function isUniqueViolation(err: unknown): boolean {
  if (err instanceof UniqueViolation) return true;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && UNIQUE_CODES.has(code);
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  '57P01',
  '57P02',
  '57P03', // admin_shutdown, crash_shutdown, cannot_connect_now
  '57014', // query_canceled: statement_timeout fired
  '53300', // too_many_connections
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
]);

/**
 * True when a database call failed because the database is unreachable, overloaded or timed out
 * (not because of the query): the request gets a 503 and may be retried.
 */
export function isStoreUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (!e) return false;
  if (typeof e.code === 'string' && (UNAVAILABLE_CODES.has(e.code) || e.code.startsWith('08'))) return true;
  const message = typeof e.message === 'string' ? e.message : '';
  return /Connection terminated|timeout exceeded when trying to connect|Query read timeout|connection timeout|Client has encountered a connection error/i.test(
    message,
  );
}
