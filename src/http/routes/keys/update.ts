import { updateKey } from '../../../domain/keys.ts';
import { IdQuery } from '../../../records/common.ts';
import { KeyBodySchema, KeyRecordSchema, keyRecord } from '../../../records/keys.ts';
import { defineOperation } from '../../operation.ts';
import { keyDeps } from './deps.ts';

/** docs/API.md §15.2 `PUT|PATCH /v1/keys/update?id=`: Name, Scopes, AllowedIps, DateExpires; only the fields sent change. */
export const keysUpdate = defineOperation({
  id: 'keys.update',
  path: '/v1/keys/update',
  resource: 'keys',
  methods: ['PUT', 'PATCH'],
  summary: 'Change a key',
  success: 200,
  schema: { query: IdQuery, body: KeyBodySchema, response: KeyRecordSchema },
  handler: (deps) => {
    const toRecord = keyRecord(deps.time);
    const d = keyDeps(deps);
    return async (ctx) => toRecord(await updateKey(d, ctx.principal, ctx.id(), ctx.body()));
  },
});
