import { boundCount, ownerTerm, prepareQuery } from '../prepared.ts';
import { CUSTOM_FIELD_COLUMNS, ENTRY_COLUMNS, type CustomFieldRow, type EntryRow } from '../../records/custom-fields.ts';
import type { Db } from '../types.ts';

/** Custom contact fields and their entries (CustomField.Value is derived from custom_field_entries). */

const fieldById = prepareQuery((db, accountId: number, id: number) =>
  db.selectFrom('custom_fields').select(CUSTOM_FIELD_COLUMNS).where('account_id', '=', accountId).where('id', '=', id),
);

// The entries of the account's fields whose ids lie in [from, to]: the entries of one field
// (from = to), or of a page of fields, which is a contiguous run of the account's field ids.
const entriesOfFieldRange = prepareQuery((db, accountId: number, from: number, to: number) =>
  db
    .selectFrom('custom_field_entries')
    .select(ENTRY_COLUMNS)
    .where(ownerTerm('account_id'), '=', accountId)
    .where('custom_field_id', '>=', from)
    .where('custom_field_id', '<=', to)
    .orderBy('custom_field_id')
    .orderBy('id'),
);

/** The account's custom field with this id and all its entries, if any. */
export async function findCustomField(db: Db, accountId: number, id: number): Promise<CustomFieldRow | undefined> {
  const row = await fieldById.first(db, accountId, id);
  if (!row) return undefined;
  const entries = await entriesOfFieldRange.all(db, accountId, id, id);
  return { ...row, entries };
}

const fieldCount = prepareQuery((db, accountId: number) =>
  db
    .selectFrom('custom_fields')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId),
);

/** How many custom fields the account has. */
export async function countCustomFields(db: Db, accountId: number): Promise<number> {
  return Number((await fieldCount.first(db, accountId))?.n ?? 0);
}

const fieldPage = prepareQuery((db, accountId: number, limit: number, offset: number) =>
  db
    .selectFrom('custom_fields')
    .select(CUSTOM_FIELD_COLUMNS)
    .where('account_id', '=', accountId)
    .orderBy('id')
    .limit(boundCount(limit))
    .offset(boundCount(offset)),
);

/**
 * One page of the account's custom fields in id order, each with all its entries. Two queries
 * whatever the page size: the fields, then the entries of the page's fields (a page is a
 * contiguous run of the account's field ids, so one id range selects exactly its entries).
 */
export async function listCustomFields(db: Db, accountId: number, limit: number, offset: number): Promise<CustomFieldRow[]> {
  const rows = await fieldPage.all(db, accountId, limit, offset);
  if (rows.length === 0) return [];
  const byField = new Map<number, EntryRow[]>();
  const page = rows.map((r) => {
    const entries: EntryRow[] = [];
    byField.set(r.id, entries);
    return { ...r, entries };
  });
  for (const e of await entriesOfFieldRange.all(db, accountId, rows[0]!.id, rows[rows.length - 1]!.id))
    byField.get(e.custom_field_id)?.push(e);
  return page;
}

const nameTaken = prepareQuery((db, accountId: number, nameKey: string, exceptId: number) =>
  db
    .selectFrom('custom_fields')
    .select('id')
    .where('account_id', '=', accountId)
    .where('name_key', '=', nameKey)
    .where('id', '!=', exceptId),
);

/**
 * True when a custom field of the account other than `exceptId` (0: none) has this case-folded
 * name. The unique index on (account_id, name_key) stays the final arbiter between racing writes.
 */
export async function customFieldNameTaken(db: Db, accountId: number, nameKey: string, exceptId = 0): Promise<boolean> {
  return (await nameTaken.first(db, accountId, nameKey, exceptId)) !== undefined;
}

const fieldDelete = prepareQuery((db, accountId: number, id: number) =>
  db.deleteFrom('custom_fields').where('account_id', '=', accountId).where('id', '=', id),
);

/**
 * Deletes the account's custom field; its entries go with it (foreign key ON DELETE CASCADE).
 * Returns false when the account has no such field.
 */
export async function deleteCustomField(db: Db, accountId: number, id: number): Promise<boolean> {
  return (await fieldDelete.run(db, accountId, id)) > 0;
}

const fieldExists = prepareQuery((db, accountId: number, id: number) =>
  db.selectFrom('custom_fields').select('id').where('account_id', '=', accountId).where('id', '=', id),
);

/** True when the account has a custom field with this id. */
export async function customFieldExists(db: Db, accountId: number, id: number): Promise<boolean> {
  return (await fieldExists.first(db, accountId, id)) !== undefined;
}

/**
 * Renames a custom field. `nameKey` is its case-folded name (unique per account). The same name
 * saves nothing and leaves DateUpdated as it was (Yii2 writes only dirty attributes; docs/API.md
 * §4.6). Returns false when the account has no such field or the name is its own.
 * @throws the driver's unique-violation error when another field of the account has that key.
 */
export async function renameCustomField(
  db: Db,
  accountId: number,
  id: number,
  name: string,
  nameKey: string,
  now: number,
): Promise<boolean> {
  const res = await db
    .updateTable('custom_fields')
    .set({ name, name_key: nameKey, updated_at: now })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .where('name', 'is distinct from', name)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/**
 * Adds a custom field. `nameKey` is its case-folded name (unique per account).
 * @throws the driver's unique-violation error when the account has a field with that key.
 */
export async function insertCustomField(db: Db, accountId: number, name: string, nameKey: string, now: number): Promise<number> {
  const { id } = await db
    .insertInto('custom_fields')
    .values({ account_id: accountId, name, name_key: nameKey, created_at: now, updated_at: now })
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
    .where('id', '=', id)
    // Only when a value differs: an update that changes nothing saves nothing (DateUpdated stays).
    .where((eb) =>
      eb.or([
        eb('custom_field_id', 'is distinct from', customFieldId),
        eb('contact_id', 'is distinct from', contactId),
        eb('entry', 'is distinct from', entry),
      ]),
    ),
);

/**
 * Points an entry at a field and contact and sets its value, only when one of the three differs
 * from the stored one (else nothing is saved and DateUpdated stays, as Yii2 writes only dirty
 * attributes; docs/API.md §4.6). Returns false when nothing was written.
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

/**
 * Adds an entry: the value of the account's custom field for one of its contacts.
 * @throws the driver's unique-violation error when that field × contact already has an entry,
 * and a foreign-key error when the field or contact is not the account's.
 */
export async function insertEntry(
  db: Db,
  accountId: number,
  customFieldId: number,
  contactId: number,
  entry: string,
  now: number,
): Promise<number> {
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

/**
 * True when an entry of the account other than `exceptId` (0: none) already holds this
 * field × contact pair.
 */
export async function entryPairTaken(db: Db, accountId: number, customFieldId: number, contactId: number, exceptId = 0): Promise<boolean> {
  return (await pairTaken.first(db, accountId, customFieldId, contactId, exceptId)) !== undefined;
}

const pairTaken = prepareQuery((db, accountId: number, customFieldId: number, contactId: number, exceptId: number) =>
  db
    .selectFrom('custom_field_entries')
    .select('id')
    .where('account_id', '=', accountId)
    .where('custom_field_id', '=', customFieldId)
    .where('contact_id', '=', contactId)
    .where('id', '!=', exceptId),
);

/** Filters of the entry list: a field, a contact, or both (each a positive safe integer). */
export interface EntryFilter {
  customFieldId?: number | undefined;
  contactId?: number | undefined;
}

// One prepared count and page query per combination of filters (a query's shape never depends on
// a value, src/store/prepared.ts). Unused filters are bound to 0 and left out of the SQL.
type EntryQueries = {
  count: ReturnType<typeof entryCountQuery>;
  page: ReturnType<typeof entryPageQuery>;
};

function entryCountQuery(byField: boolean, byContact: boolean) {
  return prepareQuery((db, accountId: number, customFieldId: number, contactId: number) => {
    let q = db
      .selectFrom('custom_field_entries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', accountId);
    if (byField) q = q.where('custom_field_id', '=', customFieldId);
    if (byContact) q = q.where('contact_id', '=', contactId);
    return q;
  });
}

function entryPageQuery(byField: boolean, byContact: boolean) {
  return prepareQuery((db, accountId: number, customFieldId: number, contactId: number, limit: number, offset: number) => {
    let q = db.selectFrom('custom_field_entries').select(ENTRY_COLUMNS).where('account_id', '=', accountId);
    if (byField) q = q.where('custom_field_id', '=', customFieldId);
    if (byContact) q = q.where('contact_id', '=', contactId);
    return q.orderBy('id').limit(boundCount(limit)).offset(boundCount(offset));
  });
}

const entryQueries: EntryQueries[] = [false, true].flatMap((byField) =>
  [false, true].map((byContact) => ({ count: entryCountQuery(byField, byContact), page: entryPageQuery(byField, byContact) })),
);

function entryQueriesFor(filter: EntryFilter): EntryQueries {
  return entryQueries[(filter.customFieldId !== undefined ? 2 : 0) + (filter.contactId !== undefined ? 1 : 0)]!;
}

/** How many entries of the account match the filter. */
export async function countEntries(db: Db, accountId: number, filter: EntryFilter = {}): Promise<number> {
  const row = await entryQueriesFor(filter).count.first(db, accountId, filter.customFieldId ?? 0, filter.contactId ?? 0);
  return Number(row?.n ?? 0);
}

/** One page of the account's entries that match the filter, in id order. */
export async function listEntries(db: Db, accountId: number, filter: EntryFilter, limit: number, offset: number): Promise<EntryRow[]> {
  return entryQueriesFor(filter).page.all(db, accountId, filter.customFieldId ?? 0, filter.contactId ?? 0, limit, offset);
}

const entryDelete = prepareQuery((db, accountId: number, id: number) =>
  db.deleteFrom('custom_field_entries').where('account_id', '=', accountId).where('id', '=', id),
);

/** Deletes the account's entry. Returns false when the account has no such entry. */
export async function deleteEntry(db: Db, accountId: number, id: number): Promise<boolean> {
  return (await entryDelete.run(db, accountId, id)) > 0;
}
