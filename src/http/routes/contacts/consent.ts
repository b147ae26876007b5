import { Type } from '@sinclair/typebox';
import { consentPage } from '../../../domain/consent.ts';
import { IdQuery, PageQuery } from '../../../records/common.ts';
import { ConsentEntryRecordSchema, consentEntryRecord } from '../../../records/consent.ts';
import { defineOperation } from '../../operation.ts';

/**
 * contacts/consent?id= (API.md §14.4.2): the contact's consent ledger, every change of its OptedOut
 * oldest first (Id ascending), paginated as every list (API.md §5). 400 when `id` is missing or
 * not an integer; 404 `Object not found: {id}` for an unknown or another account's contact.
 */
export const contactsConsent = defineOperation({
  id: 'contacts.consent',
  path: '/v1/contacts/consent',
  resource: 'contacts',
  methods: ['GET'],
  summary: "List the changes of a contact's opt-out",
  success: 200,
  schema: { query: Type.Object({ ...IdQuery.properties, ...PageQuery.properties }), response: Type.Array(ConsentEntryRecordSchema) },
  handler: ({ store, time }) => {
    const toRecord = consentEntryRecord(time);
    return async (ctx) => {
      const { total, fetch } = await consentPage(store, ctx.accountId, ctx.id());
      return ctx.paginate(total, fetch, toRecord);
    };
  },
});
