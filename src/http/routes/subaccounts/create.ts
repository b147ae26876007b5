import { createAccount } from '../../../domain/account-admin.ts';
import { AccountBodySchema, SubaccountRecordSchema, subaccountRecord } from '../../../records/accounts.ts';
import { defineOperation } from '../../operation.ts';
import { accountAdminDeps } from './deps.ts';

/**
 * docs/API.md §16 `POST /v1/subaccounts/create` (`Name`, `Credits`, `MaxPerSecond`, `MaxPerDay`):
 * 201 with `Location` to subaccounts/view; `Credits` move from the parent in the same transaction.
 */
export const subaccountsCreate = defineOperation({
  id: 'subaccounts.create',
  path: '/v1/subaccounts/create',
  resource: 'subaccounts',
  methods: ['POST'],
  summary: 'Create a sub-account',
  success: 201,
  location: '/v1/subaccounts/view',
  idempotent: true,
  schema: { body: AccountBodySchema, response: SubaccountRecordSchema },
  handler: (deps) => {
    const toRecord = subaccountRecord(deps.time);
    return async (ctx) => toRecord(await createAccount(accountAdminDeps(deps, ctx.request), ctx.accountId, ctx.body()));
  },
});
