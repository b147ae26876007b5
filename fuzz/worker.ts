/**
 * The fuzz loop's thread (scripts/fuzz.ts starts it with a heap limit and watches it for hangs).
 * Messages to the parent: `batch` (the inputs about to run, so a hang or an out-of-memory can be
 * traced to one), `new`, `progress`, and `done` with the result.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { fuzz, judge } from './engine.ts';
import { TARGETS } from './targets/index.ts';
import { decodeInput, type FuzzValue } from './target.ts';

interface Job {
  readonly target: string;
  readonly mode: 'fuzz' | 'judge';
  readonly seconds: number;
  readonly seed: number;
  readonly corpus: readonly string[];
  readonly include: string;
}

const job = workerData as Job;
const port = parentPort!;
const target = await TARGETS[job.target]!();
await target.setup?.();
if (job.mode === 'judge') {
  // One input, to tell which of a batch hung or ran out of memory.
  const error = await judge(target, decodeInput(job.corpus[0]!));
  port.postMessage({ type: 'done', result: { error } });
} else {
  const corpus: FuzzValue[] = job.corpus.map(decodeInput);
  const result = await fuzz(target, {
    seconds: job.seconds,
    seed: job.seed,
    corpus,
    include: job.include,
    onBatch: (encoded) => port.postMessage({ type: 'batch', encoded }),
    onNew: (encoded) => port.postMessage({ type: 'new', encoded }),
    onProgress: (stats) => port.postMessage({ type: 'progress', stats }),
  });
  port.postMessage({ type: 'done', result });
}
await target.teardown?.();
