import { createAccountKey } from '../../../domain/account-admin.ts';
import { IdQuery } from '../../../records/common.ts';
import { KeyBodySchema, KeyWithSecretRecordSchema, keyRecord } from '../../../records/keys.ts';
import { defineOperation } from '../../operation.ts';
import { accountAdminDeps } from './deps.ts';

/**
 * docs/API.md §16 `POST /v1/subaccounts/keys?id=` (`Name`, `Scopes`, as keys/create): 201 with a key
 * of the sub-account and its `Secret`, shown this once. No Location: the key is the sub-account's,
 * seen through its own keys/view.
 */
export const subaccountsKeys = defineOperation({
  id: 'subaccounts.keys',
  path: '/v1/subaccounts/keys',
  resource: 'subaccounts',
  methods: ['POST'],
  summary: 'Create a key of a sub-account (the reply alone shows its Secret)',
  success: 201,
  idempotent: true,
  schema: { query: IdQuery, body: KeyBodySchema, response: KeyWithSecretRecordSchema },
  handler: (deps) => {
    const toRecord = keyRecord(deps.time);
    return async (ctx) => {
      const { row, secret } = await createAccountKey(
        accountAdminDeps(deps, ctx.request),
        ctx.accountId,
        ctx.principal,
        ctx.id(),
        ctx.body(),
      );
      return { ...toRecord(row), Secret: secret };
    };
  },
});
