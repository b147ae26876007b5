/**
 * The key cache of the auth step (src/http/plugins/auth.ts, MSGSVC_TOKEN_CACHE_MS): a revoked
 * token stops working at once even when another process revokes it (here: a second store on the
 * same database, as `msgsvc tokens revoke` is), whatever the TTL; in this process at once;
 * unknown tokens are never cached; 0 turns the cache off.
 * Runs on SQLite, and on PostgreSQL too when it is reachable.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../../src/app.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { createAccount, issueToken } from '../../src/domain/accounts.ts';
import { hashToken } from '../../src/domain/tokens.ts';
import { migrateToLatest, openStore, type Store } from '../../src/store/db.ts';
import { insertToken, revokeToken } from '../../src/store/repositories/accounts.ts';
import { testDatabaseUrl } from '../helpers/app.ts';
import { storeTest } from '../helpers/stores.ts';

async function setup(t: { after(fn: () => unknown): void }, cacheMs: string) {
  const dir = mkdtempSync(join(tmpdir(), 'msgsvc-perf-'));
  const url = await testDatabaseUrl(dir);
  const config = loadConfig({
    DATABASE_URL: url,
    MSGSVC_DEMO: '0',
    LOG_LEVEL: 'silent',
    MSGSVC_RATE_LIMIT: '100000',
    MSGSVC_TOKEN_CACHE_MS: cacheMs,
  });
  const store = openStore(config.database);
  await migrateToLatest(store);
  const app = buildApp(config, { store });
  await app.ready();
  // Another connection to the same database: what the CLI in another process uses.
  const other: Store = openStore(config.database);
  t.after(async () => {
    await app.close();
    await store.close();
    await other.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const accountId = await createAccount(store, 'Cache');
  const { token, id } = await issueToken(store, accountId);
  const balance = async (tok: string) =>
    (await app.inject({ url: `/v1/credits/balance?access_token=${encodeURIComponent(tok)}` })).statusCode;
  return { app, store, other, accountId, token, tokenId: id, balance };
}

storeTest('a token revoked by another process is refused at once, though it was cached (API.md §15.2)', async (t) => {
  const ctx = await setup(t, '60000');
  assert.equal(await ctx.balance(ctx.token), 200);
  assert.equal(await ctx.balance(ctx.token), 200); // now served from the cache (SQLite)
  assert.equal(await revokeToken(ctx.other.db, { id: ctx.tokenId }, Math.floor(Date.now() / 1000)), 1);
  // SQLite: PRAGMA data_version is read on every request, so the other connection's write empties
  // the cache before this one; PostgreSQL: keys are never cached.
  assert.equal(await ctx.balance(ctx.token), 401);
});

storeTest('a revocation in this process applies at once', async (t) => {
  const ctx = await setup(t, '60000');
  assert.equal(await ctx.balance(ctx.token), 200);
  assert.equal(await revokeToken(ctx.store.db, { tokenHash: hashToken(ctx.token) }, Math.floor(Date.now() / 1000)), 1);
  assert.equal(await ctx.balance(ctx.token), 401);
});

storeTest('unknown tokens are not cached: a token issued elsewhere works at once', async (t) => {
  const ctx = await setup(t, '60000');
  const fresh = 'not-yet-issued-token-0123456789ab';
  assert.equal(await ctx.balance(fresh), 401);
  await insertToken(ctx.other.db, ctx.accountId, hashToken(fresh), 'later', Math.floor(Date.now() / 1000));
  assert.equal(await ctx.balance(fresh), 200);
});

storeTest('MSGSVC_TOKEN_CACHE_MS=0 turns the cache off', async (t) => {
  const ctx = await setup(t, '0');
  assert.equal(await ctx.balance(ctx.token), 200);
  assert.equal(await revokeToken(ctx.other.db, { id: ctx.tokenId }, Math.floor(Date.now() / 1000)), 1);
  assert.equal(await ctx.balance(ctx.token), 401);
});

test('MSGSVC_TOKEN_CACHE_MS is validated and defaults to 2000', () => {
  assert.equal(loadConfig({}).tokenCacheMs, 2000);
  assert.equal(loadConfig({ MSGSVC_TOKEN_CACHE_MS: '0' }).tokenCacheMs, 0);
  assert.throws(
    () => loadConfig({ MSGSVC_TOKEN_CACHE_MS: 'soon' }),
    (err) => err instanceof ConfigError && /MSGSVC_TOKEN_CACHE_MS/.test(err.message),
  );
  assert.throws(
    () => loadConfig({ MSGSVC_TOKEN_CACHE_MS: '600000' }),
    (err) => err instanceof ConfigError && /MSGSVC_TOKEN_CACHE_MS/.test(err.message),
  );
});
