import type { Store } from '../store/db.ts';
import * as keys from '../store/repositories/idempotency.ts';

/**
 * Idempotency-Key records (docs/API.md §7), for the http hooks that honour the header: one row
 * per account and key, whose primary key decides which of two racing requests runs. Each function
 * forwards to the store; `now` and `expiresAt` are epoch seconds.
 */

/** A stored key: `response_status` null while its first request runs; `response_body` JSON text or null. */
export type { IdempotencyRow } from '../store/repositories/idempotency.ts';

/** Claims `key` with an in-progress row; false (writing nothing) when a live row already holds it. */
export function claimIdempotencyKey(
  store: Store,
  accountId: number,
  key: string,
  fingerprint: string,
  now: number,
  expiresAt: number,
): Promise<boolean> {
  return keys.claimIdempotencyKey(store.db, accountId, key, fingerprint, now, expiresAt);
}

/** The row that holds `key`, if any. */
export function findIdempotencyKey(store: Store, accountId: number, key: string): Promise<keys.IdempotencyRow | undefined> {
  return keys.findIdempotencyKey(store.db, accountId, key);
}

/** Records the response of the request holding the in-progress row; false when there was none to complete. */
export function completeIdempotencyKey(
  store: Store,
  accountId: number,
  key: string,
  response: { fingerprint: string; status: number; body: string | null; location: string | null },
): Promise<boolean> {
  return keys.completeIdempotencyKey(store.db, accountId, key, response);
}

/** Deletes the in-progress row of `key` (a 5xx is not kept), so the key may be used again. */
export function releaseIdempotencyKey(store: Store, accountId: number, key: string): Promise<boolean> {
  return keys.releaseIdempotencyKey(store.db, accountId, key);
}

/** Deletes the row of `key` whatever its state (a kept response that then went out as a 5xx). */
export function forgetIdempotencyKey(store: Store, accountId: number, key: string): Promise<boolean> {
  return keys.forgetIdempotencyKey(store.db, accountId, key);
}

/** Deletes every row expired at `now`; resolves to how many went. */
export function deleteExpiredIdempotencyKeys(store: Store, now: number): Promise<number> {
  return keys.deleteExpiredIdempotencyKeys(store.db, now);
}
