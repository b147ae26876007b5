/**
 * `npm run fuzz -- TARGET [--seconds N] [--seed S] [--save] [--no-coverage]` (docs/RELIABILITY.md
 * "Fuzzing"): fuzzes one target (or `all`, one after another) with coverage guidance, then replays
 * everything it has (seeds, past crashes, what this and earlier runs found) under c8 and prints the
 * branch coverage of the target's parser files.
 *
 * - The loop runs in a worker thread with a 512 MB heap: an input that exhausts it, or that keeps
 *   the thread busy for 30 s (a hang), is traced to its batch, and each input of the batch is run
 *   alone in a fresh worker to name the culprit.
 * - A crash (a throw the oracle does not allow, an input over the time bound, a hang, an
 *   out-of-memory) is written to .fuzz/crashes/NAME/ and the command exits 1. Once fixed, move the
 *   file to fuzz/crashes/NAME/: CI replays it for ever.
 * - Inputs that reached new code go to .fuzz/NAME/ (the working corpus, read again by the next
 *   run), or with --save to the committed seeds, fuzz/corpus/NAME/.
 * - `--list` prints the targets and their oracles; `--replay NAME` only runs the corpus (what c8
 *   measures); `--json FILE` writes the figures of the run.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { crashesDir, loadInputs, readInputs, ROOT, seedsDir, workDir, writeInput } from '../fuzz/corpus.ts';
import type { FuzzResult } from '../fuzz/engine.ts';
import { TARGETS } from '../fuzz/targets/index.ts';

const HEAP_MB = 512;
const HANG_MS = 30_000;
const WORKER = new URL('../fuzz/worker.ts', import.meta.url).href;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    seconds: { type: 'string', default: '60' },
    seed: { type: 'string' },
    save: { type: 'boolean', default: false },
    'no-coverage': { type: 'boolean', default: false },
    list: { type: 'boolean', default: false },
    replay: { type: 'boolean', default: false },
    json: { type: 'string' },
  },
});

interface Outcome {
  target: string;
  result?: FuzzResult;
  crashFile?: string;
  branches?: { covered: number; total: number; pct: number; files: Record<string, { covered: number; total: number; pct: number }> };
}

function corpusFor(name: string): string[] {
  return [seedsDir(name), crashesDir(name), workDir(name)].flatMap((d) => readInputs(d).map((i) => i.encoded));
}

/** Runs a worker; resolves with its `done` result, or with the failure that ended it. */
function runWorker(
  job: Record<string, unknown>,
  onMessage: (msg: { type: string; [k: string]: unknown }) => void,
): Promise<{ result?: unknown; failure?: string }> {
  return new Promise((resolve) => {
    // A worker does not inherit `--import tsx`'s loader on Node 20: it registers tsx itself.
    const entry = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER)}); })`;
    const worker = new Worker(entry, { eval: true, workerData: job, resourceLimits: { maxOldGenerationSizeMb: HEAP_MB } });
    let settled = false;
    const settle = (value: { result?: unknown; failure?: string }) => {
      if (settled) return;
      settled = true;
      clearInterval(watch);
      resolve(value);
    };
    let lastSign = Date.now();
    const watch = setInterval(() => {
      if (Date.now() - lastSign > HANG_MS) {
        void worker.terminate();
        settle({ failure: `hang: no progress for ${HANG_MS / 1000} s` });
      }
    }, 1000);
    worker.on('message', (msg: { type: string; result?: unknown; [k: string]: unknown }) => {
      lastSign = Date.now();
      if (msg.type === 'done') settle({ result: msg.result });
      else onMessage(msg);
    });
    worker.on('error', (err) => settle({ failure: `${err.name}: ${err.message}\n${err.stack ?? ''}` }));
    worker.on('exit', (code) => settle({ failure: `the worker exited with code ${code}` }));
  });
}

async function fuzzOne(name: string, seconds: number, seed: number): Promise<Outcome> {
  const outcome: Outcome = { target: name };
  const corpus = corpusFor(name);
  let lastBatch: readonly string[] = [];
  const newDir = values.save ? seedsDir(name) : workDir(name);
  console.log(`# ${name}: ${corpus.length} inputs to start from, ${seconds} s, seed ${seed}`);
  const run = await runWorker({ target: name, mode: 'fuzz', seconds, seed, corpus, include: join(ROOT, 'src') }, (msg) => {
    if (msg.type === 'batch') lastBatch = msg.encoded as string[];
    else if (msg.type === 'new') writeInput(newDir, msg.encoded as string);
    else if (msg.type === 'progress') {
      const s = msg.stats as FuzzResult;
      console.log(
        `  ${s.elapsed.toFixed(0)} s: ${s.execs} execs (${(s.execs / s.elapsed).toFixed(0)}/s), ${s.features} features, corpus ${s.corpus}`,
      );
    }
  });
  let crash: { input: string; message: string } | undefined;
  if (run.failure) {
    // A hang or an out-of-memory: find the input of the last batch that does it alone.
    console.log(`  ${run.failure.split('\n')[0]}; running the ${lastBatch.length} inputs of its batch one by one`);
    for (const input of lastBatch) {
      const alone = await runWorker({ target: name, mode: 'judge', corpus: [input] }, () => {});
      const error = alone.failure ?? (alone.result as { error?: string } | undefined)?.error;
      if (error) {
        crash = { input, message: alone.failure ? run.failure : error };
        break;
      }
    }
    crash ??= { input: lastBatch[0] ?? '""', message: `${run.failure} (no single input of the batch repeats it)` };
  } else {
    outcome.result = run.result as FuzzResult;
    crash = outcome.result.crash;
    const r = outcome.result;
    console.log(
      `  done: ${r.execs} execs in ${r.elapsed.toFixed(1)} s (${(r.execs / r.elapsed).toFixed(0)}/s), ${r.features} features, corpus ${r.corpus} (+${r.added})`,
    );
  }
  if (crash) {
    const dir = join(ROOT, '.fuzz', 'crashes', name);
    outcome.crashFile = writeInput(dir, crash.input);
    writeFileSync(outcome.crashFile.replace(/\.json$/, '.txt'), crash.message);
    console.log(`  CRASH (${relative(ROOT, outcome.crashFile)}):\n${crash.message}`);
  }
  return outcome;
}

/** Replays the corpus under c8 and reads the branch coverage of the target's files. */
async function measure(name: string): Promise<Outcome['branches']> {
  const target = await TARGETS[name]!();
  const dir = join(ROOT, '.fuzz', 'coverage', name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const c8 = join(ROOT, 'node_modules', 'c8', 'bin', 'c8.js');
  const include = target.files.flatMap((f) => ['--include', f]);
  const args = [
    c8,
    '--reporter=json-summary',
    '--reporter=text',
    `--report-dir=${dir}`,
    `--temp-directory=${join(dir, 'tmp')}`,
    ...include,
  ];
  args.push(process.execPath, '--import', 'tsx', join(ROOT, 'scripts', 'fuzz.ts'), '--replay', name);
  const res = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  process.stdout.write(res.stdout);
  const summary = JSON.parse(readFileSync(join(dir, 'coverage-summary.json'), 'utf8')) as Record<
    string,
    { branches: { covered: number; total: number; pct: number } }
  >;
  const files: Record<string, { covered: number; total: number; pct: number }> = {};
  for (const [file, s] of Object.entries(summary)) if (file !== 'total') files[relative(ROOT, file)] = s.branches;
  const total = summary.total!.branches;
  return { covered: total.covered, total: total.total, pct: total.pct, files };
}

async function replay(name: string): Promise<void> {
  const target = await TARGETS[name]!();
  await target.setup?.();
  const inputs = loadInputs([seedsDir(name), crashesDir(name), workDir(name)]);
  let refused = 0;
  for (const input of inputs) {
    try {
      await target.run(input);
    } catch {
      refused++;
    }
  }
  await target.teardown?.();
  console.log(`# ${name}: replayed ${inputs.length} inputs${refused ? `, ${refused} broke the oracle` : ''}`);
}

async function main(): Promise<number> {
  if (values.list) {
    for (const name of Object.keys(TARGETS)) {
      const t = await TARGETS[name]!();
      console.log(`${name.padEnd(16)} ${t.oracle}`);
    }
    return 0;
  }
  const [which] = positionals;
  if (!which || (which !== 'all' && !TARGETS[which])) {
    console.error(
      `usage: npm run fuzz -- TARGET|all [--seconds N] [--seed S] [--save] [--no-coverage]\ntargets: ${Object.keys(TARGETS).join(', ')}`,
    );
    return 2;
  }
  if (values.replay) {
    await replay(which);
    return 0;
  }
  const seconds = Number(values.seconds);
  const seed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);
  const names = which === 'all' ? Object.keys(TARGETS) : [which];
  const outcomes: Outcome[] = [];
  for (const name of names) {
    const outcome = await fuzzOne(name, seconds, seed);
    if (!values['no-coverage']) outcome.branches = await measure(name);
    if (outcome.branches)
      console.log(`  branch coverage of ${name}: ${outcome.branches.pct} % (${outcome.branches.covered}/${outcome.branches.total})`);
    outcomes.push(outcome);
  }
  if (values.json) writeFileSync(values.json, JSON.stringify(outcomes, null, 2));
  return outcomes.some((o) => o.crashFile) ? 1 : 0;
}

process.exitCode = await main();
