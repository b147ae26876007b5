import { createHash, randomBytes } from 'node:crypto';
import { Client } from 'pg';

/**
 * Which database the HTTP and store tests run on. `npm test` runs the suite once per store
 * (scripts/test.sh); MSGSVC_TEST_STORE=postgres selects PostgreSQL, and each test app then gets a
 * freshly created database of its own.
 */
export type TestStoreKind = 'sqlite' | 'postgres';

export function testStoreKind(): TestStoreKind {
  return process.env.MSGSVC_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';
}

/** The maintenance database used to create and drop test databases (trust auth on CI). */
export const PG_ADMIN_URL = process.env.MSGSVC_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_TEST_URL = process.env.MSGSVC_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

const created = new Set<string>();
let cleanupRegistered = false;

async function admin<T>(fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

function urlFor(name: string): string {
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * Creates a PostgreSQL database for one test and returns its URL. With `key`, the name is derived
 * from it and an existing database is reused (a "restart" of the same data). Every database made
 * here is dropped when the test process exits.
 */
export async function createTestDatabase(key?: string): Promise<string> {
  const name = key
    ? `msgsvc_t_${createHash('sha256').update(key).digest('hex').slice(0, 16)}`
    : `msgsvc_t_${process.pid}_${randomBytes(5).toString('hex')}`;
  if (!created.has(name)) {
    await admin(async (c) => {
      const exists = await c.query('select 1 from pg_database where datname = $1', [name]);
      if (exists.rowCount === 0) await c.query(`create database "${name}"`);
    });
    created.add(name);
  }
  if (!cleanupRegistered) {
    cleanupRegistered = true;
    let done = false;
    process.on('beforeExit', () => {
      if (done) return;
      done = true;
      void dropTestDatabases();
    });
  }
  return urlFor(name);
}

/** Drops every database this process created. */
export async function dropTestDatabases(): Promise<void> {
  const names = [...created];
  created.clear();
  if (names.length === 0) return;
  await admin(async (c) => {
    for (const name of names) await c.query(`drop database if exists "${name}" with (force)`);
  }).catch(() => {});
}

/** True when PostgreSQL answers at PG_ADMIN_URL. */
export async function postgresReachable(): Promise<boolean> {
  try {
    await admin(async (c) => c.query('select 1'));
    return true;
  } catch {
    return false;
  }
}
