import { updateTemplate } from '../../../domain/mms-templates.ts';
import { systemClock } from '../../../lib/time.ts';
import { IdQuery } from '../../../records/common.ts';
import { MmsTemplateRecordSchema, MmsTemplateUpdateBodySchema, mmsTemplateRecord } from '../../../records/media.ts';
import { defineOperation } from '../../operation.ts';

/** API.md §10.7 `PUT|PATCH /v1/mms-templates/update?id=`: only the fields sent change. */
export const mmsTemplatesUpdate = defineOperation({
  id: 'mms-templates.update',
  path: '/v1/mms-templates/update',
  resource: 'media',
  methods: ['PUT', 'PATCH'],
  summary: 'Change an MMS template',
  success: 200,
  schema: { query: IdQuery, body: MmsTemplateUpdateBodySchema, response: MmsTemplateRecordSchema },
  handler: ({ store, time, clock }) => {
    const toRecord = mmsTemplateRecord(time);
    return async (ctx) => toRecord(await updateTemplate(store, clock ?? systemClock, ctx.accountId, ctx.id(), ctx.body()));
  },
});
