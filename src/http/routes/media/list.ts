import { Type } from '@sinclair/typebox';
import { mediaPage } from '../../../domain/media.ts';
import { PageQuery } from '../../../records/common.ts';
import { MediaRecordSchema, mediaRecord } from '../../../records/media.ts';
import { defineOperation } from '../../operation.ts';

/** API.md §10.7 `GET /v1/media/index`: the account's media records by Id ascending, paginated (API.md §5). */
export const mediaIndex = defineOperation({
  id: 'media.index',
  path: '/v1/media/index',
  resource: 'media',
  methods: ['GET'],
  summary: "List the account's media",
  success: 200,
  schema: { query: PageQuery, response: Type.Array(MediaRecordSchema) },
  handler: ({ store, time }) => {
    const toRecord = mediaRecord(time);
    return async (ctx) => {
      const { total, fetch } = await mediaPage(store, ctx.accountId);
      return ctx.paginate(total, fetch, toRecord);
    };
  },
});
