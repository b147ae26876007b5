import type { FieldError } from './errors.ts';

/**
 * Field validation with the semantics and wording of CONVENTIONS §3 (Yii2's validators):
 * rules run in order, each field reports only its first error, optional rules skip empty values,
 * lengths count Unicode characters, integers may arrive as quoted digit strings.
 */

export type Rule =
  | { field: string; rule: 'required' }
  | { field: string; rule: 'string'; min?: number; max?: number }
  | { field: string; rule: 'integer' };

/** Request body fields after parsing: any JSON value per key. */
export type Input = Readonly<Record<string, unknown>>;

// Labels are asked for on every validation of every request; the field names are a fixed set.
const labels = new Map<string, string>();

/** `fname` → `Fname`, `AutoreplyMessage` → `Autoreply Message`, `Status_Id` → `Status Id`. */
export function fieldLabel(field: string): string {
  let label = labels.get(field);
  if (label === undefined) {
    label = field
      .replace(/(?<![A-Z])[A-Z]/g, ' $&')
      .replace(/[-_.]/g, ' ')
      .trim()
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

/** Blank for `required`: empty, or a string of whitespace only. */
export function isBlank(value: unknown): boolean {
  return typeof value === 'string' ? value.trim() === '' : isEmpty(value);
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

const INTEGER_STRING = /^[+-]?\d+$/;

/**
 * Reads an integer the way CONVENTIONS §3 accepts it: a JSON integer, or a string of an optional
 * sign and digits. Returns its canonical decimal text (`"+007"` → `"7"`), or null when it is not one.
 */
export function canonicalInteger(value: unknown): string | null {
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value).toString() : null;
  if (typeof value === 'string' && INTEGER_STRING.test(value)) return BigInt(value).toString();
  return null;
}

/** A canonical integer as a database id, or null when no row can have it (not a positive safe integer). */
export function toId(canonical: string): number | null {
  if (canonical.length > 15) return null;
  const n = Number(canonical);
  return n >= 1 && Number.isSafeInteger(n) ? n : null;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * Runs `rules` over `input` and returns the first error of each field, in the order the fields
 * first failed (Yii2's getFirstErrors order). An empty list means the input is valid.
 */
export function validate(input: Input, rules: readonly Rule[]): FieldError[] {
  const failed = new Map<string, string>();
  for (const r of rules) {
    if (failed.has(r.field)) continue; // skipOnError
    const value = input[r.field];
    const label = fieldLabel(r.field);
    if (r.rule === 'required') {
      if (isBlank(value)) failed.set(r.field, `${label} cannot be blank.`);
      continue;
    }
    if (isEmpty(value)) continue; // skipOnEmpty
    if (r.rule === 'integer') {
      if (canonicalInteger(value) === null) failed.set(r.field, `${label} must be an integer.`);
    } else if (typeof value !== 'string') {
      failed.set(r.field, `${label} must be a string.`);
    } else {
      const length = characterLength(value);
      if (r.min !== undefined && length < r.min) {
        failed.set(r.field, `${label} should contain at least ${plural(r.min, 'character')}.`);
      } else if (r.max !== undefined && length > r.max) {
        failed.set(r.field, `${label} should contain at most ${plural(r.max, 'character')}.`);
      }
    }
  }
  return [...failed].map(([field, message]) => ({ field, message }));
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
