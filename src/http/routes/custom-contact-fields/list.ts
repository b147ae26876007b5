import { Type } from '@sinclair/typebox';
import { countCustomFields, listCustomFields } from '../../../domain/custom-fields.ts';
import { PageQuery } from '../../../records/common.ts';
import { CustomFieldRecordSchema, customFieldRecord } from '../../../records/custom-fields.ts';
import { defineOperation } from '../../operation.ts';

/**
 * `GET /v1/custom-contact-fields/index` (API.md §10.4): the account's Custom field records by
 * Id, each with its entries in `Value`, paginated (API.md §5). The entries of a page's fields
 * come in one query.
 */
export const customContactFieldsIndex = defineOperation({
  id: 'custom-contact-fields.index',
  path: '/v1/custom-contact-fields/index',
  resource: 'fields',
  methods: ['GET'],
  summary: "List the account's custom contact fields with their values",
  success: 200,
  schema: { query: PageQuery, response: Type.Array(CustomFieldRecordSchema) },
  handler: ({ store, time }) => {
    const toRecord = customFieldRecord(time);
    return async (ctx) =>
      ctx.paginate(
        await countCustomFields(store, ctx.accountId),
        (limit, offset) => listCustomFields(store, ctx.accountId, limit, offset),
        toRecord,
      );
  },
});
