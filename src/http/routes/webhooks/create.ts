import { createWebhook } from '../../../domain/webhooks.ts';
import { CreatedWebhookRecordSchema, WebhookBodySchema, webhookRecord } from '../../../records/webhooks.ts';
import { defineOperation } from '../../operation.ts';
import { webhookDeps } from './deps.ts';

/**
 * docs/API.md §10.8 `POST /v1/webhooks/create`: 201 with `Location` to webhooks/view. The reply
 * alone carries the signing `Secret` (its last field), so only a replay of it (Idempotency-Key,
 * docs/API.md §7) shows the secret again.
 */
export const webhooksCreate = defineOperation({
  id: 'webhooks.create',
  path: '/v1/webhooks/create',
  resource: 'webhooks',
  methods: ['POST'],
  summary: 'Create a webhook (the reply alone shows its signing Secret)',
  success: 201,
  location: '/v1/webhooks/view',
  idempotent: true,
  schema: { body: WebhookBodySchema, response: CreatedWebhookRecordSchema },
  handler: (deps) => {
    const toRecord = webhookRecord(deps.time);
    const d = webhookDeps(deps);
    return async (ctx) => {
      const row = await createWebhook(d, ctx.accountId, ctx.body());
      return { ...toRecord(row), Secret: row.secret };
    };
  },
});
