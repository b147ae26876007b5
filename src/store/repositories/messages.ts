import type { Db } from '../types.ts';
import type { ScheduledMessageRow } from '../../domain/records.ts';

/** Scheduled single messages. */

export async function countScheduledMessages(db: Db, accountId: number): Promise<number> {
  const row = await db
    .selectFrom('scheduled_messages')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** One page of scheduled messages in id order. */
export async function listScheduledMessages(db: Db, accountId: number, limit: number, offset: number): Promise<ScheduledMessageRow[]> {
  return db
    .selectFrom('scheduled_messages')
    .select(['id', 'mobile_phone', 'message', 'scheduled_at', 'status_id', 'type_id', 'mms_template_id', 'subject'])
    .where('account_id', '=', accountId)
    .orderBy('id')
    .limit(limit)
    .offset(offset)
    .execute();
}

export interface NewScheduledMessage {
  mobilePhone: string;
  message: string;
  scheduledAt: number;
  statusId: number;
  typeId: number;
  mmsTemplateId: number | null;
  subject: string;
}

export async function insertScheduledMessage(db: Db, accountId: number, m: NewScheduledMessage, now: number): Promise<number> {
  const { id } = await db
    .insertInto('scheduled_messages')
    .values({
      account_id: accountId,
      mobile_phone: m.mobilePhone,
      message: m.message,
      scheduled_at: m.scheduledAt,
      status_id: m.statusId,
      type_id: m.typeId,
      mms_template_id: m.mmsTemplateId,
      subject: m.subject,
      created_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}
