import type { FastifyReply, FastifyRequest } from 'fastify';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { FixedWindowCounter, type RateCounter } from '../rate-limiter-backend.ts';
import { HttpError, setWireHeader } from '../wire.ts';

/** What the rate limit counts for metrics (src/http/metrics.ts): 429s answered since start. */
export interface RateLimitStats {
  rejected: number;
}

/**
 * The per-account rate limit (API.md §6): one allowance per account, shared by its tokens and
 * routes, `limit` requests per `windowSeconds` window, never more than `limit` in one window.
 * Every authenticated request costs one unit, errors included.
 *
 * Headers: X-Rate-Limit-Limit, X-Rate-Limit-Remaining (left after this request) and
 * X-Rate-Limit-Reset, computed as Yii2 does: floor((limit - remaining) × window / limit) seconds,
 * which gives the sample's 0 for 60 per second. Over the limit: 429 with Remaining 0,
 * Reset = window and Retry-After = seconds until the window frees up.
 *
 * `limiter` (default: a FixedWindowCounter of this process) is either the synchronous counter,
 * answered within the hook, or a rate-limiter-flexible limiter (Redis, a `serve --workers` primary).
 */
export function createRateLimit(limit: number, windowSeconds: number, limiter?: RateCounter, stats?: RateLimitStats) {
  const bucket = limiter ?? new FixedWindowCounter(windowSeconds);
  const setHeaders = (reply: FastifyReply, remaining: number, reset: number) => {
    setWireHeader(reply, 'X-Rate-Limit-Limit', String(limit));
    setWireHeader(reply, 'X-Rate-Limit-Remaining', String(remaining));
    setWireHeader(reply, 'X-Rate-Limit-Reset', String(reset));
  };
  const allow = (reply: FastifyReply, remaining: number, done: (err?: Error) => void) => {
    try {
      setHeaders(reply, remaining, Math.floor(((limit - remaining) * windowSeconds) / limit));
    } catch (err) {
      return done(err as Error);
    }
    done();
  };
  const reject = (reply: FastifyReply, msBeforeNext: number, done: (err?: Error) => void) => {
    try {
      setHeaders(reply, 0, windowSeconds);
    } catch (e) {
      return done(e as Error);
    }
    if (stats) stats.rejected++;
    const retryAfter = Math.max(1, Math.ceil(msBeforeNext / 1000));
    done(new HttpError(429, 'Rate limit exceeded.', { 'Retry-After': String(retryAfter) }));
  };
  if (bucket instanceof FixedWindowCounter) {
    // Counted and answered within the hook: no promise per request.
    return function rateLimit(request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void {
      const key = request.accountId;
      const consumed = bucket.consume(key);
      if (consumed <= limit) allow(reply, limit - consumed, done);
      else reject(reply, bucket.msBeforeNext(key), done);
    };
  }
  // A callback hook: no async function (and its promise) per request on top of the limiter's own.
  return function rateLimit(request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void {
    bucket.consume(String(request.accountId), 1).then(
      (res) => allow(reply, Math.max(res.remainingPoints, 0), done),
      (err: unknown) => {
        if (!(err instanceof RateLimiterRes)) return done(err as Error);
        reject(reply, err.msBeforeNext, done);
      },
    );
  };
}
