/**
 * The synchronous per-account counter of a single process (src/http/rate-limiter-backend.ts): the
 * semantics of RateLimiterMemory, which test/http/conventions-rate-limit.test.ts checks end to end.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { FixedWindowCounter } from '../../src/http/rate-limiter-backend.ts';

test('FixedWindowCounter: a window per key from its first request; counts rejected requests too; resets when the window ends', () => {
  const counter = new FixedWindowCounter(10);
  const t0 = 1_000_000;
  assert.equal(counter.consume(7, t0), 1);
  assert.equal(counter.consume(7, t0 + 4000), 2);
  assert.equal(counter.consume(8, t0 + 4000), 1, 'another key has its own window');
  assert.equal(counter.consume(7, t0 + 9999), 3);
  assert.equal(counter.msBeforeNext(7, t0 + 9999), 1, 'Retry-After counts from the first request of the window');
  assert.equal(counter.msBeforeNext(8, t0 + 9999), 4001);
  assert.equal(counter.consume(7, t0 + 10_000), 1, 'a new window at its end');
  assert.equal(counter.msBeforeNext(7, t0 + 10_000), 10_000);
  assert.equal(counter.msBeforeNext(99, t0), 0, 'no window: nothing to wait for');
});

test('FixedWindowCounter answers as RateLimiterMemory does (consumed points and msBeforeNext)', async () => {
  const counter = new FixedWindowCounter(60);
  const memory = new RateLimiterMemory({ points: 3, duration: 60 });
  for (let i = 1; i <= 5; i++) {
    const now = Date.now();
    const consumed = counter.consume('k', now);
    const res = await memory.consume('k').catch((r: RateLimiterRes) => r);
    assert.equal(consumed, res.consumedPoints);
    assert.ok(
      Math.abs(counter.msBeforeNext('k', now) - res.msBeforeNext) <= 20,
      `${counter.msBeforeNext('k', now)} vs ${res.msBeforeNext}`,
    );
  }
});
