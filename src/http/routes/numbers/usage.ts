import { Type } from '@sinclair/typebox';
import { countNumbers, numberUsage } from '../../../domain/numbers.ts';
import { systemClock } from '../../../lib/time.ts';
import { PageQuery } from '../../../records/common.ts';
import { NumberUsageRecordSchema, numberUsageRecord } from '../../../records/numbers.ts';
import { defineOperation } from '../../operation.ts';

/**
 * API.md §17 `GET /v1/numbers/usage`: per number of the account, in `numbers/index` order and
 * paginated (API.md §5), its limits, its outbound messages queued today and its distinct recipients
 * this month (the service's time zone).
 */
export const numbersUsage = defineOperation({
  id: 'numbers.usage',
  path: '/v1/numbers/usage',
  resource: 'numbers',
  methods: ['GET'],
  summary: "Each number's limits, messages today and recipients this month",
  success: 200,
  schema: { query: PageQuery, response: Type.Array(NumberUsageRecordSchema) },
  handler: ({ store, config, clock }) => {
    const deps = { store, clock: clock ?? systemClock, timeZone: config.timeZone };
    return async (ctx) =>
      ctx.paginate(
        await countNumbers(store, ctx.accountId),
        (limit, offset) => numberUsage(deps, ctx.accountId, limit, offset),
        numberUsageRecord,
      );
  },
});
