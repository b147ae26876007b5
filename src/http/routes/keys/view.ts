import { viewKey } from '../../../domain/keys.ts';
import { IdQuery } from '../../../records/common.ts';
import { KeyRecordSchema, keyRecord } from '../../../records/keys.ts';
import { defineOperation } from '../../operation.ts';
import { keyDeps } from './deps.ts';

/** docs/API.md §15.2 `GET /v1/keys/view?id=`: one key (never its secret). */
export const keysView = defineOperation({
  id: 'keys.view',
  path: '/v1/keys/view',
  resource: 'keys',
  methods: ['GET'],
  summary: 'View a key',
  success: 200,
  schema: { query: IdQuery, response: KeyRecordSchema },
  handler: (deps) => {
    const toRecord = keyRecord(deps.time);
    const d = keyDeps(deps);
    return async (ctx) => toRecord(await viewKey(d, ctx.accountId, ctx.id()));
  },
});
