import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { recordOperatorKeyUse, resolveOperatorKey, resolveOperatorSession } from '../../domain/operators.ts';
import type { Store } from '../../domain/store.ts';
import { hashToken } from '../../domain/tokens.ts';
import { systemClock, type Clock } from '../../lib/time.ts';
import { operationOf } from '../operation.ts';
import { csrfHolds, FORBIDDEN, INVALID_CREDENTIALS, secretOf, sessionCookieOf } from '../plugins/auth.ts';
import { HttpError } from '../wire.ts';
import { isAdminOperation } from './operation.ts';

type Hook = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => void;

/**
 * The authentication step of `/admin/v1` (docs/API.md §16.4): an operator key's secret in
 * `access_token` (the last of repeated keys wins) or `Authorization: Bearer` (access_token wins
 * when both are given), read as `/v1` reads a key (secretOf). The principal is the operator
 * (operatorPrincipal: no account, scopes `*`, Actor `operator:{Id}:{Name}`).
 *
 * Without a secret, the `msgsvc_session` cookie of an operator's console session (signed in with
 * an operator key); its writes need `X-CSRF-Token` (authorizeOperator), as a session's on `/v1`.
 * Anything else is 401 with the one message of docs/API.md §15.2: an account's key (it is no
 * operator key), an account's console session (its cookie is looked up among the operator's
 * sessions only), an unknown or revoked operator key, no credential at all.
 * Operator keys are not cached: each request reads its key by its hash (one index lookup), so a
 * revoked key stops at once on every instance. The /v1 authenticator is untouched by this: an
 * operator key there is simply an unknown key (401), with no extra query.
 * @throws HttpError 401.
 */
export function createOperatorAuthenticator(store: Store, clock: Clock = systemClock): Hook {
  const ignore = (err: unknown) => {
    // A failed last-use write loses only that note; the request is already served.
    void err;
  };
  function bySession(request: FastifyRequest, done: (err?: Error) => void): void {
    const value = sessionCookieOf(request);
    if (value === undefined) return done(new HttpError(401, INVALID_CREDENTIALS));
    resolveOperatorSession(store, hashToken(value), clock.nowSeconds()).then(
      (principal) => {
        if (!principal) return done(new HttpError(401, INVALID_CREDENTIALS));
        request.principal = principal;
        request.accountId = 0;
        done();
      },
      (err: Error) => done(err),
    );
  }
  return function authenticateOperator(request, _reply, done) {
    const secret = secretOf(request);
    if (secret === undefined) return bySession(request, done);
    if (secret === null || secret === '' || secret.length > 512) return done(new HttpError(401, INVALID_CREDENTIALS));
    const hash = hashToken(secret);
    resolveOperatorKey(store, hash).then(
      (key) => {
        if (!key || !timingSafeEqual(Buffer.from(key.storedHash, 'hex'), Buffer.from(hash, 'hex'))) {
          return done(new HttpError(401, INVALID_CREDENTIALS));
        }
        request.principal = key.principal;
        request.accountId = 0;
        recordOperatorKeyUse(store, key, clock.nowSeconds(), ignore);
        done();
      },
      (err: Error) => done(err),
    );
  };
}

/**
 * The rate limit of `/admin/v1`, then its scope step, in one hook (as `/v1`: 429 before 403).
 * `rateLimit` is `/v1`'s own limiter (same limit, window and counters, across instances when they
 * share Redis), counted per operator key: the key is the negative of the operator key's id, so it
 * never shares an allowance with an account. The X-Rate-Limit-* headers are `/v1`'s.
 */
export function operatorRateLimitAndScope(rateLimit: Hook): Hook {
  return function limitOperator(request, reply, done) {
    const operatorId = request.principal.operatorId;
    if (operatorId === undefined) return done(new HttpError(401, INVALID_CREDENTIALS));
    request.accountId = -operatorId;
    rateLimit(request, reply, (err) => {
      request.accountId = 0;
      if (err) return done(err);
      authorizeOperator(request, reply, done);
    });
  };
}

/**
 * The scope step of `/admin/v1`: the principal must be an operator, and the operation an operator
 * operation (scope `admin:read` / `admin:write`); an operator's session must send its CSRF token
 * on every write. Both hold by construction (this scope's
 * authenticator makes only operators; only operator operations are registered here); the check
 * keeps it so if either ever changes.
 * @throws HttpError 403 `You are not allowed to perform this action.`
 */
export function authorizeOperator(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  const op = operationOf(request);
  if (request.principal.operatorId === undefined || (op !== undefined && !isAdminOperation(op))) {
    return done(new HttpError(403, FORBIDDEN));
  }
  if (!csrfHolds(request, request.principal)) return done(new HttpError(403, FORBIDDEN));
  done();
}
