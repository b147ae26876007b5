import { findKeyword } from '../../../domain/keywords.ts';
import { IdQuery } from '../../../records/common.ts';
import { keywordReservationFor, keywordReservationRecord, KeywordReservationRecordSchema } from '../../../records/keywords.ts';
import { defineOperation } from '../../operation.ts';

/** API.md §10.5 `keyword/view?id=`: one Keyword reservation record (XML: the reserve record's element names). */
export const keywordView = defineOperation({
  id: 'keyword.view',
  path: '/v1/keyword/view',
  resource: 'keywords',
  methods: ['GET'],
  summary: 'Read one keyword reservation',
  success: 200,
  schema: { query: IdQuery, response: KeywordReservationRecordSchema },
  handler:
    ({ store }) =>
    async (ctx) =>
      keywordReservationFor(ctx.format, keywordReservationRecord(await findKeyword(store, ctx.accountId, ctx.id()))),
});
