import { viewUser } from '../../../domain/users.ts';
import { IdQuery } from '../../../records/common.ts';
import { UserRecordSchema, userRecord } from '../../../records/users.ts';
import { defineOperation } from '../../operation.ts';

/** docs/API.md §15.3 `GET /v1/users/view?id=`: one person. */
export const usersView = defineOperation({
  id: 'users.view',
  path: '/v1/users/view',
  resource: 'users',
  methods: ['GET'],
  summary: 'View a person',
  success: 200,
  schema: { query: IdQuery, response: UserRecordSchema },
  handler: (deps) => {
    const toRecord = userRecord(deps.time);
    return async (ctx) => toRecord(await viewUser(deps, ctx.accountId, ctx.id()));
  },
});
