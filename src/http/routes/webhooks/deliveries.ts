import { Type } from '@sinclair/typebox';
import { deliveriesPage } from '../../../domain/webhooks.ts';
import { IdQuery, PageQuery } from '../../../records/common.ts';
import { DeliveryRecordSchema, deliveryRecord } from '../../../records/webhooks.ts';
import { defineOperation } from '../../operation.ts';

/** docs/API.md §10.8 `GET /v1/webhooks/deliveries?id=`: a webhook's deliveries, newest first, paginated. */
export const webhooksDeliveries = defineOperation({
  id: 'webhooks.deliveries',
  path: '/v1/webhooks/deliveries',
  resource: 'webhooks',
  methods: ['GET'],
  summary: "A webhook's deliveries, newest first",
  success: 200,
  schema: { query: Type.Object({ ...IdQuery.properties, ...PageQuery.properties }), response: Type.Array(DeliveryRecordSchema) },
  handler: ({ store, time }) => {
    const toRecord = deliveryRecord(time);
    return async (ctx) => {
      const { total, fetch } = await deliveriesPage(store, ctx.accountId, ctx.id());
      return ctx.paginate(total, fetch, toRecord);
    };
  },
});
