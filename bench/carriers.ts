/**
 * The HTTP carriers' throughput (issue 22; API.md §14.1), on SQLite and PostgreSQL: messages
 * Queued → accepted by a fake provider on loopback, through `msgsvc worker`, for
 *
 * - `twilio-sms`: a Twilio-compatible carrier (`twilio+http://`), SMS (default 20,000);
 * - `twilio-mms`: the same carrier, MMS of one picture (default 5,000): each submit carries a
 *   signed `MediaUrl` to `{MSGSVC_PUBLIC_URL}/v1/carriers/{name}/media?…`;
 * - `android-sms`: an Android phone ("SMS Gateway for Android", `android://`), SMS (default: the
 *   SMS count). A phone takes no MMS (API.md §14.1), so it has no MMS run.
 *
 * Targets (the carriers issue): ≥ 2,000 msg/s for SMS with the carrier's rate limit raised
 * (`?rate=100000`, the highest allowed), ≥ 500 msg/s for MMS, msgsvc on at most one core: met when
 * the rate is reached and the worker's CPU per message would carry the target on one core.
 *
 * Each run (store × kind) has its own fresh database (SQLite: a temp file; PostgreSQL: a database
 * created for it and dropped after) with one account, N contacts in one group, an Active number
 * and exactly the credits the batch costs (1 per SMS, 3 per MMS) plus 1,000. The provider is
 * bench/lib/fake-provider-server.ts, a lean fake in its own process (its CPU is measured apart),
 * answering 201 with a Twilio Message resource, or 202 with the phone's message state.
 *
 * (a) `msgsvc serve` (MSGSVC_DISPATCHER=0, the carrier configured so that its routes exist): for
 *     MMS, a 320×240 PNG goes through `media/upload` and a template through `mms-templates/create`;
 *     then `sms/send-group` queues the N messages, and the server stops.
 * (b) `msgsvc worker` starts alone with the carrier (MSGSVC_CARRIER_ALLOW_PRIVATE=1 for the
 *     loopback provider). Measured from its "dispatching" log line (or the first message seen
 *     Sent, if sooner) to the first moment no message is queued or `sending` (polled every 20 ms):
 *     seconds and messages/s; the worker's CPU time (user + system) over that span as a share of
 *     one core, and messages per CPU-second; the time it waited for a CPU (/proc/PID/schedstat: the
 *     machine may be shared); the fake provider's CPU the same way; the worker's peak RSS.
 * (c) Checked (each miss is a `problem`, the bench goes on): every message Sent by that carrier
 *     with a carrier id, all ids distinct, each submitted once (attempts = 1); the balance exactly
 *     1,000 (no refund, no second debit); the fake received N submits, no duplicate, none refused,
 *     and for MMS one MediaUrl per message, a sample of which `msgsvc serve` (started again on
 *     the same address) answers 200 with the picture's bytes.
 *
 * msgsvc runs with `--no-memory-reducer` and the node flags of `npm start`, its other settings at
 * their defaults (MSGSVC_DISPATCH_BATCH 500, the carrier's window 10 unless --window).
 *
 *   node --import tsx bench/carriers.ts [--sms 20000] [--mms 5000] [--android N] [--stores sqlite,postgres]
 *     [--kinds twilio-sms,twilio-mms,android-sms] [--window N] [--app DIR] [--pg-url postgres://…]
 *
 * `--app DIR` runs an existing build (bench/run.ts passes its own); otherwise bin/msgsvc.js runs
 * whatever it picks. PostgreSQL is skipped (and said so) when it does not answer. The last line is
 * `CARRIERS {json}` (CarriersBenchResult) for `npm run bench`. Exit code 1 when a check fails, or
 * when a target is missed at the default sizes or larger, unless MSGSVC_BENCH_REPORT_ONLY is set.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { benchDatabase, postgresReachable } from './lib/databases.ts';
import { startFakeProvider, type FakeProvider } from './lib/fake-provider.ts';
import { cpuSeconds, freePort, msgsvcStartFlags, runQueueSeconds, startServer, stopAll, type Server } from './lib/procs.ts';
import { seedGroupAccount } from './lib/seed.ts';
import { pngImage } from '../src/lib/sample-images.ts';
import { migrateToLatest, openStore, type Store } from '../src/store/db.ts';
import * as accounts from '../src/store/repositories/accounts.ts';
import { chooseEntry } from '../bin/entry.js';

/** One run: a store, a carrier kind, N messages. */
export interface CarriersRun {
  store: 'sqlite' | 'postgres';
  kind: CarrierRunKind;
  messages: number;
  /** From the worker's start of dispatching to nothing queued or `sending`. */
  seconds: number;
  msgPerSecond: number;
  /** The worker's CPU time (user + system) over `seconds`, as a share of one core (1 = one core busy). */
  workerCpuShare: number;
  /** Messages per second of worker CPU time: the rate one core busy with the worker alone would give. */
  msgPerWorkerCpuSecond: number;
  /** The time the worker was runnable but waiting for a CPU (another process had it), as a share of `seconds`. */
  workerWaitShare: number;
  /** The fake provider's, the same way. */
  providerCpuShare: number;
  /** The worker's peak resident memory (VmHWM), MiB. */
  peakRssMiB: number;
  /** `sms/send-group` of the N messages through `msgsvc serve`, seconds. */
  queueSeconds: number;
  /**
   * msg/s asked for (2,000 SMS, 500 MMS), and whether the run reached it on at most one core: the
   * rate reached, and `msgPerWorkerCpuSecond` at least the target (one core of worker CPU carries
   * it; a worker that goes faster may use more than one core, Node's GC threads included).
   */
  target: number;
  met: boolean;
  loadAverage: number;
  /** Checks that failed (empty when every message was accepted once and paid once). */
  problems: string[];
}

export type CarrierRunKind = 'twilio-sms' | 'twilio-mms' | 'android-sms';

/** The `CARRIERS {json}` line. */
export interface CarriersBenchResult {
  sizes: { sms: number; mms: number; android: number };
  /** The carriers' `?rate=` and `?window=` (window null: the carrier's default, 10). */
  rate: number;
  window: number | null;
  runs: string;
  results: CarriersRun[];
  skipped: string[];
}

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const KINDS: readonly CarrierRunKind[] = ['twilio-sms', 'twilio-mms', 'android-sms'];
const DEFAULT_SMS = 20_000;
const DEFAULT_MMS = 5_000;
const { values: flags } = parseArgs({
  options: {
    sms: { type: 'string', default: String(DEFAULT_SMS) },
    mms: { type: 'string', default: String(DEFAULT_MMS) },
    android: { type: 'string' },
    stores: { type: 'string', default: 'sqlite,postgres' },
    kinds: { type: 'string', default: KINDS.join(',') },
    window: { type: 'string' },
    app: { type: 'string' },
    'pg-url': { type: 'string', default: process.env.MSGSVC_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
  },
});
const count = (name: string, value: string): number => {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`--${name}: a positive whole number, not ${value}`);
  return n;
};
const sizes = {
  sms: count('sms', flags.sms),
  mms: count('mms', flags.mms),
  android: count('android', flags.android ?? flags.sms),
};
const stores = flags.stores.split(',').map((s) => {
  const store = s.trim();
  if (store !== 'sqlite' && store !== 'postgres') throw new Error(`--stores: sqlite and/or postgres, not ${store}`);
  return store;
});
const kinds = flags.kinds.split(',').map((k) => {
  const kind = k.trim() as CarrierRunKind;
  if (!KINDS.includes(kind)) throw new Error(`--kinds: some of ${KINDS.join(', ')}, not ${k}`);
  return kind;
});
const WINDOW = flags.window === undefined ? null : count('window', flags.window);
// The highest `?rate=` MSGSVC_CARRIERS allows: the carrier's own limit out of the way.
const RATE = 100_000;
const TARGET = { sms: 2000, mms: 500 };
const MMS_CREDITS = 3;
const SPARE_CREDITS = 1000;
const ACTIVE_NUMBER = '15550100001';
const TEXT = 'Our spring sale starts Friday. Reply STOP to opt out.';
const CARRIER_NAME = { twilio: 'tw', android: 'phone' } as const;
// Credentials of the fakes: a Twilio-shaped SID and token, the phone's user, password and signing key.
const TWILIO_SID = `AC${'0123456789abcdef'.repeat(2)}`;
const TWILIO_TOKEN = 'bench-auth-token-0123456789abcdef';
const PHONE_USER = 'sms';
const PHONE_PASSWORD = 'Ph0ne-Pa55';
const PHONE_KEY = 'k3y-Of-The-Ph0ne';

const START_FLAGS = msgsvcStartFlags(ROOT);
const NODE_ARGS = ['--no-memory-reducer', ...START_FLAGS];

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Peak resident memory (VmHWM) of `pid`, MiB (NaN when gone). */
function peakRssMiB(pid: number): number {
  try {
    const m = /^VmHWM:\s*(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? round(Number(m[1]) / 1024, 1) : NaN;
  } catch {
    return NaN;
  }
}

/** What a run needs of its kind: the carrier, the message type, its price. */
function describeKind(kind: CarrierRunKind) {
  const carrier = kind.startsWith('twilio') ? ('twilio' as const) : ('android' as const);
  const mms = kind === 'twilio-mms';
  return {
    carrier,
    name: CARRIER_NAME[carrier],
    mms,
    messages: mms ? sizes.mms : carrier === 'android' ? sizes.android : sizes.sms,
    credits: mms ? MMS_CREDITS : 1,
    target: mms ? TARGET.mms : TARGET.sms,
    defaults: mms ? sizes.mms >= DEFAULT_MMS : (carrier === 'android' ? sizes.android : sizes.sms) >= DEFAULT_SMS,
  };
}

/** MSGSVC_CARRIERS of the run: one carrier, the fake's address, the rate raised. */
function carriersSetting(kind: CarrierRunKind, fake: FakeProvider): string {
  const { carrier, name } = describeKind(kind);
  const flow = `rate=${RATE}${WINDOW === null ? '' : `&window=${WINDOW}`}`;
  return carrier === 'twilio'
    ? `${name}=twilio+http://${TWILIO_SID}:${TWILIO_TOKEN}@127.0.0.1:${fake.port}?${flow}`
    : `${name}=android://${PHONE_USER}:${PHONE_PASSWORD}@127.0.0.1:${fake.port}?number=%2B${ACTIVE_NUMBER}&key=${PHONE_KEY}&${flow}`;
}

/** `msgsvc serve` with the dispatcher off and the run's carrier configured (its callback and media routes exist). */
function startMsgsvc(appRoot: string, dbUrl: string, port: number, carriers: string): Promise<Server> {
  return startServer({
    name: 'msgsvc',
    nodeArgs: NODE_ARGS,
    args: [join(appRoot, 'bin/msgsvc.js'), 'serve', '--port', String(port), '--no-demo'],
    env: {
      DATABASE_URL: dbUrl,
      LOG_LEVEL: 'warn',
      MSGSVC_DISPATCHER: '0',
      MSGSVC_RATE_LIMIT: '1000000000',
      MSGSVC_CARRIERS: carriers,
      MSGSVC_PUBLIC_URL: `http://127.0.0.1:${port}`,
      MSGSVC_CARRIER_ALLOW_PRIVATE: '1',
    },
    port,
    readyPath: '/healthz',
  });
}

async function api(server: Server, token: string, path: string, init: RequestInit): Promise<Record<string, unknown>> {
  const res = await fetch(`${server.url}/v1/${path}?access_token=${encodeURIComponent(token)}`, {
    ...init,
    headers: { accept: 'application/json', ...(init.headers as Record<string, string> | undefined) },
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`${path} answered ${res.status}: ${text.slice(0, 300)}`);
  const body = JSON.parse(text) as Record<string, unknown> | Record<string, unknown>[];
  return Array.isArray(body) ? body[0]! : body;
}

/** (a): for MMS the picture and its template, then send-group; returns the seconds send-group took. */
async function queue(
  server: Server,
  token: string,
  groupId: number,
  n: number,
  cost: number,
  picture: Buffer | undefined,
): Promise<{ seconds: number }> {
  let mms: Record<string, unknown> = {};
  if (picture) {
    const form = new FormData();
    form.append('file', new Blob([picture], { type: 'image/png' }), 'sale.png');
    const media = await api(server, token, 'media/upload', { method: 'POST', body: form });
    const template = await api(server, token, 'mms-templates/create', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ Name: 'Spring sale', Subject: 'Spring sale', Message: TEXT, MediaIds: [Number(media['Id'])] }),
    });
    mms = { Type_Id: 2, MmsTemplateId: Number(template['Id']) };
  }
  const started = process.hrtime.bigint();
  const batch = await api(server, token, 'sms/send-group', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ GroupId: groupId, Message: TEXT, Number: Number(ACTIVE_NUMBER), ...mms }),
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (Number(batch['Recipients']) !== n) throw new Error(`send-group queued ${String(batch['Recipients'])}, expected ${n}`);
  if (Number(batch['Credits']) !== n * cost) throw new Error(`send-group cost ${String(batch['Credits'])} credits, expected ${n * cost}`);
  return { seconds };
}

/** (b): `msgsvc worker` with the carrier until no message is queued or `sending`. */
async function dispatch(
  appRoot: string,
  dbUrl: string,
  store: Store,
  accountId: number,
  n: number,
  env: Record<string, string>,
  fake: FakeProvider,
): Promise<{ seconds: number; workerCpu: number; workerWait: number; providerCpu: number; peakRssMiB: number }> {
  const child = spawn(process.execPath, [...NODE_ARGS, join(appRoot, 'bin/msgsvc.js'), 'worker'], {
    env: { ...process.env, DATABASE_URL: dbUrl, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  let out = '';
  let warnings: string[] = [];
  let ready = false;
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    if (!ready && out.includes('msgsvc worker: dispatching')) ready = true;
    const lines = out.split('\n');
    out = lines.pop()!;
    warnings.push(...lines.filter((l) => /"level":(40|50|60)/.test(l)));
    if (warnings.length > 20) warnings = warnings.slice(0, 20);
  });
  try {
    // The start, as bench/dispatch.ts: the "dispatching" line, or the first message seen Sent.
    const progressed = async () =>
      (await sql`select 1 from messages where account_id = ${accountId} and status_id = 2 limit 1`.execute(store.db)).rows.length > 0;
    const startDeadline = Date.now() + 60_000;
    while (!ready && !(await progressed())) {
      if (child.exitCode !== null) throw new Error(`msgsvc worker exited (${child.exitCode}) before dispatching`);
      if (Date.now() > startDeadline) throw new Error('msgsvc worker did not start dispatching within 60 s');
      await sleep(5);
    }
    const started = process.hrtime.bigint();
    const workerCpu0 = cpuSeconds(child.pid!);
    const workerWait0 = runQueueSeconds(child.pid!);
    const providerCpu0 = fake.cpuMicros() / 1e6;
    // Nothing due: no message queued or `sending` (the dispatcher's own partial index on due_at).
    const pending = async () => (await sql`select 1 from messages where due_at is not null limit 1`.execute(store.db)).rows.length > 0;
    const deadline = Date.now() + Math.max(60_000, n * 5);
    while (await pending()) {
      if (child.exitCode !== null) throw new Error(`msgsvc worker exited (${child.exitCode}) with work left`);
      if (Date.now() > deadline) throw new Error('the worker did not finish in time');
      await sleep(20);
    }
    const done = process.hrtime.bigint();
    return {
      seconds: Number(done - started) / 1e9,
      workerCpu: cpuSeconds(child.pid!) - workerCpu0,
      workerWait: runQueueSeconds(child.pid!) - workerWait0,
      providerCpu: fake.cpuMicros() / 1e6 - providerCpu0,
      peakRssMiB: peakRssMiB(child.pid!),
    };
  } finally {
    if (child.exitCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 35_000);
    await exited;
    clearTimeout(timer);
    if (warnings.length > 0) console.log(`worker warnings:\n${warnings.slice(0, 5).join('\n')}`);
  }
}

/** (c): what the database and the fake say; each miss is one line. */
async function verify(
  store: Store,
  accountId: number,
  n: number,
  carrierName: string,
  fake: FakeProvider,
  mms: boolean,
): Promise<string[]> {
  const problems: string[] = [];
  const byStatus = await store.db
    .selectFrom('messages')
    .select(['status_id', 'carrier', (eb) => eb.fn.countAll<number>().as('n')])
    .where('account_id', '=', accountId)
    .groupBy(['status_id', 'carrier'])
    .execute();
  const sent = byStatus.find((r) => r.status_id === 2 && r.carrier === carrierName);
  if (Number(sent?.n ?? 0) !== n || byStatus.length !== 1)
    problems.push(
      `statuses ${JSON.stringify(byStatus.map((r) => ({ status: r.status_id, carrier: r.carrier, n: Number(r.n) })))} (expected ${n} Sent by ${carrierName})`,
    );
  const ids = (
    await sql<{ distinct: number; resubmitted: number }>`select count(distinct carrier_message_id) as ${sql.ref('distinct')},
      sum(case when attempts <> 1 then 1 else 0 end) as resubmitted from messages where account_id = ${accountId}`.execute(store.db)
  ).rows[0]!;
  if (Number(ids.distinct) !== n) problems.push(`${Number(ids.distinct)} distinct carrier ids (expected ${n})`);
  if (Number(ids.resubmitted) !== 0) problems.push(`${Number(ids.resubmitted)} messages with attempts ≠ 1`);
  const balance = await accounts.getCredits(store.db, accountId);
  if (balance !== SPARE_CREDITS) problems.push(`balance ${balance} (expected ${SPARE_CREDITS})`);
  const s = await fake.stats();
  if (s.accepted !== n || s.submits !== n)
    problems.push(`the provider received ${s.submits} submits and accepted ${s.accepted} (expected ${n})`);
  if (s.duplicates !== 0) problems.push(`${s.duplicates} submits repeated a recipient or id`);
  if (s.refused !== 0) problems.push(`the provider refused ${s.refused} requests`);
  if (mms && s.mediaUrls !== n) problems.push(`${s.mediaUrls} MediaUrls (expected one per message, ${n})`);
  if (!mms && s.mediaUrls !== 0) problems.push(`${s.mediaUrls} MediaUrls on SMS`);
  return problems;
}

/** (c) for MMS: the provider can fetch the picture behind the sample MediaUrl. */
async function checkMediaLink(fake: FakeProvider, picture: Buffer, serve: () => Promise<Server>): Promise<string[]> {
  const { sampleMediaUrl } = await fake.stats();
  if (sampleMediaUrl === null) return ['no MediaUrl reached the provider'];
  const server = await serve();
  try {
    const res = await fetch(sampleMediaUrl);
    const bytes = Buffer.from(await res.arrayBuffer());
    if (res.status !== 200) return [`the sample MediaUrl answered ${res.status}`];
    if (!bytes.equals(picture)) return [`the sample MediaUrl answered ${bytes.length} bytes that are not the picture's ${picture.length}`];
    return [];
  } finally {
    await server.stop();
  }
}

async function runOne(kind: CarrierRunKind, storeKind: 'sqlite' | 'postgres', appRoot: string, dir: string): Promise<CarriersRun> {
  const k = describeKind(kind);
  const n = k.messages;
  const db = await benchDatabase(storeKind, `carriers_${kind.replace('-', '_')}`, flags['pg-url'], { poolSize: 4, sqliteDir: dir });
  const problems: string[] = [];
  let fake: FakeProvider | undefined;
  try {
    const store = openStore(db.config);
    try {
      await migrateToLatest(store);
      const { accountId, token, groupId } = await seedGroupAccount(store, {
        name: 'Carriers bench',
        number: ACTIVE_NUMBER,
        credits: n * k.credits + SPARE_CREDITS,
        // Contacts +1 200 000 0000, +1 200 000 0001, … (valid US lengths).
        ranges: [{ prefix: '1', first: 2_000_000_000, count: n }],
      });
      fake = await startFakeProvider(
        k.carrier === 'twilio'
          ? { kind: 'twilio', user: TWILIO_SID, password: TWILIO_TOKEN }
          : { kind: 'android', user: PHONE_USER, password: PHONE_PASSWORD },
      );
      const carriers = carriersSetting(kind, fake);
      const port = await freePort();
      const picture = k.mms ? pngImage(320, 240, (x, y) => [x % 256, y % 256, (x * y) % 256]) : undefined;
      const server = await startMsgsvc(appRoot, db.url, port, carriers);
      let queueSeconds: number;
      try {
        queueSeconds = (await queue(server, token, groupId, n, k.credits, picture)).seconds;
      } finally {
        await server.stop();
      }
      if (store.dialect === 'postgres') await sql`analyze messages`.execute(store.db);
      const loadAverage = round(loadavg()[0]!);
      const env = { MSGSVC_CARRIERS: carriers, MSGSVC_PUBLIC_URL: `http://127.0.0.1:${port}`, MSGSVC_CARRIER_ALLOW_PRIVATE: '1' };
      const run = await dispatch(appRoot, db.url, store, accountId, n, env, fake);
      problems.push(...(await verify(store, accountId, n, k.name, fake, k.mms)));
      if (picture) problems.push(...(await checkMediaLink(fake, picture, () => startMsgsvc(appRoot, db.url, port, carriers))));
      const msgPerSecond = Math.round(n / run.seconds);
      const workerCpuShare = round(run.workerCpu / run.seconds);
      return {
        store: storeKind,
        kind,
        messages: n,
        seconds: round(run.seconds),
        msgPerSecond,
        workerCpuShare,
        msgPerWorkerCpuSecond: Math.round(n / run.workerCpu),
        workerWaitShare: round(run.workerWait / run.seconds),
        providerCpuShare: round(run.providerCpu / run.seconds),
        peakRssMiB: run.peakRssMiB,
        queueSeconds: round(queueSeconds),
        target: k.target,
        met: msgPerSecond >= k.target && n / run.workerCpu >= k.target,
        loadAverage,
        problems,
      };
    } finally {
      await store.close();
    }
  } finally {
    await fake?.stop();
    await db.drop();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'msgsvc-carriers-'));
let exitCode = 0;
try {
  const appRoot = flags.app ? resolve(flags.app) : ROOT;
  const runs = flags.app ? 'a build of src/ (dist)' : chooseEntry(ROOT).entry === 'dist' ? 'dist' : 'src through tsx';
  console.log(
    `HTTP carriers: ${sizes.sms.toLocaleString('en-US')} SMS, ${sizes.mms.toLocaleString('en-US')} MMS, ${sizes.android.toLocaleString('en-US')} SMS to a phone; rate ${RATE}, window ${WINDOW ?? 'default (10)'}; msgsvc runs ${runs} with node ${NODE_ARGS.join(' ')}; load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  const result: CarriersBenchResult = { sizes, rate: RATE, window: WINDOW, runs, results: [], skipped: [] };
  for (const storeKind of stores) {
    if (storeKind === 'postgres' && !(await postgresReachable(flags['pg-url']))) {
      console.log(`postgres: skipped (no answer at ${flags['pg-url']})`);
      result.skipped.push('postgres: not reachable');
      continue;
    }
    for (const kind of kinds) {
      const k = describeKind(kind);
      let run: CarriersRun;
      try {
        run = await runOne(kind, storeKind, appRoot, dir);
      } catch (err) {
        const why = (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 300);
        console.log(`${storeKind} ${kind}: FAILED ${why}`);
        result.skipped.push(`${storeKind} ${kind}: failed: ${why}`);
        exitCode = 1;
        continue;
      }
      result.results.push(run);
      console.log(
        `${storeKind} ${kind}: ${run.messages.toLocaleString('en-US')} messages Queued → accepted in ${run.seconds.toFixed(2)} s = ${run.msgPerSecond.toLocaleString('en-US')} msg/s ` +
          `(target ≥ ${k.target.toLocaleString('en-US')} per core: ${run.met ? 'met' : 'MISSED'}); worker CPU ${run.workerCpuShare} core (${run.msgPerWorkerCpuSecond.toLocaleString('en-US')} msg per CPU-second; waited for a CPU ${run.workerWaitShare} of the time), provider CPU ${run.providerCpuShare} core, ` +
          `worker peak RSS ${run.peakRssMiB} MiB; send-group ${run.queueSeconds} s; load ${run.loadAverage}` +
          (run.problems.length > 0 ? `; PROBLEMS: ${run.problems.join('; ')}` : ''),
      );
      if (run.problems.length > 0 || (!run.met && k.defaults)) exitCode = 1;
    }
  }
  // One machine-readable line for npm run bench (bench/run.ts), which records it in its results.
  console.log(`CARRIERS ${JSON.stringify(result)}`);
  if (process.env.MSGSVC_BENCH_REPORT_ONLY) exitCode = 0;
} finally {
  await stopAll();
  rmSync(dir, { recursive: true, force: true });
}
process.exitCode = exitCode;
