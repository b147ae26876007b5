/** bench/lib/paced.ts: how the benchmark pools its alternating latency runs (docs/PERFORMANCE.md). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { poolPacedRuns, type PacedRun } from '../../bench/lib/paced.ts';

function run(latenciesMs: number[], achievedRps = 100): PacedRun {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return {
    sent: sorted.length,
    ok: sorted.length,
    unexpected: 0,
    errors: 0,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    maxMs: at(1),
    achievedRps,
    latenciesMs: sorted,
  };
}

test('percentiles are taken over the latencies of all runs together', () => {
  // Run 1 has one 30 ms stall in 100 requests, which is its whole p99; runs 2 and 3 have none.
  const quiet = Array.from({ length: 100 }, (_, i) => 0.1 + i / 1000);
  const stalled = [...quiet.slice(0, 99), 30];
  const pooled = poolPacedRuns([run(stalled), run(quiet, 200), run(quiet, 300)]);
  assert.equal(run(stalled).p99Ms, 30);
  assert.ok(pooled.p99Ms < 1, `pooled p99 ${pooled.p99Ms}`);
  assert.equal(pooled.maxMs, 30);
  assert.deepEqual(pooled.roundP99Ms, [30, run(quiet).p99Ms, run(quiet).p99Ms]);
  assert.equal(pooled.rounds, 3);
  assert.equal(pooled.sent, 300);
  assert.equal(pooled.ok, 300);
  assert.equal(pooled.achievedRps, 200);
});

test('stalls in every run still show in the pooled p99', () => {
  const stalled = [...Array.from({ length: 98 }, () => 0.2), 40, 45];
  assert.ok(poolPacedRuns([run(stalled), run(stalled)]).p99Ms >= 40);
});
