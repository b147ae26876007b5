import { Type } from '@sinclair/typebox';
import { messageList, readMessageFilters } from '../../../domain/messages.ts';
import { PageQuery } from '../../../records/common.ts';
import { MessageRecordSchema, messageRecord } from '../../../records/messages.ts';
import { defineOperation } from '../../operation.ts';

/**
 * sms/index (API.md §10.6): the message log, newest first (Id descending), paginated
 * (API.md §5), optionally filtered by `Direction`, `Status_Id`, `MobilePhone` (any format)
 * and `BatchId` (422 on a bad value; another account's batch: an empty list).
 */
export const smsIndex = defineOperation({
  id: 'sms.index',
  path: '/v1/sms/index',
  resource: 'sms',
  methods: ['GET'],
  summary: 'List the message log',
  success: 200,
  schema: {
    query: Type.Composite([
      PageQuery,
      Type.Object({
        Direction: Type.Optional(Type.String({ description: 'Outbound or Inbound' })),
        Status_Id: Type.Optional(Type.String({ description: '1 Queued … 7 Received' })),
        MobilePhone: Type.Optional(Type.String({ description: 'the other party, any common format' })),
        BatchId: Type.Optional(Type.String({ description: 'messages of one send-group batch' })),
      }),
    ]),
    response: Type.Array(MessageRecordSchema),
  },
  handler: ({ store, time, config }) => {
    const toRecord = messageRecord(time);
    return async (ctx) => {
      const filters = readMessageFilters(
        {
          Direction: ctx.query('Direction'),
          Status_Id: ctx.query('Status_Id'),
          MobilePhone: ctx.query('MobilePhone'),
          BatchId: ctx.query('BatchId'),
        },
        config.defaultRegion,
      );
      const list = await messageList(store, ctx.accountId, filters);
      return ctx.paginate(list.total, list.fetch, toRecord);
    };
  },
});
