import { Type } from '@sinclair/typebox';
import { countReservations, keywordNumberFilter, listReservations } from '../../../domain/keywords.ts';
import {
  KeywordIndexQuery,
  keywordReservationFor,
  keywordReservationRecord,
  KeywordReservationRecordSchema,
  type KeywordReservationRow,
} from '../../../records/keywords.ts';
import { defineOperation } from '../../operation.ts';

/**
 * API.md §10.5 `keyword/index`: the account's Keyword reservation records by Id, paginated
 * (API.md §5), optionally only those on one of its numbers (`Number`, read as reserve reads
 * it; not an integer: 422). In XML each record uses the reserve record's element names.
 */
export const keywordIndex = defineOperation({
  id: 'keyword.index',
  path: '/v1/keyword/index',
  resource: 'keywords',
  methods: ['GET'],
  summary: "List the account's keyword reservations",
  success: 200,
  schema: { query: KeywordIndexQuery, response: Type.Array(KeywordReservationRecordSchema) },
  handler:
    ({ store }) =>
    async (ctx) => {
      const digits = keywordNumberFilter(ctx.query('Number'));
      const toRecord = (row: KeywordReservationRow) => keywordReservationFor(ctx.format, keywordReservationRecord(row));
      if (digits === null) return ctx.paginate(0, () => Promise.resolve([]), toRecord);
      return ctx.paginate(
        await countReservations(store, ctx.accountId, digits),
        (limit, offset) => listReservations(store, ctx.accountId, digits, limit, offset),
        toRecord,
      );
    },
});
