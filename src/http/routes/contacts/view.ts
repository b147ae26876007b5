import { viewContact } from '../../../domain/contacts.ts';
import { IdQuery } from '../../../records/common.ts';
import { ContactRecordSchema, contactRecord } from '../../../records/contacts.ts';
import { defineOperation } from '../../operation.ts';

/** contacts/view?id= (API.md §10.2): one Contact record; 404 `Object not found: {id}`. */
export const contactsView = defineOperation({
  id: 'contacts.view',
  path: '/v1/contacts/view',
  resource: 'contacts',
  methods: ['GET'],
  summary: 'Read one contact',
  success: 200,
  schema: { query: IdQuery, response: ContactRecordSchema },
  handler: ({ store, time }) => {
    const toRecord = contactRecord(time);
    return async (ctx) => toRecord(await viewContact(store, ctx.accountId, ctx.id()));
  },
});
