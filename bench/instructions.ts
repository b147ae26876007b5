/**
 * `npm run bench -- --instructions`: instructions per request, counted by valgrind (callgrind), for
 * msgsvc, each scenario's floor and the ceiling, with req/s of the same servers beside them
 * (issue 22). Instructions do not depend on the day's load or on the machine's clock speed: the
 * same build on the same inputs counts within about 1 % run to run, where req/s moves by 15–30 %
 * and CPU time per request by up to 3 × between days on this shared machine.
 *
 * How a count is taken, for each server and scenario:
 * - each server (ceiling, floor, msgsvc) runs under
 *   `valgrind --tool=callgrind --instr-atstart=no --smc-check=all-non-file --dump-line=no
 *   --callgrind-out-file=DIR/cg.<name>.%p node --no-memory-reducer …` (msgsvc also with the flags of
 *   `npm start`), pinned to CPU 0 like the req/s bench, the load generator on CPU 1. The JIT runs as
 *   in production (no --jitless): V8 writes machine code into anonymous memory, and
 *   `--smc-check=all-non-file` (valgrind's default on amd64, given explicitly) makes valgrind check
 *   every such block for changes before running it, so re-generated code is re-translated;
 * - warm-up: 3 × `--warmup` (default 5,000) requests of the first scenario when the server starts, then `--warmup`
 *   requests of each scenario, with the instrumentation off (valgrind only runs the code, ~5 × slower
 *   than native; V8 tiers the hot functions up as it does natively: tiering counts calls, not time);
 * - `callgrind_control -z` (zero), `-i on`, then `--requests` requests (autocannon, a fixed amount,
 *   `--connections` connections), `-i off`, `-d` (dump): the dump's total (`totals:`) ÷ requests is
 *   the window's count. Everything the process does in that window counts: all its threads (V8's
 *   compiler and GC threads too), timers and GC included; the idle event loop between the toggles
 *   and the load adds well under 1 % (measured: an idle window of the same length);
 * - `--settle` windows (default 2) counted like the others and left out: msgsvc's JIT is still
 *   tiering functions up after 20,000 requests (Node's own stream and HTTP functions, the token
 *   hash, the handler), and the first instrumented windows carry that;
 * - after each window, an idle stretch of the same length (no requests) is counted; the median idle
 *   count per request (~1 k) is subtracted from every window. (Subtracting each window's own idle
 *   stretch made a window whose idle stretch caught a major GC, 61.5 M instructions, look 60 k per
 *   request cheaper than its neighbours, and the smallest window then picked it.)
 * - `--repeat` windows (default 5) one after the other in the same process: the median is the
 *   figure; the windows, the smallest and the spread ((max − min) ÷ median) are in the result.
 * A forced full GC before each window (`--expose-gc`, gc()) was tried and left out: V8 then throws
 *   away compiled code and the counts rose to 400–520 k per balance request.
 * Scenarios of heavy requests (pages of 100 rows, 1,000-id writes) get a tenth of the requests.
 *
 * Then the same servers, natively (no valgrind), in `--rps-rounds` rounds of `--rps-seconds` s, ceiling,
 * floor, msgsvc alternating (50 connections), as `npm run bench` measures them: req/s and CPU µs/request.
 *
 * Options: --only a,b (scenarios; default: the reads, groups-add-1000 and the 401 path), --sizes 10000,
 * --requests 1000, --warmup 5000, --settle 2, --connections 10, --repeat 5, --rps-rounds 3, --rps-seconds 2,
 * --node-flags=… (more node flags for every counted server; after msgsvc's `npm start` flags, so they
 * win), --keep-dumps DIR (keeps each window's callgrind dump, for bench/cg-annotate.ts), --no-ceiling,
 * --no-floor, --no-msgsvc,
 * --no-rps, --data-dir DIR (keeps the generated databases), --app DIR[,DIR…] (msgsvc builds to compare,
 * labelled by --labels a,b; default: this checkout as `npm start` runs it), --stores sqlite,postgres
 * (PostgreSQL: msgsvc only, on `msgsvc generate` into msgsvc_bench_<N> at --pg-url; no floor there),
 * --no-pin (servers and load generator not pinned: counts do not change, req/s does), --docs (writes the table into docs/PERFORMANCE.md between `instructions:start` and `instructions:end`).
 * Results: bench/results/<date>-instructions.json.
 */
import autocannon, { type Request } from 'autocannon';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ensureDataset, ensurePgDataset } from './lib/data.ts';
import { freePort, machine, msgsvcStartFlags, pinSelf, startServer, stopAll, type Server } from './lib/procs.ts';
import { SCENARIOS, type Dataset, type Scenario } from './scenarios.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const MSGSVC_NODE_FLAGS = msgsvcStartFlags(ROOT);
/** The valgrind command line every counted server runs under (the output file is added per server). */
export const VALGRIND = [
  'valgrind',
  '--tool=callgrind',
  '--instr-atstart=no',
  '--smc-check=all-non-file',
  '--fair-sched=yes',
  '--dump-line=no',
];
const DEFAULT_SCENARIOS = [
  'balance-json',
  'balance-xml',
  'numbers-index',
  'contacts-find',
  'sms-page1',
  'sms-deep',
  'contacts-page1',
  'contacts-deep',
  'groups-add-1000',
  'unauthorized',
];
/** Scenarios whose requests cost ~10 × a cheap read's: a tenth of the requests. */
const HEAVY = new Set(['sms-page1', 'sms-deep', 'contacts-page1', 'contacts-deep', 'groups-add-1000', 'sms-stats', 'sms-send']);
const MSGSVC_ENV = { LOG_LEVEL: 'info', MSGSVC_RATE_LIMIT: '1000000000', MSGSVC_DISPATCHER: '0' };

export interface Count {
  /** The first `--settle` windows, counted like the others and left out of the figure. */
  settling?: number[];
  /** The median of `windows` (= perRequest). */
  median?: number;
  /** The smallest of `windows`. */
  smallest?: number;
  /** Instructions per request of each window, its idle stretch's count subtracted. */
  windows: number[];
  /** The idle stretch's instructions ÷ requests, per window. */
  idlePerRequest?: number[];
  /** The median window (the figure). */
  perRequest: number;
  /** (max − min) ÷ min of the windows. */
  spread: number;
  requests: number;
  unexpected: number;
}
export interface Rps {
  rps: number[];
  medianRps: number;
  cpuMicrosPerRequest: number;
  /** PostgreSQL's processes' CPU per request (msgsvc on PostgreSQL only). */
  pgCpuMicrosPerRequest?: number;
}
export interface Side {
  server: string;
  instructions?: Count;
  rps?: Rps;
}
export interface InstructionsScenarioResult {
  scenario: string;
  title: string;
  kind: Scenario['kind'];
  contacts: number;
  store: 'sqlite' | 'postgres';
  sides: Side[];
}
export interface InstructionsResult {
  date: string;
  kind: 'instructions';
  machine: ReturnType<typeof machine>;
  valgrind: string;
  commands: Record<string, string>;
  plan: Record<string, unknown>;
  loadAverage: { start: number[]; end?: number[] };
  scenarios: InstructionsScenarioResult[];
  seconds: number;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length === 0 ? NaN : s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

function callgrindControl(pid: number, ...args: string[]): void {
  const r = spawnSync('callgrind_control', [...args, String(pid)], { encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`callgrind_control ${args.join(' ')} ${pid}: ${r.stderr || r.stdout}`);
}

/** Sends exactly `amount` requests over `connections` connections; counts the ones with another status. */
function send(server: Server, request: Request, amount: number, connections: number, expected: number): Promise<{ unexpected: number }> {
  return new Promise((res, rej) => {
    let unexpected = 0;
    const instance = autocannon(
      { url: server.url, connections: Math.min(connections, amount), amount, requests: [request], timeout: 120 },
      (err) => (err ? rej(err) : res({ unexpected })),
    );
    instance.on('response', (_c: unknown, status: number) => {
      if (status !== expected) unexpected++;
    });
  });
}

/** A server under callgrind: counts instructions over windows of requests. */
interface Counted {
  server: Server;
  outPrefix: string;
}

async function countWindows(
  c: Counted,
  request: () => Request,
  opts: {
    warmup: number;
    requests: number;
    connections: number;
    repeat: number;
    settle: number;
    expected: number;
    name: string;
    keepDumps?: string;
  },
): Promise<Count> {
  await send(c.server, request(), opts.warmup, opts.connections, opts.expected);
  const windows: number[] = [];
  const idle: number[] = [];
  let unexpected = 0;
  /** One counted window: zero, instrumentation on, `body`, off, dump; the dump's total. */
  const window = async (body: () => Promise<void>, keepAs?: string): Promise<number> => {
    const before = new Set(readdirSync(dirname(c.outPrefix)));
    callgrindControl(c.server.pid, '-z');
    callgrindControl(c.server.pid, '-i', 'on');
    await body();
    callgrindControl(c.server.pid, '-i', 'off');
    callgrindControl(c.server.pid, '-d');
    const file = readdirSync(dirname(c.outPrefix)).find((f) => !before.has(f) && join(dirname(c.outPrefix), f).startsWith(c.outPrefix));
    if (!file) throw new Error(`no callgrind dump for ${c.server.name}`);
    const text = readFileSync(join(dirname(c.outPrefix), file), 'utf8');
    const total = /^totals:\s+(\d+)/m.exec(text) ?? /^summary:\s+(\d+)/m.exec(text);
    if (!total) throw new Error(`no totals in ${file}`);
    if (keepAs && opts.keepDumps) renameSync(join(dirname(c.outPrefix), file), join(opts.keepDumps, keepAs));
    else rmSync(join(dirname(c.outPrefix), file));
    return Number(total[1]);
  };
  const settling: number[] = [];
  const busyPerRequest: number[] = [];
  for (let i = 0; i < opts.settle + opts.repeat; i++) {
    const t0 = Date.now();
    const busy = await window(
      async () => {
        unexpected += (await send(c.server, request(), opts.requests, opts.connections, opts.expected)).unexpected;
      },
      `${basename(c.outPrefix)}${opts.name}.${i}`,
    );
    const ms = Date.now() - t0;
    // An idle stretch of the same length (timers, GC, V8's background threads): subtracted.
    const quiet = await window(() => new Promise((r) => setTimeout(r, ms)));
    if (i < opts.settle) {
      settling.push(Math.round((busy - quiet) / opts.requests));
      continue;
    }
    idle.push(quiet / opts.requests);
    busyPerRequest.push(busy / opts.requests);
  }
  // Each window less the median idle stretch: a major GC that happens to land in one idle stretch
  // (61.5 M instructions once, where idle stretches count ~1 k per request) would otherwise make
  // its window look that much cheaper. The figure is the median window: a window that caught a
  // tier-up or a rare collection counts no more than one that did not.
  const idleMedian = median(idle);
  for (const b of busyPerRequest) windows.push(b - idleMedian);
  const m = median(windows);
  return {
    settling,
    windows: windows.map(Math.round),
    median: Math.round(m),
    smallest: Math.round(Math.min(...windows)),
    idlePerRequest: idle.map(Math.round),
    perRequest: Math.round(m),
    spread: Math.round(((Math.max(...windows) - Math.min(...windows)) / m) * 10000) / 10000,
    requests: opts.requests,
    unexpected,
  };
}

/** CPU time (user + system, µs) of every `postgres` process on this machine. */
function postgresCpuMicros(): number {
  let total = 0;
  const ticks = 100;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (!stat.includes('(postgres)')) continue;
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += ((Number(f[11]) + Number(f[12])) / ticks) * 1e6;
    } catch {
      /* gone */
    }
  }
  return total;
}

function rpsRun(server: Server, request: Request, seconds: number, expected: number, pg: boolean) {
  return new Promise<{ rps: number; cpu: number; pgCpu: number }>((res, rej) => {
    let ok = 0;
    let all = 0;
    const cpu0 = server.cpuMicros();
    const pg0 = pg ? postgresCpuMicros() : 0;
    const instance = autocannon({ url: server.url, connections: 50, duration: seconds, requests: [request], timeout: 10 }, (err, r) => {
      if (err) return rej(err);
      res({
        rps: ok / r.duration,
        cpu: (server.cpuMicros() - cpu0) / Math.max(1, all),
        pgCpu: pg ? (postgresCpuMicros() - pg0) / Math.max(1, all) : 0,
      });
    });
    instance.on('response', (_c: unknown, status: number) => {
      all++;
      if (status === expected) ok++;
    });
  });
}

async function check(server: Server, scenario: Scenario, data: Dataset): Promise<void> {
  const req = scenario.request(data);
  const res = await fetch(`${server.url}${req.path}`, {
    method: req.method ?? 'GET',
    headers: req.headers ?? {},
    ...(req.body !== undefined ? { body: String(req.body) } : {}),
  });
  const body = await res.text();
  if (res.status !== scenario.status) throw new Error(`${scenario.name}: ${server.name} answered ${res.status}: ${body.slice(0, 200)}`);
}

interface ServerSpec {
  label: string;
  nodeArgs: string[];
  args: string[];
  env?: Record<string, string>;
  readyPath: string;
  /** The floor and the ceiling answer every scenario with the scenario's status; the ceiling always 200. */
  role: 'ceiling' | 'floor' | 'msgsvc';
  pg?: boolean;
}

export async function main(argv: string[]): Promise<void> {
  const started = Date.now();
  const { values: flags } = parseArgs({
    args: argv,
    options: {
      only: { type: 'string' },
      sizes: { type: 'string', default: '10000' },
      requests: { type: 'string', default: '1000' },
      warmup: { type: 'string', default: '5000' },
      connections: { type: 'string', default: '10' },
      repeat: { type: 'string', default: '5' },
      'rps-rounds': { type: 'string', default: '3' },
      'rps-seconds': { type: 'string', default: '2' },
      'no-rps': { type: 'boolean', default: false },
      'no-instructions': { type: 'boolean', default: false },
      'data-dir': { type: 'string' },
      app: { type: 'string' },
      labels: { type: 'string' },
      stores: { type: 'string', default: 'sqlite' },
      'pg-url': { type: 'string', default: process.env.MSGSVC_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
      'no-floor': { type: 'boolean', default: false },
      'no-ceiling': { type: 'boolean', default: false },
      'no-msgsvc': { type: 'boolean', default: false },
      'node-flags': { type: 'string', default: '' },
      settle: { type: 'string', default: '2' },
      'keep-dumps': { type: 'string' },
      docs: { type: 'boolean', default: false },
      // Instruction counts do not depend on pinning; unpinned, A/B runs beside other work finish sooner.
      'no-pin': { type: 'boolean', default: false },
      out: { type: 'string' },
    },
    allowPositionals: false,
  });
  const log = (line: string) => process.stderr.write(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)}s] ${line}\n`);
  const names = flags.only ? flags.only.split(',') : DEFAULT_SCENARIOS;
  const scenarios = names.map((n) => {
    const s = SCENARIOS.find((x) => x.name === n);
    if (!s) throw new Error(`unknown scenario ${n}; one of ${SCENARIOS.map((x) => x.name).join(', ')}`);
    return s;
  });
  const sizes = flags.sizes.split(',').map(Number);
  const stores = flags.stores.split(',') as ('sqlite' | 'postgres')[];
  const apps = flags.app ? flags.app.split(',').map((a) => resolve(a)) : [ROOT];
  const labels = flags.labels ? flags.labels.split(',') : apps.length === 1 ? ['msgsvc'] : apps.map((_, i) => `msgsvc-${i}`);
  const counting = !flags['no-instructions'];
  const plan = {
    requests: Number(flags.requests),
    warmup: Number(flags.warmup),
    connections: Number(flags.connections),
    repeat: Number(flags.repeat),
    rpsRounds: flags['no-rps'] ? 0 : Number(flags['rps-rounds']),
    rpsSeconds: Number(flags['rps-seconds']),
    settle: Number(flags.settle),
  };
  const m = machine();
  const cpu = m.taskset && m.nproc >= 2 && !flags['no-pin'] ? 0 : undefined;
  if (cpu !== undefined) pinSelf(1);
  const valgrindVersion = counting ? execFileSync('valgrind', ['--version'], { encoding: 'utf8' }).trim() : '';
  log(
    `machine: ${m.nproc} CPUs (${m.cpuModel}), Node ${m.node}, ${valgrindVersion}; scenarios ${names.join(', ')}; sizes ${sizes.join(', ')}`,
  );
  const dataDir = flags['data-dir'] ? resolve(flags['data-dir']) : mkdtempSync(join(tmpdir(), 'msgsvc-bench-'));
  mkdirSync(dataDir, { recursive: true });
  const cgDir = mkdtempSync(join(tmpdir(), 'msgsvc-callgrind-'));
  const result: InstructionsResult = {
    date: new Date().toISOString(),
    kind: 'instructions',
    machine: m,
    valgrind: valgrindVersion,
    commands: {
      valgrind: `${VALGRIND.join(' ')} --callgrind-out-file=DIR/cg.<server>.%p`,
      ceiling: 'node --no-memory-reducer --import tsx bench/ceiling.ts PORT',
      floor: 'node --no-memory-reducer --import tsx bench/floors/server.ts PORT DB ACCOUNT',
      msgsvc: `node --no-memory-reducer ${MSGSVC_NODE_FLAGS.join(' ')} bin/msgsvc.js serve --port PORT --no-demo (${Object.entries(
        MSGSVC_ENV,
      )
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')})`,
      window: 'callgrind_control -z PID; callgrind_control -i on PID; <requests>; callgrind_control -i off PID; callgrind_control -d PID',
      taskset: cpu !== undefined ? 'servers: taskset -c 0; load generator: CPU 1' : 'not pinned',
    },
    plan: { ...plan, sizes, stores, scenarios: names, apps: labels, heavyRequests: Math.max(100, Math.round(plan.requests / 10)) },
    loadAverage: { start: loadavg().map((x) => Math.round(x * 100) / 100) },
    scenarios: [],
    seconds: 0,
  };

  // --node-flags come last, so they override the flags of `npm start` (e.g. --max-semi-space-size).
  const extraFlags = flags['node-flags'].split(/\s+/).filter(Boolean);
  const nodeArgs = ['--no-memory-reducer', ...extraFlags];
  for (const store of stores) {
    for (const size of sizes) {
      const data = store === 'sqlite' ? await ensureDataset(dataDir, size) : await ensurePgDataset(dataDir, size, flags['pg-url']);
      if (!data.reused) log(`generated ${size.toLocaleString('en-US')} contacts on ${store} in ${data.generateSeconds} s`);
      // ensurePgDataset's `file` is the database's URL.
      const databaseUrl = data.file;
      const specs: ServerSpec[] = [];
      if (!flags['no-ceiling'])
        specs.push({
          label: 'ceiling',
          role: 'ceiling',
          nodeArgs: [...nodeArgs, '--import', 'tsx'],
          args: [join(ROOT, 'bench/ceiling.ts')],
          readyPath: '/',
        });
      if (store === 'sqlite' && !flags['no-floor'])
        specs.push({
          label: 'floor',
          role: 'floor',
          nodeArgs: [...nodeArgs, '--import', 'tsx'],
          args: [join(ROOT, 'bench/floors/server.ts'), '', data.file, String(data.accountId)],
          readyPath: '/',
        });
      if (!flags['no-msgsvc'])
        apps.forEach((app, i) =>
          specs.push({
            label: labels[i]!,
            role: 'msgsvc',
            nodeArgs: ['--no-memory-reducer', ...MSGSVC_NODE_FLAGS, ...extraFlags],
            args: [join(app, 'bin/msgsvc.js'), 'serve', '--no-demo', '--port'],
            env: { DATABASE_URL: databaseUrl, ...MSGSVC_ENV },
            readyPath: '/healthz',
            pg: store === 'postgres',
          }),
        );
      const start = async (spec: ServerSpec, counted: boolean): Promise<Counted> => {
        const port = await freePort();
        const args =
          spec.role === 'msgsvc'
            ? [...spec.args, String(port)]
            : spec.role === 'floor'
              ? [spec.args[0]!, String(port), ...spec.args.slice(2)]
              : [...spec.args, String(port)];
        const outPrefix = join(cgDir, `cg.${spec.label}-${store}-${size}.`);
        const server = await startServer({
          name: spec.label,
          nodeArgs: spec.nodeArgs,
          args,
          ...(spec.env ? { env: spec.env } : {}),
          ...(cpu !== undefined ? { cpu } : {}),
          port,
          readyPath: spec.readyPath,
          ...(counted
            ? { wrap: [...VALGRIND, `--callgrind-out-file=${outPrefix}%p`, '--log-file=/dev/null'], readyTimeoutMs: 600_000 }
            : {}),
        });
        return { server, outPrefix };
      };
      const entries = scenarios.map((s): InstructionsScenarioResult => ({
        scenario: s.name,
        title: s.title,
        kind: s.kind,
        contacts: size,
        store,
        sides: specs.filter((sp) => sp.role !== 'floor' || s.kind !== 'auth').map((sp) => ({ server: sp.label })),
      }));
      result.scenarios.push(...entries);
      const sideOf = (e: InstructionsScenarioResult, label: string) => e.sides.find((x) => x.server === label);
      if (counting) {
        // One server under valgrind at a time: the others would share its core.
        for (const spec of specs) {
          log(`${spec.label} (${store}, ${size.toLocaleString('en-US')}): starting under callgrind`);
          const c = await start(spec, true);
          try {
            // The process's own warm-up (JIT of Fastify and Node's HTTP path, the young generation
            // grown to its working size), before any scenario's: 3 × --warmup of the first scenario.
            const first = scenarios.find((s) => sideOf(entries[scenarios.indexOf(s)]!, spec.label));
            if (first)
              await send(c.server, first.request(data), 3 * plan.warmup, plan.connections, spec.role === 'ceiling' ? 200 : first.status);
            for (const [i, s] of scenarios.entries()) {
              const side = sideOf(entries[i]!, spec.label);
              if (!side) continue;
              const expected = spec.role === 'ceiling' ? 200 : s.status;
              if (spec.role !== 'ceiling') await check(c.server, s, data);
              const heavy = HEAVY.has(s.name);
              const n = heavy ? Math.max(100, Math.round(plan.requests / 10)) : plan.requests;
              const w = heavy ? Math.max(100, Math.round(plan.warmup / 10)) : plan.warmup;
              side.instructions = await countWindows(c, () => s.request(data), {
                warmup: w,
                requests: n,
                connections: plan.connections,
                repeat: plan.repeat,
                settle: plan.settle,
                expected,
                name: s.name,
                ...(flags['keep-dumps'] ? { keepDumps: resolve(flags['keep-dumps']) } : {}),
              });
              log(
                `${s.name.padEnd(16)} ${spec.label.padEnd(10)} ${side.instructions.perRequest.toLocaleString('en-US').padStart(10)} instr/req  windows ${side.instructions.windows.join(', ')} (spread ${(side.instructions.spread * 100).toFixed(2)} %)${side.instructions.unexpected ? `  UNEXPECTED ${side.instructions.unexpected}` : ''}`,
              );
            }
          } finally {
            await c.server.stop();
          }
        }
      }
      if (plan.rpsRounds > 0) {
        const servers = new Map<string, Server>();
        try {
          for (const spec of specs) servers.set(spec.label, (await start(spec, false)).server);
          for (const [i, s] of scenarios.entries()) {
            const runs = new Map<string, { rps: number; cpu: number; pgCpu: number }[]>();
            const sides = entries[i]!.sides;
            for (const side of sides) {
              const spec = specs.find((x) => x.label === side.server)!;
              await rpsRun(servers.get(side.server)!, s.request(data), 1, spec.role === 'ceiling' ? 200 : s.status, false);
            }
            for (let r = 0; r < plan.rpsRounds; r++) {
              for (const side of sides) {
                const spec = specs.find((x) => x.label === side.server)!;
                const run = await rpsRun(
                  servers.get(side.server)!,
                  s.request(data),
                  plan.rpsSeconds,
                  spec.role === 'ceiling' ? 200 : s.status,
                  spec.pg === true,
                );
                runs.set(side.server, [...(runs.get(side.server) ?? []), run]);
              }
            }
            for (const side of sides) {
              const xs = runs.get(side.server)!;
              const spec = specs.find((x) => x.label === side.server)!;
              side.rps = {
                rps: xs.map((x) => Math.round(x.rps)),
                medianRps: Math.round(median(xs.map((x) => x.rps))),
                cpuMicrosPerRequest: Math.round(median(xs.map((x) => x.cpu)) * 10) / 10,
                ...(spec.pg ? { pgCpuMicrosPerRequest: Math.round(median(xs.map((x) => x.pgCpu)) * 10) / 10 } : {}),
              };
            }
            log(
              `${s.name.padEnd(16)} req/s ${sides.map((x) => `${x.server} ${x.rps!.medianRps} (${x.rps!.cpuMicrosPerRequest} µs)`).join('  ')}`,
            );
          }
        } finally {
          for (const s of servers.values()) await s.stop();
        }
      }
    }
  }
  rmSync(cgDir, { recursive: true, force: true });
  if (!flags['data-dir']) rmSync(dataDir, { recursive: true, force: true });
  result.loadAverage.end = loadavg().map((x) => Math.round(x * 100) / 100);
  result.seconds = Math.round((Date.now() - started) / 1000);
  const stamp = result.date.replace(/:/g, '-').replace(/\..+$/, '');
  const file = flags.out ? resolve(flags.out) : join(ROOT, 'bench/results', `${stamp}-instructions.json`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  log(`results: ${file}`);
  const markdown = renderInstructions(result, file.startsWith(ROOT) ? file.slice(ROOT.length + 1) : file);
  process.stdout.write(`${markdown}\n`);
  if (flags.docs) {
    writeBlock(join(ROOT, 'docs/PERFORMANCE.md'), markdown);
    log('docs/PERFORMANCE.md updated (instructions)');
  }
}

const fmt = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '–' : Math.round(x).toLocaleString('en-US'));
const ratio = (a: number | undefined, b: number | undefined) => (a && b ? (a / b).toFixed(2) : '–');

/** The Markdown table of a result: instructions per request first, req/s beside. */
export function renderInstructions(r: InstructionsResult, file: string): string {
  const msgsvcLabels = [...new Set(r.scenarios.flatMap((s) => s.sides.map((x) => x.server)))].filter(
    (l) => l !== 'ceiling' && l !== 'floor',
  );
  const lines: string[] = [];
  lines.push(
    `Produced by \`npm run bench -- --instructions\` on ${r.date.slice(0, 16).replace('T', ' ')} UTC: ${r.machine.nproc} CPUs (${r.machine.cpuModel}), Node ${r.machine.node}, ${r.valgrind}. ` +
      `Instructions per request: the server process's instructions (all its threads) over ${String(r.plan.requests)} requests (${String(r.plan.heavyRequests)} for pages of 100 rows and 1,000-id writes) after a warm-up of ${String(r.plan.warmup)} (3 × as many before the first scenario) and ${String(r.plan.settle)} windows left out, ${String(r.plan.connections)} connections, median of ${String(r.plan.repeat)} windows, each less the median idle stretch of the same length (spread = (max − min) ÷ median). ` +
      `req/s and CPU µs/request: the same servers natively, ${String(r.plan.rpsRounds)} alternating rounds of ${String(r.plan.rpsSeconds)} s, 50 connections, median. Raw numbers: \`${file}\`.`,
  );
  lines.push('');
  for (const label of msgsvcLabels) {
    if (msgsvcLabels.length > 1) lines.push(`**${label}**`, '');
    lines.push(
      '| Scenario | Store | Contacts | msgsvc instr/req | floor instr/req | ceiling instr/req | **÷ floor (instr)** | **÷ ceiling (instr)** | spread msgsvc / floor / ceiling | msgsvc / floor / ceiling req/s | ÷ floor (req/s) | ÷ ceiling (req/s) | CPU µs/req msgsvc / floor / ceiling |',
      '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const s of r.scenarios) {
      const side = (l: string) => s.sides.find((x) => x.server === l);
      const me = side(label);
      const fl = side('floor');
      const ce = side('ceiling');
      if (!me) continue;
      const pct = (c: Count | undefined) => (c ? `${(c.spread * 100).toFixed(1)} %` : '–');
      lines.push(
        `| ${s.title} | ${s.store === 'sqlite' ? 'SQLite' : 'PostgreSQL'} | ${s.contacts >= 1e6 ? `${s.contacts / 1e6} M` : `${s.contacts / 1e3} k`} | ${fmt(me.instructions?.perRequest)} | ${fmt(fl?.instructions?.perRequest)} | ${fmt(ce?.instructions?.perRequest)} | **${ratio(fl?.instructions?.perRequest, me.instructions?.perRequest)}** | **${ratio(ce?.instructions?.perRequest, me.instructions?.perRequest)}** | ${pct(me.instructions)} / ${pct(fl?.instructions)} / ${pct(ce?.instructions)} | ${fmt(me.rps?.medianRps)} / ${fmt(fl?.rps?.medianRps)} / ${fmt(ce?.rps?.medianRps)} | ${ratio(me.rps?.medianRps, fl?.rps?.medianRps)} | ${ratio(me.rps?.medianRps, ce?.rps?.medianRps)} | ${me.rps?.cpuMicrosPerRequest ?? '–'}${me.rps?.pgCpuMicrosPerRequest !== undefined ? ` (+ PostgreSQL ${me.rps.pgCpuMicrosPerRequest})` : ''} / ${fl?.rps?.cpuMicrosPerRequest ?? '–'} / ${ce?.rps?.cpuMicrosPerRequest ?? '–'} |`,
      );
    }
    lines.push('');
  }
  lines.push(
    `"÷ floor (instr)" is floor instructions ÷ msgsvc instructions per request: the share of msgsvc's cost that the scenario's irreducible work is, the same way round as msgsvc req/s ÷ floor req/s. Whole run: ${r.seconds} s; load average at the start ${r.loadAverage.start.join(', ')}, at the end ${r.loadAverage.end?.join(', ') ?? '–'}.`,
  );
  return lines.join('\n');
}

const START = '<!-- instructions:start (written by npm run bench -- --instructions --docs; do not edit by hand) -->';
const END = '<!-- instructions:end -->';
function writeBlock(path: string, markdown: string): void {
  const text = existsSync(path) ? readFileSync(path, 'utf8') : '# Performance\n';
  const a = text.indexOf(START);
  const b = text.indexOf(END);
  const block = `${START}\n${markdown}\n${END}`;
  writeFileSync(path, a !== -1 && b > a ? `${text.slice(0, a)}${block}${text.slice(b + END.length)}` : `${text.trimEnd()}\n\n${block}\n`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2))
    .catch((err) => {
      process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    })
    .finally(() => stopAll());
}
