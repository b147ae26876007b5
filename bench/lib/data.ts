/**
 * The bench's databases: `msgsvc generate --contacts N --log-messages N` into `DIR/msgsvc-N.db`
 * (N contacts, N scheduled messages and N Delivered messages in the log: issue 15's RSS target is
 * at 1 M contacts with 1 M messages in the log), with the command's JSON summary beside it
 * (`.db.json`); an existing pair is reused.
 */
import { existsSync, rmSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
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
