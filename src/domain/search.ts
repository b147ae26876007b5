import { ValidationFailedError } from './errors.ts';
import { defineRules, validate } from './validation.ts';

/**
 * msgsvc's `Search` query filter of contacts/index, groups/index and mms-templates/index
 * (docs/API.md §10.2, §10.3, §10.7): not in the contract, whose lists ignore query parameters they
 * do not know, so clients that never send it see no change.
 *
 * Read as Yii2 would read a `trim` filter followed by a `string` rule with `max`: white space at
 * either end is dropped (JavaScript's trim: any Unicode white space), then an empty text is no
 * filter, a text of more than 255 characters (Unicode characters, counted after trimming) is
 * `Search should contain at most 255 characters.`, a list (`Search[]=`) is `Search must be a
 * string.` and a text holding U+0000 is `Search is invalid.` (validation.ts, as for every string).
 * What "contains" means is the store's (src/store/search.ts).
 */

/** The rule of `Search`, for lists that validate it with their other filters. */
export const SEARCH_RULE = { field: 'Search', rule: 'string', max: 255 } as const;

const SEARCH_RULES = defineRules([SEARCH_RULE]);

/** `Search` as received, trimmed when it is a string (the filter runs before the rules). */
export function trimmedSearch(value: unknown): unknown {
  return typeof value === 'string' ? value.trim() : value;
}

/**
 * Reads `Search` alone (groups/index, mms-templates/index).
 * @param value the query parameter as received (text, a list for `Search[]=`, or undefined).
 * @returns the trimmed text, or undefined when it is absent or blank (no filter).
 * @throws ValidationFailedError (422 on `Search`).
 */
export function readSearch(value: unknown): string | undefined {
  const checked = validate({ Search: trimmedSearch(value) }, SEARCH_RULES);
  if (checked.errors.length > 0) throw new ValidationFailedError(checked.errors);
  return checked.values.Search;
}
