import { deleteKey } from '../../../domain/keys.ts';
import { IdQuery } from '../../../records/common.ts';
import { defineOperation } from '../../operation.ts';
import { keyDeps } from './deps.ts';

/** docs/API.md §15.2 `DELETE /v1/keys/delete?id=`: 204; the key stops working at once, on every instance. */
export const keysDelete = defineOperation({
  id: 'keys.delete',
  path: '/v1/keys/delete',
  resource: 'keys',
  methods: ['DELETE'],
  summary: 'Delete (revoke) a key',
  success: 204,
  schema: { query: IdQuery },
  handler: (deps) => {
    const d = keyDeps(deps);
    return async (ctx) => {
      await deleteKey(d, ctx.accountId, ctx.id());
    };
  },
});
