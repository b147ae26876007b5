import { Type } from '@sinclair/typebox';
import { reserveKeyword } from '../../../domain/keywords.ts';
import { IntOrString } from '../../../records/common.ts';
import { keywordReservationRecord, keywordReservationXml, KeywordReservationRecordSchema } from '../../../records/keywords.ts';
import { defineOperation } from '../../operation.ts';

/**
 * API.md §10.5: replies 201 with a list holding the one new reservation. The XML
 * form swaps element names (Number carries the keyword, ShortCode the number).
 */
export const keywordReserve = defineOperation({
  id: 'keyword.reserve',
  path: '/v1/keyword/reserve',
  resource: 'sms',
  methods: ['POST'],
  summary: 'Reserve a keyword on an account number',
  success: 201,
  idempotent: true,
  schema: {
    body: Type.Object({
      Keyword: Type.String({ minLength: 4, maxLength: 255 }),
      Number: IntOrString('account short code or long number'),
      AutoreplyMessage: Type.Optional(Type.String({ maxLength: 1600 })),
    }),
    response: Type.Array(KeywordReservationRecordSchema),
  },
  handler:
    ({ store }) =>
    async (ctx) => {
      const record = keywordReservationRecord(await reserveKeyword(store, ctx.accountId, ctx.body()));
      return [ctx.format === 'xml' ? keywordReservationXml(record) : record];
    },
});
