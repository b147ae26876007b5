import { type Static, Type } from '@sinclair/typebox';
import type { TimeFormat } from '../lib/time.ts';
import { Int, Str } from './common.ts';
import { MessageRecordSchema, messageRecord, type MessageRow } from './messages.ts';

/**
 * A conversation as the store reads it: the thread's newest message (the Message record's
 * columns; its `mobile_phone` is the thread's number), the thread's unread count, and the id of the
 * account's contact with that number (null when none).
 */
export type ConversationRow = MessageRow & { unread: number; contact_id: number | null };

/**
 * API.md §14.4.1 Conversation record (`sms/conversations`), fields in its order: the other party's
 * number (digits), the account's contact with that number (`""` when none), the thread's newest
 * message as `sms/view` shows it (a nested record: in XML the element `<LastMessage>` holds the
 * Message record's elements), the inbound messages since the thread was last marked read, and the
 * account number the thread uses: its newest message's (API.md §17).
 */
export const ConversationRecordSchema = Type.Object({
  MobilePhone: Str(),
  ContactId: Type.Unsafe<number | ''>({ type: ['integer', 'string'] }),
  LastMessage: MessageRecordSchema,
  Unread: Int(),
  Number: Type.String({ description: "the account's number the conversation uses: its newest message's" }),
});
export type ConversationRecord = Static<typeof ConversationRecordSchema>;

/** Maps a stored conversation to its record, times in the configured zone (API.md §9). */
export const conversationRecord = (time: TimeFormat) => {
  const toMessage = messageRecord(time);
  return (r: ConversationRow): ConversationRecord => ({
    MobilePhone: r.mobile_phone,
    ContactId: r.contact_id ?? '',
    LastMessage: toMessage(r),
    Unread: Number(r.unread),
    Number: r.number,
  });
};
