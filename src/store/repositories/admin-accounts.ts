import type { Db } from '../types.ts';

/** What the command line adds to the account rules (src/domain/admin-accounts.ts). Every function takes the db (or a transaction) first. */

/** Sets the note (`label`) an account key is recognised by (`msgsvc tokens create --label`). */
export async function setKeyLabel(db: Db, keyId: number, label: string): Promise<void> {
  await db.updateTable('api_tokens').set({ label }).where('id', '=', keyId).execute();
}

/** Sets an account's balance (its row already locked by the caller's transaction). */
export async function setBalance(db: Db, accountId: number, balance: number, now: number): Promise<void> {
  await db
    .updateTable('credit_balances')
    .set({ available_credits: balance, updated_at: now })
    .where('account_id', '=', accountId)
    .execute();
}
