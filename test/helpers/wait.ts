import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls `fn` every 50 ms until it returns a value other than undefined, for up to `ms`.
 * @throws Error "timed out waiting for <what>" after `ms`.
 */
export async function until<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}
