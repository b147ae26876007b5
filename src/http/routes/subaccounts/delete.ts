import { closeAccount } from '../../../domain/account-admin.ts';
import { IdQuery } from '../../../records/common.ts';
import { defineOperation } from '../../operation.ts';
import { accountAdminDeps } from './deps.ts';

/**
 * docs/API.md §16 `DELETE /v1/subaccounts/delete?id=`: closes the sub-account (204). Its Queued
 * messages end Rejected (`ACCOUNT_CLOSED`) and its scheduled messages are cancelled, all refunded;
 * its credits go back to the parent; its keys and sessions end. Its data is kept.
 */
export const subaccountsDelete = defineOperation({
  id: 'subaccounts.delete',
  path: '/v1/subaccounts/delete',
  resource: 'subaccounts',
  methods: ['DELETE'],
  summary: 'Close a sub-account',
  success: 204,
  schema: { query: IdQuery },
  handler: (deps) => async (ctx) => {
    await closeAccount(accountAdminDeps(deps, ctx.request), ctx.accountId, ctx.id());
  },
});
