import { inTransaction, type Store } from '../store/db.ts';
import * as numbers from '../store/repositories/numbers.ts';
import * as keywords from '../store/repositories/keywords.ts';
import { UniqueViolation } from '../store/errors.ts';
import type { KeywordReservationRow } from '../records/keywords.ts';
import type { Db } from '../store/types.ts';
import { ValidationFailedError, type FieldError } from './errors.ts';
import { NUMBER_STATUS_ACTIVE } from '../records/statuses.ts';
import { defineRules, messages, validate, type Input } from './validation.ts';
import { findOr404, loadOr404 } from './find.ts';
import { nowSeconds } from '../lib/time.ts';
import { keywordKey } from './text.ts';

/**
 * Words carriers reserve for opt-out and help handling; no account may reserve them
 * (compared case-insensitively, surrounding whitespace ignored).
 */
export const CARRIER_KEYWORDS: ReadonlySet<string> = new Set([
  'STOP',
  'START',
  'HELP',
  'UNSTOP',
  'CANCEL',
  'END',
  'QUIT',
  'UNSUBSCRIBE',
  'STOPALL',
  'INFO',
]);

/** Longest AutoreplyMessage we store, in characters: ten concatenated SMS segments. Our limit; API.md shows none. */
export const AUTOREPLY_MAX = 1600;
/** Longest Keyword we store, in characters. Our limit; API.md gives only the minimum of 4. */
export const KEYWORD_MAX = 255;

/** API.md §10.5. */
const RULES = defineRules([
  { field: 'Keyword', rule: 'required' },
  { field: 'Number', rule: 'required' },
  { field: 'Keyword', rule: 'string', min: 4, max: KEYWORD_MAX },
  { field: 'Number', rule: 'integer' },
  { field: 'AutoreplyMessage', rule: 'string', max: AUTOREPLY_MAX },
]);

/** The account number a keyword goes on, as found by `activeNumber`. */
type NumberRow = NonNullable<Awaited<ReturnType<typeof numbers.findNumber>>>;

/** The account's Active number with these digits (read as reserve reads `Number`), or undefined. */
async function activeNumber(tx: Db, accountId: number, n: number): Promise<NumberRow | undefined> {
  if (n < 0 || !Number.isSafeInteger(n)) return undefined;
  const number = await numbers.findNumber(tx, accountId, String(n));
  return number && number.status_id === NUMBER_STATUS_ACTIVE ? number : undefined;
}

/** True for a carrier word (compared case-insensitively, surrounding whitespace ignored). */
function isCarrierWord(keyword: string): boolean {
  return CARRIER_KEYWORDS.has(keyword.trim().toUpperCase());
}

/**
 * The checks of reserve and check that need the database, after `validate(input, RULES)`: the
 * Keyword is no carrier word ("Keyword is invalid."), the Number is an Active number of the
 * account ("Number is invalid."). Returns every error so far and the number, when it passed.
 */
async function checkKeywordOnNumber(
  tx: Db,
  accountId: number,
  checked: ReturnType<typeof validate<typeof RULES>>,
): Promise<{ errors: FieldError[]; number: NumberRow | undefined }> {
  const errors: FieldError[] = [...checked.errors];
  if (!checked.failed('Keyword') && isCarrierWord(checked.values.Keyword!)) {
    errors.push({ field: 'Keyword', message: messages.invalid('Keyword') });
  }
  let number: NumberRow | undefined;
  if (!checked.failed('Number')) {
    number = await activeNumber(tx, accountId, checked.values.Number!);
    if (!number) errors.push({ field: 'Number', message: messages.invalid('Number') });
  }
  return { errors, number };
}

/** True when `errors` holds an error of `field`. */
const hasError = (errors: readonly FieldError[], field: string) => errors.some((e) => e.field === field);

/**
 * Reserves a keyword on one of the account's Active numbers.
 * @throws ValidationFailedError: Keyword a carrier word ("Keyword is invalid."), Number not the
 *   account's or not Active ("Number is invalid."), Keyword already on that number in any account
 *   (`Keyword "X" has already been taken.`, decided by the unique index on the number and
 *   `keywordKey`: case, NFKC and white space aside, `JOIN  NOW` is `join now`).
 */
export async function reserveKeyword(store: Store, accountId: number, input: Input): Promise<KeywordReservationRow> {
  const checked = validate(input, RULES);
  return inTransaction(store, async (tx) => {
    const { errors, number } = await checkKeywordOnNumber(tx, accountId, checked);
    const keyword = checked.values.Keyword!;
    // Every field reports its first error (API.md §4.4): when another field failed, the insert
    // below never runs, so a taken keyword must be looked up to be reported too.
    if (errors.length > 0 && !hasError(errors, 'Keyword') && number) {
      if (await keywords.keywordTaken(tx, number.number, keywordKey(keyword))) {
        errors.push({ field: 'Keyword', message: messages.taken('Keyword', keyword) });
      }
    }
    if (errors.length > 0) throw new ValidationFailedError(errors);
    const autoreply = checked.values.AutoreplyMessage ?? '';
    try {
      const id = await keywords.insertKeywordReservation(
        tx,
        accountId,
        { accountNumberId: number!.id, keyword, keywordKey: keywordKey(keyword), autoreplyMessage: autoreply },
        nowSeconds(),
      );
      return { id, keyword, number: number!.number, autoreply_message: autoreply };
    } catch (err) {
      if (!(err instanceof UniqueViolation)) throw err;
      throw new ValidationFailedError([{ field: 'Keyword', message: messages.taken('Keyword', keyword) }]);
    }
  });
}

/** What `keyword/check` answers (API.md §10.5). */
export interface KeywordAvailability {
  /** The Keyword as sent. */
  keyword: string;
  /** The Number as an integer. */
  number: number;
  /** False when any account holds the keyword on that number (case-insensitively). */
  available: boolean;
}

/**
 * `keyword/check?Keyword=&Number=`: whether the keyword could be reserved on the number. The input
 * is checked exactly as reserve checks it (same rules, messages and order), except that a taken
 * keyword is no error: it gives `available: false`.
 * @param input the query parameters `Keyword` and `Number` (text, a list, or absent).
 * @throws ValidationFailedError as reserve, without the "has already been taken." error.
 */
export async function checkKeyword(store: Store, accountId: number, input: Input): Promise<KeywordAvailability> {
  const checked = validate({ Keyword: input.Keyword, Number: input.Number }, RULES);
  const { errors, number } = await checkKeywordOnNumber(store.db, accountId, checked);
  if (errors.length > 0) throw new ValidationFailedError(errors);
  const keyword = checked.values.Keyword!;
  return {
    keyword,
    number: checked.values.Number!,
    available: !(await keywords.keywordTaken(store.db, number!.number, keywordKey(keyword))),
  };
}

/** The rule of the `Number` filter of keyword/index: an integer, read as reserve reads `Number`. */
const FILTER_RULES = defineRules([{ field: 'Number', rule: 'integer' }]);

/**
 * Reads the optional `Number` filter of keyword/index.
 * @returns undefined for no filter (absent or empty), the digits to filter on, or null when no
 *   number can have them (negative, or beyond a safe integer): the list is then empty.
 * @throws ValidationFailedError `Number must be an integer.`
 */
export function keywordNumberFilter(value: unknown): string | null | undefined {
  const checked = validate({ Number: value }, FILTER_RULES);
  if (checked.errors.length > 0) throw new ValidationFailedError(checked.errors);
  const n = checked.values.Number;
  if (n === undefined) return undefined;
  return n < 0 || !Number.isSafeInteger(n) ? null : String(n);
}

/** How many reservations the account has, only those on the number `digits` when given (keyword/index). */
export function countReservations(store: Store, accountId: number, digits: string | undefined): Promise<number> {
  return keywords.countKeywordReservations(store.db, accountId, digits);
}

/** One page of the account's reservations by Id (`limit` rows from `offset`), only those on `digits` when given (keyword/index). */
export function listReservations(
  store: Store,
  accountId: number,
  digits: string | undefined,
  limit: number,
  offset: number,
): Promise<KeywordReservationRow[]> {
  return keywords.listKeywordReservations(store.db, accountId, digits, limit, offset);
}

/**
 * Loads the account's reservation `id` (keyword/view).
 * @param id canonical integer text of the `id` query parameter.
 * @throws NotFoundError `Object not found: {id}`, also for another account's reservation.
 */
export async function findKeyword(store: Store, accountId: number, id: string): Promise<KeywordReservationRow> {
  const row = await loadOr404(id, (n) => keywords.findKeywordReservation(store.db, accountId, n));
  return { id: row.id, keyword: row.keyword, number: row.number, autoreply_message: row.autoreply_message };
}

/** True when the body carries `field` (null included: sent blank). */
const sent = (input: Input, field: string) => Object.hasOwn(input, field) && input[field] !== undefined;

/**
 * `keyword/update?id=`: changes the fields sent (`Keyword`, `Number`, `AutoreplyMessage`) with
 * reserve's rules. Keyword and Number may be left out but not sent blank; an empty
 * AutoreplyMessage clears it. The keyword must stay unique on its (new) number across all
 * accounts, itself excepted.
 * @param id canonical integer text of the `id` query parameter.
 * @throws NotFoundError when the account has no reservation `id` (before any 422, API.md §1.5).
 * @throws ValidationFailedError with the first error of each field, as reserve.
 */
export async function updateKeyword(store: Store, accountId: number, id: string, input: Input): Promise<KeywordReservationRow> {
  // Reserve's rules, less `required` for a field not sent.
  const rules = RULES.filter((r) => r.rule !== 'required' || sent(input, r.field));
  const checked = validate(input, rules);
  return inTransaction(store, async (tx) => {
    const current = await loadOr404(id, (n) => keywords.findKeywordReservation(tx, accountId, n));
    const errors: FieldError[] = [...checked.errors];
    const newKeyword = checked.values.Keyword;
    const newNumber = checked.values.Number;
    if (newKeyword !== undefined && isCarrierWord(newKeyword)) {
      errors.push({ field: 'Keyword', message: messages.invalid('Keyword') });
    }
    let number: NumberRow | undefined;
    if (newNumber !== undefined) {
      number = await activeNumber(tx, accountId, newNumber);
      if (!number) errors.push({ field: 'Number', message: messages.invalid('Number') });
    }
    const next = {
      accountNumberId: number?.id ?? current.account_number_id,
      digits: number?.number ?? current.number,
      keyword: newKeyword ?? current.keyword,
      keywordKey: newKeyword === undefined ? current.keyword_key : keywordKey(newKeyword),
      // Sent empty (null, "") clears it; a bad value has already failed.
      autoreplyMessage: sent(input, 'AutoreplyMessage') ? (checked.values.AutoreplyMessage ?? '') : current.autoreply_message,
    };
    const moves = newKeyword !== undefined || number !== undefined;
    if (moves && !hasError(errors, 'Keyword') && !hasError(errors, 'Number')) {
      if (await keywords.keywordTaken(tx, next.digits, next.keywordKey, current.id)) {
        errors.push({ field: 'Keyword', message: messages.taken('Keyword', next.keyword) });
      }
    }
    if (errors.length > 0) throw new ValidationFailedError(errors);
    try {
      await keywords.updateKeywordReservation(tx, accountId, current.id, next);
    } catch (err) {
      if (!(err instanceof UniqueViolation)) throw err;
      throw new ValidationFailedError([{ field: 'Keyword', message: messages.taken('Keyword', next.keyword) }]);
    }
    return { id: current.id, keyword: next.keyword, number: next.digits, autoreply_message: next.autoreplyMessage };
  });
}

/**
 * `keyword/delete?id=`: releases the keyword; the account's groups that pointed to it get
 * KeywordId 0, in the same transaction.
 * @throws NotFoundError `Object not found: {id}`, also for another account's reservation.
 */
export async function deleteKeyword(store: Store, accountId: number, id: string): Promise<void> {
  await inTransaction(store, async (tx) => {
    const keywordId = await findOr404(id, (n) => keywords.findKeywordReservation(tx, accountId, n));
    await keywords.clearGroupsKeyword(tx, accountId, keywordId);
    await keywords.deleteKeywordReservation(tx, accountId, keywordId);
  });
}
