import { deleteTemplateById } from '../../../domain/mms-templates.ts';
import { IdQuery } from '../../../records/common.ts';
import { defineOperation } from '../../operation.ts';
import { systemClock } from '../../../lib/time.ts';

/** API.md §10.7 `DELETE /v1/mms-templates/delete?id=`: 204. */
export const mmsTemplatesDelete = defineOperation({
  id: 'mms-templates.delete',
  path: '/v1/mms-templates/delete',
  resource: 'media',
  methods: ['DELETE'],
  summary: 'Delete an MMS template',
  success: 204,
  schema: { query: IdQuery },
  handler:
    ({ store, clock }) =>
    async (ctx) => {
      await deleteTemplateById(store, clock ?? systemClock, ctx.accountId, ctx.id());
    },
});
