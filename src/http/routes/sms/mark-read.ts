import { Type } from '@sinclair/typebox';
import { markConversationRead } from '../../../domain/conversations.ts';
import { defineOperation } from '../../operation.ts';

/**
 * sms/mark-read?MobilePhone= (API.md §14.4.1): 204; the conversation with that number (any common
 * format) has no unread message until the next inbound one. A number with no conversation: 204,
 * nothing changes. 422 `Mobile Phone cannot be blank.` / `Mobile Phone is invalid.`. Honours
 * Idempotency-Key (API.md §7). A body, if sent, is ignored.
 */
export const smsMarkRead = defineOperation({
  id: 'sms.mark-read',
  path: '/v1/sms/mark-read',
  resource: 'sms',
  methods: ['POST'],
  summary: 'Mark a conversation read',
  success: 204,
  idempotent: true,
  body: { kind: 'none' },
  schema: {
    query: Type.Object({ MobilePhone: Type.String({ description: 'the other party of the conversation, any common format' }) }),
  },
  handler: ({ store, config }) => {
    return async (ctx) => {
      await markConversationRead(store, ctx.accountId, ctx.query('MobilePhone'), config.defaultRegion);
    };
  },
});
