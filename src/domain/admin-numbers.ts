import type { CountryCode } from 'libphonenumber-js';
import { inTransaction, type Store } from '../store/db.ts';
import { isUniqueViolation } from '../store/errors.ts';
import { findAccountRecord } from '../store/repositories/account-admin.ts';
import * as repo from '../store/repositories/admin-numbers.ts';
import { findNumber, insertNumber } from '../store/repositories/numbers.ts';
import type { Clock } from '../lib/time.ts';
import { NUMBER_STATUSES } from '../records/statuses.ts';
import { NUMBER_HAS_KEYWORDS, numberDigits } from './account-admin.ts';
import { HttpStatusError, NotFoundError, ValidationFailedError, type FieldError } from './errors.ts';
import { canonicalInteger, defineRules, isBlank, messages, toId, validate, type Input } from './validation.ts';

/**
 * The service's numbers and the account that holds each (docs/API.md §16.4 `numbers/…`): the
 * operator's `/admin/v1/numbers/…` and `msgsvc numbers add` both call these, so the two can never
 * disagree.
 *
 * A number (a short code of 3 to 8 digits, or a phone number kept as E.164 digits without `+`) may
 * be held by several accounts at once: a shared short code, whose inbound texts go to every holder
 * and are told apart by keyword (docs/API.md §7). One account holds a number at most once.
 */

export type ServiceNumberRow = repo.ServiceNumberRow;

export interface ServiceNumberDeps {
  store: Store;
  clock: Clock;
  /** The region of numbers written without a country code (MSGSVC_DEFAULT_REGION). */
  region: CountryCode;
}

/** The Status_Id values of docs/API.md §9.2: 0 Active, 1 Inactive, 301 and 302 blocked. */
export const SERVICE_NUMBER_STATUSES: readonly number[] = Object.keys(NUMBER_STATUSES).map(Number);

/** True for the blocked statuses (301, 302), which carry a Blocked_Date. */
export function isBlockedStatus(statusId: number): boolean {
  return statusId === 301 || statusId === 302;
}

const CREATE_RULES = defineRules([
  { field: 'Number', rule: 'required' },
  { field: 'AccountId', rule: 'required' },
  { field: 'AccountId', rule: 'integer' },
  { field: 'Status_Id', rule: 'in', values: SERVICE_NUMBER_STATUSES },
]);

const UPDATE_RULES = defineRules([
  { field: 'AccountId', rule: 'integer' },
  { field: 'Status_Id', rule: 'in', values: SERVICE_NUMBER_STATUSES },
]);

/** The value as the client sent it, for a uniqueness message. */
function sent(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' ? String(value) : '';
}

const invalid = (field: string): FieldError => ({ field, message: messages.invalid(field) });

/** The largest row id either store keeps (PostgreSQL `integer`): a larger one names no row. */
const MAX_ROW_ID = 2_147_483_647;

/** True when `accountId` is an account that may hold numbers (it exists and is not closed). */
async function liveAccount(store: Store, accountId: number): Promise<boolean> {
  if (!Number.isSafeInteger(accountId) || accountId < 1 || accountId > MAX_ROW_ID) return false;
  const account = await findAccountRecord(store.db, accountId, undefined);
  return account !== undefined && account.status !== 'closed';
}

/**
 * `numbers/create` and `msgsvc numbers add`: gives the account `AccountId` the number `Number` with
 * `Status_Id` (default 0, Active); a blocked status (301, 302) sets Blocked_Date to now.
 * @returns the new row.
 * @throws ValidationFailedError, first error of each field in this order: `Number cannot be
 *   blank.`, `Account Id cannot be blank.`, `Account Id must be an integer.`, `Status Id must be an
 *   integer.`, `Status Id is invalid.` (not 0, 1, 301 or 302); then `Number is invalid.` (neither a
 *   short code of 3 to 8 digits nor a phone number), `Account Id is invalid.` (no such account, or
 *   closed), and `The combination "{Number}"-"{AccountId}" of Number and Account Id has already
 *   been taken.` (the account holds it already; the values as sent).
 */
export async function addServiceNumber(deps: ServiceNumberDeps, input: Input): Promise<ServiceNumberRow> {
  // The values as sent, never trimmed (docs/API.md §4.4: `" 1"` is no integer), from the body
  // itself, so a JSON integer past 2^53 keeps its source text. (The route reads AccountId the same
  // way to know whose log the entry goes to.)
  const checked = validate(input, CREATE_RULES);
  const errors = [...checked.errors];
  const digits = checked.failed('Number') ? null : numberDigits(input.Number, deps.region);
  if (!checked.failed('Number') && digits === null) errors.unshift(invalid('Number'));
  const accountId = checked.values.AccountId;
  if (accountId !== undefined && !(await liveAccount(deps.store, accountId))) errors.push(invalid('AccountId'));
  if (errors.length > 0) throw new ValidationFailedError(orderErrors(errors));
  const statusId = checked.values.Status_Id ?? 0;
  const taken = new ValidationFailedError([
    { field: 'Number', message: messages.comboTaken(['Number', 'AccountId'], [sent(input.Number), sent(input.AccountId)]) },
  ]);
  const now = deps.clock.nowSeconds();
  try {
    return await inTransaction(deps.store, async (tx) => {
      if (await findNumber(tx, accountId!, digits!)) throw taken;
      const id = await insertNumber(tx, accountId!, digits!, statusId, isBlockedStatus(statusId) ? now : null, now);
      return (await repo.findServiceNumberById(tx, id))!;
    });
  } catch (err) {
    // Two adds of the same number at once: the unique (account, number) index decides.
    if (isUniqueViolation(err)) throw taken;
    throw err;
  }
}

const FIELD_ORDER = ['Number', 'AccountId', 'Status_Id'];

/** The first error of each field, in the order of the record's fields. */
function orderErrors(errors: FieldError[]): FieldError[] {
  const first = new Map<string, FieldError>();
  for (const e of errors) if (!first.has(e.field)) first.set(e.field, e);
  return [...first.values()].sort((a, b) => FIELD_ORDER.indexOf(a.field) - FIELD_ORDER.indexOf(b.field));
}

/**
 * The hold named by `numbers/update|delete?number=` (and the optional query parameter `AccountId`):
 * `number` is read as a short code or a phone number in any common writing.
 * @throws NotFoundError `Object not found: {number}` (as sent) when no account holds it, or not
 *   the account named; HttpStatusError 400 `Missing required parameters: AccountId` when several
 *   accounts hold it and none is named, `Invalid data received for parameter "AccountId".` when the
 *   one named is not an integer.
 */
export async function findServiceNumber(
  deps: Pick<ServiceNumberDeps, 'store' | 'region'>,
  number: string,
  accountParam: string | string[] | undefined,
): Promise<ServiceNumberRow> {
  let accountId: number | null | undefined;
  if (accountParam !== undefined) {
    const canonical = typeof accountParam === 'string' ? canonicalInteger(accountParam.trim()) : null;
    if (canonical === null) throw new HttpStatusError(400, 'Invalid data received for parameter "AccountId".');
    accountId = toId(canonical);
  }
  const digits = numberDigits(number, deps.region);
  if (digits === null || accountId === null) throw new NotFoundError(number);
  const holders = await repo.findHolders(deps.store.db, digits);
  if (accountId !== undefined) {
    const holder = holders.find((h) => h.account_id === accountId);
    if (!holder) throw new NotFoundError(number);
    return holder;
  }
  if (holders.length === 0) throw new NotFoundError(number);
  if (holders.length > 1) throw new HttpStatusError(400, 'Missing required parameters: AccountId');
  return holders[0]!;
}

/**
 * `numbers/update?number=`: `AccountId` (moves the number to that account) and `Status_Id`; only
 * the fields sent change. A change to a blocked status (301, 302) sets Blocked_Date to now; a
 * change to 0 or 1 clears it.
 * @returns the row after the change.
 * @throws ValidationFailedError `Account Id cannot be blank.` (sent blank), `Account Id must be an
 *   integer.`, `Status Id must be an integer.`, `Status Id is invalid.`; then `Account Id is
 *   invalid.` (no such account, or closed), `The combination "{Number}"-"{AccountId}" of Number and
 *   Account Id has already been taken.` (that account holds the number already), `The number has
 *   keyword reservations.` (a move of a number whose account reserved keywords on it: they are
 *   that account's, so they never move with it; the number must be deleted, or its keywords, first).
 */
export async function updateServiceNumber(deps: ServiceNumberDeps, holder: ServiceNumberRow, input: Input): Promise<ServiceNumberRow> {
  const checked = validate(input, UPDATE_RULES);
  const errors = [...checked.errors];
  if (Object.hasOwn(input, 'AccountId') && isBlank(input.AccountId) && !checked.failed('AccountId'))
    errors.unshift({ field: 'AccountId', message: 'Account Id cannot be blank.' });
  const target = checked.values.AccountId;
  const moving = target !== undefined && target !== holder.account_id;
  if (moving && !errors.some((e) => e.field === 'AccountId') && !(await liveAccount(deps.store, target))) errors.push(invalid('AccountId'));
  if (errors.length > 0) throw new ValidationFailedError(orderErrors(errors));
  const statusId = checked.values.Status_Id;
  const now = deps.clock.nowSeconds();
  const blockedAt = statusId === undefined || statusId === holder.status_id ? undefined : isBlockedStatus(statusId) ? now : null;
  const taken = new ValidationFailedError([
    { field: 'AccountId', message: messages.comboTaken(['Number', 'AccountId'], [holder.number, sent(input.AccountId)]) },
  ]);
  try {
    return await inTransaction(deps.store, async (tx) => {
      if (moving) {
        if (await findNumber(tx, target, holder.number)) throw taken;
        if ((await repo.countKeywordReservations(tx, holder.id)) > 0)
          throw new ValidationFailedError([{ field: 'AccountId', message: NUMBER_HAS_KEYWORDS }]);
      }
      await repo.updateServiceNumber(tx, holder.id, {
        ...(moving ? { accountId: target } : {}),
        ...(statusId !== undefined ? { statusId } : {}),
        ...(blockedAt !== undefined ? { blockedAt } : {}),
      });
      const row = await repo.findServiceNumberById(tx, holder.id);
      if (!row) throw new NotFoundError(holder.number);
      return row;
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw taken;
    throw err;
  }
}

/**
 * `numbers/delete?number=`: the account no longer holds the number; the keyword reservations its
 * account made on it are deleted with it. Its messages stay in the log.
 */
export async function deleteServiceNumber(deps: Pick<ServiceNumberDeps, 'store'>, holder: ServiceNumberRow): Promise<void> {
  await inTransaction(deps.store, (tx) => repo.deleteServiceNumber(tx, holder.id));
}

/**
 * The filters of `numbers/index`: `AccountId` (an integer) and `Number` (a short code or a phone
 * number in any common writing), both optional.
 * @throws ValidationFailedError `Account Id must be an integer.`, `Number is invalid.`
 */
export function serviceNumberFilter(
  query: (name: string) => string | string[] | undefined,
  region: CountryCode,
): repo.ServiceNumberFilter | null {
  const errors: FieldError[] = [];
  const f: repo.ServiceNumberFilter = {};
  let none = false;
  const account = query('AccountId');
  if (account !== undefined && account !== '') {
    const canonical = typeof account === 'string' ? canonicalInteger(account) : null;
    if (canonical === null) errors.push({ field: 'AccountId', message: 'Account Id must be an integer.' });
    else {
      const id = toId(canonical);
      if (id === null || id > MAX_ROW_ID) none = true;
      else f.accountId = id;
    }
  }
  const number = query('Number');
  if (number !== undefined && number !== '') {
    const digits = typeof number === 'string' ? numberDigits(number, region) : null;
    if (digits === null) errors.push(invalid('Number'));
    else f.number = digits;
  }
  if (errors.length > 0) throw new ValidationFailedError(errors);
  return none ? null : f;
}

/** How many numbers match `f` (null: a filter no row can match). */
export async function countServiceNumbers(deps: Pick<ServiceNumberDeps, 'store'>, f: repo.ServiceNumberFilter | null): Promise<number> {
  return f === null ? 0 : repo.countServiceNumbers(deps.store.db, f);
}

/** A page of the numbers matching `f`, in the order they were added. */
export async function listServiceNumbers(
  deps: Pick<ServiceNumberDeps, 'store'>,
  f: repo.ServiceNumberFilter | null,
  limit: number,
  offset: number,
): Promise<ServiceNumberRow[]> {
  return f === null ? [] : repo.listServiceNumbers(deps.store.db, f, limit, offset);
}
