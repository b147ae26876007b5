import { type Static, Type } from '@sinclair/typebox';
import type { TimeFormat } from '../lib/time.ts';
import type { Row } from '../store/tables.ts';
import { Int, Str } from './common.ts';
import { contactRecord, type ContactRow } from './contacts.ts';
import { linkClickedData, type LinkClickedRow } from './links.ts';
import { messageRecord, type MessageRow } from './messages.ts';
import { scheduledMessageRecord, type ScheduledMessageRow } from './scheduled-messages.ts';
import type { EventType } from './statuses.ts';

/** A stored webhook (every column: the delivery loop needs its `secret`). */
export type WebhookRow = Row<'webhooks'>;

/** The Events of a stored webhook: its `events` JSON array text, read leniently (anything else: none). */
export function webhookEvents(row: Pick<WebhookRow, 'events'>): string[] {
  try {
    const v = JSON.parse(row.events) as unknown;
    return Array.isArray(v) ? v.map(String) : [];
  } catch {
    return [];
  }
}

/** API.md §10.8 Webhook record, fields in its order. */
export const WebhookRecordSchema = Type.Object({
  Id: Int(),
  Url: Str(),
  Events: Type.Array(Str()),
  Active: Int(),
  DateCreated: Str(),
  DateUpdated: Str(),
});
export type WebhookRecord = Static<typeof WebhookRecordSchema>;

/** The reply to webhooks/create alone: the record plus `Secret`, its last field (API.md §12.3). */
export const CreatedWebhookRecordSchema = Type.Object({ ...WebhookRecordSchema.properties, Secret: Str() });

/** Maps a stored webhook to its Webhook record (API.md §9.16), times in the configured zone. */
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

/** The columns of `webhook_deliveries` a Delivery record (and the account's reads of one) select. */
export const DELIVERY_COLUMNS = [
  'id',
  'account_id',
  'webhook_id',
  'event',
  'msg_id',
  'payload',
  'status',
  'attempts',
  'last_status_code',
  'last_error',
  'created_at',
  'updated_at',
] as const;
/** A stored delivery of the outbox (times in epoch seconds). */
export type DeliveryRow = Pick<Row<'webhook_deliveries'>, (typeof DELIVERY_COLUMNS)[number]>;

/** API.md §10.8 Delivery record, fields in its order. */
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

/** Maps a stored delivery to its Delivery record (API.md §9.17), times in the configured zone. */
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
  Events: Type.Optional(Type.Array(Type.String(), { description: 'event names (API.md §12.1); required on create' })),
  Active: Type.Optional(Type.Union([Type.Integer(), Type.String()], { description: '0 or 1, default 1' })),
});

// ------------------------------------------------------------------ the outbox payload

/**
 * The stored row an event renders (docs/API.md §12): a Message row (`message.*`), a Contact row
 * (`contact.*`), a scheduled message row (`scheduled.*`) or a clicked link (`link.*`: message id,
 * URL, clicks). Extra columns (a scheduled message's state) are stored and ignored.
 */
export type EventRow = MessageRow | ContactRow | ScheduledMessageRow | LinkClickedRow;

/** The version of the outbox payload this code writes. */
export const EVENT_PAYLOAD_VERSION = 1;

/**
 * `webhook_deliveries.payload`, version 1: `{"v":1,"type","at","data"}`, the event's type, its
 * time (epoch seconds) and the stored row of its record, which is rendered into the record only
 * when the delivery is sent. A delivery may wait hours (the retry schedule) or be redelivered
 * later, so a payload outlives the code that wrote it: when the record or the row it is rendered
 * from changes, the stored form gets a new version (and its own renderer in `eventBody`), and
 * version 1 keeps rendering as it did. Rows written before the field existed carry no `v`; their
 * form is version 1's.
 */
export interface StoredEventV1 {
  v: 1;
  type: EventType;
  /** Epoch seconds. */
  at: number;
  data: EventRow;
}

/** The payload text of event `type` at `at` (epoch seconds) whose record is `data` (current version). */
export function storedEvent(type: EventType, at: number, data: EventRow): string {
  return JSON.stringify({ v: EVENT_PAYLOAD_VERSION, type, at, data } satisfies StoredEventV1);
}

/** A payload of a version this code does not know (written by a newer release sharing the database). */
export class UnknownPayloadVersionError extends Error {
  constructor(readonly version: unknown) {
    super(`unknown webhook payload version ${JSON.stringify(version)}`);
    this.name = 'UnknownPayloadVersionError';
  }
}

/**
 * The POST body of a stored event (API.md §12.2): `{"type","timestamp","data"}`,
 * `timestamp` ISO 8601 UTC to the second, `data` the record in its JSON form with times in `time`'s
 * zone, U+2028 and U+2029 escaped as in every JSON body of the service.
 * @throws UnknownPayloadVersionError for a `v` other than 1 (or absent, which is 1); SyntaxError
 *   for a payload that is not JSON.
 */
export function eventBody(payload: string, time: TimeFormat): string {
  const e = JSON.parse(payload) as { v?: unknown };
  switch (Object.hasOwn(e, 'v') ? e.v : 1) {
    case 1:
      return bodyV1(e as StoredEventV1, time);
    default:
      throw new UnknownPayloadVersionError(e.v);
  }
}

function bodyV1(e: StoredEventV1, time: TimeFormat): string {
  const data = e.type.startsWith('message.')
    ? messageRecord(time)(e.data as MessageRow)
    : e.type.startsWith('contact.')
      ? contactRecord(time)(e.data as ContactRow)
      : e.type.startsWith('link.')
        ? linkClickedData(e.data as LinkClickedRow)
        : scheduledMessageRecord(time)(e.data as ScheduledMessageRow);
  const timestamp = new Date(e.at * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  // API.md §2.2: U+2028 and U+2029 escaped, as every JSON body of the service.
  return JSON.stringify({ type: e.type, timestamp, data })
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}
