import { inTransaction, type Store } from '../store/db.ts';
import type { Db } from '../store/types.ts';
import * as contacts from '../store/repositories/contacts.ts';
import * as fields from '../store/repositories/custom-fields.ts';
import type { CustomFieldRow, EntryRow } from '../records/custom-fields.ts';
import { UniqueViolation } from '../store/errors.ts';
import { findOr404, loadOr404 } from './find.ts';
import { ValidationFailedError } from './errors.ts';
import { defineRules, messages, validate, type Checked, type Input } from './validation.ts';
import { nowSeconds } from '../lib/time.ts';
import { caseKey } from './text.ts';

/** API.md §9: fname required, 3 to 64 characters. */
const FIELD_RULES = defineRules([
  { field: 'fname', rule: 'required' },
  { field: 'fname', rule: 'string', min: 3, max: 64 },
]);

/** API.md §9. */
const ENTRY_RULES = defineRules([
  { field: 'frfield', rule: 'required' },
  { field: 'frcontact', rule: 'required' },
  { field: 'fvalue', rule: 'required' },
  { field: 'frfield', rule: 'integer' },
  { field: 'frcontact', rule: 'integer' },
  { field: 'fvalue', rule: 'string', max: 255 },
]);

/** The rules of the entry list's filters: both optional integers (API.md §10.4). */
const ENTRY_FILTER_RULES = defineRules([
  { field: 'frfield', rule: 'integer' },
  { field: 'frcontact', rule: 'integer' },
]);

/** `Fname "{value as sent}" has already been taken.` (API.md §4.4). */
function fnameTaken(fname: string): ValidationFailedError {
  return new ValidationFailedError([{ field: 'fname', message: messages.taken('fname', fname) }]);
}

/**
 * Adds a custom field to the account. `fname` is required, 3 to 64 characters, and unique in the
 * account compared case-insensitively (caseKey); the unique index on the case-folded name decides
 * between two creates racing for one name.
 * @throws ValidationFailedError on a bad or taken fname.
 */
export async function createCustomField(store: Store, accountId: number, input: Input): Promise<CustomFieldRow> {
  const checked = validate(input, FIELD_RULES);
  return inTransaction(store, async (tx) => {
    const errors = [...checked.errors];
    const fname = checked.values.fname;
    if (fname !== undefined && (await fields.customFieldNameTaken(tx, accountId, caseKey(fname)))) {
      errors.push({ field: 'fname', message: messages.taken('fname', fname) });
    }
    if (errors.length > 0) throw new ValidationFailedError(errors);
    let id: number;
    try {
      id = await fields.insertCustomField(tx, accountId, fname!, caseKey(fname!), nowSeconds());
    } catch (err) {
      if (!(err instanceof UniqueViolation)) throw err;
      throw fnameTaken(fname!);
    }
    return (await fields.findCustomField(tx, accountId, id))!;
  });
}

/**
 * Renames a custom field. The new name follows create's rules; keeping the field's own name (in
 * any case) is not a conflict.
 * @throws NotFoundError when the account has no field `id`; ValidationFailedError on a bad or taken fname.
 */
export async function renameCustomField(store: Store, accountId: number, id: string, input: Input): Promise<CustomFieldRow> {
  const checked = validate(input, FIELD_RULES);
  return inTransaction(store, async (tx) => {
    const fieldId = await findOr404(id, (n) => fields.customFieldExists(tx, accountId, n));
    const errors = [...checked.errors];
    const fname = checked.values.fname;
    if (fname !== undefined && (await fields.customFieldNameTaken(tx, accountId, caseKey(fname), fieldId))) {
      errors.push({ field: 'fname', message: messages.taken('fname', fname) });
    }
    if (errors.length > 0) throw new ValidationFailedError(errors);
    try {
      await fields.renameCustomField(tx, accountId, fieldId, fname!, caseKey(fname!), nowSeconds());
    } catch (err) {
      // Names are unique per account, compared case-insensitively (API.md §10.4): the index
      // is the final arbiter when another request took the name since the check above.
      if (!(err instanceof UniqueViolation)) throw err;
      throw fnameTaken(fname!);
    }
    return (await fields.findCustomField(tx, accountId, fieldId))!;
  });
}

/** How many custom fields the account has (custom-contact-fields/index). */
export function countCustomFields(store: Store, accountId: number): Promise<number> {
  return fields.countCustomFields(store.db, accountId);
}

/** One page of the account's custom fields by Id (`limit` rows from `offset`), each with its entries. */
export function listCustomFields(store: Store, accountId: number, limit: number, offset: number): Promise<CustomFieldRow[]> {
  return fields.listCustomFields(store.db, accountId, limit, offset);
}

/**
 * The account's custom field `id` with its entries.
 * @throws NotFoundError `Object not found: {id}` when the account has no such field.
 */
export async function viewCustomField(store: Store, accountId: number, id: string): Promise<CustomFieldRow> {
  return loadOr404(id, (n) => fields.findCustomField(store.db, accountId, n));
}

/**
 * Deletes the account's custom field `id`; its entries go with it (foreign key cascade).
 * @throws NotFoundError `Object not found: {id}` when the account has no such field.
 */
export async function deleteCustomField(store: Store, accountId: number, id: string): Promise<void> {
  // One transaction: its audit entry commits with it (API.md §15.5).
  await inTransaction(store, (tx) => findOr404(id, (n) => fields.deleteCustomField(tx, accountId, n)));
}

/** A positive safe integer id, or null when no row can have it. */
function rowId(n: number | undefined): number | null {
  return n !== undefined && n >= 1 && Number.isSafeInteger(n) ? n : null;
}

/** A body value quoted as the client sent it (API.md §4.5): a JSON integer 4 is written 4. */
function asSent(value: unknown): string {
  return typeof value === 'string' ? value : String(value);
}

/** Yii2's combination message on frfield, quoting frfield and frcontact as sent. */
function comboTaken(input: Input) {
  return { field: 'frfield', message: messages.comboTaken(['frfield', 'frcontact'], [asSent(input.frfield), asSent(input.frcontact)]) };
}

/**
 * The database rules of an entry write (Yii2 `exist` on frfield and frcontact, then `unique` on
 * the pair), appended to the errors of the pure rules: frfield and frcontact must be the account's
 * own custom field and contact; the pair must not be held by another entry. The pair is looked up
 * only when another error will stop the write anyway (every field reports its first error,
 * API.md §4.4); otherwise the unique index reports it on the write.
 */
async function entryErrors(tx: Db, accountId: number, input: Input, checked: Checked<typeof ENTRY_RULES>, exceptId: number) {
  const errors = [...checked.errors];
  const fieldId = rowId(checked.values.frfield);
  const contactId = rowId(checked.values.frcontact);
  if (!checked.failed('frfield') && (fieldId === null || !(await fields.customFieldExists(tx, accountId, fieldId)))) {
    errors.push({ field: 'frfield', message: messages.invalid('frfield') });
  }
  if (!checked.failed('frcontact') && (contactId === null || !(await contacts.contactExists(tx, accountId, contactId)))) {
    errors.push({ field: 'frcontact', message: messages.invalid('frcontact') });
  }
  if (errors.length > 0 && !errors.some((e) => e.field === 'frfield' || e.field === 'frcontact')) {
    if (await fields.entryPairTaken(tx, accountId, fieldId!, contactId!, exceptId)) errors.push(comboTaken(input));
  }
  return { errors, change: { customFieldId: fieldId!, contactId: contactId!, entry: checked.values.fvalue! } };
}

/**
 * Adds an entry: `frfield`, `frcontact` and `fvalue` with the update's rules, one entry per
 * field × contact (422 on frfield with Yii2's combination message, values quoted as sent).
 * @throws ValidationFailedError on bad input.
 */
export async function createEntry(store: Store, accountId: number, input: Input): Promise<EntryRow> {
  const checked = validate(input, ENTRY_RULES);
  return inTransaction(store, async (tx) => {
    const { errors, change } = await entryErrors(tx, accountId, input, checked, 0);
    if (errors.length > 0) throw new ValidationFailedError(errors);
    let id: number;
    try {
      id = await fields.insertEntry(tx, accountId, change.customFieldId, change.contactId, change.entry, nowSeconds());
    } catch (err) {
      if (!(err instanceof UniqueViolation)) throw err;
      throw new ValidationFailedError([comboTaken(input)]);
    }
    return (await fields.findEntry(tx, accountId, id))!;
  });
}

/**
 * Sets an entry's field, contact and value. `frfield` and `frcontact` must be the account's own
 * custom field and contact (422 "… is invalid." otherwise, Yii2's exist rule); one entry per
 * field × contact (422 on frfield when another entry already holds the pair, values quoted as sent).
 * @throws NotFoundError when the account has no entry `id`; ValidationFailedError on bad input.
 */
export async function updateEntry(store: Store, accountId: number, id: string, input: Input): Promise<EntryRow> {
  const checked = validate(input, ENTRY_RULES);
  return inTransaction(store, async (tx) => {
    const entryId = await findOr404(id, (n) => fields.findEntry(tx, accountId, n));
    const { errors, change } = await entryErrors(tx, accountId, input, checked, entryId);
    if (errors.length > 0) throw new ValidationFailedError(errors);
    try {
      await fields.updateEntry(tx, accountId, entryId, change, nowSeconds());
    } catch (err) {
      if (!(err instanceof UniqueViolation)) throw err;
      throw new ValidationFailedError([comboTaken(input)]);
    }
    return (await fields.findEntry(tx, accountId, entryId))!;
  });
}

/** How many entries the account has that match `filter` (custom-contact-fields-entry/index; see entryFilter). */
export function countEntries(store: Store, accountId: number, filter: fields.EntryFilter): Promise<number> {
  return fields.countEntries(store.db, accountId, filter);
}

/** One page of the account's entries that match `filter`, by Id (`limit` rows from `offset`). */
export function listEntries(
  store: Store,
  accountId: number,
  filter: fields.EntryFilter,
  limit: number,
  offset: number,
): Promise<EntryRow[]> {
  return fields.listEntries(store.db, accountId, filter, limit, offset);
}

/**
 * The account's entry `id`.
 * @throws NotFoundError `Object not found: {id}` when the account has no such entry.
 */
export async function viewEntry(store: Store, accountId: number, id: string): Promise<EntryRow> {
  return loadOr404(id, (n) => fields.findEntry(store.db, accountId, n));
}

/**
 * Deletes the account's entry `id`.
 * @throws NotFoundError `Object not found: {id}` when the account has no such entry.
 */
export async function deleteEntry(store: Store, accountId: number, id: string): Promise<void> {
  await inTransaction(store, (tx) => findOr404(id, (n) => fields.deleteEntry(tx, accountId, n)));
}

/**
 * Reads the entry list's optional filters `frfield` and `frcontact` (query parameters; integers,
 * quoted or not). Returns the filter, or null when no row can match (an id that is not a positive
 * safe integer). Another account's id is a valid filter that simply matches nothing.
 * @throws ValidationFailedError `Frfield must be an integer.` / `Frcontact must be an integer.`
 */
export function entryFilter(query: Input): fields.EntryFilter | null {
  const checked = validate(query, ENTRY_FILTER_RULES);
  if (checked.errors.length > 0) throw new ValidationFailedError(checked.errors);
  const { frfield, frcontact } = checked.values;
  const customFieldId = frfield === undefined ? undefined : rowId(frfield);
  const contactId = frcontact === undefined ? undefined : rowId(frcontact);
  if (customFieldId === null || contactId === null) return null;
  return { customFieldId, contactId };
}
