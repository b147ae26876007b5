/**
 * The key under which names are compared case-insensitively (keywords per number, API.md
 * API.md §10.5; custom field names per account, API.md §10.4): NFKC-normalised, trimmed, lower case. Unique indexes on
 * this key enforce the rule, so two requests racing cannot both win.
 */
export function caseKey(text: string): string {
  return text.normalize('NFKC').trim().toLowerCase();
}

/**
 * The key of a keyword (API.md §10.5, §11.5): `caseKey`, then every run of white space (JavaScript's
 * `\s`, Unicode's) made one space, so that `JOIN  NOW`, `join now` and `Join\tNow` are one keyword.
 * keyword/reserve, update and check compare it (the unique index on the number and this key), and an
 * inbound text is matched on the key of its whole text (src/domain/inbound.ts).
 */
export function keywordKey(text: string): string {
  return caseKey(text).replace(/\s+/g, ' ');
}
