import { Type } from '@sinclair/typebox';
import { countScheduledMessages, listScheduledMessages, listScheduledMessagesJson } from '../../../domain/scheduled.ts';
import { PageQuery } from '../../../records/common.ts';
import { ScheduledMessageRecordSchema, scheduledMessageRecord } from '../../../records/scheduled-messages.ts';
import { defineOperation } from '../../operation.ts';

/** API.md §9: scheduled single messages, paginated. */
export const singleScheduleMessages = defineOperation({
  id: 'sms.single-schedule-messages',
  path: '/v1/sms/single-schedule-messages',
  resource: 'sms',
  methods: ['GET'],
  summary: 'List scheduled single messages',
  success: 200,
  schema: { query: PageQuery, response: Type.Array(ScheduledMessageRecordSchema) },
  handler: ({ store, time }) => {
    const toRecord = scheduledMessageRecord(time);
    return async (ctx) =>
      ctx.paginate(
        await countScheduledMessages(store, ctx.accountId),
        (limit, offset) => listScheduledMessages(store, ctx.accountId, limit, offset),
        toRecord,
        // SQLite renders the page's JSON itself when times are in UTC (issue 15).
        time.utc ? (limit, offset) => listScheduledMessagesJson(store, ctx.accountId, limit, offset) : undefined,
      );
  },
});
