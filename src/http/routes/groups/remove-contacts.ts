import { changeMembers } from '../../../domain/groups.ts';
import { IdQuery } from '../../../records/common.ts';
import { GroupMembersBodySchema, GroupRecordSchema, groupRecord } from '../../../records/groups.ts';
import { defineOperation } from '../../operation.ts';

/**
 * API.md §10.3 `POST /v1/groups/remove-contacts?id=`: body `PhoneNumberIds` as add-contacts;
 * removing a non-member is not an error. Replies 200, the Group.
 */
export const groupsRemoveContacts = defineOperation({
  id: 'groups.remove-contacts',
  path: '/v1/groups/remove-contacts',
  resource: 'groups',
  methods: ['POST'],
  summary: 'Remove contacts from a group',
  success: 200,
  idempotent: true,
  schema: { query: IdQuery, body: GroupMembersBodySchema, response: GroupRecordSchema },
  handler: ({ store, time }) => {
    const toRecord = groupRecord(time);
    return async (ctx) => toRecord(await changeMembers(store, ctx.accountId, ctx.id(), ctx.body(), 'remove'));
  },
});
