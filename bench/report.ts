/**
 * The bench's result file shape, the targets of the benchmark issue, and the Markdown summary that
 * goes into docs/PERFORMANCE.md (between the `bench:start` / `bench:end` markers).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { SigninBenchResult } from './auth.ts';
import type { CarrierRunKind, CarriersBenchResult, CarriersRun } from './carriers.ts';
import type { ConsoleBenchResult, ConsoleSeries } from './console.ts';
import type { Machine } from './lib/procs.ts';
import type { LinksBenchResult } from './links.ts';

export interface SideResult {
  /** req/s of each measured round (responses with the expected status only). */
  rps: number[];
  medianRps: number;
  /** Latency percentiles over every response of every round, in ms. */
  p50Ms: number;
  p99Ms: number;
  /** Responses with another status than expected, and socket errors/timeouts. */
  unexpected: number;
  errors: number;
  /** Median over rounds of instructions executed by the server per response (perf stat), or null. */
  instructionsPerRequest: number | null;
  /** Median over rounds of the server's CPU time (user + system) per response, in µs. */
  cpuMicrosPerRequest?: number;
  /** Open-loop latency at a steady rate below saturation (msgsvc's half load; the ceiling at the same rate). */
  paced?: {
    rate: number;
    p50Ms: number;
    p99Ms: number;
    maxMs: number;
    achievedRps: number;
    unexpected: number;
    errors: number;
    rounds?: number;
    roundP99Ms?: number[];
  };
}

export interface ScenarioResult {
  scenario: string;
  title: string;
  kind: 'read' | 'write' | 'auth';
  contacts: number;
  page?: number;
  ceiling: SideResult;
  msgsvc: SideResult;
  /** median msgsvc req/s ÷ median ceiling req/s. */
  ratio: number;
  /** msgsvc ÷ ceiling of each round (A B pairs). */
  roundRatios: number[];
  /**
   * The scenario's own floor (bench/floors/server.ts: its irreducible work on a bare Fastify server),
   * measured in the same alternating rounds; absent for the 401 scenario and in older results.
   */
  floor?: SideResult;
  /** median msgsvc req/s ÷ median floor req/s. */
  floorRatio?: number;
  /** median floor req/s ÷ median ceiling req/s. */
  floorCeilingRatio?: number;
  /**
   * The floor's CPU µs per request ÷ msgsvc's: msgsvc ÷ floor in server CPU time. Where the load
   * generator's one core caps both servers' req/s (cheap scenarios), the req/s ratio runs towards 1
   * and this one still shows the gap.
   */
  floorCpuRatio?: number;
}

export interface DatasetResult {
  contacts: number;
  messages: number;
  generateSeconds: number;
  group: { id: number; members: number };
  entry: { id: number; customFieldId: number; contactId: number };
  msgsvcPeakRssMiB?: number;
  msgsvcRssMiB?: number;
}

export interface BenchResult {
  date: string;
  mode: 'quick' | 'full';
  machine: Machine;
  plan: {
    sizes: number[];
    rounds: number;
    durationSeconds: number;
    warmupSeconds: number;
    connections: number;
    pacedSeconds: number;
    pacedRounds?: number;
    pacedShare: number;
  };
  serverPinnedToCpu: number | null;
  /** `runs`: what bin/msgsvc.js ran, the build in dist/ or the sources through tsx (bin/entry.js). */
  msgsvc: { env: Record<string, string>; logTo: string; nodeFlags?: string[]; runs?: 'dist' | 'src' };
  datasets: DatasetResult[];
  scenarios: ScenarioResult[];
  skipped: { scenario: string; contacts: number; reason: string }[];
  ceilingPeakRssMiB?: number;
  /** contacts/import of a generated CSV file (bench/import-1m.ts), issue 10's import target. */
  import?: ImportResult;
  /** send-group and the dispatcher (`msgsvc worker`) on SQLite and PostgreSQL (bench/dispatch.ts), issue 11's targets. */
  dispatch?: DispatchBenchResult;
  /** SMPP throughput against the Perl SMSC, windows 10 and 50 (bench/smpp.ts), issue 12's goal. */
  smpp?: SmppBenchResult;
  /** media/upload: MB/s and peak RSS (bench/media.ts), issue 13. */
  media?: MediaBenchResult;
  /** Webhook deliveries per second to a loopback receiver (bench/webhooks.ts), issue 13. */
  webhooks?: WebhooksBenchResult;
  /** Quiet hours at scale (bench/quiet-hours.ts; API.md §14.3.5): send-group over 5 zones, then each zone's release. */
  quietHours?: QuietHoursBenchResult;
  /** GET /l/{code} redirects per second, without and with a click webhook (bench/links.ts; API.md §14.4.3). */
  links?: LinksBenchResult;
  /** sms/conversations page 1 at 10 k threads (bench/conversations.ts; API.md §14.4.1). */
  conversations?: ConversationsBenchResult;
  /** The HTTP carriers through lean fakes on loopback (bench/carriers.ts; API.md §14.1). */
  carriers?: CarriersBenchResult;
  /** The console's first load in Chromium (bench/console.ts; API.md §14.2). */
  console?: ConsoleBenchResult;
  /** Argon2id alone and POST /console/api/session end to end, three kinds of sign-in (bench/auth.ts; API.md §15.3). */
  signin?: SigninBenchResult;
  /** The machine's 1, 5 and 15-minute load averages when the run started and ended (others may be using it). */
  loadAverage?: { start: number[]; end?: number[] };
  targets?: TargetResult[];
  seconds: number;
}

export interface ImportResult {
  rows: number;
  seconds: number;
  rowsPerSecond: number;
  peakRssMB: number;
}

/** (a) of bench/dispatch.ts: sms/send-group to a group of `recipients` contacts, through `msgsvc serve`. */
export interface SendGroupRun {
  store: 'sqlite' | 'postgres';
  recipients: number;
  /** From the request sent to its 201 answer. */
  seconds: number;
  /** 1-minute load average just before. */
  loadAverage: number;
}

/** (b) of bench/dispatch.ts: `msgsvc worker` taking the queued messages to Delivered (sandbox, receipts at once). */
export interface DispatchRun {
  store: 'sqlite' | 'postgres';
  messages: number;
  /** From the start (the worker's "dispatching" line or the first message Sent, whichever is first) to nothing left due. */
  seconds: number;
  messagesPerSecond: number;
  /** From spawning `msgsvc worker` to that start. */
  startSeconds: number;
  workerCpuSeconds: number;
  /** Seconds the worker was ready to run but waited for a CPU that another process had (the machine is shared). */
  workerRunQueueSeconds: number;
  workerPeakRssMB: number;
  /** PostgreSQL: CPU seconds of the server processes serving the run's database. */
  postgresCpuSeconds?: number;
  /** 1-minute load average just before. */
  loadAverage: number;
}

export interface DispatchBenchResult {
  messages: number;
  /** What msgsvc ran: dist, a fresh build, or the sources through tsx. */
  runs: string;
  sendGroup: SendGroupRun[];
  dispatch: DispatchRun[];
  skipped: string[];
}

/** One window of bench/smpp.ts: queued → submit_sm_resp through the dispatcher and the SMPP carrier. */
export interface SmppRun {
  window: number;
  messages: number;
  /** Seconds from the dispatcher's start to the last submit_sm_resp. */
  toRespSeconds: number;
  perSecond: number;
  /** Seconds to the last Sent committed. */
  toSentSeconds: number;
  /** CPU of the Perl SMSC and of msgsvc's process over toRespSeconds (seconds, % of one core). */
  smscCpuSeconds: number;
  smscCpuPercent: number;
  msgsvcCpuSeconds: number;
  msgsvcCpuPercent: number;
}

export interface SmppBenchResult {
  messages: number;
  runs: SmppRun[];
  /** Why nothing was measured (the Perl SMSC missing). */
  skipped?: string;
}

/** One scenario of bench/media.ts on one store: `png10` (a 10 MB PNG, N times), `one70`, `four70` (4 at once). */
export interface MediaScenario {
  scenario: string;
  uploads: number;
  mib: number;
  seconds: number;
  mibPerSecond: number;
  /** msgsvc's RSS after start, and its peak (VmHWM) over the scenario, each scenario on a fresh process. */
  baseRssMiB: number;
  peakRssMiB: number;
}

export interface MediaBenchResult {
  /** msgsvc ran the sources through tsx (no --app). */
  fromSource: boolean;
  uploads?: number;
  results: Partial<Record<'sqlite' | 'postgres', MediaScenario[]>>;
  skipped?: string[];
}

export interface WebhookRun {
  store: 'sqlite' | 'postgres';
  events: number;
  seconds: number;
  deliveriesPerSecond: number;
  outboxWritesPerSecond: number;
  /** CPU seconds of the delivering process. */
  cpuSeconds: number;
  loadBefore: number;
}

export interface WebhooksBenchResult {
  events: number;
  results: WebhookRun[];
  skipped?: string[];
}

/** One store of bench/quiet-hours.ts (its `QUIET {json}` line's `runs`). */
export interface QuietHoursRun {
  store: 'sqlite' | 'postgres';
  /** sms/send-group to every recipient through `msgsvc serve`: from the request to its 201, seconds. */
  queueSeconds: number;
  queueMet?: boolean;
  loadAverage?: number;
  /** The dispatcher's pass that holds every message (the clock inside every zone's quiet hours), seconds. */
  holdSeconds: number;
  heldPerSecond?: number;
  /** Each zone's release at the end of its quiet hours: messages sent then, and `early` (sent 1 ms before). */
  zones: { zone: string; releasedAt: string; messages: number; early: number; seconds: number; messagesPerSecond: number }[];
  /** Checks that failed (empty when every zone went at its end, each message once). */
  problems: string[];
}

/** The `QUIET {json}` line of bench/quiet-hours.ts. */
export interface QuietHoursBenchResult {
  /** Recipients of the send-group, N/5 per zone. */
  messages: number;
  runs: QuietHoursRun[];
  /** Stores not run, each as `store: why`. */
  skipped: string[];
}

/** One store of bench/conversations.ts: page 1 (100 threads) asked back to back by one client. */
export interface ConversationsRun {
  store: 'sqlite' | 'postgres';
  threads: number;
  messages: number;
  requests: number;
  /** Client-side latency percentiles, ms. */
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  /** CPU of the process (server and client) per request, ms. */
  cpuMsPerRequest: number;
  generateSeconds: number;
  generateWithoutTriggerSeconds?: number;
  loadAverage: number;
}

/** The `CONVERSATIONS {json}` line of bench/conversations.ts. */
export interface ConversationsBenchResult {
  targetP50Ms: number;
  results: ConversationsRun[];
  /** Stores not run, each as `store: why`. */
  skipped: string[];
}

export interface TargetResult {
  target: string;
  measured: string;
  met: boolean | null;
}

const MIB_TO_MB = 1.048576;
const fmt = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–');
const storeName = (s: string) => (s === 'sqlite' ? 'SQLite' : s === 'postgres' ? 'PostgreSQL' : s);
/** A ratio to a target: two decimals, three when two would round it onto the target's side. */
const vs = (x: number, min: number) => (Math.abs(x - min) < 0.005 ? x.toFixed(3) : x.toFixed(2));
const human = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000} M` : n >= 1000 ? `${n / 1000} k` : String(n));

/** Evaluates the issue's targets on a result (at the largest size measured). */
export function evaluateTargets(r: BenchResult): TargetResult[] {
  const sizes = [...new Set(r.scenarios.map((s) => s.contacts))].sort((a, b) => a - b);
  const largest = sizes.at(-1);
  const smallest = sizes[0];
  const at = (name: string, size: number | undefined) => r.scenarios.find((s) => s.scenario === name && s.contacts === size);
  const out: TargetResult[] = [];
  const ratioTarget = (name: string, min: number, label: string) => {
    const rows = r.scenarios.filter((s) => s.scenario === name);
    if (rows.length === 0) return;
    const worst = Math.min(...rows.map((s) => s.ratio));
    out.push({
      target: `${label} ≥ ${min.toFixed(2)} × ceiling`,
      measured: rows.map((s) => `${s.ratio.toFixed(2)} (${human(s.contacts)})`).join(', '),
      met: worst >= min,
    });
  };
  if (r.import && r.import.rows >= 1_000_000) {
    out.push({
      target: `contacts/import of ${human(r.import.rows)} rows ≤ 60 s, peak RSS ≤ 300 MB`,
      measured: `${r.import.seconds.toFixed(1)} s (${fmt(r.import.rowsPerSecond)} rows/s), ${fmt(r.import.peakRssMB)} MB`,
      met: r.import.seconds <= 60 && r.import.peakRssMB <= 300,
    });
  }
  const d = r.dispatch;
  if (d && d.messages >= 100_000) {
    const group = d.sendGroup.find((g) => g.store === 'sqlite');
    const pgGroup = d.sendGroup.find((g) => g.store === 'postgres');
    if (group) {
      out.push({
        target: `sms/send-group to ${human(d.messages)} contacts queued ≤ 2 s (SQLite)`,
        measured: `${group.seconds.toFixed(2)} s${pgGroup ? ` (PostgreSQL, no target: ${pgGroup.seconds.toFixed(2)} s)` : ''}`,
        met: group.seconds <= 2,
      });
    }
    for (const store of ['sqlite', 'postgres'] as const) {
      const run = d.dispatch.find((x) => x.store === store);
      out.push({
        target: `dispatcher (\`msgsvc worker\`) ≥ 5,000 messages/s Queued → Delivered to the sandbox (${store === 'sqlite' ? 'SQLite' : 'PostgreSQL'})`,
        measured: run
          ? `${fmt(run.messagesPerSecond)} msg/s (${fmt(run.messages)} in ${run.seconds.toFixed(1)} s)`
          : `not measured (${d.skipped.join('; ') || 'skipped'})`,
        met: run ? run.messagesPerSecond >= 5000 : null,
      });
    }
  }
  const notMeasured = (name: string) => {
    const skip = r.skipped.find((s) => s.scenario === name);
    return skip ? `not measured (${skip.reason})` : undefined;
  };
  if (r.smpp || notMeasured('smpp')) {
    const runs = r.smpp?.runs ?? [];
    out.push({
      target: 'SMPP ≥ 1,000 messages/s queued → submit_sm_resp (Perl SMSC on loopback, windows 10 and 50)',
      measured:
        runs.length > 0
          ? runs
              .map((x) => `window ${x.window}: ${fmt(x.perSecond)} msg/s (SMSC CPU ${x.smscCpuPercent} %, msgsvc ${x.msgsvcCpuPercent} %)`)
              .join('; ') + ` (${fmt(r.smpp!.messages)} messages)`
          : (notMeasured('smpp') ?? `not measured (${r.smpp?.skipped ?? 'skipped'})`),
      met: runs.length > 0 ? runs.every((x) => x.perSecond >= 1000) : null,
    });
  }
  if (r.media || notMeasured('media')) {
    const stores = Object.entries<MediaScenario[]>(r.media?.results ?? {});
    const part = (name: string, show: (x: MediaScenario) => string) =>
      stores.length > 0
        ? stores
            .map(([store, xs]) => [store, xs.find((x) => x.scenario === name)] as const)
            .filter((e): e is readonly [string, MediaScenario] => e[1] !== undefined)
            .map(([store, x]) => `${storeName(store)} ${show(x)}`)
            .join('; ')
        : (notMeasured('media') ?? 'not measured');
    out.push({
      target: 'media/upload of a 10 MB PNG: MB/s and peak RSS (measured, no target set)',
      measured: part('png10', (x) => `${(x.mibPerSecond * MIB_TO_MB).toFixed(0)} MB/s, peak ${(x.peakRssMiB * MIB_TO_MB).toFixed(0)} MB`),
      met: null,
    });
    out.push({
      target: 'media/upload of 70 MB, one and then 4 at once: peak RSS (measured, no target set)',
      measured:
        stores.length > 0
          ? stores
              .map(
                ([store, xs]) =>
                  `${storeName(store)} ${['one70', 'four70']
                    .map((n) => xs.find((x) => x.scenario === n))
                    .map((x) => (x ? `${(x.peakRssMiB * MIB_TO_MB).toFixed(0)} MB` : '–'))
                    .join(' / ')}`,
              )
              .join('; ')
          : (notMeasured('media') ?? 'not measured'),
      met: null,
    });
  }
  if (r.webhooks || notMeasured('webhooks')) {
    const runs = r.webhooks?.results ?? [];
    out.push({
      target: 'webhook deliveries per second to a loopback receiver (measured, no target set)',
      measured:
        runs.length > 0
          ? runs.map((x) => `${storeName(x.store)} ${fmt(x.deliveriesPerSecond)}/s`).join('; ') + ` (${fmt(r.webhooks!.events)} events)`
          : (notMeasured('webhooks') ?? 'not measured'),
      met: null,
    });
  }
  const sends = r.scenarios.filter((s) => s.scenario === 'sms-send');
  if (sends.length > 0) {
    out.push({
      target: 'sms/send through HTTP: ratio to the ceiling (measured, no target set)',
      measured: sends.map((s) => `${s.ratio.toFixed(2)} (${human(s.contacts)}; ${fmt(s.msgsvc.medianRps)}/s)`).join(', '),
      met: null,
    });
  }
  // Issue 15: credits/balance against the constant ceiling (the earlier rounds asked 0.70 and 0.60);
  // every other scenario against its own floor, below. The earlier rounds' ceiling targets for
  // contacts/find (0.50) and the writes (0.35) are replaced by those floors.
  ratioTarget('balance-json', 0.55, 'credits/balance JSON');
  ratioTarget('balance-xml', 0.55, 'credits/balance XML');
  const findLarge = at('contacts-find', largest);
  const findSmall = at('contacts-find', smallest);
  if (findLarge && findSmall && largest !== smallest) {
    const rel = findLarge.msgsvc.medianRps / findSmall.msgsvc.medianRps;
    const cpu = (findLarge.msgsvc.cpuMicrosPerRequest ?? NaN) / (findSmall.msgsvc.cpuMicrosPerRequest ?? NaN);
    out.push({
      target: `contacts/find at ${human(largest!)} within 10 % of its speed at ${human(smallest!)}`,
      measured: `${(rel * 100).toFixed(0)} % of the req/s; CPU per request ${Number.isFinite(cpu) ? `${cpu >= 1 ? '+' : ''}${((cpu - 1) * 100).toFixed(0)} %` : 'n/a'}`,
      met: rel >= 0.9,
    });
  }
  const deep = at('sms-deep', largest);
  const first = at('sms-page1', largest);
  if (deep && first) {
    const rel = deep.msgsvc.medianRps / first.msgsvc.medianRps;
    out.push({
      target: `sms deep page (page ${deep.page ?? '?'}) at ${human(largest!)} messages within 2 × of page 1`,
      measured: `deep ${fmt(deep.msgsvc.medianRps)}/s vs page 1 ${fmt(first.msgsvc.medianRps)}/s (${rel.toFixed(2)} ×)`,
      met: rel >= 0.5,
    });
  }
  // Issue 24: the console's chart, sms/stats for 7 days by hour over the largest message log, p50
  // ≤ 50 ms: the latency at half of msgsvc's throughput (the paced run) where measured, else under
  // the saturating load (which queues 50 connections' requests behind each other).
  const stats = at('sms-stats', largest);
  if (stats) {
    const paced = stats.msgsvc.paced;
    const p50 = paced?.p50Ms ?? stats.msgsvc.p50Ms;
    out.push({
      target: `sms/stats (7 days by hour) over ${human(largest!)} messages: p50 ≤ 50 ms`,
      measured: `${p50} ms ${paced ? `at ${fmt(paced.rate)}/s` : `at saturation (${r.plan.connections} connections)`}; ${fmt(stats.msgsvc.medianRps)}/s at saturation`,
      met: p50 <= 50,
    });
  }
  // Issue 15: every read ≥ 0.65 × its floor, every write ≥ 0.55 × its floor, at every size measured.
  for (const [kind, min] of [
    ['read', 0.65],
    ['write', 0.55],
  ] as const) {
    const rows = r.scenarios.filter((s) => s.kind === kind && s.floorRatio !== undefined);
    if (rows.length === 0) continue;
    const misses = rows.filter((s) => s.floorRatio! < min);
    out.push({
      target: `every ${kind} scenario ≥ ${min.toFixed(2)} × its floor (bench/floors/)`,
      measured:
        `${rows.length - misses.length} of ${rows.length} met` +
        (misses.length > 0
          ? `; below: ${misses.map((s) => `${s.scenario} ${vs(s.floorRatio!, min)} (${human(s.contacts)})`).join(', ')}`
          : `; worst ${vs(Math.min(...rows.map((s) => s.floorRatio!)), min)}`),
      met: misses.length === 0,
    });
  }
  // sms/stats aggregates thousands of rows per request: it has its own latency target (issue 24,
  // above) instead of this one, which issue 15 set for the record reads and writes.
  const largestRows = r.scenarios.filter((s) => s.contacts === largest && s.msgsvc.paced && s.scenario !== 'sms-stats');
  if (largestRows.length > 0) {
    // Issue 15: p99 ≤ 5 ms at half load in every scenario where the ceiling's own p99 at that rate
    // is ≤ 3 ms (where it is not, the machine itself was not quiet enough to tell).
    const judged = largestRows.filter((s) => s.ceiling.paced !== undefined && s.ceiling.paced.p99Ms <= 3);
    const misses = judged.filter((s) => s.msgsvc.paced!.p99Ms > 5);
    const notJudged = largestRows.filter((s) => !judged.includes(s));
    out.push({
      target: `p99 ≤ 5 ms at half of msgsvc's throughput (${human(largest!)}, ${r.plan.connections} connections) where the ceiling's p99 at that rate is ≤ 3 ms`,
      measured:
        `${judged.length - misses.length} of ${judged.length} met` +
        (misses.length > 0
          ? `; above: ${misses.map((s) => `${s.scenario} ${s.msgsvc.paced!.p99Ms} ms (ceiling ${s.ceiling.paced!.p99Ms})`).join(', ')}`
          : '') +
        (notJudged.length > 0
          ? `; not judged (ceiling p99 > 3 ms): ${notJudged.map((s) => `${s.scenario} ${s.msgsvc.paced!.p99Ms} ms (ceiling ${s.ceiling.paced?.p99Ms ?? '–'})`).join(', ')}`
          : ''),
      met: judged.length > 0 ? misses.length === 0 : null,
    });
  }
  const ds = r.datasets.find((d) => d.contacts === largest);
  if (ds?.msgsvcPeakRssMiB !== undefined) {
    const mb = ds.msgsvcPeakRssMiB * MIB_TO_MB;
    out.push({
      target: `RSS ≤ 200 MB at ${human(largest!)} contacts with ${human(largest!)} messages in the log`,
      measured: `peak ${mb.toFixed(0)} MB (${ds.msgsvcPeakRssMiB.toFixed(0)} MiB)`,
      met: mb <= 200,
    });
  }
  return out;
}

/** The Markdown summary of a run: machine, table, targets. */
export function renderMarkdown(r: BenchResult, resultFile: string): string {
  r.targets = evaluateTargets(r);
  const m = r.machine;
  const lines: string[] = [];
  lines.push(
    `Produced by \`npm run bench${r.mode === 'quick' ? ' -- --quick' : ''}\` on ${r.date.slice(0, 16).replace('T', ' ')} UTC, ` +
      `machine: ${m.nproc} CPUs (\`nproc\`), ${m.cpuModel}, ${m.memoryGiB} GiB RAM, ${m.platform}, Linux ${m.kernel}, Node ${m.node}. ` +
      (r.serverPinnedToCpu !== null
        ? `Both servers pinned to CPU ${r.serverPinnedToCpu} with taskset, load generator (autocannon, ${r.plan.connections} connections) on the other CPU. `
        : `No CPU pinning (taskset missing or one CPU); autocannon with ${r.plan.connections} connections. `) +
      `${r.plan.rounds} round(s) of ${r.plan.durationSeconds} s per server and scenario after a ${r.plan.warmupSeconds} s warm-up, ceiling${r.scenarios.some((s) => s.floor) ? ', floor' : ''} and msgsvc alternating; ` +
      (r.scenarios.some((s) => s.floor)
        ? "the floor (`bench/floors/server.ts`, pinned like the others) is a bare Fastify server doing only each scenario's irreducible work on the same database: msgsvc's SQL prepared once on better-sqlite3 with msgsvc's pragmas, the rows serialised with JSON.stringify, writes in one transaction; no auth, rate limit, negotiation or log line. "
        : '') +
      `both servers run with \`node --no-memory-reducer\`, msgsvc also with the flags of \`npm start\` (${(r.msgsvc.nodeFlags ?? []).filter((f) => f !== '--no-memory-reducer').join(' ') || 'none'}), LOG_LEVEL=info, ${r.msgsvc.env.MSGSVC_DISPATCHER === '0' ? 'the dispatcher off (MSGSVC_DISPATCHER=0: sms/send only queues; the dispatcher is measured apart, below), ' : ''}${r.msgsvc.runs === 'src' ? 'running the TypeScript sources through tsx (dist/ was missing or stale)' : 'running the build in dist/ as `npm start` does'}. ` +
      `"Half load": an open-loop client at half of msgsvc's saturated req/s, at the largest size, ${r.plan.pacedRounds ?? 1} round(s) of ${r.plan.pacedSeconds} s per server alternating with the ceiling at the same rate, percentiles over all rounds; latency counted from each request's scheduled time. ` +
      `Instructions per request: ${m.perfCounters ? 'perf stat -e instructions -p PID' : 'not available (perf has no hardware counters on this machine)'}. ` +
      `Raw numbers: \`${resultFile}\`.`,
  );
  lines.push('');
  lines.push(
    '| Scenario | Contacts | Ceiling req/s | Floor req/s | msgsvc req/s | msgsvc / ceiling | msgsvc / floor (target) | msgsvc / floor by CPU µs/req | floor / ceiling | p50 / p99 ms, saturated (ceiling p99) | p50 / p99 ms at half load (ceiling p99 at that rate) | CPU µs/req msgsvc / ceiling | instr/req msgsvc / ceiling |',
  );
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const s of r.scenarios) {
    const instr =
      s.msgsvc.instructionsPerRequest !== null
        ? `${fmt(s.msgsvc.instructionsPerRequest)} / ${fmt(s.ceiling.instructionsPerRequest ?? NaN)}`
        : 'n/a';
    const title = s.page !== undefined ? `${s.title} (page ${fmt(s.page)})` : s.title;
    const bad = s.msgsvc.unexpected + s.msgsvc.errors > 0 ? ` ⚠ ${s.msgsvc.unexpected} unexpected, ${s.msgsvc.errors} errors` : '';
    const ceilingPaced = s.ceiling.paced ? ` (${s.ceiling.paced.p99Ms})` : '';
    const paced = s.msgsvc.paced
      ? `${s.msgsvc.paced.p50Ms} / ${s.msgsvc.paced.p99Ms}${ceilingPaced} at ${fmt(s.msgsvc.paced.rate)}/s`
      : '–';
    const cpu = `${s.msgsvc.cpuMicrosPerRequest ?? '–'} / ${s.ceiling.cpuMicrosPerRequest ?? '–'}`;
    const floorMin = s.kind === 'read' ? 0.65 : s.kind === 'write' ? 0.55 : undefined;
    const vsFloor =
      s.floorRatio !== undefined
        ? floorMin !== undefined
          ? `**${vs(s.floorRatio, floorMin)}** (${floorMin.toFixed(2)}: ${s.floorRatio >= floorMin ? 'met' : 'not met'})`
          : `**${s.floorRatio.toFixed(2)}**`
        : '–';
    lines.push(
      `| ${title}${bad} | ${human(s.contacts)} | ${fmt(s.ceiling.medianRps)} | ${s.floor ? fmt(s.floor.medianRps) : '–'} | ${fmt(s.msgsvc.medianRps)} | **${s.ratio.toFixed(2)}** | ${vsFloor} | ${s.floorCpuRatio !== undefined ? `${s.floorCpuRatio.toFixed(2)} (${s.floor!.cpuMicrosPerRequest} µs)` : '–'} | ${s.floorCeilingRatio !== undefined ? s.floorCeilingRatio.toFixed(2) : '–'} | ${s.msgsvc.p50Ms} / ${s.msgsvc.p99Ms} (${s.ceiling.p99Ms}) | ${paced} | ${cpu} | ${instr} |`,
    );
  }
  lines.push('');
  lines.push('| Dataset | Generated in | msgsvc peak RSS |');
  lines.push('|---|---:|---:|');
  for (const d of r.datasets) {
    const gen = Number.isFinite(d.generateSeconds) ? `${d.generateSeconds} s` : 'reused';
    const rss = d.msgsvcPeakRssMiB !== undefined ? `${(d.msgsvcPeakRssMiB * MIB_TO_MB).toFixed(0)} MB` : '–';
    lines.push(`| ${human(d.contacts)} contacts, ${human(d.messages)} scheduled messages | ${gen} | ${rss} |`);
  }
  if (r.dispatch && r.dispatch.dispatch.length + r.dispatch.sendGroup.length > 0) {
    const d = r.dispatch;
    lines.push('');
    lines.push(
      `Messages going out (\`bench/dispatch.ts\`, ${fmt(d.messages)} messages, msgsvc running ${d.runs}): send-group to one group of ${fmt(d.messages)} contacts through \`msgsvc serve\` (dispatcher off), ` +
        `then \`msgsvc worker\` alone taking them Queued → Delivered to the sandbox (MSGSVC_SANDBOX_RECEIPT_MS=0, other settings at their defaults).`,
    );
    lines.push('');
    lines.push(
      '| Store | send-group queued in | Dispatcher msg/s | Dispatch time | Worker CPU (waited for a CPU) | PostgreSQL CPU | Worker peak RSS | Load (1 min) |',
    );
    lines.push('|---|---:|---:|---:|---:|---:|---:|---:|');
    for (const store of ['sqlite', 'postgres'] as const) {
      const g = d.sendGroup.find((x) => x.store === store);
      const x = d.dispatch.find((y) => y.store === store);
      if (!g && !x) continue;
      lines.push(
        `| ${store === 'sqlite' ? 'SQLite' : 'PostgreSQL'} | ${g ? `${g.seconds.toFixed(2)} s` : '–'} | ${x ? fmt(x.messagesPerSecond) : '–'} | ${x ? `${x.seconds.toFixed(1)} s` : '–'} | ` +
          `${x ? `${x.workerCpuSeconds} s (${x.workerRunQueueSeconds} s)` : '–'} | ${x?.postgresCpuSeconds !== undefined ? `${x.postgresCpuSeconds} s` : '–'} | ${x ? `${x.workerPeakRssMB} MB` : '–'} | ${x ? x.loadAverage : (g?.loadAverage ?? '–')} |`,
      );
    }
  }
  if (r.smpp && r.smpp.runs.length > 0) {
    lines.push('');
    lines.push(
      `SMPP (\`bench/smpp.ts\`, ${fmt(r.smpp.messages)} one-segment messages per window): the dispatcher and the SMPP carrier in one process against the Perl SMSC (Net::SMPP) on loopback, ` +
        "answering every submit_sm at once, no receipts; from the dispatcher's start to the last submit_sm_resp.",
    );
    lines.push('');
    lines.push('| Window | msg/s queued → submit_sm_resp | Last submit_sm_resp | All Sent committed | SMSC CPU (one core) | msgsvc CPU |');
    lines.push('|---:|---:|---:|---:|---:|---:|');
    for (const x of r.smpp.runs) {
      lines.push(
        `| ${x.window} | **${fmt(x.perSecond)}** | ${x.toRespSeconds} s | ${x.toSentSeconds} s | ${x.smscCpuSeconds} s (${x.smscCpuPercent} %) | ${x.msgsvcCpuSeconds} s (${x.msgsvcCpuPercent} %) |`,
      );
    }
  }
  const mediaStores = Object.entries<MediaScenario[]>(r.media?.results ?? {});
  if (r.media && mediaStores.length > 0) {
    lines.push('');
    lines.push(
      `media/upload (\`bench/media.ts\`, msgsvc running ${r.media.fromSource ? 'the sources through tsx' : 'a build of src/'}, a fresh \`msgsvc serve\` per scenario): ` +
        `a 10 MB PNG uploaded ${r.media.uploads ?? '?'} times one after the other, then one 70 MB upload, then 4 of 70 MB at once.${r.media.skipped?.length ? ` Skipped: ${r.media.skipped.join('; ')}.` : ''}`,
    );
    lines.push('');
    lines.push('| Store | Upload | Time | MB/s | msgsvc RSS at start | Peak RSS |');
    lines.push('|---|---|---:|---:|---:|---:|');
    const label: Record<string, string> = { png10: '10 MB PNG', one70: '70 MB', four70: '70 MB at once' };
    for (const [store, xs] of mediaStores) {
      for (const x of xs) {
        lines.push(
          `| ${storeName(store)} | ${x.uploads} × ${label[x.scenario] ?? x.scenario} | ${x.seconds.toFixed(2)} s | ${(x.mibPerSecond * MIB_TO_MB).toFixed(0)} | ${(x.baseRssMiB * MIB_TO_MB).toFixed(0)} MB | **${(x.peakRssMiB * MIB_TO_MB).toFixed(0)} MB** |`,
        );
      }
    }
  }
  if (r.webhooks && r.webhooks.results.length > 0) {
    lines.push('');
    lines.push(
      `Webhooks (\`bench/webhooks.ts\`, ${fmt(r.webhooks.events)} events in the outbox): one delivery loop (default settings: batch 100, concurrency 32) to a receiver process on 127.0.0.1 that checks every signature and answers 204.${r.webhooks.skipped?.length ? ` Skipped: ${r.webhooks.skipped.join('; ')}.` : ''}`,
    );
    lines.push('');
    lines.push('| Store | Deliveries/s | Time | Outbox writes/s | Deliverer CPU | Load (1 min) |');
    lines.push('|---|---:|---:|---:|---:|---:|');
    for (const x of r.webhooks.results) {
      lines.push(
        `| ${storeName(x.store)} | **${fmt(x.deliveriesPerSecond)}** | ${x.seconds} s | ${fmt(x.outboxWritesPerSecond)} | ${x.cpuSeconds} s | ${x.loadBefore} |`,
      );
    }
  }
  lines.push('');
  lines.push('| Target | Measured | Met |');
  lines.push('|---|---|:-:|');
  for (const t of r.targets) lines.push(`| ${t.target} | ${t.measured} | ${t.met === null ? '–' : t.met ? 'yes' : '**no**'} |`);
  lines.push('');
  lines.push(renderNewPaths(r));
  if (r.skipped.length > 0) {
    lines.push('');
    lines.push(`Skipped: ${r.skipped.map((s) => `${s.scenario} at ${human(s.contacts)} (${s.reason})`).join(', ')}.`);
  }
  lines.push('');
  const la = r.loadAverage;
  lines.push(
    `Whole run: ${r.seconds} s.${la ? ` Load average (1, 5, 15 min) at the start: ${la.start.join(', ')}${la.end ? `; at the end: ${la.end.join(', ')}` : ''} (2 CPUs; above 2 means other work was waiting for them).` : ''}`,
  );
  return lines.join('\n');
}

/** One row of the "New paths" table: a path, its figure on each store, its target and whether it was met. */
export interface NewPathRow {
  path: string;
  /** The command that measures this path alone (Markdown code). */
  command: string;
  /** The figure on each store; `not run` (with the reason where the result has one); `–` where the step never runs on that store. */
  sqlite: string;
  postgres: string;
  /** `–` where none is set. */
  target: string;
  /** Met (true) or missed (false) on every store measured; null: no target, nothing measured, or not judged at the size run (`note` says why). */
  met: boolean | null;
  note?: string;
}

const STORES = ['sqlite', 'postgres'] as const;
type StoreName = (typeof STORES)[number];
/** The HTTP carriers' kinds, their labels and the msg/s each must reach (API.md §14.1). */
const CARRIER_KINDS: readonly { kind: CarrierRunKind; label: string; short: string; target: number }[] = [
  { kind: 'twilio-sms', label: 'Twilio-compatible SMS', short: 'Twilio SMS', target: 2000 },
  { kind: 'twilio-mms', label: 'Twilio-compatible MMS', short: 'Twilio MMS', target: 500 },
  { kind: 'android-sms', label: 'Android SMS', short: 'Android SMS', target: 2000 },
];
/** A count as the issue writes it: 10 k, 1 M (1,003,000 messages is "1 M"). */
const approx = (n: number) => (n >= 1_000_000 ? `${+(n / 1_000_000).toFixed(1)} M` : n >= 1000 ? `${Math.round(n / 1000)} k` : String(n));
/** Met on every store measured; null when none was. */
const onEvery = <T>(xs: readonly T[], ok: (x: T) => boolean): boolean | null => (xs.length === 0 ? null : xs.every(ok));
const problemsOf = (problems: readonly string[]) => (problems.length > 0 ? ` ⚠ ${problems.join('; ')}` : '');

/** `not run`, with the reason bench/run.ts recorded for the step in `r.skipped` (--only, time budget, failed: …) where it did. */
function stepNotRun(r: BenchResult, step: string): string {
  const skip = r.skipped.find((s) => s.scenario === step);
  return skip ? `not run (${skip.reason})` : 'not run';
}

/** `not run` for one store of a step that ran, with the step's own reason (its `skipped`: `store: why` or `store kind: why`). */
function storeNotRun(skipped: readonly string[] | undefined, store: StoreName, kind?: string): string {
  const why = (skipped ?? []).find((s) => (kind !== undefined && s.startsWith(`${store} ${kind}:`)) || s.startsWith(`${store}:`));
  return why ? `not run (${why.slice(why.indexOf(':') + 1).trim()})` : 'not run';
}

/**
 * The rows of the "New paths" table from a bench result: the steps run after the HTTP scenarios
 * (quiet hours, sms/conversations, GET /l/{code}, the HTTP carriers, the console's first load) and
 * the `sms-stats` HTTP scenario, one row per path with one column per store.
 *
 * A step missing from `r` shows `not run` on both stores (with the reason in `r.skipped`); a store
 * missing from a step's results, `not run` with the step's own reason. Targets at a size (quiet
 * hours at 100 k recipients, conversations at 10 k threads / 1 M messages, sms/stats at 1 M
 * messages) are judged only when run at that size or above (met null and a note otherwise).
 * Pure: reads `r` only.
 */
export function newPathRows(r: BenchResult): NewPathRow[] {
  const rows: NewPathRow[] = [];
  /** Both store cells of a row: the store's figure, else why it is missing. */
  const cells = <T extends { store: string }>(
    present: boolean,
    step: string,
    runs: readonly T[],
    skipped: readonly string[] | undefined,
    show: (x: T) => string,
    kind?: string,
  ): Pick<NewPathRow, StoreName> => {
    const cell = (store: StoreName) => {
      if (!present) return stepNotRun(r, step);
      const x = runs.find((y) => y.store === store);
      return x ? show(x) : storeNotRun(skipped, store, kind);
    };
    return { sqlite: cell('sqlite'), postgres: cell('postgres') };
  };

  // Quiet hours (API.md §14.3.5): the send-group's time to queue, then every zone released at its end.
  const q = r.quietHours;
  const qRuns = q?.runs ?? [];
  const qN = q?.messages ?? 100_000;
  const qJudged = qN >= 100_000;
  const quietCommand = '`npm run bench -- --only quiet-hours`';
  rows.push({
    path: `sms/send-group to ${human(qN)} recipients over 5 zones, quiet hours on: time to queue`,
    command: quietCommand,
    ...cells(q !== undefined, 'quiet-hours', qRuns, q?.skipped, (x) => `${x.queueSeconds.toFixed(2)} s`),
    target: '≤ 3 s at 100 k',
    met: qJudged ? onEvery(qRuns, (x) => x.queueSeconds <= 3) : null,
    ...(!qJudged && qRuns.length > 0 ? { note: `not judged at ${human(qN)}` } : {}),
  });
  const onTime = (x: QuietHoursRun) => x.zones.filter((z) => z.early === 0 && z.messages === qN / 5).length;
  rows.push({
    path: 'the same send-group: zones released on time',
    command: quietCommand,
    ...cells(
      q !== undefined,
      'quiet-hours',
      qRuns,
      q?.skipped,
      (x) => `${onTime(x)} of ${x.zones.length} zones on time, ${x.zones.reduce((n, z) => n + z.early, 0)} early${problemsOf(x.problems)}`,
    ),
    target: '5 of 5 zones, 0 early',
    met: onEvery(qRuns, (x) => x.zones.length === 5 && onTime(x) === 5 && x.problems.length === 0),
  });

  // sms/conversations page 1 (API.md §14.4.1).
  const c = r.conversations;
  const cRuns = c?.results ?? [];
  const threads = cRuns[0]?.threads ?? 10_000;
  const cMessages = cRuns[0]?.messages ?? 1_000_000;
  const cJudged = threads >= 10_000 && cMessages >= 1_000_000;
  const cTarget = c?.targetP50Ms ?? 20;
  rows.push({
    path: `sms/conversations page 1, ${approx(threads)} threads / ${approx(cMessages)} messages: p50`,
    command: '`npm run bench -- --only conversations`',
    ...cells(c !== undefined, 'conversations', cRuns, c?.skipped, (x) => `${x.p50Ms} ms (p99 ${x.p99Ms} ms)`),
    target: `≤ ${cTarget} ms at 10 k threads / 1 M messages`,
    met: cJudged ? onEvery(cRuns, (x) => x.p50Ms <= cTarget) : null,
    ...(!cJudged && cRuns.length > 0 ? { note: `not judged at ${approx(cMessages)} messages` } : {}),
  });

  // GET /l/{code} (API.md §14.4.3): no target, without and with a click webhook.
  const l = r.links;
  for (const [phase, label] of [
    ['plain', 'no click webhook'],
    ['webhook', 'with a click webhook'],
  ] as const) {
    rows.push({
      path: `GET /l/{code}: redirects per second, ${label}`,
      command: '`npm run bench -- --only links`',
      ...cells(
        l !== undefined,
        'links',
        (l?.results ?? []).filter((x) => x.phase === phase),
        l?.skipped,
        (x) => `${fmt(x.redirectsPerSecond)}/s (p50 ${x.p50Ms} ms)`,
      ),
      target: '–',
      met: null,
    });
  }

  // The HTTP carriers (API.md §14.1): each kind's rate must be reached, and carried by at most one
  // core of worker CPU (msg per worker CPU second ≥ the target), every message accepted once.
  const k = r.carriers;
  const kRuns = k?.results ?? [];
  const carriersCommand = '`npm run bench -- --only carriers`';
  for (const { kind, label, target } of CARRIER_KINDS) {
    const runs = kRuns.filter((x) => x.kind === kind);
    rows.push({
      path: `HTTP carriers: ${label}, msg/s Queued → accepted`,
      command: carriersCommand,
      ...cells(
        k !== undefined,
        'carriers',
        runs,
        k?.skipped,
        (x) => `${fmt(x.msgPerSecond)} msg/s (${fmt(x.msgPerWorkerCpuSecond)} per worker CPU second)${problemsOf(x.problems)}`,
        kind,
      ),
      target: `≥ ${fmt(target)} msg/s on one core of worker CPU`,
      met: onEvery(runs, (x) => x.msgPerSecond >= target && x.msgPerWorkerCpuSecond >= target && x.problems.length === 0),
    });
  }
  const byStore = STORES.map((store) => ({ store, runs: kRuns.filter((x) => x.store === store) })).filter((g) => g.runs.length > 0);
  rows.push({
    path: "HTTP carriers: msgsvc's worker CPU, share of one core (1 = one core busy)",
    command: carriersCommand,
    ...cells(k !== undefined, 'carriers', byStore, k?.skipped, (g) =>
      CARRIER_KINDS.map(({ kind, short }) => [short, g.runs.find((x) => x.kind === kind)] as const)
        .filter((e): e is readonly [string, CarriersRun] => e[1] !== undefined)
        .map(([short, x]) => `${short} ${x.workerCpuShare}`)
        .join(', '),
    ),
    target: '–',
    met: null,
  });

  // The console's first load (API.md §14.2): on a SQLite demo database only.
  const co = r.console;
  const consoleCell = (show: (cold: ConsoleSeries, warm: ConsoleSeries | undefined) => string) =>
    co === undefined
      ? stepNotRun(r, 'console')
      : co.skipped !== undefined
        ? `not run (${co.skipped})`
        : co.cold
          ? show(co.cold, co.warm)
          : 'not run';
  rows.push({
    path: 'console first load: overview drawn p50, cold / warm',
    command: '`npm run bench -- --only console`',
    sqlite: consoleCell((cold, warm) => `${cold.overviewMs.p50} / ${warm?.overviewMs.p50 ?? '–'} ms`),
    postgres: '–',
    target: '–',
    met: null,
  });
  rows.push({
    path: 'console first load: bytes transferred, cold (p50)',
    command: '`npm run bench -- --only console`',
    sqlite: consoleCell((cold) => `${fmt(cold.transferBytes.p50)} bytes in ${cold.requests.p50} requests`),
    postgres: '–',
    target: '–',
    met: null,
  });

  // sms/stats, the HTTP scenario (SQLite only, like every HTTP scenario), at its largest size: p50
  // at the paced half load where measured, else under the saturating load (as evaluateTargets does).
  const stats = r.scenarios
    .filter((s) => s.scenario === 'sms-stats')
    .reduce<ScenarioResult | undefined>((a, s) => (a === undefined || s.contacts > a.contacts ? s : a), undefined);
  const paced = stats?.msgsvc.paced;
  const statsP50 = paced?.p50Ms ?? stats?.msgsvc.p50Ms;
  const statsSize = stats?.contacts ?? 1_000_000;
  const statsJudged = statsSize >= 1_000_000;
  rows.push({
    path: `sms/stats (7 days by hour) over ${human(statsSize)} messages: p50 at ${paced ? `${fmt(paced.rate)}/s` : stats ? 'saturation' : '100/s'}`,
    command: '`npm run bench -- --only sms-stats`',
    sqlite:
      stats && statsP50 !== undefined
        ? `${statsP50} ms${paced ? '' : ` (${r.plan.connections} connections)`}${stats.msgsvc.unexpected + stats.msgsvc.errors > 0 ? ` ⚠ ${stats.msgsvc.unexpected} unexpected, ${stats.msgsvc.errors} errors` : ''}`
        : stepNotRun(r, 'sms-stats'),
    postgres: '–',
    target: '≤ 50 ms at 1 M',
    met: statsP50 !== undefined && statsJudged ? statsP50 <= 50 : null,
    ...(stats && !statsJudged ? { note: `not judged at ${human(statsSize)}` } : {}),
  });
  return rows;
}

/**
 * The "New paths (issue 22 item 4)" table in Markdown (a lead paragraph, then a table with columns
 * Path, Command, SQLite, PostgreSQL, Target, Met), from `newPathRows(r)`. Met: `yes`, `**no**`, or
 * `–` (no target or not judged, with the reason in brackets).
 */
export function renderNewPaths(r: BenchResult): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
  const lines = [
    '**New paths (issue 22 item 4).** Each step runs in its own process after the HTTP scenarios (`npm run bench -- --only NAME` runs one alone); ' +
      'sms/stats is the HTTP scenario of the first table, on SQLite like every HTTP scenario, and the console loads its overview from a SQLite demo database: their PostgreSQL column is "–". ' +
      '"not run": the step was left out by --only, did not fit the time budget, failed, or cannot run on this machine.',
    '',
    '| Path | Command | SQLite | PostgreSQL | Target | Met |',
    '|---|---|---:|---:|---|:-:|',
  ];
  for (const x of newPathRows(r)) {
    const met = `${x.met === null ? '–' : x.met ? 'yes' : '**no**'}${x.note ? ` (${x.note})` : ''}`;
    lines.push(`| ${[x.path, x.command, x.sqlite, x.postgres, x.target, met].map(cell).join(' | ')} |`);
  }
  return lines.join('\n');
}

const START = '<!-- bench:start (written by npm run bench; do not edit by hand) -->';
const END = '<!-- bench:end -->';

/** Replaces the generated section of docs/PERFORMANCE.md (creating the file when missing). */
export function writeDocs(path: string, markdown: string): void {
  const block = `${START}\n${markdown}\n${END}`;
  if (!existsSync(path)) {
    writeFileSync(path, `# Performance\n\n## Latest full run\n\n${block}\n`);
    return;
  }
  const text = readFileSync(path, 'utf8');
  const a = text.indexOf(START);
  const b = text.indexOf(END);
  writeFileSync(path, a !== -1 && b > a ? `${text.slice(0, a)}${block}${text.slice(b + END.length)}` : `${text.trimEnd()}\n\n${block}\n`);
}
