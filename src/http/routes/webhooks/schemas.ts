import { type Static, Type } from '@sinclair/typebox';
import type { TimeFormat } from '../../../lib/time.ts';
import { webhookEvents } from '../../../domain/webhooks.ts';
import type { DeliveryRow, WebhookRow } from '../../../store/repositories/webhooks.ts';
import { Int, Str } from '../../../records/common.ts';

/** API-EXTENSIONS §10 Webhook record, fields in its order. */
export const WebhookRecordSchema = Type.Object({
  Id: Int(),
  Url: Str(),
  Events: Type.Array(Str()),
  Active: Int(),
  DateCreated: Str(),
  DateUpdated: Str(),
});
export type WebhookRecord = Static<typeof WebhookRecordSchema>;

/** The reply to webhooks/create alone: the record plus `Secret`, its last field (§10). */
export const CreatedWebhookRecordSchema = Type.Object({ ...WebhookRecordSchema.properties, Secret: Str() });

export const webhookRecord =
  (time: TimeFormat) =>
  (r: WebhookRow): WebhookRecord => ({
    Id: r.id,
    Url: r.url,
    Events: webhookEvents(r),
    Active: Number(r.active),
    DateCreated: time.dateTime(r.created_at),
    DateUpdated: time.dateTime(r.updated_at),
  });

/** API-EXTENSIONS §10 Delivery record, fields in its order. */
export const DeliveryRecordSchema = Type.Object({
  Id: Int(),
  WebhookId: Int(),
  Event: Str(),
  Status: Str(),
  Attempts: Int(),
  LastStatusCode: Type.Unsafe<number | null>({ type: ['integer', 'null'] }),
  LastError: Str(),
  DateCreated: Str(),
  DateUpdated: Str(),
});
export type DeliveryRecord = Static<typeof DeliveryRecordSchema>;

export const deliveryRecord =
  (time: TimeFormat) =>
  (r: DeliveryRow): DeliveryRecord => ({
    Id: r.id,
    WebhookId: r.webhook_id,
    Event: r.event,
    Status: r.status,
    Attempts: r.attempts,
    LastStatusCode: r.last_status_code,
    LastError: r.last_error,
    DateCreated: time.dateTime(r.created_at),
    DateUpdated: time.dateTime(r.updated_at),
  });

/** Body of webhooks/create and webhooks/update (documentation; the checks are src/domain/webhooks.ts). */
export const WebhookBodySchema = Type.Object({
  Url: Type.Optional(Type.String({ description: 'absolute http or https URL, at most 2,048 characters; required on create' })),
  Events: Type.Optional(Type.Array(Type.String(), { description: 'event names (API-EXTENSIONS §10); required on create' })),
  Active: Type.Optional(Type.Union([Type.Integer(), Type.String()], { description: '0 or 1, default 1' })),
});
