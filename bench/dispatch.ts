/**
 * Messages going out at scale (issue 11 "Speed"; API.md §10.6, §11.2), on SQLite and PostgreSQL:
 *
 * (a) `sms/send-group` to a group of N contacts (default 100,000): the seconds from the request
 *     sent to its 201 answer, through a real `msgsvc serve` (MSGSVC_DISPATCHER=0, so the
 *     request is measured alone and the queue is left whole for (b)). Target on SQLite: ≤ 2 s.
 * (b) the dispatcher: `msgsvc worker` started alone in its own process on those N queued messages,
 *     with the sandbox carrier and MSGSVC_SANDBOX_RECEIPT_MS=0 (the receipt is due as soon as the
 *     message is Sent, so each message goes Queued → sending → Sent → Delivered). Measured: from the
 *     worker's "dispatching" log line (or the first message seen Sent, if sooner) to the first
 *     moment nothing is due (no message queued or
 *     `sending`, no receipt pending), polled every 20 ms with two reads of the partial indexes;
 *     then checked: all N Delivered, each submitted once (attempts = 1), the balance exactly N
 *     credits below where it was (no refund, no second debit). Target: ≥ 5,000 messages/s.
 *
 * Both msgsvc processes run with `--no-memory-reducer` and the node flags of `npm start`, with
 * their other settings at their defaults (MSGSVC_DISPATCH_BATCH 500, MSGSVC_SANDBOX_WINDOW 100…).
 * Reported per store: seconds, messages/s, the worker's CPU time (user + system) and peak RSS,
 * and the load average before each run (the machine is shared). Each database is made fresh
 * (SQLite: a temp file; PostgreSQL: a database created for the run and dropped after it) holding
 * one account with N contacts, none opted out, all in one group, an Active number and N credits
 * (plus 1,000 to spare).
 *
 *   node --import tsx bench/dispatch.ts [messages] [--stores sqlite,postgres] [--build | --app DIR]
 *     [--pg-url postgres://postgres@127.0.0.1:5432/postgres] [--cpu-prof DIR]
 *
 * `--build` compiles src/ into a temp copy and runs that (what `npm start` runs after `npm run
 * build`) without touching the checkout's dist/; `--app DIR` runs an existing copy (bench/run.ts
 * passes its own); otherwise bin/msgsvc.js runs whatever it picks (dist/ when up to date, else the
 * sources through tsx). `--cpu-prof DIR` writes a V8 CPU profile of each worker into DIR.
 * PostgreSQL is skipped (and said so) when it does not answer. Exit code 1 when a target is missed
 * at 100,000 messages or more, unless MSGSVC_BENCH_REPORT_ONLY is set; the last line is
 * `DISPATCH {json}` for `npm run bench`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { benchDatabase, postgresReachable } from './lib/databases.ts';
import { migrateToLatest, openStore, type Store } from '../src/store/db.ts';
import * as accounts from '../src/store/repositories/accounts.ts';
import type { DispatchBenchResult, DispatchRun } from './report.ts';
import { buildCopy } from './lib/build.ts';
import { cpuSeconds, freePort, msgsvcStartFlags, runQueueSeconds, startServer, stopAll } from './lib/procs.ts';
import { seedGroupAccount } from './lib/seed.ts';
import { chooseEntry } from '../bin/entry.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    stores: { type: 'string', default: 'sqlite,postgres' },
    build: { type: 'boolean', default: false },
    app: { type: 'string' },
    'pg-url': { type: 'string', default: process.env.MSGSVC_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    'cpu-prof': { type: 'string' },
  },
});
const N = Number(positionals[0] ?? 100_000);
if (!Number.isSafeInteger(N) || N < 1) throw new Error(`messages must be a positive whole number, not ${positionals[0]}`);
const stores = flags.stores.split(',').map((s) => {
  const store = s.trim();
  if (store !== 'sqlite' && store !== 'postgres') throw new Error(`--stores: sqlite and/or postgres, not ${store}`);
  return store;
});
const TARGET_QUEUE_SECONDS = 2;
const TARGET_RATE = 5000;
const ACTIVE_NUMBER = '55155';
const SPARE_CREDITS = 1000;

// The node flags `npm start` gives msgsvc, so this measures what runs in production.
const NODE_ARGS = ['--no-memory-reducer', ...msgsvcStartFlags(ROOT)];

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
const load1 = () => round(loadavg()[0]!, 2);

function procStatus(pid: number, field: string): number {
  try {
    const m = new RegExp(`^${field}:\\s*(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? (Number(m[1]) * 1024) / 1e6 : NaN;
  } catch {
    return NaN;
  }
}

/** (a): send-group through `msgsvc serve`, dispatcher off. */
async function sendGroup(appRoot: string, dbUrl: string, token: string, groupId: number): Promise<{ seconds: number; recipients: number }> {
  const port = await freePort();
  const server = await startServer({
    name: 'msgsvc',
    nodeArgs: NODE_ARGS,
    args: [join(appRoot, 'bin/msgsvc.js'), 'serve', '--port', String(port), '--no-demo'],
    env: { DATABASE_URL: dbUrl, LOG_LEVEL: 'warn', MSGSVC_DISPATCHER: '0', MSGSVC_RATE_LIMIT: '1000000000' },
    port,
    readyPath: '/healthz',
  });
  try {
    const q = `access_token=${encodeURIComponent(token)}`;
    // The token path warmed (not the send itself: its messages would be queued too).
    for (let i = 0; i < 20; i++) await (await fetch(`${server.url}/v1/credits/balance?${q}`)).text();
    const started = process.hrtime.bigint();
    const res = await fetch(`${server.url}/v1/sms/send-group?${q}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        GroupId: groupId,
        Message: 'Our spring sale starts Friday. Reply STOP to opt out.',
        Number: Number(ACTIVE_NUMBER),
      }),
    });
    const text = await res.text();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (res.status !== 201) throw new Error(`send-group answered ${res.status}: ${text.slice(0, 300)}`);
    const body = JSON.parse(text) as { Recipients?: number; recipients?: number } | { Recipients?: number }[];
    const batch = Array.isArray(body) ? body[0]! : body;
    return { seconds, recipients: Number(batch.Recipients ?? NaN) };
  } finally {
    await server.stop();
  }
}

/** (b): `msgsvc worker` on the queue until nothing is due. */
async function dispatch(
  appRoot: string,
  dbUrl: string,
  store: Store,
  accountId: number,
  profDir: string | undefined,
): Promise<Omit<DispatchRun, 'store' | 'messages' | 'loadAverage'>> {
  const spawned = process.hrtime.bigint();
  const profArgs = profDir ? ['--cpu-prof', '--cpu-prof-dir', profDir] : [];
  const child: ChildProcess = spawn(process.execPath, [...NODE_ARGS, ...profArgs, join(appRoot, 'bin/msgsvc.js'), 'worker'], {
    env: { ...process.env, DATABASE_URL: dbUrl, LOG_LEVEL: 'info', MSGSVC_SANDBOX_RECEIPT_MS: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  let out = '';
  let ready: bigint | undefined;
  const readyOrExit = new Promise<void>((resolvePromise, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (ready === undefined && out.includes('msgsvc worker: dispatching')) {
        ready = process.hrtime.bigint();
        resolvePromise();
      }
      // Only the start line and any warning matter; keep the tail.
      if (out.length > 100_000) out = out.slice(-10_000);
    });
    child.once('exit', (code) => reject(new Error(`msgsvc worker exited (${code}) before dispatching:\n${out.slice(-2000)}`)));
  });
  try {
    // The start: the worker's "dispatching" line, or the first message seen Sent or Delivered,
    // whichever comes first. On SQLite the line can come late: pino writes on the event loop,
    // and a busy dispatcher over better-sqlite3 (synchronous) may not yield to it between rounds.
    const progressed = async () =>
      (await sql`select 1 from messages where account_id = ${accountId} and status_id in (2, 3) limit 1`.execute(store.db)).rows.length > 0;
    let started: bigint | undefined;
    readyOrExit.catch(() => {});
    while (started === undefined) {
      if (ready !== undefined) started = ready;
      else if (await progressed()) started = process.hrtime.bigint();
      else if (child.exitCode !== null) await readyOrExit;
      else await new Promise((r) => setTimeout(r, 5));
    }
    // Nothing due: no message queued or `sending` (due_at), no receipt pending (receipt_due_at).
    // Two reads of the dispatcher's own partial indexes, so polling costs the worker next to nothing.
    const pending = async () =>
      Number(
        (
          await sql<{ n: number }>`select (select count(*) from (select 1 from messages where due_at is not null limit 1) as a)
            + (select count(*) from (select 1 from messages where receipt_due_at is not null limit 1) as b) as n`.execute(store.db)
        ).rows[0]!.n,
      );
    const deadline = Date.now() + Math.max(120_000, N * 2);
    while ((await pending()) > 0) {
      if (child.exitCode !== null) throw new Error(`msgsvc worker exited (${child.exitCode}) with work left:\n${out.slice(-2000)}`);
      if (Date.now() > deadline) throw new Error('the worker did not finish in time');
      await new Promise((r) => setTimeout(r, 20));
    }
    const done = process.hrtime.bigint();
    const cpu = cpuSeconds(child.pid!);
    // PostgreSQL's side: the CPU time of the server processes serving this database (the
    // worker's connections, and this script's poller), read from /proc (the server is local).
    let databaseCpu: number | undefined;
    if (store.dialect === 'postgres') {
      const pids = (await sql<{ pid: number }>`select pid from pg_stat_activity where datname = current_database()`.execute(store.db)).rows;
      databaseCpu = pids.reduce((sum, r) => sum + cpuSeconds(Number(r.pid)), 0);
    }
    const waited = runQueueSeconds(child.pid!);
    const peak = procStatus(child.pid!, 'VmHWM');
    const seconds = Number(done - started) / 1e9;
    return {
      seconds: round(seconds, 2),
      messagesPerSecond: Math.round(N / seconds),
      startSeconds: round(Number(started - spawned) / 1e9, 2),
      workerCpuSeconds: round(cpu, 2),
      workerRunQueueSeconds: round(waited, 2),
      ...(databaseCpu !== undefined ? { postgresCpuSeconds: round(databaseCpu, 2) } : {}),
      workerPeakRssMB: Math.round(peak),
    };
  } finally {
    if (child.exitCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 35_000);
    await exited;
    clearTimeout(timer);
    if (/"level":(40|50|60)/.test(out))
      console.log(
        `worker warnings:\n${out
          .split('\n')
          .filter((l) => /"level":(40|50|60)/.test(l))
          .slice(0, 5)
          .join('\n')}`,
      );
  }
}

/** Every message Delivered once, and the balance exactly N below where it was. */
async function verify(store: Store, accountId: number): Promise<void> {
  const byStatus = await store.db
    .selectFrom('messages')
    .select(['status_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('account_id', '=', accountId)
    .groupBy('status_id')
    .execute();
  const counts = Object.fromEntries(byStatus.map((r) => [r.status_id, Number(r.n)]));
  const resubmitted = Number(
    (
      await store.db
        .selectFrom('messages')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', accountId)
        .where('attempts', '<>', 1)
        .executeTakeFirstOrThrow()
    ).n,
  );
  const balance = await accounts.getCredits(store.db, accountId);
  const problems: string[] = [];
  if (counts[3] !== N || Object.keys(counts).length !== 1) problems.push(`statuses ${JSON.stringify(counts)} (expected {"3":${N}})`);
  if (resubmitted !== 0) problems.push(`${resubmitted} messages with attempts ≠ 1`);
  if (balance !== SPARE_CREDITS) problems.push(`balance ${balance} (expected ${SPARE_CREDITS})`);
  if (problems.length > 0) throw new Error(`check failed: ${problems.join('; ')}`);
}

const dir = mkdtempSync(join(tmpdir(), 'msgsvc-dispatch-'));
let exitCode = 0;
try {
  const appRoot = flags.app ? resolve(flags.app) : flags.build ? buildCopy(dir) : ROOT;
  const runs = flags.app || flags.build ? 'a build of src/ (dist)' : chooseEntry(ROOT).entry === 'dist' ? 'dist' : 'src through tsx';
  console.log(
    `${N.toLocaleString('en-US')} messages; msgsvc runs ${runs} with node ${NODE_ARGS.join(' ')}; load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  const result: DispatchBenchResult = { messages: N, runs, sendGroup: [], dispatch: [], skipped: [] };
  for (const kind of stores) {
    if (kind === 'postgres' && !(await postgresReachable(flags['pg-url']))) {
      console.log(`postgres: skipped (no answer at ${flags['pg-url']})`);
      result.skipped.push('postgres: not reachable');
      continue;
    }
    const db = await benchDatabase(kind, 'dispatch', flags['pg-url'], { poolSize: 4, sqliteDir: dir });
    try {
      const store = openStore(db.config);
      try {
        await migrateToLatest(store);
        const seededAt = Date.now();
        const { accountId, token, groupId } = await seedGroupAccount(store, {
          name: 'Dispatch bench',
          number: ACTIVE_NUMBER,
          credits: N + SPARE_CREDITS,
          // Contacts +1 200 000 0000, +1 200 000 0001, … (valid US lengths).
          ranges: [{ prefix: '1', first: 2_000_000_000, count: N }],
        });
        console.log(
          `${kind}: ${N.toLocaleString('en-US')} contacts in one group, seeded in ${((Date.now() - seededAt) / 1000).toFixed(1)} s`,
        );

        const loadBefore = load1();
        const sent = await sendGroup(appRoot, db.url, token, groupId);
        if (sent.recipients !== N) throw new Error(`send-group queued ${sent.recipients}, expected ${N}`);
        result.sendGroup.push({ store: kind, recipients: sent.recipients, seconds: round(sent.seconds, 3), loadAverage: loadBefore });
        const queueMet = sent.seconds <= TARGET_QUEUE_SECONDS;
        console.log(
          `${kind}: send-group to ${N.toLocaleString('en-US')} contacts queued in ${sent.seconds.toFixed(2)} s${kind === 'sqlite' ? ` (target ≤ ${TARGET_QUEUE_SECONDS} s: ${queueMet ? 'met' : 'MISSED'})` : ''}; load ${loadBefore}`,
        );
        if (store.dialect === 'postgres') await sql`analyze messages`.execute(store.db);

        const loadDispatch = load1();
        if (flags['cpu-prof']) mkdirSync(resolve(flags['cpu-prof']), { recursive: true });
        const run = await dispatch(appRoot, db.url, store, accountId, flags['cpu-prof'] ? resolve(flags['cpu-prof']) : undefined);
        await verify(store, accountId);
        result.dispatch.push({ store: kind, messages: N, ...run, loadAverage: loadDispatch });
        console.log(
          `${kind}: dispatcher ${N.toLocaleString('en-US')} messages Queued → Delivered in ${run.seconds.toFixed(2)} s = ${run.messagesPerSecond.toLocaleString('en-US')} msg/s ` +
            `(target ≥ ${TARGET_RATE.toLocaleString('en-US')}: ${run.messagesPerSecond >= TARGET_RATE ? 'met' : 'MISSED'}); worker CPU ${run.workerCpuSeconds} s (waited ${run.workerRunQueueSeconds} s for a CPU)${run.postgresCpuSeconds !== undefined ? `, PostgreSQL CPU ${run.postgresCpuSeconds} s` : ''}, peak RSS ${run.workerPeakRssMB} MB, started in ${run.startSeconds} s; load ${loadDispatch}`,
        );
        if (N >= 100_000 && (run.messagesPerSecond < TARGET_RATE || (kind === 'sqlite' && !queueMet))) exitCode = 1;
      } finally {
        await store.close();
      }
    } finally {
      await db.drop();
    }
  }
  // One machine-readable line for npm run bench (bench/run.ts), which records it in its results.
  console.log(`DISPATCH ${JSON.stringify(result)}`);
  if (process.env.MSGSVC_BENCH_REPORT_ONLY) exitCode = 0;
} finally {
  await stopAll();
  rmSync(dir, { recursive: true, force: true });
}
process.exitCode = exitCode;
