/**
 * contacts/import at scale (API.md §10.2; issue 10 "Speed": 1 M rows in ≤ 60 s on SQLite,
 * peak RSS ≤ 300 MB).
 *
 * Streams a CSV of `rows` rows (default 1,000,000, about 80 MB) to a temp file, then imports it
 * into a fresh SQLite database through a real msgsvc process, started with `--no-memory-reducer`
 * and the node flags of `npm start`:
 * - `--via http` (default): `msgsvc serve`, the file POSTed to /v1/contacts/import over a socket
 *   (MSGSVC_IMPORT_BODY_LIMIT raised to the file's size);
 * - `--via cli`: `msgsvc contacts import --account ID FILE`.
 * Reports the seconds from the first byte sent (or the command's start) to the report, rows/s, the
 * process's peak RSS (VmHWM) and its RSS when idle before, checks the report's counts and the
 * database against what the file holds, and says whether the targets are met (exit code 1 if not,
 * unless MSGSVC_BENCH_REPORT_ONLY is set: `npm run bench` records a miss in its targets instead).
 * Its last line is `IMPORT {"rows","seconds","rowsPerSecond","peakRssMB"}` for `npm run bench`.
 *
 * The file: Number, FirstName, LastName, Email, City, Zip, GroupIds (two groups, on 20 % of the
 * rows) and a custom field column (on 20 %); every 100th row repeats an earlier number (an update)
 * and every 10,000th has a bad Email (a failed row).
 *
 *   node --import tsx bench/import-1m.ts [rows] [--via http|cli] [--build | --app DIR]
 *
 * `--build` compiles src/ into a temp copy and runs that (what `npm start` runs after
 * `npm run build`), without touching the checkout's dist/ (bench/lib/build.ts); `--app DIR` runs
 * such a copy made already (bench/run.ts --build passes its own); otherwise bin/msgsvc.js runs
 * whatever it picks (dist/ when up to date, else the sources through tsx, which costs memory and time).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createAccount, issueToken } from '../src/domain/accounts.ts';
import { caseKey } from '../src/domain/text.ts';
import { migrateToLatest, openStore } from '../src/store/db.ts';
import { insertCustomField } from '../src/store/repositories/custom-fields.ts';
import { insertGroup } from '../src/store/repositories/groups.ts';
import { buildCopy } from './lib/build.ts';
import { freePort, msgsvcStartFlags, startServer, stopAll } from './lib/procs.ts';
import { chooseEntry } from '../bin/entry.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: { via: { type: 'string', default: 'http' }, build: { type: 'boolean', default: false }, app: { type: 'string' } },
});
const rows = Number(positionals[0] ?? 1_000_000);
if (!Number.isSafeInteger(rows) || rows < 1) throw new Error(`rows must be a positive whole number, not ${positionals[0]}`);
const via = flags.via;
if (via !== 'http' && via !== 'cli') throw new Error('--via is http or cli');
const TARGET_SECONDS = 60;
const TARGET_RSS_MB = 300;

// The node flags `npm start` gives msgsvc, so this measures what runs in production.
const NODE_ARGS = ['--no-memory-reducer', ...msgsvcStartFlags(ROOT)];

const FIRST = ['Olivia', 'Liam', 'Emma', 'Noah', 'Ava', 'Elijah', 'Sophia', 'James'];
const LAST = ['Smith', 'Johnson', 'Williams', 'Brown', 'Jones', 'Garcia', 'Miller'];
const CITIES = ['Austin', 'Portland', 'Denver', 'Chicago', 'Boston'];
const COMPANIES = ['Acme Ltd', 'Globex', 'Initech', 'Umbrella', '"Quoted, Inc."'];

const isUpdate = (i: number) => i % 100 === 99;
const isBad = (i: number) => i % 10_000 === 5000;
const phone = (i: number) => `+1555${String(1_000_000 + (isUpdate(i) ? i - 50 : i)).padStart(7, '0')}`;

/** Streams the CSV to `path`; returns what the import must report. */
async function writeCsv(path: string, groups: [number, number]): Promise<{ created: number; updated: number; failed: number }> {
  const out = createWriteStream(path);
  out.write('Number,FirstName,LastName,Email,City,Zip,GroupIds,Company\n');
  let updated = 0;
  let failed = 0;
  for (let i = 0; i < rows; i++) {
    if (isUpdate(i)) updated++;
    if (isBad(i)) failed++;
    const first = FIRST[i % FIRST.length]!;
    const last = LAST[i % LAST.length]!;
    const email = isBad(i) ? 'not-an-email' : `${first.toLowerCase()}.${i}@example.com`;
    const group = i % 10 === 0 ? `${groups[0]};${groups[1]}` : i % 10 === 1 ? String(groups[1]) : '';
    const company = i % 5 === 2 ? COMPANIES[i % COMPANIES.length]! : '';
    const line = `${phone(i)},${first},${last},${email},${CITIES[i % CITIES.length]},${String(10000 + (i % 89999))},${group},${company}\n`;
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return { created: rows - updated - failed, updated, failed };
}

/** VmHWM / VmRSS of a live process, in MiB. */
function memory(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const m = new RegExp(`^${field}:\\s*(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

interface Run {
  seconds: number;
  peakRssMiB: number;
  idleRssMiB: number;
  report: { Created: number; Updated: number; Failed: number; Errors: unknown[] };
}

async function viaHttp(appRoot: string, dbPath: string, csvPath: string, token: string): Promise<Run> {
  const size = statSync(csvPath).size;
  const port = await freePort();
  const server = await startServer({
    name: 'msgsvc',
    nodeArgs: NODE_ARGS,
    args: [join(appRoot, 'bin/msgsvc.js'), 'serve', '--port', String(port), '--no-demo'],
    env: { DATABASE_URL: dbPath, LOG_LEVEL: 'warn', MSGSVC_IMPORT_BODY_LIMIT: String(Math.max(size, 52_428_800)) },
    port,
    readyPath: '/healthz',
  });
  try {
    const idleRssMiB = server.rssMiB();
    const started = process.hrtime.bigint();
    const body = await new Promise<string>((resolvePromise, reject) => {
      const req = request(
        `${server.url}/v1/contacts/import?access_token=${encodeURIComponent(token)}`,
        { method: 'POST', headers: { 'Content-Type': 'text/csv', 'Content-Length': String(size), Accept: 'application/json' } },
        (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (d: string) => (text += d));
          res.on('end', () =>
            res.statusCode === 200 ? resolvePromise(text) : reject(new Error(`HTTP ${res.statusCode}: ${text.slice(0, 500)}`)),
          );
        },
      );
      req.on('error', reject);
      createReadStream(csvPath).pipe(req);
    });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    return { seconds, peakRssMiB: server.peakRssMiB(), idleRssMiB, report: JSON.parse(body) as Run['report'] };
  } finally {
    await server.stop();
  }
}

async function viaCli(appRoot: string, dbPath: string, csvPath: string, account: number): Promise<Run> {
  const started = process.hrtime.bigint();
  const child = spawn(
    process.execPath,
    [...NODE_ARGS, join(appRoot, 'bin/msgsvc.js'), 'contacts', 'import', '--account', String(account), csvPath],
    {
      env: { ...process.env, DATABASE_URL: dbPath, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  // VmHWM only grows: the last reading before the exit is the peak, give or take the last 50 ms.
  let peakRssMiB = 0;
  const poll = setInterval(() => {
    try {
      peakRssMiB = Math.max(peakRssMiB, memory(child.pid!, 'VmHWM'));
    } catch {
      // exited
    }
  }, 50);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearInterval(poll);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (code !== 0) throw new Error(`msgsvc contacts import exited with code ${code}`);
  return { seconds, peakRssMiB, idleRssMiB: NaN, report: JSON.parse(stdout) as Run['report'] };
}

const dir = mkdtempSync(join(tmpdir(), 'msgsvc-import-1m-'));
let exitCode = 0;
try {
  const appRoot = flags.app ? resolve(flags.app) : flags.build ? buildCopy(dir) : ROOT;
  const runs = flags.app || flags.build ? 'dist (a fresh build)' : chooseEntry(ROOT).entry === 'dist' ? 'dist' : 'src through tsx';
  const dbPath = join(dir, 'msgsvc.db');
  const store = openStore({ kind: 'sqlite', path: dbPath });
  await migrateToLatest(store);
  const account = await createAccount(store, 'Import bench');
  const { token } = await issueToken(store, account, 'bench');
  const g1 = await insertGroup(store.db, account, { name: 'Bench A', note: '', keywordId: 0, parentId: 0 }, 0);
  const g2 = await insertGroup(store.db, account, { name: 'Bench B', note: '', keywordId: 0, parentId: 0 }, 0);
  await insertCustomField(store.db, account, 'Company', caseKey('Company'), 0);
  await store.close();

  const csvPath = join(dir, 'contacts.csv');
  const generated = Date.now();
  const expected = await writeCsv(csvPath, [g1, g2]);
  const size = statSync(csvPath).size;
  console.log(
    `CSV: ${rows.toLocaleString('en-US')} rows, ${(size / 1e6).toFixed(1)} MB, written in ${((Date.now() - generated) / 1000).toFixed(1)} s`,
  );
  console.log(
    `import via ${via === 'http' ? 'POST /v1/contacts/import over a socket' : 'msgsvc contacts import'}; msgsvc runs ${runs} with node ${NODE_ARGS.join(' ')}`,
  );

  const run = via === 'http' ? await viaHttp(appRoot, dbPath, csvPath, token) : await viaCli(appRoot, dbPath, csvPath, account);
  const { Created, Updated, Failed, Errors } = run.report;
  console.log(JSON.stringify({ Created, Updated, Failed, Errors: Errors.slice(0, 2), errorsListed: Errors.length }));

  const check = openStore({ kind: 'sqlite', path: dbPath });
  const counted = async (table: 'contacts' | 'group_members' | 'custom_field_entries') =>
    Number(
      (
        await check.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const inDb = {
    contacts: await counted('contacts'),
    memberships: await counted('group_members'),
    entries: await counted('custom_field_entries'),
  };
  await check.close();
  console.log(
    `database: ${inDb.contacts.toLocaleString('en-US')} contacts, ${inDb.memberships.toLocaleString('en-US')} memberships, ${inDb.entries.toLocaleString('en-US')} entries`,
  );

  const countsOk =
    Created === expected.created && Updated === expected.updated && Failed === expected.failed && inDb.contacts === expected.created;
  if (!countsOk) {
    console.log(`COUNTS WRONG: expected ${JSON.stringify(expected)}, contacts in the database ${inDb.contacts}`);
    exitCode = 1;
  }
  const rate = Math.round(rows / run.seconds);
  console.log(
    `import: ${run.seconds.toFixed(1)} s, ${rate.toLocaleString('en-US')} rows/s (target ≤ ${TARGET_SECONDS} s: ${run.seconds <= TARGET_SECONDS ? 'met' : 'MISSED'})`,
  );
  const peakMB = (run.peakRssMiB * 2 ** 20) / 1e6;
  console.log(
    `peak RSS: ${peakMB.toFixed(0)} MB = ${run.peakRssMiB.toFixed(0)} MiB${Number.isNaN(run.idleRssMiB) ? '' : ` (idle before: ${run.idleRssMiB.toFixed(0)} MiB)`} (target ≤ ${TARGET_RSS_MB} MB: ${peakMB <= TARGET_RSS_MB ? 'met' : 'MISSED'})`,
  );
  // One machine-readable line for npm run bench (bench/run.ts), which records it in its results.
  console.log(
    `IMPORT ${JSON.stringify({ rows, seconds: Math.round(run.seconds * 10) / 10, rowsPerSecond: rate, peakRssMB: Math.round(peakMB) })}`,
  );
  if (rows >= 1_000_000 && (run.seconds > TARGET_SECONDS || peakMB > TARGET_RSS_MB) && !process.env.MSGSVC_BENCH_REPORT_ONLY) exitCode = 1;
} finally {
  await stopAll();
  rmSync(dir, { recursive: true, force: true });
}
process.exitCode = exitCode;
