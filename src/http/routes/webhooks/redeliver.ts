import { redeliver } from '../../../domain/webhooks.ts';
import { IdQuery } from '../../../records/common.ts';
import { DeliveryRecordSchema, deliveryRecord } from '../../../records/webhooks.ts';
import { defineOperation } from '../../operation.ts';
import { webhookDeps } from './deps.ts';

/**
 * docs/API.md §10.8 `POST /v1/webhooks/redeliver?id=` (a delivery's id): the delivery is queued
 * once more; 200 with its Delivery record. Honours Idempotency-Key (docs/API.md §7).
 */
export const webhooksRedeliver = defineOperation({
  id: 'webhooks.redeliver',
  path: '/v1/webhooks/redeliver',
  resource: 'webhooks',
  methods: ['POST'],
  summary: 'Queue a delivery once more',
  success: 200,
  idempotent: true,
  body: { kind: 'none' },
  schema: { query: IdQuery, response: DeliveryRecordSchema },
  handler: (deps) => {
    const toRecord = deliveryRecord(deps.time);
    const d = webhookDeps(deps);
    return async (ctx) => toRecord(await redeliver(d, ctx.accountId, ctx.id()));
  },
});
