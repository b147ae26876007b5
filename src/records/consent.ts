import { type Static, Type } from '@sinclair/typebox';
import type { TimeFormat } from '../lib/time.ts';
import type { Row } from '../store/tables.ts';
import { Int, Str } from './common.ts';

/** The columns of `contact_consent` a ConsentEntry record shows. */
export const CONSENT_COLUMNS = ['id', 'opted_out', 'source', 'detail', 'carrier', 'created_at'] as const;
/** A stored ledger entry (time in epoch seconds). */
export type ConsentRow = Pick<Row<'contact_consent'>, (typeof CONSENT_COLUMNS)[number]>;

/**
 * One entry of a contact's consent ledger (API.md §14.4.2 contacts/consent), fields in wire order:
 * `OptedOut` the new value (0 or 1); `Source` `keyword`, `api`, `import` or `console`; `Detail`
 * the keyword as received (trimmed) or the operation (`contacts/create`, `contacts/update`,
 * `contacts/import`); `Carrier` the configured name of the carrier a keyword came through (`""`
 * for the other sources); `DateCreated` when the change was made.
 */
export const ConsentEntryRecordSchema = Type.Object({
  Id: Int(),
  OptedOut: Int(),
  Source: Str(),
  Detail: Str(),
  Carrier: Str(),
  DateCreated: Str(),
});
export type ConsentEntryRecord = Static<typeof ConsentEntryRecordSchema>;

/** Maps a stored ledger entry to its record, DateCreated in the configured zone. */
export const consentEntryRecord =
  (time: TimeFormat) =>
  (r: ConsentRow): ConsentEntryRecord => ({
    Id: r.id,
    OptedOut: r.opted_out,
    Source: r.source,
    Detail: r.detail,
    Carrier: r.carrier,
    DateCreated: time.dateTime(r.created_at),
  });
