import { Type } from '@sinclair/typebox';
import { groupsPage } from '../../../domain/groups.ts';
import { PageQuery } from '../../../records/common.ts';
import { GroupRecordSchema, groupRecord } from '../../../records/groups.ts';
import { defineOperation } from '../../operation.ts';

/**
 * API.md §10.3 `GET /v1/groups/index`: the account's Group records by Id ascending, paginated
 * (API.md §5), optionally filtered by msgsvc's `Search` on the name (422 on a bad value); the page's
 * PhoneNumberIds come from one query.
 */
export const groupsIndex = defineOperation({
  id: 'groups.index',
  path: '/v1/groups/index',
  resource: 'groups',
  methods: ['GET'],
  summary: "List the account's groups",
  success: 200,
  schema: {
    query: Type.Composite([
      PageQuery,
      Type.Object({
        Search: Type.Optional(
          Type.String({
            description:
              'msgsvc addition: only the groups whose fname contains the text (case-insensitive for ASCII letters); ' +
              'trimmed, empty is no filter, at most 255 characters',
          }),
        ),
      }),
    ]),
    response: Type.Array(GroupRecordSchema),
  },
  handler: ({ store, time }) => {
    const toRecord = groupRecord(time);
    return async (ctx) => {
      const { total, fetch } = await groupsPage(store, ctx.accountId, ctx.query('Search'));
      return ctx.paginate(total, fetch, toRecord);
    };
  },
});
