/**
 * Quiet hours at scale (API.md §14.3.5), on SQLite and PostgreSQL: "a send-group of 100k recipients
 * over 5 time zones, with quiet hours on, queues in at most 3 s and releases each zone on time".
 *
 * One account holds N contacts (default 100,000) in one group, N/5 in each of five zones: France
 * (+33, Europe/Paris), the UK (+44, Europe/London), Japan (+81, Asia/Tokyo), India (+91,
 * Asia/Kolkata) and the US (+1, several zones: the account's TimeZone, America/New_York). Its quiet
 * hours, set through `PUT /v1/account/settings`, are 18:00–10:00.
 *
 * (a) `sms/send-group` to the group through a real `msgsvc serve` (MSGSVC_DISPATCHER=0): the
 *     seconds from the request to its 201. Target: ≤ 3 s.
 * (b) the dispatcher (src/dispatch/dispatcher.ts, in this process, the sandbox carrier, batch 500)
 *     on a manual clock set to 2030-01-15 00:00Z, when every zone is inside its quiet hours
 *     (19:00 in New York … 09:00 in Tokyo): every message is claimed and held. Measured: the
 *     seconds and messages/s of that pass; checked: N Queued, none sent, no attempt spent, each
 *     due at 10:00 local of its zone.
 * (c) the release: for each zone in order of its end (Tokyo 01:00Z, Kolkata 04:30Z, Paris 09:00Z,
 *     London 10:00Z, New York 15:00Z), the clock is set 1 ms before it (checked: nothing due),
 *     then to it: exactly that zone's N/5 messages go, each submitted once. Measured: the seconds
 *     to send each zone. "On time": released at the exact instant (manual clock), none early.
 *
 *   node --import tsx bench/quiet-hours.ts [messages] [--stores sqlite,postgres] [--pg-url …] [--app DIR]
 *
 * MSGSVC_STATEMENT_TIMEOUT_MS, when set, is passed to the server of (a).
 *
 * The last line is `QUIET {json}` for `npm run bench -- --only quiet-hours`. Exit code 1 when a
 * target is missed (unless MSGSVC_BENCH_REPORT_ONLY is set).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { benchDatabase, postgresReachable } from './lib/databases.ts';
import { freePort, startServer, stopAll } from './lib/procs.ts';
import { seedGroupAccount } from './lib/seed.ts';
import { Dispatcher } from '../src/dispatch/dispatcher.ts';
import { createSandboxCarrier } from '../src/dispatch/sandbox.ts';
import { createManualClock } from '../src/lib/time.ts';
import { migrateToLatest, openStore, type Store } from '../src/store/db.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    stores: { type: 'string', default: 'sqlite,postgres' },
    app: { type: 'string' },
    'pg-url': { type: 'string', default: process.env.MSGSVC_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
  },
});
const N = Number(positionals[0] ?? 100_000);
if (!Number.isSafeInteger(N) || N < 5 || N % 5 !== 0) throw new Error(`messages must be a multiple of 5, not ${positionals[0]}`);
const stores = flags.stores.split(',').map((s) => s.trim()) as ('sqlite' | 'postgres')[];
const TARGET_QUEUE_SECONDS = 3;
const NUMBER = '55155';
const T0 = Date.UTC(2030, 0, 15, 0, 0);
/** The five zones: the first digits of their numbers (E.164 without `+`, then a running counter), and the end of their quiet hours (10:00 local). */
const ZONES = [
  { name: 'Asia/Tokyo', prefix: '8190', width: 8, end: Date.UTC(2030, 0, 15, 1, 0) },
  { name: 'Asia/Kolkata', prefix: '919', width: 9, end: Date.UTC(2030, 0, 15, 4, 30) },
  { name: 'Europe/Paris', prefix: '336', width: 8, end: Date.UTC(2030, 0, 15, 9, 0) },
  { name: 'Europe/London', prefix: '4474', width: 8, end: Date.UTC(2030, 0, 15, 10, 0) },
  { name: 'America/New_York (US, the account zone)', prefix: '1212', width: 7, end: Date.UTC(2030, 0, 15, 15, 0) },
] as const;

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

/** (a) quiet hours through PUT /v1/account/settings, then send-group, through `msgsvc serve`. */
async function queue(appRoot: string, dbUrl: string, token: string, groupId: number): Promise<{ seconds: number; recipients: number }> {
  const port = await freePort();
  const server = await startServer({
    name: 'msgsvc',
    nodeArgs: ['--no-memory-reducer'],
    args: [join(appRoot, 'bin/msgsvc.js'), 'serve', '--port', String(port), '--no-demo'],
    env: {
      DATABASE_URL: dbUrl,
      LOG_LEVEL: 'warn',
      MSGSVC_DISPATCHER: '0',
      MSGSVC_RATE_LIMIT: '1000000000',
      // On a loaded machine PostgreSQL's default 5 s statement timeout can cut send-group short (503).
      ...(process.env.MSGSVC_STATEMENT_TIMEOUT_MS ? { MSGSVC_STATEMENT_TIMEOUT_MS: process.env.MSGSVC_STATEMENT_TIMEOUT_MS } : {}),
    },
    port,
    readyPath: '/healthz',
  });
  try {
    const q = `access_token=${encodeURIComponent(token)}`;
    const put = await fetch(`${server.url}/v1/account/settings?${q}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ QuietHoursStart: '18:00', QuietHoursEnd: '10:00', TimeZone: 'America/New_York' }),
    });
    if (put.status !== 200) throw new Error(`account/settings answered ${put.status}: ${await put.text()}`);
    for (let i = 0; i < 20; i++) await (await fetch(`${server.url}/v1/credits/balance?${q}`)).text();
    const started = process.hrtime.bigint();
    const res = await fetch(`${server.url}/v1/sms/send-group?${q}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ GroupId: groupId, Message: 'Our spring sale starts Friday. Reply STOP to opt out.', Number: Number(NUMBER) }),
    });
    const text = await res.text();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (res.status !== 201) throw new Error(`send-group answered ${res.status}: ${text.slice(0, 300)}`);
    const body = JSON.parse(text) as { Recipients?: number } | { Recipients?: number }[];
    return { seconds, recipients: Number((Array.isArray(body) ? body[0]! : body).Recipients ?? NaN) };
  } finally {
    await server.stop();
  }
}

async function countWhere(store: Store, accountId: number, where: ReturnType<typeof sql>): Promise<number> {
  const r = await sql<{ n: number }>`select count(*) as n from messages where account_id = ${accountId} and ${where}`.execute(store.db);
  return Number(r.rows[0]!.n);
}

/** (b) and (c): hold everything, then release zone by zone on a manual clock. */
async function holdAndRelease(store: Store, accountId: number) {
  const clock = createManualClock(T0);
  const submits = new Map<number, number>();
  const dispatcher = new Dispatcher({
    store,
    carrier: createSandboxCarrier({ receiptMs: 86_400_000, onSubmit: (m) => submits.set(m.id, (submits.get(m.id) ?? 0) + 1) }),
    clock,
    batchSize: 500,
    leaseMs: 30_000,
    maxAttempts: 5,
    pollMs: 5,
    timeZone: 'UTC',
  });
  const problems: string[] = [];
  const started = process.hrtime.bigint();
  await dispatcher.drain(100_000);
  const holdSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  const held = dispatcher.stats().held;
  if (held !== N || submits.size !== 0) problems.push(`hold pass: ${held} held, ${submits.size} submitted (expected ${N}, 0)`);
  const queued = await countWhere(store, accountId, sql`status_id = 1 and quiet_state = 1 and attempts = 0`);
  if (queued !== N) problems.push(`${queued} Queued held with no attempt (expected ${N})`);
  for (const z of ZONES) {
    const n = await countWhere(store, accountId, sql`mobile_phone like ${`${z.prefix}%`} and due_at = ${z.end}`);
    if (n !== N / 5) problems.push(`${z.name}: ${n} due at ${new Date(z.end).toISOString()} (expected ${N / 5})`);
  }
  const zones: { zone: string; releasedAt: string; messages: number; early: number; seconds: number; messagesPerSecond: number }[] = [];
  let sentBefore = 0;
  for (const z of ZONES) {
    clock.set(z.end - 1);
    const early = (await dispatcher.drain(100_000)).sent;
    clock.set(z.end);
    const t = process.hrtime.bigint();
    const r = await dispatcher.drain(100_000);
    const seconds = Number(process.hrtime.bigint() - t) / 1e9;
    const zoneSent = await countWhere(store, accountId, sql`mobile_phone like ${`${z.prefix}%`} and status_id = 2`);
    if (early !== 0 || r.sent !== N / 5 || zoneSent !== N / 5)
      problems.push(`${z.name}: ${early} early, ${r.sent} at the end (expected 0, ${N / 5})`);
    sentBefore += r.sent;
    zones.push({
      zone: z.name,
      releasedAt: new Date(z.end).toISOString(),
      messages: r.sent,
      early,
      seconds: round(seconds, 2),
      messagesPerSecond: Math.round(r.sent / seconds),
    });
  }
  const twice = [...submits.values()].filter((n) => n !== 1).length;
  if (sentBefore !== N || twice !== 0) problems.push(`${sentBefore} sent, ${twice} submitted more than once`);
  return { holdSeconds: round(holdSeconds, 2), heldPerSecond: Math.round(N / holdSeconds), zones, problems };
}

const dir = mkdtempSync(join(tmpdir(), 'msgsvc-quiet-'));
let exitCode = 0;
try {
  const appRoot = flags.app ? resolve(flags.app) : ROOT;
  const result: { messages: number; runs: unknown[]; skipped: string[] } = { messages: N, runs: [], skipped: [] };
  for (const kind of stores) {
    if (kind === 'postgres' && !(await postgresReachable(flags['pg-url']))) {
      result.skipped.push('postgres: not reachable');
      continue;
    }
    const db = await benchDatabase(kind, 'quiet', flags['pg-url'], { poolSize: 4, sqliteDir: dir });
    try {
      const store = openStore(db.config);
      try {
        await migrateToLatest(store);
        const { accountId, token, groupId } = await seedGroupAccount(store, {
          name: 'Quiet hours bench',
          number: NUMBER,
          credits: N + 1000,
          // N/5 contacts per zone: its prefix, then a running counter of the zone's width.
          ranges: ZONES.map((z) => ({ prefix: z.prefix, first: 10 ** (z.width - 1), count: N / 5 })),
        });
        const load = round(loadavg()[0]!, 2);
        const sent = await queue(appRoot, db.url, token, groupId);
        if (sent.recipients !== N) throw new Error(`send-group queued ${sent.recipients}, expected ${N}`);
        if (store.dialect === 'postgres') await sql`analyze messages`.execute(store.db);
        const run = await holdAndRelease(store, accountId);
        const queueMet = sent.seconds <= TARGET_QUEUE_SECONDS;
        console.log(
          `${kind}: send-group to ${N.toLocaleString('en-US')} recipients over 5 zones, quiet hours on, queued in ${sent.seconds.toFixed(2)} s ` +
            `(target ≤ ${TARGET_QUEUE_SECONDS} s: ${queueMet ? 'met' : 'MISSED'}); load ${load}`,
        );
        console.log(`${kind}: hold pass ${run.holdSeconds} s (${run.heldPerSecond.toLocaleString('en-US')} msg/s held)`);
        for (const z of run.zones)
          console.log(
            `${kind}:   ${z.zone}: ${z.messages} released at ${z.releasedAt} (${z.early} early), sent in ${z.seconds} s (${z.messagesPerSecond} msg/s)`,
          );
        console.log(`${kind}: ${run.problems.length === 0 ? 'every zone released on time' : `PROBLEMS: ${run.problems.join('; ')}`}`);
        result.runs.push({ store: kind, queueSeconds: round(sent.seconds, 3), queueMet, loadAverage: load, ...run });
        if (!queueMet || run.problems.length > 0) exitCode = 1;
      } finally {
        await store.close();
      }
    } finally {
      await db.drop();
    }
  }
  console.log(`QUIET ${JSON.stringify(result)}`);
  if (process.env.MSGSVC_BENCH_REPORT_ONLY) exitCode = 0;
} finally {
  await stopAll();
  rmSync(dir, { recursive: true, force: true });
}
process.exitCode = exitCode;
