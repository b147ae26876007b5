import { sql } from 'kysely';
import { boundCount, prepareQuery } from '../prepared.ts';
import { KEYWORD_RESERVATION_COLUMNS as columns, type KeywordReservationRow } from '../../records/keywords.ts';
import type { Row } from '../tables.ts';
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
        // The number's digits, read from the number row itself (never trusted from the caller):
        // the global (number, keyword_key) unique index decides on them.
        number: sql<string>`(select n.number from account_numbers n where n.account_id = ${accountId} and n.id = ${accountNumberId})`,
        keyword,
        keyword_key: keywordKey,
        autoreply_message: autoreplyMessage,
        created_at: now,
      })
      .returning('id'),
);

/**
 * True when a reservation with this case-folded keyword exists on these number digits, in ANY
 * account (API.md §10.5), other than `exceptId`.
 */
export async function keywordTaken(db: Db, numberDigits: string, keywordKey: string, exceptId = 0): Promise<boolean> {
  return (await taken.first(db, numberDigits, keywordKey, exceptId)) !== undefined;
}

const taken = prepareQuery((db, numberDigits: string, keywordKey: string, exceptId: number) =>
  db
    .selectFrom('keyword_reservations')
    .select('id')
    .where('number', '=', numberDigits)
    .where('keyword_key', '=', keywordKey)
    .where('id', '!=', exceptId),
);

/** A keyword reservation with what an update needs besides its record fields. */
export type StoredKeywordReservation = KeywordReservationRow & Pick<Row<'keyword_reservations'>, 'account_number_id' | 'keyword_key'>;

const byId = prepareQuery((db, accountId: number, id: number) =>
  db
    .selectFrom('keyword_reservations')
    .select([...columns, 'account_number_id', 'keyword_key'])
    .where('account_id', '=', accountId)
    .where('id', '=', id),
);

/** The account's reservation with this id (with its number row id and case-folded key), if any. */
export async function findKeywordReservation(db: Db, accountId: number, id: number): Promise<StoredKeywordReservation | undefined> {
  return byId.first(db, accountId, id);
}

const countAll = prepareQuery((db, accountId: number) =>
  db
    .selectFrom('keyword_reservations')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId),
);
const countOnNumber = prepareQuery((db, accountId: number, numberDigits: string) =>
  db
    .selectFrom('keyword_reservations')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .where('number', '=', numberDigits),
);

/** How many reservations the account has, on one number's digits when `numberDigits` is given. */
export async function countKeywordReservations(db: Db, accountId: number, numberDigits?: string): Promise<number> {
  const row = numberDigits === undefined ? await countAll.first(db, accountId) : await countOnNumber.first(db, accountId, numberDigits);
  return Number(row?.n ?? 0);
}

const pageAll = prepareQuery((db, accountId: number, limit: number, offset: number) =>
  db
    .selectFrom('keyword_reservations')
    .select(columns)
    .where('account_id', '=', accountId)
    .orderBy('id')
    .limit(boundCount(limit))
    .offset(boundCount(offset)),
);
const pageOnNumber = prepareQuery((db, accountId: number, numberDigits: string, limit: number, offset: number) =>
  db
    .selectFrom('keyword_reservations')
    .select(columns)
    .where('account_id', '=', accountId)
    .where('number', '=', numberDigits)
    .orderBy('id')
    .limit(boundCount(limit))
    .offset(boundCount(offset)),
);

/** One page of the account's reservations by id ascending, on one number's digits when `numberDigits` is given. */
export async function listKeywordReservations(
  db: Db,
  accountId: number,
  numberDigits: string | undefined,
  limit: number,
  offset: number,
): Promise<KeywordReservationRow[]> {
  return numberDigits === undefined
    ? pageAll.all(db, accountId, limit, offset)
    : pageOnNumber.all(db, accountId, numberDigits, limit, offset);
}

const update = prepareQuery(
  (db, accountId: number, id: number, accountNumberId: number, keyword: string, keywordKey: string, autoreplyMessage: string) =>
    db
      .updateTable('keyword_reservations')
      .set({
        account_number_id: accountNumberId,
        // As on insert: the digits come from the account's own number row.
        number: sql<string>`(select n.number from account_numbers n where n.account_id = ${accountId} and n.id = ${accountNumberId})`,
        keyword,
        keyword_key: keywordKey,
        autoreply_message: autoreplyMessage,
      })
      .where('account_id', '=', accountId)
      .where('id', '=', id),
);

/**
 * Writes every field of the account's reservation `id` (the caller merges what was sent with what
 * is stored). Returns false when the account has no such reservation.
 * @throws the driver's unique-violation error when the (new) number already has this keyword.
 */
export async function updateKeywordReservation(
  db: Db,
  accountId: number,
  id: number,
  r: { accountNumberId: number; keyword: string; keywordKey: string; autoreplyMessage: string },
): Promise<boolean> {
  return (await update.run(db, accountId, id, r.accountNumberId, r.keyword, r.keywordKey, r.autoreplyMessage)) > 0;
}

const remove = prepareQuery((db, accountId: number, id: number) =>
  db.deleteFrom('keyword_reservations').where('account_id', '=', accountId).where('id', '=', id),
);

/** Deletes the account's reservation `id`. Returns false when the account has no such reservation. */
export async function deleteKeywordReservation(db: Db, accountId: number, id: number): Promise<boolean> {
  return (await remove.run(db, accountId, id)) > 0;
}

const clearGroups = prepareQuery((db, accountId: number, keywordId: number) =>
  db.updateTable('groups').set({ keyword_id: 0 }).where('account_id', '=', accountId).where('keyword_id', '=', keywordId),
);

/**
 * Groups of the account that pointed to reservation `keywordId` get KeywordId 0 (API.md
 * API.md §10.5, on delete). Their DateUpdated stays: the group itself was not edited. Returns how many changed.
 */
export async function clearGroupsKeyword(db: Db, accountId: number, keywordId: number): Promise<number> {
  return clearGroups.run(db, accountId, keywordId);
}
