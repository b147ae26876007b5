/**
 * The fuzz targets in CI (docs/RELIABILITY.md "Fuzzing"): for every target of fuzz/targets, its
 * committed seeds and every input that once broke it (fuzz/crashes/NAME) are replayed through its
 * oracle and time bound, then it is fuzzed for a short, fixed time from that corpus with a fixed
 * seed (MSGSVC_FUZZ_SECONDS, default 3; MSGSVC_FUZZ_SEED to vary it). A crash prints the input as a
 * corpus file holds it: save it under fuzz/crashes/NAME/ with the fix.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { crashesDir, readInputs, ROOT, seedsDir } from '../../fuzz/corpus.ts';
import { fuzz, judge } from '../../fuzz/engine.ts';
import { TARGETS } from '../../fuzz/targets/index.ts';
import { decodeInput } from '../../fuzz/target.ts';

const SECONDS = Number(process.env.MSGSVC_FUZZ_SECONDS ?? 3);
const SEED = Number(process.env.MSGSVC_FUZZ_SEED ?? 20261128);

test('every target has a seed corpus', () => {
  for (const name of Object.keys(TARGETS)) assert.ok(readInputs(seedsDir(name)).length >= 3, `fuzz/corpus/${name} has fewer than 3 seeds`);
});

for (const [name, load] of Object.entries(TARGETS)) {
  test(`fuzz target ${name}: seeds and past crashes pass, then ${SECONDS} s of fuzzing finds nothing`, async () => {
    const target = await load();
    await target.setup?.();
    try {
      const inputs = [...readInputs(seedsDir(name)), ...readInputs(crashesDir(name))];
      for (const { file, encoded } of inputs) {
        const error = await judge(target, decodeInput(encoded));
        assert.equal(error, undefined, `${file.slice(ROOT.length + 1)}: ${error}`);
      }
      const result = await fuzz(target, {
        seconds: SECONDS,
        seed: SEED,
        corpus: inputs.map((i) => decodeInput(i.encoded)),
        include: join(ROOT, 'src'),
      });
      assert.equal(result.crash, undefined, result.crash && `input ${result.crash.input}\n${result.crash.message}`);
      assert.ok(result.execs > inputs.length, 'the loop ran no generated input');
    } finally {
      await target.teardown?.();
    }
  });
}
