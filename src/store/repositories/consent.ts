import { sql } from 'kysely';
import { boundCount } from '../prepared.ts';
import { CONSENT_COLUMNS, type ConsentRow } from '../../records/consent.ts';
import type { Db } from '../types.ts';

/**
 * The SQL of the consent ledger (`contact_consent`, migration 018). Rows are only ever inserted:
 * there is no update or delete here, and the database's triggers refuse both (a contact's rows
 * go with it, by the foreign key's cascade). Every function takes the account and filters on it;
 * `db` may be an open transaction, and the writes must be given the transaction of the change of
 * OptedOut they record (src/domain/consent.ts).
 */

/** Ids are `serial` (32-bit) on PostgreSQL: a larger one matches no row, and must not reach the query. */
const MAX_ROW_ID = 2_147_483_647;

/** One ledger entry as written: the new OptedOut, the source, its detail and the carrier ('' but for a keyword). */
export interface NewConsentEntry {
  optedOut: 0 | 1;
  source: string;
  detail: string;
  carrier: string;
}

/** Appends an entry to the ledger of the account's contact `contactId`; `now` in epoch seconds. */
export async function insertConsent(db: Db, accountId: number, contactId: number, e: NewConsentEntry, now: number): Promise<void> {
  await db
    .insertInto('contact_consent')
    .values({
      account_id: accountId,
      contact_id: contactId,
      opted_out: e.optedOut,
      source: e.source,
      detail: e.detail,
      carrier: e.carrier,
      created_at: now,
    })
    .execute();
}

/**
 * Appends an entry to the ledger of the account's contact with this E.164 number (one INSERT …
 * SELECT); writes nothing when the account has no such contact. @returns whether it wrote one.
 */
export async function insertConsentByE164(db: Db, accountId: number, e164: string, e: NewConsentEntry, now: number): Promise<boolean> {
  const result = await db
    .insertInto('contact_consent')
    .columns(['account_id', 'contact_id', 'opted_out', 'source', 'detail', 'carrier', 'created_at'])
    .expression((eb) =>
      eb
        .selectFrom('contacts')
        .select([
          'contacts.account_id',
          'contacts.id',
          // Typed: PostgreSQL reads an untyped parameter of a SELECT list as text.
          sql<number>`cast(${e.optedOut} as integer)`.as('opted_out'),
          sql<string>`cast(${e.source} as text)`.as('source'),
          sql<string>`cast(${e.detail} as text)`.as('detail'),
          sql<string>`cast(${e.carrier} as text)`.as('carrier'),
          sql<number>`cast(${now} as bigint)`.as('created_at'),
        ])
        .where('contacts.account_id', '=', accountId)
        .where('contacts.number_e164', '=', e164),
    )
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** How many entries the ledger of the account's contact `contactId` holds. */
export async function countConsent(db: Db, accountId: number, contactId: number): Promise<number> {
  if (contactId > MAX_ROW_ID) return 0;
  const row = await db
    .selectFrom('contact_consent')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('account_id', '=', accountId)
    .where('contact_id', '=', contactId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** One page of the ledger of the account's contact `contactId`, oldest first (id ascending): `limit` rows from `offset`. */
export async function listConsent(db: Db, accountId: number, contactId: number, limit: number, offset: number): Promise<ConsentRow[]> {
  if (contactId > MAX_ROW_ID) return [];
  return db
    .selectFrom('contact_consent')
    .select(CONSENT_COLUMNS)
    .where('account_id', '=', accountId)
    .where('contact_id', '=', contactId)
    .orderBy('id')
    .limit(boundCount(limit))
    .offset(boundCount(offset))
    .execute();
}
