import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A submit rate limit shared by the carriers (SMPP, the HTTP carriers): a token bucket that
 * refills at `rate` tokens per second and holds 50 ms of the rate (at least one token), so a
 * carrier never sends more than `rate` submits in any second beyond a 50 ms burst. Waiters are
 * served in order of arrival. Real time (performance.now), since it paces real sockets.
 */
export class TokenBucket {
  private tokens: number;
  private at = performance.now();
  private chain: Promise<void> = Promise.resolve();
  /** Capacity: 50 ms of the rate, at least one. */
  readonly burst: number;

  /** @param rate tokens per second, > 0. @throws RangeError for a rate that is not a positive number. */
  constructor(readonly rate: number) {
    if (!(rate > 0) || !Number.isFinite(rate)) throw new RangeError('rate must be a positive number');
    this.burst = Math.max(1, rate / 20);
    this.tokens = this.burst;
  }

  /** Resolves when a token is taken (in order of arrival). */
  take(): Promise<void> {
    const next = this.chain.then(async () => {
      for (;;) {
        const now = performance.now();
        this.tokens = Math.min(this.burst, this.tokens + ((now - this.at) * this.rate) / 1000);
        this.at = now;
        if (this.tokens >= 1) {
          this.tokens -= 1;
          return;
        }
        await sleep(Math.max(1, ((1 - this.tokens) * 1000) / this.rate));
      }
    });
    this.chain = next;
    return next;
  }
}
