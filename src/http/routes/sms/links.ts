import { Type } from '@sinclair/typebox';
import { linksPage } from '../../../domain/links.ts';
import { IdQuery, PageQuery } from '../../../records/common.ts';
import { TrackedLinkRecordSchema, trackedLinkRecord } from '../../../records/links.ts';
import { defineOperation } from '../../operation.ts';

/**
 * docs/API.md §14.4.3 `GET /v1/sms/links?id=`: the tracked links of a message of the account, by
 * id ascending (the order of the URLs in its text), paginated; 404 `Object not found: {id}`.
 */
export const smsLinks = defineOperation({
  id: 'sms.links',
  path: '/v1/sms/links',
  resource: 'sms',
  methods: ['GET'],
  summary: "A message's tracked links with their clicks",
  success: 200,
  schema: { query: Type.Object({ ...IdQuery.properties, ...PageQuery.properties }), response: Type.Array(TrackedLinkRecordSchema) },
  handler: ({ store, time }) => {
    const toRecord = trackedLinkRecord(time);
    return async (ctx) => {
      const { total, fetch } = await linksPage(store, ctx.accountId, ctx.id());
      return ctx.paginate(total, fetch, toRecord);
    };
  },
});
