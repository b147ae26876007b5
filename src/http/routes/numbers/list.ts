import { Type } from '@sinclair/typebox';
import * as repo from '../../../store/repositories/numbers.ts';
import { PageQuery } from '../../../records/common.ts';
import { NumberRecordSchema, numberRecord } from '../../../records/numbers.ts';
import { defineOperation } from '../../operation.ts';

/** Spec "GET /v1/numbers/index": the account's Number records, paginated (CONVENTIONS §7). */
export const numbersIndex = defineOperation({
  id: 'numbers.index',
  path: '/v1/numbers/index',
  methods: ['GET'],
  summary: "List the account's numbers with their status",
  success: 200,
  schema: { query: PageQuery, response: Type.Array(NumberRecordSchema) },
  handler: ({ store, time }) => {
    const toRecord = numberRecord(time);
    return async (ctx) =>
      ctx.paginate(await repo.countNumbers(store.db, ctx.accountId), (limit, offset) => repo.listNumbers(store.db, ctx.accountId, limit, offset), toRecord);
  },
});
