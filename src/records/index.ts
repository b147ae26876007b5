import type { TimeFormat } from '../lib/time.ts';
import * as contacts from './contacts.ts';
import * as credits from './credits.ts';
import * as customFields from './custom-fields.ts';
import * as groups from './groups.ts';
import * as keywords from './keywords.ts';
import * as media from './media.ts';
import * as messages from './messages.ts';
import * as numbers from './numbers.ts';
import * as scheduledMessages from './scheduled-messages.ts';
import * as webhooks from './webhooks.ts';

/**
 * The records of the API (docs/API.md §9), one module per resource: its TypeBox schemas (the
 * record, and the bodies of the operations that write it), the row type and columns it is
 * rendered from, and its row → record mapper. src/records/common.ts holds the shared primitives
 * and src/records/statuses.ts the status and type vocabularies.
 */
export { contacts, credits, customFields, groups, keywords, media, messages, numbers, scheduledMessages, webhooks };

/**
 * Every record module, in the order of the OpenAPI document's components (src/http/openapi.ts
 * makes a component of each object schema they export). A new record module is added here.
 */
export const RECORD_MODULES: readonly Readonly<Record<string, unknown>>[] = [numbers, credits, scheduledMessages, contacts, groups, customFields, keywords, messages, media, webhooks];

/** Every record mapper for one time zone: for the demo listing and tests (routes use their own). */
export function recordMappers(time: TimeFormat) {
  return {
    number: numbers.numberRecord(time),
    scheduledMessage: scheduledMessages.scheduledMessageRecord(time),
    contact: contacts.contactRecord(time),
    group: groups.groupRecord(time),
    customField: customFields.customFieldRecord(time),
    entry: customFields.entryRecord(time),
    keywordReservation: keywords.keywordReservationRecord,
  };
}
export type RecordMappers = ReturnType<typeof recordMappers>;
