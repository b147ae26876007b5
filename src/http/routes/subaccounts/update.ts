import { updateAccount } from '../../../domain/account-admin.ts';
import { AccountBodySchema, SubaccountRecordSchema, subaccountRecord } from '../../../records/accounts.ts';
import { IdQuery } from '../../../records/common.ts';
import { defineOperation } from '../../operation.ts';
import { accountAdminDeps } from './deps.ts';

/** docs/API.md §16 `PUT|PATCH /v1/subaccounts/update?id=` (`Name`, `Status`, `MaxPerSecond`, `MaxPerDay`). */
export const subaccountsUpdate = defineOperation({
  id: 'subaccounts.update',
  path: '/v1/subaccounts/update',
  resource: 'subaccounts',
  methods: ['PUT', 'PATCH'],
  summary: 'Update or suspend a sub-account',
  success: 200,
  schema: { query: IdQuery, body: AccountBodySchema, response: SubaccountRecordSchema },
  handler: (deps) => {
    const toRecord = subaccountRecord(deps.time);
    return async (ctx) => toRecord(await updateAccount(accountAdminDeps(deps, ctx.request), ctx.accountId, ctx.id(), ctx.body()));
  },
});
