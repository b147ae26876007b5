import { previewMessage } from '../../../domain/messages.ts';
import { SendBodySchema } from '../../../records/messages.ts';
import { SmsPreviewRecordSchema, smsPreviewRecord } from '../../../records/preview.ts';
import { defineOperation } from '../../operation.ts';
import { messagingDeps } from './messaging.ts';

/**
 * sms/preview (API.md §14.3.2): the body of sms/send, validated as send validates it (the same
 * 422s in the same order, `Not enough credits` included), answered with the text as it would be
 * sent and its cost; nothing is stored or debited. 200, the SmsPreview record. A POST, so it honours
 * Idempotency-Key (API.md §7) as send does.
 */
export const smsPreview = defineOperation({
  id: 'sms.preview',
  path: '/v1/sms/preview',
  resource: 'sms',
  methods: ['POST'],
  summary: 'Preview one message: its personalised text, encoding, segments and credits',
  success: 200,
  idempotent: true,
  schema: { body: SendBodySchema, response: SmsPreviewRecordSchema },
  handler: (deps) => {
    const messaging = messagingDeps(deps);
    return async (ctx) => smsPreviewRecord(await previewMessage(messaging, ctx.accountId, ctx.body()));
  },
});
