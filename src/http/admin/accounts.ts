import { Type } from '@sinclair/typebox';
import {
  changeAccountCredits,
  closeAccount,
  countAccounts,
  createAccount,
  createAccountKey,
  createAccountUser,
  listAccounts,
  updateAccount,
} from '../../domain/account-admin.ts';
import { AccountBodySchema, AccountRecordSchema, AmountBodySchema, accountRecord } from '../../records/accounts.ts';
import { IdQuery, PageQuery } from '../../records/common.ts';
import { KeyBodySchema, KeyWithSecretRecordSchema, keyRecord } from '../../records/keys.ts';
import { InvitedUserRecordSchema, UserBodySchema, userRecord } from '../../records/users.ts';
import { accountAdminDeps } from '../routes/subaccounts/deps.ts';
import type { AccountAdminDeps } from '../../domain/account-admin.ts';
import type { Input } from '../../domain/validation.ts';
import type { OperationContext, RouteDeps } from '../operation.ts';
import { accountOf, defineAdminOperation, operatorWrite } from './operation.ts';

/**
 * An operator's write on the account `?id=`: the `id`, then the body (docs/API.md §1.5: a missing or
 * bad `id`, then bad JSON, are 400 before any 404), then the account (404), then `run` with the
 * account rules' deps on the audited store, so the write lands in that account's audit log.
 */
async function onAccount<T>(deps: RouteDeps, ctx: OperationContext, run: (d: AccountAdminDeps, body: Input) => Promise<T>): Promise<T> {
  ctx.id();
  const body = ctx.body();
  const account = await accountOf(deps, ctx);
  return operatorWrite(deps, ctx, { account: account.id }, (d) => run(accountAdminDeps(d, ctx.request), body));
}

/**
 * `/admin/v1/accounts/…` (docs/API.md §16.4): every account, sub-accounts and closed ones
 * included, on the account rules the sub-accounts use (src/domain/account-admin.ts) with the
 * operator's scope, `undefined`: every account. Writes are in the touched account's audit log as
 * `operator:{Id}:{Name}`.
 */

/** `GET /admin/v1/accounts/index`: every account by Id ascending, paginated. */
export const adminAccountsIndex = defineAdminOperation({
  id: 'admin.accounts.index',
  path: '/admin/v1/accounts/index',
  methods: ['GET'],
  summary: 'List every account (sub-accounts and closed ones included)',
  success: 200,
  schema: { query: PageQuery, response: Type.Array(AccountRecordSchema) },
  handler: (deps) => {
    const toRecord = accountRecord(deps.time);
    return async (ctx) =>
      ctx.paginate(await countAccounts(deps, undefined), (limit, offset) => listAccounts(deps, undefined, limit, offset), toRecord);
  },
});

/** `GET /admin/v1/accounts/view?id=`: one account. 404 `Object not found: {id}`. */
export const adminAccountsView = defineAdminOperation({
  id: 'admin.accounts.view',
  path: '/admin/v1/accounts/view',
  methods: ['GET'],
  summary: 'View an account',
  success: 200,
  schema: { query: IdQuery, response: AccountRecordSchema },
  handler: (deps) => {
    const toRecord = accountRecord(deps.time);
    return async (ctx) => toRecord(await accountOf(deps, ctx));
  },
});

/**
 * `POST /admin/v1/accounts/create` (`Name`, `MaxPerSecond`, `MaxPerDay`): a top-level account with
 * no credits; 201 with `Location` to accounts/view.
 */
export const adminAccountsCreate = defineAdminOperation({
  id: 'admin.accounts.create',
  path: '/admin/v1/accounts/create',
  methods: ['POST'],
  summary: 'Create a top-level account',
  success: 201,
  location: '/admin/v1/accounts/view',
  schema: { body: AccountBodySchema, response: AccountRecordSchema },
  handler: (deps) => {
    const toRecord = accountRecord(deps.time);
    // The entry goes into the new account's log, in the transaction that creates it.
    return async (ctx) =>
      operatorWrite(deps, ctx, { account: 'created' }, async (d) =>
        toRecord(await createAccount(accountAdminDeps(d, ctx.request), null, ctx.body())),
      );
  },
});

/** `PUT|PATCH /admin/v1/accounts/update?id=` (`Name`, `Status` `active` or `suspended`, `MaxPerSecond`, `MaxPerDay`). */
export const adminAccountsUpdate = defineAdminOperation({
  id: 'admin.accounts.update',
  path: '/admin/v1/accounts/update',
  methods: ['PUT', 'PATCH'],
  summary: 'Update or suspend an account',
  success: 200,
  schema: { query: IdQuery, body: AccountBodySchema, response: AccountRecordSchema },
  handler: (deps) => {
    const toRecord = accountRecord(deps.time);
    return (ctx) => onAccount(deps, ctx, async (d, body) => toRecord(await updateAccount(d, undefined, ctx.id(), body)));
  },
});

/**
 * `DELETE /admin/v1/accounts/delete?id=`: closes the account and its sub-accounts (204): Queued
 * messages Rejected `ACCOUNT_CLOSED` and scheduled ones cancelled, all refunded; a sub-account's
 * balance back to its parent (a top-level account keeps its balance); keys and sessions end.
 */
export const adminAccountsDelete = defineAdminOperation({
  id: 'admin.accounts.delete',
  path: '/admin/v1/accounts/delete',
  methods: ['DELETE'],
  summary: 'Close an account',
  success: 204,
  schema: { query: IdQuery },
  handler: (deps) => async (ctx) => {
    const account = await accountOf(deps, ctx);
    await operatorWrite(deps, ctx, { account: account.id }, (d) => closeAccount(accountAdminDeps(d, ctx.request), undefined, ctx.id()));
  },
});

/**
 * `POST /admin/v1/accounts/credits?id=` (`Amount`, `Note`): a positive Amount is a `topup` ledger
 * entry, a negative one an `adjustment` that never takes the balance below zero; 200 with the account.
 */
export const adminAccountsCredits = defineAdminOperation({
  id: 'admin.accounts.credits',
  path: '/admin/v1/accounts/credits',
  methods: ['POST'],
  summary: "Top up or adjust an account's credits",
  success: 200,
  schema: { query: IdQuery, body: AmountBodySchema, response: AccountRecordSchema },
  handler: (deps) => {
    const toRecord = accountRecord(deps.time);
    return (ctx) => onAccount(deps, ctx, async (d, body) => toRecord(await changeAccountCredits(d, undefined, ctx.id(), body)));
  },
});

/** `POST /admin/v1/accounts/keys?id=` (`Name`, `Scopes`, …, as keys/create): 201 with a key of the account and its `Secret`. */
export const adminAccountsKeys = defineAdminOperation({
  id: 'admin.accounts.keys',
  path: '/admin/v1/accounts/keys',
  methods: ['POST'],
  summary: 'Create a key of an account (the reply alone shows its Secret)',
  success: 201,
  schema: { query: IdQuery, body: KeyBodySchema, response: KeyWithSecretRecordSchema },
  handler: (deps) => {
    const toRecord = keyRecord(deps.time);
    return (ctx) =>
      onAccount(deps, ctx, async (d, body) => {
        const { row, secret } = await createAccountKey(d, undefined, ctx.principal, ctx.id(), body);
        return { ...toRecord(row), Secret: secret };
      });
  },
});

/** `POST /admin/v1/accounts/users?id=` (`Email`, `Name`, `Role`, default `owner`): 201 with the person invited and `InviteUrl`. */
export const adminAccountsUsers = defineAdminOperation({
  id: 'admin.accounts.users',
  path: '/admin/v1/accounts/users',
  methods: ['POST'],
  summary: 'Invite a person to an account (the reply adds InviteUrl)',
  success: 201,
  schema: { query: IdQuery, body: UserBodySchema, response: InvitedUserRecordSchema },
  handler: (deps) => {
    const toRecord = userRecord(deps.time);
    return (ctx) =>
      onAccount(deps, ctx, async (d, body) => {
        const { row, inviteUrl } = await createAccountUser(d, undefined, ctx.principal, ctx.id(), body);
        return { ...toRecord(row), InviteUrl: inviteUrl };
      });
  },
});

/** `/admin/v1/accounts/…`, in the order of the docs. */
export const adminAccounts = [
  adminAccountsIndex,
  adminAccountsView,
  adminAccountsCreate,
  adminAccountsUpdate,
  adminAccountsDelete,
  adminAccountsCredits,
  adminAccountsKeys,
  adminAccountsUsers,
];
