import { Type } from '@sinclair/typebox';
import { countKeys, listKeys } from '../../../domain/keys.ts';
import { PageQuery } from '../../../records/common.ts';
import { KeyRecordSchema, keyRecord } from '../../../records/keys.ts';
import { defineOperation } from '../../operation.ts';
import { keyDeps } from './deps.ts';

/** docs/API.md §15.2 `GET /v1/keys/index`: the account's live keys by Id ascending, paginated (no secrets). */
export const keysIndex = defineOperation({
  id: 'keys.index',
  path: '/v1/keys/index',
  resource: 'keys',
  methods: ['GET'],
  summary: "List the account's keys",
  success: 200,
  schema: { query: PageQuery, response: Type.Array(KeyRecordSchema) },
  handler: (deps) => {
    const toRecord = keyRecord(deps.time);
    const d = keyDeps(deps);
    return async (ctx) =>
      ctx.paginate(await countKeys(d, ctx.accountId), (limit, offset) => listKeys(d, ctx.accountId, limit, offset), toRecord);
  },
});
