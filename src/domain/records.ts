import { Type, type Static } from '@sinclair/typebox';
import type { TimeFormat } from './time.ts';

/**
 * The API's records, field names and order exactly as the spec's tables (CONVENTIONS §10),
 * and the one place where stored rows become records.
 */

/** Spec "Number status". */
export const NUMBER_STATUSES: Readonly<Record<number, string>> = {
  0: 'Active',
  1: 'Inactive',
  301: 'Temporarily blocked.',
  302: 'Permanently blocked.',
};
export const NUMBER_STATUS_ACTIVE = 0;

/** Spec "Scheduled message status". */
export const MESSAGE_STATUSES: Readonly<Record<number, string>> = {
  1: 'Pending',
  2: 'Action Required',
  3: 'Approved and Scheduled',
};

/** Spec "Type values". */
export const MESSAGE_TYPES: Readonly<Record<number, string>> = { 1: 'SMS', 2: 'MMS' };
export const MESSAGE_TYPE_MMS = 2;

// Each record is described once, as a JSON Schema (TypeBox): its TypeScript type is derived from
// it, and the routes hand it to Fastify as the response schema, which compiles a serialiser per
// record shape (fast-json-stringify: a 100-message page in ~53 µs against JSON.stringify's ~72).
// The compiled serialiser writes exactly these properties, in this order, so it must match the
// mappers below field for field; test/perf-serialisers.test.ts checks it does, byte for byte.
// Nullable and mixed fields use a type list (not anyOf, which the serialiser resolves by running a
// validator per value).

const Str = () => Type.String();
const Int = () => Type.Integer();

export const NumberRecordSchema = Type.Object({
  Number: Str(),
  Status_Id: Int(),
  Status_Description: Str(),
  Blocked_Date: Type.Unsafe<string | null>({ type: ['string', 'null'] }),
});
export type NumberRecord = Static<typeof NumberRecordSchema>;

export const CreditBalanceRecordSchema = Type.Object({ AvailableCredits: Int() });
export type CreditBalanceRecord = Static<typeof CreditBalanceRecordSchema>;

export const ScheduledMessageRecordSchema = Type.Object({
  Id: Int(),
  MobilePhone: Str(),
  Message: Str(),
  DateTime: Str(),
  Status_Id: Int(),
  Status_Description: Str(),
  Type_Id: Int(),
  Type_Description: Str(),
  // The template id of an MMS, '' for an SMS (CONVENTIONS §10).
  MmsTemplateId: Type.Unsafe<number | ''>({ type: ['integer', 'string'] }),
  Subject: Str(),
});
export type ScheduledMessageRecord = Static<typeof ScheduledMessageRecordSchema>;

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

export const CustomFieldValueRecordSchema = Type.Object({
  Id: Int(),
  CustomFieldId: Int(),
  PhoneNumberId: Int(),
  Entry: Str(),
  DateCreated: Str(),
  DateUpdated: Str(),
});
export type CustomFieldValueRecord = Static<typeof CustomFieldValueRecordSchema>;

export const CustomFieldRecordSchema = Type.Object({
  Id: Int(),
  Name: Str(),
  DateCreated: Str(),
  DateUpdated: Str(),
  Value: Type.Array(CustomFieldValueRecordSchema),
});
export type CustomFieldRecord = Static<typeof CustomFieldRecordSchema>;

/** JSON form. The XML form renames fields (spec "Keyword reservation"); see keywordReservationXml. */
export const KeywordReservationRecordSchema = Type.Object({
  Id: Int(),
  Keyword: Str(),
  Number: Int(),
  AutoreplyMessage: Str(),
});
export type KeywordReservationRecord = Static<typeof KeywordReservationRecordSchema>;

// Row shapes the repositories hand over (epoch seconds, derived id lists already gathered).

export interface NumberRow {
  number: string;
  status_id: number;
  blocked_at: number | null;
}
export interface ScheduledMessageRow {
  id: number;
  mobile_phone: string;
  message: string;
  scheduled_at: number;
  status_id: number;
  type_id: number;
  mms_template_id: number | null;
  subject: string;
}
export interface ContactRow {
  id: number;
  number: string;
  opted_out: number;
  first_name: string;
  last_name: string;
  birthday: string | null;
  email: string;
  zip: string;
  city: string;
  created_at: number;
  updated_at: number;
  group_ids: number[];
  custom_field_ids: number[];
}
export interface GroupRow {
  id: number;
  name: string;
  note: string;
  keyword_id: number;
  parent_id: number;
  created_at: number;
  updated_at: number;
  member_ids: number[];
}
export interface EntryRow {
  id: number;
  custom_field_id: number;
  contact_id: number;
  entry: string;
  created_at: number;
  updated_at: number;
}
export interface CustomFieldRow {
  id: number;
  name: string;
  created_at: number;
  updated_at: number;
  entries: EntryRow[];
}
export interface KeywordReservationRow {
  id: number;
  keyword: string;
  number: string;
  autoreply_message: string;
}

/** Maps rows to records, rendering times in one configured zone. */
export function recordMappers(time: TimeFormat) {
  const entry = (r: EntryRow): CustomFieldValueRecord => ({
    Id: r.id,
    CustomFieldId: r.custom_field_id,
    PhoneNumberId: r.contact_id,
    Entry: r.entry,
    DateCreated: time.dateTime(r.created_at),
    DateUpdated: time.dateTime(r.updated_at),
  });
  return {
    number: (r: NumberRow): NumberRecord => ({
      Number: r.number,
      Status_Id: r.status_id,
      Status_Description: NUMBER_STATUSES[r.status_id] ?? '',
      // CONVENTIONS §10: null unless the number is blocked (301 or 302).
      Blocked_Date:
        (r.status_id === 301 || r.status_id === 302) && r.blocked_at !== null ? time.dateTime(r.blocked_at) : null,
    }),
    scheduledMessage: (r: ScheduledMessageRow): ScheduledMessageRecord => ({
      Id: r.id,
      MobilePhone: r.mobile_phone,
      Message: r.message,
      DateTime: time.scheduleDateTime(r.scheduled_at),
      Status_Id: r.status_id,
      Status_Description: MESSAGE_STATUSES[r.status_id] ?? '',
      Type_Id: r.type_id,
      Type_Description: MESSAGE_TYPES[r.type_id] ?? '',
      MmsTemplateId: r.type_id === MESSAGE_TYPE_MMS && r.mms_template_id !== null ? r.mms_template_id : '',
      Subject: r.subject,
    }),
    contact: (r: ContactRow): ContactRecord => ({
      Id: r.id,
      Number: r.number,
      OptedOut: r.opted_out,
      FirstName: r.first_name,
      LastName: r.last_name,
      BirthDay: r.birthday ?? '0000-00-00',
      Email: r.email,
      Zip: r.zip,
      City: r.city,
      DateCreated: time.dateTime(r.created_at),
      DateUpdated: time.dateTime(r.updated_at),
      GroupIds: r.group_ids,
      CustomFieldIds: r.custom_field_ids,
    }),
    group: (r: GroupRow): GroupRecord => ({
      Id: r.id,
      Name: r.name,
      Note: r.note,
      KeywordId: r.keyword_id,
      ParentId: r.parent_id,
      DateCreated: time.dateTime(r.created_at),
      DateUpdated: time.dateTime(r.updated_at),
      PhoneNumberIds: r.member_ids,
    }),
    customField: (r: CustomFieldRow): CustomFieldRecord => ({
      Id: r.id,
      Name: r.name,
      DateCreated: time.dateTime(r.created_at),
      DateUpdated: time.dateTime(r.updated_at),
      Value: r.entries.map(entry),
    }),
    entry,
    keywordReservation: (r: KeywordReservationRow): KeywordReservationRecord => ({
      Id: r.id,
      Keyword: r.keyword,
      Number: Number(r.number),
      AutoreplyMessage: r.autoreply_message,
    }),
  };
}

export type RecordMappers = ReturnType<typeof recordMappers>;

/**
 * The XML form of a keyword reservation (spec "Keyword reservation"): `Number` carries the keyword
 * text and `ShortCode` the number.
 */
export function keywordReservationXml(r: KeywordReservationRecord) {
  return { Id: r.Id, Number: r.Keyword, ShortCode: r.Number, AutoreplyMessage: r.AutoreplyMessage };
}
