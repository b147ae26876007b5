import { timingSafeEqual } from 'node:crypto';
import { parse as parseCookie } from 'cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Store } from '../../domain/store.ts';
import { recordKeyUse, resolveKey, resolveSession, type ResolvedKey } from '../../domain/credentials.ts';
import type { Principal } from '../../domain/principal.ts';
import { grants } from '../../domain/scopes.ts';
import { externalWriteMarker, hashToken, tokenRevocations } from '../../domain/tokens.ts';
import { systemClock, type Clock } from '../../lib/time.ts';
import { operationOf } from '../operation.ts';
import { HttpError } from '../wire.ts';

/** API.md §4: the one 401 message, whatever was wrong with the credential. */
export const INVALID_CREDENTIALS = 'Your request was made with invalid credentials.';
/** API.md §15.2: the 403 message (a scope the credential lacks, or a missing or wrong X-CSRF-Token). */
export const FORBIDDEN = 'You are not allowed to perform this action.';
/** API.md §16: the 403 message of a write by a suspended account. */
export const SUSPENDED = 'This account is suspended.';
/** The console's session cookie (API.md §15.3). */
export const SESSION_COOKIE = 'msgsvc_session';

/** How long a resolved key is trusted without asking the database again (default of MSGSVC_TOKEN_CACHE_MS). */
export const TOKEN_CACHE_TTL_MS = 2000;
// Bounds the cache against a flood of distinct valid keys; it is simply emptied when full.
const TOKEN_CACHE_MAX = 10_000;

declare module 'fastify' {
  interface FastifyRequest {
    /** Who the request acts as (set by the authentication step; API.md §15). */
    principal: Principal;
  }
}

/**
 * The secret a request carries: `access_token` first, then `Authorization: Bearer` (API.md §15.3).
 * undefined: none sent; null: sent malformed (an array, a non-Bearer Authorization). Also read by
 * the operator's authentication on `/admin/v1` (src/http/admin/auth.ts).
 */
export function secretOf(request: FastifyRequest): string | undefined | null {
  const token = request.queryParams.get('access_token');
  if (token !== undefined) return typeof token === 'string' ? token : null;
  const authorization = request.headers.authorization;
  if (authorization === undefined) return undefined;
  const m = /^Bearer\s+(.*?)$/.exec(authorization);
  return m ? m[1]! : null;
}

/**
 * The value of the request's `msgsvc_session` cookie, or undefined when there is none (or it is
 * empty, or longer than any the service makes). Also read by `/admin/v1` (an operator's session).
 */
export function sessionCookieOf(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  const value = header === undefined ? undefined : parseCookie(header)[SESSION_COOKIE];
  return value === undefined || value === '' || value.length > 512 ? undefined : value;
}

/**
 * True unless the request was authenticated by a session cookie and is a write (not GET or HEAD)
 * without `X-CSRF-Token` equal to the session's CsrfToken (compared in constant time).
 */
export function csrfHolds(request: FastifyRequest, p: Principal): boolean {
  if (p.csrf === undefined || request.method === 'GET' || request.method === 'HEAD') return true;
  const sent = request.headers['x-csrf-token'];
  const a = Buffer.from(typeof sent === 'string' ? sent : '');
  const b = Buffer.from(p.csrf);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The authentication step: resolves the request's credential to a Principal (API.md §15).
 * - a key's secret in `access_token` (the last of repeated keys wins) or `Authorization: Bearer`
 *   (access_token wins when both are given): the live key whose current secret, or rolled secret
 *   still in its grace, it is; unexpired, and called from one of its AllowedIps;
 * - else the `msgsvc_session` cookie: a live console session, acting as its person or its key.
 * Anything else is 401 with the one message: an unknown, expired, revoked or rolled-past-grace key
 * and a call from outside AllowedIps are answered alike.
 *
 * Resolved keys are cached by hash for `ttlMs` (0 turns the cache off) on SQLite only, where the
 * cache stays exact: a change in this process empties it at once (the credential-change counter),
 * and a write committed by any other process (another worker, `msgsvc tokens revoke`) empties it
 * before the next request is served (PRAGMA data_version, read on every request: a read of the
 * shared WAL index, no query). On PostgreSQL there is no such signal, and API.md §15.2 wants a
 * deleted key refused at once on every instance: every request reads its key from the database.
 * Expiry, grace and AllowedIps are checked on every use, cached or not. Sessions are never cached.
 * @throws HttpError 401.
 */
export function createAuthenticator(store: Store, ttlMs = TOKEN_CACHE_TTL_MS, clock: Clock = systemClock) {
  const cache = new Map<string, { key: ResolvedKey; expires: number }>();
  // Only where a cross-process change can be seen before every request (SQLite).
  const cacheOn = ttlMs > 0 && externalWriteMarker(store) !== undefined;
  let seenRevocations = tokenRevocations();
  let seenWrites = cacheOn ? externalWriteMarker(store) : undefined;
  const logError = (err: unknown) => {
    // A failed last-use write loses only that note; the request is already served.
    void err;
  };

  function accept(request: FastifyRequest, key: ResolvedKey, secret: string, now: number, done: (err?: Error) => void): void {
    const ip = request.ip;
    if (key.endsAt <= now || !key.allows(ip)) return done(new HttpError(401, INVALID_CREDENTIALS));
    request.principal = key.principal;
    request.accountId = key.principal.accountId;
    recordKeyUse(store, key, secret, ip, now, logError);
    done();
  }

  function bySession(request: FastifyRequest, done: (err?: Error) => void): void {
    const value = sessionCookieOf(request);
    if (value === undefined) return done(new HttpError(401, INVALID_CREDENTIALS));
    resolveSession(store, hashToken(value), clock.nowSeconds(), request.ip).then(
      (principal) => {
        if (!principal) return done(new HttpError(401, INVALID_CREDENTIALS));
        request.principal = principal;
        request.accountId = principal.accountId;
        done();
      },
      (err: Error) => done(err),
    );
  }

  // A callback hook: a cached key costs no promise; a lookup completes when the query does.
  return function authenticate(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
    const secret = secretOf(request);
    if (secret === undefined) return bySession(request, done);
    if (secret === null || secret === '' || secret.length > 512) return done(new HttpError(401, INVALID_CREDENTIALS));
    const hash = hashToken(secret);
    const now = clock.nowSeconds();
    let revocations = 0;
    let writes: number | undefined;
    if (cacheOn) {
      revocations = tokenRevocations();
      writes = externalWriteMarker(store);
      if (revocations !== seenRevocations || writes !== seenWrites) {
        cache.clear();
        seenRevocations = revocations;
        seenWrites = writes;
      }
      const hit = cache.get(hash);
      if (hit !== undefined) {
        if (hit.expires > Date.now()) return accept(request, hit.key, secret, now, done);
        cache.delete(hash);
      }
    }
    resolveKey(store, hash).then(
      (key) => {
        // Found by the hash (an index lookup), then confirmed by one constant-time comparison of
        // the two SHA-256 digests.
        if (!key || !timingSafeEqual(Buffer.from(key.storedHash, 'hex'), Buffer.from(hash, 'hex'))) {
          return done(new HttpError(401, INVALID_CREDENTIALS));
        }
        // Cache only what no change touched while the query ran.
        if (cacheOn && tokenRevocations() === revocations && externalWriteMarker(store) === writes) {
          if (cache.size >= TOKEN_CACHE_MAX) cache.clear();
          cache.set(hash, { key, expires: Date.now() + ttlMs });
        }
        accept(request, key, secret, now, done);
      },
      (err: Error) => done(err),
    );
  };
}

/**
 * The scope step, after the rate limit (API.md §15.2: 401 → 429 → 403 → 400 …): the credential
 * must hold the operation's scope, and a request authenticated by the session cookie that is not
 * GET or HEAD must carry `X-CSRF-Token` equal to the session's CsrfToken.
 * A suspended account's writes are refused first, with their own message; a sub-account's
 * credential never reaches the `subaccounts` operations.
 * @throws HttpError 403 `You are not allowed to perform this action.`, `This account is suspended.`
 */
export function authorize(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  const op = operationOf(request);
  const p = request.principal;
  if (op !== undefined) {
    const write = request.method !== 'GET' && request.method !== 'HEAD';
    // A suspended account may read, never write (API.md §16), whatever its credential's scopes.
    if (p.suspended === true && write) return done(new HttpError(403, SUSPENDED));
    if (!grants(p.scopes, op.scope)) return done(new HttpError(403, FORBIDDEN));
    // In a sub-account, `*` (or any scope) does not reach subaccounts: one level only (API.md §16).
    if (p.parentId !== undefined && op.scope.startsWith('subaccounts:')) return done(new HttpError(403, FORBIDDEN));
  }
  if (!csrfHolds(request, p)) return done(new HttpError(403, FORBIDDEN));
  done();
}
