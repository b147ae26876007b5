import { Type } from '@sinclair/typebox';
import { conversationList } from '../../../domain/conversations.ts';
import { PageQuery } from '../../../records/common.ts';
import { ConversationRecordSchema, conversationRecord } from '../../../records/conversations.ts';
import { defineOperation } from '../../operation.ts';

/**
 * sms/conversations (API.md §14.4.1): one Conversation record per phone number the account has
 * sent to or received from (with the account number it uses, API.md §17), newest thread first
 * (its last message's Id descending), paginated
 * (API.md §5). No filter: nothing to reject but the page parameters, which are clamped.
 */
export const smsConversations = defineOperation({
  id: 'sms.conversations',
  path: '/v1/sms/conversations',
  resource: 'sms',
  methods: ['GET'],
  summary: 'List the conversations, newest first',
  success: 200,
  schema: { query: PageQuery, response: Type.Array(ConversationRecordSchema) },
  handler: ({ store, time }) => {
    const toRecord = conversationRecord(time);
    return async (ctx) => {
      const list = await conversationList(store, ctx.accountId);
      return ctx.paginate(list.total, list.fetch, toRecord);
    };
  },
});
