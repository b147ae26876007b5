import { resetUser } from '../../../domain/users.ts';
import { IdQuery } from '../../../records/common.ts';
import { InvitedUserRecordSchema, userRecord } from '../../../records/users.ts';
import { defineOperation } from '../../operation.ts';
import { userDeps } from './deps.ts';

/**
 * docs/API.md §15.3 `POST /v1/users/reset?id=`: a new `InviteUrl`; the person's password,
 * two-factor and sessions end at once. 200 with the record and the InviteUrl.
 */
export const usersReset = defineOperation({
  id: 'users.reset',
  path: '/v1/users/reset',
  resource: 'users',
  methods: ['POST'],
  summary: "Reset a person's sign-in: a new InviteUrl, sessions ended",
  success: 200,
  idempotent: true,
  schema: { query: IdQuery, response: InvitedUserRecordSchema },
  handler: (deps) => {
    const toRecord = userRecord(deps.time);
    return async (ctx) => {
      const { row, inviteUrl } = await resetUser(userDeps(deps, ctx.request), ctx.principal, ctx.id());
      return { ...toRecord(row), InviteUrl: inviteUrl };
    };
  },
});
