import { deleteWebhook } from '../../../domain/webhooks.ts';
import { IdQuery } from '../../../records/common.ts';
import { defineOperation } from '../../operation.ts';

/** docs/API.md §10.8 `DELETE /v1/webhooks/delete?id=`: 204; the webhook's deliveries go with it. */
export const webhooksDelete = defineOperation({
  id: 'webhooks.delete',
  path: '/v1/webhooks/delete',
  resource: 'webhooks',
  methods: ['DELETE'],
  summary: 'Delete a webhook and its deliveries',
  success: 204,
  schema: { query: IdQuery },
  handler:
    ({ store }) =>
    async (ctx) => {
      await deleteWebhook(store, ctx.accountId, ctx.id());
    },
});
