/**
 * Coverage feedback for the fuzz engine, read from V8 itself: precise block coverage through the
 * inspector protocol (`Profiler.takePreciseCoverage`, which also resets the counters, so each take
 * tells what ran since the last one).
 *
 * V8 reports a function as nested ranges with counts, and leaves out a block whose count equals
 * its parent's. So "a block ran" cannot be read from the ranges listed; it is read from the ranges
 * *not* reported as zero. For each function of our own source this keeps the set of ranges that
 * have never run, and an input is new when it ran one of them (or a function never seen before).
 */
import { Session } from 'node:inspector/promises';

interface Range {
  startOffset: number;
  endOffset: number;
  count: number;
}
interface FunctionCoverage {
  functionName: string;
  ranges: Range[];
}
interface ScriptCoverage {
  url: string;
  functions: FunctionCoverage[];
}

export class CoverageFeedback {
  readonly #session = new Session();
  /** Per function (url#start#end of its outer range): the keys of ranges that have never run. */
  readonly #unseen = new Map<string, Set<string>>();
  readonly #ranges = new Map<string, Range>();
  #features = 0;

  /** @param include which scripts count: their URL contains this (our own source folder). */
  constructor(private readonly include: string) {}

  async start(): Promise<void> {
    this.#session.connect();
    await this.#session.post('Profiler.enable');
    await this.#session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: true });
  }

  async stop(): Promise<void> {
    await this.#session.post('Profiler.stopPreciseCoverage');
    this.#session.disconnect();
  }

  /** Blocks and functions reached so far (grows as inputs reach new code). */
  get features(): number {
    return this.#features;
  }

  /** Discards the counts since the last take (what ran outside an input). */
  async reset(): Promise<void> {
    await this.#session.post('Profiler.takePreciseCoverage');
  }

  /**
   * Reads what ran since the last take; returns how many never-reached blocks it reached. With
   * `commit` false they stay "never reached" (the batch's look before its inputs are told apart).
   */
  async take(commit = true): Promise<number> {
    const { result } = (await this.#session.post('Profiler.takePreciseCoverage')) as { result: ScriptCoverage[] };
    let fresh = 0;
    for (const script of result) {
      if (!script.url.includes(this.include) || script.url.includes('/node_modules/')) continue;
      for (const fn of script.functions) {
        const outer = fn.ranges[0];
        if (!outer || outer.count === 0) continue;
        const fnKey = `${script.url}#${outer.startOffset}#${outer.endOffset}`;
        const zeros = fn.ranges.slice(1).filter((r) => r.count === 0);
        let unseen = this.#unseen.get(fnKey);
        if (!unseen) {
          fresh++;
          if (!commit) continue;
          unseen = new Set();
          for (const r of zeros) {
            const key = `${fnKey}#${r.startOffset}#${r.endOffset}`;
            unseen.add(key);
            this.#ranges.set(key, r);
          }
          this.#unseen.set(fnKey, unseen);
          this.#features++;
          continue;
        }
        if (commit) {
          // A block nested in one that had never run is reported only once its parent runs: it
          // joins the never-run set then, or its first run would go unnoticed.
          for (const r of zeros) {
            const key = `${fnKey}#${r.startOffset}#${r.endOffset}`;
            if (this.#ranges.has(key)) continue;
            this.#ranges.set(key, r);
            unseen.add(key);
          }
        }
        if (unseen.size === 0) continue;
        for (const key of unseen) {
          const r = this.#ranges.get(key)!;
          // Not run in this take if it, or a range around it, is reported as zero.
          const idle = zeros.some((z) => z.startOffset <= r.startOffset && r.endOffset <= z.endOffset);
          if (idle) continue;
          fresh++;
          if (!commit) continue;
          unseen.delete(key);
          this.#features++;
        }
      }
    }
    return fresh;
  }
}
