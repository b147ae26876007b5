import { viewMessage } from '../../../domain/messages.ts';
import { IdQuery } from '../../../records/common.ts';
import { MessageRecordSchema, messageRecord } from '../../../records/messages.ts';
import { defineOperation } from '../../operation.ts';

/** sms/view?id= (API.md §10.6): one Message record of the log; 404 `Object not found: {id}`. */
export const smsView = defineOperation({
  id: 'sms.view',
  path: '/v1/sms/view',
  resource: 'sms',
  methods: ['GET'],
  summary: 'Read one message of the log',
  success: 200,
  schema: { query: IdQuery, response: MessageRecordSchema },
  handler: ({ store, time }) => {
    const toRecord = messageRecord(time);
    return async (ctx) => toRecord(await viewMessage(store, ctx.accountId, ctx.id()));
  },
});
