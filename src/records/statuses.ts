/**
 * API.md's status and type tables ("Number status", "Scheduled message status", "Type values"):
 * the domain's vocabulary, rendered into records by src/records.
 */

/** API.md §9.2. */
export const NUMBER_STATUSES: Readonly<Record<number, string>> = {
  0: 'Active',
  1: 'Inactive',
  301: 'Temporarily blocked.',
  302: 'Permanently blocked.',
};
export const NUMBER_STATUS_ACTIVE = 0;

/** API.md §9.10. */
export const MESSAGE_STATUSES: Readonly<Record<number, string>> = {
  1: 'Pending',
  2: 'Action Required',
  3: 'Approved and Scheduled',
};

/** API.md §9. */
export const MESSAGE_TYPES: Readonly<Record<number, string>> = { 1: 'SMS', 2: 'MMS' };
export const MESSAGE_TYPE_MMS = 2;

/** API.md §9.11 Status_Id → Status_Description (the message log). */
export const LOG_STATUSES: Readonly<Record<number, string>> = {
  1: 'Queued',
  2: 'Sent',
  3: 'Delivered',
  4: 'Undelivered',
  5: 'Failed',
  6: 'Rejected',
  7: 'Received',
};
/** Log statuses by name (API.md §10.6). */
export const LOG_STATUS = Object.freeze({ QUEUED: 1, SENT: 2, DELIVERED: 3, UNDELIVERED: 4, FAILED: 5, REJECTED: 6, RECEIVED: 7 } as const);

/** API.md §9.11 Direction, as stored (1, 2) and shown. */
export const DIRECTIONS: Readonly<Record<number, 'Outbound' | 'Inbound'>> = { 1: 'Outbound', 2: 'Inbound' };
export const DIRECTION_OUTBOUND = 1;
export const DIRECTION_INBOUND = 2;

/** The webhook events of the docs/API.md §12 table, in its order. */
export const EVENT_TYPES = [
  'message.sent',
  'message.delivered',
  'message.undelivered',
  'message.failed',
  'message.rejected',
  'message.received',
  'contact.opted_out',
  'contact.opted_in',
  'scheduled.action_required',
  'link.clicked',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
