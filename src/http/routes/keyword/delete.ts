import { deleteKeyword } from '../../../domain/keywords.ts';
import { IdQuery } from '../../../records/common.ts';
import { defineOperation } from '../../operation.ts';

/** API.md §10.5 `keyword/delete?id=`: releases the keyword (204); groups that pointed to it get KeywordId 0. */
export const keywordDelete = defineOperation({
  id: 'keyword.delete',
  path: '/v1/keyword/delete',
  resource: 'keywords',
  methods: ['DELETE'],
  summary: 'Release a keyword reservation',
  success: 204,
  schema: { query: IdQuery },
  handler:
    ({ store }) =>
    async (ctx) => {
      await deleteKeyword(store, ctx.accountId, ctx.id());
    },
});
