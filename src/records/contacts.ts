import { type Static, Type } from '@sinclair/typebox';
import type { TimeFormat } from '../lib/time.ts';
import type { Row } from '../store/tables.ts';
import { Int, Str } from './common.ts';

/** The columns of `contacts` a Contact record shows: what every read of a contact selects. */
export const CONTACT_COLUMNS = [
  'id',
  'number',
  'opted_out',
  'first_name',
  'last_name',
  'birthday',
  'email',
  'zip',
  'city',
  'created_at',
  'updated_at',
] as const;
/** A stored contact without its derived ids (times in epoch seconds). */
export type ContactFields = Pick<Row<'contacts'>, (typeof CONTACT_COLUMNS)[number]>;
/** A stored contact with its derived group and custom field ids, each ascending. */
export type ContactRow = ContactFields & { group_ids: number[]; custom_field_ids: number[] };

/** BirthDay of a contact with none stored (API.md §9.4); the SQL-built pages write the same. */
export const NO_BIRTHDAY = '0000-00-00';

/** API.md §9.4. */
export const ContactRecordSchema = Type.Object({
  Id: Int(),
  Number: Str(),
  OptedOut: Int(),
  FirstName: Str(),
  LastName: Str(),
  BirthDay: Str(),
  Email: Str(),
  Zip: Str(),
  City: Str(),
  DateCreated: Str(),
  DateUpdated: Str(),
  GroupIds: Type.Array(Int()),
  CustomFieldIds: Type.Array(Int()),
});
export type ContactRecord = Static<typeof ContactRecordSchema>;

export const contactRecord =
  (time: TimeFormat) =>
  (r: ContactRow): ContactRecord => ({
    Id: r.id,
    Number: r.number,
    OptedOut: r.opted_out,
    FirstName: r.first_name,
    LastName: r.last_name,
    BirthDay: r.birthday ?? NO_BIRTHDAY,
    Email: r.email,
    Zip: r.zip,
    City: r.city,
    DateCreated: time.dateTime(r.created_at),
    DateUpdated: time.dateTime(r.updated_at),
    GroupIds: r.group_ids,
    CustomFieldIds: r.custom_field_ids,
  });

/** contacts/import: one failed row, its first error (API.md §10.2). */
export const ImportErrorSchema = Type.Object({ Line: Int(), Field: Str(), Message: Str() });
/** contacts/import reply (API.md §10.2): `{"Created":n,"Updated":n,"Failed":n,"Errors":[…]}`. */
export const ImportReportSchema = Type.Object({
  Created: Int(),
  Updated: Int(),
  Failed: Int(),
  Errors: Type.Array(ImportErrorSchema),
});
export type ImportReport = Static<typeof ImportReportSchema>;

/** Body fields of contacts/create and contacts/update (documentation; the checks are the domain's rules). */
export const ContactBodySchema = Type.Object({
  Number: Type.Optional(Type.String({ description: 'phone number in any common format; required on create' })),
  FirstName: Type.Optional(Type.String({ maxLength: 255 })),
  LastName: Type.Optional(Type.String({ maxLength: 255 })),
  City: Type.Optional(Type.String({ maxLength: 255 })),
  Email: Type.Optional(Type.String({ maxLength: 255, description: 'an email address; "" clears it' })),
  Zip: Type.Optional(Type.String({ maxLength: 32 })),
  BirthDay: Type.Optional(Type.Union([Type.String({ description: 'YYYY-MM-DD; "" or null clears it' }), Type.Null()])),
  OptedOut: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 1 }), Type.String()])),
  GroupIds: Type.Optional(
    Type.Array(Type.Union([Type.Integer(), Type.String()]), { description: "the account's group ids; replaces the memberships" }),
  ),
});
