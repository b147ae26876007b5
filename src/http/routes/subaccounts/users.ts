import { createAccountUser } from '../../../domain/account-admin.ts';
import { IdQuery } from '../../../records/common.ts';
import { InvitedUserRecordSchema, UserBodySchema, userRecord } from '../../../records/users.ts';
import { defineOperation } from '../../operation.ts';
import { accountAdminDeps } from './deps.ts';

/**
 * docs/API.md §16 `POST /v1/subaccounts/users?id=` (`Email`, `Name`, `Role`, default `owner`): 201
 * with the invited person of the sub-account and their `InviteUrl`.
 */
export const subaccountsUsers = defineOperation({
  id: 'subaccounts.users',
  path: '/v1/subaccounts/users',
  resource: 'subaccounts',
  methods: ['POST'],
  summary: 'Invite a person to a sub-account (the reply adds InviteUrl)',
  success: 201,
  idempotent: true,
  schema: { query: IdQuery, body: UserBodySchema, response: InvitedUserRecordSchema },
  handler: (deps) => {
    const toRecord = userRecord(deps.time);
    return async (ctx) => {
      const { row, inviteUrl } = await createAccountUser(
        accountAdminDeps(deps, ctx.request),
        ctx.accountId,
        ctx.principal,
        ctx.id(),
        ctx.body(),
      );
      return { ...toRecord(row), InviteUrl: inviteUrl };
    };
  },
});
