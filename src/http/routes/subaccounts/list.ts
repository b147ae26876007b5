import { Type } from '@sinclair/typebox';
import { countAccounts, listAccounts } from '../../../domain/account-admin.ts';
import { SubaccountRecordSchema, subaccountRecord } from '../../../records/accounts.ts';
import { PageQuery } from '../../../records/common.ts';
import { defineOperation } from '../../operation.ts';
import { accountAdminDeps } from './deps.ts';

/** docs/API.md §16 `GET /v1/subaccounts/index`: the account's sub-accounts by Id ascending, closed ones included, paginated. */
export const subaccountsIndex = defineOperation({
  id: 'subaccounts.index',
  path: '/v1/subaccounts/index',
  resource: 'subaccounts',
  methods: ['GET'],
  summary: "List the account's sub-accounts",
  success: 200,
  schema: { query: PageQuery, response: Type.Array(SubaccountRecordSchema) },
  handler: (deps) => {
    const toRecord = subaccountRecord(deps.time);
    return async (ctx) => {
      const d = accountAdminDeps(deps, ctx.request);
      return ctx.paginate(
        await countAccounts(d, ctx.accountId),
        (limit, offset) => listAccounts(d, ctx.accountId, limit, offset),
        toRecord,
      );
    };
  },
});
