import { Type } from '@sinclair/typebox';
import { countNumbers, listNumbers } from '../../../domain/numbers.ts';
import { PageQuery } from '../../../records/common.ts';
import { NumberRecordSchema, numberRecord } from '../../../records/numbers.ts';
import { defineOperation } from '../../operation.ts';

/** API.md §9: the account's Number records, paginated (API.md §5). */
export const numbersIndex = defineOperation({
  id: 'numbers.index',
  path: '/v1/numbers/index',
  resource: 'numbers',
  methods: ['GET'],
  summary: "List the account's numbers with their status",
  success: 200,
  schema: { query: PageQuery, response: Type.Array(NumberRecordSchema) },
  handler: ({ store, time }) => {
    const toRecord = numberRecord(time);
    return async (ctx) =>
      ctx.paginate(await countNumbers(store, ctx.accountId), (limit, offset) => listNumbers(store, ctx.accountId, limit, offset), toRecord);
  },
});
