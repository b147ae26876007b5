import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash, randomBytes } from 'node:crypto';
import { after, test, describe, type TestContext, type TestOptions } from 'node:test';
import { Client } from 'pg';

/**
 * The databases the store-dependent tests run on. Every such test file registers its cases once per
 * store (`storeTest`, `describeStores`): `[sqlite] …` always, `[postgres] …` when PostgreSQL answers
 * at PG_ADMIN_URL. Which stores are available is decided once per test process, when this module
 * loads. With CI=true PostgreSQL is required: the module throws, so every file using it fails.
 * MSGSVC_TEST_STORE=sqlite|postgres runs one store's cases only (the other's are skipped). Cases
 * that also need Redis add `skip: await redisSkip()` (test/helpers/scale.ts SCALE_OUT).
 */
export type TestStoreKind = 'sqlite' | 'postgres';

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
  // Three tries a second apart: under a full parallel run a connection can be refused for a moment
  // (all connection slots busy), which is no reason to call PostgreSQL absent.
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await admin(async (c) => c.query('select 1'));
      return true;
    } catch {
      if (attempt < 2) await new Promise((r) => setTimeout(r, 1000));
    }
  }
  return false;
}

/** True when Redis answers PING at REDIS_TEST_URL (one attempt, 1 s connect timeout). */
export async function redisReachable(): Promise<boolean> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(REDIS_TEST_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1000, retryStrategy: () => null });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
    return true;
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

const CI = process.env.CI === 'true';

/** One store of this process: its kind and why its cases are skipped here (false: they run). */
export interface TestStore {
  kind: TestStoreKind;
  skip: string | false;
}

async function availableStores(): Promise<readonly TestStore[]> {
  const only = process.env.MSGSVC_TEST_STORE;
  const notSelected = (kind: TestStoreKind) => (only && only !== kind ? `MSGSVC_TEST_STORE=${only}` : false);
  let postgres = notSelected('postgres');
  if (!postgres && !(await postgresReachable())) {
    if (CI) throw new Error(`CI=true: PostgreSQL must be reachable at ${PG_ADMIN_URL} (MSGSVC_TEST_PG_URL)`);
    postgres = `PostgreSQL not reachable at ${PG_ADMIN_URL} (start it, or set MSGSVC_TEST_PG_URL)`;
  }
  return [
    { kind: 'sqlite', skip: notSelected('sqlite') },
    { kind: 'postgres', skip: postgres },
  ];
}

/** The stores of this test process, SQLite first. */
export const STORES: readonly TestStore[] = await availableStores();

/**
 * Why the Redis cases are skipped in this process, or false when Redis answers at REDIS_TEST_URL.
 * With CI=true Redis is required: an unreachable Redis throws. Checked once, on first call.
 */
export function redisSkip(): Promise<string | false> {
  return (redisChecked ??= redisReachable().then((up) => {
    if (up) return false;
    if (CI) throw new Error(`CI=true: Redis must be reachable at ${REDIS_TEST_URL} (MSGSVC_TEST_REDIS_URL)`);
    return `Redis not reachable at ${REDIS_TEST_URL} (start it, or set MSGSVC_TEST_REDIS_URL)`;
  }));
}
let redisChecked: Promise<string | false> | undefined;

/** The store of the case now running (carried through its hooks, subtests and helpers). */
const current = new AsyncLocalStorage<TestStoreKind>();

/**
 * The store of the running `storeTest` / `describeStores` case; SQLite outside one. The test
 * helpers (buildTestApp, testDatabaseUrl) read it, so a case body needs no store argument.
 */
export function testStoreKind(): TestStoreKind {
  return current.getStore() ?? 'sqlite';
}

/** node:test options plus the stores a case runs on (default: every store). */
export interface StoreTestOptions extends TestOptions {
  stores?: readonly TestStoreKind[];
}

type StoreTestFn = (t: TestContext, kind: TestStoreKind) => void | Promise<void>;

function eachStore(options: StoreTestOptions, register: (store: TestStore, options: TestOptions) => void): void {
  const { stores, ...rest } = options;
  for (const store of STORES) {
    if (!stores || stores.includes(store.kind)) register(store, rest);
  }
}

/**
 * `test(name, options, fn)` once per store, named `[sqlite] name` / `[postgres] name`; `fn` gets the
 * store's kind. A store that is not available here gets one skipped case saying why.
 */
export function storeTest(name: string, fn: StoreTestFn): void;
export function storeTest(name: string, options: StoreTestOptions, fn: StoreTestFn): void;
export function storeTest(name: string, a: StoreTestOptions | StoreTestFn, b?: StoreTestFn): void {
  const [options, fn] = typeof a === 'function' ? [{}, a] : [a, b!];
  eachStore(options, ({ kind, skip }, rest) => {
    const title = `[${kind}] ${name}`;
    if (skip) test(title, { skip });
    else
      current.run(kind, () => {
        test(title, rest, (t) => fn(t, kind));
      });
  });
}

/**
 * `describe(name, options, fn)` once per store, named `[sqlite] name` / `[postgres] name`; `fn`
 * gets the store's kind, and the suite's hooks and tests run on that store. A store that is not
 * available here gets one skipped case saying why.
 */
export function describeStores(name: string, fn: (kind: TestStoreKind) => void): void;
export function describeStores(name: string, options: StoreTestOptions, fn: (kind: TestStoreKind) => void): void;
export function describeStores(
  name: string,
  a: StoreTestOptions | ((kind: TestStoreKind) => void),
  b?: (kind: TestStoreKind) => void,
): void {
  const [options, fn] = typeof a === 'function' ? [{}, a] : [a, b!];
  eachStore(options, ({ kind, skip }, rest) => {
    const title = `[${kind}] ${name}`;
    if (skip) test(title, { skip });
    else
      current.run(kind, () => {
        describe(title, rest, () => fn(kind));
      });
  });
}

/**
 * One value per store for the whole file (an app, a seeded fixture), built on first use by a case of
 * that store and disposed after the file's tests. Call at module level.
 */
export function onePerStore<T>(build: () => Promise<T>, dispose: (value: T) => unknown): () => Promise<T> {
  const values = new Map<TestStoreKind, Promise<T>>();
  after(async () => {
    for (const value of values.values()) await dispose(await value);
  });
  return () => {
    const kind = testStoreKind();
    let value = values.get(kind);
    if (!value) values.set(kind, (value = build()));
    return value;
  };
}
