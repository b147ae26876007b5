import { NotFoundError } from './errors.ts';
import { toId } from './validation.ts';

/**
 * Find-or-404 (API.md §4, §1.3): turns the `id` query parameter (canonical
 * integer text) into a row id the account owns.
 * @param exists asks the store whether the account has that row (or returns the row).
 * @returns the numeric id.
 * @throws NotFoundError `Object not found: {id}` when the id cannot be a row id, or the account has no such row.
 */
export async function findOr404(id: string, exists: (id: number) => Promise<unknown>): Promise<number> {
  const n = toId(id);
  if (n === null) throw new NotFoundError(id);
  const found = await exists(n);
  if (found === undefined || found === false || found === null) throw new NotFoundError(id);
  return n;
}

/**
 * Loads a record the account owns by the `id` query parameter.
 * @throws NotFoundError `Object not found: {id}` otherwise.
 */
export async function loadOr404<T>(id: string, find: (id: number) => Promise<T | undefined>): Promise<T> {
  const n = toId(id);
  const row = n === null ? undefined : await find(n);
  if (row === undefined) throw new NotFoundError(id);
  return row;
}
