import { viewNumber } from '../../../domain/numbers.ts';
import { NumberLimitsRecordSchema, NumberQuery, numberLimitsRecord } from '../../../records/numbers.ts';
import { defineOperation } from '../../operation.ts';

/**
 * API.md §17 `GET /v1/numbers/view?number=`: one number of the account, its Number record followed
 * by its limits; 404 `Object not found: {number}` (as sent) for a number it does not hold.
 */
export const numbersView = defineOperation({
  id: 'numbers.view',
  path: '/v1/numbers/view',
  resource: 'numbers',
  methods: ['GET'],
  summary: 'Read one number of the account with its limits',
  success: 200,
  schema: { query: NumberQuery, response: NumberLimitsRecordSchema },
  handler: ({ store, time, config }) => {
    const toRecord = numberLimitsRecord(time);
    const deps = { store, region: config.defaultRegion };
    return async (ctx) => toRecord(await viewNumber(deps, ctx.accountId, ctx.param('number')));
  },
});
