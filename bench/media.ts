/**
 * Media upload speed and memory (issue 13 "Speed"; API.md §10.7), on SQLite and PostgreSQL.
 *
 * For each store, each scenario runs against a FRESH `msgsvc serve` process (the flags of
 * `npm start`), so its peak RSS (VmHWM) belongs to that scenario alone:
 * - `png10`: a real 10 MB PNG (uncompressed pixels) uploaded N times (default 10), one after the
 *   other, over a keep-alive connection: MB/s (MiB of file per second of wall time) and peak RSS;
 * - `one70`: one upload of 73,400,000 bytes (a PNG head, then filler): time and peak RSS;
 * - `four70`: four such uploads at once: time and peak RSS.
 * The server writes each upload to the database in 256 KiB chunks as it arrives, in one
 * transaction: the peak RSS must stay far below the bytes in flight (4 × 70 MB = 280 MB).
 * Every upload must answer 201 with the right Size.
 *
 *   node --import tsx bench/media.ts [--stores sqlite,postgres] [--uploads 10] [--pg-url postgres://…] [--app DIR]
 *
 * `--app DIR` runs a built copy (bench/lib/build.ts; `npm run bench` passes one); without it the
 * sources run through tsx (MSGSVC_FROM_SOURCE=1), whose compiler adds some RSS of its own; the
 * baseline RSS after start is printed beside every peak. The last line is `MEDIA {json}`.
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest, Agent } from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { benchDatabase, postgresReachable } from './lib/databases.ts';
import { createAccount, issueToken } from '../src/domain/accounts.ts';
import { migrateToLatest, openStore } from '../src/store/db.ts';
import { pngImage } from '../src/lib/sample-images.ts';
import { freePort, startServer, stopAll, type Server } from './lib/procs.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: flags } = parseArgs({
  options: {
    stores: { type: 'string', default: 'sqlite,postgres' },
    uploads: { type: 'string', default: '10' },
    app: { type: 'string' },
    'pg-url': { type: 'string', default: process.env.MSGSVC_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
  },
});
const UPLOADS = Number(flags.uploads);
const APP = flags.app ?? ROOT;
const NODE_FLAGS = (
  /^node((?:\s+--\S+)*)\s+bin\/msgsvc\.js/.exec(
    (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.start ?? '',
  )?.[1] ?? ''
)
  .trim()
  .split(/\s+/)
  .filter(Boolean);
const MiB = 1024 * 1024;

/** A multipart/form-data body with one file part; returned as its head, the file, and its tail. */
function multipartParts(filename: string, file: Buffer) {
  const boundary = '----msgsvc-bench-media';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return { head, file, tail, length: head.length + file.length + tail.length, contentType: `multipart/form-data; boundary=${boundary}` };
}

/** POSTs one upload (written in 64 KiB pieces, as a client streams a file) and resolves with its status and Size. */
function upload(
  server: Server,
  token: string,
  parts: ReturnType<typeof multipartParts>,
  agent: Agent,
): Promise<{ status: number; size: number }> {
  return new Promise((resolvePromise, reject) => {
    const req = httpRequest(
      `${server.url}/v1/media/upload?access_token=${token}`,
      { method: 'POST', agent, headers: { 'content-type': parts.contentType, 'content-length': String(parts.length) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          let size = -1;
          try {
            size = (JSON.parse(text) as { Size?: number }).Size ?? -1;
          } catch {
            /* not JSON: reported by the status */
          }
          resolvePromise({ status: res.statusCode!, size });
        });
      },
    );
    req.on('error', reject);
    req.write(parts.head);
    let offset = 0;
    const pump = () => {
      while (offset < parts.file.length) {
        const piece = parts.file.subarray(offset, offset + 64 * 1024);
        offset += piece.length;
        if (!req.write(piece)) return void req.once('drain', pump);
      }
      req.end(parts.tail);
    };
    pump();
  });
}

interface ScenarioResult {
  scenario: string;
  uploads: number;
  mib: number;
  seconds: number;
  mibPerSecond: number;
  baseRssMiB: number;
  peakRssMiB: number;
}

async function scenario(
  kind: 'sqlite' | 'postgres',
  name: string,
  url: string,
  token: string,
  parts: ReturnType<typeof multipartParts>,
  uploads: number,
  concurrent: boolean,
): Promise<ScenarioResult> {
  const port = await freePort();
  const server = await startServer({
    name: `msgsvc-${kind}-${name}`,
    nodeArgs: NODE_FLAGS,
    args: [join(APP, 'bin/msgsvc.js'), 'serve'],
    cwd: APP,
    port,
    readyPath: '/healthz',
    env: {
      DATABASE_URL: url,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      MSGSVC_DEMO: '0',
      MSGSVC_DISPATCHER: '0',
      MSGSVC_RATE_LIMIT: '1000000',
      ...(flags.app ? {} : { MSGSVC_FROM_SOURCE: '1' }),
    },
  });
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  try {
    const baseRssMiB = server.rssMiB();
    const started = process.hrtime.bigint();
    const results = concurrent
      ? await Promise.all(Array.from({ length: uploads }, () => upload(server, token, parts, agent)))
      : await (async () => {
          const out = [];
          for (let i = 0; i < uploads; i++) out.push(await upload(server, token, parts, agent));
          return out;
        })();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    for (const r of results)
      if (r.status !== 201 || r.size !== parts.file.length)
        throw new Error(`${kind} ${name}: upload answered ${r.status} (Size ${r.size})`);
    const mib = (uploads * parts.file.length) / MiB;
    return {
      scenario: name,
      uploads,
      mib: round(mib),
      seconds: round(seconds),
      mibPerSecond: round(mib / seconds),
      baseRssMiB: round(baseRssMiB),
      peakRssMiB: round(server.peakRssMiB()),
    };
  } finally {
    agent.destroy();
    await server.stop();
  }
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}

async function run(kind: 'sqlite' | 'postgres'): Promise<ScenarioResult[]> {
  const db = await benchDatabase(kind, 'media', flags['pg-url']);
  try {
    const store = openStore(db.config);
    await migrateToLatest(store);
    const accountId = await createAccount(store, 'Media bench');
    const { token } = await issueToken(store, accountId, 'bench');
    await store.close();
    // A real 10 MB PNG: 1870 × 1870 truecolour pixels stored uncompressed (zlib level 0).
    const png10 = pngImage(1870, 1870, (x, y) => [(x * 31 + y) & 255, (y * 17) & 255, (x ^ y) & 255], 0);
    const big = Buffer.alloc(73_400_000, 0x5a);
    pngImage(16, 16, () => [1, 2, 3]).copy(big);
    const out = [
      await scenario(kind, 'png10', db.url, token, multipartParts('photo.png', png10), UPLOADS, false),
      await scenario(kind, 'one70', db.url, token, multipartParts('big.png', big), 1, false),
      await scenario(kind, 'four70', db.url, token, multipartParts('big.png', big), 4, true),
    ];
    for (const r of out) {
      console.log(
        `${kind.padEnd(8)} ${r.scenario.padEnd(7)} ${String(r.uploads).padStart(2)} × ${(r.mib / r.uploads).toFixed(1)} MiB in ${r.seconds.toFixed(2)} s = ${r.mibPerSecond.toFixed(1)} MiB/s; RSS ${r.baseRssMiB} MiB at start, peak ${r.peakRssMiB} MiB`,
      );
    }
    return out;
  } finally {
    await db.drop();
  }
}

try {
  const results: Record<string, ScenarioResult[]> = {};
  const skipped: string[] = [];
  for (const kind of flags.stores.split(',').map((s) => s.trim()) as ('sqlite' | 'postgres')[]) {
    if (kind === 'postgres' && !(await postgresReachable(flags['pg-url']))) {
      skipped.push(`postgres: ${flags['pg-url']} does not answer`);
      console.log(`postgres: skipped (${flags['pg-url']} does not answer)`);
      continue;
    }
    results[kind] = await run(kind);
  }
  console.log(`MEDIA ${JSON.stringify({ fromSource: !flags.app, uploads: UPLOADS, results, skipped })}`);
} finally {
  await stopAll();
}
