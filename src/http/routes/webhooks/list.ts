import { Type } from '@sinclair/typebox';
import { webhooksPage } from '../../../domain/webhooks.ts';
import { PageQuery } from '../../../records/common.ts';
import { WebhookRecordSchema, webhookRecord } from '../../../records/webhooks.ts';
import { defineOperation } from '../../operation.ts';

/** docs/API.md §10.8 `GET /v1/webhooks/index`: the account's webhooks by Id ascending, paginated. */
export const webhooksIndex = defineOperation({
  id: 'webhooks.index',
  path: '/v1/webhooks/index',
  resource: 'webhooks',
  methods: ['GET'],
  summary: "List the account's webhooks",
  success: 200,
  schema: { query: PageQuery, response: Type.Array(WebhookRecordSchema) },
  handler: ({ store, time }) => {
    const toRecord = webhookRecord(time);
    return async (ctx) => {
      const { total, fetch } = await webhooksPage(store, ctx.accountId);
      return ctx.paginate(total, fetch, toRecord);
    };
  },
});
