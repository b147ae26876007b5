import { viewEntry } from '../../../domain/custom-fields.ts';
import { IdQuery } from '../../../records/common.ts';
import { CustomFieldValueRecordSchema, entryRecord } from '../../../records/custom-fields.ts';
import { defineOperation } from '../../operation.ts';

/** `GET /v1/custom-contact-fields-entry/view?id=` (API.md §10.4): one Custom field value record. */
export const customContactFieldsEntryView = defineOperation({
  id: 'custom-contact-fields-entry.view',
  path: '/v1/custom-contact-fields-entry/view',
  resource: 'fields',
  methods: ['GET'],
  summary: 'Read one custom field value',
  success: 200,
  schema: { query: IdQuery, response: CustomFieldValueRecordSchema },
  handler: ({ store, time }) => {
    const toRecord = entryRecord(time);
    return async (ctx) => toRecord(await viewEntry(store, ctx.accountId, ctx.id()));
  },
});
