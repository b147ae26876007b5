import { rollKey } from '../../../domain/keys.ts';
import { IdQuery } from '../../../records/common.ts';
import { KeyRollBodySchema, KeyWithSecretRecordSchema, keyRecord } from '../../../records/keys.ts';
import { defineOperation } from '../../operation.ts';
import { keyDeps } from './deps.ts';

/**
 * docs/API.md §15.2 `POST /v1/keys/roll?id=` (`GraceSeconds`, 0 to 604800, default 86400): a new
 * `Secret` for the key; the old one keeps working for the grace, then stops. 200 with the record
 * and the new `Secret`.
 */
export const keysRoll = defineOperation({
  id: 'keys.roll',
  path: '/v1/keys/roll',
  resource: 'keys',
  methods: ['POST'],
  summary: 'Roll a key: a new Secret, the old one working for GraceSeconds more',
  success: 200,
  idempotent: true,
  schema: { query: IdQuery, body: KeyRollBodySchema, response: KeyWithSecretRecordSchema },
  handler: (deps) => {
    const toRecord = keyRecord(deps.time);
    const d = keyDeps(deps);
    return async (ctx) => {
      const { row, secret } = await rollKey(d, ctx.principal, ctx.id(), ctx.body());
      return { ...toRecord(row), Secret: secret };
    };
  },
});
