import { Type } from '@sinclair/typebox';
import { countUsers, listUsers } from '../../../domain/users.ts';
import { PageQuery } from '../../../records/common.ts';
import { UserRecordSchema, userRecord } from '../../../records/users.ts';
import { defineOperation } from '../../operation.ts';
import { userDeps } from './deps.ts';

/** docs/API.md §15.3 `GET /v1/users/index`: the account's people by Id ascending, paginated. */
export const usersIndex = defineOperation({
  id: 'users.index',
  path: '/v1/users/index',
  resource: 'users',
  methods: ['GET'],
  summary: "List the account's people",
  success: 200,
  schema: { query: PageQuery, response: Type.Array(UserRecordSchema) },
  handler: (deps) => {
    const toRecord = userRecord(deps.time);
    return async (ctx) => {
      const d = userDeps(deps, ctx.request);
      return ctx.paginate(await countUsers(d, ctx.accountId), (limit, offset) => listUsers(d, ctx.accountId, limit, offset), toRecord);
    };
  },
});
