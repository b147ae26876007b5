import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../src/config.ts';
import { createDemoAccount, type DemoAccount } from '../../src/cli/demo.ts';
import { recordMappers } from '../../src/records/index.ts';
import { createTimeFormat } from '../../src/lib/time.ts';
import { migrateToLatest, openStore } from '../../src/store/db.ts';
import { createTestDatabase, testStoreKind } from './stores.ts';

/** Why the scale-out suites do not run here, or undefined when they do (PostgreSQL run with services). */
export function scaleSkipReason(): string | undefined {
  if (testStoreKind() !== 'postgres' || process.env.MSGSVC_TEST_SERVICES !== '1') {
    return 'needs PostgreSQL and Redis: runs in the PostgreSQL pass of npm test (scripts/test.sh)';
  }
  return undefined;
}

/** A fresh PostgreSQL database, migrated, holding one demo account. */
export async function seededPostgres(): Promise<{ databaseUrl: string; demo: DemoAccount }> {
  const databaseUrl = await createTestDatabase();
  const config = loadConfig({ DATABASE_URL: databaseUrl });
  const store = openStore(config.database);
  try {
    await migrateToLatest(store);
    const demo = await createDemoAccount(store, recordMappers(createTimeFormat('UTC')), config.defaultRegion);
    return { databaseUrl, demo };
  } finally {
    await store.close();
  }
}

/** A Redis key prefix no other test uses, so rate counters never collide. */
export function uniqueRatePrefix(): string {
  return `msgsvc-test-${randomBytes(6).toString('hex')}`;
}
