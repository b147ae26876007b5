import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, type Migration, type MigrationProvider } from 'kysely';
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
  const pool = new pg.Pool({ connectionString: config.url });
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
