import type { CountryCode } from 'libphonenumber-js';
import type { Store } from '../store/db.ts';
import * as contacts from '../store/repositories/contacts.ts';
import { NotFoundError, ValidationFailedError } from './errors.ts';
import { normalisePhone } from './phone.ts';
import type { ContactRow } from './records.ts';
import { isBlank, messages } from './validation.ts';

/**
 * Finds the account's contact by phone number, in any common writing of it (`+15551234567`,
 * `15551234567`, `5551234567`, `(555) 123-4567` with region US).
 * @throws ValidationFailedError "Number cannot be blank." / "Number is invalid." (spec: valid phone number)
 * @throws NotFoundError `Object not found: {number as sent}` when the account has no such contact.
 */
export async function findContact(store: Store, accountId: number, number: string, region: CountryCode): Promise<ContactRow> {
  if (isBlank(number)) throw new ValidationFailedError([{ field: 'number', message: 'Number cannot be blank.' }]);
  const phone = normalisePhone(number, region);
  if (!phone) throw new ValidationFailedError([{ field: 'number', message: messages.invalid('number') }]);
  const row = await contacts.findContactByE164(store.db, accountId, phone.e164);
  if (!row) throw new NotFoundError(number);
  return row;
}
