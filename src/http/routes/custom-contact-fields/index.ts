import { customContactFieldsCreate } from './create.ts';
import { customContactFieldsDelete } from './delete.ts';
import { customContactFieldsIndex } from './list.ts';
import { customContactFieldsUpdate } from './update.ts';
import { customContactFieldsView } from './view.ts';

/** `/v1/custom-contact-fields/…`: custom contact fields (API.md §10.4). */
export const customContactFields = [
  customContactFieldsIndex,
  customContactFieldsView,
  customContactFieldsCreate,
  customContactFieldsUpdate,
  customContactFieldsDelete,
];
