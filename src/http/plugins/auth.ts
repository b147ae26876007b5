import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Store } from '../../store/db.ts';
import { findLiveToken } from '../../store/repositories/accounts.ts';
import { HttpError } from '../wire.ts';

/** CONVENTIONS §2: the one 401 message, whatever was wrong with the token. */
export const INVALID_CREDENTIALS = 'Your request was made with invalid credentials.';

/** SHA-256 of a token, lowercase hex: the only form a token is stored in (CONVENTIONS §9). */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * Resolves `access_token` (query only; the last of repeated keys wins) to an account id.
 * The stored hash is found by index and then compared with timingSafeEqual.
 * @throws HttpError 401 when the token is missing, empty, an array, unknown or revoked.
 */
export function createAuthenticator(store: Store) {
  return async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const token = request.queryParams.get('access_token');
    if (typeof token !== 'string' || token === '' || token.length > 512) throw new HttpError(401, INVALID_CREDENTIALS);
    const hash = hashToken(token);
    const row = await findLiveToken(store.db, hash);
    if (!row || !timingSafeEqual(Buffer.from(row.token_hash, 'hex'), Buffer.from(hash, 'hex'))) {
      throw new HttpError(401, INVALID_CREDENTIALS);
    }
    request.accountId = row.account_id;
  };
}
