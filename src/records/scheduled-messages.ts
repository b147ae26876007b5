import { type Static, Type } from '@sinclair/typebox';
import type { TimeFormat } from '../lib/time.ts';
import { MESSAGE_STATUSES, MESSAGE_TYPE_MMS, MESSAGE_TYPES } from './statuses.ts';
import type { Row } from '../store/tables.ts';
import { Int, IntOrString, Str } from './common.ts';

/**
 * The columns of `scheduled_messages` a Scheduled single message record shows: the list pages
 * (src/store/repositories/messages.ts, SQL-built JSON included) and the scheduler's reads
 * (src/store/repositories/scheduled.ts) all select these.
 */
export const SCHEDULED_MESSAGE_COLUMNS = [
  'id',
  'mobile_phone',
  'message',
  'scheduled_at',
  'status_id',
  'type_id',
  'mms_template_id',
  'subject',
] as const;
/** A stored scheduled message (times in epoch seconds). */
export type ScheduledMessageRow = Pick<Row<'scheduled_messages'>, (typeof SCHEDULED_MESSAGE_COLUMNS)[number]>;

/** API.md §9.10. */
export const ScheduledMessageRecordSchema = Type.Object({
  Id: Int(),
  MobilePhone: Str(),
  Message: Str(),
  DateTime: Str(),
  Status_Id: Int(),
  Status_Description: Str(),
  Type_Id: Int(),
  Type_Description: Str(),
  // The template id of an MMS, '' for an SMS (API.md §9).
  MmsTemplateId: Type.Unsafe<number | ''>({ type: ['integer', 'string'] }),
  Subject: Str(),
});
export type ScheduledMessageRecord = Static<typeof ScheduledMessageRecordSchema>;

export const scheduledMessageRecord =
  (time: TimeFormat) =>
  (r: ScheduledMessageRow): ScheduledMessageRecord => ({
    Id: r.id,
    MobilePhone: r.mobile_phone,
    Message: r.message,
    DateTime: time.scheduleDateTime(r.scheduled_at),
    Status_Id: r.status_id,
    Status_Description: MESSAGE_STATUSES[r.status_id] ?? '',
    Type_Id: r.type_id,
    Type_Description: MESSAGE_TYPES[r.type_id] ?? '',
    MmsTemplateId: r.type_id === MESSAGE_TYPE_MMS && r.mms_template_id !== null ? r.mms_template_id : '',
    Subject: r.subject,
  });

/**
 * The Scheduled single message record of sms/schedule, sms/view-scheduled and
 * sms/update-scheduled: API.md §9.10's fields, then `RRule`, the recurrence rule as sent (`""`
 * when none) (API.md §14.3.3). `sms/single-schedule-messages` and the `scheduled.action_required`
 * webhook's data keep API.md §9.10's fields exactly.
 */
export const ScheduledSingleMessageWithRRuleRecordSchema = Type.Object({
  ...ScheduledMessageRecordSchema.properties,
  RRule: Str(),
});
export type ScheduledMessageWithRRuleRecord = Static<typeof ScheduledSingleMessageWithRRuleRecordSchema>;

/** A stored scheduled message with its rule (migration 015). */
export type ScheduledMessageWithRRuleRow = ScheduledMessageRow & { rrule?: string | null };

/** The record with `RRule` (a row without the column, written before migration 015, shows `""`). */
export const scheduledMessageWithRRuleRecord = (time: TimeFormat) => {
  const base = scheduledMessageRecord(time);
  return (r: ScheduledMessageWithRRuleRow): ScheduledMessageWithRRuleRecord => ({ ...base(r), RRule: r.rrule ?? '' });
};

/**
 * Body fields of sms/schedule and sms/update-scheduled (API.md §10.6; documentation: the
 * checks and their messages are the domain's rules, src/domain/scheduled.ts). On update every
 * field is optional and only those sent change.
 */
export const ScheduleBodySchema = Type.Object({
  MobilePhone: Type.Optional(Type.String({ description: 'recipient phone number in any common format; required on schedule' })),
  Message: Type.Optional(Type.String({ maxLength: 1600, description: 'the text, at most 1,600 characters' })),
  DateTime: Type.Optional(
    Type.String({
      description:
        'required on schedule; YYYY:MM:DD HH:MM:SS or YYYY-MM-DD HH:MM:SS in the service time zone, or ISO 8601 with an offset (2026-12-01T09:00:00+01:00, Z); in the future, at most 366 days ahead',
    }),
  ),
  Type_Id: Type.Optional(IntOrString('1 SMS (default) or 2 MMS')),
  MmsTemplateId: Type.Optional(IntOrString('a template of the account, required for an MMS')),
  Subject: Type.Optional(Type.String({ maxLength: 255, description: 'at most 255 characters' })),
  Number: Type.Optional(
    IntOrString(
      "an Active number of the account; default: its first Active number, or with SenderSelection pool the pool's choice when each message is queued",
    ),
  ),
  RRule: Type.Optional(
    Type.String({
      maxLength: 255,
      description:
        'an RFC 5545 recurrence rule counted from DateTime (FREQ=WEEKLY;BYDAY=MO;COUNT=10): FREQ (DAILY, WEEKLY, MONTHLY, YEARLY) with INTERVAL, BYDAY, BYMONTHDAY, COUNT or UNTIL; "" for none (on update: stop recurring)',
    }),
  ),
  ShortenLinks: Type.Optional(IntOrString('1: shorten the links of the text at each send (needs MSGSVC_LINK_DOMAIN); default 0')),
  Priority: Type.Optional(IntOrString('1: its messages go to the carrier before every Queued message of Priority 0; 0 (default)')),
});
