/**
 * The fuzz loop (docs/RELIABILITY.md "Fuzzing"): coverage-guided, in the manner of libFuzzer, on
 * V8's own block coverage (fuzz/coverage.ts).
 *
 * Each round runs a batch of inputs: half generated afresh from the target's grammar (its
 * fast-check arbitrary), half mutated from the corpus (fuzz/mutate.ts). When the batch reached a
 * block of our code never reached before, its inputs are run again one by one to find which did,
 * and those join the corpus. Taking coverage per batch, not per input, keeps the loop fast; the
 * rerun costs only when something new was found, which grows rare as the run goes on.
 *
 * The loop stops at the first input that breaks the oracle (a throw from the target's `run`) or
 * that takes longer than the target's `maxMs`, confirmed by running it again.
 */
import fc from 'fast-check';
import { CoverageFeedback } from './coverage.ts';
import { Mutator, Rng } from './mutate.ts';
import { encodeInput, type FuzzTarget, type FuzzValue } from './target.ts';

export interface FuzzOptions {
  /** How long to fuzz generated inputs, in seconds, counted after the corpus has been run (at least one batch runs). */
  readonly seconds: number;
  /** The random seed (a run with the same seed and corpus makes the same inputs). */
  readonly seed: number;
  /** Inputs to start from (the committed seeds, past crashes, the working corpus). */
  readonly corpus: readonly FuzzValue[];
  /** Which scripts' coverage counts: their URL contains this. */
  readonly include: string;
  /** Called before each batch runs, with the batch's inputs encoded (a hang names its batch). */
  readonly onBatch?: (encoded: readonly string[]) => void;
  /** Called with each input that reached new code. */
  readonly onNew?: (encoded: string) => void;
  /** Called every few seconds with the running figures. */
  readonly onProgress?: (stats: FuzzStats) => void;
}

export interface FuzzStats {
  /** Inputs run (seeds included). */
  execs: number;
  /** Seconds since the loop began. */
  elapsed: number;
  /** Blocks and functions of our code reached. */
  features: number;
  /** The corpus's size (seeds plus what this run added). */
  corpus: number;
  /** Inputs this run added to the corpus. */
  added: number;
}

export interface FuzzCrash {
  /** The input, encoded as a corpus file holds it. */
  readonly input: string;
  /** What went wrong: the error's name, message and stack, or the time it took. */
  readonly message: string;
}

export interface FuzzResult extends FuzzStats {
  crash?: FuzzCrash;
}

const BATCH = 16;
const PROGRESS_MS = 5000;

function describe(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}\n${err.stack ?? ''}`;
  return `thrown value: ${String(err)}`;
}

/** Runs one input; returns the crash it caused, or its duration in ms. */
async function runOne<T extends FuzzValue>(target: FuzzTarget<T>, input: T): Promise<{ error: string } | { ms: number }> {
  const t0 = performance.now();
  try {
    await target.run(input);
  } catch (err) {
    return { error: describe(err) };
  }
  return { ms: performance.now() - t0 };
}

/**
 * Checks one input against the oracle and the time bound; a slow input is run twice more and
 * counts only when every run is slow (a GC pause or a busy machine is not the parser's fault).
 */
export async function judge<T extends FuzzValue>(target: FuzzTarget<T>, input: T): Promise<string | undefined> {
  const maxMs = target.maxMs ?? 1000;
  let best = Infinity;
  for (let attempt = 0; attempt < 3; attempt++) {
    const outcome = await runOne(target, input);
    if ('error' in outcome) return outcome.error;
    best = Math.min(best, outcome.ms);
    if (best <= maxMs) return undefined;
  }
  return `slow input: took ${best.toFixed(0)} ms at best of 3 runs (bound ${maxMs} ms)`;
}

/** Runs `options.corpus`, then fuzzes `target` for `options.seconds`; `setup` must have run. */
export async function fuzz<T extends FuzzValue>(target: FuzzTarget<T>, options: FuzzOptions): Promise<FuzzResult> {
  const rng = new Rng(options.seed);
  const mutator = new Mutator(rng, target.dictionary ?? []);
  const coverage = new CoverageFeedback(options.include);
  const corpus: T[] = [];
  const stats: FuzzStats = { execs: 0, elapsed: 0, features: 0, corpus: 0, added: 0 };
  const began = performance.now();
  let lastProgress = began;
  let fresh: T[] = [];
  let sampleSeed = options.seed;

  const finish = async (crash?: FuzzCrash): Promise<FuzzResult> => {
    await coverage.stop();
    stats.elapsed = (performance.now() - began) / 1000;
    stats.features = coverage.features;
    stats.corpus = corpus.length;
    return crash ? { ...stats, crash } : { ...stats };
  };

  await coverage.start();
  // The seeds first, one by one: each is checked, and each that reaches something joins.
  for (const seed of options.corpus as readonly T[]) {
    await coverage.reset();
    const error = await judge(target, seed);
    stats.execs++;
    if (error) return finish({ input: encodeInput(seed), message: error });
    if ((await coverage.take()) > 0 || corpus.length === 0) corpus.push(seed);
  }

  // The fuzzing time starts after the seeds, and one batch always runs: on a loaded machine the seeds
  // alone (the body target's go through the whole app) can outlast a short run.
  const deadline = performance.now() + options.seconds * 1000;
  do {
    const batch: T[] = [];
    for (let i = 0; i < BATCH; i++) {
      if (corpus.length > 0 && rng.chance(0.5)) {
        batch.push(mutator.mutate(rng.pick(corpus), () => rng.pick(corpus) ?? '') as T);
      } else {
        if (fresh.length === 0) fresh = fc.sample(target.arbitrary, { numRuns: 64, seed: sampleSeed++ });
        batch.push(fresh.pop()!);
      }
    }
    const encoded = batch.map(encodeInput);
    options.onBatch?.(encoded);
    await coverage.reset();
    for (let i = 0; i < batch.length; i++) {
      const outcome = await runOne(target, batch[i]!);
      stats.execs++;
      const slow = 'ms' in outcome && outcome.ms > (target.maxMs ?? 1000);
      if ('error' in outcome || slow) {
        const error = await judge(target, batch[i]!);
        if (error) return finish({ input: encoded[i]!, message: error });
      }
    }
    if ((await coverage.take(false)) > 0) {
      // Something in the batch was new: find which, one input at a time.
      for (let i = 0; i < batch.length; i++) {
        await coverage.reset();
        await runOne(target, batch[i]!);
        stats.execs++;
        if ((await coverage.take()) > 0) {
          corpus.push(batch[i]!);
          stats.added++;
          options.onNew?.(encoded[i]!);
        }
      }
    }
    const now = performance.now();
    if (now - lastProgress >= PROGRESS_MS) {
      lastProgress = now;
      stats.elapsed = (now - began) / 1000;
      stats.features = coverage.features;
      stats.corpus = corpus.length;
      options.onProgress?.({ ...stats });
    }
  } while (performance.now() < deadline);
  return finish();
}
