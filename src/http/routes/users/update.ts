import { updateUser } from '../../../domain/users.ts';
import { IdQuery } from '../../../records/common.ts';
import { UserBodySchema, UserRecordSchema, userRecord } from '../../../records/users.ts';
import { defineOperation } from '../../operation.ts';
import { userDeps } from './deps.ts';

/** docs/API.md §15.3 `PUT|PATCH /v1/users/update?id=` (`Name`, `Role`): only the fields sent change. */
export const usersUpdate = defineOperation({
  id: 'users.update',
  path: '/v1/users/update',
  resource: 'users',
  methods: ['PUT', 'PATCH'],
  summary: "Change a person's name or role",
  success: 200,
  schema: { query: IdQuery, body: UserBodySchema, response: UserRecordSchema },
  handler: (deps) => {
    const toRecord = userRecord(deps.time);
    return async (ctx) => toRecord(await updateUser(userDeps(deps, ctx.request), ctx.principal, ctx.id(), ctx.body()));
  },
});
