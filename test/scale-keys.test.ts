/**
 * Keys and the lockout over real HTTP on two instances (API.md §15.2, §15.3): two `msgsvc serve`
 * processes over one PostgreSQL and one Redis, and two over one SQLite file. A key deleted, rolled
 * or narrowed through A is refused (or narrowed) through B at once, though B had just used it;
 * AllowedIps and escalation hold on B; the sign-in lockout counts the failures of both instances.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startServerProcess, type ServerProcess } from './helpers/net.ts';
import { SCALE_OUT, seededPostgres, uniqueRatePrefix } from './helpers/scale.ts';
import { describeStores, REDIS_TEST_URL, storeTest } from './helpers/stores.ts';
import { createDemoAccount, type DemoAccount } from '../src/domain/demo.ts';
import { recordMappers } from '../src/records/index.ts';
import { createTimeFormat } from '../src/lib/time.ts';
import { migrateToLatest, openStore } from '../src/store/db.ts';

const json = (method: string, body: unknown) => ({ method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function balance(server: ServerProcess, token: string): Promise<number> {
  return (await fetch(`${server.url}/v1/credits/balance?access_token=${encodeURIComponent(token)}`)).status;
}

async function createKey(server: ServerProcess, token: string, body: unknown): Promise<{ Id: number; Secret: string }> {
  const res = await fetch(`${server.url}/v1/keys/create?access_token=${token}`, json('POST', body));
  assert.equal(res.status, 201);
  return (await res.json()) as { Id: number; Secret: string };
}

/** Uses the key through B many times (B caches it where it may), changes it through A, and checks B at once. */
async function deletedOnAIsRefusedOnB(a: ServerProcess, b: ServerProcess, token: string): Promise<void> {
  const key = await createKey(a, token, { Name: 'shared' });
  for (let i = 0; i < 5; i++) assert.equal(await balance(b, key.Secret), 200);
  const del = await fetch(`${a.url}/v1/keys/delete?id=${key.Id}&access_token=${token}`, { method: 'DELETE' });
  assert.equal(del.status, 204);
  for (let i = 0; i < 20; i++) assert.equal(await balance(b, key.Secret), 401, `request ${i} through B after the delete through A`);
}

describeStores('keys on two instances over one PostgreSQL and one Redis', SCALE_OUT, () => {
  let a: ServerProcess;
  let b: ServerProcess;
  let demo: DemoAccount;

  before(async () => {
    const seeded = await seededPostgres();
    demo = seeded.demo;
    const env = {
      DATABASE_URL: seeded.databaseUrl,
      REDIS_URL: REDIS_TEST_URL,
      MSGSVC_RATE_KEY_PREFIX: uniqueRatePrefix(),
      MSGSVC_RATE_LIMIT: '100000',
      LOG_LEVEL: 'warn',
    };
    [a, b] = await Promise.all([startServerProcess(env), startServerProcess({ ...env, MSGSVC_DISPATCHER: '0' })]);
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  test('a key deleted through A is refused through B at once', async () => {
    await deletedOnAIsRefusedOnB(a, b, demo.token);
  });

  test('a roll through A: the new secret works through B, the old one until its grace (0 here) ends', async () => {
    const key = await createKey(a, demo.token, { Name: 'rolling' });
    assert.equal(await balance(b, key.Secret), 200);
    const rolled = await fetch(`${a.url}/v1/keys/roll?id=${key.Id}&access_token=${demo.token}`, json('POST', { GraceSeconds: 0 }));
    const { Secret } = (await rolled.json()) as { Secret: string };
    assert.equal(await balance(b, Secret), 200);
    assert.equal(await balance(b, key.Secret), 401);
    const graced = await fetch(`${a.url}/v1/keys/roll?id=${key.Id}&access_token=${demo.token}`, json('POST', { GraceSeconds: 3600 }));
    const next = ((await graced.json()) as { Secret: string }).Secret;
    assert.equal(await balance(b, Secret), 200, 'within its grace');
    assert.equal(await balance(b, next), 200);
  });

  test('scopes narrowed through A apply through B at once; escalation through B is refused', async () => {
    const key = await createKey(a, demo.token, { Name: 'narrowed', Scopes: ['credits:read', 'keys:write'] });
    assert.equal(await balance(b, key.Secret), 200);
    const up = await fetch(`${a.url}/v1/keys/update?id=${key.Id}&access_token=${demo.token}`, json('PATCH', { Scopes: ['keys:write'] }));
    assert.equal(up.status, 200);
    assert.equal(await balance(b, key.Secret), 403);
    const escalate = await fetch(`${b.url}/v1/keys/create?access_token=${key.Secret}`, json('POST', { Name: 'root', Scopes: ['*'] }));
    assert.equal(escalate.status, 422);
    assert.deepEqual(await escalate.json(), [{ field: 'Scopes', message: 'Scopes is invalid.' }]);
  });

  test('AllowedIps and DateExpires hold through B', async () => {
    const elsewhere = await createKey(a, demo.token, { Name: 'office', AllowedIps: ['192.0.2.0/24'] });
    assert.equal(await balance(b, elsewhere.Secret), 401);
    const local = await createKey(a, demo.token, { Name: 'loopback', AllowedIps: ['127.0.0.1', '::1'] });
    assert.equal(await balance(b, local.Secret), 200);
    const past = await fetch(
      `${a.url}/v1/keys/create?access_token=${demo.token}`,
      json('POST', { Name: 'old', DateExpires: '2001-01-01 00:00:00' }),
    );
    assert.equal(past.status, 422);
  });

  test('the sign-in lockout counts the failures of both instances', async () => {
    const res = await fetch(
      `${a.url}/v1/users/create?access_token=${demo.token}`,
      json('POST', { Email: 'both@example.com', Role: 'viewer' }),
    );
    const code = ((await res.json()) as { InviteUrl: string }).InviteUrl.split('#/invite/')[1]!;
    assert.equal(
      (await fetch(`${b.url}/console/api/invite`, json('POST', { Code: code, Password: 'a long enough passphrase' }))).status,
      204,
    );
    const attempt = (server: ServerProcess, password: string) =>
      fetch(`${server.url}/console/api/session`, json('POST', { Email: 'both@example.com', Password: password }));
    for (const server of [a, b, a, b, a]) assert.equal((await attempt(server, 'not the password!')).status, 422);
    for (const server of [a, b]) {
      const locked = await attempt(server, 'a long enough passphrase');
      assert.equal(locked.status, 429);
      assert.ok(Number(locked.headers.get('retry-after')) > 800);
    }
  });
});

storeTest(
  'keys on two instances over one SQLite file: a key deleted through A is refused through B at once',
  { stores: ['sqlite'] },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'msgsvc-keys-two-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const dbPath = join(dir, 'msgsvc.db');
    const store = openStore({ kind: 'sqlite', path: dbPath });
    await migrateToLatest(store);
    const demo = await createDemoAccount(store, recordMappers(createTimeFormat('UTC')), 'US', 'Two on one file');
    await store.close();
    const env = { DATABASE_URL: dbPath, MSGSVC_RATE_LIMIT: '100000', LOG_LEVEL: 'warn' };
    const [a, b] = await Promise.all([startServerProcess(env), startServerProcess({ ...env, MSGSVC_DISPATCHER: '0' })]);
    try {
      await deletedOnAIsRefusedOnB(a, b, demo.token);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  },
);
