import { randomBytes } from 'node:crypto';
import { inTransaction, type Store } from '../store/db.ts';
import * as accounts from '../store/repositories/accounts.ts';
import { hashToken } from './tokens.ts';
import { nowSeconds } from '../lib/time.ts';

/** A new API token: 32 URL-safe characters (192 random bits), safe to paste into a query string. */
export function generateToken(): string {
  return randomBytes(24).toString('base64url');
}

/**
 * Issues a token for an account: a key (docs/API.md §15.2) named `name` with scope `*`. Only its
 * SHA-256 hash is stored; the token is returned once.
 * @returns the token and its row id (for `tokens revoke --id`).
 */
export async function issueToken(store: Store, accountId: number, label = '', name = 'default'): Promise<{ token: string; id: number }> {
  const token = generateToken();
  const id = await accounts.insertToken(store.db, accountId, hashToken(token), label, nowSeconds(), name, token.slice(0, 8));
  return { token, id };
}

/** The account's available credits (docs/API.md §10.1 `credits/balance`). */
export function creditBalance(store: Store, accountId: number): Promise<number> {
  return accounts.getCredits(store.db, accountId);
}

/** Creates an account with a zero credit balance. Returns its id. */
export async function createAccount(store: Store, name: string): Promise<number> {
  return inTransaction(store, (tx) => accounts.createAccount(tx, name, nowSeconds()));
}

/** The account's name, if the account exists. */
export async function accountName(store: Store, accountId: number): Promise<string | undefined> {
  return (await accounts.findAccount(store.db, accountId))?.name;
}
