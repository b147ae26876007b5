import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { loadConfig, type Config, type ConfigSource } from '../../src/config.ts';
import { createDemoAccount, type DemoAccount } from '../../src/domain/demo.ts';
import { recordMappers } from '../../src/records/index.ts';
import { createTimeFormat, type Clock } from '../../src/lib/time.ts';
import { migrateToLatest, openStore, type Store } from '../../src/store/db.ts';
import { createTestDatabase, testStoreKind } from './stores.ts';

/** A built (not listening) app on its own fresh database. */
export interface TestApp {
  app: FastifyInstance;
  store: Store;
  config: Config;
  dir: string;
  /** The SQLite file (in a `[sqlite]` case); in a `[postgres]` case the database is `config.database.url`. */
  dbPath: string;
  /** Creates a NEW demo account (numbers, 50 contacts, groups, fields, entries, messages) and returns its records and token. */
  seed(name?: string): Promise<DemoAccount>;
  close(): Promise<void>;
}

/** Settings every test app starts from; `overrides` win. */
export function testConfig(dbPath: string, overrides: ConfigSource = {}): Config {
  return loadConfig({ DATABASE_URL: dbPath, MSGSVC_DEMO: '0', LOG_LEVEL: 'silent', MSGSVC_RATE_LIMIT: '100000', ...overrides });
}

/**
 * The DATABASE_URL of a test app on the store of the running case (testStoreKind()): a SQLite file
 * in `dir`, or a PostgreSQL database tied to `dir`, so that an app built again on the same `dir`
 * sees the same data.
 */
export async function testDatabaseUrl(dir: string): Promise<string> {
  return testStoreKind() === 'postgres' ? createTestDatabase(dir) : join(dir, 'msgsvc.db');
}

/**
 * Builds an app over a new database on the store of the running case (SQLite file in a temp dir,
 * or a fresh PostgreSQL database in a `[postgres]` case). Pass `t` (node:test context) to close and delete everything when the test
 * ends; pass `options.dir` of an earlier app to reopen its data, `options.clock` for the domain's time
 * source (a manual clock; default the system clock).
 */
export async function buildTestApp(
  t?: { after(fn: () => unknown): void },
  overrides: ConfigSource = {},
  options: { dir?: string; logDestination?: { write(line: string): void }; clock?: Clock } = {},
): Promise<TestApp> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'msgsvc-test-'));
  const dbPath = join(dir, 'msgsvc.db');
  const config = testConfig(await testDatabaseUrl(dir), overrides);
  const store = openStore(config.database);
  await migrateToLatest(store);
  const app = buildApp(config, {
    store,
    ...(options.logDestination ? { logDestination: options.logDestination } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  });
  await app.ready();
  const mappers = recordMappers(createTimeFormat(config.timeZone));
  let closed = false;
  const result: TestApp = {
    app,
    store,
    config,
    dir,
    dbPath,
    // On the app's clock: the demo's scheduled messages are due for their check at its now.
    seed: (name) => createDemoAccount(store, mappers, config.defaultRegion, name, options.clock ? { clock: options.clock } : {}),
    async close() {
      if (closed) return;
      closed = true;
      await app.close();
      await store.close();
      if (!options.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
  t?.after(() => result.close());
  return result;
}

/** `path?access_token=…` plus extra query text. */
export function withToken(path: string, token: string, extra = ''): string {
  const sep = path.includes('?') ? '&' : '?';
  return `${path}${sep}access_token=${encodeURIComponent(token)}${extra ? `&${extra}` : ''}`;
}
