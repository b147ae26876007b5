import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Store } from '../../domain/store.ts';
import { externalWriteMarker, findLiveToken, hashToken, tokenRevocations } from '../../domain/tokens.ts';
import { HttpError } from '../wire.ts';

/** API.md §4: the one 401 message, whatever was wrong with the token. */
export const INVALID_CREDENTIALS = 'Your request was made with invalid credentials.';

/** How long a resolved token is trusted without asking the database again (default of MSGSVC_TOKEN_CACHE_MS). */
export const TOKEN_CACHE_TTL_MS = 2000;
// Bounds the cache against a flood of distinct valid tokens; it is simply emptied when full.
const TOKEN_CACHE_MAX = 10_000;
// How often, at most, the database is asked whether another process wrote to it (the question
// costs about as much as a query, so it is not asked on every request).
const EXTERNAL_WRITES_CHECK_MS = 10;

/**
 * Resolves `access_token` (query only; the last of repeated keys wins) to an account id.
 * The stored hash is found by index and then compared with timingSafeEqual.
 *
 * Resolved tokens are cached by hash for `ttlMs` (0 turns the cache off), so a busy client costs
 * one hash and one map lookup per request instead of a query. Revocation stays prompt:
 * - a revocation in this process (revokeToken) empties the cache at once;
 * - on SQLite, any write committed by another process (e.g. `msgsvc tokens revoke`) empties it
 *   within 10 ms (PRAGMA data_version, asked at most every 10 ms);
 * - on PostgreSQL, another process's revocation is seen within `ttlMs` at the latest.
 * Unknown and revoked tokens are never cached: they always go to the database.
 * @throws HttpError 401 when the token is missing, empty, an array, unknown or revoked.
 */
export function createAuthenticator(store: Store, ttlMs = TOKEN_CACHE_TTL_MS) {
  const cache = new Map<string, { accountId: number; expires: number }>();
  let seenRevocations = tokenRevocations();
  let seenWrites = externalWriteMarker(store);
  let writesCheckedAt = Date.now();
  // Records the latest external-writes marker; a change empties the cache. Returns the marker.
  function seenWritesNow(writes: number | undefined, now: number): number | undefined {
    writesCheckedAt = now;
    if (writes !== seenWrites) {
      cache.clear();
      seenWrites = writes;
    }
    return writes;
  }
  function remember(hash: string, accountId: number, revocations: number, writes: number | undefined): void {
    // Cache only what nothing revoked while the query ran.
    if (ttlMs > 0 && tokenRevocations() === revocations && seenWritesNow(externalWriteMarker(store), Date.now()) === writes) {
      if (cache.size >= TOKEN_CACHE_MAX) cache.clear();
      cache.set(hash, { accountId, expires: Date.now() + ttlMs });
    }
  }
  // A callback hook: a cached token costs no promise; a lookup completes when the query does.
  return function authenticate(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
    const token = request.queryParams.get('access_token');
    if (typeof token !== 'string' || token === '' || token.length > 512) return done(new HttpError(401, INVALID_CREDENTIALS));
    const hash = hashToken(token);
    let revocations = 0;
    let writes: number | undefined;
    if (ttlMs > 0) {
      const now = Date.now();
      revocations = tokenRevocations();
      if (now - writesCheckedAt >= EXTERNAL_WRITES_CHECK_MS || now < writesCheckedAt) {
        seenWritesNow(externalWriteMarker(store), now);
      }
      writes = seenWrites;
      if (revocations !== seenRevocations) {
        cache.clear();
        seenRevocations = revocations;
      }
      const hit = cache.get(hash);
      if (hit !== undefined) {
        if (hit.expires > now) {
          request.accountId = hit.accountId;
          return done();
        }
        cache.delete(hash);
      }
    }
    findLiveToken(store, hash).then(
      (row) => {
        if (!row || !timingSafeEqual(Buffer.from(row.token_hash, 'hex'), Buffer.from(hash, 'hex'))) {
          return done(new HttpError(401, INVALID_CREDENTIALS));
        }
        try {
          remember(hash, row.account_id, revocations, writes);
        } catch (err) {
          return done(err as Error);
        }
        request.accountId = row.account_id;
        done();
      },
      (err: Error) => done(err),
    );
  };
}
