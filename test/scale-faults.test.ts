import assert from 'node:assert/strict';
import { request } from 'node:http';
import { Redis } from 'ioredis';
import { Writable } from 'node:stream';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openStore } from '../src/store/db.ts';
import { startServerProcess, startTcpProxy } from './helpers/net.ts';
import { SCALE_OUT, seededPostgres, uniqueRatePrefix } from './helpers/scale.ts';
import { REDIS_TEST_URL, storeTest } from './helpers/stores.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(100);
  }
}

function logSink() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim()) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, stream };
}

storeTest('Redis goes away: requests still succeed on per-instance memory, one warning, then Redis is used again', SCALE_OUT, async (t) => {
  const { databaseUrl, demo } = await seededPostgres();
  const redisPort = Number(new URL(REDIS_TEST_URL).port || 6379);
  const proxy = await startTcpProxy(redisPort, new URL(REDIS_TEST_URL).hostname);
  t.after(() => proxy.close());
  const prefix = uniqueRatePrefix();
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
    MSGSVC_RATE_KEY_PREFIX: prefix,
    MSGSVC_RATE_LIMIT: '1000',
    MSGSVC_RATE_WINDOW: '60',
    LOG_LEVEL: 'info',
  });
  const store = openStore(config.database);
  const log = logSink();
  const app = buildApp(config, { store, logDestination: log.stream });
  t.after(async () => {
    await app.close();
    await store.close();
  });
  await app.ready();
  const get = () => app.inject({ url: `/v1/credits/balance?access_token=${demo.token}` });
  await waitFor(async () => (await app.inject({ url: '/readyz' })).statusCode === 200);
  const shared = await get();
  assert.equal(shared.statusCode, 200);
  assert.equal(shared.headers['x-rate-limit-remaining'], '999');

  // Counted from the cut: on a loaded machine the first connection can outlast connectTimeout, which
  // is a warning (and a recovery) of its own before this test's outage.
  const linesBeforeCut = log.lines.length;
  proxy.cut();
  for (let i = 0; i < 5; i++) {
    const res = await get();
    assert.equal(res.statusCode, 200, 'requests keep succeeding without Redis');
    assert.ok(res.headers['x-rate-limit-limit']);
  }
  await sleep(500);
  const warnings = log.lines.slice(linesBeforeCut).filter((l) => l.level === 40 && String(l.msg).includes('Redis unreachable'));
  assert.equal(warnings.length, 1, `exactly one warning while Redis is away; logged: ${JSON.stringify(warnings)}`);
  const ready = await app.inject({ url: '/readyz' });
  assert.equal(ready.statusCode, 503);
  assert.equal(JSON.parse(ready.body).redis, 'unavailable');

  proxy.restore();
  await waitFor(async () => (await app.inject({ url: '/readyz' })).statusCode === 200);
  const back = await get();
  assert.equal(back.statusCode, 200);
  // Counting is back in the shared Redis counter, which continued where it was (not the
  // per-instance fallback, which spent 5 while Redis was away): what Redis holds is what the
  // header says. A request racing the cut may or may not have reached Redis, hence the range.
  const remaining = Number(back.headers['x-rate-limit-remaining']);
  assert.ok(remaining >= 997 && remaining <= 998, `remaining ${remaining}`);
  const redis = new Redis(REDIS_TEST_URL);
  try {
    const consumed = Number(await redis.get(`${prefix}:${demo.account.id}`));
    assert.equal(consumed, 1000 - remaining);
  } finally {
    redis.disconnect();
  }
  assert.ok(log.lines.some((l) => String(l.msg).includes('Redis reachable again')));
});

storeTest(
  'PostgreSQL goes away: 503 in the negotiated format within the statement timeout, then recovery without a restart',
  { stores: ['postgres'] },
  async (t) => {
    const { databaseUrl, demo } = await seededPostgres();
    const pgUrl = new URL(databaseUrl);
    const proxy = await startTcpProxy(Number(pgUrl.port || 5432), pgUrl.hostname);
    t.after(() => proxy.close());
    pgUrl.port = String(proxy.port);
    pgUrl.hostname = '127.0.0.1';
    const config = loadConfig({
      DATABASE_URL: pgUrl.toString(),
      MSGSVC_STATEMENT_TIMEOUT_MS: '1000',
      MSGSVC_RATE_LIMIT: '1000',
      LOG_LEVEL: 'silent',
    });
    const store = openStore(config.database);
    const app = buildApp(config, { store });
    t.after(async () => {
      await app.close();
      await store.close();
    });
    await app.ready();
    const url = `/v1/numbers/index?access_token=${demo.token}`;
    assert.equal((await app.inject({ url })).statusCode, 200);

    proxy.cut();
    for (const accept of ['application/json', 'application/xml']) {
      const started = Date.now();
      const res = await app.inject({ url, headers: { accept } });
      const took = Date.now() - started;
      assert.equal(res.statusCode, 503);
      assert.ok(took < 3000, `answered in ${took} ms`);
      if (accept === 'application/json') {
        assert.deepEqual(Object.keys(JSON.parse(res.body)), ['name', 'message', 'code', 'status']);
        assert.equal(JSON.parse(res.body).name, 'Service Unavailable');
      } else {
        assert.match(res.headers['content-type'] as string, /^application\/xml/);
        assert.match(
          res.body,
          /<response><name>Service Unavailable<\/name><message>[^<]+<\/message><code>0<\/code><status>503<\/status><\/response>/,
        );
      }
    }
    assert.equal((await app.inject({ url: '/readyz' })).statusCode, 503);

    proxy.restore();
    await waitFor(async () => (await app.inject({ url })).statusCode === 200);
    assert.equal((await app.inject({ url: '/readyz' })).statusCode, 200);
  },
);

storeTest('SIGTERM: an in-flight request finishes, the process closes its pools and exits 0', SCALE_OUT, async () => {
  const { databaseUrl, demo } = await seededPostgres();
  const server = await startServerProcess({
    DATABASE_URL: databaseUrl,
    REDIS_URL: REDIS_TEST_URL,
    MSGSVC_RATE_KEY_PREFIX: uniqueRatePrefix(),
  });
  const group = demo.groups[0]!;
  // A request whose body is still arriving when SIGTERM lands: it must complete normally.
  const { port } = new URL(server.url);
  const req = request({
    host: '127.0.0.1',
    port: Number(port),
    method: 'PUT',
    path: `/v1/groups/update?id=${group.Id}&access_token=${demo.token}`,
    headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
  });
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
  req.write('{"fname":"Sent during');
  await sleep(300);
  const exit = server.stop('SIGTERM');
  await sleep(300);
  req.end(' shutdown"}');
  const res = await response;
  assert.equal(res.status, 200);
  assert.equal(JSON.parse(res.body).Name, 'Sent during shutdown');
  assert.equal(await exit, 0);
  assert.match(server.output(), /shutting down/);
  await assert.rejects(fetch(`${server.url}/healthz`), 'no new connections after exit');
});
