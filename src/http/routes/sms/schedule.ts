import { scheduleMessage } from '../../../domain/scheduled.ts';
import {
  ScheduleBodySchema,
  ScheduledSingleMessageWithRRuleRecordSchema,
  scheduledMessageWithRRuleRecord,
} from '../../../records/scheduled-messages.ts';
import { defineOperation } from '../../operation.ts';
import { scheduleDeps } from './messaging.ts';

/**
 * sms/schedule (API.md §11.7): a scheduled single message, 1 Pending (checked within a
 * second by the scheduler). 201, the scheduled single message record (API.md §9.10) with `RRule` last, `Location` to
 * sms/view-scheduled. Honours Idempotency-Key (API.md §7): a replay creates nothing and reserves nothing.
 */
export const smsSchedule = defineOperation({
  id: 'sms.schedule',
  path: '/v1/sms/schedule',
  resource: 'sms',
  methods: ['POST'],
  summary: 'Schedule one message',
  success: 201,
  location: '/v1/sms/view-scheduled',
  idempotent: true,
  schema: { body: ScheduleBodySchema, response: ScheduledSingleMessageWithRRuleRecordSchema },
  handler: (deps) => {
    const toRecord = scheduledMessageWithRRuleRecord(deps.time);
    const schedule = scheduleDeps(deps);
    return async (ctx) => toRecord(await scheduleMessage(schedule, ctx.accountId, ctx.body()));
  },
});
