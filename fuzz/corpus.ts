/**
 * Where fuzz inputs live (docs/RELIABILITY.md "Fuzzing"):
 * - fuzz/corpus/NAME/: the committed seeds of target NAME;
 * - fuzz/crashes/NAME/: every input that once broke the target, committed and replayed by CI as a
 *   regression test;
 * - .fuzz/NAME/: the working corpus a run grows (not committed; `--save` writes to the seeds).
 * Each file is one input, as fuzz/target.ts encodeInput writes it, named by its SHA-1.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeInput, type FuzzValue } from './target.ts';

export const ROOT = join(import.meta.dirname, '..');
export const seedsDir = (name: string): string => join(ROOT, 'fuzz', 'corpus', name);
export const crashesDir = (name: string): string => join(ROOT, 'fuzz', 'crashes', name);
export const workDir = (name: string): string => join(ROOT, '.fuzz', name);

/** The encoded inputs of a folder (none when it does not exist), in name order. */
export function readInputs(dir: string): { file: string; encoded: string }[] {
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((n) => n.endsWith('.json'))
      .sort();
  } catch {
    return [];
  }
  return names.map((n) => ({ file: join(dir, n), encoded: readFileSync(join(dir, n), 'utf8') }));
}

/** The decoded inputs of several folders. */
export function loadInputs(dirs: readonly string[]): FuzzValue[] {
  return dirs.flatMap((d) => readInputs(d).map((i) => decodeInput(i.encoded)));
}

/** Writes one encoded input into `dir`; returns its path. */
export function writeInput(dir: string, encoded: string): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${createHash('sha1').update(encoded).digest('hex').slice(0, 16)}.json`);
  writeFileSync(file, encoded);
  return file;
}
