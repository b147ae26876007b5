/**
 * What a console sign-in costs (issue 29, docs/API.md §15.3), on SQLite:
 *
 * 1. **Argon2id alone**, in this process: `hashPassword` and `verifyPassword` of
 *    src/domain/users.ts (ARGON2_OPTIONS: Argon2id, m = 19,456 KiB, t = 2, p = 1), `--runs` times
 *    each (default 50), one at a time after 3 untimed calls: median, p90, min and max in ms.
 * 2. **`POST /console/api/session` end to end**, over a real socket: a fresh SQLite database,
 *    migrated, one account with a key; `msgsvc serve` (bin/msgsvc.js of `--app`, with `npm start`'s
 *    node flags, MSGSVC_DISPATCHER=0, in its own process) on 127.0.0.1; one person invited
 *    (`POST /v1/users/create`) who chose a password (`POST /console/api/invite`). Then `--signins`
 *    rounds (default 30), after 3 untimed ones, of three sign-ins in turn over one keep-alive
 *    connection: the right password (204 and a session), a wrong password of that person (422) and
 *    an unknown email (422, verified against the server's dummy hash). Each is timed from the
 *    request written to the answer's last byte read; the server's CPU time is read from /proc
 *    around each one. Between two sign-ins (untimed) the bench deletes the lockout's rows
 *    (`sign_in_failures`) through its own connection, so 5 failures from 127.0.0.1 never turn into
 *    a 429. Reported per kind: median, p90, and the server's CPU ms per sign-in; and the spread of
 *    the three medians: the timing-equality property (§15.3: an unknown email and a wrong password
 *    answer alike, in the same time) wants the two 422s close, and the right password close to them.
 *
 *   node --import tsx bench/auth.ts [--runs 50] [--signins 30] [--app DIR]
 *   npm run bench -- --only signin --no-docs          (the same, inside a bench run's result file)
 *
 * Takes 10–30 s. Results: bench/results/<date>-signin.json (not under MSGSVC_BENCH_REPORT_ONLY:
 * `npm run bench` records them in its own result file). The last line is `SIGNIN {json}`.
 */
import { Agent, request as httpRequest } from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { benchDatabase } from './lib/databases.ts';
import { freePort, machine, msgsvcStartFlags, startServer, stopAll } from './lib/procs.ts';
import { createAccount, issueToken } from '../src/domain/accounts.ts';
import { ARGON2_OPTIONS, hashPassword, verifyPassword } from '../src/domain/users.ts';
import { migrateToLatest, openStore } from '../src/store/db.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: flags } = parseArgs({
  options: {
    runs: { type: 'string', default: '50' },
    signins: { type: 'string', default: '30' },
    app: { type: 'string' },
  },
});
const RUNS = Number(flags.runs);
const SIGNINS = Number(flags.signins);
const WARMUP = 3;
const APP = flags.app ? resolve(flags.app) : ROOT;
const PASSWORD = 'a long enough passphrase for the bench';
const EMAIL = 'signin-bench@example.com';

export interface Spread {
  /** Milliseconds. */
  p50: number;
  p90: number;
  min: number;
  max: number;
  n: number;
}
export type SignInKind = 'right-password' | 'wrong-password' | 'unknown-email';
export interface SignInSeries extends Spread {
  kind: SignInKind;
  status: number;
  /** The server's CPU time (user + system, /proc, 10 ms ticks) over these sign-ins ÷ their number, ms. */
  serverCpuMs: number;
}
export interface SigninBenchResult {
  date: string;
  store: 'sqlite';
  machine: ReturnType<typeof machine>;
  /** ARGON2_OPTIONS of src/domain/users.ts, and the parameters as the stored hash spells them. */
  argon2: { algorithm: 'argon2id'; memoryKiB: number; timeCost: number; parallelism: number; phc: string };
  hashMs: Spread;
  verifyMs: Spread;
  signIns: SignInSeries[];
  /** (max − min) ÷ min of the three sign-in medians; and of the two 422s' medians alone. */
  medianSpread: number;
  failureMedianSpread: number;
  loadAverage: { start: number[]; end: number[] };
  seconds: number;
}

const round = (x: number, digits = 2) => +x.toFixed(digits);
function spread(ms: number[]): Spread {
  const s = [...ms].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
  const mid = Math.floor(s.length / 2);
  const p50 = s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { p50: round(p50), p90: round(at(0.9)), min: round(s[0]!), max: round(s.at(-1)!), n: s.length };
}

/** Times `fn` `RUNS` times, one at a time, after WARMUP untimed calls. */
async function timed(fn: () => Promise<unknown>): Promise<Spread> {
  for (let i = 0; i < WARMUP; i++) await fn();
  const ms: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await fn();
    ms.push(performance.now() - t0);
  }
  return spread(ms);
}

// One keep-alive connection for every request: a sign-in's time is the server's, not a handshake's.
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
function send(
  url: string,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<{ status: number; text: string; ms: number; setCookie: string[] }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((res, rej) => {
    const t0 = performance.now();
    const req = httpRequest(
      `${url}${path}`,
      {
        method,
        agent,
        headers: {
          accept: 'application/json',
          ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
        },
      },
      (r) => {
        let text = '';
        r.setEncoding('utf8');
        r.on('data', (d: string) => (text += d));
        r.on('end', () => res({ status: r.statusCode ?? 0, text, ms: performance.now() - t0, setCookie: r.headers['set-cookie'] ?? [] }));
        r.on('error', rej);
      },
    );
    req.on('error', rej);
    req.end(payload);
  });
}

const started = Date.now();
const loadStart = loadavg().map((x) => round(x));

// 1. Argon2id alone.
const phc = await hashPassword(PASSWORD);
const hashMs = await timed(() => hashPassword(PASSWORD));
const verifyMs = await timed(async () => {
  if (!(await verifyPassword(phc, PASSWORD))) throw new Error('verifyPassword refused the right password');
});
const params = /^\$argon2id\$v=\d+\$(m=\d+,t=\d+,p=\d+)\$/.exec(phc)?.[1] ?? phc.split('$').slice(0, 4).join('$');
console.log(
  `Argon2id (${params}): hashPassword p50 ${hashMs.p50} ms (p90 ${hashMs.p90}, ${hashMs.min}–${hashMs.max}); verifyPassword p50 ${verifyMs.p50} ms (p90 ${verifyMs.p90}, ${verifyMs.min}–${verifyMs.max}); ${RUNS} runs each`,
);

// 2. POST /console/api/session over a socket.
const db = await benchDatabase('sqlite', 'signin', '');
const store = openStore(db.config);
const signIns: SignInSeries[] = [];
try {
  await migrateToLatest(store);
  const accountId = await createAccount(store, 'Sign-in bench');
  const { token } = await issueToken(store, accountId, 'bench');
  const port = await freePort();
  const server = await startServer({
    name: 'signin',
    nodeArgs: msgsvcStartFlags(ROOT),
    args: [join(APP, 'bin/msgsvc.js'), 'serve'],
    env: { DATABASE_URL: db.url, PORT: String(port), HOST: '127.0.0.1', MSGSVC_DISPATCHER: '0', MSGSVC_DEMO: '0', LOG_LEVEL: 'warn' },
    port,
    readyPath: '/healthz',
    readyTimeoutMs: 120_000,
  });
  try {
    const invited = await send(server.url, 'POST', `/v1/users/create?access_token=${encodeURIComponent(token)}`, {
      Email: EMAIL,
      Name: 'Bench',
      Role: 'admin',
    });
    if (invited.status !== 201) throw new Error(`users/create answered ${invited.status}: ${invited.text}`);
    const code = (JSON.parse(invited.text) as { InviteUrl: string }).InviteUrl.split('#/invite/')[1]!;
    const taken = await send(server.url, 'POST', '/console/api/invite', { Code: code, Password: PASSWORD });
    if (taken.status !== 204) throw new Error(`console/api/invite answered ${taken.status}: ${taken.text}`);

    const kinds: { kind: SignInKind; body: { Email: string; Password: string }; status: number }[] = [
      { kind: 'right-password', body: { Email: EMAIL, Password: PASSWORD }, status: 204 },
      { kind: 'wrong-password', body: { Email: EMAIL, Password: `${PASSWORD}!` }, status: 422 },
      { kind: 'unknown-email', body: { Email: 'nobody-here@example.com', Password: PASSWORD }, status: 422 },
    ];
    const ms = new Map<SignInKind, number[]>(kinds.map((k) => [k.kind, []]));
    const cpu = new Map<SignInKind, number>(kinds.map((k) => [k.kind, 0]));
    for (let round = 0; round < WARMUP + SIGNINS; round++) {
      for (const k of kinds) {
        // The lockout counts failures by IP and by email: cleared before each sign-in, untimed.
        await sql`delete from sign_in_failures`.execute(store.db);
        const cpu0 = server.cpuMicros();
        const r = await send(server.url, 'POST', '/console/api/session', k.body);
        const cpu1 = server.cpuMicros();
        if (r.status !== k.status) throw new Error(`${k.kind}: POST /console/api/session answered ${r.status}: ${r.text}`);
        if (k.status === 204 && !r.setCookie.some((c) => c.startsWith('msgsvc_session='))) throw new Error(`${k.kind}: no session cookie`);
        if (round < WARMUP) continue;
        ms.get(k.kind)!.push(r.ms);
        cpu.set(k.kind, cpu.get(k.kind)! + (cpu1 - cpu0));
      }
    }
    for (const k of kinds) {
      const s: SignInSeries = {
        kind: k.kind,
        status: k.status,
        ...spread(ms.get(k.kind)!),
        serverCpuMs: round(cpu.get(k.kind)! / 1000 / SIGNINS),
      };
      signIns.push(s);
      console.log(
        `POST /console/api/session, ${k.kind.padEnd(14)} (${k.status}): p50 ${s.p50} ms, p90 ${s.p90} ms (${s.min}–${s.max}), server CPU ${s.serverCpuMs} ms per sign-in; ${SIGNINS} sign-ins`,
      );
    }
  } finally {
    await stopAll();
  }
} finally {
  agent.destroy();
  await store.close();
  await db.drop();
}

const rel = (xs: number[]) => round((Math.max(...xs) - Math.min(...xs)) / Math.min(...xs), 4);
const medians = signIns.map((s) => s.p50);
const result: SigninBenchResult = {
  date: new Date().toISOString(),
  store: 'sqlite',
  machine: machine(),
  argon2: {
    algorithm: 'argon2id',
    memoryKiB: ARGON2_OPTIONS.memoryCost,
    timeCost: ARGON2_OPTIONS.timeCost,
    parallelism: ARGON2_OPTIONS.parallelism,
    phc: params,
  },
  hashMs,
  verifyMs,
  signIns,
  medianSpread: rel(medians),
  failureMedianSpread: rel(signIns.filter((s) => s.status === 422).map((s) => s.p50)),
  loadAverage: { start: loadStart, end: loadavg().map((x) => round(x)) },
  seconds: round((Date.now() - started) / 1000, 1),
};
console.log(
  `sign-in medians ${medians.join(' / ')} ms (right / wrong password / unknown email): spread ${(result.medianSpread * 100).toFixed(1)} %, the two 422s ${(result.failureMedianSpread * 100).toFixed(1)} %`,
);
if (!process.env.MSGSVC_BENCH_REPORT_ONLY) {
  const file = join(ROOT, 'bench/results', `${result.date.replace(/:/g, '-').replace(/\..+$/, '')}-signin.json`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`written to ${file.slice(ROOT.length + 1)}`);
}
console.log(`SIGNIN ${JSON.stringify(result)}`);
