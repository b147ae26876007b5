import type { Store } from '../store/db.ts';
import * as credits from '../store/repositories/credits.ts';
import { ValidationFailedError, type FieldError } from './errors.ts';
import { readTimeRange } from './message-stats.ts';
import { isEmpty, messages } from './validation.ts';

/**
 * The credit ledger (docs/API.md §10.1.1 `credits/ledger`): every change of the account's
 * `AvailableCredits`, written by the store in the transaction that changes the balance
 * (src/store/repositories/credits.ts), so that the sum of an account's entries is its balance.
 */

export type LedgerRow = Awaited<ReturnType<typeof credits.listLedger>>[number];
export type LedgerFilter = credits.LedgerFilter;
export { LEDGER_TYPES, type LedgerType } from '../store/repositories/credits.ts';

const isLedgerType = (v: unknown): v is credits.LedgerType => credits.LEDGER_TYPES.includes(v as credits.LedgerType);

/**
 * The filters of `credits/ledger`, read from the query, errors in the order Type, from, to:
 * - `Type`: one of LEDGER_TYPES, else `Type is invalid.`;
 * - `from`, `to`: read as sms/stats reads them (`YYYY-MM-DD HH:MM:SS` in the service's zone, or
 *   the other forms of `sms/schedule`'s DateTime), inclusive, on DateCreated; else `The format of
 *   From is invalid.` / `The format of To is invalid.`
 * @throws ValidationFailedError (422).
 */
export function ledgerFilter(query: (name: string) => string | string[] | undefined, timeZone: string): LedgerFilter {
  const errors: FieldError[] = [];
  const f: LedgerFilter = {};
  const type = query('Type');
  if (!isEmpty(type)) {
    if (isLedgerType(type)) f.type = type;
    else errors.push({ field: 'Type', message: messages.invalid('Type') });
  }
  const range = readTimeRange({ from: query('from'), to: query('to') }, timeZone);
  errors.push(...range.errors);
  if (errors.length > 0) throw new ValidationFailedError(errors);
  if (range.from !== undefined) f.from = range.from;
  if (range.to !== undefined) f.to = range.to;
  return f;
}

export function countLedger(store: Store, accountId: number, f: LedgerFilter): Promise<number> {
  return credits.countLedger(store.db, accountId, f);
}

/** A page of the account's entries, newest first. */
export function listLedger(store: Store, accountId: number, f: LedgerFilter, limit: number, offset: number): Promise<LedgerRow[]> {
  return credits.listLedger(store.db, accountId, f, limit, offset);
}
