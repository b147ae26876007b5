import { type Static, Type } from '@sinclair/typebox';
import type { TimeFormat } from '../lib/time.ts';
import type { Row } from '../store/tables.ts';
import { Int, IntOrString, Str } from './common.ts';

/** The columns of `groups` a Group record shows (its members come from group_members). */
export const GROUP_COLUMNS = ['id', 'name', 'note', 'keyword_id', 'parent_id', 'created_at', 'updated_at'] as const;
/** A stored group with its member contact ids, ascending (times in epoch seconds). */
export type GroupRow = Pick<Row<'groups'>, (typeof GROUP_COLUMNS)[number]> & { member_ids: number[] };

/** API.md §9.5. */
export const GroupRecordSchema = Type.Object({
  Id: Int(),
  Name: Str(),
  Note: Str(),
  KeywordId: Int(),
  ParentId: Int(),
  DateCreated: Str(),
  DateUpdated: Str(),
  PhoneNumberIds: Type.Array(Int()),
});
export type GroupRecord = Static<typeof GroupRecordSchema>;

/** Maps a stored group to API.md's Group record (fields in API.md's order; 0 for no keyword or parent). */
export const groupRecord =
  (time: TimeFormat) =>
  (r: GroupRow): GroupRecord => ({
    Id: r.id,
    Name: r.name,
    Note: r.note,
    KeywordId: r.keyword_id,
    ParentId: r.parent_id,
    DateCreated: time.dateTime(r.created_at),
    DateUpdated: time.dateTime(r.updated_at),
    PhoneNumberIds: r.member_ids,
  });

/** API.md §10.3 `create` and `update` bodies: the update's fields plus the two references. */
export const GroupWriteBodySchema = Type.Object({
  fname: Type.String({ minLength: 3, maxLength: 255 }),
  fnote: Type.Optional(Type.String({ minLength: 3, maxLength: 255 })),
  KeywordId: Type.Optional(IntOrString('a keyword reservation of the account, or 0 for none')),
  ParentId: Type.Optional(IntOrString('a group of the account, or 0 for none; not the group itself nor one below it')),
});

/** API.md §10.3 `add-contacts` / `remove-contacts` body. */
export const GroupMembersBodySchema = Type.Object({
  PhoneNumberIds: Type.Array(IntOrString(), { minItems: 1, maxItems: 1000, description: "1 to 1,000 of the account's contact ids" }),
});
