/**
 * `GET /v1/sms/export` of a large log (issue 30, docs/API.md §10.9.1), on SQLite: how long the whole
 * file takes over HTTP, and what it costs the server in memory.
 *
 * 1. A fresh SQLite database, migrated; one account with a key; `--messages` messages (default
 *    1,000,000) in its log, written by one INSERT … SELECT over a recursive counter, in one
 *    transaction (the conversations trigger runs for each row, as for any insert). The texts vary
 *    in length, one in ten holds a comma and quotes (quoted in the file), one in fifty begins with
 *    `=` (a formula, written with `'`); statuses, ErrorCodes and 10,000 recipients vary too.
 * 2. `msgsvc serve` (bin/msgsvc.js of `--app`) in its own process, with `node --no-memory-reducer`
 *    and the flags of `npm start`, MSGSVC_DISPATCHER=0, on 127.0.0.1. One small export (a filter
 *    that matches 100 messages) warms it up; then its resident memory (VmRSS) is read: the
 *    "before".
 * 3. One client downloads the whole export over a socket, reading as fast as it can; the file is
 *    checked (the header row, one line per message, the first and last ids). Timed from the request
 *    to the last byte. While it runs, the server's VmRSS is sampled every 20 ms, the peak of the
 *    first half of the rows apart from the second's; its VmHWM (the peak since it started) is read
 *    at the end.
 *
 * Reported: seconds, rows/s and MB/s; the server's RSS before, its peak sampled during the
 * download (and in each half: a stream in constant memory has the same peak in both), VmHWM, and
 * the growth (peak less before); the server's CPU seconds.
 *
 *   node --import tsx bench/export.ts [--messages 1000000] [--app DIR]
 *   npm run bench -- --only export --no-docs          (the same, inside a bench run's result file)
 *
 * Takes about a minute at 1,000,000 messages. Results: bench/results/<date>-export.json (not under
 * MSGSVC_BENCH_REPORT_ONLY: `npm run bench` records them in its own result file). The last line is
 * `EXPORT {json}`.
 */
import { request as httpRequest } from 'node:http';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { benchDatabase } from './lib/databases.ts';
import { freePort, machine, msgsvcStartFlags, startServer, stopAll, type Machine } from './lib/procs.ts';
import { createAccount, issueToken } from '../src/domain/accounts.ts';
import { migrateToLatest, openStore } from '../src/store/db.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: flags } = parseArgs({
  options: {
    messages: { type: 'string', default: '1000000' },
    app: { type: 'string' },
  },
});
const MESSAGES = Number(flags.messages);
const APP = flags.app ? resolve(flags.app) : ROOT;
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

export interface ExportBenchResult {
  date: string;
  store: 'sqlite';
  machine: Machine;
  messages: number;
  /** Seconds the seeding INSERT took, and the database file's size after it. */
  seedSeconds: number;
  databaseMiB: number;
  /** The download: request to last byte. */
  seconds: number;
  rowsPerSecond: number;
  bytes: number;
  mibPerSecond: number;
  /** Server memory, MiB: VmRSS after start and a warm-up export; the highest VmRSS sampled during the download; VmHWM at the end. */
  server: {
    rssBeforeMiB: number;
    peakRssDuringMiB: number;
    /** The highest VmRSS sampled while the client received the first half of the rows, and the second half. */
    peakRssFirstHalfMiB: number;
    peakRssSecondHalfMiB: number;
    vmHwmMiB: number;
    growthMiB: number;
    cpuSeconds: number;
  };
  nodeFlags: string[];
  loadAverage: { start: number[]; end: number[] };
}

/** A `kB` field of /proc/PID/status (VmRSS, VmHWM) in MiB; NaN when the process is gone. */
function statusField(pid: number, field: string): number {
  try {
    const m = new RegExp(`^${field}:\\s*(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** GETs `url` and reads the whole body as fast as it comes: its bytes, line count and first/last lines. */
function download(
  url: string,
  progress: { lines: number } = { lines: 0 },
): Promise<{ status: number; contentType: string; bytes: number; lines: number; head: string; tail: string }> {
  return new Promise((resolvePromise, reject) => {
    const req = httpRequest(url, (res) => {
      let bytes = 0;
      let lines = 0;
      let head = '';
      let tail = Buffer.alloc(0);
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (head.length < 400) head += chunk.toString('utf8', 0, Math.min(chunk.length, 400));
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
        progress.lines = lines;
        tail = Buffer.concat([tail, chunk]).subarray(-400);
      });
      res.on('end', () =>
        resolvePromise({
          status: res.statusCode ?? 0,
          contentType: String(res.headers['content-type']),
          bytes,
          lines,
          head,
          tail: tail.toString('utf8'),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const started = Date.now();
const loadStart = loadavg().map((x) => round(x));
const db = await benchDatabase('sqlite', 'export', '');
const store = openStore(db.config);
let result: ExportBenchResult;
try {
  await migrateToLatest(store);
  const accountId = await createAccount(store, 'Export bench');
  const { token } = await issueToken(store, accountId, 'bench');

  // 1. The log: one INSERT … SELECT in one transaction.
  const base = Math.floor(Date.parse('2026-01-01T00:00:00Z') / 1000);
  const t0 = performance.now();
  await store.db.transaction().execute(async (tx) => {
    await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${MESSAGES})
      insert into messages (account_id, direction, number, mobile_phone, message, type_id, status_id, segments, credits,
        opt_out_exempt, error_code, created_at, sent_at, delivered_at)
      select ${accountId},
        case when i % 20 = 2 then 2 else 1 end,
        '15550001000',
        '1555' || substr('0000000' || (i % 10000), -7),
        case
          when i % 50 = 0 then '=HYPERLINK("http://example.com/' || i || '")'
          when i % 10 = 0 then 'Hi "friend", your order ' || i || ' has shipped, track it at https://example.com/t/' || i
          when i % 3 = 0 then 'Your code is ' || (i * 7919 % 1000000) || '. It expires in 10 minutes. Reply STOP to opt out.'
          else 'Reminder: your appointment is tomorrow at ' || (8 + i % 10) || ':00. Reply C to confirm or R to reschedule. Msg ' || i
        end,
        1,
        case when i % 20 = 0 then 5 when i % 20 = 1 then 4 when i % 20 = 2 then 7 else 3 end,
        1 + (i % 3 = 0),
        case when i % 20 = 2 then 0 else 1 + (i % 3 = 0) end,
        0,
        case when i % 20 = 0 then 'ESME_RINVDSTADR' when i % 20 = 1 then 'UNDELIV:001' else '' end,
        ${base} + i,
        case when i % 20 in (0, 2) then null else ${base} + i + 1 end,
        case when i % 20 in (0, 1, 2) then null else ${base} + i + 4 end
      from n`.execute(tx);
  });
  const seedSeconds = (performance.now() - t0) / 1000;
  const databaseMiB = statSync(db.url).size / 2 ** 20;
  console.log(`seeded ${MESSAGES.toLocaleString('en-US')} messages in ${seedSeconds.toFixed(1)} s (${databaseMiB.toFixed(0)} MiB)`);
  await store.close();

  // 2. The server in its own process.
  const port = await freePort();
  const nodeFlags = ['--no-memory-reducer', ...msgsvcStartFlags(ROOT).filter((f) => f !== '--no-memory-reducer')];
  const server = await startServer({
    name: 'export',
    nodeArgs: nodeFlags,
    args: [join(APP, 'bin/msgsvc.js'), 'serve'],
    env: {
      DATABASE_URL: db.url,
      PORT: String(port),
      HOST: '127.0.0.1',
      MSGSVC_DISPATCHER: '0',
      MSGSVC_DEMO: '0',
      LOG_LEVEL: 'warn',
      MSGSVC_RATE_LIMIT: '1000000',
    },
    port,
    readyPath: '/healthz',
    readyTimeoutMs: 120_000,
  });
  try {
    const url = `${server.url}/v1/sms/export?access_token=${encodeURIComponent(token)}`;
    const warm = await download(`${url}&MobilePhone=15550000042`);
    if (warm.status !== 200 || warm.lines !== 1 + MESSAGES / 10_000)
      throw new Error(`warm-up export answered ${warm.status} with ${warm.lines} lines: ${warm.head.slice(0, 200)}`);
    await new Promise((r) => setTimeout(r, 500));
    const rssBefore = statusField(server.pid, 'VmRSS');
    const cpu0 = server.cpuMicros();

    // 3. The whole file, sampling the server's memory meanwhile.
    // The peak of each half of the file apart: memory that grows with the rows sent shows as a
    // second half above the first; a stream in constant memory has both the same.
    const progress = { lines: 0 };
    const halves = [rssBefore, rssBefore];
    const sampler = setInterval(() => {
      const rss = statusField(server.pid, 'VmRSS');
      const half = progress.lines <= MESSAGES / 2 ? 0 : 1;
      if (rss > halves[half]!) halves[half] = rss;
    }, 20);
    const d0 = performance.now();
    const file = await download(url, progress);
    const seconds = (performance.now() - d0) / 1000;
    clearInterval(sampler);
    const peakDuring = Math.max(...halves);
    const cpuSeconds = (server.cpuMicros() - cpu0) / 1e6;
    const vmHwm = statusField(server.pid, 'VmHWM');

    if (file.status !== 200 || !file.contentType.startsWith('text/csv'))
      throw new Error(`export answered ${file.status} ${file.contentType}`);
    if (!file.head.startsWith('Id,Direction,Number,MobilePhone,Message,')) throw new Error(`header row: ${file.head.slice(0, 120)}`);
    if (file.lines !== MESSAGES + 1) throw new Error(`${file.lines} lines for ${MESSAGES} messages`);
    const lastId = /\r\n(\d+),[^\r\n]*\r\n$/.exec(file.tail)?.[1];
    const firstId = /\r\n(\d+),/.exec(file.head)?.[1];
    if (Number(firstId) !== MESSAGES || Number(lastId) !== 1) throw new Error(`first id ${firstId}, last id ${lastId}`);

    result = {
      date: new Date().toISOString(),
      store: 'sqlite',
      machine: machine(),
      messages: MESSAGES,
      seedSeconds: round(seedSeconds, 1),
      databaseMiB: round(databaseMiB, 1),
      seconds: round(seconds),
      rowsPerSecond: Math.round(MESSAGES / seconds),
      bytes: file.bytes,
      mibPerSecond: round(file.bytes / 2 ** 20 / seconds, 1),
      server: {
        rssBeforeMiB: round(rssBefore, 1),
        peakRssDuringMiB: round(peakDuring, 1),
        peakRssFirstHalfMiB: round(halves[0]!, 1),
        peakRssSecondHalfMiB: round(halves[1]!, 1),
        vmHwmMiB: round(vmHwm, 1),
        growthMiB: round(peakDuring - rssBefore, 1),
        cpuSeconds: round(cpuSeconds),
      },
      nodeFlags,
      loadAverage: { start: loadStart, end: loadavg().map((x) => round(x)) },
    };
    console.log(
      `GET /v1/sms/export: ${MESSAGES.toLocaleString('en-US')} rows, ${(file.bytes / 2 ** 20).toFixed(1)} MiB in ${result.seconds} s ` +
        `(${result.rowsPerSecond.toLocaleString('en-US')} rows/s, ${result.mibPerSecond} MiB/s, server CPU ${result.server.cpuSeconds} s); ` +
        `server RSS ${result.server.rssBeforeMiB} MiB before, peak ${result.server.peakRssDuringMiB} MiB during (+${result.server.growthMiB} MiB; first half ${result.server.peakRssFirstHalfMiB}, second half ${result.server.peakRssSecondHalfMiB}), VmHWM ${result.server.vmHwmMiB} MiB`,
    );
  } finally {
    await stopAll();
  }
} finally {
  await store.close();
  await db.drop();
}

console.log(`took ${((Date.now() - started) / 1000).toFixed(0)} s`);
if (!process.env.MSGSVC_BENCH_REPORT_ONLY) {
  const file = join(ROOT, 'bench/results', `${result.date.replace(/:/g, '-').replace(/\..+$/, '')}-export.json`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`written to ${file.slice(ROOT.length + 1)}`);
}
console.log(`EXPORT ${JSON.stringify(result)}`);
