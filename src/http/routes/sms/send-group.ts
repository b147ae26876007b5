import { sendGroupMessage } from '../../../domain/messages.ts';
import { BatchRecordSchema, SendGroupBodySchema, batchRecord } from '../../../records/messages.ts';
import { defineOperation } from '../../operation.ts';
import { messagingDeps } from './messaging.ts';

/**
 * sms/send-group (API.md §10.6): one message to every member of a group who has not opted
 * out, all or nothing, in one transaction. 201, the Batch record (no `Location`: batches have no
 * view action; their messages are `sms/index?BatchId=`). Honours Idempotency-Key (API.md §7).
 */
export const smsSendGroup = defineOperation({
  id: 'sms.send-group',
  path: '/v1/sms/send-group',
  resource: 'sms',
  methods: ['POST'],
  summary: 'Send one message to every member of a group',
  success: 201,
  idempotent: true,
  schema: { body: SendGroupBodySchema, response: BatchRecordSchema },
  handler: (deps) => {
    const toRecord = batchRecord(deps.time);
    const messaging = messagingDeps(deps);
    return async (ctx) => toRecord(await sendGroupMessage(messaging, ctx.accountId, ctx.body()));
  },
});
