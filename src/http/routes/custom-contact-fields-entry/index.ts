import { customContactFieldsEntryCreate } from './create.ts';
import { customContactFieldsEntryDelete } from './delete.ts';
import { customContactFieldsEntryIndex } from './list.ts';
import { customContactFieldsEntryUpdate } from './update.ts';
import { customContactFieldsEntryView } from './view.ts';

/** `/v1/custom-contact-fields-entry/…`: custom field values (API.md §10.4). */
export const customContactFieldsEntry = [
  customContactFieldsEntryIndex,
  customContactFieldsEntryView,
  customContactFieldsEntryCreate,
  customContactFieldsEntryUpdate,
  customContactFieldsEntryDelete,
];
