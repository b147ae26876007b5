import type { Db } from '../types.ts';

/** What the command line adds to the account rules (src/domain/admin-accounts.ts). Every function takes the db (or a transaction) first. */

/** Sets the note (`label`) an account key is recognised by (`msgsvc tokens create --label`). */
export async function setKeyLabel(db: Db, keyId: number, label: string): Promise<void> {
  await db.updateTable('api_tokens').set({ label }).where('id', '=', keyId).execute();
}
