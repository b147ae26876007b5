import { hash } from 'node:crypto';
import { externalWrites, type Store } from '../store/db.ts';
import * as accounts from '../store/repositories/accounts.ts';

/** SHA-256 of an access token, lowercase hex: the only form a token is stored in (API.md §1.2). */
export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/** The live (not revoked) token whose hash is `tokenHash`, with its account, if any. */
export function findLiveToken(
  store: Store,
  tokenHash: string,
): Promise<{ id: number; account_id: number; token_hash: string } | undefined> {
  return accounts.findLiveToken(store.db, tokenHash);
}

/**
 * How many token revocations this process has made. A token cache compares it with the count it
 * last saw and drops what it holds the moment a token is revoked in this process.
 */
export function tokenRevocations(): number {
  return accounts.revocationCount();
}

/**
 * A number that changes whenever another process commits a write to the database (a token
 * revoked by `msgsvc tokens revoke`, say): a token cache that sees it change drops what it holds.
 * Undefined on PostgreSQL, which has no such signal (the cache's TTL bounds staleness there).
 */
export function externalWriteMarker(store: Store): number | undefined {
  return externalWrites(store.db);
}
