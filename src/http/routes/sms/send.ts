import { Type } from '@sinclair/typebox';
import { sendMessage } from '../../../domain/messages.ts';
import { MessageRecordSchema, SendBodySchema, messageRecord } from '../../../records/messages.ts';
import { defineOperation } from '../../operation.ts';
import { messagingDeps } from './messaging.ts';

/**
 * sms/send (API.md §10.6): queues one message and debits its credits in one transaction.
 * 201, a list holding the one new Message record (Queued), `Location` to sms/view. Honours
 * Idempotency-Key (API.md §7): a replay spends no credit twice.
 */
export const smsSend = defineOperation({
  id: 'sms.send',
  path: '/v1/sms/send',
  resource: 'sms',
  methods: ['POST'],
  summary: 'Send one message',
  success: 201,
  location: '/v1/sms/view',
  idempotent: true,
  schema: { body: SendBodySchema, response: Type.Array(MessageRecordSchema) },
  handler: (deps) => {
    const toRecord = messageRecord(deps.time);
    const messaging = messagingDeps(deps);
    return async (ctx) => [toRecord(await sendMessage(messaging, ctx.accountId, ctx.body()))];
  },
});
