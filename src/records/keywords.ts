import { type Static, Type } from '@sinclair/typebox';
import type { Row } from '../store/tables.ts';
import { Int, PageQuery, Str } from './common.ts';

/** The columns of `keyword_reservations` a Keyword reservation record shows (`number`: the digits of its number). */
export const KEYWORD_RESERVATION_COLUMNS = ['id', 'keyword', 'number', 'autoreply_message'] as const;
/** A keyword reservation with the digits of its number. */
export type KeywordReservationRow = Pick<Row<'keyword_reservations'>, (typeof KEYWORD_RESERVATION_COLUMNS)[number]>;

/** API.md §9.8, JSON form. The XML form renames fields; see keywordReservationXml. */
export const KeywordReservationRecordSchema = Type.Object({
  Id: Int(),
  Keyword: Str(),
  Number: Int(),
  AutoreplyMessage: Str(),
});
export type KeywordReservationRecord = Static<typeof KeywordReservationRecordSchema>;

/** A stored reservation as its JSON record (API.md §9.8). */
export const keywordReservationRecord = (r: KeywordReservationRow): KeywordReservationRecord => ({
  Id: r.id,
  Keyword: r.keyword,
  Number: Number(r.number),
  AutoreplyMessage: r.autoreply_message,
});

/**
 * API.md §9.8, XML form (docs/API.md §9.8): `Number` carries the keyword text and
 * `ShortCode` the number. The OpenAPI document gives it to the XML responses of the operations
 * whose JSON responses hold KeywordReservationRecordSchema (a `<Record>XmlSchema` export is the
 * XML form of `<Record>RecordSchema`, src/http/openapi.ts).
 */
export const KeywordReservationXmlSchema = Type.Object({
  Id: Int(),
  Number: Str(),
  ShortCode: Int(),
  AutoreplyMessage: Str(),
});
export type KeywordReservationXmlRecord = Static<typeof KeywordReservationXmlSchema>;

/** The XML form of a keyword reservation (KeywordReservationXmlSchema). */
export function keywordReservationXml(r: KeywordReservationRecord): KeywordReservationXmlRecord {
  return { Id: r.Id, Number: r.Keyword, ShortCode: r.Number, AutoreplyMessage: r.AutoreplyMessage };
}

/** A keyword reservation in the negotiated form: JSON names, or the XML element names. */
export function keywordReservationFor(format: 'json' | 'xml', r: KeywordReservationRecord) {
  return format === 'xml' ? keywordReservationXml(r) : r;
}

/** `keyword/check` (API.md §10.5): the Keyword as sent, the Number as an integer, and whether it is free. */
export const KeywordAvailabilitySchema = Type.Object({
  Keyword: Str(),
  Number: Int(),
  Available: Type.Boolean(),
});
export type KeywordAvailabilityRecord = Static<typeof KeywordAvailabilitySchema>;

/** Query parameters of `keyword/check`. */
export const KeywordCheckQuery = Type.Object({
  Keyword: Type.String({ minLength: 4, maxLength: 255, description: 'the keyword, as reserve takes it' }),
  Number: Type.String({ pattern: '^[+-]?\\d+$', description: 'an Active number of the account' }),
});

/** Query parameters of `keyword/index`: the page, and an optional `Number` filter. */
export const KeywordIndexQuery = Type.Object({
  ...PageQuery.properties,
  Number: Type.Optional(Type.String({ pattern: '^[+-]?\\d+$', description: 'only the reservations on this number of the account' })),
});
