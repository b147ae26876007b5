import { sql } from 'kysely';
import { boundCount, jsonIds, prepareQuery } from '../prepared.ts';
import { containsPattern, containsText } from '../search.ts';
import { GROUP_COLUMNS, type GroupRow } from '../../records/groups.ts';
import type { Db } from '../types.ts';

/**
 * Groups and their membership (Group.PhoneNumberIds is derived from group_members). Every query
 * is scoped to the account (API.md §1.2); ids are row ids that fit the id column (callers turn
 * anything else into "not found" / "is invalid" before asking).
 */

/** The largest id a row can have (PostgreSQL `serial`): a larger value is never looked up. */
export const MAX_ROW_ID = 2_147_483_647;

const byId = prepareQuery((db, accountId: number, id: number) =>
  db.selectFrom('groups').select(GROUP_COLUMNS).where('account_id', '=', accountId).where('id', '=', id),
);
const memberIds = prepareQuery((db, accountId: number, groupId: number) =>
  db
    .selectFrom('group_members')
    .select('contact_id')
    .where('group_id', '=', groupId)
    .where('account_id', '=', accountId)
    .orderBy('contact_id'),
);
const exists = prepareQuery((db, accountId: number, id: number) =>
  db.selectFrom('groups').select('id').where('account_id', '=', accountId).where('id', '=', id),
);

/** The account's group with this id and its member contact ids, if any. */
export async function findGroup(db: Db, accountId: number, id: number): Promise<GroupRow | undefined> {
  const row = await byId.first(db, accountId, id);
  if (!row) return undefined;
  return { ...row, member_ids: await memberIds.column(db, accountId, id) };
}

/** True when the account has a group with this id (without reading its members). */
export async function groupExists(db: Db, accountId: number, id: number): Promise<boolean> {
  return (await exists.first(db, accountId, id)) !== undefined;
}

const count = prepareQuery((db, accountId: number) =>
  db
    .selectFrom('groups')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId),
);

// msgsvc's `Search` (docs/API.md §10.3): the name contains the text, ASCII case folded (src/store/search.ts).
const countSearch = prepareQuery((db, accountId: number, pattern: string) =>
  db
    .selectFrom('groups')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .where(containsText(db, 'name', pattern)),
);

/**
 * How many groups the account has (X-Pagination-Total-Count of groups/index); with `search`
 * (trimmed, not empty), how many of them have a name containing it.
 */
export async function countGroups(db: Db, accountId: number, search?: string): Promise<number> {
  const row = search === undefined ? await count.first(db, accountId) : await countSearch.first(db, accountId, containsPattern(search));
  return Number(row?.n ?? 0);
}

const page = prepareQuery((db, accountId: number, limit: number, offset: number) =>
  db
    .selectFrom('groups')
    .select(GROUP_COLUMNS)
    .where('account_id', '=', accountId)
    .orderBy('id')
    .limit(boundCount(limit))
    .offset(boundCount(offset)),
);

const pageSearch = prepareQuery((db, accountId: number, pattern: string, limit: number, offset: number) =>
  db
    .selectFrom('groups')
    .select(GROUP_COLUMNS)
    .where('account_id', '=', accountId)
    .where(containsText(db, 'name', pattern))
    .orderBy('id')
    .limit(boundCount(limit))
    .offset(boundCount(offset)),
);

/**
 * One page of the account's groups by id ascending (with `search`: of those whose name contains
 * it), each with its member contact ids. The members of the whole page come from one query (not
 * one per group), read off the (group_id, contact_id) primary key.
 */
export async function listGroups(db: Db, accountId: number, limit: number, offset: number, search?: string): Promise<GroupRow[]> {
  const rows =
    search === undefined
      ? await page.all(db, accountId, limit, offset)
      : await pageSearch.all(db, accountId, containsPattern(search), limit, offset);
  if (rows.length === 0) return [];
  const members = await db
    .selectFrom('group_members')
    .select(['group_id', 'contact_id'])
    .where('account_id', '=', accountId)
    .where(
      'group_id',
      'in',
      rows.map((r) => r.id),
    )
    .orderBy('group_id')
    .orderBy('contact_id')
    .execute();
  const byGroup = new Map<number, number[]>(rows.map((r) => [r.id, []]));
  for (const m of members) byGroup.get(m.group_id)?.push(m.contact_id);
  return rows.map((r) => ({ ...r, member_ids: byGroup.get(r.id)! }));
}

const rename = prepareQuery((db, accountId: number, id: number, name: string, now: number) =>
  db.updateTable('groups').set({ name, updated_at: now }).where('account_id', '=', accountId).where('id', '=', id),
);
const renameWithNote = prepareQuery((db, accountId: number, id: number, name: string, note: string, now: number) =>
  db.updateTable('groups').set({ name, note, updated_at: now }).where('account_id', '=', accountId).where('id', '=', id),
);

/** Renames a group (and changes its note when `note` is given). Returns false when the account has no such group. */
export async function updateGroup(
  db: Db,
  accountId: number,
  id: number,
  name: string,
  note: string | undefined,
  now: number,
): Promise<boolean> {
  const changed =
    note === undefined ? await rename.run(db, accountId, id, name, now) : await renameWithNote.run(db, accountId, id, name, note, now);
  return changed > 0;
}

/** What `changeGroup` may set; an absent property keeps its column. */
export interface GroupChange {
  name?: string;
  note?: string;
  keywordId?: number;
  parentId?: number;
}

/**
 * Sets the given columns of the account's group (and `updated_at`), only when one of them differs
 * from its stored value: an update that changes nothing saves nothing and leaves DateUpdated as it
 * was (Yii2 writes only dirty attributes; docs/API.md §4.6). Returns false when the account has
 * no such group or nothing changed.
 */
export async function changeGroup(db: Db, accountId: number, id: number, change: GroupChange, now: number): Promise<boolean> {
  const columns = {
    ...(change.name !== undefined ? { name: change.name } : {}),
    ...(change.note !== undefined ? { note: change.note } : {}),
    ...(change.keywordId !== undefined ? { keyword_id: change.keywordId } : {}),
    ...(change.parentId !== undefined ? { parent_id: change.parentId } : {}),
  };
  const names = Object.keys(columns) as (keyof typeof columns)[];
  if (names.length === 0) return false;
  const result = await db
    .updateTable('groups')
    .set({ updated_at: now, ...columns })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .where((eb) => eb.or(names.map((c) => eb(c, 'is distinct from', columns[c]!))))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export interface NewGroup {
  name: string;
  note: string;
  keywordId: number;
  parentId: number;
}

/** Inserts a group of the account and returns its id. */
export async function insertGroup(db: Db, accountId: number, g: NewGroup, now: number): Promise<number> {
  const { id } = await db
    .insertInto('groups')
    .values({
      account_id: accountId,
      name: g.name,
      note: g.note,
      keyword_id: g.keywordId,
      parent_id: g.parentId,
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}

/** Adds one contact to a group (the demo account); fails if it is already a member. */
export async function addGroupMember(db: Db, accountId: number, groupId: number, contactId: number): Promise<void> {
  await db.insertInto('group_members').values({ account_id: accountId, group_id: groupId, contact_id: contactId }).execute();
}

/** Ids of all the account's groups, ascending. */
export async function listGroupIds(db: Db, accountId: number): Promise<number[]> {
  const rows = await db.selectFrom('groups').select('id').where('account_id', '=', accountId).orderBy('id').execute();
  return rows.map((r) => r.id);
}

const reservation = prepareQuery((db, accountId: number, id: number) =>
  db.selectFrom('keyword_reservations').select('id').where('account_id', '=', accountId).where('id', '=', id),
);

/** True when the account has a keyword reservation with this id (a group's KeywordId, API.md §10.3). Read only. */
export async function keywordReservationExists(db: Db, accountId: number, id: number): Promise<boolean> {
  return (await reservation.first(db, accountId, id)) !== undefined;
}

/**
 * The ids on the way up from the account's group `id` to its root: `id` itself, its parent, the
 * parent's parent, and so on, in one recursive query. Empty when the account has no group `id`.
 * A cycle already in the data cannot make it loop (UNION drops rows already seen).
 */
export async function ancestorIds(db: Db, accountId: number, id: number): Promise<number[]> {
  const result = await sql<{ id: number }>`
    WITH RECURSIVE up(id, parent_id) AS (
      SELECT id, parent_id FROM groups WHERE account_id = ${accountId} AND id = ${id}
      UNION
      SELECT g.id, g.parent_id FROM groups g JOIN up ON g.id = up.parent_id WHERE g.account_id = ${accountId}
    )
    SELECT id FROM up`.execute(db);
  return result.rows.map((r) => Number(r.id));
}

/**
 * Serialises changes to the account's group tree (re-parenting, deleting) on PostgreSQL, until the
 * transaction ends, so two concurrent updates cannot build a cycle between them and a group
 * cannot be given a parent that is being deleted. SQLite runs one write transaction at a time
 * already: nothing to do there.
 */
export async function lockGroupTree(db: Db, dialect: 'sqlite' | 'postgres', accountId: number): Promise<void> {
  if (dialect !== 'postgres') return;
  // Key space 1 = "grps" (0x67727073), key 2 = the account.
  await sql`SELECT pg_advisory_xact_lock(${0x67727073}, ${accountId})`.execute(db);
}

/**
 * Deletes the account's group: its memberships go with it (group_members' foreign key cascades),
 * the member contacts stay, and its child groups get parent 0 (and `updated_at` = now).
 * Returns false when the account has no such group.
 */
export async function deleteGroup(db: Db, accountId: number, id: number, now: number): Promise<boolean> {
  await db
    .updateTable('groups')
    .set({ parent_id: 0, updated_at: now })
    .where('account_id', '=', accountId)
    .where('parent_id', '=', id)
    .execute();
  const result = await db.deleteFrom('groups').where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * How many of `ids` (distinct, each at most MAX_ROW_ID) are contacts of the account: one query
 * for the whole list (at most 1,000 ids, API.md §10.3).
 */
// One statement shape whatever the number of ids (a JSON array parameter): prepared once, where
// a statement with a placeholder per id was built and compiled by Kysely on every request
// (measured: groups/add-contacts of 1,000 ids, ~1.9 ms of CPU per request, most of it that).
const ownContacts = prepareQuery((db, accountId: number, idsJson: string) =>
  db
    .selectFrom('contacts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .where('id', 'in', jsonIds(db, idsJson)),
);
const addMembers = prepareQuery((db, accountId: number, groupId: number, idsJson: string) =>
  db
    .insertInto('group_members')
    .columns(['account_id', 'group_id', 'contact_id'])
    // `where true`: SQLite reads an INSERT … SELECT followed by ON CONFLICT only with a WHERE.
    .expression(
      sql`select cast(${accountId} as integer), cast(${groupId} as integer), ids.value from ${jsonIds(db, idsJson)} as ids where true`,
    )
    .onConflict((oc) => oc.columns(['group_id', 'contact_id']).doNothing()),
);
const removeMembers = prepareQuery((db, accountId: number, groupId: number, idsJson: string) =>
  db
    .deleteFrom('group_members')
    .where('account_id', '=', accountId)
    .where('group_id', '=', groupId)
    .where('contact_id', 'in', jsonIds(db, idsJson)),
);

/** How many of `ids` are contacts of the account (each counted once). */
export async function countOwnContacts(db: Db, accountId: number, ids: readonly number[]): Promise<number> {
  if (ids.length === 0) return 0;
  const row = await ownContacts.first(db, accountId, JSON.stringify(ids));
  return Number(row?.n ?? 0);
}

/**
 * Makes the contacts members of the group in one INSERT … SELECT that skips existing
 * memberships (ON CONFLICT DO NOTHING). Returns how many memberships were new.
 */
export async function addGroupMembers(db: Db, accountId: number, groupId: number, contactIds: readonly number[]): Promise<number> {
  if (contactIds.length === 0) return 0;
  return addMembers.run(db, accountId, groupId, JSON.stringify(contactIds));
}

/** Removes the contacts from the group (non-members are skipped). Returns how many memberships went. */
export async function removeGroupMembers(db: Db, accountId: number, groupId: number, contactIds: readonly number[]): Promise<number> {
  if (contactIds.length === 0) return 0;
  return removeMembers.run(db, accountId, groupId, JSON.stringify(contactIds));
}

/** Sets the group's `updated_at` (its PhoneNumberIds changed). */
export async function touchGroup(db: Db, accountId: number, id: number, now: number): Promise<void> {
  await db.updateTable('groups').set({ updated_at: now }).where('account_id', '=', accountId).where('id', '=', id).execute();
}
