import { updateNumberLimits } from '../../../domain/numbers.ts';
import { systemClock } from '../../../lib/time.ts';
import { NumberLimitsBodySchema, NumberLimitsRecordSchema, NumberQuery, numberLimitsRecord } from '../../../records/numbers.ts';
import { defineOperation } from '../../operation.ts';

/**
 * API.md §17 `PUT|PATCH /v1/numbers/update?number=`: body `MaxPerSecond`, `MaxPerDay`,
 * `MaxRecipientsPerMonth` (0: none); only the fields sent change. Replies the number's record with
 * its limits. The audit entry's ObjectId is the `number` parameter as sent.
 */
export const numbersUpdate = defineOperation({
  id: 'numbers.update',
  path: '/v1/numbers/update',
  resource: 'numbers',
  methods: ['PUT', 'PATCH'],
  summary: "Set a number's limits (per second, per day, recipients per month)",
  success: 200,
  objectParam: 'number',
  schema: { query: NumberQuery, body: NumberLimitsBodySchema, response: NumberLimitsRecordSchema },
  handler: ({ store, time, config, clock }) => {
    const toRecord = numberLimitsRecord(time);
    const deps = { store, clock: clock ?? systemClock, timeZone: config.timeZone, region: config.defaultRegion };
    return async (ctx) => {
      const number = ctx.param('number');
      return toRecord(await updateNumberLimits(deps, ctx.accountId, number, ctx.body()));
    };
  },
});
