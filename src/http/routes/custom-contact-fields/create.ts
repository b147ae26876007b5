import { Type } from '@sinclair/typebox';
import { createCustomField } from '../../../domain/custom-fields.ts';
import { CustomFieldRecordSchema, customFieldRecord } from '../../../records/custom-fields.ts';
import { defineOperation } from '../../operation.ts';

/**
 * `POST /v1/custom-contact-fields/create` (API.md §10.4): body `fname` (required, 3 to 64
 * characters, unique in the account case-insensitively); replies 201 with the new Custom field
 * record and `Location` to its view.
 */
export const customContactFieldsCreate = defineOperation({
  id: 'custom-contact-fields.create',
  path: '/v1/custom-contact-fields/create',
  resource: 'fields',
  methods: ['POST'],
  summary: 'Create a custom contact field',
  success: 201,
  location: '/v1/custom-contact-fields/view',
  idempotent: true,
  schema: { body: Type.Object({ fname: Type.String({ minLength: 3, maxLength: 64 }) }), response: CustomFieldRecordSchema },
  handler: ({ store, time }) => {
    const toRecord = customFieldRecord(time);
    return async (ctx) => toRecord(await createCustomField(store, ctx.accountId, ctx.body()));
  },
});
