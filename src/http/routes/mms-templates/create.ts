import { createTemplate } from '../../../domain/mms-templates.ts';
import { systemClock } from '../../../lib/time.ts';
import { MmsTemplateRecordSchema, MmsTemplateWriteBodySchema, mmsTemplateRecord } from '../../../records/media.ts';
import { defineOperation } from '../../operation.ts';

/**
 * API.md §10.7 `POST /v1/mms-templates/create`: `Name` (required, 3 to 64), `Subject` (at most
 * 255), `Message` (at most 1,600), `MediaIds` (required, 1 to 10 media of the account). 201 with
 * `Location` to mms-templates/view. Honours Idempotency-Key.
 */
export const mmsTemplatesCreate = defineOperation({
  id: 'mms-templates.create',
  path: '/v1/mms-templates/create',
  resource: 'media',
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
