import { type Static, Type } from '@sinclair/typebox';
import type { TimeFormat } from '../lib/time.ts';
import type { Row } from '../store/tables.ts';
import { Int, IntOrString, Str } from './common.ts';

/** The columns of `custom_field_entries` a Custom field value record shows. */
export const ENTRY_COLUMNS = ['id', 'custom_field_id', 'contact_id', 'entry', 'created_at', 'updated_at'] as const;
/** A stored custom field entry (times in epoch seconds). */
export type EntryRow = Pick<Row<'custom_field_entries'>, (typeof ENTRY_COLUMNS)[number]>;

/** The columns of `custom_fields` a Custom field record shows (its entries come from their own table). */
export const CUSTOM_FIELD_COLUMNS = ['id', 'name', 'created_at', 'updated_at'] as const;
/** A stored custom field with all its entries. */
export type CustomFieldRow = Pick<Row<'custom_fields'>, (typeof CUSTOM_FIELD_COLUMNS)[number]> & { entries: EntryRow[] };

/** API.md §9.7. */
export const CustomFieldValueRecordSchema = Type.Object({
  Id: Int(),
  CustomFieldId: Int(),
  PhoneNumberId: Int(),
  Entry: Str(),
  DateCreated: Str(),
  DateUpdated: Str(),
});
export type CustomFieldValueRecord = Static<typeof CustomFieldValueRecordSchema>;

/** API.md §9.6; `Value` holds the field's entries. */
export const CustomFieldRecordSchema = Type.Object({
  Id: Int(),
  Name: Str(),
  DateCreated: Str(),
  DateUpdated: Str(),
  Value: Type.Array(CustomFieldValueRecordSchema),
});
export type CustomFieldRecord = Static<typeof CustomFieldRecordSchema>;

/** Maps a stored entry to its Custom field value record, times in the configured zone. */
export const entryRecord =
  (time: TimeFormat) =>
  (r: EntryRow): CustomFieldValueRecord => ({
    Id: r.id,
    CustomFieldId: r.custom_field_id,
    PhoneNumberId: r.contact_id,
    Entry: r.entry,
    DateCreated: time.dateTime(r.created_at),
    DateUpdated: time.dateTime(r.updated_at),
  });

/** Maps a stored custom field (with its entries) to its Custom field record, times in the configured zone. */
export const customFieldRecord = (time: TimeFormat) => {
  const entry = entryRecord(time);
  return (r: CustomFieldRow): CustomFieldRecord => ({
    Id: r.id,
    Name: r.name,
    DateCreated: time.dateTime(r.created_at),
    DateUpdated: time.dateTime(r.updated_at),
    Value: r.entries.map(entry),
  });
};

/**
 * Body of custom-contact-fields-entry/create and /update (documentation; the checks are the
 * domain's rules, API.md §10.4 and API.md's update): `frfield`, `frcontact`, `fvalue`.
 */
export const EntryBodySchema = Type.Object({
  frfield: IntOrString('custom field id'),
  frcontact: IntOrString('contact id'),
  fvalue: Type.String({ maxLength: 255 }),
});
