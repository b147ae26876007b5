import { viewScheduled } from '../../../domain/scheduled.ts';
import { IdQuery } from '../../../records/common.ts';
import { ScheduledSingleMessageWithRRuleRecordSchema, scheduledMessageWithRRuleRecord } from '../../../records/scheduled-messages.ts';
import { defineOperation } from '../../operation.ts';

/**
 * sms/view-scheduled?id= (API.md §10.6): one scheduled single message record with `RRule` last; 404 `Object
 * not found: {id}` (also once it was sent or cancelled).
 */
export const smsViewScheduled = defineOperation({
  id: 'sms.view-scheduled',
  path: '/v1/sms/view-scheduled',
  resource: 'sms',
  methods: ['GET'],
  summary: 'Read one scheduled message',
  success: 200,
  schema: { query: IdQuery, response: ScheduledSingleMessageWithRRuleRecordSchema },
  handler: ({ store, time }) => {
    const toRecord = scheduledMessageWithRRuleRecord(time);
    return async (ctx) => toRecord(await viewScheduled(store, ctx.accountId, ctx.id()));
  },
});
