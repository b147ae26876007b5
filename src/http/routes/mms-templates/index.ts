import { Type } from '@sinclair/typebox';
import { createTemplate, deleteTemplateById, templatesPage, updateTemplate, viewTemplate } from '../../../domain/mms-templates.ts';
import { systemClock } from '../../../lib/time.ts';
import { IdQuery, PageQuery } from '../../../records/common.ts';
import { MmsTemplateRecordSchema, MmsTemplateWriteBodySchema, mmsTemplateRecord } from '../../../records/media.ts';
import { defineOperation } from '../../operation.ts';

/** API-EXTENSIONS §9 `GET /v1/mms-templates/index`: the account's templates by Id ascending, paginated. */
export const mmsTemplatesIndex = defineOperation({
  id: 'mms-templates.index',
  path: '/v1/mms-templates/index',
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

/** API-EXTENSIONS §9 `GET /v1/mms-templates/view?id=`: one template; 404 `Object not found: {id}` otherwise. */
export const mmsTemplatesView = defineOperation({
  id: 'mms-templates.view',
  path: '/v1/mms-templates/view',
  methods: ['GET'],
  summary: 'Read one MMS template',
  success: 200,
  schema: { query: IdQuery, response: MmsTemplateRecordSchema },
  handler: ({ store, time }) => {
    const toRecord = mmsTemplateRecord(time);
    return async (ctx) => toRecord(await viewTemplate(store, ctx.accountId, ctx.id()));
  },
});

/**
 * API-EXTENSIONS §9 `POST /v1/mms-templates/create`: `Name` (required, 3 to 64), `Subject` (at most
 * 255), `Message` (at most 1,600), `MediaIds` (required, 1 to 10 media of the account). 201 with
 * `Location` to mms-templates/view. Honours Idempotency-Key.
 */
export const mmsTemplatesCreate = defineOperation({
  id: 'mms-templates.create',
  path: '/v1/mms-templates/create',
  methods: ['POST'],
  summary: 'Create an MMS template',
  success: 201,
  location: '/v1/mms-templates/view',
  idempotent: true,
  schema: { body: MmsTemplateWriteBodySchema, response: MmsTemplateRecordSchema },
  handler: ({ store, time, clock }) => {
    const toRecord = mmsTemplateRecord(time);
    return async (ctx) => toRecord(await createTemplate(store, clock ?? systemClock, ctx.accountId, ctx.body()));
  },
});

/** API-EXTENSIONS §9 `PUT|PATCH /v1/mms-templates/update?id=`: only the fields sent change. */
export const mmsTemplatesUpdate = defineOperation({
  id: 'mms-templates.update',
  path: '/v1/mms-templates/update',
  methods: ['PUT', 'PATCH'],
  summary: 'Change an MMS template',
  success: 200,
  schema: { query: IdQuery, body: MmsTemplateWriteBodySchema, response: MmsTemplateRecordSchema },
  handler: ({ store, time, clock }) => {
    const toRecord = mmsTemplateRecord(time);
    return async (ctx) => toRecord(await updateTemplate(store, clock ?? systemClock, ctx.accountId, ctx.id(), ctx.body()));
  },
});

/** API-EXTENSIONS §9 `DELETE /v1/mms-templates/delete?id=`: 204. */
export const mmsTemplatesDelete = defineOperation({
  id: 'mms-templates.delete',
  path: '/v1/mms-templates/delete',
  methods: ['DELETE'],
  summary: 'Delete an MMS template',
  success: 204,
  schema: { query: IdQuery },
  handler: ({ store }) => async (ctx) => {
    await deleteTemplateById(store, ctx.accountId, ctx.id());
  },
});

/** `/v1/mms-templates/…`: MMS templates (API-EXTENSIONS §9). */
export const mmsTemplates = [mmsTemplatesIndex, mmsTemplatesView, mmsTemplatesCreate, mmsTemplatesUpdate, mmsTemplatesDelete];
