/**
 * Profiles msgsvc under one scenario of the benchmark: starts it with `node --cpu-prof` on a
 * generated database (pinned like the bench), loads it with autocannon, stops it, and prints the
 * functions with the most self time, and the share of time by package / source file.
 *
 *   node --import tsx bench/profile.ts --scenario balance-json [--contacts 10000] [--seconds 5]
 *     [--warmup 3] [--interval 100] [--data-dir DIR] [--app DIR] [--no-stages] [--top 40]
 *
 * By default it prints the request's stages (issue 22) over the measured window only (after the
 * warm-up: the samples are cut by their timestamps): Fastify routing, the first onRequest hook, the
 * auth lookup, the rate-limit counter, negotiation, the handler's query, serialisation, headers,
 * the log line, Fastify's hooks, the socket write, and Node's own HTTP work, each sample given to
 * the innermost frame of its stack that belongs to a stage. `--no-stages`: the tables by function
 * and package of the whole run instead. `--interval` is the sampling interval in µs; `--app` runs
 * another build's bin/msgsvc.js (bench/lib/build.ts).
 *
 * The .cpuprofile file stays in the data directory (open it in Chrome DevTools).
 */
import autocannon from 'autocannon';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort, machine, pinSelf, startServer, stopAll } from './lib/procs.ts';
import { ensureDataset } from './lib/data.ts';
import { SCENARIOS } from './scenarios.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: flags } = parseArgs({
  options: {
    scenario: { type: 'string', default: 'balance-json' },
    contacts: { type: 'string', default: '10000' },
    seconds: { type: 'string', default: '5' },
    'data-dir': { type: 'string', default: join(ROOT, 'bench/.data') },
    top: { type: 'string', default: '40' },
    env: { type: 'string', multiple: true },
    ceiling: { type: 'boolean', default: false },
    app: { type: 'string' },
    // --no-stages: the function tables of the whole run instead of the stage split of the measured window.
    stages: { type: 'boolean', default: true },
    warmup: { type: 'string', default: '3' },
    interval: { type: 'string', default: '100' },
  },
  allowNegative: true,
});

let perRequest = 1;

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

function where(url: string): string {
  if (url === '') return '(native)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm !== -1) {
    const rest = url.slice(nm + 13).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return url;
  const src = url.indexOf('/src/');
  if (src !== -1) return url.slice(src + 1);
  // The build in dist/ (what bin/msgsvc.js runs when it is up to date): named by its source file.
  const dist = url.indexOf('/dist/');
  return dist !== -1 ? `src/${url.slice(dist + 6).replace(/\.js$/, '.ts')}` : url;
}

function analyse(file: string, top: number): void {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  p.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const idle = [...self.entries()].filter(([id]) =>
    ['(idle)', '(program)', '(garbage collector)'].includes(byId.get(id)!.callFrame.functionName),
  );
  const fn = new Map<string, number>();
  const pkg = new Map<string, number>();
  for (const [id, t] of self) {
    const n = byId.get(id)!;
    const key = `${n.callFrame.functionName || '(anonymous)'}  ${where(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
    fn.set(key, (fn.get(key) ?? 0) + t);
    const k = ['(idle)', '(program)', '(garbage collector)'].includes(n.callFrame.functionName)
      ? n.callFrame.functionName
      : where(n.callFrame.url);
    pkg.set(k, (pkg.get(k) ?? 0) + t);
  }
  const pct = (t: number) => `${((t / total) * 100).toFixed(1).padStart(5)} % ${(t / perRequest).toFixed(2).padStart(7)} µs/req`;
  console.log(
    `\nself time by package/file (${(total / 1e6).toFixed(1)} s sampled; idle ${pct(idle.filter(([id]) => byId.get(id)!.callFrame.functionName === '(idle)').reduce((a, [, t]) => a + t, 0))})`,
  );
  for (const [k, t] of [...pkg].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`${pct(t)}  ${k}`);
  // Inclusive time of our own functions and of the hooks/handlers around them.
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inclusive = new Map<string, number>();
  for (const [id, t] of self) {
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const n = byId.get(cur)!;
      const w = where(n.callFrame.url);
      if (
        !w.startsWith('src/') &&
        !w.startsWith('fastify') &&
        !w.startsWith('pino') &&
        !w.startsWith('rate-limiter') &&
        !w.startsWith('libphonenumber')
      )
        continue;
      const key = `${n.callFrame.functionName || '(anonymous)'}  ${w}:${n.callFrame.lineNumber + 1}`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + t);
    }
  }
  console.log(`\ntop ${top} functions by inclusive time (src/, fastify, pino, rate-limiter, libphonenumber)`);
  for (const [k, t] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(t)}  ${k}`);
  console.log(`\ntop ${top} functions by self time`);
  for (const [k, t] of [...fn].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(t)}  ${k}`);
}

async function main(): Promise<void> {
  const scenario = SCENARIOS.find((s) => s.name === flags.scenario);
  if (!scenario) throw new Error(`unknown scenario ${flags.scenario}; one of ${SCENARIOS.map((s) => s.name).join(', ')}`);
  const m = machine();
  const cpu = m.taskset && m.nproc >= 2 ? 0 : undefined;
  if (cpu !== undefined) pinSelf(1);
  const dir = resolve(flags['data-dir']);
  mkdirSync(dir, { recursive: true });
  const size = Number(flags.contacts);
  const data = await ensureDataset(dir, size);
  const db = data.file;
  const profDir = join(dir, `profile-${flags.scenario}-${Date.now()}`);
  const port = await freePort();
  const extraEnv = Object.fromEntries((flags.env ?? []).map((kv) => kv.split('=') as [string, string]));
  const server = flags.ceiling
    ? await startServer({
        name: 'ceiling',
        nodeArgs: ['--no-memory-reducer', '--cpu-prof', `--cpu-prof-dir=${profDir}`, '--import', 'tsx'],
        args: [join(ROOT, 'bench/ceiling.ts'), String(port)],
        ...(cpu !== undefined ? { cpu } : {}),
        port,
        readyPath: '/',
      })
    : await startServer({
        name: 'msgsvc',
        nodeArgs: [
          '--no-memory-reducer',
          '--max-semi-space-size=8',
          '--cpu-prof',
          `--cpu-prof-interval=${flags.interval}`,
          `--cpu-prof-dir=${profDir}`,
        ],
        args: [join(flags.app ? resolve(flags.app) : ROOT, 'bin/msgsvc.js'), 'serve', '--port', String(port), '--no-demo'],
        env: { DATABASE_URL: db, MSGSVC_RATE_LIMIT: '1000000000', LOG_LEVEL: 'info', ...extraEnv },
        ...(cpu !== undefined ? { cpu } : {}),
        port,
        readyPath: '/healthz',
      });
  const run = (seconds: number) =>
    new Promise<number>((res, rej) =>
      autocannon({ url: server.url, connections: 50, duration: seconds, requests: [scenario.request(data)] }, (err, r) =>
        err ? rej(err) : res(r.requests.total),
      ),
    );
  let requests = await run(Number(flags.warmup));
  // The measured window, on the clock the profile's timestamps use (CLOCK_MONOTONIC, µs).
  const windowStart = Number(process.hrtime.bigint() / 1000n);
  const measured = await run(Number(flags.seconds));
  const windowEnd = Number(process.hrtime.bigint() / 1000n);
  requests += measured;
  console.log(`${scenario.name}: ${Math.round(measured / Number(flags.seconds))} req/s under the profiler (${requests} requests in all)`);
  await server.stop();
  perRequest = requests;
  const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error('no profile written');
  console.log(`profile: ${join(profDir, file)}`);
  if (flags.stages) stages(join(profDir, file), windowStart, windowEnd, measured);
  else analyse(join(profDir, file), Number(flags.top));
}

/**
 * The stages of a request (issue 22), each sample given to the innermost frame of its stack that
 * belongs to a stage; a sample with none is Node's own HTTP and event-loop work.
 */
const STAGES: [string, (fn: string, url: string) => boolean][] = [
  ['socket write (writev)', (fn, url) => url === '' && fn === 'writev'],
  ['log line (maskUrl, pino, batched write)', (_fn, url) => url.includes('/http/log.') || url.includes('node_modules/pino')],
  ['metrics (observe)', (fn, url) => url.includes('/http/metrics.') && fn !== 'requestIdOf'],
  ['auth (token hash, cache lookup)', (_fn, url) => url.includes('/plugins/auth.') || url.includes('/domain/tokens.')],
  ['rate limit (counter, 3 headers)', (_fn, url) => url.includes('/plugins/rate-limit.') || url.includes('/rate-limiter-backend.')],
  ['negotiation (Vary, format, Content-Type)', (_fn, url) => url.includes('/plugins/negotiate.')],
  ['pagination headers (X-Pagination-*, Link)', (_fn, url) => url.includes('/serializers/pagination.')],
  ['fields hook (preSerialization)', (_fn, url) => url.includes('/serializers/fields.')],
  [
    'query string, request id (first onRequest)',
    (fn, url) => url.includes('/http/query.') || fn === 'requestIdOf' || url.endsWith('/app.js') || url.endsWith('/app.ts'),
  ],
  [
    'handler: the query (store, SQLite)',
    (_fn, url) => url.includes('/store/') || url.includes('/domain/') || url.includes('better-sqlite3'),
  ],
  [
    'handler: route and record',
    (_fn, url) => url.includes('/http/routes/') || url.includes('/http/operation.') || url.includes('/records/'),
  ],
  [
    'serialisation (JSON/XML)',
    (fn, url) =>
      url.includes('/serializers/xml.') || (url.includes('fastify/lib/reply') && fn === 'serialize') || url.includes('fast-json-stringify'),
  ],
  [
    'headers (setHeader, writeHead)',
    (fn, url) =>
      url.includes('/http/wire.') ||
      ((url === 'node:_http_outgoing' || url === 'node:_http_server') && /header|writeHead|validate/i.test(fn)),
  ],
  [
    'Fastify routing (find-my-way, route)',
    (_fn, url) => url.includes('find-my-way') || url.includes('fastify/lib/route') || url.includes('fastify/fastify.js'),
  ],
  ['Fastify hooks', (_fn, url) => url.includes('fastify/lib/hooks')],
  ['Fastify request/reply (other)', (_fn, url) => url.includes('node_modules/fastify/')],
  ['garbage collection', (fn) => fn === '(garbage collector)'],
  ['V8 (program)', (fn) => fn === '(program)'],
];

function stages(file: string, from: number, to: number, requests: number): void {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile & { startTime: number };
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stageOf = new Map<number, string>();
  const classify = (id: number): string => {
    const known = stageOf.get(id);
    if (known !== undefined) return known;
    let stage = 'Node HTTP, event loop (other)';
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const { functionName, url } = byId.get(cur)!.callFrame;
      const hit = STAGES.find(([, test]) => test(functionName, url));
      if (hit) {
        stage = hit[0];
        break;
      }
    }
    stageOf.set(id, stage);
    return stage;
  };
  const time = new Map<string, number>();
  let t = p.startTime;
  let idle = 0;
  let busy = 0;
  p.samples.forEach((id, i) => {
    const dt = p.timeDeltas[i] ?? 0;
    t += dt;
    if (t < from || t > to) return;
    if (byId.get(id)!.callFrame.functionName === '(idle)') {
      idle += dt;
      return;
    }
    busy += dt;
    const stage = classify(id);
    time.set(stage, (time.get(stage) ?? 0) + dt);
  });
  console.log(
    `\nstages of the measured window: ${requests} requests, busy ${(busy / requests).toFixed(2)} µs/req, idle ${(idle / requests).toFixed(2)} µs/req (profiler on)`,
  );
  console.log('| Stage | µs/request (profiler) | share of busy time |');
  console.log('|---|---:|---:|');
  for (const [stage, us] of [...time].sort((a, b) => b[1] - a[1])) {
    console.log(`| ${stage} | ${(us / requests).toFixed(2)} | ${((us / busy) * 100).toFixed(1)} % |`);
  }
  console.log(
    `STAGES ${JSON.stringify({ requests, busyMicrosPerRequest: busy / requests, stages: Object.fromEntries([...time].map(([k, v]) => [k, v / requests])) })}`,
  );
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => stopAll());
