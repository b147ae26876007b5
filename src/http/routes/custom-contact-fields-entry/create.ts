import { createEntry } from '../../../domain/custom-fields.ts';
import { CustomFieldValueRecordSchema, EntryBodySchema, entryRecord } from '../../../records/custom-fields.ts';
import { defineOperation } from '../../operation.ts';

/**
 * `POST /v1/custom-contact-fields-entry/create` (API.md §10.4): body `frfield`, `frcontact`,
 * `fvalue` with the update's rules, one entry per field × contact; replies 201 with the new Custom
 * field value record and `Location` to its view.
 */
export const customContactFieldsEntryCreate = defineOperation({
  id: 'custom-contact-fields-entry.create',
  path: '/v1/custom-contact-fields-entry/create',
  resource: 'fields',
  methods: ['POST'],
  summary: "Set a contact's value of a custom field",
  success: 201,
  location: '/v1/custom-contact-fields-entry/view',
  idempotent: true,
  schema: {
    body: EntryBodySchema,
    response: CustomFieldValueRecordSchema,
  },
  handler: ({ store, time }) => {
    const toRecord = entryRecord(time);
    return async (ctx) => toRecord(await createEntry(store, ctx.accountId, ctx.body()));
  },
});
