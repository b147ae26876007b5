import { allowOf, type Operation } from '../operation.ts';
import { contacts } from './contacts/index.ts';
import { credits } from './credits/index.ts';
import { customContactFieldsEntry } from './custom-contact-fields-entry/index.ts';
import { customContactFields } from './custom-contact-fields/index.ts';
import { groups } from './groups/index.ts';
import { keyword } from './keyword/index.ts';
import { numbers } from './numbers/index.ts';
import { sms } from './sms/index.ts';

/**
 * The registry: every controller of /v1, each listing its actions. A new resource adds its own
 * folder and one line here.
 */
export const CONTROLLERS: Readonly<Record<string, readonly Operation[]>> = {
  numbers,
  credits,
  sms,
  contacts,
  groups,
  'custom-contact-fields': customContactFields,
  'custom-contact-fields-entry': customContactFieldsEntry,
  keyword,
};

/** Every operation of the API. */
export const OPERATIONS: readonly Operation[] = Object.values(CONTROLLERS).flat();

/** The `Allow` value of a path (CONVENTIONS §5: GET also answers HEAD), or undefined for an unknown path. */
export function allowedMethods(path: string): string | undefined {
  return allowOf(OPERATIONS, path);
}
