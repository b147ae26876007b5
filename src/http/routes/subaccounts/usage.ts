import { Type } from '@sinclair/typebox';
import { accountUsage, countAccounts, usageRange } from '../../../domain/account-admin.ts';
import { UsageQuery, UsageRecordSchema, usageRecord } from '../../../records/accounts.ts';
import { defineOperation } from '../../operation.ts';
import { accountAdminDeps } from './deps.ts';

/**
 * docs/API.md §16 `GET /v1/subaccounts/usage?from=&to=`: per sub-account (by Id, paginated), its
 * outbound messages created in the range: `Outbound`, `Delivered`, `Failed`, `Credits`.
 */
export const subaccountsUsage = defineOperation({
  id: 'subaccounts.usage',
  path: '/v1/subaccounts/usage',
  resource: 'subaccounts',
  methods: ['GET'],
  summary: 'Usage per sub-account',
  success: 200,
  schema: { query: UsageQuery, response: Type.Array(UsageRecordSchema) },
  handler: (deps) => async (ctx) => {
    const d = accountAdminDeps(deps, ctx.request);
    const range = { from: ctx.query('from'), to: ctx.query('to') };
    usageRange(d, range); // 422 before the page is counted
    return ctx.paginate(
      await countAccounts(d, ctx.accountId),
      (limit, offset) => accountUsage(d, ctx.accountId, range, limit, offset),
      usageRecord,
    );
  },
});
