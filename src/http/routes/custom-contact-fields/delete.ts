import { deleteCustomField } from '../../../domain/custom-fields.ts';
import { IdQuery } from '../../../records/common.ts';
import { defineOperation } from '../../operation.ts';

/** `DELETE /v1/custom-contact-fields/delete?id=` (API.md §10.4): removes the field and its entries; 204. */
export const customContactFieldsDelete = defineOperation({
  id: 'custom-contact-fields.delete',
  path: '/v1/custom-contact-fields/delete',
  resource: 'fields',
  methods: ['DELETE'],
  summary: 'Delete a custom contact field and its values',
  success: 204,
  schema: { query: IdQuery },
  handler:
    ({ store }) =>
    async (ctx) => {
      await deleteCustomField(store, ctx.accountId, ctx.id());
    },
});
