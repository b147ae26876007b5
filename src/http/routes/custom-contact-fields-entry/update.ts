import { updateEntry } from '../../../domain/custom-fields.ts';
import { IdQuery } from '../../../records/common.ts';
import { CustomFieldValueRecordSchema, EntryBodySchema, entryRecord } from '../../../records/custom-fields.ts';
import { defineOperation } from '../../operation.ts';

/**
 * Spec "POST or PUT /v1/custom-contact-fields-entry/update?id=": body `frfield`, `frcontact`,
 * `fvalue`; replies the Custom field value record. Answers POST, PUT and PATCH (CONVENTIONS §5); as a POST it
 * honours Idempotency-Key (API-EXTENSIONS §1).
 */
export const customContactFieldsEntryUpdate = defineOperation({
  id: 'custom-contact-fields-entry.update',
  path: '/v1/custom-contact-fields-entry/update',
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
