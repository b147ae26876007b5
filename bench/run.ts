/**
 * `npm run bench`: msgsvc against the Node ceiling, in one run.
 *
 * - The ceiling is a bare Fastify server answering a constant (bench/ceiling.ts). msgsvc runs on a
 *   database made by `msgsvc generate` for each size. Both servers run with
 *   `node --no-memory-reducer`, pinned to the same core where `taskset` exists; this process (the
 *   load generator, autocannon) is pinned to another core.
 * - Each scenario also has its own floor (bench/floors/server.ts, issue 15): a bare Fastify server
 *   doing only the scenario's irreducible work on the same database, started beside the ceiling for
 *   each size and pinned to the same core.
 * - For each size and scenario: a warm-up of each server, then rounds of ceiling, floor, msgsvc,
 *   ceiling, floor, msgsvc... Reported: median req/s of each, the ratios msgsvc / ceiling,
 *   msgsvc / floor and floor / ceiling, p50/p99 latency, msgsvc's peak RSS, and instructions per
 *   request where `perf stat` has counters.
 * - Results: bench/results/<date>.json; a full run (not --quick, not --only) also rewrites the table in docs/PERFORMANCE.md.
 * - Talks only to 127.0.0.1, stops every process it started, and stays within its time budget
 *   (full run 30 min, --quick 4.5 min).
 * - msgsvc runs with MSGSVC_DISPATCHER=0 in every scenario: nothing is dispatched while requests
 *   are measured (sms/send queues messages; the dispatcher would then take CPU from the server on
 *   its core, and would start firing the generated scheduled messages). The dispatcher is measured
 *   on its own afterwards, as `msgsvc worker` in its own process (bench/dispatch.ts), with
 *   send-group to 100,000 contacts, on SQLite and PostgreSQL.
 * - Then, each in its own process and each skipped (and recorded so) when it does not fit the
 *   budget, is left out by --only, or cannot run here: SMPP throughput against the Perl SMSC
 *   (bench/smpp.ts; needs Perl Net::SMPP), media/upload speed and memory (bench/media.ts), webhook
 *   deliveries per second (bench/webhooks.ts). Their PostgreSQL runs are left out when PostgreSQL
 *   does not answer.
 *
 * With --instructions, the run is bench/instructions.ts instead (instructions per request counted
 * by callgrind for msgsvc, the floor and the ceiling, req/s beside; its own options).
 *
 * Options: --quick, --sizes 10000,1000000, --rounds N, --duration S, --warmup S, --connections N,
 *   --only name,name (HTTP scenarios, and contacts-import, dispatch, smpp, media, quiet-hours, webhooks, carriers, links, console, conversations, signin, export, fairness, sender-pool, retention), --docs / --no-docs, --data-dir DIR (keeps and reuses generated databases),
 *   --build (compiles src/ into a temp copy and runs that instead of dist/, which stays untouched).
 */
import autocannon, { type Request } from 'autocannon';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildCopy } from './lib/build.ts';
import { ensureDataset } from './lib/data.ts';
import { pacedLoad, poolPacedRuns, type PacedRun } from './lib/paced.ts';
import { countInstructions, freePort, machine, pinSelf, runToCompletion, startServer, stopAll, type Server } from './lib/procs.ts';
import { SCENARIOS, deepPage, type Dataset, type Scenario } from './scenarios.ts';
import type { LinksBenchResult } from './links.ts';
import type { SigninBenchResult } from './auth.ts';
import type { ExportBenchResult } from './export.ts';
import { chooseEntry } from '../bin/entry.js';
import {
  renderMarkdown,
  writeDocs,
  type BenchResult,
  type DispatchBenchResult,
  type MediaBenchResult,
  type ScenarioResult,
  type SideResult,
  type SmppBenchResult,
  type WebhooksBenchResult,
} from './report.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
// The node flags `npm start` gives msgsvc (package.json), so the bench measures what runs in production.
const MSGSVC_NODE_FLAGS = (
  /^node((?:\s+--\S+)*)\s+bin\/msgsvc\.js/.exec(
    (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.start ?? '',
  )?.[1] ?? ''
)
  .trim()
  .split(/\s+/)
  .filter(Boolean);
const started = Date.now();

// `npm run bench -- --instructions [options]`: instructions per request under callgrind, req/s beside (bench/instructions.ts).
if (process.argv.includes('--instructions')) {
  const { main: instructions } = await import('./instructions.ts');
  await instructions(process.argv.slice(2).filter((a) => a !== '--instructions'))
    .catch((err: unknown) => {
      process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    })
    .finally(() => stopAll());
  process.exit();
}

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    sizes: { type: 'string' },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    only: { type: 'string' },
    docs: { type: 'boolean' },
    'no-docs': { type: 'boolean' },
    'data-dir': { type: 'string' },
    build: { type: 'boolean', default: false },
  },
  allowPositionals: false,
});

const quick = flags.quick === true;
const plan = {
  sizes: flags.sizes ? flags.sizes.split(',').map(Number) : quick ? [10_000, 100_000] : [10_000, 1_000_000],
  // Many short A/B rounds: on a shared machine, load from elsewhere comes and goes within seconds,
  // and medians of short alternating runs follow it better than a few long runs.
  rounds: Number(flags.rounds ?? (quick ? 1 : 5)),
  duration: Number(flags.duration ?? (quick ? 1 : 2)),
  warmup: Number(flags.warmup ?? (quick ? 0.3 : 1)),
  connections: Number(flags.connections ?? 50),
  paced: quick ? 1 : 3,
  // Paced runs alternate too (ceiling, msgsvc, …): at these rates one stall of a few tens of ms
  // in a single 3-second run is 1 % of its requests, and sets its p99 on its own.
  pacedRounds: quick ? 1 : 3,
  // The floor (issue 15) adds a third server to every scenario's rounds: about 1.5 × the time of
  // the HTTP scenarios, so that every scenario still runs at both sizes.
  budgetSeconds: quick ? 270 : 1800,
  only: flags.only ? new Set(flags.only.split(',')) : undefined,
  // After the HTTP scenarios: contacts/import (bench/import-1m.ts) and the dispatcher
  // (bench/dispatch.ts), each in its own processes; their time is kept free in the budget.
  importRows: quick ? 100_000 : 1_000_000,
  importSeconds: quick ? 20 : 90,
  dispatchMessages: quick ? 20_000 : 100_000,
  dispatchSeconds: quick ? 15 : 60,
  // Then bench/smpp.ts (windows 10 and 50), bench/media.ts (a 10 MB PNG this many times, one and
  // four 70 MB uploads) and bench/webhooks.ts, on both stores where PostgreSQL answers.
  smppMessages: quick ? 2_000 : 10_000,
  smppSeconds: quick ? 10 : 20,
  mediaUploads: quick ? 3 : 10,
  mediaSeconds: quick ? 30 : 50,
  webhookEvents: quick ? 5_000 : 20_000,
  webhooksSeconds: quick ? 15 : 50,
  // bench/conversations.ts: 10,000 threads over this many messages, generated twice per store (with and without the trigger).
  conversationMessages: quick ? 100_000 : 1_000_000,
  conversationSeconds: quick ? 60 : 600,
  // bench/quiet-hours.ts: send-group over 5 zones with quiet hours on, then the releases.
  quietMessages: quick ? 20_000 : 100_000,
  quietSeconds: quick ? 40 : 150,
  // bench/links.ts: GET /l/{code} redirects per second, two phases per store of this many seconds each.
  linksPhaseSeconds: quick ? 5 : 15,
  // bench/auth.ts: Argon2id this many times each (hash, verify), then this many sign-ins of each kind.
  signinRuns: quick ? 20 : 50,
  signins: quick ? 10 : 30,
  // bench/export.ts: GET /v1/sms/export of a log of this many messages, the server's memory beside.
  exportMessages: quick ? 100_000 : 1_000_000,
};
// Quick mode runs the writes and the 401 path at the smallest size only.
const scenariosFor = (size: number): Scenario[] =>
  SCENARIOS.filter((s) => (!plan.only || plan.only.has(s.name)) && (!quick || s.kind === 'read' || size === plan.sizes[0]));
// The paced latency run: this share of msgsvc's saturated req/s, at most this many req/s (what the
// open-loop client on one core sends on time).
const PACED_SHARE = 0.5;
const PACED_MAX_RPS = 6000;
// A run of some steps only (--only) leaves the table of the last full run alone unless --docs asks.
const writeDocsToo = flags['no-docs'] ? false : flags.docs === true || (!quick && plan.only === undefined);
// Balance set on each generated account before msgsvc starts, so that sms/send never runs out.
const BENCH_CREDITS = 1_000_000_000;

function log(line: string): void {
  const t = ((Date.now() - started) / 1000).toFixed(0).padStart(4);
  process.stderr.write(`[${t}s] ${line}\n`);
}

const median = (xs: number[]): number => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const percentile = (sorted: Float64Array, p: number): number =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
const round = (x: number, digits = 2): number => Math.round(x * 10 ** digits) / 10 ** digits;

interface Run {
  rps: number;
  cpuMicros: number;
  latencies: number[];
  ok: number;
  unexpected: number;
  errors: number;
  instructions: number | null;
}

/** One autocannon run of `request` against `server` for `seconds`. */
function load(server: Server, request: Request, seconds: number, expected: number, countPerf: boolean): Promise<Run> {
  return new Promise((resolvePromise, reject) => {
    const latencies: number[] = [];
    let ok = 0;
    let unexpected = 0;
    const stopPerf = countPerf ? countInstructions(server.pid) : undefined;
    const cpuBefore = server.cpuMicros();
    const instance = autocannon(
      { url: server.url, connections: plan.connections, duration: seconds, requests: [request], timeout: 10 },
      (err, result) => {
        if (err) return reject(err);
        const finish = async () => {
          const cpu = server.cpuMicros() - cpuBefore;
          const instructions = stopPerf ? await stopPerf() : null;
          resolvePromise({
            rps: ok / result.duration,
            cpuMicros: cpu / Math.max(1, ok + unexpected),
            latencies,
            ok,
            unexpected,
            errors: result.errors + result.timeouts,
            instructions: instructions === null ? null : instructions / Math.max(1, ok + unexpected),
          });
        };
        finish().catch(reject);
      },
    );
    instance.on('response', (_client: unknown, status: number, _bytes: number, responseTime: number) => {
      latencies.push(responseTime);
      if (status === expected) ok++;
      else unexpected++;
    });
  });
}

function summarise(runs: Run[]): SideResult {
  const all = new Float64Array(runs.reduce((n, r) => n + r.latencies.length, 0));
  let k = 0;
  for (const r of runs) for (const l of r.latencies) all[k++] = l;
  all.sort();
  const instr = runs.map((r) => r.instructions).filter((x): x is number => x !== null);
  return {
    rps: runs.map((r) => Math.round(r.rps)),
    medianRps: Math.round(median(runs.map((r) => r.rps))),
    p50Ms: round(percentile(all, 0.5)),
    p99Ms: round(percentile(all, 0.99)),
    unexpected: runs.reduce((n, r) => n + r.unexpected, 0),
    errors: runs.reduce((n, r) => n + r.errors, 0),
    instructionsPerRequest: instr.length > 0 ? Math.round(median(instr)) : null,
    cpuMicrosPerRequest: round(median(runs.map((r) => r.cpuMicros)), 1),
  };
}

/** Sends one request of the scenario to msgsvc (or its floor) and checks its status, so a broken setup fails fast. */
async function check(server: Server, scenario: Scenario, data: Dataset, label = 'msgsvc'): Promise<void> {
  const req = scenario.request(data);
  const res = await fetch(`${server.url}${req.path}`, {
    method: req.method ?? 'GET',
    headers: req.headers ?? {},
    ...(req.body !== undefined ? { body: String(req.body) } : {}),
  });
  const body = await res.text();
  if (res.status !== scenario.status) {
    throw new Error(`${scenario.name}: ${label} answered ${res.status} (expected ${scenario.status}): ${body.slice(0, 300)}`);
  }
}

async function generate(dir: string, size: number): Promise<Dataset & { generateSeconds: number }> {
  log(`${existsSync(join(dir, `msgsvc-${size}.db.json`)) ? 'reusing' : 'generating'} ${size.toLocaleString('en-US')} contacts in ${dir}`);
  return ensureDataset(dir, size);
}

async function main(): Promise<void> {
  const m = machine();
  const serverCpu = m.taskset && m.nproc >= 2 ? 0 : undefined;
  if (serverCpu !== undefined) pinSelf(1);
  log(
    `machine: ${m.nproc} CPUs (${m.cpuModel}), Node ${m.node}; taskset ${m.taskset ? 'yes' : 'no'}; perf counters ${m.perfCounters ? 'yes' : 'no'}`,
  );
  log(
    `plan: sizes ${plan.sizes.join(', ')}; ${plan.rounds} round(s) of ${plan.duration}s per server and scenario, ${plan.connections} connections`,
  );

  const keepData = flags['data-dir'] !== undefined;
  const dataDir = keepData ? resolve(flags['data-dir']!) : mkdtempSync(join(tmpdir(), 'msgsvc-bench-'));
  mkdirSync(dataDir, { recursive: true });
  // The code msgsvc runs: bin/msgsvc.js of the checkout (dist/ when `npm run bench` built it), or
  // with --build a fresh build in a temp copy.
  const buildDir = flags.build ? mkdtempSync(join(tmpdir(), 'msgsvc-bench-build-')) : undefined;
  const buildStarted = Date.now();
  const appRoot = buildDir ? buildCopy(buildDir) : ROOT;
  // The build is not part of the time budget (`npm run bench` builds before this script starts).
  const buildMs = Date.now() - buildStarted;
  if (buildDir) {
    log(`built src/ into ${appRoot} in ${(buildMs / 1000).toFixed(1)} s`);
    armWatchdog(buildMs);
  }
  const nodeArgs = ['--no-memory-reducer'];
  // msgsvc runs with the flags of `npm start` (package.json) as well.
  const msgsvcNodeArgs = [...nodeArgs, ...MSGSVC_NODE_FLAGS];
  const result: BenchResult = {
    date: new Date().toISOString(),
    mode: quick ? 'quick' : 'full',
    machine: m,
    plan: {
      sizes: plan.sizes,
      rounds: plan.rounds,
      durationSeconds: plan.duration,
      warmupSeconds: plan.warmup,
      connections: plan.connections,
      pacedSeconds: plan.paced,
      pacedRounds: plan.pacedRounds,
      pacedShare: PACED_SHARE,
    },
    serverPinnedToCpu: serverCpu ?? null,
    msgsvc: {
      env: { LOG_LEVEL: 'info', MSGSVC_RATE_LIMIT: '1000000000', MSGSVC_DISPATCHER: '0' },
      logTo: '/dev/null',
      nodeFlags: msgsvcNodeArgs,
      runs: flags.build ? 'dist' : chooseEntry(ROOT).entry,
    },
    loadAverage: { start: loadavg().map((x) => Math.round(x * 100) / 100) },
    datasets: [],
    scenarios: [],
    skipped: [],
    seconds: 0,
  };

  // Everything must fit in the budget: each remaining run is skipped once it no longer fits.
  const deadline = started + buildMs + plan.budgetSeconds * 1000;
  const fits = (seconds: number) => Date.now() + seconds * 1000 < deadline - 5000;
  // The runs after the HTTP scenarios, in order, each in its own process. A failure of one of the
  // last three (a peer missing, a timeout) is recorded in result.skipped and the bench goes on.
  const after: { name: string; size: number; seconds: number; tolerant: boolean; run: (timeoutMs: number) => Promise<void> }[] = [
    {
      // contacts/import of a generated CSV file (bench/import-1m.ts): 1 M rows in a full run, 100 k in a quick one.
      name: 'contacts-import',
      size: plan.importRows,
      seconds: plan.importSeconds,
      tolerant: false,
      run: async () => {
        log(`contacts/import of ${plan.importRows.toLocaleString('en-US')} rows (bench/import-1m.ts)`);
        result.import = await runImportBench(plan.importRows, appRoot);
        log(`contacts/import: ${result.import.seconds} s, ${result.import.rowsPerSecond} rows/s, peak RSS ${result.import.peakRssMB} MB`);
      },
    },
    {
      // send-group and the dispatcher (`msgsvc worker`) on SQLite and PostgreSQL (bench/dispatch.ts):
      // 100 k messages in a full run, 20 k in a quick one.
      name: 'dispatch',
      size: plan.dispatchMessages,
      seconds: plan.dispatchSeconds,
      tolerant: false,
      run: async () => {
        log(`send-group and dispatcher, ${plan.dispatchMessages.toLocaleString('en-US')} messages (bench/dispatch.ts)`);
        result.dispatch = await runDispatchBench(plan.dispatchMessages, appRoot);
        for (const g of result.dispatch.sendGroup) log(`send-group ${g.store}: ${g.recipients} queued in ${g.seconds} s`);
        for (const d of result.dispatch.dispatch) log(`dispatcher ${d.store}: ${d.messagesPerSecond} msg/s (${d.seconds} s)`);
      },
    },
    {
      // SMPP throughput against the Perl SMSC (bench/smpp.ts runs the dispatcher from src/ in its own process).
      name: 'smpp',
      size: plan.smppMessages,
      seconds: plan.smppSeconds,
      tolerant: true,
      run: async (timeoutMs) => {
        log(`SMPP, ${plan.smppMessages.toLocaleString('en-US')} messages, windows 10 and 50 (bench/smpp.ts)`);
        const smpp = await runSummarised<SmppBenchResult>('bench/smpp.ts', [String(plan.smppMessages), '10,50'], 'SMPP', timeoutMs);
        if (smpp.skipped) {
          log(`SMPP skipped: ${smpp.skipped}`);
          result.skipped.push({ scenario: 'smpp', contacts: plan.smppMessages, reason: smpp.skipped });
          return;
        }
        result.smpp = smpp;
        for (const x of smpp.runs)
          log(`SMPP window ${x.window}: ${x.perSecond} msg/s (SMSC CPU ${x.smscCpuPercent} %, msgsvc CPU ${x.msgsvcCpuPercent} %)`);
      },
    },
    {
      name: 'media',
      size: plan.mediaUploads,
      seconds: plan.mediaSeconds,
      tolerant: true,
      run: async (timeoutMs) => {
        log(`media/upload: a 10 MB PNG ${plan.mediaUploads} times, one and four 70 MB uploads (bench/media.ts)`);
        const media = await runSummarised<MediaBenchResult>(
          'bench/media.ts',
          ['--uploads', String(plan.mediaUploads), ...(appRoot !== ROOT ? ['--app', appRoot] : [])],
          'MEDIA',
          timeoutMs,
        );
        result.media = media;
        for (const [store, xs] of Object.entries(media.results)) {
          for (const x of xs ?? []) log(`media ${store} ${x.scenario}: ${x.mibPerSecond} MiB/s, peak RSS ${x.peakRssMiB} MiB`);
        }
        for (const why of media.skipped ?? []) log(`media skipped ${why}`);
      },
    },
    {
      // Quiet hours (bench/quiet-hours.ts): send-group to 100 k recipients over 5 zones with quiet
      // hours on (target ≤ 3 s), every message held, then each zone released at its exact end.
      name: 'quiet-hours',
      size: plan.quietMessages,
      seconds: plan.quietSeconds,
      tolerant: true,
      run: async (timeoutMs) => {
        log(`quiet hours: send-group to ${plan.quietMessages.toLocaleString('en-US')} recipients over 5 zones (bench/quiet-hours.ts)`);
        const quiet = await runSummarised<{ runs: { store: string; queueSeconds: number; holdSeconds: number; problems: string[] }[] }>(
          'bench/quiet-hours.ts',
          [String(plan.quietMessages), ...(appRoot !== ROOT ? ['--app', appRoot] : [])],
          'QUIET',
          timeoutMs,
        );
        Object.assign(result, { quietHours: quiet });
        for (const x of quiet.runs)
          log(
            `quiet hours ${x.store}: queued in ${x.queueSeconds} s, held in ${x.holdSeconds} s, ${x.problems.length === 0 ? 'every zone on time' : x.problems.join('; ')}`,
          );
      },
    },
    {
      name: 'webhooks',
      size: plan.webhookEvents,
      seconds: plan.webhooksSeconds,
      tolerant: true,
      run: async (timeoutMs) => {
        log(`webhook deliveries, ${plan.webhookEvents.toLocaleString('en-US')} events (bench/webhooks.ts)`);
        const webhooks = await runSummarised<WebhooksBenchResult>('bench/webhooks.ts', [String(plan.webhookEvents)], 'WEBHOOKS', timeoutMs);
        result.webhooks = webhooks;
        for (const x of webhooks.results) log(`webhooks ${x.store}: ${x.deliveriesPerSecond} deliveries/s (${x.seconds} s)`);
        for (const why of webhooks.skipped ?? []) log(`webhooks skipped ${why}`);
      },
    },
    {
      // The HTTP carriers (bench/carriers.ts; API.md §14.1): a Twilio-compatible provider (SMS, MMS)
      // and an Android phone (SMS), lean fakes on loopback in their own process; per store 20 k SMS
      // and 5 k MMS in a full run, 5 k and 1 k in a quick one.
      name: 'carriers',
      size: quick ? 5_000 : 20_000,
      seconds: quick ? 60 : 150,
      tolerant: true,
      run: async (timeoutMs) => {
        const [sms, mms] = quick ? [5_000, 1_000] : [20_000, 5_000];
        log(
          `HTTP carriers: ${sms.toLocaleString('en-US')} SMS, ${mms.toLocaleString('en-US')} MMS through fake providers (bench/carriers.ts)`,
        );
        const carriers = await runSummarised<import('./carriers.ts').CarriersBenchResult>(
          'bench/carriers.ts',
          ['--sms', String(sms), '--mms', String(mms), ...(appRoot !== ROOT ? ['--app', appRoot] : [])],
          'CARRIERS',
          timeoutMs,
        );
        Object.assign(result, { carriers });
        for (const x of carriers.results)
          log(
            `carriers ${x.store} ${x.kind}: ${x.msgPerSecond} msg/s, worker CPU ${x.workerCpuShare} core, provider CPU ${x.providerCpuShare} core, peak RSS ${x.peakRssMiB} MiB${x.problems.length > 0 ? `; problems: ${x.problems.join('; ')}` : ''}`,
          );
        for (const why of carriers.skipped) log(`carriers skipped ${why}`);
      },
    },
    {
      name: 'links',
      size: 1000,
      // Per store: start-up, and a warm-up, a /healthz run and a redirect run per phase.
      seconds: 2 * (10 + 2 * (2 + 2 * plan.linksPhaseSeconds)),
      tolerant: true,
      run: async (timeoutMs) => {
        log(`GET /l/{code} redirects per second (bench/links.ts)`);
        const links = await runSummarised<LinksBenchResult>(
          'bench/links.ts',
          ['--seconds', String(plan.linksPhaseSeconds)],
          'LINKS',
          timeoutMs,
        );
        Object.assign(result, { links });
        for (const x of links.results) log(`links ${x.store} ${x.phase}: ${x.redirectsPerSecond} redirects/s (p50 ${x.p50Ms} ms)`);
        for (const why of links.skipped) log(`links skipped ${why}`);
      },
    },
    {
      // The console's first load in Chromium on the demo database (bench/console.ts): time to the
      // overview drawn, cold (new context) and warm (reload); skipped without /usr/bin/chromium.
      name: 'console',
      size: quick ? 5 : 10,
      // Start-up, an idle second, and 2 × loads + 2 loads of about a second each at most.
      seconds: 15 + 2 * (quick ? 5 : 10),
      tolerant: true,
      run: async (timeoutMs) => {
        const loads = quick ? 5 : 10;
        log(`the console's first load, ${loads} cold and ${loads} warm, in Chromium (bench/console.ts)`);
        type Spread = { p50: number; max: number };
        type Series = { overviewMs: Spread; domContentLoadedMs: Spread; transferBytes: Spread; requests: Spread; serverCpuMs: Spread };
        const consoleLoad = await runSummarised<{ skipped?: string; cold?: Series; warm?: Series }>(
          'bench/console.ts',
          ['--loads', String(loads), ...(appRoot !== ROOT ? ['--app', appRoot] : [])],
          'CONSOLE',
          timeoutMs,
        );
        Object.assign(result, { console: consoleLoad });
        if (consoleLoad.skipped) log(`console skipped: ${consoleLoad.skipped}`);
        for (const [kind, x] of [
          ['cold', consoleLoad.cold],
          ['warm', consoleLoad.warm],
        ] as const)
          if (x)
            log(
              `console ${kind}: overview drawn p50 ${x.overviewMs.p50} ms (max ${x.overviewMs.max}), DOMContentLoaded p50 ${x.domContentLoadedMs.p50} ms, ${x.transferBytes.p50} bytes in ${x.requests.p50} requests, server CPU p50 ${x.serverCpuMs.p50} ms`,
            );
      },
    },
    {
      // A console sign-in (bench/auth.ts; issue 29): Argon2id's hash and verify alone, then
      // POST /console/api/session over a socket with the right password, a wrong one and an unknown email.
      name: 'signin',
      size: plan.signins,
      // Start-up, 2 × signinRuns Argon2 calls and 3 × signins sign-ins of ~25–50 ms each.
      seconds: 10 + Math.ceil((2 * plan.signinRuns + 3 * plan.signins) * 0.05),
      tolerant: true,
      run: async (timeoutMs) => {
        log(`sign-in: Argon2id ${plan.signinRuns} × hash and verify, POST /console/api/session ${plan.signins} × 3 kinds (bench/auth.ts)`);
        const signin = await runSummarised<SigninBenchResult>(
          'bench/auth.ts',
          ['--runs', String(plan.signinRuns), '--signins', String(plan.signins), ...(appRoot !== ROOT ? ['--app', appRoot] : [])],
          'SIGNIN',
          timeoutMs,
        );
        Object.assign(result, { signin });
        log(
          `Argon2id (${signin.argon2.phc}): hash p50 ${signin.hashMs.p50} ms (p90 ${signin.hashMs.p90}), verify p50 ${signin.verifyMs.p50} ms (p90 ${signin.verifyMs.p90})`,
        );
        for (const x of signin.signIns)
          log(`sign-in ${x.kind} (${x.status}): p50 ${x.p50} ms, p90 ${x.p90} ms, server CPU ${x.serverCpuMs} ms`);
      },
    },
    {
      // sms/conversations page 1 at 10,000 threads over 1 M messages (bench/conversations.ts; target
      // p50 ≤ 20 ms), and msgsvc generate with and without the threads' trigger.
      name: 'conversations',
      size: plan.conversationMessages,
      seconds: plan.conversationSeconds,
      tolerant: true,
      run: async (timeoutMs) => {
        log(
          `sms/conversations page 1, 10,000 threads over ${plan.conversationMessages.toLocaleString('en-US')} messages (bench/conversations.ts)`,
        );
        const conversations = await runSummarised<{
          results: { store: string; p50Ms: number; cpuMsPerRequest: number; generateSeconds: number }[];
        }>('bench/conversations.ts', ['--messages', String(plan.conversationMessages), '--compare-generate'], 'CONVERSATIONS', timeoutMs);
        Object.assign(result, { conversations });
        for (const x of conversations.results)
          log(`conversations ${x.store}: p50 ${x.p50Ms} ms (CPU ${x.cpuMsPerRequest} ms per request), generate ${x.generateSeconds} s`);
      },
    },
    {
      // GET /v1/sms/export of the whole log over HTTP (bench/export.ts; issue 30): rows per second,
      // and the server's RSS before and during the download (the file is streamed: it must not grow).
      name: 'export',
      size: plan.exportMessages,
      // Seeding (about 10 s per million), the server's start, the download (about 20 s per million).
      seconds: 15 + Math.ceil((plan.exportMessages / 1_000_000) * 40),
      tolerant: true,
      run: async (timeoutMs) => {
        log(`GET /v1/sms/export of ${plan.exportMessages.toLocaleString('en-US')} messages (bench/export.ts)`);
        const exportLog = await runSummarised<ExportBenchResult>(
          'bench/export.ts',
          ['--messages', String(plan.exportMessages), ...(appRoot !== ROOT ? ['--app', appRoot] : [])],
          'EXPORT',
          timeoutMs,
        );
        Object.assign(result, { export: exportLog });
        log(
          `export: ${exportLog.messages} rows in ${exportLog.seconds} s (${exportLog.rowsPerSecond} rows/s, ${exportLog.mibPerSecond} MiB/s); server RSS ${exportLog.server.rssBeforeMiB} MiB before, peak ${exportLog.server.peakRssDuringMiB} MiB during (+${exportLog.server.growthMiB} MiB)`,
        );
      },
    },
    {
      // Fair dispatch and MaxPerSecond (bench/fairness.ts; API.md §16): B's message under A's backlog of
      // 1 M (100 k quick), throughput of 1 vs 100 accounts, MaxPerSecond 50 across two workers.
      name: 'fairness',
      size: quick ? 100_000 : 1_000_000,
      seconds: quick ? 240 : 600,
      tolerant: true,
      run: async (timeoutMs) => {
        const args = quick ? ['--backlog', '100000', '--probes', '30', '--messages', '20000', '--repeat', '1', '--mps-seconds', '10'] : [];
        const fairness = await runSummarised<{
          latency: { store: string; p50Ms: number; p99Ms: number }[];
          throughput: { store: string; ratio: number }[];
          maxPerSecond: { store: string; total: number; expected: number }[];
        }>('bench/fairness.ts', [...args, ...(appRoot !== ROOT ? ['--app', appRoot] : [])], 'FAIRNESS', timeoutMs);
        Object.assign(result, { fairness });
        for (const x of fairness.latency) log(`fairness ${x.store}: B's message under the backlog p50 ${x.p50Ms} ms, p99 ${x.p99Ms} ms`);
        for (const x of fairness.throughput)
          log(`fairness ${x.store}: 100 accounts at ${Math.round(x.ratio * 100)} % of one account's rate`);
        for (const x of fairness.maxPerSecond) log(`fairness ${x.store}: MaxPerSecond ${x.total} sent of ${x.expected}`);
      },
    },
    {
      // Sender pools (bench/sender-pool.ts; API.md §17): a Priority 1 message behind A's 100,000
      // Priority 0 (p99 ≤ 1 s), a number's MaxPerSecond 20 across two workers, and what choosing
      // the number costs sms/send and a send-group of 100,000 (20,000 quick) beside `first`.
      name: 'sender-pool',
      size: quick ? 20_000 : 100_000,
      seconds: quick ? 300 : 900,
      tolerant: true,
      run: async (timeoutMs) => {
        const args = quick
          ? ['--seed', '400000', '--probes', '20', '--mps-seconds', '10', '--send-rounds', '2', '--group', '20000', '--group-repeat', '1']
          : [];
        type Spread = { p50Ms: number; p99Ms: number };
        const pool = await runSummarised<{
          lane: { store: string; sameAccount: Spread; otherAccount: Spread; backlogAhead: number }[];
          maxPerSecond: { store: string; total: number; expected: number }[];
          send: { store: string; results: { mode: string; medianRps: number; rpsRatio: number; cpuMicrosPerRequest: number }[] }[];
          sendGroup: { store: string; summary: { mode: string; medianSeconds: number }[] }[];
        }>('bench/sender-pool.ts', [...args, ...(appRoot !== ROOT ? ['--app', appRoot] : [])], 'SENDER_POOL', timeoutMs);
        Object.assign(result, { senderPool: pool });
        for (const x of pool.lane)
          log(
            `sender-pool ${x.store}: Priority 1 behind ${x.backlogAhead}+ Priority 0: same account p99 ${x.sameAccount.p99Ms} ms, other account p99 ${x.otherAccount.p99Ms} ms`,
          );
        for (const x of pool.maxPerSecond) log(`sender-pool ${x.store}: a number's MaxPerSecond ${x.total} sent of ${x.expected}`);
        for (const x of pool.send)
          log(`sender-pool ${x.store}: sms/send ${x.results.map((r) => `${r.mode} ${r.medianRps}/s (× ${r.rpsRatio})`).join(', ')}`);
        for (const x of pool.sendGroup)
          log(`sender-pool ${x.store}: send-group ${x.summary.map((r) => `${r.mode} ${r.medianSeconds} s`).join(', ')}`);
      },
    },
    {
      // Retention under load (bench/retention.ts; docs/guides/backup.md "Retention"): a purge of 1 M
      // old messages (100 k quick) while sms/send goes on at 200/s; target: p99 added ≤ 100 ms, and
      // the credit and consent ledgers untouched.
      name: 'retention',
      size: quick ? 100_000 : 1_000_000,
      seconds: quick ? 180 : 720,
      tolerant: true,
      run: async (timeoutMs) => {
        const args = quick ? ['--old', '100000', '--baseline-seconds', '10'] : [];
        const retention = await runSummarised<import('./retention.ts').RetentionBenchResult>(
          'bench/retention.ts',
          [...args, ...(appRoot !== ROOT ? ['--app', appRoot] : [])],
          'RETENTION',
          timeoutMs,
        );
        Object.assign(result, { retention });
        for (const x of retention.results)
          log(
            `retention ${x.store}: purge of ${x.deleted.messages} messages in ${x.purgeSeconds} s (${x.rowsPerSecond} rows/s, longest step ${x.maxStepMs} ms); sms/send p99 ${x.baseline.p99Ms} ms → ${x.during.p99Ms} ms during it (added ${x.addedP99Ms} ms); ledgers ${x.ledgersUntouched ? 'untouched' : 'CHANGED'}`,
          );
        for (const why of retention.skipped) log(`retention skipped ${why}`);
      },
    },
  ];
  const selected = (name: string) => !plan.only || plan.only.has(name);
  const secondsFrom = (i: number) => after.slice(i).reduce((n, step) => n + (selected(step.name) ? step.seconds : 0), 0);
  // The HTTP scenarios leave the time of the runs after them free.
  const reserved = secondsFrom(0);

  const ceilingPort = await freePort();
  const ceiling = await startServer({
    name: 'ceiling',
    nodeArgs: [...nodeArgs, '--import', 'tsx'],
    args: [join(ROOT, 'bench/ceiling.ts'), String(ceilingPort)],
    ...(serverCpu !== undefined ? { cpu: serverCpu } : {}),
    port: ceilingPort,
    readyPath: '/',
  });

  for (const size of plan.sizes) {
    if (scenariosFor(size).length === 0) continue;
    const data = await generate(dataDir, size);
    result.datasets.push({
      contacts: size,
      messages: data.messages,
      generateSeconds: data.generateSeconds,
      group: data.group,
      entry: data.entry,
    });
    // sms/send spends credits: the generated balance (1,000,000) would run out over a few runs on
    // a kept --data-dir, and a 422 is not what the scenario measures.
    if (scenariosFor(size).some((s) => s.name === 'sms-send')) {
      await runToCompletion(process.execPath, [
        join(appRoot, 'bin/msgsvc.js'),
        '--database-url',
        join(dataDir, `msgsvc-${size}.db`),
        'credits',
        'set',
        '--account',
        String(data.accountId),
        '--amount',
        String(BENCH_CREDITS),
      ]);
    }
    // The scenario's floor on the same database, pinned like the ceiling and msgsvc.
    const floorPort = await freePort();
    const floor = await startServer({
      name: `floor-${size}`,
      nodeArgs: [...nodeArgs, '--import', 'tsx'],
      args: [join(ROOT, 'bench/floors/server.ts'), String(floorPort), join(dataDir, `msgsvc-${size}.db`), String(data.accountId)],
      ...(serverCpu !== undefined ? { cpu: serverCpu } : {}),
      port: floorPort,
      readyPath: '/',
    });
    const port = await freePort();
    log(`starting msgsvc on ${size.toLocaleString('en-US')} contacts`);
    const msgsvc = await startServer({
      name: `msgsvc-${size}`,
      nodeArgs: msgsvcNodeArgs,
      args: [join(appRoot, 'bin/msgsvc.js'), 'serve', '--port', String(port), '--no-demo'],
      env: { DATABASE_URL: join(dataDir, `msgsvc-${size}.db`), ...result.msgsvc.env },
      ...(serverCpu !== undefined ? { cpu: serverCpu } : {}),
      port,
      readyPath: '/healthz',
    });
    try {
      for (const scenario of scenariosFor(size)) {
        const hasFloor = scenario.kind !== 'auth';
        const needed =
          (hasFloor ? 3 : 2) * (plan.warmup + plan.rounds * plan.duration) +
          (size === plan.sizes.at(-1) ? 2 * plan.pacedRounds * plan.paced : 0) +
          1;
        if (!fits(needed + reserved)) {
          log(`skipping ${scenario.name} at ${size}: out of time budget`);
          result.skipped.push({ scenario: scenario.name, contacts: size, reason: 'time budget' });
          continue;
        }
        await check(msgsvc, scenario, data);
        if (hasFloor) await check(floor, scenario, data, 'its floor (bench/floors/server.ts)');
        const request = scenario.request(data);
        // Warm-up (JIT, caches), not recorded.
        await load(ceiling, request, plan.warmup, 200, false);
        if (hasFloor) await load(floor, scenario.request(data), plan.warmup, scenario.status, false);
        await load(msgsvc, scenario.request(data), plan.warmup, scenario.status, false);
        const ceilingRuns: Run[] = [];
        const floorRuns: Run[] = [];
        const msgsvcRuns: Run[] = [];
        for (let r = 0; r < plan.rounds; r++) {
          ceilingRuns.push(await load(ceiling, scenario.request(data), plan.duration, 200, m.perfCounters));
          if (hasFloor) floorRuns.push(await load(floor, scenario.request(data), plan.duration, scenario.status, m.perfCounters));
          msgsvcRuns.push(await load(msgsvc, scenario.request(data), plan.duration, scenario.status, m.perfCounters));
        }
        const c = summarise(ceilingRuns);
        const f = hasFloor ? summarise(floorRuns) : undefined;
        const s = summarise(msgsvcRuns);
        // Latency at a steady load below saturation (half of msgsvc's own throughput, open loop),
        // at the largest size, where the p99 target applies.
        const rate = Math.max(100, Math.min(PACED_MAX_RPS, Math.round(s.medianRps * PACED_SHARE)));
        if (size === plan.sizes.at(-1)) {
          // The ceiling at the same rate: the tail this machine gives a server that does no work.
          // The client spins (precise send times) only when it has a CPU of its own.
          const options = { rate, seconds: plan.paced, connections: plan.connections, spin: serverCpu !== undefined };
          const ceilingRuns: PacedRun[] = [];
          const msgsvcRuns: PacedRun[] = [];
          for (let r = 0; r < plan.pacedRounds; r++) {
            ceilingRuns.push(await pacedLoad(ceiling.url, scenario.request(data), { ...options, expected: 200 }));
            msgsvcRuns.push(await pacedLoad(msgsvc.url, scenario.request(data), { ...options, expected: scenario.status }));
          }
          c.paced = { rate, ...poolPacedRuns(ceilingRuns) };
          s.paced = { rate, ...poolPacedRuns(msgsvcRuns) };
        }
        const entry: ScenarioResult = {
          scenario: scenario.name,
          title: scenario.title,
          kind: scenario.kind,
          contacts: size,
          ...(scenario.name === 'sms-deep' ? { page: deepPage(data.messages) } : {}),
          ceiling: c,
          msgsvc: s,
          ratio: round(s.medianRps / c.medianRps, 3),
          roundRatios: msgsvcRuns.map((run, i) => round(run.rps / ceilingRuns[i]!.rps, 3)),
          ...(f
            ? {
                floor: f,
                floorRatio: round(s.medianRps / f.medianRps, 3),
                floorCeilingRatio: round(f.medianRps / c.medianRps, 3),
                ...(f.cpuMicrosPerRequest && s.cpuMicrosPerRequest
                  ? { floorCpuRatio: round(f.cpuMicrosPerRequest / s.cpuMicrosPerRequest, 3) }
                  : {}),
              }
            : {}),
        };
        result.scenarios.push(entry);
        log(
          `${scenario.name.padEnd(16)} ${String(size).padStart(8)}  ceiling ${String(c.medianRps).padStart(6)}/s  msgsvc ${String(s.medianRps).padStart(6)}/s  ratio ${entry.ratio.toFixed(2)}${f ? `  floor ${String(f.medianRps).padStart(6)}/s  ÷floor ${entry.floorRatio!.toFixed(2)} (by CPU ${entry.floorCpuRatio?.toFixed(2) ?? '–'}, floor ${f.cpuMicrosPerRequest} µs)  floor÷ceiling ${entry.floorCeilingRatio!.toFixed(2)}${f.unexpected ? ` FLOOR UNEXPECTED ${f.unexpected}` : ''}` : ''}  cpu ${s.cpuMicrosPerRequest}/${c.cpuMicrosPerRequest} µs  p99 ${s.p99Ms} ms${s.paced ? ` (at ${rate}/s: ${s.paced.p99Ms} ms [${s.paced.roundP99Ms?.join(', ')}], ceiling ${c.paced!.p99Ms} ms)` : ''}${s.unexpected ? `  UNEXPECTED ${s.unexpected}` : ''}`,
        );
      }
    } finally {
      result.datasets.at(-1)!.msgsvcPeakRssMiB = msgsvc.peakRssMiB();
      result.datasets.at(-1)!.msgsvcRssMiB = msgsvc.rssMiB();
      await msgsvc.stop();
      await floor.stop();
    }
    log(`msgsvc on ${size.toLocaleString('en-US')} contacts: peak RSS ${result.datasets.at(-1)!.msgsvcPeakRssMiB} MiB`);
  }
  result.ceilingPeakRssMiB = ceiling.peakRssMiB();
  await ceiling.stop();

  // Each run after the HTTP scenarios starts only when it and the selected runs after it still fit.
  for (const [i, step] of after.entries()) {
    if (!selected(step.name)) {
      result.skipped.push({ scenario: step.name, contacts: step.size, reason: '--only' });
      continue;
    }
    if (!fits(secondsFrom(i))) {
      log(`skipping ${step.name}: out of time budget`);
      result.skipped.push({ scenario: step.name, contacts: step.size, reason: 'time budget' });
      continue;
    }
    // A run may take up to 3 × its estimate (at least a minute), never past the watchdog.
    const timeoutMs = Math.max(1000, Math.min(Math.max(60, 3 * step.seconds) * 1000, deadline + 25_000 - Date.now()));
    try {
      await step.run(timeoutMs);
    } catch (err) {
      if (!step.tolerant) throw err;
      const reason = `failed: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 200)}`;
      log(`${step.name} ${reason}`);
      result.skipped.push({ scenario: step.name, contacts: step.size, reason });
    }
  }
  result.loadAverage!.end = loadavg().map((x) => Math.round(x * 100) / 100);
  if (!keepData) rmSync(dataDir, { recursive: true, force: true });
  if (buildDir) rmSync(buildDir, { recursive: true, force: true });

  result.seconds = Math.round((Date.now() - started) / 1000);
  const stamp = result.date.replace(/:/g, '-').replace(/\..+$/, '');
  const file = join(ROOT, 'bench/results', `${stamp}${quick ? '-quick' : ''}.json`);
  mkdirSync(dirname(file), { recursive: true });
  const markdown = renderMarkdown(result, file.slice(ROOT.length + 1));
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  log(`results: ${file}`);
  process.stdout.write(`${markdown}\n`);
  if (writeDocsToo) {
    writeDocs(join(ROOT, 'docs/PERFORMANCE.md'), markdown);
    log('docs/PERFORMANCE.md updated');
  }
}

/** Runs bench/import-1m.ts and reads its summary line (`IMPORT {json}`). */
async function runImportBench(rows: number, app: string): Promise<NonNullable<BenchResult['import']>> {
  const stdout = await runToCompletion(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'bench/import-1m.ts'), String(rows), ...(app !== ROOT ? ['--app', app] : [])],
    { MSGSVC_BENCH_REPORT_ONLY: '1' },
  );
  const line = stdout.split('\n').find((l) => l.startsWith('IMPORT '));
  if (!line) throw new Error(`bench/import-1m.ts printed no summary:\n${stdout}`);
  return JSON.parse(line.slice('IMPORT '.length)) as NonNullable<BenchResult['import']>;
}

/** Runs bench/dispatch.ts and reads its summary line (`DISPATCH {json}`). */
async function runDispatchBench(messages: number, app: string): Promise<DispatchBenchResult> {
  const stdout = await runToCompletion(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'bench/dispatch.ts'), String(messages), ...(app !== ROOT ? ['--app', app] : [])],
    { MSGSVC_BENCH_REPORT_ONLY: '1' },
  );
  const line = stdout.split('\n').find((l) => l.startsWith('DISPATCH '));
  if (!line) throw new Error(`bench/dispatch.ts printed no summary:\n${stdout}`);
  return JSON.parse(line.slice('DISPATCH '.length)) as DispatchBenchResult;
}

/**
 * Runs one of the bench scripts (tsx) in its own process, within `timeoutMs`, and reads its
 * summary: the last line starting with `TAG `, followed by JSON.
 */
async function runSummarised<T>(script: string, args: string[], tag: string, timeoutMs: number): Promise<T> {
  const stdout = await runToCompletion(
    process.execPath,
    ['--import', 'tsx', join(ROOT, script), ...args],
    { MSGSVC_BENCH_REPORT_ONLY: '1' },
    timeoutMs,
  );
  const line = stdout
    .split('\n')
    .filter((l) => l.startsWith(`${tag} `))
    .at(-1);
  if (!line) throw new Error(`${script} printed no ${tag} line: ${stdout.trim().split('\n').at(-1) ?? ''}`);
  return JSON.parse(line.slice(tag.length + 1)) as T;
}

let watchdog: NodeJS.Timeout | undefined;
/** (Re)arms the stop at the time budget plus 30 s, plus `extraMs` (the time --build took). */
function armWatchdog(extraMs: number): void {
  clearTimeout(watchdog);
  watchdog = setTimeout(
    () => {
      log(`time budget of ${plan.budgetSeconds}s exceeded: stopping`);
      void stopAll().finally(() => process.exit(1));
    },
    started + extraMs + (plan.budgetSeconds + 30) * 1000 - Date.now(),
  );
  watchdog.unref();
}
armWatchdog(0);

main()
  .catch((err) => {
    log(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exitCode = 1;
  })
  .finally(async () => {
    await stopAll();
    clearTimeout(watchdog);
  });
