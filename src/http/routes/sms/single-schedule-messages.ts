import { Type } from '@sinclair/typebox';
import { ScheduledMessageRecordSchema } from '../../../domain/records.ts';
import * as messages from '../../../store/repositories/messages.ts';
import { resolvePage, setPaginationHeaders } from '../../serializers/pagination.ts';
import type { Operation } from '../types.ts';

/** Spec "GET /v1/sms/single-schedule-messages": scheduled single messages, paginated. */
export const singleScheduleMessages: Operation = {
  path: '/v1/sms/single-schedule-messages',
  methods: ['GET'],
  register(app, { store, mappers }) {
    app.get(this.path, { schema: { response: { 200: Type.Array(ScheduledMessageRecordSchema) } } }, async (request, reply) => {
      const page = resolvePage(request, await messages.countScheduledMessages(store.db, request.accountId));
      const rows = await messages.listScheduledMessages(store.db, request.accountId, page.size, page.offset);
      setPaginationHeaders(request, reply, page);
      return rows.map(mappers.scheduledMessage);
    });
  },
};
