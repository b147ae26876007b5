import { type Static, Type } from '@sinclair/typebox';
import type { TimeFormat } from '../lib/time.ts';
import type { Row } from '../store/tables.ts';
import { Int, NullableStr, Str } from './common.ts';

/** A stored person (a row of `users`). */
export type UserRow = Row<'users'>;

/** API.md §15.3 User record, fields in its order. */
export const UserRecordSchema = Type.Object({
  Id: Int(),
  Email: Str(),
  Name: Str(),
  Role: Str(),
  TwoFactor: Int(),
  DateLastSignIn: NullableStr(),
  DateCreated: Str(),
  DateUpdated: Str(),
});
export type UserRecord = Static<typeof UserRecordSchema>;

/** The reply to users/create and users/reset: the record plus `InviteUrl`. */
export const InvitedUserRecordSchema = Type.Object({ ...UserRecordSchema.properties, InviteUrl: Str() });

/** The body of users/create and users/update. */
export const UserBodySchema = Type.Object({
  Email: Type.Optional(
    Type.String({ description: 'required on create; unique in the whole service, without case; not changed by update' }),
  ),
  Name: Type.Optional(Type.String()),
  Role: Type.Optional(Type.String({ enum: ['owner', 'admin', 'member', 'viewer'], description: 'default `member` on create' })),
});

/** Maps a stored person to their User record (API.md §15.3); never a hash. */
export const userRecord =
  (time: TimeFormat) =>
  (r: Pick<UserRow, 'id' | 'email' | 'name' | 'role' | 'two_factor' | 'last_sign_in_at' | 'created_at' | 'updated_at'>): UserRecord => ({
    Id: r.id,
    Email: r.email,
    Name: r.name,
    Role: r.role,
    TwoFactor: Number(r.two_factor),
    DateLastSignIn: r.last_sign_in_at === null ? null : time.dateTime(Number(r.last_sign_in_at)),
    DateCreated: time.dateTime(Number(r.created_at)),
    DateUpdated: time.dateTime(Number(r.updated_at)),
  });
