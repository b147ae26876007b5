import { type Static, Type } from '@sinclair/typebox';
import type { TimeFormat } from '../../domain/time.ts';
import { MESSAGE_STATUSES, MESSAGE_TYPE_MMS, MESSAGE_TYPES } from '../../domain/statuses.ts';
import type { ScheduledMessageRow } from '../../store/repositories/messages.ts';
import { Int, Str } from './common.ts';

/** Spec "Scheduled single message". */
export const ScheduledMessageRecordSchema = Type.Object({
  Id: Int(),
  MobilePhone: Str(),
  Message: Str(),
  DateTime: Str(),
  Status_Id: Int(),
  Status_Description: Str(),
  Type_Id: Int(),
  Type_Description: Str(),
  // The template id of an MMS, '' for an SMS (CONVENTIONS §10).
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
