import { updateGroup } from '../../../domain/groups.ts';
import { IdQuery } from '../../../records/common.ts';
import { GroupRecordSchema, GroupWriteBodySchema, groupRecord } from '../../../records/groups.ts';
import { defineOperation } from '../../operation.ts';

/**
 * API.md §9: body `fname` (required) and `fnote`, plus `KeywordId` and
 * `ParentId` (API.md §10.3); only the fields sent change. Replies the Group record.
 */
export const groupsUpdate = defineOperation({
  id: 'groups.update',
  path: '/v1/groups/update',
  resource: 'groups',
  methods: ['PUT', 'PATCH'],
  summary: 'Rename a group and change its note',
  success: 200,
  schema: {
    query: IdQuery,
    body: GroupWriteBodySchema,
    response: GroupRecordSchema,
  },
  handler: ({ store, time }) => {
    const toRecord = groupRecord(time);
    return async (ctx) => toRecord(await updateGroup(store, ctx.accountId, ctx.id(), ctx.body()));
  },
});
