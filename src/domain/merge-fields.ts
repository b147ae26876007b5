import { caseKey } from './text.ts';

/**
 * The merge grammar of message texts (API.md §14.3.1), pure: no store, so the console's counter
 * (console/src/cost.ts) reads texts exactly as the server does. Read left to right in one pass:
 * `{{` is a literal `{` and `}}` a literal `}`; `{FirstName}`, `{LastName}`, `{Number}`, `{City}`,
 * `{Zip}`, `{Email}` (names exact, case sensitive) and `{Field:Name}` (Name every character up to
 * the next `}`, at least one, no `{`; compared case-insensitively, trimmed) are merge fields;
 * anything else is sent as it is. Recipients' values: src/domain/personalise.ts.
 */

/** The contact values a merge field names. */
export type ContactField = 'FirstName' | 'LastName' | 'Number' | 'City' | 'Zip' | 'Email';

/** A piece of a parsed text: literal text, a contact field, or a custom field (its case-folded name). */
export type MergePart = string | { readonly field: ContactField } | { readonly custom: string };

/** A text read once by `parseMerge`, rendered per recipient by `renderMerge`. */
export interface MergeTemplate {
  readonly parts: readonly MergePart[];
  /** True when the text holds at least one merge field (else `plain` is the text for everyone). */
  readonly hasFields: boolean;
  /** The case-folded custom field names `{Field:…}` uses, each once. */
  readonly customKeys: readonly string[];
  /** The text with `{{`/`}}` unescaped and no field replaced: the text as sent when `hasFields` is false. */
  readonly plain: string;
}

/** The values of one recipient; absent ones are empty. */
export interface MergeValues {
  readonly contact: Readonly<Record<ContactField, string>> | undefined;
  /** Custom field entries by case-folded field name. */
  readonly entries: ReadonlyMap<string, string>;
}

const FIELD_AT = /\{(FirstName|LastName|Number|City|Zip|Email)\}|\{Field:([^{}]+)\}/y;

/** Reads a text's merge fields and escapes (see the grammar above). Pure; O(length). */
export function parseMerge(text: string): MergeTemplate {
  const parts: MergePart[] = [];
  const keys = new Set<string>();
  let literal = '';
  let plain = '';
  let hasFields = false;
  let i = 0;
  const n = text.length;
  while (i < n) {
    // Copy the run up to the next brace at once.
    let j = i;
    while (j < n) {
      const c = text.charCodeAt(j);
      if (c === 0x7b || c === 0x7d) break;
      j++;
    }
    if (j > i) {
      const run = text.slice(i, j);
      literal += run;
      plain += run;
      i = j;
      if (i >= n) break;
    }
    const ch = text[i]!;
    if (text[i + 1] === ch) {
      literal += ch;
      plain += ch;
      i += 2;
      continue;
    }
    if (ch === '{') {
      FIELD_AT.lastIndex = i;
      const m = FIELD_AT.exec(text);
      if (m) {
        if (literal !== '') parts.push(literal);
        literal = '';
        if (m[1] !== undefined) parts.push({ field: m[1] as ContactField });
        else {
          const key = caseKey(m[2]!);
          keys.add(key);
          parts.push({ custom: key });
        }
        hasFields = true;
        plain += m[0];
        i += m[0].length;
        continue;
      }
    }
    literal += ch;
    plain += ch;
    i += 1;
  }
  if (literal !== '') parts.push(literal);
  return { parts, hasFields, customKeys: [...keys], plain };
}

/** The text of a parsed template for one recipient's values (`undefined`: no contact, every field empty). */
export function renderMerge(t: MergeTemplate, values: MergeValues | undefined): string {
  if (!t.hasFields) return t.plain;
  let out = '';
  for (const p of t.parts) {
    if (typeof p === 'string') out += p;
    else if ('field' in p) out += values?.contact?.[p.field] ?? '';
    else out += values?.entries.get(p.custom) ?? '';
  }
  return out;
}
