import { mkdirSync, readdirSync } from 'node:fs';
import { dirname, extname } from 'node:path';
import SQLite from 'better-sqlite3';
import { createRequire } from 'node:module';
import type Pg from 'pg';
import { Kysely, Migrator, sql, PostgresDialect, SqliteDialect, type Migration, type MigrationProvider } from 'kysely';
import type { DatabaseConfig } from '../config.ts';
import { startCheckpointer, WAL_SIZE_LIMIT_BYTES, type Checkpointer } from './checkpointer.ts';
import { holdInUseLock } from './in-use.ts';
import { sqliteStatementFor, translatePgErrors } from './driver-errors.ts';
import type { Database } from './tables.ts';
import type { Dialect } from './dialect.ts';
import type { Db } from './types.ts';

export type { Dialect } from './dialect.ts';

/** An open database: the Kysely handle plus what callers need to know about it. */
export interface Store {
  readonly db: Kysely<Database>;
  readonly dialect: Dialect;
  /** Closes the connection (SQLite) or pool (PostgreSQL). Idempotent. */
  close(): Promise<void>;
}

// The better-sqlite3 connection behind each SQLite store's Kysely handle, for the store's own
// fast paths (src/store/prepared.ts, src/store/bulk.ts). Never handed outside src/store.
const sqliteHandles = new WeakMap<object, SQLite.Database>();
const checkpointers = new WeakMap<object, Checkpointer>();
const statementCaches = new WeakMap<SQLite.Database, Map<string, SQLite.Statement>>();
const STATEMENT_CACHE_SIZE = 500;

/**
 * The checkpoints completed so far by the checkpoint thread of this SQLite store
 * (src/store/checkpointer.ts); undefined when the store has no such thread.
 */
export function checkpointRounds(db: object): Promise<number> | undefined {
  return checkpointers.get(db)?.rounds();
}

/**
 * The better-sqlite3 connection behind `db` when `db` is a SQLite store's root handle (not a
 * transaction); undefined otherwise. For src/store only.
 */
export function sqliteHandle(db: object): SQLite.Database | undefined {
  return sqliteHandles.get(db);
}

/**
 * A prepared statement for `sql` on this connection, prepared once and reused: SQLite parses and
 * plans each distinct statement once instead of on every query. A statement still iterating
 * (busy) is not shared.
 */
export function cachedStatement(sqlite: SQLite.Database, sql: string): SQLite.Statement {
  let cache = statementCaches.get(sqlite);
  if (!cache) statementCaches.set(sqlite, (cache = new Map<string, SQLite.Statement>()));
  const cached = cache.get(sql);
  if (cached && !cached.busy) return cached;
  const statement = sqlite.prepare(sql);
  if (!cached) {
    // Our statements are a fixed set; anything else (one-off SQL) must not grow the cache forever.
    if (cache.size >= STATEMENT_CACHE_SIZE) cache.clear();
    cache.set(sql, statement);
  }
  return statement;
}

/**
 * A number that changes whenever another connection (another process, or another store on the same
 * file) commits a write: SQLite's `PRAGMA data_version`, a cheap read of the shared WAL index.
 * Undefined on PostgreSQL, which has no such signal; callers fall back to a short TTL there.
 */
export function externalWrites(db: object): number | undefined {
  const sqlite = sqliteHandles.get(db);
  if (!sqlite) return undefined;
  return (cachedStatement(sqlite, 'PRAGMA data_version').get() as { data_version: number }).data_version;
}

/** Resolves when the database answers a trivial query; rejects otherwise (readiness probe). */
export async function pingStore(store: Store): Promise<void> {
  await sql`select 1`.execute(store.db);
}

/**
 * Opens the database named by the config. SQLite runs in WAL mode with foreign keys on and
 * synchronous=NORMAL: a committed write survives a process crash (kill -9).
 */
export function openStore(config: DatabaseConfig): Store {
  if (config.kind === 'sqlite') {
    if (config.path !== ':memory:') mkdirSync(dirname(config.path), { recursive: true });
    // Held while the store is open, so that `msgsvc restore` refuses a database in use (src/store/in-use.ts).
    const inUse = holdInUseLock(config.path);
    let sqlite: SQLite.Database;
    try {
      sqlite = new SQLite(config.path);
    } catch (err) {
      inUse.release();
      throw err;
    }
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('busy_timeout = 5000');
    // 8 MiB of page cache (better-sqlite3's default is 16): it counts in the process's RSS, and
    // beyond the indexes' upper levels a million-contact database is read at random anyway.
    sqlite.pragma('cache_size = -8192');
    // Checkpoints on a thread of their own (src/store/checkpointer.ts) when configured: this
    // connection then only appends to the WAL, and gets SQLite's automatic checkpoint back if the
    // thread is lost.
    const checkpointMs = config.checkpointMs ?? 0;
    let checkpointer: Checkpointer | undefined;
    if (checkpointMs > 0 && config.path !== ':memory:' && !config.path.startsWith('file:')) {
      sqlite.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
      sqlite.pragma('wal_autocheckpoint = 0');
      checkpointer = startCheckpointer(config.path, checkpointMs, () => {
        if (sqlite.open) sqlite.pragma('wal_autocheckpoint = 1000');
      });
    }
    // Kysely prepares every query it runs; this hands it the cached statement instead (a write's
    // errors translated into the store's, src/store/driver-errors.ts).
    const database = { prepare: (sql: string) => sqliteStatementFor(sql, cachedStatement(sqlite, sql)), close: () => sqlite.close() };
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
    sqliteHandles.set(db, sqlite);
    if (checkpointer) checkpointers.set(db, checkpointer);
    let closed = false;
    return {
      db,
      dialect: 'sqlite',
      async close() {
        if (closed) return;
        closed = true;
        await checkpointer?.close();
        await db.destroy();
        // Kysely opens its driver on the first query: a store closed before any query would keep the connection.
        if (sqlite.open) sqlite.close();
        inUse.release();
      },
    };
  }
  // Loaded only for PostgreSQL: a SQLite process does not carry the driver (about 14 MB of RSS).
  const pg = createRequire(import.meta.url)('pg') as typeof Pg;
  // int8 (bigint) columns hold epoch seconds and credits: well inside Number's safe range.
  pg.types.setTypeParser(20, (v: string) => Number(v));
  // statement_timeout bounds every query on the server; query_timeout and connectionTimeoutMillis
  // bound the client side too, so a dead server means a fast error (503), never a hang.
  const pool = new pg.Pool({
    connectionString: config.url,
    max: config.poolSize,
    statement_timeout: config.statementTimeoutMs,
    query_timeout: config.statementTimeoutMs + 1000,
    connectionTimeoutMillis: Math.min(config.statementTimeoutMs, 5000),
    idleTimeoutMillis: 30_000,
  });
  // An idle client losing its connection emits 'error' on the pool; without a listener that
  // would crash the process. The next query reconnects.
  pool.on('error', () => {});
  // Likewise a checked-out client whose connection drops between queries: its pending and next
  // queries fail (and become 503s); the event itself must not crash the process.
  // Each client's writes fail with the store's typed errors (src/store/driver-errors.ts).
  pool.on('connect', (client) => {
    client.on('error', () => {});
    translatePgErrors(client);
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  let closed = false;
  return {
    db,
    dialect: 'postgres',
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy();
    },
  };
}

// The migrations folder beside this module: src/store/migrations/*.ts under tsx, dist/store/migrations/*.js
// once built (`npm run build` keeps the tree and rewrites the extensions).
const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);
const MODULE_EXT = extname(new URL(import.meta.url).pathname);
const MIGRATION_FILE = /^\d{3}_[a-z0-9_]+$/;

/**
 * Every migration of src/store/migrations, by name: a file `NNN_name.ts` is migration `NNN_name`
 * (the name the database records in `kysely_migration`, so it must never change once released).
 * Kysely applies pending ones in name order. Each file exports exactly one function,
 * `(dialect) => { up(db), down?(db) }`; a new migration is a new file, listed nowhere else
 * (docs/ARCHITECTURE.md, "Adding a resource").
 * @throws Error when a migration file does not export exactly one function.
 */
async function migrations(dialect: Dialect): Promise<Record<string, Migration>> {
  const names = readdirSync(MIGRATIONS_DIR)
    .filter((file) => extname(file) === MODULE_EXT && MIGRATION_FILE.test(file.slice(0, -MODULE_EXT.length)))
    .map((file) => file.slice(0, -MODULE_EXT.length))
    .sort();
  const out: Record<string, Migration> = {};
  for (const name of names) {
    const mod = (await import(new URL(`${name}${MODULE_EXT}`, MIGRATIONS_DIR).href)) as Record<string, unknown>;
    const factories = Object.values(mod).filter((value) => typeof value === 'function');
    if (factories.length !== 1) {
      throw new Error(`src/store/migrations/${name}: export exactly one function (dialect) => Migration, found ${factories.length}`);
    }
    out[name] = (factories[0] as (dialect: Dialect) => Migration)(dialect);
  }
  return out;
}

/**
 * Applies every pending migration. Safe to call on every start.
 * @throws the migration's error when one fails (the failed migration is rolled back).
 */
export async function migrateToLatest(store: Store): Promise<string[]> {
  const provider: MigrationProvider = { getMigrations: () => migrations(store.dialect) };
  const migrator = new Migrator({ db: store.db, provider });
  const { error, results } = await migrator.migrateToLatest();
  // A migration may throw anything; what is no Error becomes one with its text.
  if (error) throw error instanceof Error ? error : new Error(`${error as string}`);
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * Runs `fn` in one transaction: it commits when `fn` resolves and rolls back when it throws,
 * so a multi-step write lands whole or not at all.
 *
 * On SQLite every transaction starts with BEGIN IMMEDIATE (`options.immediate`, default true;
 * PostgreSQL ignores it): it takes the write lock at the start, waiting up to busy_timeout for
 * another process's writer (`msgsvc worker`, the workers of `serve --workers`, another instance on
 * the same file). A deferred transaction that reads and then writes fails at once with
 * SQLITE_BUSY ("database is locked") when another process committed in between, whatever
 * busy_timeout says: found by bench/workers.ts, where two workers answered hundreds of
 * custom-contact-fields-entry/update requests with 500 and 503. Within one process the one
 * connection serialises transactions anyway, so IMMEDIATE costs nothing there.
 * `immediate: false` is for a transaction that only reads.
 */
/**
 * What runs inside every transaction of inTransaction just before COMMIT, given the store it was
 * opened on, the transaction and fn's result: the audit log's writer (src/store/audit.ts registers
 * it; it returns undefined, and costs nothing, for a store that carries no audit entry).
 */
let beforeCommit: ((store: Store, tx: Db, result: unknown) => Promise<void> | undefined) | undefined;

/** Sets the before-COMMIT step (src/store/audit.ts). */
export function setBeforeCommit(hook: (store: Store, tx: Db, result: unknown) => Promise<void> | undefined): void {
  beforeCommit = hook;
}

export function inTransaction<T>(store: Store, fn: (tx: Db) => Promise<T>, options: { immediate?: boolean } = {}): Promise<T> {
  const sqlite = sqliteHandles.get(store.db);
  if (!sqlite)
    return store.db.transaction().execute(async (tx) => {
      const result = await fn(tx);
      const hook = beforeCommit?.(store, tx, result);
      if (hook !== undefined) await hook;
      return result;
    });
  // SQLite has one connection. Holding Kysely's lock on it (connection()) keeps every other query
  // out, Kysely's and the direct path's alike (the direct path steps aside while a transaction is
  // open); BEGIN/COMMIT and the transaction's own prepared queries then run straight on it.
  return store.db.connection().execute(async (tx) => {
    cachedStatement(sqlite, options.immediate === false ? 'BEGIN' : 'BEGIN IMMEDIATE').run();
    sqliteHandles.set(tx, sqlite);
    ownTransactions.add(tx);
    try {
      const result = await fn(tx);
      // The audit entry of the request this change belongs to, in the change's own transaction (src/store/audit.ts).
      const hook = beforeCommit?.(store, tx, result);
      if (hook !== undefined) await hook;
      cachedStatement(sqlite, 'COMMIT').run();
      return result;
    } catch (err) {
      if (sqlite.inTransaction) cachedStatement(sqlite, 'ROLLBACK').run();
      throw err;
    } finally {
      sqliteHandles.delete(tx);
      ownTransactions.delete(tx);
    }
  });
}

// Handles of the SQLite transactions inTransaction is running.
const ownTransactions = new WeakSet<object>();

/** True when `db` is the handle of a SQLite transaction opened by inTransaction (for src/store/prepared.ts). */
export function ownsOpenTransaction(db: object): boolean {
  return ownTransactions.has(db);
}
