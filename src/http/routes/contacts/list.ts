import { Type } from '@sinclair/typebox';
import { contactList, readContactFilters } from '../../../domain/contacts.ts';
import { PageQuery } from '../../../records/common.ts';
import { ContactRecordSchema, contactRecord } from '../../../records/contacts.ts';
import { defineOperation } from '../../operation.ts';

/**
 * contacts/index (API.md §10.2): the account's Contact records by Id ascending, paginated
 * (API.md §5), optionally filtered by `GroupId`, `OptedOut` and msgsvc's `Search` (422 on a bad value).
 */
export const contactsIndex = defineOperation({
  id: 'contacts.index',
  path: '/v1/contacts/index',
  resource: 'contacts',
  methods: ['GET'],
  summary: "List the account's contacts",
  success: 200,
  schema: {
    query: Type.Composite([
      PageQuery,
      Type.Object({
        GroupId: Type.Optional(Type.String({ description: "members of this group of the account (another account's group: empty list)" })),
        OptedOut: Type.Optional(Type.String({ description: '0 or 1' })),
        Search: Type.Optional(
          Type.String({
            description:
              'msgsvc addition: only the contacts whose FirstName, LastName or Email contains the text (case-insensitive for ASCII letters), ' +
              'or whose Number contains its digits when it has at least 3; trimmed, empty is no filter, at most 255 characters',
          }),
        ),
      }),
    ]),
    response: Type.Array(ContactRecordSchema),
  },
  handler: ({ store, time }) => {
    const toRecord = contactRecord(time);
    return async (ctx) => {
      const filters = readContactFilters({ GroupId: ctx.query('GroupId'), OptedOut: ctx.query('OptedOut'), Search: ctx.query('Search') });
      const list = await contactList(store, ctx.accountId, filters);
      return ctx.paginate(list.total, list.fetch, toRecord, time.utc ? list.json : undefined);
    };
  },
});
