import { viewMedia } from '../../../domain/media.ts';
import { IdQuery } from '../../../records/common.ts';
import { MediaRecordSchema, mediaRecord } from '../../../records/media.ts';
import { defineOperation } from '../../operation.ts';

/** API.md §10.7 `GET /v1/media/view?id=`: one media record; 404 `Object not found: {id}` otherwise. */
export const mediaView = defineOperation({
  id: 'media.view',
  path: '/v1/media/view',
  resource: 'media',
  methods: ['GET'],
  summary: 'Read one media record',
  success: 200,
  schema: { query: IdQuery, response: MediaRecordSchema },
  handler: ({ store, time }) => {
    const toRecord = mediaRecord(time);
    return async (ctx) => toRecord(await viewMedia(store, ctx.accountId, ctx.id()));
  },
});
