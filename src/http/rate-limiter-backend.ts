import { createRequire } from 'node:module';
import type { Redis as RedisClient } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';
import { RateLimiterCluster, RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';

/**
 * A plain, synchronous per-key counter with the semantics of rate-limiter-flexible's
 * RateLimiterMemory as the rate limit uses it (API.md §6): a fixed window per key that starts
 * at the key's first request and lasts `windowSeconds`; every consume counts, rejected ones too.
 * It answers at once, without a promise or a timer per request (one process only).
 */
export class FixedWindowCounter {
  readonly #windowMs: number;
  readonly #windows = new Map<string | number, { count: number; resetAt: number }>();
  #nextSweep = 0;

  constructor(windowSeconds: number) {
    this.#windowMs = windowSeconds * 1000;
  }

  /** Counts one request of `key`; returns the requests counted in its current window, this one included. */
  consume(key: string | number, now = Date.now()): number {
    if (now >= this.#nextSweep) this.#sweep(now);
    const window = this.#windows.get(key);
    if (window === undefined) {
      this.#windows.set(key, { count: 1, resetAt: now + this.#windowMs });
      return 1;
    }
    if (now >= window.resetAt) {
      window.count = 1;
      window.resetAt = now + this.#windowMs;
      return 1;
    }
    return ++window.count;
  }

  /** Milliseconds until `key`'s current window ends (0 when it has none). */
  msBeforeNext(key: string | number, now = Date.now()): number {
    const window = this.#windows.get(key);
    return window === undefined ? 0 : Math.max(window.resetAt - now, 0);
  }

  /** Forgets ended windows, at most once per window length, so idle keys do not accumulate. */
  #sweep(now: number): void {
    for (const [key, window] of this.#windows) if (now >= window.resetAt) this.#windows.delete(key);
    this.#nextSweep = now + Math.max(this.#windowMs, 1000);
  }
}

/** What the rate-limit hook counts with: the synchronous counter, or a rate-limiter-flexible limiter. */
export type RateCounter = FixedWindowCounter | Pick<RateLimiterAbstract, 'consume'>;

/** Where rate-limit counters live, and how to check on and release it. */
export interface RateLimiterBackend {
  limiter: RateCounter;
  /**
   * 'memory' (one process), 'redis' (shared by every instance) or 'cluster' (shared by the workers
   * of one `serve --workers` host, kept by its primary).
   */
  kind: 'memory' | 'redis' | 'cluster';
  /** Resolves when the backing store answers (readiness); always resolves for memory and cluster. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * How long a `serve --workers` worker waits for the primary's count before it counts the request
 * in its own memory instead (and logs one warning): the primary's event loop answers in well under
 * a millisecond unless it is blocked, and a request should not wait for it longer than for Redis.
 */
export const CLUSTER_RATE_TIMEOUT_MS = 500;

/**
 * The rate-limit counters (API.md §6). Without `redisUrl` they live in this process, or, in a
 * `serve --workers` worker (`options.cluster`), in the primary, which keeps one exact counter per
 * account for all its workers over IPC (rate-limiter-flexible's RateLimiterCluster; the primary
 * runs RateLimiterClusterMaster, src/cluster.ts). With `redisUrl`, one atomic Redis counter per
 * account and window is shared by every instance and worker; when Redis (or the primary) does not
 * answer, each process falls back to its own memory (logging one warning), and goes back by itself
 * when it answers again.
 */
export function createRateLimiterBackend(
  limit: number,
  windowSeconds: number,
  redisUrl: string | undefined,
  keyPrefix: string,
  log: FastifyBaseLogger,
  options: { cluster?: boolean } = {},
): RateLimiterBackend {
  if (!redisUrl && options.cluster) return clusterBackend(limit, windowSeconds, keyPrefix, log);
  if (!redisUrl) {
    return { limiter: new FixedWindowCounter(windowSeconds), kind: 'memory', ping: async () => {}, close: async () => {} };
  }
  const memory = new RateLimiterMemory({ points: limit, duration: windowSeconds, keyPrefix });
  // Loaded only when Redis is configured: a single instance does not carry the client (about 12 MB of RSS).
  const { Redis } = createRequire(import.meta.url)('ioredis') as { Redis: typeof RedisClient };
  const redis = new Redis(redisUrl, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 1000,
    commandTimeout: 500,
    // A command caught by a dropped connection has already been answered from the memory
    // fallback; replaying it after the reconnect would count that request twice.
    autoResendUnfulfilledCommands: false,
    retryStrategy: (times) => Math.min(100 * times, 2000),
  });
  let degraded = false;
  redis.on('error', (err: Error) => {
    if (degraded) return;
    degraded = true;
    log.warn({ err: { message: err.message } }, 'Redis unreachable: rate limit falls back to per-instance memory until it returns');
  });
  redis.on('ready', () => {
    if (!degraded) return;
    degraded = false;
    log.info('Redis reachable again: rate limit is shared across instances');
  });
  const limiter = new RateLimiterRedis({
    storeClient: redis,
    points: limit,
    duration: windowSeconds,
    keyPrefix,
    rejectIfRedisNotReady: true,
    insuranceLimiter: memory,
  });
  return {
    limiter,
    kind: 'redis',
    async ping() {
      await redis.ping();
    },
    close() {
      redis.disconnect();
      return Promise.resolve();
    },
  };
}

/**
 * A worker's counters kept by the primary. The library's worker rejects with a plain Error when the
 * primary has not answered within `timeoutMs` (and drops the primary's late answer, which has
 * counted the request there); that request is then counted in this worker's memory, as the Redis
 * backend does when Redis is away, so a blocked primary never turns requests into 500s.
 */
function clusterBackend(limit: number, windowSeconds: number, keyPrefix: string, log: FastifyBaseLogger): RateLimiterBackend {
  const shared = new RateLimiterCluster({ points: limit, duration: windowSeconds, keyPrefix, timeoutMs: CLUSTER_RATE_TIMEOUT_MS });
  const memory = new RateLimiterMemory({ points: limit, duration: windowSeconds, keyPrefix });
  let degraded = false;
  const answered = (res: RateLimiterRes) => {
    if (degraded) {
      degraded = false;
      log.info('the primary answers again: rate limit is shared by the workers');
    }
    return res;
  };
  const failed = (err: unknown, key: string | number, points: number | undefined) => {
    if (err instanceof RateLimiterRes) {
      answered(err);
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- the library's answer for a refused request, passed on as is
      throw err;
    }
    if (!degraded) {
      degraded = true;
      log.warn(
        { err: { message: (err as Error).message } },
        'the primary did not answer: rate limit falls back to per-worker memory until it does',
      );
    }
    return memory.consume(key, points);
  };
  return {
    limiter: {
      consume: (key: string | number, points?: number) =>
        shared.consume(key, points).then(answered, (err: unknown) => failed(err, key, points)),
    },
    kind: 'cluster',
    ping: async () => {},
    close: async () => {},
  };
}
