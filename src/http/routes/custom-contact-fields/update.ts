import { Type } from '@sinclair/typebox';
import { renameCustomField } from '../../../domain/custom-fields.ts';
import { IdQuery } from '../../../records/common.ts';
import { CustomFieldRecordSchema, customFieldRecord } from '../../../records/custom-fields.ts';
import { defineOperation } from '../../operation.ts';

/** API.md §9: body `fname`; replies the Custom field record. */
export const customContactFieldsUpdate = defineOperation({
  id: 'custom-contact-fields.update',
  path: '/v1/custom-contact-fields/update',
  resource: 'fields',
  methods: ['PUT', 'PATCH'],
  summary: 'Rename a custom contact field',
  success: 200,
  schema: { query: IdQuery, body: Type.Object({ fname: Type.String({ minLength: 3, maxLength: 64 }) }), response: CustomFieldRecordSchema },
  handler: ({ store, time }) => {
    const toRecord = customFieldRecord(time);
    return async (ctx) => toRecord(await renameCustomField(store, ctx.accountId, ctx.id(), ctx.body()));
  },
});
