import { viewGroup } from '../../../domain/groups.ts';
import { IdQuery } from '../../../records/common.ts';
import { GroupRecordSchema, groupRecord } from '../../../records/groups.ts';
import { defineOperation } from '../../operation.ts';

/** API.md §10.3 `GET /v1/groups/view?id=`: one Group record; 404 `Object not found: {id}` otherwise. */
export const groupsView = defineOperation({
  id: 'groups.view',
  path: '/v1/groups/view',
  resource: 'groups',
  methods: ['GET'],
  summary: 'Read one group',
  success: 200,
  schema: { query: IdQuery, response: GroupRecordSchema },
  handler: ({ store, time }) => {
    const toRecord = groupRecord(time);
    return async (ctx) => toRecord(await viewGroup(store, ctx.accountId, ctx.id()));
  },
});
