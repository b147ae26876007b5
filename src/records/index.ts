import type { TimeFormat } from '../lib/time.ts';
import { contactRecord } from './contacts.ts';
import { customFieldRecord, entryRecord } from './custom-fields.ts';
import { groupRecord } from './groups.ts';
import { keywordReservationRecord } from './keywords.ts';
import { numberRecord } from './numbers.ts';
import { scheduledMessageRecord } from './scheduled-messages.ts';

/** Every record mapper for one time zone: for the demo listing and tests (routes use their own). */
export function recordMappers(time: TimeFormat) {
  return {
    number: numberRecord(time),
    scheduledMessage: scheduledMessageRecord(time),
    contact: contactRecord(time),
    group: groupRecord(time),
    customField: customFieldRecord(time),
    entry: entryRecord(time),
    keywordReservation: keywordReservationRecord,
  };
}
export type RecordMappers = ReturnType<typeof recordMappers>;
