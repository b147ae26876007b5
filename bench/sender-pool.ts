/**
 * Sender pools (docs/API.md §17), on SQLite and PostgreSQL, against msgsvc processes run as
 * production runs them (`node --no-memory-reducer` and the flags of `npm start`; every setting at
 * its default unless said: batch 500, poll 100 ms, the sandbox carrier):
 *
 * (a) the priority lane: account A has `--seed` messages of Priority 0 Queued (default 1,000,000,
 *     written straight into the table in a few set-based statements); one `msgsvc worker`
 *     dispatches them (receipts 1 s after Sent). Meanwhile, `--probes` times (default 50), one
 *     after the other and 20 to 100 ms apart, one Priority 1 message of A (the same account) and
 *     one of another account B are queued, in turns (B first every other time): from its row
 *     committed to the row seen Sent (polled every 5 ms) is its queued → Sent latency. A's
 *     Priority 0 messages still Queued after the last probe were Queued ahead of every probe: they
 *     must be at least `--backlog` (default 100,000), or the probes did not run behind that backlog.
 *     Target: p99 ≤ 1 s, for A's and for B's.
 * (b) a number's MaxPerSecond: an account with two numbers, one with MaxPerSecond `--mps`
 *     (default 20) and its messages Queued, the other without a limit and `--free` messages
 *     (default 2,000) queued behind them (the same due time, higher ids); TWO workers (carriers
 *     named `w1` and `w2`) sharing one Redis (REDIS_URL, a key prefix of their own). Over
 *     `--mps-seconds` whole seconds (default 20) after the first message went: the limited
 *     number's messages Sent, by second (DateSent) and by worker. Target: the total within 5 % of
 *     MaxPerSecond × seconds, none of the seconds above MaxPerSecond by more than 5 %, every
 *     message Sent submitted once. And (API.md §17.2: "the account's other numbers are not held
 *     back") the other number's messages all Sent within 2 s of the first message. Run twice per
 *     store: with `--mps-queued` of the limited number's messages (default MaxPerSecond ×
 *     (seconds + 20), what the run sends and more), and with `--mps-backlog` (default 100,000; 0:
 *     not run). Also reported: the workers' CPU (and PostgreSQL's) over the run. Skipped without
 *     Redis.
 * (c) what choosing the number costs when a message is queued, `msgsvc serve` with the
 *     dispatcher off. The account has 4 Active NANP numbers (area codes 212, 415, 646, 312), its
 *     contacts spread evenly over 8 area codes (so half of the recipients have a local number),
 *     and one contact in ten an earlier message (a day old) from the 415 number: its sticky one.
 *     Three settings, each set straight in the database: `first` (SenderSelection first, no
 *     limits: the plain path), `pool` (SenderSelection pool, no limits), `pool-limits` (pool, and
 *     3 of the 4 numbers with MaxPerDay and MaxRecipientsPerMonth 10,000,000: every message they
 *     take is counted).
 *     (c1) sms/send to a random contact of `--contacts` (default 10,000), 50 connections, in
 *          `--send-rounds` rounds (default 5) of `--send-seconds` s (default 2) of each setting in
 *          turn (the order reversed every other round), after a warm-up of 1 s each; the server
 *          pinned to CPU 0, this process (autocannon) to CPU 1 where `taskset` exists. Reported:
 *          median req/s, CPU µs per request of the server (and of PostgreSQL's processes serving
 *          the database), p50/p99 latency, each setting ÷ `first`.
 *     (c2) send-group to a group of `--group` members (default 100,000): one fresh account per
 *          setting and round (`--group-repeat`, default 2; the order reversed every other round),
 *          seconds from the request sent to its 201, the server's CPU, and how many messages went
 *          from each number.
 *
 *   node --import tsx bench/sender-pool.ts [--seed 1000000] [--backlog 100000] [--probes 50]
 *     [--mps 20] [--mps-seconds 20] [--mps-queued N] [--mps-backlog 100000] [--free 2000]
 *     [--contacts 10000] [--send-rounds 5] [--send-seconds 2] [--group 100000] [--group-repeat 2]
 *     [--parts a,b,c] [--stores sqlite,postgres] [--pg-url postgres://postgres@127.0.0.1:5432/postgres]
 *     [--redis-url redis://127.0.0.1:6379] [--app DIR]
 *
 * `--app DIR` runs an existing copy (bench/run.ts passes its own build); otherwise bin/msgsvc.js runs
 * whatever it picks (dist/ when up to date, else the sources through tsx). The last line is
 * `SENDER_POOL {json}` for `npm run bench -- --only sender-pool`. Exit code 1 when a target of (a)
 * or (b) is missed (or a send of (c) is refused), unless MSGSVC_BENCH_REPORT_ONLY is set.
 */
import autocannon, { type Result } from 'autocannon';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { freshStore as freshBenchStore, startWorker as startBenchWorker, waitFor } from './lib/workers.ts';
import { postgresReachable } from './lib/databases.ts';
import { cpuSeconds, freePort, machine, msgsvcStartFlags, pinSelf, startServer, stopAll, type Server } from './lib/procs.ts';
import { seedGroupAccount } from './lib/seed.ts';
import type { Store } from '../src/store/db.ts';
import { createAccount } from '../src/store/repositories/accounts.ts';
import { insertNumber } from '../src/store/repositories/numbers.ts';
import { chooseEntry } from '../bin/entry.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: flags } = parseArgs({
  options: {
    seed: { type: 'string', default: '1000000' },
    backlog: { type: 'string', default: '100000' },
    probes: { type: 'string', default: '50' },
    mps: { type: 'string', default: '20' },
    'mps-seconds': { type: 'string', default: '20' },
    free: { type: 'string', default: '2000' },
    'mps-queued': { type: 'string' },
    'mps-backlog': { type: 'string', default: '100000' },
    contacts: { type: 'string', default: '10000' },
    'send-rounds': { type: 'string', default: '5' },
    'send-seconds': { type: 'string', default: '2' },
    group: { type: 'string', default: '100000' },
    'group-repeat': { type: 'string', default: '2' },
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
const SEED = whole('seed', 1);
const BACKLOG = whole('backlog', 0);
const PROBES = whole('probes', 1);
const MPS = whole('mps', 1);
const MPS_SECONDS = whole('mps-seconds', 1);
const FREE = whole('free', 1);
// (b): the limited number's messages Queued when the workers start (default: enough for the run and 20 s more).
const MPS_QUEUED = flags['mps-queued'] === undefined ? MPS * (MPS_SECONDS + 20) : whole('mps-queued', 1);
// (b) again with this backlog on the limited number (0: not run): the other number must not wait for it.
const MPS_BACKLOG = whole('mps-backlog', 0);
/** (b): the other number's messages all Sent within this long of the first message (API.md §17.2: not held back). */
const TARGET_FREE_SECONDS = 2;
const CONTACTS = whole('contacts', 8);
const SEND_ROUNDS = whole('send-rounds', 1);
const SEND_SECONDS = whole('send-seconds', 1);
const GROUP = whole('group', 8);
const GROUP_REPEAT = whole('group-repeat', 1);
const parts = new Set(flags.parts.split(',').map((p) => p.trim()));
const stores = flags.stores.split(',').map((s) => {
  const store = s.trim();
  if (store !== 'sqlite' && store !== 'postgres') throw new Error(`--stores: sqlite and/or postgres, not ${store}`);
  return store;
});
const TARGET_P99_MS = 1000;
const TARGET_MPS_ERROR = 0.05;
const NUMBER = '55155';
const appRoot = flags.app ? resolve(flags.app) : ROOT;
// The node flags `npm start` gives msgsvc, so this measures what runs in production.
const NODE_ARGS = ['--no-memory-reducer', ...msgsvcStartFlags(ROOT)];
const SERVE_ENV = { LOG_LEVEL: 'info', MSGSVC_RATE_LIMIT: '1000000000', MSGSVC_DISPATCHER: '0' };

/** (c): the pool's numbers (local to 4 of the contacts' 8 area codes), in numbers/index order. */
const POOL_NUMBERS = ['12125550100', '14155550100', '16465550100', '13125550100'];
const AREAS = ['212', '415', '646', '312', '617', '713', '305', '206'];
/** The number of the earlier message one contact in ten has (its sticky number). */
const STICKY_NUMBER = POOL_NUMBERS[1]!;
/** `pool-limits`: these numbers get MaxPerDay and MaxRecipientsPerMonth LIMIT (room for everything). */
const LIMITED = POOL_NUMBERS.slice(0, 3);
const LIMIT = 10_000_000;
const MODES = ['first', 'pool', 'pool-limits'] as const;
type Mode = (typeof MODES)[number];

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const percentile = (sorted: readonly number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const load1 = () => round(loadavg()[0]!);

/** An account with its Active `numbers` (in that order); returns its id. */
async function makeAccount(store: Store, name: string, numbers: readonly string[]): Promise<number> {
  const now = Math.floor(Date.now() / 1000);
  const id = await createAccount(store.db, name, now);
  for (const n of numbers) await insertNumber(store.db, id, n, 0, null, now);
  return id;
}

/**
 * Queues `count` SMS of `account` from `number`, due at `dueAt` (epoch ms), Priority 0, recipients
 * +1 200 1000000 + offset + i; set-based, 200,000 rows per statement.
 */
async function queueMessages(
  store: Store,
  m: { account: number; number: string; count: number; dueAt: number; offset?: number },
): Promise<void> {
  const createdAt = Math.floor(m.dueAt / 1000);
  const offset = m.offset ?? 0;
  for (let from = 0; from < m.count; from += 200_000) {
    const n = Math.min(200_000, m.count - from);
    const series =
      store.dialect === 'postgres'
        ? sql`select i from generate_series(cast(${from} as integer), cast(${from + n - 1} as integer)) as s(i)`
        : sql`select i from (with recursive s(i) as (select cast(${from} as integer) union all select i + 1 from s where i < ${from + n - 1}) select i from s)`;
    await sql`insert into messages (account_id, direction, number, mobile_phone, message, type_id, status_id, segments, credits, created_at, due_at)
      select cast(${m.account} as integer), 1, ${m.number}, '1200' || cast(1000000 + cast(${offset} as integer) + i as text),
        'Our spring sale starts Friday. Reply STOP to opt out.', 1, 1, 1, 1, cast(${createdAt} as bigint), cast(${m.dueAt} as bigint)
      from (${series}) as n`.execute(store.db);
  }
}

/** A fresh database of `kind`, migrated, filled by `fill`, analysed on PostgreSQL. */
function freshStore(kind: 'sqlite' | 'postgres', label: string, dir: string, fill: (store: Store) => Promise<void>) {
  return freshBenchStore(kind, label, dir, flags['pg-url'], fill);
}

/** `msgsvc worker` in its own process on `url` (bench/lib/workers.ts). */
const startWorker = (url: string, env: Record<string, string>) => startBenchWorker(appRoot, NODE_ARGS, url, env);

const countWhere = async (store: Store, where: ReturnType<typeof sql>) =>
  Number((await sql<{ n: number }>`select count(*) as n from messages where ${where}`.execute(store.db)).rows[0]!.n);

interface Spread {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}
const spreadOf = (xs: number[]): Spread => {
  const s = [...xs].sort((x, y) => x - y);
  return { p50Ms: round(percentile(s, 50), 1), p99Ms: round(percentile(s, 99), 1), maxMs: round(s.at(-1)!, 1) };
};

interface LaneRun {
  store: string;
  seeded: number;
  probes: number;
  /** A's Priority 1 messages, queued behind A's own Priority 0 backlog. */
  sameAccount: Spread;
  /** B's Priority 1 messages. */
  otherAccount: Spread;
  /** A's Priority 0 messages still Queued after the last probe: the least any probe had ahead of it. */
  backlogAhead: number;
  backlogPerSecond: number;
  met: boolean;
}

/** (a) */
async function lane(kind: 'sqlite' | 'postgres', dir: string): Promise<LaneRun> {
  let a = 0;
  let b = 0;
  const seededAt = Date.now();
  const fresh = await freshStore(kind, 'pool_a', dir, async (store) => {
    a = await makeAccount(store, 'A', [NUMBER]);
    b = await makeAccount(store, 'B', [NUMBER]);
    await queueMessages(store, { account: a, number: NUMBER, count: SEED, dueAt: Date.now() - 60_000 });
  });
  const { store } = fresh;
  console.log(
    `${kind} (a): ${SEED.toLocaleString('en-US')} Priority 0 messages of A queued in ${((Date.now() - seededAt) / 1000).toFixed(1)} s`,
  );
  const worker = startWorker(fresh.url, { MSGSVC_SANDBOX_RECEIPT_MS: '1000' });
  const sentOfA = () => countWhere(store, sql`account_id = ${a} and status_id in (2, 3)`);
  /** One Priority 1 message of `account`, queued now; its queued → Sent time, ms. */
  const probe = async (account: number, i: number): Promise<number> => {
    const now = Date.now();
    const { id } = await store.db
      .insertInto('messages')
      .values({
        account_id: account,
        direction: 1,
        number: NUMBER,
        mobile_phone: `1555${String(2_000_000 + i).padStart(7, '0')}`,
        message: 'Your code is 123456.',
        type_id: 1,
        status_id: 1,
        segments: 1,
        credits: 1,
        created_at: Math.floor(now / 1000),
        due_at: now,
        priority: 1,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const queuedAt = performance.now();
    for (;;) {
      const row = await store.db.selectFrom('messages').select('status_id').where('id', '=', id).executeTakeFirstOrThrow();
      if (row.status_id === 2 || row.status_id === 3) return performance.now() - queuedAt;
      if (row.status_id !== 1) throw new Error(`a Priority 1 message ended with status ${row.status_id}`);
      if (performance.now() - queuedAt > 60_000) throw new Error('a Priority 1 message was not sent within 60 s');
      if (worker.child.exitCode !== null) throw new Error(`msgsvc worker exited:\n${worker.output().slice(-2000)}`);
      await sleep(5);
    }
  };
  try {
    await waitFor(async () => (await sentOfA()) > 0, [worker], 120_000, 'A to start');
    const sentBefore = await sentOfA();
    const startedAt = performance.now();
    const same: number[] = [];
    const other: number[] = [];
    for (let i = 0; i < PROBES; i++) {
      const turn = i % 2 === 0 ? (['same', 'other'] as const) : (['other', 'same'] as const);
      for (const who of turn) {
        if (who === 'same') same.push(await probe(a, 2 * i));
        else other.push(await probe(b, 2 * i + 1));
        await sleep(20 + Math.random() * 80);
      }
    }
    const seconds = (performance.now() - startedAt) / 1000;
    const sentAfter = await sentOfA();
    const ahead = await countWhere(store, sql`account_id = ${a} and status_id = 1 and priority = 0`);
    const run: LaneRun = {
      store: kind,
      seeded: SEED,
      probes: PROBES,
      sameAccount: spreadOf(same),
      otherAccount: spreadOf(other),
      backlogAhead: ahead,
      backlogPerSecond: Math.round((sentAfter - sentBefore) / seconds),
      met: false,
    };
    run.met = run.sameAccount.p99Ms <= TARGET_P99_MS && run.otherAccount.p99Ms <= TARGET_P99_MS && ahead >= BACKLOG;
    const show = (s: Spread) => `p50 ${s.p50Ms} ms, p99 ${s.p99Ms} ms, max ${s.maxMs} ms`;
    console.log(
      `${kind} (a): Priority 1 queued → Sent, ${PROBES} probes each: A's own (behind A's backlog) ${show(run.sameAccount)}; ` +
        `B's ${show(run.otherAccount)} (target p99 ≤ ${TARGET_P99_MS} ms: ${run.met ? 'met' : 'MISSED'}); A's backlog meanwhile ` +
        `${run.backlogPerSecond.toLocaleString('en-US')} msg/s, ${ahead.toLocaleString('en-US')} still Queued after the last probe` +
        `${ahead < BACKLOG ? ` (fewer than ${BACKLOG.toLocaleString('en-US')}: NOT measured behind that backlog; raise --seed)` : ''}; load ${load1()}`,
    );
    return run;
  } finally {
    await worker.stop();
    await fresh.close();
  }
}

/** (b) */
async function numberRate(kind: 'sqlite' | 'postgres', dir: string, queued: number) {
  const limited = '15550100001';
  const free = '15550100002';
  let m = 0;
  let firstFree = 0;
  const fresh = await freshStore(kind, 'pool_b', dir, async (store) => {
    m = await makeAccount(store, 'M', [limited, free]);
    await store.db
      .updateTable('account_numbers')
      .set({ max_per_second: MPS })
      .where('account_id', '=', m)
      .where('number', '=', limited)
      .execute();
    // The limited number's messages first in due order, the other number's behind them.
    const due = Date.now() - 1000;
    await queueMessages(store, { account: m, number: limited, count: queued, dueAt: due });
    await queueMessages(store, { account: m, number: free, count: FREE, dueAt: due, offset: 5_000_000 });
    // The other number's rows are the last ids: polled by primary key.
    const row = await store.db
      .selectFrom('messages')
      .select((eb) => eb.fn.min('id').as('id'))
      .where('number', '=', free)
      .executeTakeFirstOrThrow();
    firstFree = Number(row.id);
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
    const firstSent = performance.now();
    // Whole seconds of the workers' clock (DateSent), from the next one on.
    const from = Math.floor(Date.now() / 1000) + 1;
    const to = from + MPS_SECONDS;
    const workerCpu = () => workers.reduce((sum, w) => sum + cpuSeconds(w.child.pid!), 0);
    const cpuAtStart = workerCpu();
    const pgAtStart = await postgresCpu(store);
    let freeSeconds: number | undefined;
    // Until the window is over and the other number's messages are all Sent (at most 120 s more).
    while (Date.now() < to * 1000 + 1000 || (freeSeconds === undefined && Date.now() < to * 1000 + 120_000)) {
      const dead = workers.find((w) => w.child.exitCode !== null);
      if (dead) throw new Error(`msgsvc worker exited (${dead.child.exitCode}):\n${dead.output().slice(-2000)}`);
      if (freeSeconds === undefined && (await countWhere(store, sql`id >= ${firstFree} and status_id = 1`)) === 0)
        freeSeconds = round((performance.now() - firstSent) / 1000);
      await sleep(freeSeconds === undefined ? 20 : 200);
    }
    // The workers' CPU (and PostgreSQL's) over the run: a number's MaxPerSecond is applied after the claim.
    const cpuSecondsOver = round((performance.now() - firstSent) / 1000, 1);
    const workerCpuSeconds = round(workerCpu() - cpuAtStart);
    const postgresCpuSeconds = store.dialect === 'postgres' ? round((await postgresCpu(store)) - pgAtStart) : undefined;
    // Each message past the number's grant goes back unattempted: every one Sent was submitted once, none failed.
    const spent = await countWhere(
      store,
      sql`account_id = ${m} and ((status_id in (2, 3) and attempts <> 1) or status_id not in (1, 2, 3))`,
    );
    const rows = (
      await sql<{ sent_at: number; carrier: string; n: number }>`select sent_at, carrier, count(*) as n from messages
        where account_id = ${m} and number = ${limited} and status_id in (2, 3) and sent_at >= ${from} and sent_at < ${to}
        group by sent_at, carrier`.execute(store.db)
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
    const rateMet = Math.abs(error) <= TARGET_MPS_ERROR && Math.max(...seconds) <= MPS * (1 + TARGET_MPS_ERROR) && spent === 0;
    const freeMet = freeSeconds !== undefined && freeSeconds <= TARGET_FREE_SECONDS;
    const left = await countWhere(store, sql`account_id = ${m} and number = ${limited} and status_id = 1`);
    console.log(
      `${kind} (b): a number's MaxPerSecond ${MPS} with ${queued.toLocaleString('en-US')} of its messages Queued, two workers sharing Redis, ` +
        `${MPS_SECONDS} s: ${total} sent (expected ${expected}, ${(error * 100).toFixed(2)} %; target within ${TARGET_MPS_ERROR * 100} %: ` +
        `${rateMet ? 'met' : 'MISSED'}); per second min ${Math.min(...seconds)}, max ${Math.max(...seconds)}; by worker ${JSON.stringify(perWorker)}; ` +
        `${left} still Queued${spent > 0 ? `; ${spent} messages sent twice or ended otherwise (PROBLEM)` : ''}; the other number's ` +
        `${FREE.toLocaleString('en-US')} messages all Sent ${freeSeconds === undefined ? 'NOT within the run' : `${freeSeconds} s after the first message`} ` +
        `(target ≤ ${TARGET_FREE_SECONDS} s: ${freeMet ? 'met' : 'MISSED'}); workers' CPU ${workerCpuSeconds} s` +
        `${postgresCpuSeconds !== undefined ? `, PostgreSQL's ${postgresCpuSeconds} s` : ''} over ${cpuSecondsOver} s; load ${load1()}`,
    );
    return {
      store: kind,
      queued,
      maxPerSecond: MPS,
      seconds: MPS_SECONDS,
      total,
      expected,
      error,
      perSecond: seconds,
      perWorker,
      spent,
      otherNumber: { messages: FREE, sentWithinSeconds: freeSeconds ?? null, met: freeMet },
      workerCpuSeconds,
      ...(postgresCpuSeconds !== undefined ? { postgresCpuSeconds } : {}),
      cpuSecondsOver,
      met: rateMet && freeMet,
    };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await fresh.close();
  }
}

/** A contact of a (c) account: contact i of `count`, in area AREAS[i mod 8] (digits, no `+`). */
const contactOf = (i: number) => `1${AREAS[i % AREAS.length]!}${2_000_000 + Math.floor(i / AREAS.length)}`;

/**
 * A (c) account: POOL_NUMBERS Active, 10⁹ credits, `contacts` contacts in one group (contactOf),
 * one in ten with a Delivered message from STICKY_NUMBER a day ago (a conversation: its sticky
 * number), and the setting `mode`.
 */
async function seedPoolAccount(store: Store, name: string, contacts: number, mode: Mode) {
  const per = Math.floor(contacts / AREAS.length);
  const seeded = await seedGroupAccount(store, {
    name,
    number: POOL_NUMBERS[0]!,
    credits: 1_000_000_000,
    ranges: AREAS.map((area, k) => ({ prefix: `1${area}`, first: 2_000_000, count: per + (k < contacts % AREAS.length ? 1 : 0) })),
  });
  const now = Math.floor(Date.now() / 1000);
  for (const n of POOL_NUMBERS.slice(1)) await insertNumber(store.db, seeded.accountId, n, 0, null, now);
  await sql`insert into messages (account_id, direction, number, mobile_phone, message, type_id, status_id, segments, credits, created_at, sent_at)
    select account_id, 1, ${STICKY_NUMBER}, number, 'Thanks for your order.', 1, 3, 1, 1, cast(${now - 86_400} as bigint), cast(${now - 86_400} as bigint)
    from contacts where account_id = ${seeded.accountId} and id % 10 = 0`.execute(store.db);
  await setMode(store, seeded.accountId, mode);
  if (store.dialect === 'postgres') await sql`analyze`.execute(store.db);
  return seeded;
}

/** Sets the account's SenderSelection and its numbers' limits for `mode`, straight in the database. */
async function setMode(store: Store, accountId: number, mode: Mode): Promise<void> {
  const limit = mode === 'pool-limits' ? LIMIT : 0;
  await store.db
    .updateTable('account_numbers')
    .set({ max_per_day: limit, max_recipients_per_month: limit })
    .where('account_id', '=', accountId)
    .where('number', 'in', LIMITED)
    .execute();
  const selection = mode === 'first' ? 'first' : 'pool';
  await store.db
    .insertInto('account_settings')
    .values({
      account_id: accountId,
      quiet_start: null,
      quiet_end: null,
      time_zone: null,
      updated_at: Math.floor(Date.now() / 1000),
      sender_selection: selection,
    })
    .onConflict((oc) => oc.column('account_id').doUpdateSet({ sender_selection: selection }))
    .execute();
}

/** CPU seconds of PostgreSQL's processes serving the store's database (the server is local: /proc). */
async function postgresCpu(store: Store): Promise<number> {
  if (store.dialect !== 'postgres') return 0;
  const pids = (await sql<{ pid: number }>`select pid from pg_stat_activity where datname = current_database()`.execute(store.db)).rows;
  return pids.reduce((sum, r) => sum + (cpuSeconds(Number(r.pid)) || 0), 0);
}

async function serve(dbUrl: string, cpu?: number): Promise<Server> {
  const port = await freePort();
  return startServer({
    name: 'msgsvc',
    nodeArgs: NODE_ARGS,
    args: [join(appRoot, 'bin/msgsvc.js'), 'serve', '--port', String(port), '--no-demo'],
    env: { DATABASE_URL: dbUrl, ...SERVE_ENV },
    ...(cpu !== undefined ? { cpu } : {}),
    port,
    readyPath: '/healthz',
  });
}

interface SendRound {
  rps: number;
  cpuMicros: number;
  pgCpuMicros: number;
  latencies: number[];
  unexpected: number;
}

/** (c1): one run of sms/send to random contacts for `seconds`, 50 connections. */
function sendLoad(server: Server, store: Store, token: string, seconds: number): Promise<SendRound> {
  let counter = 0;
  const body = () =>
    JSON.stringify({
      MobilePhone: `+${contactOf(Math.floor(Math.random() * CONTACTS))}`,
      Message: `Your code is ${100000 + (++counter % 900000)}. Reply STOP to opt out.`,
    });
  return (async () => {
    const cpu0 = server.cpuMicros();
    const pg0 = await postgresCpu(store);
    const latencies: number[] = [];
    let ok = 0;
    let unexpected = 0;
    const result = await new Promise<Result>((res, rej) => {
      const instance = autocannon(
        {
          url: server.url,
          connections: 50,
          duration: seconds,
          timeout: 10,
          requests: [
            {
              method: 'POST',
              path: `/v1/sms/send?access_token=${encodeURIComponent(token)}`,
              headers: { 'content-type': 'application/json' },
              body: body(),
              setupRequest: (req) => {
                req.body = body();
                return req;
              },
            },
          ],
        },
        (err, r) => (err ? rej(err) : res(r)),
      );
      instance.on('response', (_c: unknown, status: number, _b: number, ms: number) => {
        latencies.push(ms);
        if (status === 201) ok++;
        else unexpected++;
      });
    });
    const n = Math.max(1, ok + unexpected);
    const pg1 = await postgresCpu(store);
    return {
      rps: ok / result.duration,
      cpuMicros: (server.cpuMicros() - cpu0) / n,
      pgCpuMicros: ((pg1 - pg0) * 1e6) / n,
      latencies,
      unexpected,
    };
  })();
}

/** (c1) */
async function sendCost(kind: 'sqlite' | 'postgres', dir: string) {
  let accountId = 0;
  let token = '';
  const fresh = await freshStore(kind, 'pool_c1', dir, async (store) => {
    ({ accountId, token } = await seedPoolAccount(store, 'S', CONTACTS, 'first'));
  });
  const { store } = fresh;
  const m = machine();
  const pin = m.taskset && m.nproc >= 2;
  const server = await serve(fresh.url, pin ? 0 : undefined);
  if (pin) pinSelf(1);
  try {
    const runs = new Map<Mode, SendRound[]>(MODES.map((x) => [x, []]));
    for (const mode of MODES) {
      await setMode(store, accountId, mode);
      await sendLoad(server, store, token, 1);
    }
    for (let r = 0; r < SEND_ROUNDS; r++) {
      for (const mode of r % 2 === 0 ? MODES : [...MODES].reverse()) {
        await setMode(store, accountId, mode);
        runs.get(mode)!.push(await sendLoad(server, store, token, SEND_SECONDS));
      }
    }
    const byNumber = (
      await sql<{ number: string; n: number }>`select number, count(*) as n from messages
        where account_id = ${accountId} and status_id = 1 group by number order by number`.execute(store.db)
    ).rows.map((r) => ({ number: r.number, messages: Number(r.n) }));
    const out = MODES.map((mode) => {
      const xs = runs.get(mode)!;
      const lat = xs.flatMap((x) => x.latencies).sort((x, y) => x - y);
      return {
        mode,
        rps: xs.map((x) => Math.round(x.rps)),
        medianRps: Math.round(median(xs.map((x) => x.rps))),
        cpuMicrosPerRequest: round(median(xs.map((x) => x.cpuMicros)), 1),
        ...(kind === 'postgres' ? { pgCpuMicrosPerRequest: round(median(xs.map((x) => x.pgCpuMicros)), 1) } : {}),
        p50Ms: round(percentile(lat, 50)),
        p99Ms: round(percentile(lat, 99)),
        unexpected: xs.reduce((n, x) => n + x.unexpected, 0),
      };
    });
    const first = out[0]!;
    const results = out.map((x) => ({
      ...x,
      rpsRatio: round(x.medianRps / first.medianRps, 3),
      cpuRatio: round(x.cpuMicrosPerRequest / first.cpuMicrosPerRequest, 3),
    }));
    for (const x of results)
      console.log(
        `${kind} (c1): sms/send ${x.mode.padEnd(11)} ${String(x.medianRps).padStart(5)} req/s [${x.rps.join(', ')}] (× ${x.rpsRatio.toFixed(2)}), ` +
          `${x.cpuMicrosPerRequest} µs CPU/request (× ${x.cpuRatio.toFixed(2)})${x.pgCpuMicrosPerRequest !== undefined ? ` + PostgreSQL ${x.pgCpuMicrosPerRequest} µs` : ''}, ` +
          `p50 ${x.p50Ms} ms, p99 ${x.p99Ms} ms${x.unexpected ? `, UNEXPECTED ${x.unexpected}` : ''}`,
      );
    console.log(
      `${kind} (c1): messages queued by number (all settings together): ${byNumber.map((x) => `${x.number} ${x.messages}`).join(', ')}; load ${load1()}`,
    );
    return { store: kind, contacts: CONTACTS, rounds: SEND_ROUNDS, seconds: SEND_SECONDS, pinned: pin, results, byNumber };
  } finally {
    if (pin) execFileSync('taskset', ['-a', '-p', '-c', `0-${m.nproc - 1}`, String(process.pid)], { stdio: 'ignore' });
    await server.stop();
    await fresh.close();
  }
}

/** (c2) */
async function groupCost(kind: 'sqlite' | 'postgres', dir: string) {
  const accounts: { mode: Mode; round: number; accountId: number; token: string; groupId: number }[] = [];
  const seededAt = Date.now();
  const fresh = await freshStore(kind, 'pool_c2', dir, async (store) => {
    for (let r = 0; r < GROUP_REPEAT; r++)
      for (const mode of MODES) accounts.push({ mode, round: r, ...(await seedPoolAccount(store, `G ${mode} ${r}`, GROUP, mode)) });
  });
  const { store } = fresh;
  console.log(
    `${kind} (c2): ${accounts.length} accounts of ${GROUP.toLocaleString('en-US')} contacts each seeded in ${((Date.now() - seededAt) / 1000).toFixed(1)} s`,
  );
  const server = await serve(fresh.url);
  try {
    for (const x of accounts.slice(0, MODES.length)) {
      // The token path warmed (not the send itself: its messages would be queued too).
      for (let i = 0; i < 20; i++)
        await (await fetch(`${server.url}/v1/credits/balance?access_token=${encodeURIComponent(x.token)}`)).text();
    }
    const runs: {
      mode: Mode;
      round: number;
      seconds: number;
      serverCpuSeconds: number;
      postgresCpuSeconds?: number;
      batchNumber: string;
      byNumber: Record<string, number>;
    }[] = [];
    let problems = 0;
    for (let r = 0; r < GROUP_REPEAT; r++) {
      for (const mode of r % 2 === 0 ? MODES : [...MODES].reverse()) {
        const x = accounts.find((y) => y.mode === mode && y.round === r)!;
        const cpu0 = server.cpuMicros();
        const pg0 = await postgresCpu(store);
        const started = process.hrtime.bigint();
        const res = await fetch(`${server.url}/v1/sms/send-group?access_token=${encodeURIComponent(x.token)}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({ GroupId: x.groupId, Message: 'Our spring sale starts Friday. Reply STOP to opt out.' }),
        });
        const text = await res.text();
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        const serverCpuSeconds = (server.cpuMicros() - cpu0) / 1e6;
        const pg1 = await postgresCpu(store);
        if (res.status !== 201) throw new Error(`send-group (${mode}) answered ${res.status}: ${text.slice(0, 300)}`);
        const batch = JSON.parse(text) as { Id: number; Number: string; Recipients: number };
        if (batch.Recipients !== GROUP) {
          problems++;
          console.log(`${kind} (c2): send-group (${mode}) queued ${batch.Recipients} of ${GROUP}`);
        }
        const byNumber: Record<string, number> = {};
        for (const row of (
          await sql<{
            number: string;
            n: number;
          }>`select number, count(*) as n from messages where account_id = ${x.accountId} and batch_id = ${batch.Id}
            group by number order by number`.execute(store.db)
        ).rows)
          byNumber[row.number] = Number(row.n);
        runs.push({
          mode,
          round: r,
          seconds: round(seconds, 3),
          serverCpuSeconds: round(serverCpuSeconds),
          ...(kind === 'postgres' ? { postgresCpuSeconds: round(pg1 - pg0) } : {}),
          batchNumber: batch.Number,
          byNumber,
        });
        console.log(
          `${kind} (c2): send-group to ${GROUP.toLocaleString('en-US')} (${mode}, round ${r + 1}): ${seconds.toFixed(2)} s, server CPU ${serverCpuSeconds.toFixed(2)} s` +
            `${kind === 'postgres' ? `, PostgreSQL CPU ${(pg1 - pg0).toFixed(2)} s` : ''}; Batch Number "${batch.Number}"; by number ${JSON.stringify(byNumber)}; load ${load1()}`,
        );
      }
    }
    const summary = MODES.map((mode) => {
      const xs = runs.filter((x) => x.mode === mode);
      return { mode, seconds: xs.map((x) => x.seconds), medianSeconds: round(median(xs.map((x) => x.seconds)), 3) };
    });
    const first = summary[0]!.medianSeconds;
    const out = summary.map((x) => ({ ...x, ratio: round(x.medianSeconds / first, 2) }));
    console.log(
      `${kind} (c2): send-group to ${GROUP.toLocaleString('en-US')}, median seconds: ${out.map((x) => `${x.mode} ${x.medianSeconds} (× ${x.ratio})`).join(', ')}`,
    );
    return { store: kind, members: GROUP, repeat: GROUP_REPEAT, summary: out, runs, met: problems === 0 };
  } finally {
    await server.stop();
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

const dir = mkdtempSync(join(tmpdir(), 'msgsvc-sender-pool-'));
let exitCode = 0;
try {
  const runs = flags.app ? 'a build of src/ (dist)' : chooseEntry(ROOT).entry === 'dist' ? 'dist' : 'src through tsx';
  const m = machine();
  console.log(
    `sender pools: (a) ${SEED.toLocaleString('en-US')} seeded, ${PROBES} probes each, ≥ ${BACKLOG.toLocaleString('en-US')} ahead; ` +
      `(b) a number's MaxPerSecond ${MPS} over ${MPS_SECONDS} s; (c) sms/send over ${CONTACTS.toLocaleString('en-US')} contacts, ` +
      `send-group to ${GROUP.toLocaleString('en-US')}; msgsvc runs ${runs}; ${m.nproc} CPUs (${m.cpuModel}), Node ${m.node}; load average ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}`,
  );
  const result = {
    sizes: {
      seed: SEED,
      backlog: BACKLOG,
      probes: PROBES,
      maxPerSecond: MPS,
      seconds: MPS_SECONDS,
      free: FREE,
      contacts: CONTACTS,
      sendRounds: SEND_ROUNDS,
      sendSeconds: SEND_SECONDS,
      group: GROUP,
      groupRepeat: GROUP_REPEAT,
    },
    runs,
    machine: m,
    lane: [] as LaneRun[],
    maxPerSecond: [] as Awaited<ReturnType<typeof numberRate>>[],
    send: [] as Awaited<ReturnType<typeof sendCost>>[],
    sendGroup: [] as Awaited<ReturnType<typeof groupCost>>[],
    skipped: [] as string[],
    loadAverage: { start: loadavg().map((x) => round(x)), end: [] as number[] },
  };
  const redis = parts.has('b') && (await redisReachable(flags['redis-url']));
  if (parts.has('b') && !redis) {
    console.log(`(b) skipped: Redis not reachable at ${flags['redis-url']}`);
    result.skipped.push('b: Redis not reachable');
  }
  for (const kind of stores) {
    if (kind === 'postgres' && !(await postgresReachable(flags['pg-url']))) {
      console.log(`postgres: skipped (no answer at ${flags['pg-url']})`);
      result.skipped.push('postgres: not reachable');
      continue;
    }
    if (parts.has('a')) result.lane.push(await lane(kind, dir));
    if (redis) {
      result.maxPerSecond.push(await numberRate(kind, dir, MPS_QUEUED));
      if (MPS_BACKLOG > 0) result.maxPerSecond.push(await numberRate(kind, dir, MPS_BACKLOG));
    }
    if (parts.has('c')) {
      result.send.push(await sendCost(kind, dir));
      result.sendGroup.push(await groupCost(kind, dir));
    }
  }
  result.loadAverage.end = loadavg().map((x) => round(x));
  const unexpected = result.send.some((s) => s.results.some((x) => x.unexpected > 0));
  if ([...result.lane, ...result.maxPerSecond, ...result.sendGroup].some((r) => !r.met) || unexpected) exitCode = 1;
  // One machine-readable line for npm run bench (bench/run.ts), which records it in its results.
  console.log(`SENDER_POOL ${JSON.stringify(result)}`);
  if (process.env.MSGSVC_BENCH_REPORT_ONLY) exitCode = 0;
} finally {
  await stopAll();
  rmSync(dir, { recursive: true, force: true });
}
process.exitCode = exitCode;
