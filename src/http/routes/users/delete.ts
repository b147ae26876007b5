import { deleteUser } from '../../../domain/users.ts';
import { IdQuery } from '../../../records/common.ts';
import { defineOperation } from '../../operation.ts';
import { userDeps } from './deps.ts';

/** docs/API.md §15.3 `DELETE /v1/users/delete?id=`: 204; the person's sessions end at once. */
export const usersDelete = defineOperation({
  id: 'users.delete',
  path: '/v1/users/delete',
  resource: 'users',
  methods: ['DELETE'],
  summary: 'Remove a person',
  success: 204,
  schema: { query: IdQuery },
  handler: (deps) => async (ctx) => {
    await deleteUser(userDeps(deps, ctx.request), ctx.principal, ctx.id());
  },
});
