import { Type } from '@sinclair/typebox';
import { templatesPage } from '../../../domain/mms-templates.ts';
import { PageQuery } from '../../../records/common.ts';
import { MmsTemplateRecordSchema, mmsTemplateRecord } from '../../../records/media.ts';
import { defineOperation } from '../../operation.ts';

/**
 * API.md §10.7 `GET /v1/mms-templates/index`: the account's templates by Id ascending, paginated,
 * optionally filtered by msgsvc's `Search` on the Name (422 on a bad value).
 */
export const mmsTemplatesIndex = defineOperation({
  id: 'mms-templates.index',
  path: '/v1/mms-templates/index',
  resource: 'media',
  methods: ['GET'],
  summary: "List the account's MMS templates",
  success: 200,
  schema: {
    query: Type.Composite([
      PageQuery,
      Type.Object({
        Search: Type.Optional(
          Type.String({
            description:
              'msgsvc addition: only the templates whose Name contains the text (case-insensitive for ASCII letters); ' +
              'trimmed, empty is no filter, at most 255 characters',
          }),
        ),
      }),
    ]),
    response: Type.Array(MmsTemplateRecordSchema),
  },
  handler: ({ store, time }) => {
    const toRecord = mmsTemplateRecord(time);
    return async (ctx) => {
      const { total, fetch } = await templatesPage(store, ctx.accountId, ctx.query('Search'));
      return ctx.paginate(total, fetch, toRecord);
    };
  },
});
