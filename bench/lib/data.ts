/**
 * The bench's databases: `msgsvc generate --contacts N` into `DIR/msgsvc-N.db`, with the command's
 * JSON summary beside it (`.db.json`); an existing pair is reused.
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
    // A summary from before a field was added is generated anew.
    if (Array.isArray(cached.contactIds)) return { ...cached, file, generateSeconds: NaN, reused: true };
    rmSync(file, { force: true });
    for (const suffix of ['-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
  }
  const out = await runToCompletion(process.execPath, [join(ROOT, 'bin/msgsvc.js'), '--database-url', file, 'generate', '--contacts', String(size)], {
    MSGSVC_DEMO: '0',
  });
  writeFileSync(summaryFile, out);
  const summary = JSON.parse(out) as Dataset & { seconds: number };
  return { ...summary, file, generateSeconds: summary.seconds, reused: false };
}
