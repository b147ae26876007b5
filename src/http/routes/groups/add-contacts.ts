import { changeMembers } from '../../../domain/groups.ts';
import { IdQuery } from '../../../records/common.ts';
import { GroupMembersBodySchema, GroupRecordSchema, groupRecord } from '../../../records/groups.ts';
import { defineOperation } from '../../operation.ts';

/**
 * API.md §10.3 `POST /v1/groups/add-contacts?id=`: body `PhoneNumberIds` (1 to 1,000 of the
 * account's contact ids); adding a member twice is not an error. Replies 200, the Group.
 */
export const groupsAddContacts = defineOperation({
  id: 'groups.add-contacts',
  path: '/v1/groups/add-contacts',
  resource: 'groups',
  methods: ['POST'],
  summary: 'Add contacts to a group',
  success: 200,
  idempotent: true,
  schema: { query: IdQuery, body: GroupMembersBodySchema, response: GroupRecordSchema },
  handler: ({ store, time }) => {
    const toRecord = groupRecord(time);
    return async (ctx) => toRecord(await changeMembers(store, ctx.accountId, ctx.id(), ctx.body(), 'add'));
  },
});
