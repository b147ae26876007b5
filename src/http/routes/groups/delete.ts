import { deleteGroup } from '../../../domain/groups.ts';
import { IdQuery } from '../../../records/common.ts';
import { defineOperation } from '../../operation.ts';

/**
 * API.md §10.3 `DELETE /v1/groups/delete?id=`: 204 with an empty body; the memberships go,
 * the member contacts stay, child groups get ParentId 0.
 */
export const groupsDelete = defineOperation({
  id: 'groups.delete',
  path: '/v1/groups/delete',
  resource: 'groups',
  methods: ['DELETE'],
  summary: 'Delete a group',
  success: 204,
  schema: { query: IdQuery },
  handler:
    ({ store }) =>
    async (ctx) => {
      await deleteGroup(store, ctx.accountId, ctx.id());
    },
});
