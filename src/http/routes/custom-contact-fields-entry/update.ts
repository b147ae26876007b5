import { updateEntry } from '../../../domain/custom-fields.ts';
import { IdQuery } from '../../../records/common.ts';
import { CustomFieldValueRecordSchema, EntryBodySchema, entryRecord } from '../../../records/custom-fields.ts';
import { defineOperation } from '../../operation.ts';

/**
 * API.md §9: body `frfield`, `frcontact`,
 * `fvalue`; replies the Custom field value record. Answers POST, PUT and PATCH (API.md §1.4); as a POST it
 * honours Idempotency-Key (API.md §7).
 */
export const customContactFieldsEntryUpdate = defineOperation({
  id: 'custom-contact-fields-entry.update',
  path: '/v1/custom-contact-fields-entry/update',
  resource: 'fields',
  methods: ['POST', 'PUT', 'PATCH'],
  summary: "Update a contact's custom field value",
  success: 200,
  idempotent: true,
  schema: {
    query: IdQuery,
    body: EntryBodySchema,
    response: CustomFieldValueRecordSchema,
  },
  handler: ({ store, time }) => {
    const toRecord = entryRecord(time);
    return async (ctx) => toRecord(await updateEntry(store, ctx.accountId, ctx.id(), ctx.body()));
  },
});
