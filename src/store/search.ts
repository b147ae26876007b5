import { sql, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import { isPostgres } from './prepared.ts';
import type { Database } from './tables.ts';

/**
 * The `Search` list filter (docs/API.md §10.2, §10.3, §10.7; an msgsvc addition): "this column
 * contains the text", case-insensitive for ASCII letters, the same on SQLite and PostgreSQL.
 *
 * The text is always a bound parameter, never SQL: it becomes the LIKE pattern `%text%` with `\`,
 * `%` and `_` escaped (`ESCAPE '\'`), so they match themselves.
 *
 * Case: SQLite's LIKE folds ASCII letters only (no ICU; `case_sensitive_like` is never set).
 * PostgreSQL's ILIKE and lower() would also fold other letters, as the database's locale decides,
 * so there the column is folded with `translate(…, 'A…Z', 'a…z')` and compared with LIKE against
 * the pattern folded the same way here: both stores then find exactly the same rows. Any other
 * character (é and É, ß, Ω, a decomposed é against a composed one) is compared code point by code
 * point, on both.
 *
 * No index serves "contains": a search reads the account's rows of the list (its (account_id, id)
 * range), which stays cheap at the sizes a picker searches.
 */

const ASCII_UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const ASCII_LOWER = 'abcdefghijklmnopqrstuvwxyz';

/** ASCII letters to lower case, every other character as it is. */
function foldAscii(text: string): string {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/**
 * The LIKE pattern of "contains `text`" (for `containsText`): `\`, `%` and `_` escaped with `\`,
 * ASCII letters in lower case, between two `%`.
 */
export function containsPattern(text: string): string {
  return `%${foldAscii(text).replace(/[\\%_]/g, '\\$&')}%`;
}

/**
 * The LIKE pattern of "the number contains the text's digits" when the text has at least three
 * ASCII digits (`+1 202 555` → `%1202555%`), else null (a LIKE against null matches nothing).
 */
export function digitsPattern(text: string): string | null {
  const digits = text.replace(/[^0-9]/g, '');
  return digits.length >= 3 ? `%${digits}%` : null;
}

/**
 * `column` matches `pattern` (a parameter holding a `containsPattern`), ASCII letters folded on
 * both stores (see above). `column` is a column name of the query's table.
 */
export function containsText(db: Kysely<Database>, column: string, pattern: unknown): RawBuilder<SqlBool> {
  return isPostgres(db)
    ? sql<SqlBool>`translate(${sql.ref(column)}, ${sql.lit(ASCII_UPPER)}, ${sql.lit(ASCII_LOWER)}) like ${pattern} escape '\\'`
    : sql<SqlBool>`${sql.ref(column)} like ${pattern} escape '\\'`;
}
