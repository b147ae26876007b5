import { updateScheduled } from '../../../domain/scheduled.ts';
import { IdQuery } from '../../../records/common.ts';
import {
  ScheduleBodySchema,
  ScheduledSingleMessageWithRRuleRecordSchema,
  scheduledMessageWithRRuleRecord,
} from '../../../records/scheduled-messages.ts';
import { defineOperation } from '../../operation.ts';
import { scheduleDeps } from './messaging.ts';

/**
 * sms/update-scheduled?id= (API.md §10.6): the fields of sms/schedule, only those sent
 * change; its reservation is released and it is 1 Pending again (checked within a second). 200,
 * the scheduled single message record with `RRule` last (API.md §10.6).
 */
export const smsUpdateScheduled = defineOperation({
  id: 'sms.update-scheduled',
  path: '/v1/sms/update-scheduled',
  resource: 'sms',
  methods: ['PUT', 'PATCH'],
  summary: 'Change a scheduled message',
  success: 200,
  schema: { query: IdQuery, body: ScheduleBodySchema, response: ScheduledSingleMessageWithRRuleRecordSchema },
  handler: (deps) => {
    const toRecord = scheduledMessageWithRRuleRecord(deps.time);
    const schedule = scheduleDeps(deps);
    return async (ctx) => {
      const id = ctx.id();
      return toRecord(await updateScheduled(schedule, ctx.accountId, id, ctx.body()));
    };
  },
});
