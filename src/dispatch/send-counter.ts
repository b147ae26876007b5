import { createRequire } from 'node:module';
import type { Redis as RedisClient } from 'ioredis';

/**
 * MaxPerSecond (API.md §16): how many messages of an account went to carriers in the current
 * second, so that a dispatcher claims no more of them than the account's `max_per_second` allows.
 *
 * A FIXED WINDOW per account, one per second of the dispatcher's clock (window = ⌊now ms / 1000⌋),
 * the model of the HTTP rate limit's counters (src/http/rate-limiter-backend.ts). A dispatcher
 * TAKES a grant before it claims (`take`: for each account, the room left in the window, at most
 * what it asks), claims at most that many of the account's messages, then GIVES BACK what it did
 * not use (`SendGrants.giveBack`: messages it did not claim, or claimed and did not hand to a
 * carrier, such as held by quiet hours). Taking is atomic per window, so dispatchers sharing a
 * counter never grant more than the cap between them. Messages not granted stay Queued, untouched
 * (no attempt spent), and are claimed in the next second. Being fixed windows, a cap of n lets up
 * to 2n go within a second that straddles two windows (n at the end of one, n at the start of the
 * next), never more than n within one window. A sub-account's MaxPerSecond is its own, as its
 * MaxPerDay is: its messages do not count against its parent's.
 *
 * Where the counts live:
 * - without Redis (createMemorySendCounter): in this process, so the cap holds PER PROCESS: N
 *   dispatcher processes on one database may send up to N × MaxPerSecond of an account's messages
 *   per second. (`serve --workers` runs one dispatcher, in the primary, so one host is one process.)
 * - with Redis (REDIS_URL, createRedisSendCounter): one hash per second, shared by every instance,
 *   so the cap holds across all of them. When Redis does not answer, each process counts in its own
 *   memory (logging one warning) until it answers again, as the rate limit does: the cap then holds
 *   per process for that time.
 *
 * The window follows each process's clock: instances on hosts whose clocks differ by d ms share a
 * window for all but d ms of each second.
 */
export interface SendCounter {
  /**
   * Takes room in `window` (⌊epoch ms / 1000⌋) for each request: at most `want`, and no more than
   * `cap` minus what was taken in the window so far. Resolves to the grants (0: none left).
   */
  take<K extends SendKey>(window: number, requests: readonly SendRequest<K>[]): Promise<SendGrants<K>>;
  /** 'memory' (this process) or 'redis' (shared by every instance). */
  readonly kind: 'memory' | 'redis';
  close(): Promise<void>;
}

/** What one `take` granted, and the way to give back what was not used. */
export interface SendGrants<K extends SendKey = number> {
  readonly window: number;
  /** Messages granted by account (every account asked for, 0 included). */
  readonly byAccount: ReadonlyMap<K, number>;
  /** Gives back unused room to where it was taken from (nothing once the window has ended). Never throws. */
  giveBack(unused: ReadonlyMap<K, number>): Promise<void>;
}

/**
 * What a count is kept for: an account (its id), or one account number (`n:{account id}:{digits}`,
 * docs/API.md §17's per-number MaxPerSecond).
 */
export type SendKey = number | string;

/** One account's (or number's) request to a SendCounter: `want` messages now, its MaxPerSecond `cap`. */
export interface SendRequest<K extends SendKey = number> {
  account: K;
  want: number;
  cap: number;
}

/** The window (a second of the clock) an instant in epoch ms falls in. */
export function sendWindow(nowMs: number): number {
  return Math.floor(nowMs / 1000);
}

/** The counter of this process only (see SendCounter: the cap then holds per process). */
export function createMemorySendCounter(): SendCounter {
  let current = -1;
  let used = new Map<SendKey, number>();
  return {
    kind: 'memory',
    take<K extends SendKey>(window: number, requests: readonly SendRequest<K>[]): Promise<SendGrants<K>> {
      // Only the current window is kept: another one (the next second, or an earlier one after the
      // clock was set back) starts empty.
      if (window !== current) {
        current = window;
        used = new Map();
      }
      const counts = used;
      const byAccount = new Map<K, number>();
      for (const r of requests) {
        const taken = counts.get(r.account) ?? 0;
        const grant = Math.max(0, Math.min(r.want, r.cap - taken));
        if (grant > 0) counts.set(r.account, taken + grant);
        byAccount.set(r.account, grant);
      }
      return Promise.resolve({
        window,
        byAccount,
        giveBack(unused) {
          // Only into the window it was taken from, while it is still the current one.
          if (counts === used) for (const [account, n] of unused) if (n > 0) used.set(account, Math.max(0, (used.get(account) ?? 0) - n));
          return Promise.resolve();
        },
      });
    },
    close: () => Promise.resolve(),
  };
}

// KEYS[1]: the window's hash (field: account id, value: taken). ARGV: the hash's time to live in
// ms, then (account, want, cap) per request. Returns the grants in the requests' order. One script,
// so a take is atomic with respect to every other dispatcher's.
const TAKE = `
local out = {}
local any = false
for i = 2, #ARGV, 3 do
  local taken = tonumber(redis.call('HGET', KEYS[1], ARGV[i]) or '0')
  local grant = math.min(tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]) - taken)
  if grant > 0 then
    redis.call('HINCRBY', KEYS[1], ARGV[i], grant)
    any = true
  else
    grant = 0
  end
  out[#out + 1] = grant
end
if any then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return out`;

// KEYS[1]: the window's hash. ARGV: (account, n) pairs. Nothing when the hash is gone (the window
// has expired): a give-back must not recreate it without its time to live.
const GIVE_BACK = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
for i = 1, #ARGV, 2 do redis.call('HINCRBY', KEYS[1], ARGV[i], -tonumber(ARGV[i + 1])) end
return 1`;

type ScriptedRedis = RedisClient & {
  sendTake(key: string, ...args: (string | number)[]): Promise<number[]>;
  sendGiveBack(key: string, ...args: (string | number)[]): Promise<number>;
};

/**
 * The counter shared by every instance through Redis at `url`: one hash per window, `{prefix}:{window}`,
 * expiring 10 s after its last grant (long after its second is over, so a slow give-back still finds it).
 * Falls back to this process's memory while Redis does not answer (see SendCounter).
 * @param options.commandTimeoutMs how long a round waits for Redis before counting in memory (default 500 ms).
 */
export function createRedisSendCounter(
  url: string,
  prefix: string,
  log: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void },
  options: { commandTimeoutMs?: number } = {},
): SendCounter {
  const memory = createMemorySendCounter();
  let redis: ScriptedRedis | undefined;
  let degraded = false;
  // Loaded only when Redis is configured, as the rate limit's client is.
  const connect = (): ScriptedRedis => {
    if (redis) return redis;
    const { Redis } = createRequire(import.meta.url)('ioredis') as { Redis: typeof RedisClient };
    const client = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 1000,
      commandTimeout: options.commandTimeoutMs ?? 500,
      // A take caught by a dropped connection was answered from memory; replaying it would count twice.
      autoResendUnfulfilledCommands: false,
      retryStrategy: (times) => Math.min(100 * times, 2000),
    });
    client.defineCommand('sendTake', { numberOfKeys: 1, lua: TAKE });
    client.defineCommand('sendGiveBack', { numberOfKeys: 1, lua: GIVE_BACK });
    client.on('error', (err: Error) => fellBack(err));
    client.on('ready', () => {
      if (!degraded) return;
      degraded = false;
      log.info({}, 'Redis reachable again: MaxPerSecond is shared across instances');
    });
    return (redis = client as ScriptedRedis);
  };
  const fellBack = (err: unknown) => {
    if (degraded) return;
    degraded = true;
    log.warn(
      { err: { message: err instanceof Error ? err.message : String(err) } },
      'Redis unreachable: MaxPerSecond is counted per instance until it returns',
    );
  };
  const keyOf = (window: number) => `${prefix}:${window}`;
  // The first take waits for the connection (up to the command timeout) rather than counting in
  // memory: instances starting together would otherwise each grant a full second from memory.
  let first: Promise<void> | undefined;
  const firstConnection = (client: ScriptedRedis) =>
    (first ??= new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, options.commandTimeoutMs ?? 500);
      client.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    }));
  return {
    kind: 'redis',
    async take(window, requests) {
      const client = connect();
      if (client.status !== 'ready') await firstConnection(client);
      if (client.status !== 'ready') {
        fellBack(new Error(`Redis ${client.status}`));
        return memory.take(window, requests);
      }
      try {
        const args = requests.flatMap((r) => [r.account, r.want, r.cap]);
        const granted = requests.length === 0 ? [] : await client.sendTake(keyOf(window), 10_000, ...args);
        return {
          window,
          byAccount: new Map(requests.map((r, i) => [r.account, Number(granted[i] ?? 0)])),
          async giveBack(unused) {
            const pairs = [...unused].filter(([, n]) => n > 0);
            if (pairs.length === 0 || client.status !== 'ready') return;
            try {
              await client.sendGiveBack(keyOf(window), ...pairs.flat());
            } catch (err) {
              fellBack(err);
            }
          },
        };
      } catch (err) {
        fellBack(err);
        return memory.take(window, requests);
      }
    },
    close() {
      // A later take connects again (a dispatcher stopped and started again).
      redis?.disconnect();
      redis = undefined;
      first = undefined;
      return Promise.resolve();
    },
  };
}
