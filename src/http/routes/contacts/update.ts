import { CLIENT_HEADER, writeClientOf } from '../../../domain/consent.ts';
import { updateContact } from '../../../domain/contacts.ts';
import { IdQuery } from '../../../records/common.ts';
import { ContactBodySchema, ContactRecordSchema, contactRecord } from '../../../records/contacts.ts';
import { defineOperation } from '../../operation.ts';

/**
 * contacts/update?id= (API.md §10.2): only the fields sent change; 200, the Contact record.
 * `X-Msgsvc-Client: console` marks the request as the web console's (its consent ledger entry's Source).
 */
export const contactsUpdate = defineOperation({
  id: 'contacts.update',
  path: '/v1/contacts/update',
  resource: 'contacts',
  methods: ['PUT', 'PATCH'],
  summary: 'Change a contact',
  success: 200,
  schema: { query: IdQuery, body: ContactBodySchema, response: ContactRecordSchema },
  handler: ({ store, time, config }) => {
    const toRecord = contactRecord(time);
    return async (ctx) => {
      const id = ctx.id();
      return toRecord(
        await updateContact(store, ctx.accountId, id, ctx.body(), config.defaultRegion, writeClientOf(ctx.request.headers[CLIENT_HEADER])),
      );
    };
  },
});
