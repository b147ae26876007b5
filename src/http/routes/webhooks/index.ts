import { Type } from '@sinclair/typebox';
import { systemClock } from '../../../lib/time.ts';
import {
  createWebhook,
  deleteWebhook,
  deliveriesPage,
  redeliver,
  updateWebhook,
  viewWebhook,
  webhooksPage,
  type WebhookDeps,
} from '../../../domain/webhooks.ts';
import { IdQuery, PageQuery } from '../../../records/common.ts';
import { defineOperation, type RouteDeps } from '../../operation.ts';
import { CreatedWebhookRecordSchema, DeliveryRecordSchema, WebhookBodySchema, WebhookRecordSchema, deliveryRecord, webhookRecord } from './schemas.ts';

/**
 * `/v1/webhooks/…` (API-EXTENSIONS §10): `index`, `view`, `create`, `update`, `delete`,
 * `deliveries?id=` (a webhook's deliveries, newest first, paginated) and `redeliver?id=` (POST,
 * a delivery's id: queued once more; 200 with the delivery record). POSTs honour Idempotency-Key
 * (§1); the create reply alone carries `Secret`, so only its replay shows it again.
 */

const depsOf = ({ store, config, clock }: RouteDeps): WebhookDeps => ({ store, clock: clock ?? systemClock, allowPrivate: config.webhookAllowPrivate });

export const webhooksIndex = defineOperation({
  id: 'webhooks.index',
  path: '/v1/webhooks/index',
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

export const webhooksView = defineOperation({
  id: 'webhooks.view',
  path: '/v1/webhooks/view',
  methods: ['GET'],
  summary: 'Read one webhook',
  success: 200,
  schema: { query: IdQuery, response: WebhookRecordSchema },
  handler: ({ store, time }) => {
    const toRecord = webhookRecord(time);
    return async (ctx) => toRecord(await viewWebhook(store, ctx.accountId, ctx.id()));
  },
});

export const webhooksCreate = defineOperation({
  id: 'webhooks.create',
  path: '/v1/webhooks/create',
  methods: ['POST'],
  summary: 'Create a webhook (the reply alone shows its signing Secret)',
  success: 201,
  location: '/v1/webhooks/view',
  idempotent: true,
  schema: { body: WebhookBodySchema, response: CreatedWebhookRecordSchema },
  handler: (deps) => {
    const toRecord = webhookRecord(deps.time);
    const d = depsOf(deps);
    return async (ctx) => {
      const row = await createWebhook(d, ctx.accountId, ctx.body());
      return { ...toRecord(row), Secret: row.secret };
    };
  },
});

export const webhooksUpdate = defineOperation({
  id: 'webhooks.update',
  path: '/v1/webhooks/update',
  methods: ['PUT', 'PATCH'],
  summary: 'Change a webhook',
  success: 200,
  schema: { query: IdQuery, body: WebhookBodySchema, response: WebhookRecordSchema },
  handler: (deps) => {
    const toRecord = webhookRecord(deps.time);
    const d = depsOf(deps);
    return async (ctx) => toRecord(await updateWebhook(d, ctx.accountId, ctx.id(), ctx.body()));
  },
});

export const webhooksDelete = defineOperation({
  id: 'webhooks.delete',
  path: '/v1/webhooks/delete',
  methods: ['DELETE'],
  summary: 'Delete a webhook and its deliveries',
  success: 204,
  schema: { query: IdQuery },
  handler: ({ store }) => async (ctx) => {
    await deleteWebhook(store, ctx.accountId, ctx.id());
  },
});

export const webhooksDeliveries = defineOperation({
  id: 'webhooks.deliveries',
  path: '/v1/webhooks/deliveries',
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

export const webhooksRedeliver = defineOperation({
  id: 'webhooks.redeliver',
  path: '/v1/webhooks/redeliver',
  methods: ['POST'],
  summary: 'Queue a delivery once more',
  success: 200,
  idempotent: true,
  body: { kind: 'none' },
  schema: { query: IdQuery, response: DeliveryRecordSchema },
  handler: (deps) => {
    const toRecord = deliveryRecord(deps.time);
    const d = depsOf(deps);
    return async (ctx) => toRecord(await redeliver(d, ctx.accountId, ctx.id()));
  },
});

export const webhooks = [webhooksIndex, webhooksView, webhooksCreate, webhooksUpdate, webhooksDelete, webhooksDeliveries, webhooksRedeliver];
