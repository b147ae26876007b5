import { inTransaction, type Store } from '../store/db.ts';
import * as repo from '../store/repositories/account-admin.ts';
import { changeCredits, noteCredentialChange } from '../store/repositories/accounts.ts';
import { refundCredits } from '../store/repositories/credits.ts';
import { findNumber } from '../store/repositories/numbers.ts';
import { lockCredits } from '../store/repositories/scheduled.ts';
import type { Clock } from '../lib/time.ts';
import { NUMBER_STATUS_ACTIVE } from '../records/statuses.ts';
import { ValidationFailedError, type FieldError } from './errors.ts';
import { loadOr404 } from './find.ts';
import { createKey } from './keys.ts';
import { readTimeRange } from './message-stats.ts';
import { normalisePhone } from './phone.ts';
import type { Principal } from './principal.ts';
import { createUser } from './users.ts';
import { defineRules, formatCount, isBlank, isEmpty, messages, validate, type Input } from './validation.ts';
import { emitMessageEvents } from './webhooks.ts';
import type { CountryCode } from 'libphonenumber-js';

/**
 * Accounts managed as records (docs/API.md §16): a parent's sub-accounts (`/v1/subaccounts/…`),
 * every account for the operator (`/admin/v1/accounts/…`), and the `msgsvc` commands. All three
 * call these functions, so they can never disagree.
 *
 * A scope says which accounts a caller may reach: a parent's id (its sub-accounts only), `null`
 * (top-level accounts only) or `undefined` (every account, the operator). Anything outside the
 * scope is 404 `Object not found: {id}`, never 403, so no caller learns that it exists.
 */

export type AccountRecordRow = repo.AccountRecordRow;
export type UsageRow = repo.UsageRow;
export type AccountScope = repo.AccountScope;

export interface AccountAdminDeps {
  store: Store;
  clock: Clock;
  /** The service's time zone (MSGSVC_TIMEZONE): `usage`'s `from` and `to` are wall-clock times there. */
  timeZone: string;
  /** `{PUBLIC_URL}` or the request's own origin: where invite links point. */
  baseUrl: string;
  /** The region of numbers written without a country code (MSGSVC_DEFAULT_REGION). */
  region: CountryCode;
}

/** The statuses of §16; `closed` is reached only by closing (`delete`). */
export const ACCOUNT_STATUSES = ['active', 'suspended', 'closed'] as const;
export type AccountStatus = (typeof ACCOUNT_STATUSES)[number];

/** The largest MaxPerSecond (messages per second) and MaxPerDay (messages per day) accepted. */
export const MAX_PER_SECOND_LIMIT = 100_000;
export const MAX_PER_DAY_LIMIT = 2_147_483_647;
/** The largest credit amount one transfer or top-up may move (credits). */
export const MAX_CREDIT_AMOUNT = 1_000_000_000_000;

const CREATE_RULES = defineRules([
  { field: 'Name', rule: 'required' },
  { field: 'Name', rule: 'string', min: 1, max: 255 },
  { field: 'Credits', rule: 'integer', min: 0, max: MAX_CREDIT_AMOUNT },
  { field: 'MaxPerSecond', rule: 'integer', min: 0, max: MAX_PER_SECOND_LIMIT },
  { field: 'MaxPerDay', rule: 'integer', min: 0, max: MAX_PER_DAY_LIMIT },
]);

/** update's rules: `Name`, then `Status` (checked by updateAccount), then the quotas, as §16 lists them. */
const NAME_RULES = CREATE_RULES.filter((r) => r.field === 'Name');
const QUOTA_RULES = CREATE_RULES.filter((r) => r.field === 'MaxPerSecond' || r.field === 'MaxPerDay');
/** A top-level account's create: no `Credits` (it has no parent to take them from). */
const TOP_LEVEL_RULES = CREATE_RULES.filter((r) => r.field !== 'Credits');

const AMOUNT_RULES = defineRules([
  { field: 'Amount', rule: 'required' },
  { field: 'Amount', rule: 'integer', min: -MAX_CREDIT_AMOUNT, max: MAX_CREDIT_AMOUNT },
]);

/** The 422 of a number move while the giver has keywords reserved on the number (§16.5). */
export const NUMBER_HAS_KEYWORDS = 'Number has keywords reserved on it; delete them first.';

/** `Not enough credits: {n} needed, {available} available.` (§16). */
export function notEnoughCredits(field: string, needed: number, available: number): FieldError {
  return { field, message: `Not enough credits: ${formatCount(needed)} needed, ${formatCount(available)} available.` };
}

/** @throws NotFoundError `Object not found: {id}` unless the account is in `scope`. */
export function viewAccount(deps: Pick<AccountAdminDeps, 'store'>, scope: AccountScope, id: string): Promise<AccountRecordRow> {
  return loadOr404(id, (n) => repo.findAccountRecord(deps.store.db, n, scope));
}

export function countAccounts(deps: Pick<AccountAdminDeps, 'store'>, scope: AccountScope): Promise<number> {
  return repo.countAccountRecords(deps.store.db, scope);
}

/** The accounts in `scope` by Id ascending (closed ones included: their data is kept). */
export function listAccounts(
  deps: Pick<AccountAdminDeps, 'store'>,
  scope: AccountScope,
  limit: number,
  offset: number,
): Promise<AccountRecordRow[]> {
  return repo.listAccountRecords(deps.store.db, scope, limit, offset);
}

/**
 * Creates an account: a sub-account of `parentId` (`subaccounts/create`), or a top-level account
 * (`parentId` null: the operator's `accounts/create`, `msgsvc accounts create`).
 * Fields: `Name` (required, 1 to 255 characters), `MaxPerSecond`, `MaxPerDay` (default 0: no
 * limit), and for a sub-account `Credits` (default 0), moved from the parent in the same
 * transaction (its `transfer_out` and the child's `transfer_in`).
 * @throws ValidationFailedError `Name cannot be blank.`, `… must be an integer.`, `… must be no
 *   less than 0.`, and `Not enough credits: {n} needed, {available} available.` on `Credits`.
 */
export async function createAccount(deps: AccountAdminDeps, parentId: number | null, input: Input): Promise<AccountRecordRow> {
  // The values as sent, never trimmed (docs/API.md §4.4: a Name of spaces is blank, a no-break
  // space is not; lengths count before trimming; `" 1"` is no integer), from the body itself, so a
  // JSON integer past 2^53 keeps its source text.
  const checked = validate(input, parentId !== null ? CREATE_RULES : TOP_LEVEL_RULES);
  if (checked.errors.length > 0) throw new ValidationFailedError(checked.errors);
  const v = checked.values;
  const credits = v.Credits ?? 0;
  const now = deps.clock.nowSeconds();
  return inTransaction(
    deps.store,
    async (tx) => {
      const id = await repo.insertAccount(
        tx,
        { name: v.Name!, parentId, maxPerSecond: v.MaxPerSecond ?? 0, maxPerDay: v.MaxPerDay ?? 0 },
        now,
      );
      if (parentId !== null && credits > 0) await transfer(tx, parentId, id, credits, now, 'Credits');
      return (await repo.findAccountRecord(tx, id, undefined))!;
    },
    { immediate: true },
  );
}

/**
 * Moves `amount` (> 0) credits from `from` to `to` in the caller's transaction: the giver's
 * `transfer_out` and the receiver's `transfer_in`, each referring to the other (`account:{Id}`).
 * @throws ValidationFailedError `Not enough credits: …` on `field` when `from` holds fewer.
 */
async function transfer(tx: Parameters<typeof repo.lockBalances>[0], from: number, to: number, amount: number, now: number, field: string) {
  const balances = await repo.lockBalances(tx, [from, to]);
  const available = balances.get(from) ?? 0;
  if (available < amount) throw new ValidationFailedError([notEnoughCredits(field, amount, available)]);
  await changeCredits(tx, from, -amount, 'add', now, { type: 'transfer_out', reference: `account:${to}` });
  await changeCredits(tx, to, amount, 'add', now, { type: 'transfer_in', reference: `account:${from}` });
}

/**
 * `subaccounts/update?id=` and the operator's `accounts/update?id=`: `Name`, `Status` (`active` or
 * `suspended`), `MaxPerSecond`, `MaxPerDay`; only the fields sent change.
 * A closed account cannot change status: `Status is invalid.`
 * @throws NotFoundError outside `scope`; ValidationFailedError.
 */
export async function updateAccount(deps: AccountAdminDeps, scope: AccountScope, id: string, input: Input): Promise<AccountRecordRow> {
  const existing = await viewAccount(deps, scope, id);
  // Name is required only when sent; the values as sent (see createAccount).
  const named = validate(
    input,
    NAME_RULES.filter((r) => r.rule !== 'required' || Object.hasOwn(input, 'Name')),
  );
  const quotas = validate(input, QUOTA_RULES);
  const errors = [...named.errors];
  let status: string | undefined;
  if (Object.hasOwn(input, 'Status')) {
    if (input.Status !== 'active' && input.Status !== 'suspended') errors.push({ field: 'Status', message: messages.invalid('Status') });
    else if (existing.status === 'closed') errors.push({ field: 'Status', message: messages.invalid('Status') });
    else status = input.Status;
  }
  errors.push(...quotas.errors);
  if (errors.length > 0) throw new ValidationFailedError(errors);
  const change = {
    ...(named.values.Name !== undefined && named.values.Name !== existing.name ? { name: named.values.Name } : {}),
    ...(status !== undefined && status !== existing.status ? { status } : {}),
    ...(quotas.values.MaxPerSecond !== undefined && quotas.values.MaxPerSecond !== existing.max_per_second
      ? { maxPerSecond: quotas.values.MaxPerSecond }
      : {}),
    ...(quotas.values.MaxPerDay !== undefined && quotas.values.MaxPerDay !== existing.max_per_day
      ? { maxPerDay: quotas.values.MaxPerDay }
      : {}),
  };
  // The stored values again save nothing: DateUpdated stays (docs/API.md §4.4, as every update).
  if (Object.keys(change).length === 0) return existing;
  const now = deps.clock.nowSeconds();
  return inTransaction(deps.store, async (tx) => {
    await repo.updateAccount(tx, existing.id, change, now);
    // A status change ends or restores what keys and sessions may do: cached keys are dropped.
    if (status !== undefined && status !== existing.status) noteCredentialChange();
    return (await repo.findAccountRecord(tx, existing.id, undefined))!;
  });
}

/**
 * Closes an account (`subaccounts/delete?id=`, the operator's `accounts/delete?id=`), in one
 * transaction: its Queued messages end Rejected with ErrorCode `ACCOUNT_CLOSED` and its scheduled
 * messages are cancelled, all refunded (one `refund` entry per batch, else per message or
 * scheduled message); then its balance goes to its parent (a `transfer_out` and `transfer_in`
 * pair), its keys are revoked, its console sessions end and its sub-accounts are closed the same
 * way. Its data is kept. Closing a closed account changes nothing.
 * @throws NotFoundError outside `scope`.
 */
export async function closeAccount(deps: Pick<AccountAdminDeps, 'store' | 'clock'>, scope: AccountScope, id: string): Promise<void> {
  const existing = await viewAccount(deps, scope, id);
  if (existing.status === 'closed') return;
  await inTransaction(
    deps.store,
    async (tx) => {
      const children = await repo.listAccountRecords(tx, existing.id, 1_000_000, 0);
      for (const child of children) if (child.status !== 'closed') await closeIn(tx, deps.clock, child);
      await closeIn(tx, deps.clock, existing);
    },
    { immediate: true },
  );
  noteCredentialChange();
}

async function closeIn(tx: Parameters<typeof repo.lockBalances>[0], clock: Clock, account: AccountRecordRow): Promise<void> {
  const now = clock.nowSeconds();
  await lockCredits(tx, account.id);
  const rejected = await repo.rejectQueued(tx, account.id, clock.nowMs());
  // One refund per batch (§16 lets one entry cover a batch), else per message.
  const refunds = new Map<string, number>();
  for (const m of rejected) {
    const ref = m.batch_id !== null ? `batch:${m.batch_id}` : `message:${m.id}`;
    refunds.set(ref, (refunds.get(ref) ?? 0) + m.credits);
  }
  for (const [ref, credits] of refunds) await refundCredits(tx, account.id, credits, now, ref, 'Account closed');
  await emitMessageEvents(tx, rejected, now);
  for (const s of await repo.deleteAllScheduled(tx, account.id)) {
    await refundCredits(tx, account.id, s.reserved, now, `scheduled:${s.id}`, 'Account closed');
  }
  // Closed only now: the refunds above land here, and the balance then moves once, whole. A refund
  // that comes later (a message at a carrier when it closed) is forwarded by refundCredits.
  await repo.updateAccount(tx, account.id, { status: 'closed', closedAt: now }, now);
  if (account.parent_id !== null) {
    const balance = (await repo.lockBalances(tx, [account.id])).get(account.id) ?? 0;
    if (balance > 0) await transfer(tx, account.id, account.parent_id, balance, now, 'Amount');
  }
  await repo.endCredentials(tx, account.id, now);
}

/**
 * `subaccounts/credits?id=` (POST `Amount`, a non-zero integer): a positive amount moves credits
 * from the parent to the sub-account, a negative one back, as one `transfer_out` and one
 * `transfer_in` entry committed together.
 * @returns the sub-account after the move.
 * @throws ValidationFailedError `Amount cannot be blank.`, `Amount must be an integer.`, `Amount is
 *   invalid.` (zero, or a closed sub-account), `Not enough credits: {n} needed, {available} available.`
 */
export async function transferCredits(deps: AccountAdminDeps, parentId: number, id: string, input: Input): Promise<AccountRecordRow> {
  const child = await viewAccount(deps, parentId, id);
  const checked = validate(input, AMOUNT_RULES);
  if (checked.errors.length > 0) throw new ValidationFailedError(checked.errors);
  const amount = checked.values.Amount!;
  if (amount === 0 || child.status === 'closed')
    throw new ValidationFailedError([{ field: 'Amount', message: messages.invalid('Amount') }]);
  const now = deps.clock.nowSeconds();
  return inTransaction(
    deps.store,
    async (tx) => {
      if (amount > 0) await transfer(tx, parentId, child.id, amount, now, 'Amount');
      else await transfer(tx, child.id, parentId, -amount, now, 'Amount');
      return (await repo.findAccountRecord(tx, child.id, undefined))!;
    },
    { immediate: true },
  );
}

/**
 * The operator's `accounts/credits?id=` (POST `Amount`, `Note`): a positive amount is a `topup`
 * entry, a negative one an `adjustment` that never takes the balance below zero.
 * @throws ValidationFailedError as transferCredits; a negative amount beyond the balance gives
 *   `Not enough credits: {n} needed, {available} available.`
 */
export async function changeAccountCredits(
  deps: Pick<AccountAdminDeps, 'store' | 'clock'>,
  scope: AccountScope,
  id: string,
  input: Input,
): Promise<AccountRecordRow> {
  const account = await viewAccount(deps, scope, id);
  const checked = validate(input, [...AMOUNT_RULES, { field: 'Note', rule: 'string', max: 255 }] as const);
  if (checked.errors.length > 0) throw new ValidationFailedError(checked.errors);
  const amount = checked.values.Amount!;
  if (amount === 0 || account.status === 'closed')
    throw new ValidationFailedError([{ field: 'Amount', message: messages.invalid('Amount') }]);
  return adjustCredits(deps, account.id, amount, (checked.values as { Note?: string }).Note ?? '');
}

/**
 * Adds `amount` (signed, credits) to the account's balance with its `topup` (positive) or
 * `adjustment` (negative) entry; the CLI's `msgsvc credits add` and the operator's `accounts/credits`.
 * @throws ValidationFailedError `Not enough credits: …` on `Amount` when a negative amount exceeds the balance.
 */
export async function adjustCredits(
  deps: Pick<AccountAdminDeps, 'store' | 'clock'>,
  accountId: number,
  amount: number,
  note: string,
): Promise<AccountRecordRow> {
  const now = deps.clock.nowSeconds();
  return inTransaction(
    deps.store,
    async (tx) => {
      const balance = (await repo.lockBalances(tx, [accountId])).get(accountId) ?? 0;
      const next = balance + amount;
      if (next < 0) throw new ValidationFailedError([notEnoughCredits('Amount', -amount, balance)]);
      if (!Number.isSafeInteger(next)) throw new ValidationFailedError([{ field: 'Amount', message: messages.invalid('Amount') }]);
      await changeCredits(tx, accountId, amount, 'add', now, { type: amount > 0 ? 'topup' : 'adjustment', note });
      return (await repo.findAccountRecord(tx, accountId, undefined))!;
    },
    { immediate: true },
  );
}

/**
 * The principal a parent (or the operator) acts as inside `accountId` to make its keys and users:
 * the caller's own scopes bound what it may give (a key cannot give what its maker lacks, §15.2).
 */
function actingIn(account: AccountRecordRow, caller: Principal): Principal {
  const { parentId: _callerParent, suspended: _callerSuspended, ...rest } = caller;
  void _callerParent;
  void _callerSuspended;
  return { ...rest, accountId: account.id, ...(account.parent_id !== null ? { parentId: account.parent_id } : {}) };
}

function liveAccount(account: AccountRecordRow): void {
  // A closed account's credentials are dead (401): making new ones would only mislead.
  if (account.status === 'closed') throw new ValidationFailedError([{ field: 'Name', message: 'The account is closed.' }]);
}

/**
 * `subaccounts/keys?id=` and the operator's `accounts/keys?id=` (POST `Name`, `Scopes`, as
 * keys/create): a key of that account, with its Secret shown once.
 */
export async function createAccountKey(
  deps: AccountAdminDeps,
  scope: AccountScope,
  caller: Principal,
  id: string,
  input: Input,
): Promise<Awaited<ReturnType<typeof createKey>>> {
  const account = await viewAccount(deps, scope, id);
  liveAccount(account);
  return createKey({ store: deps.store, clock: deps.clock, timeZone: deps.timeZone }, actingIn(account, caller), input);
}

/**
 * `subaccounts/users?id=` and the operator's `accounts/users?id=` (POST `Email`, `Name`, `Role`):
 * invites a person to that account. `Role` defaults to `owner` here: the usual first person of a
 * new account is the customer who owns it.
 */
export async function createAccountUser(
  deps: AccountAdminDeps,
  scope: AccountScope,
  caller: Principal,
  id: string,
  input: Input,
): Promise<Awaited<ReturnType<typeof createUser>>> {
  const account = await viewAccount(deps, scope, id);
  liveAccount(account);
  const withRole = isEmpty(input.Role) ? { ...input, Role: 'owner' } : input;
  return createUser({ store: deps.store, clock: deps.clock, baseUrl: deps.baseUrl }, actingIn(account, caller), withRole);
}

/** The digits of a short code (3 to 8 digits) or phone number as account_numbers keeps them; null when neither. */
export function numberDigits(value: unknown, region: CountryCode): string | null {
  if (typeof value !== 'string' && typeof value !== 'number') return null;
  const text = String(value).trim();
  if (/^\d{3,8}$/.test(text)) return text;
  return normalisePhone(text, region)?.digits ?? null;
}

/**
 * `subaccounts/numbers?id=`: POST `Number` moves an Active number of the parent to the
 * sub-account (`back` false); DELETE moves it back (`back` true).
 * @returns the number's digits as moved.
 * @throws ValidationFailedError `Number cannot be blank.`, `Number is invalid.` (not an Active
 *   number of the giving account, or one the receiver already has), NUMBER_HAS_KEYWORDS.
 */
export async function moveAccountNumber(
  deps: AccountAdminDeps,
  parentId: number,
  id: string,
  input: Input,
  back: boolean,
): Promise<{ digits: string; statusId: number }> {
  const child = await viewAccount(deps, parentId, id);
  const raw = input.Number;
  if (isBlank(raw)) {
    throw new ValidationFailedError([{ field: 'Number', message: 'Number cannot be blank.' }]);
  }
  const digits = numberDigits(raw, deps.region);
  const invalid = new ValidationFailedError([{ field: 'Number', message: messages.invalid('Number') }]);
  if (digits === null || child.status === 'closed') throw invalid;
  const [from, to] = back ? [child.id, parentId] : [parentId, child.id];
  return inTransaction(deps.store, async (tx) => {
    if (await findNumber(tx, to, digits)) throw invalid;
    // Its keywords belong to the giver (its groups name them): they are deleted first, deliberately.
    if (await repo.numberHasKeywords(tx, from, digits)) {
      throw new ValidationFailedError([{ field: 'Number', message: NUMBER_HAS_KEYWORDS }]);
    }
    if (!(await repo.moveNumber(tx, digits, from, to))) throw invalid;
    return { digits, statusId: NUMBER_STATUS_ACTIVE };
  });
}

/**
 * `subaccounts/usage` and the operator's `usage` (`from`, `to` as sms/stats reads them, default
 * the last 7 days to now, as sms/stats): per account in `scope`, its outbound messages created in the range.
 * @throws ValidationFailedError `The format of From is invalid.`, `To is invalid.` (before From).
 */
export async function accountUsage(
  deps: AccountAdminDeps,
  scope: AccountScope,
  query: { from?: unknown; to?: unknown },
  limit: number,
  offset: number,
): Promise<UsageRow[]> {
  const range = usageRange(deps, query);
  return repo.usage(deps.store.db, scope, range.from, range.to, limit, offset);
}

/** The usage range in epoch seconds. @throws ValidationFailedError. */
export function usageRange(
  deps: Pick<AccountAdminDeps, 'clock' | 'timeZone'>,
  query: { from?: unknown; to?: unknown },
): { from: number; to: number } {
  const range = readTimeRange(query, deps.timeZone);
  const errors = [...range.errors];
  const to = range.to ?? deps.clock.nowSeconds();
  const from = range.from ?? to - 7 * 86_400;
  if (errors.length === 0 && to < from) errors.push({ field: 'to', message: 'To is invalid.' });
  if (errors.length > 0) throw new ValidationFailedError(errors);
  return { from, to };
}
