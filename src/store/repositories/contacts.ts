import { sql, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import { createAnchors } from '../anchors.ts';
import { boundCount, isPostgres, jsonIds, ownerTerm, prepareQuery, sqliteDirect, sqliteText } from '../prepared.ts';
import { containsPattern, containsText, digitsPattern } from '../search.ts';
import { CONTACT_COLUMNS as COLUMNS, NO_BIRTHDAY, type ContactFields, type ContactRow } from '../../records/contacts.ts';
import type { Database, Row } from '../tables.ts';
import type { Db } from '../types.ts';

/**
 * Contacts (phone number records) with their derived GroupIds and CustomFieldIds. Every query is
 * scoped to the account (`account_id = ?`); the membership and entry tables carry the account in
 * their foreign keys to contacts, so a contact id the account owns only has rows of that account.
 */

/** `column IN (the strings of a JSON array parameter)`, as inJsonIds. */
function inJsonTexts(db: Kysely<Database>, json: unknown): RawBuilder<string> {
  return isPostgres(db)
    ? sql<string>`(select value from json_array_elements_text(cast(${json} as json)) as texts(value))`
    : sql<string>`(select value from json_each(${json}))`;
}

const byE164s = prepareQuery((db, accountId: number, e164sJson: string) =>
  db
    .selectFrom('contacts')
    .select([...COLUMNS, 'number_e164'])
    .where('account_id', '=', accountId)
    .where('number_e164', 'in', inJsonTexts(db, e164sJson)),
);

/**
 * The account's contacts with any of these E.164 numbers (one query for a batch of the import),
 * keyed by E.164, without their derived ids.
 */
export async function findContactsByE164(db: Db, accountId: number, e164s: readonly string[]): Promise<Map<string, ContactFields>> {
  const out = new Map<string, ContactFields>();
  for (let i = 0; i < e164s.length; i += 500) {
    for (const row of await byE164s.all(db, accountId, JSON.stringify(e164s.slice(i, i + 500)))) {
      const { number_e164, ...fields } = row;
      out.set(number_e164, fields);
    }
  }
  return out;
}

const byE164 = prepareQuery((db, accountId: number, e164: string) =>
  db.selectFrom('contacts').select(COLUMNS).where('account_id', '=', accountId).where('number_e164', '=', e164),
);
const byId = prepareQuery((db, accountId: number, id: number) =>
  db.selectFrom('contacts').select(COLUMNS).where('account_id', '=', accountId).where('id', '=', id),
);
// Both read only the (contact_id, …) covering indexes.
const groupIds = prepareQuery((db, accountId: number, contactId: number) =>
  db
    .selectFrom('group_members')
    .select('group_id')
    .where('contact_id', '=', contactId)
    .where('account_id', '=', accountId)
    .orderBy('group_id'),
);
const customFieldIds = prepareQuery((db, accountId: number, contactId: number) =>
  db
    .selectFrom('custom_field_entries')
    .select('custom_field_id')
    .where('contact_id', '=', contactId)
    .where('account_id', '=', accountId)
    .orderBy('custom_field_id'),
);

async function withIds(db: Db, accountId: number, row: ContactFields | undefined): Promise<ContactRow | undefined> {
  if (!row) return undefined;
  const [groups, fields] = await Promise.all([groupIds.column(db, accountId, row.id), customFieldIds.column(db, accountId, row.id)]);
  return { ...row, group_ids: groups, custom_field_ids: fields };
}

/** The account's contact with this E.164 number, with its group and custom field ids, if any. */
export async function findContactByE164(db: Db, accountId: number, e164: string): Promise<ContactRow | undefined> {
  return withIds(db, accountId, await byE164.first(db, accountId, e164));
}

/** The account's contact with this E.164 number, without its derived ids (the import's lookup), if any. */
export async function findContactFieldsByE164(db: Db, accountId: number, e164: string): Promise<ContactFields | undefined> {
  return byE164.first(db, accountId, e164);
}

/** The account's contact with this id, with its group and custom field ids, if any. */
export async function findContact(db: Db, accountId: number, id: number): Promise<ContactRow | undefined> {
  return withIds(db, accountId, await byId.first(db, accountId, id));
}

/** The account's contact with this id, without its derived ids, if any. */
export async function findContactFields(db: Db, accountId: number, id: number): Promise<ContactFields | undefined> {
  return byId.first(db, accountId, id);
}

const exists = prepareQuery((db, accountId: number, id: number) =>
  db.selectFrom('contacts').select('id').where('account_id', '=', accountId).where('id', '=', id),
);

/** True when the account has a contact with this id. */
export async function contactExists(db: Db, accountId: number, id: number): Promise<boolean> {
  return (await exists.first(db, accountId, id)) !== undefined;
}

// ------------------------------------------------------------------ lists (contacts/index)

/** Filters of contacts/index (API.md §10.2). `groupId` must already be known to be the account's. */
export interface ContactFilter {
  groupId?: number;
  optedOut?: number;
  /**
   * msgsvc's `Search` (docs/API.md §10.2), trimmed and not empty: FirstName, LastName or Email
   * contains it (ASCII case folded, src/store/search.ts), or Number contains its digits when it
   * has at least three.
   */
  search?: string;
}

// Counts: each reads one covering index range, never the table.
// The account's total, kept by migration 008's triggers (no row: no contact yet).
const countAll = prepareQuery((db, accountId: number) =>
  db.selectFrom('list_totals').select('contacts as n').where('account_id', '=', accountId),
);
const countOpted = prepareQuery((db, accountId: number, optedOut: number) =>
  db
    .selectFrom('contacts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .where('opted_out', '=', optedOut),
);
// A group's members all belong to its account (foreign keys on (account_id, …)): the primary key
// (group_id, contact_id) alone answers.
const countGroup = prepareQuery((db, groupId: number) =>
  db
    .selectFrom('group_members')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('group_id', '=', groupId),
);
const countGroupOpted = prepareQuery((db, accountId: number, groupId: number, optedOut: number) =>
  db
    .selectFrom('group_members')
    .innerJoin('contacts', 'contacts.id', 'group_members.contact_id')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('group_members.group_id', '=', groupId)
    .where('contacts.account_id', '=', accountId)
    .where('contacts.opted_out', '=', optedOut),
);

// The ids of one page, from the same covering index ranges (an OFFSET steps over index entries only).
const pageAll = prepareQuery((db, accountId: number, limit: number, offset: number) =>
  db
    .selectFrom('contacts')
    .select('id')
    .where('account_id', '=', accountId)
    .orderBy('id')
    .limit(boundCount(limit))
    .offset(boundCount(offset)),
);
const pageAllFrom = prepareQuery((db, accountId: number, fromId: number, limit: number, offset: number) =>
  db
    .selectFrom('contacts')
    .select('id')
    .where('account_id', '=', accountId)
    .where('id', '>=', fromId)
    .orderBy('id')
    .limit(boundCount(limit))
    .offset(boundCount(offset)),
);
// Deep unfiltered pages start from a cached anchor (src/store/anchors.ts), invalidated by migration 008's version.
const contactsVersion = prepareQuery((db, accountId: number) =>
  db.selectFrom('list_totals').select('contacts_version').where('account_id', '=', accountId),
);
const startOf = createAnchors('contacts', async (db, accountId) =>
  Number((await contactsVersion.first(db, accountId))?.contacts_version ?? 0),
);
const pageOpted = prepareQuery((db, accountId: number, optedOut: number, limit: number, offset: number) =>
  db
    .selectFrom('contacts')
    .select('id')
    .where('account_id', '=', accountId)
    .where('opted_out', '=', optedOut)
    .orderBy('id')
    .limit(boundCount(limit))
    .offset(boundCount(offset)),
);
const pageGroup = prepareQuery((db, groupId: number, limit: number, offset: number) =>
  db
    .selectFrom('group_members')
    .select('contact_id')
    .where('group_id', '=', groupId)
    .orderBy('contact_id')
    .limit(boundCount(limit))
    .offset(boundCount(offset)),
);
const pageGroupOpted = prepareQuery((db, accountId: number, groupId: number, optedOut: number, limit: number, offset: number) =>
  db
    .selectFrom('group_members')
    .innerJoin('contacts', 'contacts.id', 'group_members.contact_id')
    .select('group_members.contact_id')
    .where('group_members.group_id', '=', groupId)
    .where('contacts.account_id', '=', accountId)
    .where('contacts.opted_out', '=', optedOut)
    .orderBy('group_members.contact_id')
    .limit(boundCount(limit))
    .offset(boundCount(offset)),
);

// A page's rows and their derived ids, each in one query for the whole page (ids as a JSON array).
const rowsOf = prepareQuery((db, accountId: number, idsJson: string) =>
  db.selectFrom('contacts').select(COLUMNS).where('account_id', '=', accountId).where('id', 'in', jsonIds(db, idsJson)).orderBy('id'),
);
const groupIdsOf = prepareQuery((db, accountId: number, idsJson: string) =>
  db
    .selectFrom('group_members')
    .select(['contact_id', 'group_id'])
    .where('contact_id', 'in', jsonIds(db, idsJson))
    .where('account_id', '=', accountId)
    .orderBy('contact_id')
    .orderBy('group_id'),
);
const fieldIdsOf = prepareQuery((db, accountId: number, idsJson: string) =>
  db
    .selectFrom('custom_field_entries')
    .select(['contact_id', 'custom_field_id'])
    .where('contact_id', 'in', jsonIds(db, idsJson))
    .where(ownerTerm('account_id'), '=', accountId)
    .orderBy('contact_id')
    .orderBy('custom_field_id'),
);

// Search (msgsvc's `Search`): one statement whatever the other filters, which arrive as values
// (null: no such filter), so it is prepared once. It reads the account's (account_id, id) range and
// tests each row: no index serves "contains". `GroupId` is a probe of the (group_id, contact_id)
// primary key per row.
function searchWhere(
  db: Kysely<Database>,
  groupId: number | null,
  optedOut: number | null,
  pattern: string,
  digits: string | null,
): RawBuilder<SqlBool> {
  return sql<SqlBool>`(cast(${optedOut} as integer) is null or ${sql.ref('contacts.opted_out')} = ${optedOut})
    and (cast(${groupId} as integer) is null or exists (select 1 from ${sql.table('group_members')} m where m.group_id = ${groupId} and m.contact_id = ${sql.ref('contacts.id')}))
    and (${containsText(db, 'contacts.first_name', pattern)} or ${containsText(db, 'contacts.last_name', pattern)}
      or ${containsText(db, 'contacts.email', pattern)} or ${sql.ref('contacts.number')} like ${digits})`;
}
const countSearch = prepareQuery(
  (db, accountId: number, groupId: number | null, optedOut: number | null, pattern: string, digits: string | null) =>
    db
      .selectFrom('contacts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', accountId)
      .where(searchWhere(db, groupId, optedOut, pattern, digits)),
);
const pageSearch = prepareQuery(
  (
    db,
    accountId: number,
    groupId: number | null,
    optedOut: number | null,
    pattern: string,
    digits: string | null,
    limit: number,
    offset: number,
  ) =>
    db
      .selectFrom('contacts')
      .select('id')
      .where('account_id', '=', accountId)
      .where(searchWhere(db, groupId, optedOut, pattern, digits))
      .orderBy('id')
      .limit(boundCount(limit))
      .offset(boundCount(offset)),
);

/** The search statements' filter values: the other filters or null, and the two LIKE patterns. */
function searchArgs(filter: ContactFilter & { search: string }) {
  return [filter.groupId ?? null, filter.optedOut ?? null, containsPattern(filter.search), digitsPattern(filter.search)] as const;
}

/**
 * How many of the account's contacts match the filter. Without a filter: one row of `list_totals`
 * (migration 008). With one: a covering index range of the matching rows (tens of milliseconds
 * per million on SQLite). With `search`: the account's rows, each tested (countSearch).
 */
export async function countContacts(db: Db, accountId: number, filter: ContactFilter): Promise<number> {
  let row: { n: number } | undefined;
  if (filter.search !== undefined) {
    row = await countSearch.first(db, accountId, ...searchArgs({ ...filter, search: filter.search }));
  } else if (filter.groupId !== undefined) {
    row =
      filter.optedOut !== undefined
        ? await countGroupOpted.first(db, accountId, filter.groupId, filter.optedOut)
        : await countGroup.first(db, filter.groupId);
  } else {
    row = filter.optedOut !== undefined ? await countOpted.first(db, accountId, filter.optedOut) : await countAll.first(db, accountId);
  }
  return Number(row?.n ?? 0);
}

async function pageAllIds(db: Db, accountId: number, limit: number, offset: number): Promise<number[]> {
  const start = await startOf(db, accountId, offset);
  return start
    ? await pageAllFrom.column(db, accountId, start.fromId, limit, start.offset)
    : await pageAll.column(db, accountId, limit, offset);
}

/** The ids of one page of the account's contacts matching the filter, ascending (a covering index range; with `search`, pageSearch). */
async function pageIds(db: Db, accountId: number, filter: ContactFilter, limit: number, offset: number): Promise<number[]> {
  let ids: number[];
  if (filter.search !== undefined) {
    ids = await pageSearch.column(db, accountId, ...searchArgs({ ...filter, search: filter.search }), limit, offset);
  } else if (filter.groupId !== undefined) {
    ids =
      filter.optedOut !== undefined
        ? await pageGroupOpted.column(db, accountId, filter.groupId, filter.optedOut, limit, offset)
        : await pageGroup.column(db, filter.groupId, limit, offset);
  } else {
    ids =
      filter.optedOut !== undefined
        ? await pageOpted.column(db, accountId, filter.optedOut, limit, offset)
        : await pageAllIds(db, accountId, limit, offset);
  }
  return ids;
}

/**
 * One page of the account's contacts matching the filter, by id ascending, each with its group
 * and custom field ids. Four queries whatever the page size: the page's ids (a covering index
 * range), their rows, their memberships, their entries.
 */
export async function listContacts(db: Db, accountId: number, filter: ContactFilter, limit: number, offset: number): Promise<ContactRow[]> {
  const ids = await pageIds(db, accountId, filter, limit, offset);
  if (ids.length === 0) return [];
  const json = JSON.stringify(ids.map(Number));
  const [rows, groups, fields] = await Promise.all([
    rowsOf.all(db, accountId, json),
    groupIdsOf.all(db, accountId, json),
    fieldIdsOf.all(db, accountId, json),
  ]);
  const byContact = new Map<number, ContactRow>();
  const out = rows.map((r) => {
    const row: ContactRow = { ...r, group_ids: [], custom_field_ids: [] };
    byContact.set(Number(r.id), row);
    return row;
  });
  for (const g of groups) byContact.get(Number(g.contact_id))?.group_ids.push(g.group_id);
  for (const f of fields) byContact.get(Number(f.contact_id))?.custom_field_ids.push(f.custom_field_id);
  return out;
}

// API.md's Contact record built by SQLite (see listContactsJson): the keys, values and order of
// contactRecord (src/records/contacts.ts), times in UTC as `Y-m-d H:i:s`, each contact's
// group and custom field ids ascending, as listContacts gives them.
const contactsPageJson = `select coalesce(json_group_array(json_object(
    'Id', c."id", 'Number', c."number", 'OptedOut', c."opted_out", 'FirstName', c."first_name", 'LastName', c."last_name",
    'BirthDay', coalesce(c."birthday", '${NO_BIRTHDAY}'), 'Email', c."email", 'Zip', c."zip", 'City', c."city",
    'DateCreated', strftime('%Y-%m-%d %H:%M:%S', c."created_at", 'unixepoch'),
    'DateUpdated', strftime('%Y-%m-%d %H:%M:%S', c."updated_at", 'unixepoch'),
    'GroupIds', json((select coalesce(json_group_array(m."group_id" order by m."group_id"), '[]') from "group_members" m where m."contact_id" = c."id" and m."account_id" = c."account_id")),
    'CustomFieldIds', json((select coalesce(json_group_array(e."custom_field_id" order by e."custom_field_id"), '[]') from "custom_field_entries" e where e."contact_id" = c."id" and +e."account_id" = c."account_id"))
  ) order by c."id"), '[]')
  from "contacts" c where c."account_id" = ? and c."id" in (select value from json_each(?))`;

/**
 * The page listContacts returns, as the JSON text of its Contact records, built by SQLite
 * (json_group_array, one statement for rows, memberships and entries): no row or record objects
 * and no JSON.stringify on the event loop, and far less garbage per page (issue 15; measured in
 * bench/levers.ts). The same bytes as the records written by JSON.stringify
 * (test/store/perf-json-pages.test.ts), times in UTC. Undefined where SQLite cannot answer it directly
 * (PostgreSQL, or inside another transaction).
 */
export async function listContactsJson(
  db: Db,
  accountId: number,
  filter: ContactFilter,
  limit: number,
  offset: number,
): Promise<string | undefined> {
  if (!sqliteDirect(db)) return undefined;
  const ids = await pageIds(db, accountId, filter, limit, offset);
  if (ids.length === 0) return '[]';
  return sqliteText(db, contactsPageJson, [accountId, JSON.stringify(ids.map(Number))]);
}

// ------------------------------------------------------------------ writes

/** A contact's stored fields. */
export interface NewContact {
  /** Digits of the E.164 form (what Contact.Number shows). */
  number: string;
  e164: string;
  optedOut: number;
  firstName: string;
  lastName: string;
  /** `YYYY-MM-DD`, or null when unset. */
  birthday: string | null;
  email: string;
  zip: string;
  city: string;
}

const insert = prepareQuery(
  (
    db,
    accountId: number,
    number: string,
    e164: string,
    optedOut: number,
    firstName: string,
    lastName: string,
    birthday: string | null,
    email: string,
    zip: string,
    city: string,
    now: number,
  ) =>
    db
      .insertInto('contacts')
      .values({
        account_id: accountId,
        number,
        number_e164: e164,
        opted_out: optedOut,
        first_name: firstName,
        last_name: lastName,
        birthday,
        email,
        zip,
        city,
        created_at: now,
        updated_at: now,
      })
      .returning('id'),
);

/**
 * Adds a contact; returns its id.
 * @throws the driver's unique-violation error when the account has a contact with this E.164 number
 *   (index contacts_account_e164_uq).
 */
export async function insertContact(db: Db, accountId: number, c: NewContact, now: number): Promise<number> {
  const row = await insert.first(
    db,
    accountId,
    c.number,
    c.e164,
    c.optedOut,
    c.firstName,
    c.lastName,
    c.birthday,
    c.email,
    c.zip,
    c.city,
    now,
  );
  return Number(row!.id);
}

const update = prepareQuery(
  (
    db,
    accountId: number,
    id: number,
    number: string,
    e164: string,
    optedOut: number,
    firstName: string,
    lastName: string,
    birthday: string | null,
    email: string,
    zip: string,
    city: string,
    now: number,
  ) =>
    db
      .updateTable('contacts')
      .set({
        number,
        number_e164: e164,
        opted_out: optedOut,
        first_name: firstName,
        last_name: lastName,
        birthday,
        email,
        zip,
        city,
        updated_at: now,
      })
      .where('account_id', '=', accountId)
      .where('id', '=', id),
);

/**
 * Writes every field of the account's contact `id`. Returns false when it has no such contact.
 * @throws the driver's unique-violation error when another contact of the account has this number.
 */
export async function updateContact(db: Db, accountId: number, id: number, c: NewContact, now: number): Promise<boolean> {
  return (
    (await update.run(db, accountId, id, c.number, c.e164, c.optedOut, c.firstName, c.lastName, c.birthday, c.email, c.zip, c.city, now)) >
    0
  );
}

const remove = prepareQuery((db, accountId: number, id: number) =>
  db.deleteFrom('contacts').where('account_id', '=', accountId).where('id', '=', id),
);

/**
 * Deletes the account's contact `id`; its group memberships and custom field entries go with it
 * (foreign keys ON DELETE CASCADE, migration 001). Returns false when it has no such contact.
 */
export async function deleteContact(db: Db, accountId: number, id: number): Promise<boolean> {
  return (await remove.run(db, accountId, id)) > 0;
}

const ownedGroups = prepareQuery((db, accountId: number, idsJson: string) =>
  db.selectFrom('groups').select('id').where('account_id', '=', accountId).where('id', 'in', jsonIds(db, idsJson)),
);

/** Of `ids`, those that are the account's groups (at most 500 per query; any number of ids). */
export async function ownedGroupIds(db: Db, accountId: number, ids: readonly number[]): Promise<Set<number>> {
  const out = new Set<number>();
  for (let i = 0; i < ids.length; i += 500) {
    for (const id of await ownedGroups.column(db, accountId, JSON.stringify(ids.slice(i, i + 500)))) out.add(Number(id));
  }
  return out;
}

const clearOtherGroups = prepareQuery((db, accountId: number, contactId: number, keepJson: string) =>
  db
    .deleteFrom('group_members')
    .where('account_id', '=', accountId)
    .where('contact_id', '=', contactId)
    .where('group_id', 'not in', jsonIds(db, keepJson)),
);
const addGroup = prepareQuery((db, accountId: number, groupId: number, contactId: number) =>
  db
    .insertInto('group_members')
    .values({ account_id: accountId, group_id: groupId, contact_id: contactId })
    .onConflict((oc) => oc.columns(['group_id', 'contact_id']).doNothing()),
);

/**
 * Replaces the contact's group memberships with `groupIds` (all the account's groups, checked by
 * the caller; the foreign keys refuse any other): the others go, the missing ones are added, the
 * kept ones stay. Returns true when a membership changed (the caller then moves the contact's
 * DateUpdated: its GroupIds changed, docs/API.md §4.6).
 */
export async function setContactGroups(
  db: Db,
  accountId: number,
  contactId: number,
  groupIds: readonly number[],
  replace = true,
): Promise<boolean> {
  let changed = replace ? await clearOtherGroups.run(db, accountId, contactId, JSON.stringify(groupIds)) : 0;
  for (const g of groupIds) changed += await addGroup.run(db, accountId, g, contactId);
  return changed > 0;
}

const upsertEntry = prepareQuery((db, accountId: number, fieldId: number, contactId: number, entry: string, now: number) =>
  db
    .insertInto('custom_field_entries')
    .values({ account_id: accountId, custom_field_id: fieldId, contact_id: contactId, entry, created_at: now, updated_at: now })
    // An entry that already holds this value is not written: its DateUpdated stays (docs/API.md §4.6).
    .onConflict((oc) =>
      oc
        .columns(['custom_field_id', 'contact_id'])
        .doUpdateSet((eb) => ({ entry: eb.ref('excluded.entry'), updated_at: eb.ref('excluded.updated_at') }))
        .where((eb) => eb('custom_field_entries.entry', 'is distinct from', eb.ref('excluded.entry'))),
    ),
);

/** Sets the contact's entry of the account's custom field `fieldId`, creating it or changing its value. */
export async function setContactEntry(
  db: Db,
  accountId: number,
  fieldId: number,
  contactId: number,
  entry: string,
  now: number,
): Promise<void> {
  await upsertEntry.run(db, accountId, fieldId, contactId, entry, now);
}

const fieldNames = prepareQuery((db, accountId: number) =>
  db.selectFrom('custom_fields').select(['id', 'name', 'name_key']).where('account_id', '=', accountId).orderBy('id'),
);

/** The account's custom fields: id, name and case-folded name key (the import's column names). */
export async function listCustomFieldNames(db: Db, accountId: number): Promise<Pick<Row<'custom_fields'>, 'id' | 'name' | 'name_key'>[]> {
  return fieldNames.all(db, accountId);
}

// Savepoints around one import row, so that a row commits whole or not at all inside a batch.
const rawStatement = (text: string) => prepareQuery((db) => ({ compile: () => sql.raw(text).compile(db) }));
const savepoint = rawStatement('SAVEPOINT contact_row');
const release = rawStatement('RELEASE SAVEPOINT contact_row');
const rollbackTo = rawStatement('ROLLBACK TO SAVEPOINT contact_row');

/**
 * Runs `fn` inside a savepoint of the open transaction `tx`: when it throws, its writes are undone
 * (the transaction stays usable) and the error is rethrown.
 */
export async function inSavepoint<T>(tx: Db, fn: () => Promise<T>): Promise<T> {
  await savepoint.run(tx);
  try {
    const result = await fn();
    await release.run(tx);
    return result;
  } catch (err) {
    await rollbackTo.run(tx);
    await release.run(tx);
    throw err;
  }
}

/** All of the account's contacts in id order, as records would show them (for the demo listing). */
export async function listContactsE164(db: Db, accountId: number): Promise<string[]> {
  const rows = await db.selectFrom('contacts').select('number_e164').where('account_id', '=', accountId).orderBy('id').execute();
  return rows.map((r) => r.number_e164);
}
