import { prepareQuery } from '../prepared.ts';
import type { Db } from '../types.ts';
import type { ContactRow } from '../../domain/records.ts';

/** Contacts (phone number records) with their derived GroupIds and CustomFieldIds. */

const byE164 = prepareQuery((db, accountId: number, e164: string) =>
  db
    .selectFrom('contacts')
    .select(['id', 'number', 'opted_out', 'first_name', 'last_name', 'birthday', 'email', 'zip', 'city', 'created_at', 'updated_at'])
    .where('account_id', '=', accountId)
    .where('number_e164', '=', e164),
);
// Both read only the (contact_id, …) covering indexes.
const groupIds = prepareQuery((db, contactId: number) =>
  db.selectFrom('group_members').select('group_id').where('contact_id', '=', contactId).orderBy('group_id'),
);
const customFieldIds = prepareQuery((db, contactId: number) =>
  db.selectFrom('custom_field_entries').select('custom_field_id').where('contact_id', '=', contactId).orderBy('custom_field_id'),
);

/** The account's contact with this E.164 number, with its group and custom field ids, if any. */
export async function findContactByE164(db: Db, accountId: number, e164: string): Promise<ContactRow | undefined> {
  const row = await byE164.first(db, accountId, e164);
  if (!row) return undefined;
  const [groups, fields] = await Promise.all([groupIds.column(db, row.id), customFieldIds.column(db, row.id)]);
  return { ...row, group_ids: groups, custom_field_ids: fields };
}

const exists = prepareQuery((db, accountId: number, id: number) =>
  db.selectFrom('contacts').select('id').where('account_id', '=', accountId).where('id', '=', id),
);

/** True when the account has a contact with this id. */
export async function contactExists(db: Db, accountId: number, id: number): Promise<boolean> {
  return (await exists.first(db, accountId, id)) !== undefined;
}

export interface NewContact {
  number: string;
  e164: string;
  optedOut: number;
  firstName: string;
  lastName: string;
  birthday: string | null;
  email: string;
  zip: string;
  city: string;
}

export async function insertContact(db: Db, accountId: number, c: NewContact, now: number): Promise<number> {
  const { id } = await db
    .insertInto('contacts')
    .values({
      account_id: accountId,
      number: c.number,
      number_e164: c.e164,
      opted_out: c.optedOut,
      first_name: c.firstName,
      last_name: c.lastName,
      birthday: c.birthday,
      email: c.email,
      zip: c.zip,
      city: c.city,
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}

/** All of the account's contacts in id order, as records would show them (for the demo listing). */
export async function listContactsE164(db: Db, accountId: number): Promise<string[]> {
  const rows = await db.selectFrom('contacts').select('number_e164').where('account_id', '=', accountId).orderBy('id').execute();
  return rows.map((r) => r.number_e164);
}
