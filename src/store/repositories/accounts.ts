import { prepareQuery } from '../prepared.ts';
import type { Db } from '../types.ts';
import { recordLedgerEntry, type LedgerType } from './credits.ts';

/** Accounts, their API tokens and their credit balance. Every function takes the db (or a transaction) first. */

export async function createAccount(db: Db, name: string, now: number): Promise<number> {
  const { id } = await db.insertInto('accounts').values({ name, created_at: now }).returning('id').executeTakeFirstOrThrow();
  await db.insertInto('credit_balances').values({ account_id: id, available_credits: 0, updated_at: now }).execute();
  return id;
}

export async function findAccount(db: Db, id: number) {
  return db.selectFrom('accounts').select(['id', 'name', 'created_at']).where('id', '=', id).executeTakeFirst();
}

export async function countAccounts(db: Db): Promise<number> {
  const row = await db
    .selectFrom('accounts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Stores a token's SHA-256 hash (never the token) and returns the token row id. */
export async function insertToken(
  db: Db,
  accountId: number,
  tokenHash: string,
  label: string,
  now: number,
  name = 'cli',
  prefix = '',
): Promise<number> {
  const { id } = await db
    .insertInto('api_tokens')
    .values({ account_id: accountId, token_hash: tokenHash, label, name, prefix, created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}

const liveToken = prepareQuery((db, tokenHash: string) =>
  db
    .selectFrom('api_tokens')
    .select(['id', 'account_id', 'token_hash'])
    .where('token_hash', '=', tokenHash)
    .where('revoked_at', 'is', null),
);

/** The live (not revoked) token with this hash, if any. */
export async function findLiveToken(db: Db, tokenHash: string) {
  return liveToken.first(db, tokenHash);
}

let revocations = 0;

/**
 * How many revocations this process has made (revokeToken). Token caches compare it to drop what
 * they hold the moment a token is revoked in this process; other processes' revocations reach
 * them through `externalWrites` (SQLite) or the cache's TTL.
 */
export function revocationCount(): number {
  return revocations;
}

/**
 * Counts a change that may end a credential (a key deleted, rolled or changed; a user's role
 * changed or the user removed): the authenticators of this process drop their caches.
 */
export function noteCredentialChange(): void {
  revocations++;
}

/** Revokes a token by row id or by hash. Returns how many live tokens were revoked (0 or 1). */
export async function revokeToken(db: Db, by: { id: number } | { tokenHash: string }, now: number): Promise<number> {
  let q = db.updateTable('api_tokens').set({ revoked_at: now }).where('revoked_at', 'is', null);
  q = 'id' in by ? q.where('id', '=', by.id) : q.where('token_hash', '=', by.tokenHash);
  const res = await q.executeTakeFirst();
  revocations++;
  return Number(res.numUpdatedRows);
}

const credits = prepareQuery((db, accountId: number) =>
  db.selectFrom('credit_balances').select('available_credits').where('account_id', '=', accountId),
);

export async function getCredits(db: Db, accountId: number): Promise<number> {
  const row = await credits.first(db, accountId);
  return row ? Number(row.available_credits) : 0;
}

/**
 * Sets (`mode: 'set'`) or adds to (`'add'`) the balance, with its ledger entry (API.md §10.1.1; none
 * when the balance does not change): by default a `topup` for an addition, an `adjustment` for a
 * set. Run it in a transaction: the read of a `set` and its write must see the same balance.
 * @returns the new balance.
 */
export async function changeCredits(
  db: Db,
  accountId: number,
  amount: number,
  mode: 'set' | 'add',
  now: number,
  entry: { type?: LedgerType; reference?: string; note?: string } = {},
): Promise<number> {
  const before = mode === 'set' ? await getCredits(db, accountId) : 0;
  const row = await db
    .updateTable('credit_balances')
    .set((eb) => ({
      available_credits: mode === 'set' ? amount : eb('available_credits', '+', amount),
      updated_at: now,
    }))
    .where('account_id', '=', accountId)
    .returning('available_credits')
    .executeTakeFirst();
  if (!row) return 0;
  const balance = Number(row.available_credits);
  const change = mode === 'set' ? amount - before : amount;
  if (change !== 0) {
    const type = entry.type ?? (mode === 'add' ? (change > 0 ? 'topup' : 'adjustment') : 'adjustment');
    await recordLedgerEntry(db, accountId, now, type, change, balance, entry.reference ?? '', entry.note ?? '');
  }
  return balance;
}
