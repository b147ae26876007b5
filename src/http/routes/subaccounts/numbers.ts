import { moveAccountNumber } from '../../../domain/account-admin.ts';
import { NumberBodySchema } from '../../../records/accounts.ts';
import { IdQuery } from '../../../records/common.ts';
import { NumberRecordSchema, numberRecord } from '../../../records/numbers.ts';
import { defineOperation, type OperationContext } from '../../operation.ts';
import { accountAdminDeps } from './deps.ts';

/** `Number` from the body, else from the query (a DELETE client may send no body). */
function numberInput(ctx: OperationContext): Record<string, unknown> {
  const body = ctx.body();
  if (Object.hasOwn(body, 'Number')) return body;
  const q = ctx.query('Number');
  return q === undefined ? body : { Number: q };
}

/**
 * docs/API.md §16 `POST /v1/subaccounts/numbers?id=` (`Number`): moves an Active number of the
 * account to the sub-account; 200 with the Number record as the sub-account's numbers/index shows it.
 */
export const subaccountsNumbersAdd = defineOperation({
  id: 'subaccounts.numbers',
  path: '/v1/subaccounts/numbers',
  resource: 'subaccounts',
  methods: ['POST'],
  summary: 'Move a number to a sub-account',
  success: 200,
  idempotent: true,
  schema: { query: IdQuery, body: NumberBodySchema, response: NumberRecordSchema },
  handler: (deps) => {
    const toRecord = numberRecord(deps.time);
    return async (ctx) => {
      const moved = await moveAccountNumber(accountAdminDeps(deps, ctx.request), ctx.accountId, ctx.id(), numberInput(ctx), false);
      return toRecord({ number: moved.digits, status_id: moved.statusId, blocked_at: null });
    };
  },
});

/** docs/API.md §16 `DELETE /v1/subaccounts/numbers?id=` (`Number`): moves the number back to the account (204). */
export const subaccountsNumbersRemove = defineOperation({
  id: 'subaccounts.numbers-remove',
  path: '/v1/subaccounts/numbers',
  resource: 'subaccounts',
  methods: ['DELETE'],
  summary: 'Move a number back from a sub-account',
  success: 204,
  body: { kind: 'json-or-form' },
  schema: { query: IdQuery, body: NumberBodySchema },
  handler: (deps) => async (ctx) => {
    await moveAccountNumber(accountAdminDeps(deps, ctx.request), ctx.accountId, ctx.id(), numberInput(ctx), true);
  },
});
