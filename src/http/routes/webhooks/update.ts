import { updateWebhook } from '../../../domain/webhooks.ts';
import { IdQuery } from '../../../records/common.ts';
import { WebhookBodySchema, WebhookRecordSchema, webhookRecord } from '../../../records/webhooks.ts';
import { defineOperation } from '../../operation.ts';
import { webhookDeps } from './deps.ts';

/** docs/API.md §10.8 `PUT|PATCH /v1/webhooks/update?id=`: only the fields sent change. */
export const webhooksUpdate = defineOperation({
  id: 'webhooks.update',
  path: '/v1/webhooks/update',
  resource: 'webhooks',
  methods: ['PUT', 'PATCH'],
  summary: 'Change a webhook',
  success: 200,
  schema: { query: IdQuery, body: WebhookBodySchema, response: WebhookRecordSchema },
  handler: (deps) => {
    const toRecord = webhookRecord(deps.time);
    const d = webhookDeps(deps);
    return async (ctx) => toRecord(await updateWebhook(d, ctx.accountId, ctx.id(), ctx.body()));
  },
});
