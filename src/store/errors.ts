/** True when a write failed on a unique index (SQLite SQLITE_CONSTRAINT_UNIQUE/PRIMARYKEY, PostgreSQL 23505). */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH',
  '57P01', '57P02', '57P03', // admin_shutdown, crash_shutdown, cannot_connect_now
  '57014', // query_canceled: statement_timeout fired
  '53300', // too_many_connections
  'SQLITE_BUSY', 'SQLITE_LOCKED',
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
  return /Connection terminated|timeout exceeded when trying to connect|Query read timeout|connection timeout|Client has encountered a connection error/i.test(message);
}
