import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../src/config.ts';
import { createDemoAccount, type DemoAccount } from '../../src/domain/demo.ts';
import { recordMappers } from '../../src/records/index.ts';
import { createTimeFormat } from '../../src/lib/time.ts';
import { migrateToLatest, openStore } from '../../src/store/db.ts';
import { createTestDatabase, redisSkip, type StoreTestOptions } from './stores.ts';

/**
 * Options of a scale-out case: it runs on PostgreSQL only (several processes over one database), and
 * is skipped, saying why, when Redis is not reachable (CI=true: the file fails instead).
 */
export const SCALE_OUT: StoreTestOptions = { stores: ['postgres'], skip: await redisSkip() };

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
