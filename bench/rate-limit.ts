/**
 * The rate-limit counters, alone (no HTTP): CPU per counted request of each.
 *
 *   node --import tsx bench/rate-limit.ts [--n 1000000] [--workers 2] [--cluster-n 200000] [--no-cluster]
 *
 * 1. One process: the synchronous FixedWindowCounter (what a single `msgsvc serve` uses) against
 *    rate-limiter-flexible's RateLimiterMemory (what it used before), `n` consumes of one account
 *    in batches of 50 concurrent ones (as 50 connections would), CPU time per consume.
 * 2. Several processes sharing one exact counter, the two ways `serve --workers` could do it
 *    without Redis: RateLimiterCluster (every consume is an IPC round trip to the primary, which
 *    counts in memory) and RateLimiterSQLite on a separate small SQLite file (WAL, every consume a
 *    write transaction; busy_timeout 5 s for the other workers' locks). `workers` processes each
 *    consume `cluster-n / workers` times, 50 in flight each. Reported: consumes per second (wall)
 *    and CPU per consume in the workers and in the primary, and whether the count came out exact.
 */
import cluster from 'node:cluster';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import {
  RateLimiterCluster,
  RateLimiterClusterMaster,
  RateLimiterMemory,
  RateLimiterRes,
  RateLimiterSQLite,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createRateLimit } from '../src/http/plugins/rate-limit.ts';
import { FixedWindowCounter } from '../src/http/rate-limiter-backend.ts';

const BATCH = 50;
const LIMIT = 1_000_000_000;
const WINDOW = 3600;

const cpuNow = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** `n` consumes of `limiter`, `BATCH` in flight; returns [wall ms, CPU µs, consumed seen last]. */
async function drive(
  limiter: Pick<RateLimiterAbstract, 'consume'>,
  n: number,
): Promise<{ wallMs: number; cpuUs: number; maxConsumed: number }> {
  const cpu0 = cpuNow();
  const t0 = performance.now();
  let maxConsumed = 0;
  const one = () =>
    limiter.consume('42', 1).then(
      (r) => (maxConsumed = Math.max(maxConsumed, r.consumedPoints)),
      (r: unknown) => {
        if (r instanceof RateLimiterRes) maxConsumed = Math.max(maxConsumed, r.consumedPoints);
        else throw r;
      },
    );
  let left = n;
  const lane = async () => {
    while (left > 0) {
      left--;
      await one();
    }
  };
  await Promise.all(Array.from({ length: BATCH }, lane));
  return { wallMs: performance.now() - t0, cpuUs: cpuNow() - cpu0, maxConsumed };
}

async function inProcess(n: number): Promise<void> {
  const row = (name: string, cpu: number, wall: number) =>
    `${name.padEnd(34)} ${(cpu / n).toFixed(3).padStart(7)} µs CPU/consume  ${Math.round(n / (wall / 1000))
      .toLocaleString('en-US')
      .padStart(12)} consumes/s`;
  const counter = new FixedWindowCounter(WINDOW);
  for (let i = 0; i < 100_000; i++) counter.consume(42); // warm-up
  const cpu0 = cpuNow();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) if (counter.consume(42) > LIMIT) counter.msBeforeNext(42);
  const syncCpu = cpuNow() - cpu0;
  const syncWall = performance.now() - t0;
  const memory = new RateLimiterMemory({ points: LIMIT, duration: WINDOW });
  await drive(memory, 100_000); // warm-up
  const m = await drive(memory, n);
  console.log(`one process, ${n.toLocaleString('en-US')} consumes:`);
  console.log(row('FixedWindowCounter (sync)', syncCpu, syncWall));
  console.log(row('RateLimiterMemory (promise each)', m.cpuUs, m.wallMs));
  // The whole onRequest hook (src/http/plugins/rate-limit.ts): counting, three headers, done().
  for (const [name, limiter] of [
    ['hook + FixedWindowCounter', new FixedWindowCounter(WINDOW)],
    ['hook + RateLimiterMemory', new RateLimiterMemory({ points: LIMIT, duration: WINDOW })],
  ] as const) {
    const hook = createRateLimit(LIMIT, WINDOW, limiter);
    const request = { accountId: 42 } as unknown as FastifyRequest;
    const headers = new Map<string, string>();
    const reply = { raw: { setHeader: (k: string, v: string) => headers.set(k, v) } } as unknown as FastifyReply;
    const lane = (count: number) =>
      new Promise<void>((resolve) => {
        let left = count;
        const next = (): void => {
          if (left-- === 0) return resolve();
          hook(request, reply, () => queueMicrotask(next));
        };
        next();
      });
    await Promise.all(Array.from({ length: BATCH }, () => lane(2000)));
    const c0 = cpuNow();
    const w0 = performance.now();
    await Promise.all(Array.from({ length: BATCH }, () => lane(n / BATCH)));
    console.log(row(name, cpuNow() - c0, performance.now() - w0));
  }
}

const flagsSpec = {
  n: { type: 'string', default: '1000000' },
  workers: { type: 'string', default: '2' },
  'cluster-n': { type: 'string', default: '200000' },
} as const;

async function runClusterPhases(): Promise<void> {
  const { values } = parseArgs({ options: { ...flagsSpec, 'no-cluster': { type: 'boolean', default: false } } });
  const workers = Number(values.workers);
  const total = Number(values['cluster-n']);
  const dir = mkdtempSync(join(tmpdir(), 'msgsvc-bench-rl-'));
  new RateLimiterClusterMaster();
  try {
    for (const kind of ['ipc', 'sqlite'] as const) {
      if (kind === 'sqlite') {
        const db = new Database(join(dir, 'rate.db'));
        db.pragma('journal_mode = WAL');
        db.prepare('CREATE TABLE IF NOT EXISTS rl (key TEXT PRIMARY KEY, points INTEGER NOT NULL DEFAULT 0, expire INTEGER)').run();
        db.close();
      }
      const primaryCpu0 = cpuNow();
      const t0 = performance.now();
      const reports = await Promise.all(
        Array.from(
          { length: workers },
          () =>
            new Promise<{ cpuUs: number; maxConsumed: number }>((resolve, reject) => {
              const w = cluster.fork({
                RL_BENCH_KIND: kind,
                RL_BENCH_N: String(Math.floor(total / workers)),
                RL_BENCH_FILE: join(dir, 'rate.db'),
              });
              w.on('message', (m: { bench?: { cpuUs: number; maxConsumed: number } }) => {
                if (m.bench) resolve(m.bench);
              });
              w.on('exit', (code) => code !== 0 && reject(new Error(`worker exited ${code}`)));
            }),
        ),
      );
      const wall = performance.now() - t0;
      const primaryCpu = cpuNow() - primaryCpu0;
      const n = Math.floor(total / workers) * workers;
      const workerCpu = reports.reduce((s, r) => s + r.cpuUs, 0);
      const exact = Math.max(...reports.map((r) => r.maxConsumed)) === n;
      console.log(
        `${workers} processes, ${kind === 'ipc' ? 'RateLimiterCluster (IPC to primary)' : 'RateLimiterSQLite (separate file)  '}: ` +
          `${Math.round(n / (wall / 1000))
            .toLocaleString('en-US')
            .padStart(8)} consumes/s, CPU/consume: workers ${(workerCpu / n).toFixed(1)} µs + primary ${(primaryCpu / n).toFixed(1)} µs` +
          ` (incl. process start-up), exact: ${exact}`,
      );
      for (const w of Object.values(cluster.workers ?? {})) w?.kill();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function worker(): Promise<void> {
  const n = Number(process.env.RL_BENCH_N);
  let limiter: Pick<RateLimiterAbstract, 'consume'>;
  if (process.env.RL_BENCH_KIND === 'ipc') {
    limiter = new RateLimiterCluster({ points: LIMIT, duration: WINDOW, keyPrefix: 'bench', timeoutMs: 5000 });
  } else {
    const db = new Database(process.env.RL_BENCH_FILE);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 5000');
    limiter = new RateLimiterSQLite({
      storeClient: db,
      storeType: 'better-sqlite3',
      tableName: 'rl',
      tableCreated: true,
      points: LIMIT,
      duration: WINDOW,
    });
  }
  const r = await drive(limiter, n);
  process.send!({ bench: { cpuUs: r.cpuUs, maxConsumed: r.maxConsumed } });
  // Stay until the primary has read the report and kills this worker.
  setInterval(() => {}, 1000);
}

if (cluster.isWorker) void worker();
else {
  const { values } = parseArgs({ options: { ...flagsSpec, 'no-cluster': { type: 'boolean', default: false } } });
  void inProcess(Number(values.n)).then(() => (values['no-cluster'] ? undefined : runClusterPhases()));
}
