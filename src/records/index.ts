import { readdirSync } from 'node:fs';
import { extname } from 'node:path';
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

// The modules of this folder that hold no resource's record: the shared primitives, the status
// vocabularies, and this index.
const SHARED_MODULES = new Set(['common', 'index', 'statuses']);
const MODULE_EXT = extname(new URL(import.meta.url).pathname);

/**
 * Every record module: each module of src/records but the shared ones, in file-name order (which
 * is the order of the OpenAPI document's components: src/http/openapi.ts makes a component of
 * each object schema they export). Discovered, not listed: a new resource's record module is
 * in the document as soon as its file exists (docs/ARCHITECTURE.md, "Adding a resource"). Works
 * from src/ (.ts, through tsx) and from dist/ (.js).
 */
export const RECORD_MODULES: readonly Readonly<Record<string, unknown>>[] = await Promise.all(
  readdirSync(new URL('.', import.meta.url))
    .filter(
      (file) => extname(file) === MODULE_EXT && !file.endsWith(`.d${MODULE_EXT}`) && !SHARED_MODULES.has(file.slice(0, -MODULE_EXT.length)),
    )
    .sort()
    .map(async (file) => (await import(new URL(file, import.meta.url).href)) as Readonly<Record<string, unknown>>),
);

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
