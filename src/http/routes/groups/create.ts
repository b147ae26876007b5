import { createGroup } from '../../../domain/groups.ts';
import { GroupRecordSchema, GroupWriteBodySchema, groupRecord } from '../../../records/groups.ts';
import { defineOperation } from '../../operation.ts';

/**
 * API.md §10.3 `POST /v1/groups/create`: body `fname` (required), `fnote`, `KeywordId`,
 * `ParentId`; replies 201 with the Group record and `Location: <scheme>://<host>/v1/groups/view?id=<Id>`.
 * Honours Idempotency-Key.
 */
export const groupsCreate = defineOperation({
  id: 'groups.create',
  path: '/v1/groups/create',
  resource: 'groups',
  methods: ['POST'],
  summary: 'Create a group',
  success: 201,
  location: '/v1/groups/view',
  idempotent: true,
  schema: { body: GroupWriteBodySchema, response: GroupRecordSchema },
  handler: ({ store, time }) => {
    const toRecord = groupRecord(time);
    return async (ctx) => toRecord(await createGroup(store, ctx.accountId, ctx.body()));
  },
});
