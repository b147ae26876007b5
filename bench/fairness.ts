/**
 * Fair dispatch and MaxPerSecond (API.md §16 "Quotas and fairness"), on SQLite and PostgreSQL, each
 * part against `msgsvc worker` processes (the dispatcher as it runs in production, the sandbox
 * carrier, every setting at its default: batch 500, poll 100 ms, sandbox window 100):
 *
 * (a) latency under a backlog: account A has `--backlog` messages Queued (default 1,000,000,
 *     written straight into the table in a few set-based statements); one worker dispatches them.
 *     Meanwhile account B queues one message `--probes` times (default 100), one after the other,
 *     20 to 100 ms apart: the time from its row committed to the row seen Sent (polled every 5 ms)
 *     is B's queued → Sent latency. Reported: p50, p99, max, A's rate meanwhile and A's messages
 *     still Queued at the end (which must not be 0: the probes ran under the backlog).
 *     Target: p99 ≤ 2 s.
 * (b) throughput: `--messages` messages (default 100,000) Queued for ONE account, then the same
 *     number over `--accounts` accounts (default 100; a block of rows each, as 100 send-groups
 *     queued at once), each on a fresh database;
 *     one worker with MSGSVC_SANDBOX_RECEIPT_MS=0, timed as bench/dispatch.ts does it (from the
 *     first message seen Sent to nothing due: no message queued or leased, no receipt pending),
 *     then checked: all Delivered, each submitted once. The pair is run `--repeat` times (default
 *     3; the machine may be shared, and one run's rate moves by ±10 %). Target: the median of the
 *     many accounts' rate over the one account's ≥ 90 %.
 * (c) MaxPerSecond: an account with MaxPerSecond `--mps` (default 50) and enough messages Queued
 *     for the whole run; TWO workers (carriers named `w1` and `w2`, so the log says which sent
 *     what) sharing one Redis (REDIS_URL, a key prefix of their own). Over `--mps-seconds` whole
 *     seconds (default 30) after the first message went: the messages Sent, by second (their
 *     DateSent) and by worker. Target: the total within 5 % of MaxPerSecond × seconds, none of the
 *     seconds above MaxPerSecond by more than 5 %. Skipped (and said so) without Redis.
 *
 * The claim reads the index messages_account_due_ix (account_id, due_at, id) WHERE due_at IS NOT
 * NULL (migration 023); `if not exists` here is for a database made before it.
 *
 *   node --import tsx bench/fairness.ts [--backlog 1000000] [--probes 100] [--messages 100000]
 *     [--accounts 100] [--repeat 3] [--mps 50] [--mps-seconds 30] [--parts a,b,c] [--stores sqlite,postgres]
 *     [--pg-url postgres://postgres@127.0.0.1:5432/postgres] [--redis-url redis://127.0.0.1:6379] [--app DIR]
 *
 * `--app DIR` runs an existing copy (bench/run.ts passes its own build); otherwise bin/msgsvc.js runs
 * whatever it picks (dist/ when up to date, else the sources through tsx). The last line is
 * `FAIRNESS {json}` for `npm run bench -- --only fairness`. Exit code 1 when a target is missed,
 * unless MSGSVC_BENCH_REPORT_ONLY is set.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { freshStore as freshBenchStore, startWorker as startBenchWorker, waitFor } from './lib/workers.ts';
import { postgresReachable } from './lib/databases.ts';
import { cpuSeconds, msgsvcStartFlags, stopAll } from './lib/procs.ts';
import type { Store } from '../src/store/db.ts';
import { createAccount } from '../src/store/repositories/accounts.ts';
import { insertNumber } from '../src/store/repositories/numbers.ts';
import { chooseEntry } from '../bin/entry.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: flags } = parseArgs({
  options: {
    backlog: { type: 'string', default: '1000000' },
    probes: { type: 'string', default: '100' },
    messages: { type: 'string', default: '100000' },
    accounts: { type: 'string', default: '100' },
    repeat: { type: 'string', default: '3' },
    mps: { type: 'string', default: '50' },
    'mps-seconds': { type: 'string', default: '30' },
    parts: { type: 'string', default: 'a,b,c' },
    stores: { type: 'string', default: 'sqlite,postgres' },
    app: { type: 'string' },
    'pg-url': { type: 'string', default: process.env.MSGSVC_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    'redis-url': { type: 'string', default: process.env.MSGSVC_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379' },
  },
});
const whole = (name: keyof typeof flags, min: number): number => {
  const n = Number(flags[name]);
  if (!Number.isSafeInteger(n) || n < min) throw new Error(`--${name} must be a whole number ≥ ${min}, not ${String(flags[name])}`);
  return n;
};
const BACKLOG = whole('backlog', 1);
const PROBES = whole('probes', 1);
const MESSAGES = whole('messages', 1);
const ACCOUNTS = whole('accounts', 2);
const REPEAT = whole('repeat', 1);
const MPS = whole('mps', 1);
const MPS_SECONDS = whole('mps-seconds', 1);
const parts = new Set(flags.parts.split(',').map((p) => p.trim()));
const stores = flags.stores.split(',').map((s) => {
  const store = s.trim();
  if (store !== 'sqlite' && store !== 'postgres') throw new Error(`--stores: sqlite and/or postgres, not ${store}`);
  return store;
});
const TARGET_P99_MS = 2000;
const TARGET_RATIO = 0.9;
const TARGET_MPS_ERROR = 0.05;
const NUMBER = '55155';
const appRoot = flags.app ? resolve(flags.app) : ROOT;
// The node flags `npm start` gives msgsvc, so this measures what runs in production.
const NODE_ARGS = ['--no-memory-reducer', ...msgsvcStartFlags(ROOT)];
const INDEX = sql`create index if not exists messages_account_due_ix on messages (account_id, due_at, id) where due_at is not null`;

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const percentile = (sorted: readonly number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

/** `count` accounts with consecutive ids, each with the Active number 55155; returns the first id. */
async function makeAccounts(store: Store, count: number, name: string): Promise<number> {
  const now = Math.floor(Date.now() / 1000);
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    const id = await createAccount(store.db, `${name} ${i + 1}`, now);
    await insertNumber(store.db, id, NUMBER, 0, null, now);
    ids.push(id);
  }
  if (ids.some((id, i) => id !== ids[0]! + i)) throw new Error('account ids are not consecutive');
  return ids[0]!;
}

/**
 * Queues `count` SMS due at `dueAt` (epoch ms) for accounts `first` … `first + accounts − 1`, an
 * equal block of consecutive rows each (as a send-group writes its messages), recipients
 * +1 200 1000000 + offset + i; set-based, 200,000 rows per statement.
 */
async function queueMessages(store: Store, first: number, accounts: number, count: number, dueAt: number, offset = 0): Promise<void> {
  const createdAt = Math.floor(dueAt / 1000);
  for (let from = 0; from < count; from += 200_000) {
    const n = Math.min(200_000, count - from);
    const series =
      store.dialect === 'postgres'
        ? sql`select i from generate_series(cast(${from} as integer), cast(${from + n - 1} as integer)) as s(i)`
        : sql`select i from (with recursive s(i) as (select cast(${from} as integer) union all select i + 1 from s where i < ${from + n - 1}) select i from s)`;
    await sql`insert into messages (account_id, direction, number, mobile_phone, message, type_id, status_id, segments, credits, created_at, due_at)
      select cast(${first} as integer) + (i * cast(${accounts} as integer)) / cast(${count} as integer), 1, ${NUMBER}, '1200' || cast(1000000 + cast(${offset} as integer) + i as text),
        'Our spring sale starts Friday. Reply STOP to opt out.', 1, 1, 1, 1, cast(${createdAt} as bigint), cast(${dueAt} as bigint)
      from (${series}) as n`.execute(store.db);
  }
}

/** A fresh database of `kind`, migrated, with the claim's index; `fill` writes its rows before the index is built. */
function freshStore(kind: 'sqlite' | 'postgres', label: string, dir: string, fill: (store: Store) => Promise<void>) {
  return freshBenchStore(kind, label, dir, flags['pg-url'], async (store) => {
    await fill(store);
    await INDEX.execute(store.db);
  });
}

/** `msgsvc worker` in its own process on `url` (bench/lib/workers.ts). */
const startWorker = (url: string, env: Record<string, string>) => startBenchWorker(appRoot, NODE_ARGS, url, env);

const countWhere = async (store: Store, where: ReturnType<typeof sql>) =>
  Number((await sql<{ n: number }>`select count(*) as n from messages where ${where}`.execute(store.db)).rows[0]!.n);

interface LatencyRun {
  store: string;
  backlog: number;
  probes: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  backlogPerSecond: number;
  backlogLeft: number;
  met: boolean;
}

/** (a) */
async function latency(kind: 'sqlite' | 'postgres', dir: string): Promise<LatencyRun> {
  let a = 0;
  let b = 0;
  const seededAt = Date.now();
  const fresh = await freshStore(kind, 'fair_a', dir, async (store) => {
    a = await makeAccounts(store, 1, 'A');
    b = await makeAccounts(store, 1, 'B');
    await queueMessages(store, a, 1, BACKLOG, Date.now() - 60_000);
  });
  const { store } = fresh;
  console.log(`${kind} (a): ${BACKLOG.toLocaleString('en-US')} messages of A queued in ${((Date.now() - seededAt) / 1000).toFixed(1)} s`);
  const worker = startWorker(fresh.url, { MSGSVC_SANDBOX_RECEIPT_MS: '1000' });
  try {
    await waitFor(
      async () => (await countWhere(store, sql`account_id = ${a} and status_id in (2, 3)`)) > 0,
      [worker],
      120_000,
      'A to start',
    );
    const sentBefore = await countWhere(store, sql`account_id = ${a} and status_id in (2, 3)`);
    const startedAt = performance.now();
    const latencies: number[] = [];
    for (let i = 0; i < PROBES; i++) {
      const now = Date.now();
      const { id } = await store.db
        .insertInto('messages')
        .values({
          account_id: b,
          direction: 1,
          number: NUMBER,
          mobile_phone: `1555${String(2_000_000 + i).padStart(7, '0')}`,
          message: 'B, one message',
          type_id: 1,
          status_id: 1,
          segments: 1,
          credits: 1,
          created_at: Math.floor(now / 1000),
          due_at: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const queuedAt = performance.now();
      for (;;) {
        const row = await store.db.selectFrom('messages').select('status_id').where('id', '=', id).executeTakeFirstOrThrow();
        if (row.status_id === 2 || row.status_id === 3) break;
        if (row.status_id !== 1) throw new Error(`B's message ended with status ${row.status_id}`);
        if (performance.now() - queuedAt > 60_000) throw new Error("B's message was not sent within 60 s");
        if (worker.child.exitCode !== null) throw new Error(`msgsvc worker exited:\n${worker.output().slice(-2000)}`);
        await sleep(5);
      }
      latencies.push(performance.now() - queuedAt);
      await sleep(20 + Math.random() * 80);
    }
    const seconds = (performance.now() - startedAt) / 1000;
    const sentAfter = await countWhere(store, sql`account_id = ${a} and status_id in (2, 3)`);
    const left = await countWhere(store, sql`account_id = ${a} and status_id = 1`);
    latencies.sort((x, y) => x - y);
    const run: LatencyRun = {
      store: kind,
      backlog: BACKLOG,
      probes: PROBES,
      p50Ms: round(percentile(latencies, 50), 1),
      p99Ms: round(percentile(latencies, 99), 1),
      maxMs: round(latencies.at(-1)!, 1),
      backlogPerSecond: Math.round((sentAfter - sentBefore) / seconds),
      backlogLeft: left,
      met: percentile(latencies, 99) <= TARGET_P99_MS && left > 0,
    };
    console.log(
      `${kind} (a): B's message queued → Sent, ${PROBES} times under A's backlog: p50 ${run.p50Ms} ms, p99 ${run.p99Ms} ms, max ${run.maxMs} ms ` +
        `(target p99 ≤ ${TARGET_P99_MS} ms: ${run.met ? 'met' : 'MISSED'}); A meanwhile ${run.backlogPerSecond.toLocaleString('en-US')} msg/s, ` +
        `${left.toLocaleString('en-US')} of A's still Queued at the end${left === 0 ? ' (the backlog ran out: NOT measured under a backlog)' : ''}`,
    );
    return run;
  } finally {
    await worker.stop();
    await fresh.close();
  }
}

interface ThroughputRun {
  store: string;
  messages: number;
  accounts: number;
  seconds: number;
  messagesPerSecond: number;
  /** The worker's CPU time (user + system) from its start to the queue drained, s. */
  workerCpuSeconds: number;
  /** PostgreSQL only: the CPU time of the server processes serving this database (the worker's connections and this script's), s. */
  postgresCpuSeconds?: number;
}

/** One run of (b): `messages` over `accounts` accounts, one worker, until nothing is due. */
async function throughputRun(kind: 'sqlite' | 'postgres', dir: string, accounts: number): Promise<ThroughputRun> {
  let first = 0;
  const fresh = await freshStore(kind, `fair_b${accounts}`, dir, async (store) => {
    first = await makeAccounts(store, accounts, 'T');
    await queueMessages(store, first, accounts, MESSAGES, Date.now() - 1000);
  });
  const { store } = fresh;
  const worker = startWorker(fresh.url, { MSGSVC_SANDBOX_RECEIPT_MS: '0' });
  try {
    let started = 0;
    await waitFor(
      async () => {
        if ((await countWhere(store, sql`status_id in (2, 3)`)) === 0) return false;
        started = performance.now();
        return true;
      },
      [worker],
      120_000,
      'the first message',
    );
    // Nothing due: no message queued or leased, no receipt pending (two reads of partial indexes).
    const pending = async () =>
      (await countWhere(store, sql`id in (select id from messages where due_at is not null limit 1)`)) +
      (await countWhere(store, sql`id in (select id from messages where receipt_due_at is not null limit 1)`));
    await waitFor(async () => (await pending()) === 0, [worker], Math.max(120_000, MESSAGES * 2), 'the queue to drain');
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuSeconds(worker.child.pid!);
    // PostgreSQL's side, as bench/dispatch.ts reads it: the server is local, its processes in /proc.
    let postgresCpu: number | undefined;
    if (store.dialect === 'postgres') {
      const pids = (await sql<{ pid: number }>`select pid from pg_stat_activity where datname = current_database()`.execute(store.db)).rows;
      postgresCpu = pids.reduce((sum, r) => sum + cpuSeconds(Number(r.pid)), 0);
    }
    const delivered = await countWhere(store, sql`status_id = 3 and attempts = 1`);
    if (delivered !== MESSAGES) throw new Error(`${delivered} of ${MESSAGES} Delivered at the first attempt`);
    return {
      store: kind,
      messages: MESSAGES,
      accounts,
      seconds: round(seconds),
      messagesPerSecond: Math.round(MESSAGES / seconds),
      workerCpuSeconds: round(cpu),
      ...(postgresCpu !== undefined ? { postgresCpuSeconds: round(postgresCpu) } : {}),
    };
  } finally {
    await worker.stop();
    await fresh.close();
  }
}

const cpuOf = (r: ThroughputRun) =>
  `worker CPU ${r.workerCpuSeconds} s${r.postgresCpuSeconds !== undefined ? `, PostgreSQL CPU ${r.postgresCpuSeconds} s` : ''}`;

/** (b): `--repeat` pairs of runs (one account, then many), the median ratio judged. */
async function throughput(kind: 'sqlite' | 'postgres', dir: string) {
  const pairs: { one: ThroughputRun; many: ThroughputRun; ratio: number }[] = [];
  for (let i = 0; i < REPEAT; i++) {
    const one = await throughputRun(kind, dir, 1);
    const many = await throughputRun(kind, dir, ACCOUNTS);
    const ratio = round(many.messagesPerSecond / one.messagesPerSecond, 3);
    pairs.push({ one, many, ratio });
    console.log(
      `${kind} (b) ${i + 1}/${REPEAT}: ${MESSAGES.toLocaleString('en-US')} messages of 1 account ${one.messagesPerSecond.toLocaleString('en-US')} msg/s ` +
        `(${one.seconds} s, ${cpuOf(one)}), over ${ACCOUNTS} accounts ${many.messagesPerSecond.toLocaleString('en-US')} msg/s ` +
        `(${many.seconds} s, ${cpuOf(many)}): ${(ratio * 100).toFixed(1)} %; load ${round(loadavg()[0]!)}`,
    );
  }
  const ratio = [...pairs.map((p) => p.ratio)].sort((x, y) => x - y)[Math.floor(pairs.length / 2)]!;
  const met = ratio >= TARGET_RATIO;
  console.log(
    `${kind} (b): median ${(ratio * 100).toFixed(1)} % of one account's rate (target ≥ ${TARGET_RATIO * 100} %: ${met ? 'met' : 'MISSED'})`,
  );
  return { store: kind, pairs, ratio, met };
}

/** (c) */
async function maxPerSecond(kind: 'sqlite' | 'postgres', dir: string) {
  let m = 0;
  const queued = MPS * (MPS_SECONDS + 20);
  const fresh = await freshStore(kind, 'fair_c', dir, async (store) => {
    m = await makeAccounts(store, 1, 'M');
    await store.db.updateTable('accounts').set({ max_per_second: MPS }).where('id', '=', m).execute();
    await queueMessages(store, m, 1, queued, Date.now() - 1000);
  });
  const { store } = fresh;
  const prefix = `msgsvc-bench-${process.pid}-${Date.now().toString(36)}`;
  const workers = ['w1', 'w2'].map((name) =>
    startWorker(fresh.url, {
      REDIS_URL: flags['redis-url'],
      MSGSVC_RATE_KEY_PREFIX: prefix,
      MSGSVC_CARRIERS: `${name}=sandbox:`,
      MSGSVC_SANDBOX_RECEIPT_MS: '0',
    }),
  );
  try {
    await waitFor(async () => (await countWhere(store, sql`status_id in (2, 3)`)) > 0, workers, 120_000, 'the first message');
    // Whole seconds of the workers' clock (DateSent), from the next one on.
    const from = Math.floor(Date.now() / 1000) + 1;
    const to = from + MPS_SECONDS;
    while (Date.now() < to * 1000 + 1000) {
      const dead = workers.find((w) => w.child.exitCode !== null);
      if (dead) throw new Error(`msgsvc worker exited (${dead.child.exitCode}):\n${dead.output().slice(-2000)}`);
      await sleep(200);
    }
    const rows = (
      await sql<{ sent_at: number; carrier: string; n: number }>`select sent_at, carrier, count(*) as n from messages
        where account_id = ${m} and status_id in (2, 3) and sent_at >= ${from} and sent_at < ${to} group by sent_at, carrier`.execute(
        store.db,
      )
    ).rows;
    const perSecond = new Map<number, number>();
    const perWorker: Record<string, number> = {};
    for (const r of rows) {
      perSecond.set(Number(r.sent_at), (perSecond.get(Number(r.sent_at)) ?? 0) + Number(r.n));
      perWorker[r.carrier] = (perWorker[r.carrier] ?? 0) + Number(r.n);
    }
    const seconds = Array.from({ length: MPS_SECONDS }, (_, i) => perSecond.get(from + i) ?? 0);
    const total = seconds.reduce((x, y) => x + y, 0);
    const expected = MPS * MPS_SECONDS;
    const error = round((total - expected) / expected, 4);
    const met = Math.abs(error) <= TARGET_MPS_ERROR && Math.max(...seconds) <= MPS * (1 + TARGET_MPS_ERROR);
    const left = await countWhere(store, sql`account_id = ${m} and status_id = 1`);
    console.log(
      `${kind} (c): MaxPerSecond ${MPS}, two workers sharing Redis, ${MPS_SECONDS} s: ${total} sent (expected ${expected}, ${(error * 100).toFixed(2)} %; ` +
        `target within ${TARGET_MPS_ERROR * 100} %: ${met ? 'met' : 'MISSED'}); per second min ${Math.min(...seconds)}, max ${Math.max(...seconds)}; ` +
        `by worker ${JSON.stringify(perWorker)}; ${left} still Queued`,
    );
    return { store: kind, maxPerSecond: MPS, seconds: MPS_SECONDS, total, expected, error, perSecond: seconds, perWorker, met };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await fresh.close();
  }
}

async function redisReachable(url: string): Promise<boolean> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1000, retryStrategy: () => null });
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

const dir = mkdtempSync(join(tmpdir(), 'msgsvc-fairness-'));
let exitCode = 0;
try {
  const runs = flags.app ? 'a build of src/ (dist)' : chooseEntry(ROOT).entry === 'dist' ? 'dist' : 'src through tsx';
  console.log(
    `fairness: backlog ${BACKLOG.toLocaleString('en-US')}, ${PROBES} probes; throughput ${MESSAGES.toLocaleString('en-US')} messages, 1 vs ${ACCOUNTS} accounts; ` +
      `MaxPerSecond ${MPS} over ${MPS_SECONDS} s; msgsvc runs ${runs}; load average ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}`,
  );
  const result = {
    sizes: {
      backlog: BACKLOG,
      probes: PROBES,
      messages: MESSAGES,
      accounts: ACCOUNTS,
      repeat: REPEAT,
      maxPerSecond: MPS,
      seconds: MPS_SECONDS,
    },
    runs,
    latency: [] as LatencyRun[],
    throughput: [] as Awaited<ReturnType<typeof throughput>>[],
    maxPerSecond: [] as Awaited<ReturnType<typeof maxPerSecond>>[],
    skipped: [] as string[],
  };
  const redis = parts.has('c') && (await redisReachable(flags['redis-url']));
  if (parts.has('c') && !redis) {
    console.log(`(c) skipped: Redis not reachable at ${flags['redis-url']}`);
    result.skipped.push('c: Redis not reachable');
  }
  for (const kind of stores) {
    if (kind === 'postgres' && !(await postgresReachable(flags['pg-url']))) {
      console.log(`postgres: skipped (no answer at ${flags['pg-url']})`);
      result.skipped.push('postgres: not reachable');
      continue;
    }
    if (parts.has('a')) result.latency.push(await latency(kind, dir));
    if (parts.has('b')) result.throughput.push(await throughput(kind, dir));
    if (redis) result.maxPerSecond.push(await maxPerSecond(kind, dir));
  }
  if ([...result.latency, ...result.throughput, ...result.maxPerSecond].some((r) => !r.met)) exitCode = 1;
  // One machine-readable line for npm run bench (bench/run.ts), which records it in its results.
  console.log(`FAIRNESS ${JSON.stringify(result)}`);
  if (process.env.MSGSVC_BENCH_REPORT_ONLY) exitCode = 0;
} finally {
  await stopAll();
  rmSync(dir, { recursive: true, force: true });
}
process.exitCode = exitCode;
