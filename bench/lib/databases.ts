/**
 * A fresh database for one bench step, on either store: a SQLite file in a new temp directory (or
 * in `sqliteDir`, left for its owner to remove), or a PostgreSQL database created for the run on
 * the server at `pgUrl` and dropped by `drop()` (with force: the step's connections may linger).
 */
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { DatabaseConfig } from '../../src/config.ts';

export interface BenchDatabase {
  config: DatabaseConfig;
  /** DATABASE_URL of it, for a child process. */
  url: string;
  drop(): Promise<void>;
}

/**
 * @param label names the temp directory and the PostgreSQL database (`msgsvc_bench_<label>_…`).
 * @param options.poolSize PostgreSQL connections of the bench's own store (default 10).
 */
export async function benchDatabase(
  kind: 'sqlite' | 'postgres',
  label: string,
  pgUrl: string,
  options: { poolSize?: number; sqliteDir?: string } = {},
): Promise<BenchDatabase> {
  if (kind === 'sqlite') {
    if (options.sqliteDir !== undefined) {
      const path = join(options.sqliteDir, `${label}.db`);
      return { config: { kind: 'sqlite', path }, url: path, drop: async () => {} };
    }
    const dir = mkdtempSync(join(tmpdir(), `msgsvc-bench-${label}-`));
    const path = join(dir, 'msgsvc.db');
    return { config: { kind: 'sqlite', path }, url: path, drop: () => rm(dir, { recursive: true, force: true }) };
  }
  const name = `msgsvc_bench_${label}_${process.pid}_${Date.now().toString(36)}`;
  const admin = async (q: string) => {
    const client = new pg.Client({ connectionString: pgUrl, connectionTimeoutMillis: 3000 });
    await client.connect();
    try {
      await client.query(q);
    } finally {
      await client.end();
    }
  };
  await admin(`create database "${name}"`);
  const url = new URL(pgUrl);
  url.pathname = `/${name}`;
  return {
    config: { kind: 'postgres', url: url.toString(), poolSize: options.poolSize ?? 10, statementTimeoutMs: 60_000 },
    url: url.toString(),
    drop: () => admin(`drop database if exists "${name}" with (force)`),
  };
}

/** True when the PostgreSQL server at `pgUrl` answers a query within 3 s (a step skips PostgreSQL otherwise). */
export async function postgresReachable(pgUrl: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: pgUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}
