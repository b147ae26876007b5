/**
 * `msgsvc serve --workers N` (src/cluster.ts): real processes over real sockets. One primary (the
 * demo banner, the dispatcher, the rate-limit counters) and N HTTP workers sharing one port.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { runCli, spawnServe, tempDir, workerPids, type ServeProcess } from '../helpers/cli.ts';
import { until } from '../helpers/wait.ts';
import { freePort } from '../helpers/net.ts';

const BANNER_END = 'More demo accounts:';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP request over `agent` (keep-alive connections), with a 5 s bound. */
function call(agent: Agent, url: string, options: { method?: string; body?: unknown } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    const req = request(
      url,
      { agent, method: options.method ?? 'GET', timeout: 5000, headers: payload ? { 'content-type': 'application/json' } : {} },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`timeout: ${url}`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** The pino lines printed so far (lines of several processes may interleave: unreadable ones are skipped). */
function logLines(stdout: string): { pid?: number; msg?: string }[] {
  const out: { pid?: number; msg?: string }[] = [];
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line) as { pid?: number; msg?: string });
    } catch {
      // half a line from another process
    }
  }
  return out;
}

/** PIDs of the processes that logged a request line. */
function requestPids(stdout: string): Set<number> {
  return new Set(
    logLines(stdout)
      .filter((l) => l.msg === 'request' && typeof l.pid === 'number')
      .map((l) => l.pid!),
  );
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Starts `serve --workers 2` on a fresh SQLite file and waits for the banner; returns the server, its base URL and the demo token. */
async function startTwoWorkers(
  t: { after(fn: () => unknown): void },
  env: Record<string, string | undefined> = {},
): Promise<{ server: ServeProcess; base: string; token: string }> {
  const { dbPath } = tempDir(t);
  const port = await freePort();
  const server = spawnServe(t, ['--workers', '2'], { DATABASE_URL: dbPath, PORT: String(port), LOG_LEVEL: 'info', ...env });
  // The banner comes when the first worker listens; round-robin reaches only the listening ones.
  const stdout = await server.waitForStdout((s) => s.includes(BANNER_END) && s.split('"msg":"Server listening at').length - 1 >= 2, 30_000);
  const token = /Access token \(shown once; only its hash is stored\): (\S+)/.exec(stdout)?.[1];
  assert.ok(token, stdout);
  return { server, base: `http://127.0.0.1:${port}`, token };
}

describe('msgsvc serve --workers', { concurrency: false }, () => {
  // One cluster serves these steps, in this order: each start is three processes and most of this
  // file's time. Requests first, while the two first workers are the only ones; the dispatcher; a
  // worker killed and replaced; SIGTERM last, which must then stop the replacement too.
  test('one cluster from start to SIGTERM', async (t) => {
    const { server, base, token } = await startTwoWorkers(t, { MSGSVC_RATE_LIMIT: '1000', MSGSVC_SANDBOX_RECEIPT_MS: '100' });
    /** Every worker PID seen, all of which must be gone after SIGTERM. */
    const everyWorker = new Set<number>();

    await t.test('two workers answer on one port; the demo banner is printed once', async (st) => {
      let seen: number[] = [];
      const workers = await until('two workers', async () => {
        seen = await workerPids(server.child.pid!);
        return seen.length === 2 ? seen : undefined;
      }).catch((err: Error) => {
        throw new Error(`${err.message}: children ${JSON.stringify(seen)}\n${server.stdout.slice(-3000)}\n${server.stderr}`);
      });
      for (const pid of workers) everyWorker.add(pid);
      const agent = new Agent({ keepAlive: true, maxSockets: 16 });
      st.after(() => agent.destroy());
      // Round-robin hands each new connection to the next worker: 16 connections reach both.
      const answers = await Promise.all(Array.from({ length: 64 }, () => call(agent, `${base}/v1/credits/balance?access_token=${token}`)));
      assert.deepEqual([...new Set(answers.map((a) => a.status))], [200]);
      const pids = await until('request lines of both workers', () => {
        const seen = requestPids(server.stdout);
        return seen.size === 2 ? seen : undefined;
      });
      assert.deepEqual([...pids].sort(), [...workers].sort(), 'the request lines come from the two workers');
      assert.equal(server.stdout.split(BANNER_END).length - 1, 1, 'the banner is printed exactly once');
      agent.destroy();
    });

    await t.test(
      'the dispatcher runs once, in the primary: a message sent through a worker is Delivered; /readyz of a worker shows the carrier ok',
      async (st) => {
        const agent = new Agent({ keepAlive: true, maxSockets: 4 });
        st.after(() => agent.destroy());
        const sent = await call(agent, `${base}/v1/sms/send?access_token=${token}`, {
          method: 'POST',
          body: { Message: 'Hello from a worker', MobilePhone: '+15551234567' },
        });
        assert.equal(sent.status, 201, sent.body);
        const id = (JSON.parse(sent.body) as { Id: number }[])[0]!.Id;
        const status = await until('the message Delivered', async () => {
          const view = await call(agent, `${base}/v1/sms/view?id=${id}&access_token=${token}`);
          const s = (JSON.parse(view.body) as { Status_Description: string }).Status_Description;
          return s === 'Delivered' ? s : undefined;
        });
        assert.equal(status, 'Delivered');
        // Both workers know the primary's carrier state (several connections: both workers answer).
        const readies = await Promise.all(Array.from({ length: 8 }, () => call(new Agent(), `${base}/readyz`)));
        for (const r of readies)
          assert.deepEqual(JSON.parse(r.body), {
            status: 'ok',
            database: 'ok',
            redis: 'not configured',
            carrier: 'ok',
            carriers: { sandbox: 'ok' },
          });
        assert.equal(requestPids(server.stdout).has(server.child.pid!), false, 'the primary serves no request');
      },
    );

    await t.test('a worker killed with SIGKILL is replaced, and requests keep being answered', async (st) => {
      const before = await until('two workers', async () => {
        const pids = await workerPids(server.child.pid!);
        return pids.length === 2 ? pids : undefined;
      });
      process.kill(before[0]!, 'SIGKILL');
      // Once the primary knows (a connection handed over just before may be lost with the worker),
      // the other worker answers every request (fresh connections each time) until the new one is up.
      await server.waitForStdout((s) => s.includes('a worker exited unexpectedly: forking another'), 10_000);
      for (let i = 0; i < 5; i++) {
        const res = await call(new Agent(), `${base}/v1/credits/balance?access_token=${token}`);
        assert.equal(res.status, 200);
      }
      const after = await until('a new worker', async () => {
        const pids = await workerPids(server.child.pid!);
        return pids.length === 2 && !pids.includes(before[0]!) ? pids : undefined;
      });
      assert.ok(after.includes(before[1]!));
      const fresh = after.find((pid) => pid !== before[1])!;
      everyWorker.add(fresh);
      // Replaced means listening: SIGTERM before that finds a worker still loading, which the
      // primary kills only after its 10 s stop deadline.
      await until('the new worker listening', () =>
        logLines(server.stdout).some((l) => l.pid === fresh && l.msg?.startsWith('Server listening at')) ? true : undefined,
      );
      const agent = new Agent({ keepAlive: true, maxSockets: 8 });
      st.after(() => agent.destroy());
      const answers = await Promise.all(Array.from({ length: 32 }, () => call(agent, `${base}/v1/credits/balance?access_token=${token}`)));
      assert.deepEqual([...new Set(answers.map((a) => a.status))], [200]);
      agent.destroy();
    });

    await t.test('SIGTERM stops every process, the replacement worker too, and exits 0', async () => {
      const exit = await server.stop();
      assert.deepEqual(exit, { code: 0, signal: null }, server.stderr);
      for (const pid of everyWorker) assert.equal(alive(pid), false, `worker ${pid} is gone`);
    });
  });

  test('SIGTERM while a replacement worker is still loading stops it at once, not at the 10 s stop deadline', async (t) => {
    const { server } = await startTwoWorkers(t);
    const before = await until('two workers', async () => {
      const pids = await workerPids(server.child.pid!);
      return pids.length === 2 ? pids : undefined;
    });
    process.kill(before[0]!, 'SIGKILL');
    // The replacement exists as a process long before it listens (it loads its modules first).
    const fresh = await until(
      'the replacement process',
      async () => (await workerPids(server.child.pid!)).find((pid) => !before.includes(pid)),
      10_000,
    );
    const listening = logLines(server.stdout).some((l) => l.pid === fresh && l.msg?.startsWith('Server listening at'));
    t.diagnostic(`replacement ${fresh} ${listening ? 'already listening' : 'still loading'} at SIGTERM`);
    const t0 = Date.now();
    const exit = await server.stop();
    const ms = Date.now() - t0;
    assert.deepEqual(exit, { code: 0, signal: null }, server.stderr);
    assert.ok(ms < 5000, `stopped in ${ms} ms`);
    for (const pid of [...before, fresh]) assert.equal(alive(pid), false, `worker ${pid} is gone`);
  });

  test('the rate limit is exact across the workers: 50 of 200 concurrent requests pass, headers as with one process', async (t) => {
    const { server, base, token } = await startTwoWorkers(t, { MSGSVC_RATE_LIMIT: '50', MSGSVC_RATE_WINDOW: '30', LOG_LEVEL: 'info' });
    const agent = new Agent({ keepAlive: true, maxSockets: 20 });
    t.after(() => agent.destroy());
    const answers = await Promise.all(Array.from({ length: 200 }, () => call(agent, `${base}/v1/numbers/index?access_token=${token}`)));
    const ok = answers.filter((a) => a.status === 200);
    const limited = answers.filter((a) => a.status === 429);
    assert.equal(ok.length, 50, answers.map((a) => a.status).join(','));
    assert.equal(limited.length, 150);
    assert.deepEqual(
      ok.map((a) => Number(a.headers['x-rate-limit-remaining'])).sort((x, y) => x - y),
      Array.from({ length: 50 }, (_, i) => i),
      'Remaining 49..0, each exactly once',
    );
    for (const a of ok) {
      const remaining = Number(a.headers['x-rate-limit-remaining']);
      assert.equal(a.headers['x-rate-limit-limit'], '50');
      assert.equal(a.headers['x-rate-limit-reset'], String(Math.floor(((50 - remaining) * 30) / 50)));
    }
    for (const a of limited) {
      assert.equal(a.headers['x-rate-limit-limit'], '50');
      assert.equal(a.headers['x-rate-limit-remaining'], '0');
      assert.equal(a.headers['x-rate-limit-reset'], '30');
      const retryAfter = Number(a.headers['retry-after']);
      assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 30, `Retry-After ${String(a.headers['retry-after'])}`);
      assert.deepEqual(JSON.parse(a.body), { name: 'Too Many Requests', message: 'Rate limit exceeded.', code: 0, status: 429 });
    }
    await until('request lines of both workers', () => (requestPids(server.stdout).size === 2 ? true : undefined));
  });

  test('bad --workers values and an in-memory database with several workers are configuration errors', async () => {
    // Independent processes on independent (in-memory) databases: they run at the same time.
    const values = ['0', 'x', '257', '1.5'];
    // 30 s each: six processes start at once, and on a loaded 2-core machine running the sources
    // through tsx (dist/ older than src/) one took more than 15 s to print its error.
    const [env, memory, ...flags] = await Promise.all([
      runCli(['serve'], { DATABASE_URL: ':memory:', MSGSVC_WORKERS: 'many' }, 30_000),
      runCli(['serve', '--workers', '2'], { DATABASE_URL: ':memory:' }, 30_000),
      ...values.map((value) => runCli(['serve', '--workers', value], { DATABASE_URL: ':memory:' }, 30_000)),
    ]);
    flags.forEach((res, i) => {
      assert.equal(res.code, 2, `--workers ${values[i]}: ${res.stderr}`);
      assert.match(res.stderr, /configuration error: MSGSVC_WORKERS must be a whole number between 1 and 256, or auto/);
    });
    assert.equal(env.code, 2, env.stderr);
    assert.match(env.stderr, /MSGSVC_WORKERS must be/);
    assert.equal(memory.code, 2, memory.stderr);
    assert.match(
      memory.stderr,
      /configuration error: --workers 2 \(MSGSVC_WORKERS\) needs a database the processes can share, but DATABASE_URL is an in-memory SQLite database/,
    );
  });
});
