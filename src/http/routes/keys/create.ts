import { createKey } from '../../../domain/keys.ts';
import { KeyBodySchema, KeyWithSecretRecordSchema, keyRecord } from '../../../records/keys.ts';
import { defineOperation } from '../../operation.ts';
import { keyDeps } from './deps.ts';

/**
 * docs/API.md §15.2 `POST /v1/keys/create`: 201 with `Location` to keys/view. The reply alone
 * carries the `Secret` (its last field); only its hash is kept.
 */
export const keysCreate = defineOperation({
  id: 'keys.create',
  path: '/v1/keys/create',
  resource: 'keys',
  methods: ['POST'],
  summary: 'Create a key (the reply alone shows its Secret)',
  success: 201,
  location: '/v1/keys/view',
  idempotent: true,
  schema: { body: KeyBodySchema, response: KeyWithSecretRecordSchema },
  handler: (deps) => {
    const toRecord = keyRecord(deps.time);
    const d = keyDeps(deps);
    return async (ctx) => {
      const { row, secret } = await createKey(d, ctx.principal, ctx.body());
      return { ...toRecord(row), Secret: secret };
    };
  },
});
