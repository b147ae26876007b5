/**
 * The key under which names are compared case-insensitively (keywords per number, API.md
 * API.md §10.5; custom field names per account, API.md §10.4): NFKC-normalised, trimmed, lower case. Unique indexes on
 * this key enforce the rule, so two requests racing cannot both win.
 */
export function caseKey(text: string): string {
  return text.normalize('NFKC').trim().toLowerCase();
}
