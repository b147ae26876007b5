import { prepareQuery } from '../prepared.ts';
import type { Db } from '../types.ts';

/** Keyword reservations on account numbers. */

/**
 * Reserves a keyword. Uniqueness per number (case-insensitive, via `keyword_key`) is enforced by
 * the unique index.
 * @throws the driver's unique-violation error when the number already has this keyword.
 */
export async function insertKeywordReservation(
  db: Db,
  accountId: number,
  r: { accountNumberId: number; keyword: string; keywordKey: string; autoreplyMessage: string },
  now: number,
): Promise<number> {
  const row = await insert.first(db, accountId, r.accountNumberId, r.keyword, r.keywordKey, r.autoreplyMessage, now);
  return row!.id;
}

const insert = prepareQuery(
  (db, accountId: number, accountNumberId: number, keyword: string, keywordKey: string, autoreplyMessage: string, now: number) =>
    db
      .insertInto('keyword_reservations')
      .values({
        account_id: accountId,
        account_number_id: accountNumberId,
        keyword,
        keyword_key: keywordKey,
        autoreply_message: autoreplyMessage,
        created_at: now,
      })
      .returning('id'),
);

/** True when the number already has a reservation with this case-folded keyword. */
export async function keywordTaken(db: Db, accountNumberId: number, keywordKey: string): Promise<boolean> {
  return (await taken.first(db, accountNumberId, keywordKey)) !== undefined;
}

const taken = prepareQuery((db, accountNumberId: number, keywordKey: string) =>
  db.selectFrom('keyword_reservations').select('id').where('account_number_id', '=', accountNumberId).where('keyword_key', '=', keywordKey),
);
