import { Type } from '@sinclair/typebox';
import { findContact } from '../../../domain/contacts.ts';
import { ContactRecordSchema, contactRecord } from '../../../records/contacts.ts';
import { defineOperation } from '../../operation.ts';

/** API.md §9: one Contact record, looked up by the normalised number. */
export const contactsFind = defineOperation({
  id: 'contacts.find',
  path: '/v1/contacts/find',
  resource: 'contacts',
  methods: ['GET'],
  summary: 'Find a contact by phone number',
  success: 200,
  schema: {
    query: Type.Object({ number: Type.String({ description: 'phone number in any common format' }) }),
    response: ContactRecordSchema,
  },
  handler: ({ store, time, config }) => {
    const toRecord = contactRecord(time);
    return async (ctx) => toRecord(await findContact(store, ctx.accountId, ctx.param('number'), config.defaultRegion));
  },
});
