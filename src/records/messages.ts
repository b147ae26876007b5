import { type Static, Type } from '@sinclair/typebox';
import type { TimeFormat } from '../lib/time.ts';
import { DIRECTIONS, LOG_STATUSES, MESSAGE_TYPES } from './statuses.ts';
import type { Row } from '../store/tables.ts';
import { Int, IntOrString, NullableStr, Str } from './common.ts';

/** The columns of `messages` a Message record shows. */
export const MESSAGE_COLUMNS = [
  'id',
  'direction',
  'number',
  'mobile_phone',
  'message',
  'type_id',
  'status_id',
  'segments',
  'credits',
  'batch_id',
  'scheduled_message_id',
  'error_code',
  'created_at',
  'sent_at',
  'delivered_at',
] as const;
/** A message of the log as the Message record shows it (times in epoch seconds). */
export type MessageRow = Pick<Row<'messages'>, (typeof MESSAGE_COLUMNS)[number]>;

/** The columns of `batches` a Batch record shows. */
export const BATCH_COLUMNS = ['id', 'group_id', 'number', 'message', 'type_id', 'recipients', 'skipped', 'credits', 'created_at'] as const;
/** A send-group batch as the Batch record shows it. */
export type BatchRow = Pick<Row<'batches'>, (typeof BATCH_COLUMNS)[number]>;

/** An integer id, or `""` when none (BatchId, ScheduledMessageId). */
const IdOrEmpty = () => Type.Unsafe<number | ''>({ type: ['integer', 'string'] });

/** API.md §9.11, fields in its order. */
export const MessageRecordSchema = Type.Object({
  Id: Int(),
  Direction: Str(),
  Number: Str(),
  MobilePhone: Str(),
  Message: Str(),
  Type_Id: Int(),
  Type_Description: Str(),
  Status_Id: Int(),
  Status_Description: Str(),
  Segments: Int(),
  Credits: Int(),
  BatchId: IdOrEmpty(),
  ScheduledMessageId: IdOrEmpty(),
  ErrorCode: Str(),
  DateCreated: Str(),
  DateSent: NullableStr(),
  DateDelivered: NullableStr(),
});
export type MessageRecord = Static<typeof MessageRecordSchema>;

/** Maps a stored message to the Message record, times in the configured zone (API.md §9). */
export const messageRecord =
  (time: TimeFormat) =>
  (r: MessageRow): MessageRecord => ({
    Id: r.id,
    Direction: DIRECTIONS[r.direction] ?? '',
    Number: r.number,
    MobilePhone: r.mobile_phone,
    Message: r.message,
    Type_Id: r.type_id,
    Type_Description: MESSAGE_TYPES[r.type_id] ?? '',
    Status_Id: r.status_id,
    Status_Description: LOG_STATUSES[r.status_id] ?? '',
    Segments: r.segments,
    Credits: Number(r.credits),
    BatchId: r.batch_id ?? '',
    ScheduledMessageId: r.scheduled_message_id ?? '',
    ErrorCode: r.error_code,
    DateCreated: time.dateTime(Number(r.created_at)),
    DateSent: r.sent_at === null ? null : time.dateTime(Number(r.sent_at)),
    DateDelivered: r.delivered_at === null ? null : time.dateTime(Number(r.delivered_at)),
  });

/** API.md §10.6 Batch record (the reply of sms/send-group), fields in its order. */
export const BatchRecordSchema = Type.Object({
  Id: Int(),
  GroupId: Int(),
  Number: Str(),
  Message: Str(),
  Type_Id: Int(),
  Recipients: Int(),
  Skipped: Int(),
  Credits: Int(),
  DateCreated: Str(),
});
export type BatchRecord = Static<typeof BatchRecordSchema>;

export const batchRecord =
  (time: TimeFormat) =>
  (r: BatchRow): BatchRecord => ({
    Id: r.id,
    GroupId: r.group_id,
    Number: r.number,
    Message: r.message,
    Type_Id: r.type_id,
    Recipients: r.recipients,
    Skipped: r.skipped,
    Credits: Number(r.credits),
    DateCreated: time.dateTime(Number(r.created_at)),
  });

/** Body fields of sms/send (documentation; the checks and their messages are the domain's rules). */
export const SendBodySchema = Type.Object({
  Message: Type.Optional(Type.String({ minLength: 1, maxLength: 1600, description: 'required for an SMS' })),
  MobilePhone: Type.Optional(Type.String({ description: 'recipient phone number in any common format (or PhoneNumberId)' })),
  PhoneNumberId: Type.Optional(IntOrString('recipient: a contact of the account (or MobilePhone)')),
  Number: Type.Optional(
    IntOrString("an Active number of the account; default: its first Active number, or with SenderSelection pool the pool's choice"),
  ),
  Type_Id: Type.Optional(IntOrString('1 SMS (default) or 2 MMS')),
  MmsTemplateId: Type.Optional(IntOrString('a template of the account, required for an MMS')),
  ShortenLinks: Type.Optional(IntOrString('1: replace each http(s) URL by a tracked link (MSGSVC_LINK_DOMAIN); 0 (default): no')),
  Priority: Type.Optional(IntOrString('1: to the carrier before every Queued message of Priority 0; 0 (default)')),
});

/** Body fields of sms/send-group. */
export const SendGroupBodySchema = Type.Object({
  GroupId: IntOrString('a group of the account; every member who has not opted out gets one message'),
  Message: Type.Optional(Type.String({ minLength: 1, maxLength: 1600, description: 'required for an SMS' })),
  Number: Type.Optional(
    IntOrString("an Active number of the account; default: its first Active number, or with SenderSelection pool the pool's choice"),
  ),
  Type_Id: Type.Optional(IntOrString('1 SMS (default) or 2 MMS')),
  MmsTemplateId: Type.Optional(IntOrString('a template of the account, required for an MMS')),
  ShortenLinks: Type.Optional(IntOrString('1: replace each http(s) URL by a tracked link (MSGSVC_LINK_DOMAIN); 0 (default): no')),
  Priority: Type.Optional(IntOrString('1: to the carrier before every Queued message of Priority 0; 0 (default)')),
});
