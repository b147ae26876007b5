/**
 * `msgsvc serve --workers N`: req/s and CPU per request of 1 and 2 workers (and more with
 * --workers-list), on one generated database, the load generator (autocannon, in this process)
 * NOT pinned: on a small machine it shares the cores with the server, which is the point to keep
 * in mind when reading the numbers (see the notes printed at the end).
 *
 *   node --import tsx bench/workers.ts [--contacts 100000] [--rounds 3] [--duration 3]
 *     [--connections 50] [--only balance-json,contacts-find,entry-update,sms-send]
 *     [--workers-list 1,2] [--data-dir DIR] [--source]
 *
 * The servers run a build of src/ in a temporary directory (bench/lib/build.ts; dist/ is not
 * touched), or the sources through tsx with --source. Every variant is started once, on its own
 * port and on the same database file, and the rounds alternate between them (1, 2, 1, 2, …), so
 * that load from elsewhere falls on all alike. Rate limit 10⁹ per second (counted: with several
 * workers by the primary over IPC), dispatcher off, LOG_LEVEL=info to /dev/null, as bench/run.ts.
 *
 * Reported per scenario and variant: the median req/s, and CPU per request (µs) of the whole
 * process tree (primary + workers) and of the primary alone (with several workers: what the
 * IPC rate-limit counter and connection hand-off cost it).
 */
import autocannon, { type Request } from 'autocannon';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { buildCopy } from './lib/build.ts';
import { ensureDataset } from './lib/data.ts';
import { freePort, runToCompletion, startServer, stopAll, type Server } from './lib/procs.ts';
import { SCENARIOS, type Scenario } from './scenarios.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: flags } = parseArgs({
  options: {
    contacts: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '1' },
    connections: { type: 'string', default: '50' },
    only: { type: 'string', default: 'balance-json,contacts-find,entry-update,sms-send' },
    'workers-list': { type: 'string', default: '1,2' },
    'data-dir': { type: 'string' },
    source: { type: 'boolean', default: false },
  },
});
const plan = {
  contacts: Number(flags.contacts),
  rounds: Number(flags.rounds),
  duration: Number(flags.duration),
  warmup: Number(flags.warmup),
  connections: Number(flags.connections),
  scenarios: flags.only.split(',').map((name) => {
    const s = SCENARIOS.find((x) => x.name === name);
    if (!s) throw new Error(`unknown scenario ${name}`);
    return s;
  }),
  workers: flags['workers-list'].split(',').map(Number),
};

const CLOCK_TICKS = 100;
/** CPU (user + system) of `pid` so far, µs. */
function cpuOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) / CLOCK_TICKS) * 1e6;
  } catch {
    return 0;
  }
}
/** Live children of `pid` (a primary's workers). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      // The workers (bin/msgsvc.js), not an esbuild service tsx may have started (--source).
      if (
        Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid &&
        readFileSync(`/proc/${e}/cmdline`, 'utf8').includes('msgsvc.js')
      )
        out.push(Number(e));
    } catch {
      // gone
    }
  }
  return out;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

interface Round {
  rps: number;
  cpuTreeUs: number;
  cpuPrimaryUs: number;
  errors: number;
}

function load(server: Server, scenario: Scenario, request: Request, seconds: number): Promise<Round> {
  return new Promise((resolvePromise, reject) => {
    let ok = 0;
    let other = 0;
    const workers = childrenOf(server.pid);
    const before = [cpuOf(server.pid), ...workers.map(cpuOf)];
    const instance = autocannon(
      { url: server.url, connections: plan.connections, duration: seconds, requests: [request], timeout: 10 },
      (err, result) => {
        if (err) return reject(err);
        const after = [cpuOf(server.pid), ...workers.map(cpuOf)];
        const n = Math.max(1, ok + other);
        const tree = after.reduce((s, v, i) => s + v - before[i]!, 0);
        resolvePromise({
          rps: ok / result.duration,
          cpuTreeUs: tree / n,
          cpuPrimaryUs: (after[0]! - before[0]!) / n,
          errors: other + result.errors + result.timeouts,
        });
      },
    );
    instance.on('response', (_c: unknown, status: number) => {
      if (status === scenario.status) ok++;
      else other++;
    });
  });
}

/**
 * The time SQLite's write lock is held by one small write transaction, measured alone on the
 * bench's database (better-sqlite3, the pragmas of src/store/db.ts): the floor of what one writer
 * serialises, so 1 / it bounds writes per second on one database file however many workers write.
 */
function writeTransactionCost(file: string, accountId: number, entryId: number, n = 20_000): { wallUs: number; cpuUs: number } {
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 5000');
    const begin = db.prepare('BEGIN IMMEDIATE');
    const update = db.prepare('UPDATE custom_field_entries SET entry = ?, updated_at = ? WHERE account_id = ? AND id = ?');
    const commit = db.prepare('COMMIT');
    const run = (i: number) => {
      begin.run();
      update.run(`bench ${i}`, Math.floor(Date.now() / 1000), accountId, entryId);
      commit.run();
    };
    for (let i = 0; i < 2000; i++) run(i);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < n; i++) run(i);
    const wall = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    return { wallUs: Math.round(((wall * 1000) / n) * 10) / 10, cpuUs: Math.round(((cpu.user + cpu.system) / n) * 10) / 10 };
  } finally {
    db.close();
  }
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'msgsvc-bench-workers-'));
  const dataDir = flags['data-dir'] ?? join(work, 'data');
  mkdirSync(dataDir, { recursive: true });
  try {
    process.stderr.write(
      `cores: ${availableParallelism()}; ${plan.contacts} contacts; workers ${plan.workers.join(' vs ')}; load generator not pinned\n`,
    );
    const appRoot = flags.source ? ROOT : buildCopy(work);
    const data = await ensureDataset(dataDir, plan.contacts);
    await runToCompletion(
      process.execPath,
      [
        join(appRoot, 'bin/msgsvc.js'),
        '--database-url',
        data.file,
        'credits',
        'set',
        '--account',
        String(data.accountId),
        '--amount',
        '1000000000',
      ],
      { MSGSVC_SQLITE_CHECKPOINT_MS: '0' },
    );
    const servers = new Map<number, Server>();
    for (const n of plan.workers) {
      const port = await freePort();
      servers.set(
        n,
        await startServer({
          name: `${n} worker(s)`,
          nodeArgs: ['--max-semi-space-size=8', '--no-memory-reducer'],
          args: [join(appRoot, 'bin/msgsvc.js'), 'serve', '--workers', String(n)],
          env: {
            DATABASE_URL: data.file,
            PORT: String(port),
            MSGSVC_RATE_LIMIT: '1000000000',
            MSGSVC_DISPATCHER: '0',
            MSGSVC_DEMO: '0',
            LOG_LEVEL: 'info',
            ...(flags.source ? { MSGSVC_FROM_SOURCE: '1' } : {}),
          },
          port,
          readyPath: '/healthz',
        }),
      );
    }
    // Every worker up (the first /healthz answer may come from the first worker only).
    await new Promise((r) => setTimeout(r, 2000));
    const results: Record<
      string,
      Record<string, { rps: number; cpuTreeUs: number; cpuPrimaryUs: number; errors: number; rounds: number[] }>
    > = {};
    for (const scenario of plan.scenarios) {
      const request = scenario.request(data);
      results[scenario.name] = {};
      const rounds = new Map<number, Round[]>(plan.workers.map((n) => [n, []]));
      for (const [, server] of servers) await load(server, scenario, request, plan.warmup);
      for (let r = 0; r < plan.rounds; r++) {
        for (const [n, server] of servers) rounds.get(n)!.push(await load(server, scenario, request, plan.duration));
      }
      for (const [n, rs] of rounds) {
        const entry = {
          rps: Math.round(median(rs.map((x) => x.rps))),
          cpuTreeUs: Math.round(median(rs.map((x) => x.cpuTreeUs))),
          cpuPrimaryUs: Math.round(median(rs.map((x) => x.cpuPrimaryUs)) * 10) / 10,
          errors: rs.reduce((s, x) => s + x.errors, 0),
          rounds: rs.map((x) => Math.round(x.rps)),
        };
        results[scenario.name]![`${n}`] = entry;
        process.stderr.write(
          `${scenario.name.padEnd(14)} workers=${n}: ${String(entry.rps).padStart(6)} req/s, CPU ${entry.cpuTreeUs} µs/req (primary ${entry.cpuPrimaryUs}), rounds ${entry.rounds.join(' ')}${entry.errors ? `, ${entry.errors} unexpected` : ''}\n`,
        );
      }
    }
    for (const server of servers.values()) await server.stop();
    const writeTx = writeTransactionCost(data.file, data.accountId, data.entry.id);
    process.stderr.write(
      `one write transaction alone (BEGIN IMMEDIATE, UPDATE custom_field_entries, COMMIT; WAL, synchronous=NORMAL): ${writeTx.wallUs} µs wall, ${writeTx.cpuUs} µs CPU => at most ~${Math.round(1e6 / writeTx.wallUs).toLocaleString('en-US')} such transactions/s on one file, whatever the cores\n`,
    );
    process.stdout.write(
      `${JSON.stringify({ cores: availableParallelism(), contacts: plan.contacts, plan: { ...plan, scenarios: plan.scenarios.map((s) => s.name) }, results, writeTx }, null, 2)}\n`,
    );
  } finally {
    await stopAll();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch(async (err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  await stopAll();
  process.exit(1);
});
