import { Type } from '@sinclair/typebox';
import { deleteMediaById, mediaPage, viewMedia } from '../../../domain/media.ts';
import { IdQuery, PageQuery } from '../../../records/common.ts';
import { MediaRecordSchema, mediaRecord } from '../../../records/media.ts';
import { defineOperation } from '../../operation.ts';

/** API-EXTENSIONS §9 `GET /v1/media/index`: the account's media records by Id ascending, paginated (CONVENTIONS §7). */
export const mediaIndex = defineOperation({
  id: 'media.index',
  path: '/v1/media/index',
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

/** API-EXTENSIONS §9 `GET /v1/media/view?id=`: one media record; 404 `Object not found: {id}` otherwise. */
export const mediaView = defineOperation({
  id: 'media.view',
  path: '/v1/media/view',
  methods: ['GET'],
  summary: 'Read one media record',
  success: 200,
  schema: { query: IdQuery, response: MediaRecordSchema },
  handler: ({ store, time }) => {
    const toRecord = mediaRecord(time);
    return async (ctx) => toRecord(await viewMedia(store, ctx.accountId, ctx.id()));
  },
});

/** API-EXTENSIONS §9 `DELETE /v1/media/delete?id=`: 204; the media also leaves every template's MediaIds. */
export const mediaDelete = defineOperation({
  id: 'media.delete',
  path: '/v1/media/delete',
  methods: ['DELETE'],
  summary: 'Delete a media (and remove it from templates)',
  success: 204,
  schema: { query: IdQuery },
  handler: ({ store }) => async (ctx) => {
    await deleteMediaById(store, ctx.accountId, ctx.id());
  },
});
