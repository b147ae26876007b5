import { Type } from '@sinclair/typebox';
import { accountUsage, countAccounts, usageRange } from '../../domain/account-admin.ts';
import { UsageQuery, UsageRecordSchema, usageRecord } from '../../records/accounts.ts';
import { accountAdminDeps } from '../routes/subaccounts/deps.ts';
import { defineAdminOperation } from './operation.ts';

/**
 * `GET /admin/v1/usage/index?from=&to=` (docs/API.md §16.4): per account (every account, by Id,
 * paginated), its outbound messages created in the range, as sub-accounts' usage shows them:
 * `Outbound`, `Delivered`, `Failed`, `Credits` (spent less refunds). `from` and `to` as sms/stats
 * reads them; default the 7 days before now.
 */
export const adminUsageIndex = defineAdminOperation({
  id: 'admin.usage.index',
  path: '/admin/v1/usage/index',
  methods: ['GET'],
  summary: 'Usage per account',
  success: 200,
  schema: { query: UsageQuery, response: Type.Array(UsageRecordSchema) },
  handler: (deps) => async (ctx) => {
    const d = accountAdminDeps(deps, ctx.request);
    const range = { from: ctx.query('from'), to: ctx.query('to') };
    usageRange(d, range); // 422 before the page is counted
    return ctx.paginate(
      await countAccounts(d, undefined),
      (limit, offset) => accountUsage(d, undefined, range, limit, offset),
      usageRecord,
    );
  },
});

/** `GET /admin/v1/usage?from=&to=`: the same list at the path §16 names (`usage/index` is the Yii2 form). */
export const adminUsageShort = defineAdminOperation({ ...adminUsageIndex, id: 'admin.usage', path: '/admin/v1/usage' });

export const adminUsage = [adminUsageIndex, adminUsageShort];
