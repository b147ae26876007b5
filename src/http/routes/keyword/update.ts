import { Type } from '@sinclair/typebox';
import { updateKeyword } from '../../../domain/keywords.ts';
import { IdQuery, IntOrString } from '../../../records/common.ts';
import { keywordReservationFor, keywordReservationRecord, KeywordReservationRecordSchema } from '../../../records/keywords.ts';
import { defineOperation } from '../../operation.ts';

/**
 * API.md §10.5 `keyword/update?id=`: `Keyword`, `Number`, `AutoreplyMessage`, each optional,
 * with reserve's rules; only the fields sent change. Replies 200 with one record (not a list).
 */
export const keywordUpdate = defineOperation({
  id: 'keyword.update',
  path: '/v1/keyword/update',
  resource: 'keywords',
  methods: ['PUT', 'PATCH'],
  summary: 'Change a keyword reservation',
  success: 200,
  schema: {
    query: IdQuery,
    body: Type.Object({
      Keyword: Type.Optional(Type.String({ minLength: 4, maxLength: 255 })),
      Number: Type.Optional(IntOrString('an Active number of the account')),
      AutoreplyMessage: Type.Optional(Type.String({ maxLength: 1600 })),
    }),
    response: KeywordReservationRecordSchema,
  },
  handler:
    ({ store }) =>
    async (ctx) =>
      keywordReservationFor(ctx.format, keywordReservationRecord(await updateKeyword(store, ctx.accountId, ctx.id(), ctx.body()))),
});
