import type { FastifyReply, FastifyRequest } from 'fastify';
import { RateLimiterMemory, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { HttpError, setWireHeader } from '../wire.ts';

/** What the rate limit counts for metrics (src/http/metrics.ts): 429s answered since start. */
export interface RateLimitStats {
  rejected: number;
}

/**
 * The per-account rate limit (CONVENTIONS §8): one allowance per account, shared by its tokens and
 * routes, `limit` requests per `windowSeconds` window, never more than `limit` in one window.
 * Every authenticated request costs one unit, errors included.
 *
 * Headers: X-Rate-Limit-Limit, X-Rate-Limit-Remaining (left after this request) and
 * X-Rate-Limit-Reset, computed as Yii2 does: floor((limit - remaining) × window / limit) seconds,
 * which gives the sample's 0 for 60 per second. Over the limit: 429 with Remaining 0,
 * Reset = window and Retry-After = seconds until the window frees up.
 */
export function createRateLimit(limit: number, windowSeconds: number, limiter?: RateLimiterAbstract, stats?: RateLimitStats) {
  const bucket = limiter ?? new RateLimiterMemory({ points: limit, duration: windowSeconds });
  const setHeaders = (reply: FastifyReply, remaining: number, reset: number) => {
    setWireHeader(reply, 'X-Rate-Limit-Limit', String(limit));
    setWireHeader(reply, 'X-Rate-Limit-Remaining', String(remaining));
    setWireHeader(reply, 'X-Rate-Limit-Reset', String(reset));
  };
  // A callback hook: no async function (and its promise) per request on top of the limiter's own.
  return function rateLimit(request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void {
    bucket.consume(String(request.accountId), 1).then(
      (res) => {
        const remaining = Math.max(res.remainingPoints, 0);
        try {
          setHeaders(reply, remaining, Math.floor(((limit - remaining) * windowSeconds) / limit));
        } catch (err) {
          return done(err as Error);
        }
        done();
      },
      (err: unknown) => {
        if (!(err instanceof RateLimiterRes)) return done(err as Error);
        try {
          setHeaders(reply, 0, windowSeconds);
        } catch (e) {
          return done(e as Error);
        }
        if (stats) stats.rejected++;
        const retryAfter = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
        done(new HttpError(429, 'Rate limit exceeded.', { 'Retry-After': String(retryAfter) }));
      },
    );
  };
}
