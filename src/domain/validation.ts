import type { CountryCode } from 'libphonenumber-js';
import type { FieldError } from './errors.ts';
import { normalisePhone, type NormalisedPhone } from './phone.ts';

/**
 * Field validation with the semantics and wording of API.md §4.4 (Yii2's
 * validators): rules run in order, each field reports only its first error, optional rules skip
 * empty values, lengths count Unicode characters, integers may arrive as quoted digit strings.
 *
 * `validate` needs no database: services run it before opening their transaction, then add the
 * errors of the rules that do (Yii2 `exist` and `unique`) after the record lookup, so a missing
 * record is still a 404 before any 422 (API.md §1.5). It returns the typed values of the fields
 * that passed, so services never cast request bodies.
 */

export type Rule =
  | { readonly field: string; readonly rule: 'required' }
  | { readonly field: string; readonly rule: 'string'; readonly min?: number; readonly max?: number }
  /** An integer, optionally bounded: `must be no less than {min}.` / `must be no greater than {max}.` */
  | { readonly field: string; readonly rule: 'integer'; readonly min?: number; readonly max?: number }
  /** An integer from a fixed set (`OptedOut` 0 or 1): `{label} is invalid.` outside it (API.md §4.4). */
  | { readonly field: string; readonly rule: 'in'; readonly values: readonly number[] }
  /** Yii2 EmailValidator: `{label} is not a valid email address.` */
  | { readonly field: string; readonly rule: 'email' }
  /** A real calendar date `YYYY-MM-DD`: `The format of {label} is invalid.` */
  | { readonly field: string; readonly rule: 'date' }
  /** A phone number in any common writing (as contacts/find): `{label} is invalid.` */
  | { readonly field: string; readonly rule: 'phone' }
  /** A list of integer ids, optionally 1..max long: `{label} is invalid.` */
  | { readonly field: string; readonly rule: 'ids'; readonly max?: number };

/** Request body fields after parsing: any JSON value per key. */
export type Input = Readonly<Record<string, unknown>>;

type RuleValue<R> = R extends { rule: 'string' | 'email' | 'date' }
  ? string
  : R extends { rule: 'integer' | 'in' }
    ? number
    : R extends { rule: 'phone' }
      ? NormalisedPhone
      : R extends { rule: 'ids' }
        ? number[]
        : never;

/** The typed values of a rule list: one optional property per field, typed by its rules. */
export type Values<Rs extends readonly Rule[]> = {
  [F in Rs[number]['field']]?: RuleValue<Extract<Rs[number], { field: F }>>;
};

/** What `validate` found: the first error of each failed field, and the values of the others. */
export interface Checked<Rs extends readonly Rule[]> {
  errors: FieldError[];
  /** Converted values of the fields that passed and were not empty (integers as numbers, phones normalised). */
  values: Values<Rs>;
  /** True when `field` failed a rule. */
  failed(field: Rs[number]['field']): boolean;
}

/** Declares a rule list keeping its field names as literal types (for `Values`). */
export function defineRules<const Rs extends readonly Rule[]>(rules: Rs): Rs {
  return rules;
}

// Labels are asked for on every validation of every request; the field names are a fixed set.
const labels = new Map<string, string>();

/**
 * A field's label, as Yii2 derives it from the attribute name (API.md §4.4): a space before an
 * upper-case letter that follows a lower-case one, or that follows a letter or digit and precedes
 * a lower-case one, and before a run of digits; `-`, `_` and `.` become spaces; then lower case
 * with each word capitalised. `fname` → `Fname`, `AutoreplyMessage` → `Autoreply Message`,
 * `Status_Id` → `Status Id`, `RRule` → `R Rule`.
 */
export function fieldLabel(field: string): string {
  let label = labels.get(field);
  if (label === undefined) {
    label = field
      .replace(/(?<=\p{Ll})\p{Lu}|(?<=[\p{L}\d])\p{Lu}(?=\p{Ll})|\d+/gu, ' $&')
      .replace(/[-_.]/g, ' ')
      .trim()
      .toLowerCase()
      .split(/\s+/)
      .map((w) => (w === '' ? w : w[0]!.toUpperCase() + w.slice(1)))
      .join(' ');
    if (labels.size >= 1000) labels.clear();
    labels.set(field, label);
  }
  return label;
}

/** Yii2 `isEmpty`: null/undefined, '' and [] (a JSON `{}` decodes to [] in PHP, so it counts too). */
export function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === 'object') return Object.keys(value).length === 0;
  return false;
}

// PHP trim()'s default characters: space, \t, \n, \r, \0 and \x0B (not \f, a no-break space or U+3000).
const PHP_TRIM_ONLY = /^[ \t\n\r\0\x0B]*$/;

/**
 * Blank for `required` (API.md §4.4): null, "", [] or a string made only of PHP's trim
 * characters (space, `\t`, `\n`, `\r`, `\0`, `\x0B`). A no-break space, `\f` or U+3000 is not blank.
 */
export function isBlank(value: unknown): boolean {
  return typeof value === 'string' ? PHP_TRIM_ONLY.test(value) : isEmpty(value);
}

/** Length in Unicode code points (what mb_strlen counts), not UTF-16 units or bytes. */
export function characterLength(value: string): number {
  let n = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < value.length) {
      const d = value.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

// Yii2's integerPattern /^[+-]?\d+$/, where PCRE's `$` also matches before one final "\n".
const INTEGER_STRING = /^[+-]?\d+\n?$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * JSON numbers whose source text says more than the parsed JS number (API.md §4.5): the body
 * parser records, per container (object or array) and key, the exact canonical text of an integer
 * literal beyond 2^53 that still fits 64 bits, or of a float PHP prints as an integer, or null for a
 * number that is no integer although JS reads one (written with an exponent such as `1e+20`, an
 * integer literal beyond 64 bits, a float PHP prints in exponent form). Ordinary numbers are not
 * recorded, so the common case costs nothing.
 */
const jsonNumbers = new WeakMap<object, Map<string, string | null>>();

/**
 * Records what a JSON number really was (see `jsonNumbers`), for `canonicalInteger`. Used by the
 * JSON body parser (src/http/plugins/body.ts); API.md §8.2.
 */
export function recordJsonNumber(container: object, key: string, canonical: string | null | undefined): void {
  let m = jsonNumbers.get(container);
  if (canonical === undefined) {
    m?.delete(key);
    return;
  }
  if (m === undefined) jsonNumbers.set(container, (m = new Map<string, string | null>()));
  m.set(key, canonical);
}

/**
 * Reads an integer the way Yii2's IntegerValidator accepts it (API.md §4.4, §4.5): a JSON integer,
 * or a string matching `/^[+-]?\d+$/` (where `$` also matches before one final `\n`: `"1\n"` passes,
 * `" 1"` does not), within 64 bits. A JSON number written with an exponent (`1e+20`, `1e2`), or
 * beyond 64 bits, is not an integer; so is a JS number that is not a safe integer when nothing is
 * known of its source text. Pass the `container` and `key` the value came from so the JSON source
 * text recorded by the body parser is used.
 * Returns the canonical decimal text (`"+007"` → `"7"`), or null when it is not an integer.
 */
export function canonicalInteger(value: unknown, container?: object, key?: string): string | null {
  if (typeof value === 'number') {
    const recorded = container === undefined ? undefined : jsonNumbers.get(container)?.get(key!);
    if (recorded !== undefined) return recorded;
    return Number.isSafeInteger(value) ? String(value === 0 ? 0 : value) : null;
  }
  if (typeof value === 'string' && INTEGER_STRING.test(value)) {
    const n = BigInt(value.endsWith('\n') ? value.slice(0, -1) : value);
    return n < INT64_MIN || n > INT64_MAX ? null : n.toString();
  }
  return null;
}

/** A canonical integer as a database id, or null when no row can have it (not a positive safe integer). */
export function toId(canonical: string): number | null {
  if (canonical.length > 15) return null;
  const n = Number(canonical);
  return n >= 1 && Number.isSafeInteger(n) ? n : null;
}

/** An integer value as a number (API.md §4.4), or null when it is not an integer. */
function integerValue(value: unknown, container?: object, key?: string): number | null {
  const text = canonicalInteger(value, container, key);
  return text === null ? null : Number(text);
}

/** A count in a message, with a comma between thousands as Yii2 writes it (`1,600`; API.md §4.4). */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

function plural(n: number, word: string): string {
  return `${formatCount(n)} ${word}${n === 1 ? '' : 's'}`;
}

// Yii2 EmailValidator's default pattern (no IDN, no display name).
const EMAIL =
  /^[a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?\.)+[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?$/;

/** True for a real calendar date written `YYYY-MM-DD` (no 2026-02-30). */
export function isCalendarDate(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12 || d < 1) return false;
  return d <= new Date(Date.UTC(y, mo, 0)).getUTCDate() && y >= 1;
}

/** Options of `validate`: the region that national phone numbers are read in. */
export interface ValidateOptions {
  region?: CountryCode;
}

/**
 * Runs `rules` over `input` and returns the first error of each field, in the order the fields
 * first failed (Yii2's getFirstErrors order), with the typed values of the fields that passed.
 */
export function validate<const Rs extends readonly Rule[]>(input: Input, rules: Rs, options: ValidateOptions = {}): Checked<Rs> {
  const failed = new Map<string, string>();
  const values: Record<string, unknown> = {};
  for (const r of rules) {
    if (failed.has(r.field)) continue; // skipOnError
    const value = input[r.field];
    const label = fieldLabel(r.field);
    const fail = (message: string) => {
      failed.set(r.field, message);
      delete values[r.field];
    };
    if (r.rule === 'required') {
      if (isBlank(value)) fail(`${label} cannot be blank.`);
      continue;
    }
    if (isEmpty(value)) continue; // skipOnEmpty
    switch (r.rule) {
      case 'integer': {
        const n = integerValue(value, input, r.field);
        if (n === null) fail(`${label} must be an integer.`);
        else if (r.min !== undefined && n < r.min) fail(`${label} must be no less than ${formatCount(r.min)}.`);
        else if (r.max !== undefined && n > r.max) fail(`${label} must be no greater than ${formatCount(r.max)}.`);
        else values[r.field] = n;
        break;
      }
      case 'in': {
        const n = integerValue(value, input, r.field);
        if (n === null) fail(`${label} must be an integer.`);
        else if (!r.values.includes(n)) fail(`${label} is invalid.`);
        else values[r.field] = n;
        break;
      }
      case 'ids': {
        const list = Array.isArray(value) ? value.map((v, i) => integerValue(v, value, String(i))) : null;
        if (list === null || list.some((n) => n === null || !Number.isSafeInteger(n)) || (r.max !== undefined && list.length > r.max)) {
          fail(`${label} is invalid.`);
        } else {
          values[r.field] = [...new Set(list as number[])];
        }
        break;
      }
      case 'phone': {
        const phone = typeof value === 'string' || typeof value === 'number' ? normalisePhone(String(value), options.region ?? 'US') : null;
        if (phone === null) fail(`${label} is invalid.`);
        else values[r.field] = phone;
        break;
      }
      default: {
        // string, email and date are all strings first.
        if (typeof value !== 'string') {
          fail(`${label} must be a string.`);
          break;
        }
        // PostgreSQL cannot store U+0000 in text: refused alike on every store (API.md §4.4),
        // never a driver error (a 500) on one store and a stored value on the other.
        if (value.includes('\u0000')) {
          fail(`${label} is invalid.`);
          break;
        }
        if (r.rule === 'email') {
          if (!EMAIL.test(value)) fail(`${label} is not a valid email address.`);
          else values[r.field] = value;
          break;
        }
        if (r.rule === 'date') {
          if (!isCalendarDate(value)) fail(`The format of ${label} is invalid.`);
          else values[r.field] = value;
          break;
        }
        const length = characterLength(value);
        if (r.min !== undefined && length < r.min) fail(`${label} should contain at least ${plural(r.min, 'character')}.`);
        else if (r.max !== undefined && length > r.max) fail(`${label} should contain at most ${plural(r.max, 'character')}.`);
        else values[r.field] = value;
      }
    }
  }
  return {
    errors: [...failed].map(([field, message]) => ({ field, message })),
    values: values as Values<Rs>,
    failed: (field) => failed.has(field),
  };
}

/** Messages of rules that need the database (Yii2 `exist`, `in`, `unique`). */
export const messages = {
  invalid: (field: string) => `${fieldLabel(field)} is invalid.`,
  taken: (field: string, value: string) => `${fieldLabel(field)} "${value}" has already been taken.`,
  comboTaken: (fields: string[], values: string[]) =>
    `The combination "${values.join('"-"')}" of ${joinLabels(fields)} has already been taken.`,
};

function joinLabels(fields: string[]): string {
  const labels = fields.map(fieldLabel);
  if (labels.length < 2) return labels.join('');
  return `${labels.slice(0, -1).join(', ')} and ${labels[labels.length - 1]}`;
}
