import { viewAccount } from '../../../domain/account-admin.ts';
import { SubaccountRecordSchema, subaccountRecord } from '../../../records/accounts.ts';
import { IdQuery } from '../../../records/common.ts';
import { defineOperation } from '../../operation.ts';

/** docs/API.md §16 `GET /v1/subaccounts/view?id=`: one sub-account (404 for any other account). */
export const subaccountsView = defineOperation({
  id: 'subaccounts.view',
  path: '/v1/subaccounts/view',
  resource: 'subaccounts',
  methods: ['GET'],
  summary: 'View a sub-account',
  success: 200,
  schema: { query: IdQuery, response: SubaccountRecordSchema },
  handler: (deps) => {
    const toRecord = subaccountRecord(deps.time);
    return async (ctx) => toRecord(await viewAccount(deps, ctx.accountId, ctx.id()));
  },
});
