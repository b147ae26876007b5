import { createUser } from '../../../domain/users.ts';
import { InvitedUserRecordSchema, UserBodySchema, userRecord } from '../../../records/users.ts';
import { defineOperation } from '../../operation.ts';
import { userDeps } from './deps.ts';

/**
 * docs/API.md §15.3 `POST /v1/users/create` (`Email`, `Name`, `Role`): 201 with `Location` to
 * users/view; the reply adds `InviteUrl`, which lets the person choose a password once within 72 hours.
 */
export const usersCreate = defineOperation({
  id: 'users.create',
  path: '/v1/users/create',
  resource: 'users',
  methods: ['POST'],
  summary: 'Invite a person (the reply adds InviteUrl)',
  success: 201,
  location: '/v1/users/view',
  idempotent: true,
  schema: { body: UserBodySchema, response: InvitedUserRecordSchema },
  handler: (deps) => {
    const toRecord = userRecord(deps.time);
    return async (ctx) => {
      const { row, inviteUrl } = await createUser(userDeps(deps, ctx.request), ctx.principal, ctx.body());
      return { ...toRecord(row), InviteUrl: inviteUrl };
    };
  },
});
