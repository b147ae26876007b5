import { inTransaction, type Store } from '../store/db.ts';
import * as numbers from '../store/repositories/numbers.ts';
import * as keywords from '../store/repositories/keywords.ts';
import { isUniqueViolation } from '../store/errors.ts';
import { ValidationFailedError, type FieldError } from './errors.ts';
import { NUMBER_STATUS_ACTIVE, type KeywordReservationRow } from './records.ts';
import { canonicalInteger, messages, validate, type Input, type Rule } from './validation.ts';
import { nowSeconds } from './time.ts';

/**
 * Words carriers reserve for opt-out and help handling; no account may reserve them
 * (compared case-insensitively, surrounding whitespace ignored).
 */
export const CARRIER_KEYWORDS: ReadonlySet<string> = new Set([
  'STOP', 'START', 'HELP', 'UNSTOP', 'CANCEL', 'END', 'QUIT', 'UNSUBSCRIBE', 'STOPALL', 'INFO',
]);

/** Longest AutoreplyMessage we store, in characters: ten concatenated SMS segments. Our limit; the spec shows none. */
export const AUTOREPLY_MAX = 1600;
/** Longest Keyword we store, in characters. Our limit; the spec gives only the minimum of 4. */
export const KEYWORD_MAX = 255;

/** Spec "POST /v1/keyword/reserve". */
const RULES: readonly Rule[] = [
  { field: 'Keyword', rule: 'required' },
  { field: 'Number', rule: 'required' },
  { field: 'Keyword', rule: 'string', min: 4, max: KEYWORD_MAX },
  { field: 'Number', rule: 'integer' },
  { field: 'AutoreplyMessage', rule: 'string', max: AUTOREPLY_MAX },
];

/** The key that makes keywords unique per number: case-folded and trimmed. */
export function keywordKey(keyword: string): string {
  return keyword.normalize('NFKC').trim().toLowerCase();
}

/**
 * Reserves a keyword on one of the account's Active numbers.
 * @throws ValidationFailedError: Keyword a carrier word ("Keyword is invalid."), Number not the
 *   account's or not Active ("Number is invalid."), Keyword already on that number
 *   (`Keyword "X" has already been taken.`, decided by the unique index).
 */
export async function reserveKeyword(store: Store, accountId: number, input: Input): Promise<KeywordReservationRow> {
  return inTransaction(store, async (tx) => {
    const errors: FieldError[] = validate(input, RULES);
    const failed = new Set(errors.map((e) => e.field));
    const keyword = input.Keyword as string;
    if (!failed.has('Keyword') && CARRIER_KEYWORDS.has(keyword.trim().toUpperCase())) {
      errors.push({ field: 'Keyword', message: messages.invalid('Keyword') });
      failed.add('Keyword');
    }
    let number: Awaited<ReturnType<typeof numbers.findNumber>>;
    if (!failed.has('Number')) {
      const digits = canonicalInteger(input.Number)!;
      number = digits.startsWith('-') ? undefined : await numbers.findNumber(tx, accountId, digits);
      if (!number || number.status_id !== NUMBER_STATUS_ACTIVE) {
        errors.push({ field: 'Number', message: messages.invalid('Number') });
      }
    }
    // Every field reports its first error (CONVENTIONS §3): when another field failed, the insert
    // below never runs, so a taken keyword must be looked up to be reported too.
    if (errors.length > 0 && !failed.has('Keyword') && number && number.status_id === NUMBER_STATUS_ACTIVE) {
      if (await keywords.keywordTaken(tx, number.id, keywordKey(keyword))) {
        errors.push({ field: 'Keyword', message: messages.taken('Keyword', keyword) });
      }
    }
    if (errors.length > 0) throw new ValidationFailedError(errors);
    const autoreply = typeof input.AutoreplyMessage === 'string' ? input.AutoreplyMessage : '';
    try {
      const id = await keywords.insertKeywordReservation(
        tx,
        accountId,
        { accountNumberId: number!.id, keyword, keywordKey: keywordKey(keyword), autoreplyMessage: autoreply },
        nowSeconds(),
      );
      return { id, keyword, number: number!.number, autoreply_message: autoreply };
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      throw new ValidationFailedError([{ field: 'Keyword', message: messages.taken('Keyword', keyword) }]);
    }
  });
}
