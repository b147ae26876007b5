import type { Store } from '../store/db.ts';
import type { NumberRow } from '../records/numbers.ts';
import * as numbers from '../store/repositories/numbers.ts';

/** The account's numbers (docs/API.md §10.1 `numbers/index`), read straight from the store. */

/** How many numbers the account has. */
export function countNumbers(store: Store, accountId: number): Promise<number> {
  return numbers.countNumbers(store.db, accountId);
}

/** One page of the account's numbers by Id ascending (`limit` rows from `offset`). */
export function listNumbers(store: Store, accountId: number, limit: number, offset: number): Promise<NumberRow[]> {
  return numbers.listNumbers(store.db, accountId, limit, offset);
}
