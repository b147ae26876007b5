import { sql } from 'kysely';
import { boundCount } from '../prepared.ts';
import type { Row } from '../tables.ts';
import type { Db } from '../types.ts';

/**
 * The queries of inbound texts (API.md §11.5). Unlike every other repository, the first two
 * read across accounts: a text arrives for a NUMBER, and the accounts that hold it (one, or several
 * for a shared short code) and the keyword reserved on it (unique on the number across all
 * accounts, API.md §10.5) decide which accounts it concerns. Everything after that is scoped to one account.
 * Inbound texts are rare next to requests: plain Kysely queries, inside the caller's transaction.
 */

/** An account holding a number, with that number's row. */
export type NumberHolder = Pick<Row<'account_numbers'>, 'account_id' | 'status_id'> & {
  /** The account_numbers row id. */
  number_id: Row<'account_numbers'>['id'];
};

/** Every account holding the number `digits`, lowest account id first (index account_numbers_number_ix, migration 006). */
export async function numberHolders(db: Db, digits: string): Promise<NumberHolder[]> {
  const rows = await db
    .selectFrom('account_numbers')
    .select(['account_id', 'id as number_id', 'status_id'])
    .where('number', '=', digits)
    .orderBy('account_id')
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ account_id: Number(r.account_id), number_id: Number(r.number_id), status_id: Number(r.status_id) }));
}

/** A keyword reservation as an inbound text needs it. */
export type ReservedKeyword = Pick<Row<'keyword_reservations'>, 'id' | 'account_id' | 'autoreply_message'>;

/**
 * The keyword reserved on the number `digits` (in whichever account holds it: a key is unique on a
 * number across all accounts, API.md §10.5) that the text begins with, the longest when several do
 * (API.md §11.5 rule 4), in ONE query: a reservation's key `k` begins the text's key `textKey`
 * (src/domain/text.ts `keywordKey`: its words joined by one space) when `textKey` is `k`, or starts
 * with `k` and a space, i.e. when the first length(k) + 1 characters of `textKey || ' '` are
 * `k || ' '`. `substr` and `length` count characters on both stores. It reads the number's
 * reservations through the unique index on (number, keyword_key); a number holds few.
 */
export async function reservedKeywordAtStart(db: Db, digits: string, textKey: string): Promise<ReservedKeyword | undefined> {
  const spaced = `${textKey} `;
  const row = await db
    .selectFrom('keyword_reservations')
    .select(['id', 'account_id', 'autoreply_message'])
    .where('number', '=', digits)
    .where(sql<string>`substr(cast(${spaced} as text), 1, length(keyword_key) + 1)`, '=', sql<string>`keyword_key || ' '`)
    .orderBy(sql`length(keyword_key)`, 'desc')
    .limit(boundCount(1))
    .executeTakeFirst();
  return row && { id: Number(row.id), account_id: Number(row.account_id), autoreply_message: row.autoreply_message };
}

/**
 * The account's contact with this E.164 number: its id and OptedOut, created when unknown (empty
 * names, `optedOutIfNew`, DateCreated = DateUpdated = `now`). Safe under concurrent texts from the
 * same new sender: the insert skips an existing row (ON CONFLICT on the account's unique number),
 * then the row is read.
 */
export async function ensureContact(
  db: Db,
  accountId: number,
  phone: { digits: string; e164: string },
  optedOutIfNew: 0 | 1,
  now: number,
): Promise<{ id: number; opted_out: number; created: boolean }> {
  const inserted = await db
    .insertInto('contacts')
    .values({
      account_id: accountId,
      number: phone.digits,
      number_e164: phone.e164,
      opted_out: optedOutIfNew,
      first_name: '',
      last_name: '',
      birthday: null,
      email: '',
      zip: '',
      city: '',
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) => oc.columns(['account_id', 'number_e164']).doNothing())
    .returning(['id', 'opted_out'])
    .executeTakeFirst();
  if (inserted) return { id: Number(inserted.id), opted_out: Number(inserted.opted_out), created: true };
  const row = await db
    .selectFrom('contacts')
    .select(['id', 'opted_out'])
    .where('account_id', '=', accountId)
    .where('number_e164', '=', phone.e164)
    .executeTakeFirstOrThrow();
  return { id: Number(row.id), opted_out: Number(row.opted_out), created: false };
}

/**
 * Sets OptedOut of the account's contact with this E.164 number, when it differs (DateUpdated
 * becomes `now` only then). Returns true when the contact changed; false when it already had that
 * value or the account has no such contact.
 */
export async function setContactOptedOut(db: Db, accountId: number, e164: string, optedOut: 0 | 1, now: number): Promise<boolean> {
  const result = await db
    .updateTable('contacts')
    .set({ opted_out: optedOut, updated_at: now })
    .where('account_id', '=', accountId)
    .where('number_e164', '=', e164)
    .where('opted_out', '!=', optedOut)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Makes the contact a member of every group of the account whose KeywordId is `keywordId` (one
 * INSERT … SELECT, existing memberships skipped), and touches DateUpdated of each group it newly
 * joined (its PhoneNumberIds changed, as groups/add-contacts does). Returns the ids of the groups
 * newly joined, ascending.
 */
export async function joinKeywordGroups(db: Db, accountId: number, keywordId: number, contactId: number, now: number): Promise<number[]> {
  const joined = await sql<{ group_id: number }>`
    insert into group_members (account_id, group_id, contact_id)
    select g.account_id, g.id, cast(${contactId} as integer)
    from groups g
    where g.account_id = ${accountId} and g.keyword_id = ${keywordId}
    on conflict (group_id, contact_id) do nothing
    returning group_id`.execute(db);
  const ids = joined.rows.map((r) => Number(r.group_id)).sort((a, b) => a - b);
  if (ids.length > 0) {
    await db.updateTable('groups').set({ updated_at: now }).where('account_id', '=', accountId).where('id', 'in', ids).execute();
  }
  return ids;
}

/** Sets the ErrorCode of the account's message `id` (an autoreply Rejected at once, API.md §11.6). */
export async function setMessageErrorCode(db: Db, accountId: number, id: number, errorCode: string): Promise<void> {
  await db.updateTable('messages').set({ error_code: errorCode }).where('account_id', '=', accountId).where('id', '=', id).execute();
}
