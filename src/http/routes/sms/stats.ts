import { Type } from '@sinclair/typebox';
import { messageStats, readStatsQuery } from '../../../domain/message-stats.ts';
import { systemClock } from '../../../lib/time.ts';
import { StatsBucketRecordSchema, statsBucketRecord } from '../../../records/message-stats.ts';
import { defineOperation } from '../../operation.ts';

/**
 * sms/stats (API.md §10.9): the account's messages per hour or per day of the service's time
 * zone, every bucket from the one holding `from` to the one holding `to` present, by time
 * ascending; not paginated. 422 on a bad `from`, `to` or `interval`, or more than 366 buckets.
 */
export const smsStats = defineOperation({
  id: 'sms.stats',
  path: '/v1/sms/stats',
  resource: 'sms',
  methods: ['GET'],
  summary: 'Count the messages per hour or per day',
  success: 200,
  schema: {
    query: Type.Object({
      from: Type.Optional(
        Type.String({ description: 'YYYY-MM-DD HH:MM:SS in the service time zone: the first bucket holds it (default: to less 7 days)' }),
      ),
      to: Type.Optional(
        Type.String({ description: 'YYYY-MM-DD HH:MM:SS in the service time zone: the last bucket holds it (default: now)' }),
      ),
      interval: Type.Optional(Type.String({ description: 'hour or day (default day)' })),
    }),
    response: Type.Array(StatsBucketRecordSchema),
  },
  handler: ({ store, time, config, clock }) => {
    const toRecord = statsBucketRecord(time);
    const now = clock ?? systemClock;
    return async (ctx) => {
      const query = readStatsQuery(
        { from: ctx.query('from'), to: ctx.query('to'), interval: ctx.query('interval') },
        config.timeZone,
        now.nowSeconds(),
      );
      return (await messageStats(store, ctx.accountId, query)).map(toRecord);
    };
  },
});
