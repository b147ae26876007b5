import { deleteEntry } from '../../../domain/custom-fields.ts';
import { IdQuery } from '../../../records/common.ts';
import { defineOperation } from '../../operation.ts';

/** `DELETE /v1/custom-contact-fields-entry/delete?id=` (API.md §10.4): removes one value; 204. */
export const customContactFieldsEntryDelete = defineOperation({
  id: 'custom-contact-fields-entry.delete',
  path: '/v1/custom-contact-fields-entry/delete',
  resource: 'fields',
  methods: ['DELETE'],
  summary: 'Delete a custom field value',
  success: 204,
  schema: { query: IdQuery },
  handler:
    ({ store }) =>
    async (ctx) => {
      await deleteEntry(store, ctx.accountId, ctx.id());
    },
});
