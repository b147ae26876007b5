import { prepareQuery } from '../prepared.ts';
import type { Db } from '../types.ts';
import type { CustomFieldRow, EntryRow } from '../../domain/records.ts';

/** Custom contact fields and their entries (CustomField.Value is derived from custom_field_entries). */

const ENTRY_COLUMNS = ['id', 'custom_field_id', 'contact_id', 'entry', 'created_at', 'updated_at'] as const;

/** The account's custom field with this id and all its entries, if any. */
export async function findCustomField(db: Db, accountId: number, id: number): Promise<CustomFieldRow | undefined> {
  const row = await db
    .selectFrom('custom_fields')
    .select(['id', 'name', 'created_at', 'updated_at'])
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) return undefined;
  const entries = await db.selectFrom('custom_field_entries').select(ENTRY_COLUMNS).where('custom_field_id', '=', id).orderBy('id').execute();
  return { ...row, entries };
}

const fieldExists = prepareQuery((db, accountId: number, id: number) =>
  db.selectFrom('custom_fields').select('id').where('account_id', '=', accountId).where('id', '=', id),
);

/** True when the account has a custom field with this id. */
export async function customFieldExists(db: Db, accountId: number, id: number): Promise<boolean> {
  return (await fieldExists.first(db, accountId, id)) !== undefined;
}

/** Renames a custom field. Returns false when the account has no such field. */
export async function renameCustomField(db: Db, accountId: number, id: number, name: string, now: number): Promise<boolean> {
  const res = await db
    .updateTable('custom_fields')
    .set({ name, updated_at: now })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function insertCustomField(db: Db, accountId: number, name: string, now: number): Promise<number> {
  const { id } = await db
    .insertInto('custom_fields')
    .values({ account_id: accountId, name, created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}

const entryById = prepareQuery((db, accountId: number, id: number) =>
  db.selectFrom('custom_field_entries').select(ENTRY_COLUMNS).where('account_id', '=', accountId).where('id', '=', id),
);

/** The account's custom field entry with this id, if any. */
export async function findEntry(db: Db, accountId: number, id: number): Promise<EntryRow | undefined> {
  return entryById.first(db, accountId, id);
}

const setEntry = prepareQuery((db, accountId: number, id: number, customFieldId: number, contactId: number, entry: string, now: number) =>
  db
    .updateTable('custom_field_entries')
    .set({ custom_field_id: customFieldId, contact_id: contactId, entry, updated_at: now })
    .where('account_id', '=', accountId)
    .where('id', '=', id),
);

/**
 * Points an entry at a field and contact and sets its value.
 * @throws the driver's unique-violation error when that field × contact already has another entry.
 */
export async function updateEntry(
  db: Db,
  accountId: number,
  id: number,
  change: { customFieldId: number; contactId: number; entry: string },
  now: number,
): Promise<boolean> {
  return (await setEntry.run(db, accountId, id, change.customFieldId, change.contactId, change.entry, now)) > 0;
}

export async function insertEntry(db: Db, accountId: number, customFieldId: number, contactId: number, entry: string, now: number): Promise<number> {
  const { id } = await db
    .insertInto('custom_field_entries')
    .values({ account_id: accountId, custom_field_id: customFieldId, contact_id: contactId, entry, created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}

/** Ids of all the account's custom fields, ascending. */
export async function listCustomFieldIds(db: Db, accountId: number): Promise<number[]> {
  const rows = await db.selectFrom('custom_fields').select('id').where('account_id', '=', accountId).orderBy('id').execute();
  return rows.map((r) => r.id);
}

/** True when an entry other than `exceptId` already holds this field × contact pair. */
export async function entryPairTaken(db: Db, customFieldId: number, contactId: number, exceptId: number): Promise<boolean> {
  return (await pairTaken.first(db, customFieldId, contactId, exceptId)) !== undefined;
}

const pairTaken = prepareQuery((db, customFieldId: number, contactId: number, exceptId: number) =>
  db.selectFrom('custom_field_entries').select('id').where('custom_field_id', '=', customFieldId).where('contact_id', '=', contactId).where('id', '!=', exceptId),
);
