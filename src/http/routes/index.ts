import { numbersIndex } from './numbers/index.ts';
import { creditsBalance } from './credits/balance.ts';
import { singleScheduleMessages } from './sms/single-schedule-messages.ts';
import { contactsFind } from './contacts/find.ts';
import { groupsUpdate } from './groups/update.ts';
import { customContactFieldsUpdate } from './custom-contact-fields/update.ts';
import { customContactFieldsEntryUpdate } from './custom-contact-fields-entry/update.ts';
import { keywordReserve } from './keyword/reserve.ts';
import type { Operation } from './types.ts';

/** Every operation of the spec, in the spec's order. */
export const OPERATIONS: readonly Operation[] = [
  numbersIndex,
  creditsBalance,
  singleScheduleMessages,
  contactsFind,
  groupsUpdate,
  customContactFieldsUpdate,
  customContactFieldsEntryUpdate,
  keywordReserve,
];

/** The `Allow` value of a path (CONVENTIONS §5: reads also answer HEAD), or undefined for an unknown path. */
export function allowedMethods(path: string): string | undefined {
  const op = OPERATIONS.find((o) => o.path === path);
  if (!op) return undefined;
  return op.methods.flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m])).join(', ');
}
