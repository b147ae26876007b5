/**
 * The bench's databases: `msgsvc generate --contacts N --log-messages N` into `DIR/msgsvc-N.db`
 * (N contacts, N scheduled messages and N Delivered messages in the log: issue 15's RSS target is
 * at 1 M contacts with 1 M messages in the log), with the command's JSON summary beside it
 * (`.db.json`); an existing pair is reused.
 */
import { existsSync, rmSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { runToCompletion } from './procs.ts';
import type { Dataset } from '../scenarios.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export interface GeneratedDataset extends Dataset {
  file: string;
  /** Seconds the generator took; NaN when an existing database was reused. */
  generateSeconds: number;
  reused: boolean;
}

export async function ensureDataset(dir: string, size: number): Promise<GeneratedDataset> {
  const file = join(dir, `msgsvc-${size}.db`);
  const summaryFile = `${file}.json`;
  if (existsSync(file) && existsSync(summaryFile)) {
    const cached = JSON.parse(readFileSync(summaryFile, 'utf8')) as Dataset;
    // A summary from before a field was added (or a database without its message log) is generated anew.
    if (Array.isArray(cached.contactIds) && (cached as { rows?: { logMessages?: number } }).rows?.logMessages === size) {
      return { ...cached, file, generateSeconds: NaN, reused: true };
    }
    rmSync(file, { force: true });
    for (const suffix of ['-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
  }
  const out = await runToCompletion(
    process.execPath,
    [join(ROOT, 'bin/msgsvc.js'), '--database-url', file, 'generate', '--contacts', String(size), '--log-messages', String(size)],
    {
      MSGSVC_DEMO: '0',
    },
  );
  writeFileSync(summaryFile, out);
  const summary = JSON.parse(out) as Dataset & { seconds: number };
  return { ...summary, file, generateSeconds: summary.seconds, reused: false };
}

/**
 * The same account on PostgreSQL: `msgsvc generate` into the database `msgsvc_bench_<N>` of the
 * server at `adminUrl` (created for it), its summary in `DIR/msgsvc-pg-N.json`; a database with its
 * summary is reused. Returns the database's URL with the summary.
 */
export async function ensurePgDataset(dir: string, size: number, adminUrl: string): Promise<GeneratedDataset & { url: string }> {
  const name = `msgsvc_bench_${size}`;
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const summaryFile = join(dir, `msgsvc-pg-${size}.json`);
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3000 });
  await client.connect();
  let exists: boolean;
  try {
    exists = (await client.query('select 1 from pg_database where datname = $1', [name])).rowCount === 1;
    if (exists && !existsSync(summaryFile)) {
      await client.query(`drop database "${name}" with (force)`);
      exists = false;
    }
    if (!exists) await client.query(`create database "${name}"`);
  } finally {
    await client.end();
  }
  if (exists) {
    const cached = JSON.parse(readFileSync(summaryFile, 'utf8')) as Dataset;
    return { ...cached, file: url.toString(), url: url.toString(), generateSeconds: NaN, reused: true };
  }
  const out = await runToCompletion(
    process.execPath,
    [join(ROOT, 'bin/msgsvc.js'), '--database-url', url.toString(), 'generate', '--contacts', String(size), '--log-messages', String(size)],
    { MSGSVC_DEMO: '0' },
  );
  writeFileSync(summaryFile, out);
  const summary = JSON.parse(out) as Dataset & { seconds: number };
  return { ...summary, file: url.toString(), url: url.toString(), generateSeconds: summary.seconds, reused: false };
}
