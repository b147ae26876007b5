import { Type } from '@sinclair/typebox';
import * as repo from '../../../store/repositories/messages.ts';
import { PageQuery } from '../../../records/common.ts';
import { ScheduledMessageRecordSchema, scheduledMessageRecord } from '../../../records/scheduled-messages.ts';
import { defineOperation } from '../../operation.ts';

/** Spec "GET /v1/sms/single-schedule-messages": scheduled single messages, paginated. */
export const singleScheduleMessages = defineOperation({
  id: 'sms.single-schedule-messages',
  path: '/v1/sms/single-schedule-messages',
  methods: ['GET'],
  summary: 'List scheduled single messages',
  success: 200,
  schema: { query: PageQuery, response: Type.Array(ScheduledMessageRecordSchema) },
  handler: ({ store, time }) => {
    const toRecord = scheduledMessageRecord(time);
    return async (ctx) =>
      ctx.paginate(
        await repo.countScheduledMessages(store.db, ctx.accountId),
        (limit, offset) => repo.listScheduledMessages(store.db, ctx.accountId, limit, offset),
        toRecord,
        // SQLite renders the page's JSON itself when times are in UTC (issue 15).
        time.utc ? (limit, offset) => repo.listScheduledMessagesJson(store.db, ctx.accountId, limit, offset) : undefined,
      );
  },
});
