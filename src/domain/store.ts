import { pingStore, type Store } from '../store/db.ts';

/**
 * The open database as the layers above the domain see it: a handle that the server opens and
 * closes and that http passes, untouched, to domain functions. http never reaches into it (its
 * queries are the store's business), so it takes the type from here, not from src/store.
 */
export type { Store };

/** Resolves when the database answers a trivial query; rejects otherwise (GET /readyz, docs/API.md §13). */
export function storeReady(store: Store): Promise<void> {
  return pingStore(store);
}

/**
 * True when a database call failed because the database is unreachable, overloaded or timed out
 * (not because of the query): the request gets a 503 and may be retried.
 */
export { isStoreUnavailable } from '../store/errors.ts';
