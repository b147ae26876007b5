import { checkKeyword } from '../../../domain/keywords.ts';
import { KeywordAvailabilitySchema, KeywordCheckQuery, type KeywordAvailabilityRecord } from '../../../records/keywords.ts';
import { defineOperation } from '../../operation.ts';

/**
 * API.md §10.5 `keyword/check?Keyword=&Number=`: whether the keyword is free on that number in
 * every account. Bad input gives reserve's 422; a taken keyword is `Available: false`, not an error.
 */
export const keywordCheck = defineOperation({
  id: 'keyword.check',
  path: '/v1/keyword/check',
  resource: 'keywords',
  methods: ['GET'],
  summary: 'Check whether a keyword can be reserved on a number',
  success: 200,
  schema: { query: KeywordCheckQuery, response: KeywordAvailabilitySchema },
  handler:
    ({ store }) =>
    async (ctx): Promise<KeywordAvailabilityRecord> => {
      const r = await checkKeyword(store, ctx.accountId, { Keyword: ctx.query('Keyword'), Number: ctx.query('Number') });
      return { Keyword: r.keyword, Number: r.number, Available: r.available };
    },
});
