import { viewTemplate } from '../../../domain/mms-templates.ts';
import { IdQuery } from '../../../records/common.ts';
import { MmsTemplateRecordSchema, mmsTemplateRecord } from '../../../records/media.ts';
import { defineOperation } from '../../operation.ts';

/** API.md §10.7 `GET /v1/mms-templates/view?id=`: one template; 404 `Object not found: {id}` otherwise. */
export const mmsTemplatesView = defineOperation({
  id: 'mms-templates.view',
  path: '/v1/mms-templates/view',
  resource: 'media',
  methods: ['GET'],
  summary: 'Read one MMS template',
  success: 200,
  schema: { query: IdQuery, response: MmsTemplateRecordSchema },
  handler: ({ store, time }) => {
    const toRecord = mmsTemplateRecord(time);
    return async (ctx) => toRecord(await viewTemplate(store, ctx.accountId, ctx.id()));
  },
});
