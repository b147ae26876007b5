import { CLIENT_HEADER, writeClientOf } from '../../../domain/consent.ts';
import { createContact } from '../../../domain/contacts.ts';
import { ContactBodySchema, ContactRecordSchema, contactRecord } from '../../../records/contacts.ts';
import { defineOperation } from '../../operation.ts';

/**
 * contacts/create (API.md §10.2): 201, the new Contact record, `Location` to contacts/view.
 * `X-Msgsvc-Client: console` marks the request as the web console's (its consent ledger entry's Source).
 */
export const contactsCreate = defineOperation({
  id: 'contacts.create',
  path: '/v1/contacts/create',
  resource: 'contacts',
  methods: ['POST'],
  summary: 'Add a contact',
  success: 201,
  location: '/v1/contacts/view',
  idempotent: true,
  schema: { body: ContactBodySchema, response: ContactRecordSchema },
  handler: ({ store, time, config }) => {
    const toRecord = contactRecord(time);
    return async (ctx) =>
      toRecord(
        await createContact(store, ctx.accountId, ctx.body(), config.defaultRegion, writeClientOf(ctx.request.headers[CLIENT_HEADER])),
      );
  },
});
