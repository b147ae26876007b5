import { deleteContact } from '../../../domain/contacts.ts';
import { IdQuery } from '../../../records/common.ts';
import { defineOperation } from '../../operation.ts';

/** contacts/delete?id= (API.md §10.2): 204; memberships and custom field entries go, messages stay. */
export const contactsDelete = defineOperation({
  id: 'contacts.delete',
  path: '/v1/contacts/delete',
  resource: 'contacts',
  methods: ['DELETE'],
  summary: 'Delete a contact',
  success: 204,
  schema: { query: IdQuery },
  handler: ({ store }) => {
    return async (ctx) => {
      await deleteContact(store, ctx.accountId, ctx.id());
    };
  },
});
