import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, Migrator, sql, PostgresDialect, SqliteDialect, type Migration, type MigrationProvider } from 'kysely';
import type { DatabaseConfig } from '../config.ts';
import type { Database } from './tables.ts';
import type { Db } from './types.ts';
import { initialMigration } from './migrations/001_initial.ts';

export type Dialect = 'sqlite' | 'postgres';

/** An open database: the Kysely handle plus what callers need to know about it. */
export interface Store {
  readonly db: Kysely<Database>;
  readonly dialect: Dialect;
  /** Closes the connection (SQLite) or pool (PostgreSQL). Idempotent. */
  close(): Promise<void>;
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
    const sqlite = new SQLite(config.path);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('busy_timeout = 5000');
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
    let closed = false;
    return {
      db,
      dialect: 'sqlite',
      async close() {
        if (closed) return;
        closed = true;
        await db.destroy();
      },
    };
  }
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
  pool.on('connect', (client) => client.on('error', () => {}));
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

function migrations(dialect: Dialect): Record<string, Migration> {
  return { '001_initial': initialMigration(dialect) };
}

/**
 * Applies every pending migration. Safe to call on every start.
 * @throws the migration's error when one fails (the failed migration is rolled back).
 */
export async function migrateToLatest(store: Store): Promise<string[]> {
  const provider: MigrationProvider = { getMigrations: async () => migrations(store.dialect) };
  const migrator = new Migrator({ db: store.db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * Runs `fn` in one transaction: it commits when `fn` resolves and rolls back when it throws,
 * so a multi-step write lands whole or not at all.
 */
export function inTransaction<T>(store: Store, fn: (tx: Db) => Promise<T>): Promise<T> {
  return store.db.transaction().execute(fn);
}
