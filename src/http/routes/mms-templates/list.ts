import { Type } from '@sinclair/typebox';
import { templatesPage } from '../../../domain/mms-templates.ts';
import { PageQuery } from '../../../records/common.ts';
import { MmsTemplateRecordSchema, mmsTemplateRecord } from '../../../records/media.ts';
import { defineOperation } from '../../operation.ts';

/** API.md §10.7 `GET /v1/mms-templates/index`: the account's templates by Id ascending, paginated. */
export const mmsTemplatesIndex = defineOperation({
  id: 'mms-templates.index',
  path: '/v1/mms-templates/index',
  resource: 'media',
  methods: ['GET'],
  summary: "List the account's MMS templates",
  success: 200,
  schema: { query: PageQuery, response: Type.Array(MmsTemplateRecordSchema) },
  handler: ({ store, time }) => {
    const toRecord = mmsTemplateRecord(time);
    return async (ctx) => {
      const { total, fetch } = await templatesPage(store, ctx.accountId);
      return ctx.paginate(total, fetch, toRecord);
    };
  },
});
