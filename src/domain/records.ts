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

export interface NumberRecord {
  Number: string;
  Status_Id: number;
  Status_Description: string;
  Blocked_Date: string | null;
}

export interface CreditBalanceRecord {
  AvailableCredits: number;
}

export interface ScheduledMessageRecord {
  Id: number;
  MobilePhone: string;
  Message: string;
  DateTime: string;
  Status_Id: number;
  Status_Description: string;
  Type_Id: number;
  Type_Description: string;
  MmsTemplateId: number | '';
  Subject: string;
}

export interface ContactRecord {
  Id: number;
  Number: string;
  OptedOut: number;
  FirstName: string;
  LastName: string;
  BirthDay: string;
  Email: string;
  Zip: string;
  City: string;
  DateCreated: string;
  DateUpdated: string;
  GroupIds: number[];
  CustomFieldIds: number[];
}

export interface GroupRecord {
  Id: number;
  Name: string;
  Note: string;
  KeywordId: number;
  ParentId: number;
  DateCreated: string;
  DateUpdated: string;
  PhoneNumberIds: number[];
}

export interface CustomFieldValueRecord {
  Id: number;
  CustomFieldId: number;
  PhoneNumberId: number;
  Entry: string;
  DateCreated: string;
  DateUpdated: string;
}

export interface CustomFieldRecord {
  Id: number;
  Name: string;
  DateCreated: string;
  DateUpdated: string;
  Value: CustomFieldValueRecord[];
}

/** JSON form. The XML form renames fields (spec "Keyword reservation"); see keywordReservationXml. */
export interface KeywordReservationRecord {
  Id: number;
  Keyword: string;
  Number: number;
  AutoreplyMessage: string;
}

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
