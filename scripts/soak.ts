/**
 * `npm run soak`: a real `msgsvc serve` process under mixed traffic for a long time (default 10
 * minutes), to show that memory stays flat and nothing fails.
 *
 * - The server runs on a fresh SQLite file in a temp dir, on 127.0.0.1 only, at LOG_LEVEL=info
 *   (its log is read and dropped), with a rate limit high enough not to matter.
 * - `--concurrency` clients (default 8) send a weighted mix without pause: every read in JSON and
 *   XML, HEAD, pagination, every write (group, custom field, entry, keyword reservation, so the
 *   database grows), and every client error (401, 404 of a path and of another account's id, 405,
 *   406, 400 bad id and bad JSON, 415, 422, 413). Most requests reuse keep-alive connections; some
 *   open a new connection each.
 * - The server's RSS (/proc/PID/status VmRSS) is sampled every 2 s. The warm-up is the first
 *   `--warmup-minutes` (default: a fifth of the run, at least 20 s; 2 minutes of the 10). "RSS after
 *   warm-up" is the median of the samples in the 20 s (at most half the warm-up) before the warm-up
 *   ends; "RSS at the end" the median of the samples in the last 20 s. Passes when the end is within 10 % of after-warm-up, there was no 5xx and no
 *   transport error. Prints a summary (and writes it as JSON with --out FILE); exit code 1 on failure.
 *
 * Options: --minutes N (default 10), --warmup-minutes N, --concurrency N, --out FILE.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createDemoAccount, type DemoAccount } from '../src/domain/demo.ts';
import { recordMappers } from '../src/records/index.ts';
import { createTimeFormat } from '../src/lib/time.ts';
import { migrateToLatest, openStore } from '../src/store/db.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: flags } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    'warmup-minutes': { type: 'string' },
    concurrency: { type: 'string', default: '8' },
    out: { type: 'string' },
  },
  allowPositionals: false,
});
const minutes = Number(flags.minutes);
const durationMs = Math.round(minutes * 60_000);
const warmupMs = Math.round(
  flags['warmup-minutes'] !== undefined ? Number(flags['warmup-minutes']) * 60_000 : Math.max(20_000, durationMs / 5),
);
const concurrency = Number(flags.concurrency);
if (!(durationMs >= 30_000) || !(warmupMs >= 20_000) || warmupMs >= durationMs - 20_000 || !(concurrency >= 1)) {
  console.error('soak: --minutes must be at least 0.5, the warm-up at least 20 s and 20 s shorter than the run, --concurrency at least 1');
  process.exit(2);
}
/** The RSS figures are medians over this window (half the warm-up, at most 20 s). */
const WINDOW_MS = Math.min(20_000, warmupMs / 2);
const SAMPLE_MS = 2000;

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.once('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => res(port));
    });
  });
}

function rssKiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

// ------------------------------------------------------------------ traffic

interface Req {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  fresh?: boolean;
}

function trafficMix(a: DemoAccount, b: DemoAccount): () => Req {
  const tok = encodeURIComponent(a.token);
  const json = { 'content-type': 'application/json' };
  const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)]!;
  const active = a.numbers.filter((n) => n.Status_Id === 0).map((n) => n.Number);
  let serial = 0;
  const mix: [number, () => Req][] = [
    // reads
    [8, () => ({ method: 'GET', path: `/v1/numbers/index?access_token=${tok}` })],
    [
      4,
      () => ({
        method: 'GET',
        path: `/v1/numbers/index?access_token=${tok}&per-page=2&page=${1 + Math.floor(Math.random() * 4)}`,
        headers: { accept: 'application/xml' },
      }),
    ],
    [8, () => ({ method: 'GET', path: `/v1/credits/balance?access_token=${tok}` })],
    [
      6,
      () => ({
        method: 'GET',
        path: `/v1/sms/single-schedule-messages?access_token=${tok}&per-page=${1 + Math.floor(Math.random() * 20)}`,
      }),
    ],
    [4, () => ({ method: 'GET', path: `/v1/sms/single-schedule-messages?access_token=${tok}&_format=xml` })],
    [
      8,
      () => ({
        method: 'GET',
        path: `/v1/contacts/find?number=%2B${pick(a.contacts).Number}&access_token=${tok}`,
        headers: { accept: pick(['application/json', 'application/xml']) },
      }),
    ],
    [3, () => ({ method: 'HEAD', path: `/v1/credits/balance?access_token=${tok}` })],
    // writes
    [
      5,
      () => ({
        method: pick(['PUT', 'PATCH']),
        path: `/v1/groups/update?id=${pick(a.groups).Id}&access_token=${tok}`,
        headers: json,
        body: JSON.stringify({ fname: `Soak group ${serial++}`, fnote: 'Soak note' }),
      }),
    ],
    [
      4,
      () => ({
        method: 'PUT',
        path: `/v1/custom-contact-fields/update?id=${pick(a.customFields).Id}&access_token=${tok}`,
        headers: json,
        body: JSON.stringify({ fname: `Soak field ${serial++ % 1000}` }),
      }),
    ],
    [
      5,
      () => {
        const e = pick(a.customFieldEntries);
        return {
          method: pick(['POST', 'PUT', 'PATCH']),
          path: `/v1/custom-contact-fields-entry/update?id=${e.Id}&access_token=${tok}`,
          headers: json,
          body: JSON.stringify({ frfield: e.CustomFieldId, frcontact: String(e.PhoneNumberId), fvalue: `v${serial++}` }),
        };
      },
    ],
    [
      3,
      () => ({
        method: 'POST',
        path: `/v1/keyword/reserve?access_token=${tok}`,
        headers: json,
        body: JSON.stringify({ Keyword: `SOAK${process.pid}N${serial++}`, Number: pick(active), AutoreplyMessage: 'Thanks!' }),
      }),
    ],
    // client errors
    [2, () => ({ method: 'GET', path: `/v1/credits/balance?access_token=nope${serial++}` })],
    [2, () => ({ method: 'GET', path: `/v1/nothing-here?access_token=${tok}` })],
    [
      2,
      () => ({
        method: 'PUT',
        path: `/v1/groups/update?id=${pick(b.groups).Id}&access_token=${tok}`,
        headers: json,
        body: '{"fname":"Not mine"}',
      }),
    ],
    [1, () => ({ method: 'DELETE', path: `/v1/numbers/index?access_token=${tok}` })],
    [1, () => ({ method: 'GET', path: `/v1/numbers/index?access_token=${tok}`, headers: { accept: 'text/html' } })],
    [1, () => ({ method: 'PUT', path: `/v1/groups/update?id=x&access_token=${tok}`, headers: json, body: '{}' })],
    [1, () => ({ method: 'PUT', path: `/v1/groups/update?id=${a.groups[0]!.Id}&access_token=${tok}`, headers: json, body: '{"fname":' })],
    [
      1,
      () => ({
        method: 'PUT',
        path: `/v1/groups/update?id=${a.groups[0]!.Id}&access_token=${tok}`,
        headers: { 'content-type': 'text/plain' },
        body: 'x',
      }),
    ],
    [
      2,
      () => ({
        method: 'POST',
        path: `/v1/keyword/reserve?access_token=${tok}`,
        headers: json,
        body: JSON.stringify({ Keyword: 'ab', Number: 'x' }),
      }),
    ],
    [
      1,
      () => ({
        method: 'PUT',
        path: `/v1/groups/update?id=${a.groups[0]!.Id}&access_token=${tok}`,
        headers: json,
        body: JSON.stringify({ fname: 'y'.repeat(120_000) }),
        fresh: true,
      }),
    ],
    // a new connection per request
    [3, () => ({ method: 'GET', path: `/v1/credits/balance?access_token=${tok}`, fresh: true })],
  ];
  const total = mix.reduce((s, [w]) => s + w, 0);
  return () => {
    let r = Math.random() * total;
    for (const [w, make] of mix) if ((r -= w) < 0) return make();
    return mix[0]![1]();
  };
}

// ------------------------------------------------------------------ run

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'msgsvc-soak-'));
  const dbPath = join(dir, 'msgsvc.db');
  const store = openStore({ kind: 'sqlite', path: dbPath });
  await migrateToLatest(store);
  const mappers = recordMappers(createTimeFormat('UTC'));
  const a = await createDemoAccount(store, mappers, 'US', 'Soak A');
  const b = await createDemoAccount(store, mappers, 'US', 'Soak B');
  await store.close();

  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, ['bin/msgsvc.js', 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: dbPath,
      PORT: String(port),
      HOST: '127.0.0.1',
      MSGSVC_DEMO: '0',
      LOG_LEVEL: 'info',
      MSGSVC_RATE_LIMIT: '1000000000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let logBytes = 0;
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (logBytes += c.length));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const cleanup = () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.on('SIGINT', () => {
    cleanup();
    process.exit(130);
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {
      /* not yet */
    }
    if (i > 300 || child.exitCode !== null) throw new Error(`server did not start: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }

  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const next = trafficMix(a, b);
  const statuses = new Map<number, number>();
  const latencies: number[] = [];
  let transportErrors = 0;
  let requests = 0;
  const send = (r: Req) =>
    new Promise<number>((resolveStatus) => {
      const headers = { ...(r.headers ?? {}), ...(r.body !== undefined ? { 'content-length': String(Buffer.byteLength(r.body)) } : {}) };
      const req = http.request(
        { host: '127.0.0.1', port, method: r.method, path: r.path, headers, agent: r.fresh ? false : agent },
        (res) => {
          res.resume();
          res.on('end', () => resolveStatus(res.statusCode ?? 0));
          res.on('error', () => resolveStatus(-1));
        },
      );
      req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
      req.on('error', () => resolveStatus(-1));
      req.end(r.body);
    });

  const started = Date.now();
  const samples: { t: number; rss: number }[] = [];
  const sampler = setInterval(() => samples.push({ t: Date.now() - started, rss: rssKiB(child.pid!) }), SAMPLE_MS);
  samples.push({ t: 0, rss: rssKiB(child.pid!) });
  let lastReport = started;
  const worker = async () => {
    while (Date.now() - started < durationMs) {
      const t0 = performance.now();
      const status = await send(next());
      requests++;
      if (status < 0) transportErrors++;
      else {
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (latencies.length < 2_000_000) latencies.push(performance.now() - t0);
      }
      if (Date.now() - lastReport >= 30_000) {
        lastReport = Date.now();
        const s = samples.at(-1)!;
        console.log(`soak: ${Math.round((lastReport - started) / 1000)} s, ${requests} requests, RSS ${(s.rss / 1024).toFixed(1)} MiB`);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  clearInterval(sampler);
  samples.push({ t: Date.now() - started, rss: rssKiB(child.pid!) });
  const elapsedMs = Date.now() - started;
  const alive =
    (await fetch(`${base}/healthz`)
      .then((r) => r.status)
      .catch(() => 0)) === 200;
  agent.destroy();
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  cleanup();

  const warm = median(samples.filter((s) => s.t > warmupMs - WINDOW_MS && s.t <= warmupMs).map((s) => s.rss));
  const end = median(samples.filter((s) => s.t >= elapsedMs - WINDOW_MS).map((s) => s.rss));
  const peak = Math.max(...samples.map((s) => s.rss));
  const change = (end - warm) / warm;
  const fiveXX = [...statuses].filter(([s]) => s >= 500).reduce((n, [, c]) => n + c, 0);
  latencies.sort((x, y) => x - y);
  const summary = {
    date: new Date().toISOString(),
    node: process.version,
    minutes,
    warmupSeconds: warmupMs / 1000,
    concurrency,
    requests,
    requestsPerSecond: Math.round(requests / (elapsedMs / 1000)),
    statuses: Object.fromEntries([...statuses].sort((x, y) => x[0] - y[0])),
    fiveXX,
    transportErrors,
    latencyMs: {
      p50: +percentile(latencies, 50).toFixed(2),
      p99: +percentile(latencies, 99).toFixed(2),
      max: +(latencies.at(-1) ?? NaN).toFixed(2),
    },
    rssMiB: {
      start: +(samples[0]!.rss / 1024).toFixed(1),
      afterWarmup: +(warm / 1024).toFixed(1),
      end: +(end / 1024).toFixed(1),
      peak: +(peak / 1024).toFixed(1),
      changePercent: +(change * 100).toFixed(2),
    },
    /** RSS every 30 s, MiB. */
    rssTimelineMiB: samples
      .filter((s, i) => i === 0 || Math.floor(s.t / 30_000) !== Math.floor(samples[i - 1]!.t / 30_000))
      .map((s) => +(s.rss / 1024).toFixed(1)),
    serverLogMiB: +(logBytes / 1048576).toFixed(1),
    aliveAtEnd: alive,
    pass: Math.abs(change) <= 0.1 && fiveXX === 0 && transportErrors === 0 && alive,
  };
  console.log(JSON.stringify(summary, null, 2));
  if (flags.out) writeFileSync(flags.out, JSON.stringify(summary, null, 2) + '\n');
  console.log(
    summary.pass
      ? `soak PASSED: RSS ${summary.rssMiB.afterWarmup} → ${summary.rssMiB.end} MiB (${summary.rssMiB.changePercent} %), ${requests} requests, no 5xx`
      : `soak FAILED: RSS change ${summary.rssMiB.changePercent} % (limit ±10 %), ${fiveXX} 5xx, ${transportErrors} transport errors, alive at end: ${alive}`,
  );
  process.exit(summary.pass ? 0 : 1);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
