import { transferCredits } from '../../../domain/account-admin.ts';
import { AmountBodySchema, SubaccountRecordSchema, subaccountRecord } from '../../../records/accounts.ts';
import { IdQuery } from '../../../records/common.ts';
import { defineOperation } from '../../operation.ts';
import { accountAdminDeps } from './deps.ts';

/**
 * docs/API.md §16 `POST /v1/subaccounts/credits?id=` (`Amount`, a non-zero integer): positive moves
 * credits from the parent, negative back to it; 200 with the sub-account after the move.
 */
export const subaccountsCredits = defineOperation({
  id: 'subaccounts.credits',
  path: '/v1/subaccounts/credits',
  resource: 'subaccounts',
  methods: ['POST'],
  summary: 'Move credits between the account and a sub-account',
  success: 200,
  idempotent: true,
  schema: { query: IdQuery, body: AmountBodySchema, response: SubaccountRecordSchema },
  handler: (deps) => {
    const toRecord = subaccountRecord(deps.time);
    return async (ctx) => toRecord(await transferCredits(accountAdminDeps(deps, ctx.request), ctx.accountId, ctx.id(), ctx.body()));
  },
});
