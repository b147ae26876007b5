import { viewWebhook } from '../../../domain/webhooks.ts';
import { IdQuery } from '../../../records/common.ts';
import { WebhookRecordSchema, webhookRecord } from '../../../records/webhooks.ts';
import { defineOperation } from '../../operation.ts';

/** docs/API.md §10.8 `GET /v1/webhooks/view?id=`: one webhook; 404 `Object not found: {id}` otherwise. */
export const webhooksView = defineOperation({
  id: 'webhooks.view',
  path: '/v1/webhooks/view',
  resource: 'webhooks',
  methods: ['GET'],
  summary: 'Read one webhook',
  success: 200,
  schema: { query: IdQuery, response: WebhookRecordSchema },
  handler: ({ store, time }) => {
    const toRecord = webhookRecord(time);
    return async (ctx) => toRecord(await viewWebhook(store, ctx.accountId, ctx.id()));
  },
});
