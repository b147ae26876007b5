import { viewCustomField } from '../../../domain/custom-fields.ts';
import { IdQuery } from '../../../records/common.ts';
import { CustomFieldRecordSchema, customFieldRecord } from '../../../records/custom-fields.ts';
import { defineOperation } from '../../operation.ts';

/** `GET /v1/custom-contact-fields/view?id=` (API.md §10.4): one Custom field record with its entries. */
export const customContactFieldsView = defineOperation({
  id: 'custom-contact-fields.view',
  path: '/v1/custom-contact-fields/view',
  resource: 'fields',
  methods: ['GET'],
  summary: 'Read one custom contact field with its values',
  success: 200,
  schema: { query: IdQuery, response: CustomFieldRecordSchema },
  handler: ({ store, time }) => {
    const toRecord = customFieldRecord(time);
    return async (ctx) => toRecord(await viewCustomField(store, ctx.accountId, ctx.id()));
  },
});
