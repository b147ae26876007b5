import { Type } from '@sinclair/typebox';
import { reserveKeyword } from '../../../domain/keywords.ts';
import { keywordReservationXml, KeywordReservationRecordSchema } from '../../../domain/records.ts';
import { readBody } from '../../plugins/body.ts';
import type { Operation } from '../types.ts';

/**
 * Spec "POST /v1/keyword/reserve": replies 201 with a list holding the one new reservation. The XML
 * form swaps element names (Number carries the keyword, ShortCode the number).
 */
export const keywordReserve: Operation = {
  path: '/v1/keyword/reserve',
  methods: ['POST'],
  register(app, { store, mappers }) {
    app.post(this.path, { schema: { response: { 201: Type.Array(KeywordReservationRecordSchema) } } }, async (request, reply) => {
      const record = mappers.keywordReservation(await reserveKeyword(store, request.accountId, readBody(request)));
      reply.code(201);
      return [request.format === 'xml' ? keywordReservationXml(record) : record];
    });
  },
};
