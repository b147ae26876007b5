import { prepareQuery } from '../prepared.ts';
import type { Db } from '../types.ts';
import type { GroupRow } from '../../domain/records.ts';

/** Groups and their membership (Group.PhoneNumberIds is derived from group_members). */

const byId = prepareQuery((db, accountId: number, id: number) =>
  db.selectFrom('groups').select(['id', 'name', 'note', 'keyword_id', 'parent_id', 'created_at', 'updated_at']).where('account_id', '=', accountId).where('id', '=', id),
);
const memberIds = prepareQuery((db, groupId: number) =>
  db.selectFrom('group_members').select('contact_id').where('group_id', '=', groupId).orderBy('contact_id'),
);
const exists = prepareQuery((db, accountId: number, id: number) =>
  db.selectFrom('groups').select('id').where('account_id', '=', accountId).where('id', '=', id),
);

/** The account's group with this id and its member contact ids, if any. */
export async function findGroup(db: Db, accountId: number, id: number): Promise<GroupRow | undefined> {
  const row = await byId.first(db, accountId, id);
  if (!row) return undefined;
  return { ...row, member_ids: await memberIds.column(db, id) };
}

/** True when the account has a group with this id (without reading its members). */
export async function groupExists(db: Db, accountId: number, id: number): Promise<boolean> {
  return (await exists.first(db, accountId, id)) !== undefined;
}

const rename = prepareQuery((db, accountId: number, id: number, name: string, now: number) =>
  db.updateTable('groups').set({ name, updated_at: now }).where('account_id', '=', accountId).where('id', '=', id),
);
const renameWithNote = prepareQuery((db, accountId: number, id: number, name: string, note: string, now: number) =>
  db.updateTable('groups').set({ name, note, updated_at: now }).where('account_id', '=', accountId).where('id', '=', id),
);

/** Renames a group (and changes its note when `note` is given). Returns false when the account has no such group. */
export async function updateGroup(db: Db, accountId: number, id: number, name: string, note: string | undefined, now: number): Promise<boolean> {
  const changed = note === undefined ? await rename.run(db, accountId, id, name, now) : await renameWithNote.run(db, accountId, id, name, note, now);
  return changed > 0;
}

export interface NewGroup {
  name: string;
  note: string;
  keywordId: number;
  parentId: number;
}

export async function insertGroup(db: Db, accountId: number, g: NewGroup, now: number): Promise<number> {
  const { id } = await db
    .insertInto('groups')
    .values({ account_id: accountId, name: g.name, note: g.note, keyword_id: g.keywordId, parent_id: g.parentId, created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}

export async function addGroupMember(db: Db, accountId: number, groupId: number, contactId: number): Promise<void> {
  await db.insertInto('group_members').values({ account_id: accountId, group_id: groupId, contact_id: contactId }).execute();
}

/** Ids of all the account's groups, ascending. */
export async function listGroupIds(db: Db, accountId: number): Promise<number[]> {
  const rows = await db.selectFrom('groups').select('id').where('account_id', '=', accountId).orderBy('id').execute();
  return rows.map((r) => r.id);
}
