import { inTransaction, type Store } from '../store/db.ts';
import * as contacts from '../store/repositories/contacts.ts';
import * as fields from '../store/repositories/custom-fields.ts';
import { isUniqueViolation } from '../store/errors.ts';
import { NotFoundError, ValidationFailedError, type FieldError } from './errors.ts';
import type { CustomFieldRow, EntryRow } from './records.ts';
import { canonicalInteger, messages, toId, validate, type Input, type Rule } from './validation.ts';
import { nowSeconds } from './time.ts';

/** Spec "PUT /v1/custom-contact-fields/update": fname required, 3 to 64 characters. */
const FIELD_RULES: readonly Rule[] = [
  { field: 'fname', rule: 'required' },
  { field: 'fname', rule: 'string', min: 3, max: 64 },
];

/** Spec "POST or PUT /v1/custom-contact-fields-entry/update". */
const ENTRY_RULES: readonly Rule[] = [
  { field: 'frfield', rule: 'required' },
  { field: 'frcontact', rule: 'required' },
  { field: 'fvalue', rule: 'required' },
  { field: 'frfield', rule: 'integer' },
  { field: 'frcontact', rule: 'integer' },
  { field: 'fvalue', rule: 'string', max: 255 },
];

/**
 * Renames a custom field.
 * @throws NotFoundError when the account has no field `id`; ValidationFailedError on a bad fname.
 */
export async function renameCustomField(store: Store, accountId: number, id: string, input: Input): Promise<CustomFieldRow> {
  const fieldId = toId(id);
  return inTransaction(store, async (tx) => {
    if (fieldId === null || !(await fields.customFieldExists(tx, accountId, fieldId))) throw new NotFoundError(id);
    const errors = validate(input, FIELD_RULES);
    if (errors.length > 0) throw new ValidationFailedError(errors);
    await fields.renameCustomField(tx, accountId, fieldId, input.fname as string, nowSeconds());
    return (await fields.findCustomField(tx, accountId, fieldId))!;
  });
}

/**
 * Sets an entry's field, contact and value. `frfield` and `frcontact` must be the account's own
 * custom field and contact (422 "… is invalid." otherwise, Yii2's exist rule); one entry per
 * field × contact (422 on frfield when another entry already holds the pair).
 * @throws NotFoundError when the account has no entry `id`; ValidationFailedError on bad input.
 */
export async function updateEntry(store: Store, accountId: number, id: string, input: Input): Promise<EntryRow> {
  const entryId = toId(id);
  return inTransaction(store, async (tx) => {
    if (entryId === null || !(await fields.findEntry(tx, accountId, entryId))) throw new NotFoundError(id);
    const errors: FieldError[] = validate(input, ENTRY_RULES);
    const failed = new Set(errors.map((e) => e.field));
    const fieldId = failed.has('frfield') ? null : toId(canonicalInteger(input.frfield)!);
    const contactId = failed.has('frcontact') ? null : toId(canonicalInteger(input.frcontact)!);
    if (!failed.has('frfield') && (fieldId === null || !(await fields.customFieldExists(tx, accountId, fieldId)))) {
      errors.push({ field: 'frfield', message: messages.invalid('frfield') });
    }
    if (!failed.has('frcontact') && (contactId === null || !(await contacts.contactExists(tx, accountId, contactId)))) {
      errors.push({ field: 'frcontact', message: messages.invalid('frcontact') });
    }
    // Every field reports its first error (CONVENTIONS §3): when only fvalue failed, the update
    // below never runs, so an occupied field × contact pair must be looked up to be reported too.
    if (errors.length > 0 && !errors.some((e) => e.field === 'frfield' || e.field === 'frcontact')) {
      if (await fields.entryPairTaken(tx, fieldId!, contactId!, entryId)) {
        errors.push({ field: 'frfield', message: messages.comboTaken(['frfield', 'frcontact'], [String(fieldId), String(contactId)]) });
      }
    }
    if (errors.length > 0) throw new ValidationFailedError(errors);
    const change = { customFieldId: fieldId!, contactId: contactId!, entry: input.fvalue as string };
    try {
      await fields.updateEntry(tx, accountId, entryId, change, nowSeconds());
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      throw new ValidationFailedError([
        { field: 'frfield', message: messages.comboTaken(['frfield', 'frcontact'], [String(fieldId), String(contactId)]) },
      ]);
    }
    return (await fields.findEntry(tx, accountId, entryId))!;
  });
}
