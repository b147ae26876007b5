import { cancelScheduled } from '../../../domain/scheduled.ts';
import { IdQuery } from '../../../records/common.ts';
import { defineOperation } from '../../operation.ts';
import { scheduleDeps } from './messaging.ts';

/** sms/cancel-scheduled?id= (API.md §10.6): 204; the message leaves the list and its reserved credits are released. */
export const smsCancelScheduled = defineOperation({
  id: 'sms.cancel-scheduled',
  path: '/v1/sms/cancel-scheduled',
  resource: 'sms',
  methods: ['DELETE'],
  summary: 'Cancel a scheduled message',
  success: 204,
  schema: { query: IdQuery },
  handler: (deps) => {
    const schedule = scheduleDeps(deps);
    return async (ctx) => {
      await cancelScheduled(schedule, ctx.accountId, ctx.id());
    };
  },
});
