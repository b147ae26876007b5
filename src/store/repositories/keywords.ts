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
  const { id } = await db
    .insertInto('keyword_reservations')
    .values({
      account_id: accountId,
      account_number_id: r.accountNumberId,
      keyword: r.keyword,
      keyword_key: r.keywordKey,
      autoreply_message: r.autoreplyMessage,
      created_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}

/** True when the number already has a reservation with this case-folded keyword. */
export async function keywordTaken(db: Db, accountNumberId: number, keywordKey: string): Promise<boolean> {
  const row = await db
    .selectFrom('keyword_reservations')
    .select('id')
    .where('account_number_id', '=', accountNumberId)
    .where('keyword_key', '=', keywordKey)
    .executeTakeFirst();
  return row !== undefined;
}
