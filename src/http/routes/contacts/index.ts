import { contactsConsent } from './consent.ts';
import { contactsCreate } from './create.ts';
import { contactsDelete } from './delete.ts';
import { contactsErase } from './erase.ts';
import { contactsFind } from './find.ts';
import { contactsImport } from './import.ts';
import { contactsIndex } from './list.ts';
import { contactsUpdate } from './update.ts';
import { contactsView } from './view.ts';

/** `/v1/contacts/…`: the account's contacts (API.md §10.2). */
export const contacts = [
  contactsIndex,
  contactsView,
  contactsFind,
  contactsCreate,
  contactsUpdate,
  contactsDelete,
  contactsImport,
  contactsConsent,
  contactsErase,
];
