import { createRequire } from 'node:module';
import type { Redis as RedisClient } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible';

/** Where rate-limit counters live, and how to check on and release it. */
export interface RateLimiterBackend {
  limiter: RateLimiterAbstract;
  /** 'memory' (one process) or 'redis' (shared by every instance). */
  kind: 'memory' | 'redis';
  /** Resolves when the backing store answers (readiness); always resolves for memory. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The rate-limit counters (CONVENTIONS §8). Without `redisUrl` they live in this process. With it,
 * one atomic Redis counter per account and window is shared by every instance; when Redis is
 * unreachable each instance falls back to its own memory (logging one warning), and goes back to
 * Redis by itself when Redis returns.
 */
export function createRateLimiterBackend(
  limit: number,
  windowSeconds: number,
  redisUrl: string | undefined,
  keyPrefix: string,
  log: FastifyBaseLogger,
): RateLimiterBackend {
  const memory = new RateLimiterMemory({ points: limit, duration: windowSeconds, keyPrefix });
  if (!redisUrl) {
    return { limiter: memory, kind: 'memory', ping: async () => {}, close: async () => {} };
  }
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
    async close() {
      redis.disconnect();
    },
  };
}
