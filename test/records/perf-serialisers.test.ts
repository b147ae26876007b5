/**
 * Compiled response serialisers (src/domain/records.ts, the routes' response schemas): Fastify
 * writes JSON bodies with a serialiser compiled from each record's schema. It writes only the
 * schema's properties, in the schema's order, with the schema's types, so a schema that drifted
 * from its mapper would silently reorder, coerce or drop fields. These tests hold every route's
 * schema to byte-for-byte equality with JSON.stringify of the mapper's output, on random rows
 * (any text, nulls, both kinds of mixed fields, empty and long id lists).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import Fastify from 'fastify';
import type { TSchema } from '@sinclair/typebox';
import { recordMappers } from '../../src/records/index.ts';
import { errorCodeRecord } from '../../src/records/error-codes.ts';
import { ERROR_CODES } from '../../src/domain/error-codes.ts';
import type { ContactRow } from '../../src/records/contacts.ts';
import type { CustomFieldRow, EntryRow } from '../../src/records/custom-fields.ts';
import type { GroupRow } from '../../src/records/groups.ts';
import type { KeywordReservationRow } from '../../src/records/keywords.ts';
import {
  numberLimitsRecord,
  numberUsageRecord,
  type NumberLimitsRow,
  type NumberRow,
  type NumberUsageRow,
} from '../../src/records/numbers.ts';
import type { ScheduledMessageRow } from '../../src/records/scheduled-messages.ts';
import { createTimeFormat } from '../../src/lib/time.ts';
import { subaccountRecord, usageRecord, type AccountRecordRow } from '../../src/records/accounts.ts';
import type { MediaRow, MmsTemplateRow } from '../../src/records/media.ts';
import { mediaRecord, mmsTemplateRecord } from '../../src/records/media.ts';
import { statsBucketRecord, type StatsBucketRow } from '../../src/records/message-stats.ts';
import { batchRecord, messageRecord } from '../../src/records/messages.ts';
import type { BatchRow, MessageRow } from '../../src/records/messages.ts';
import { OPERATIONS } from '../../src/http/routes/index.ts';
import { registerOperations } from '../../src/http/operation.ts';
import { EVENT_TYPES } from '../../src/records/statuses.ts';
import { deliveryRecord, webhookRecord, type DeliveryRow, type WebhookRow } from '../../src/records/webhooks.ts';
import { keyRecord, type KeyRow } from '../../src/records/keys.ts';
import { userRecord, type UserRow } from '../../src/records/users.ts';
import { auditEntryRecord, type AuditEntryRow } from '../../src/records/audit.ts';
import { ledgerEntryRecord, type LedgerEntryRow } from '../../src/records/credits.ts';
import { smsPreviewRecord } from '../../src/records/preview.ts';
import { conversationRecord } from '../../src/records/conversations.ts';
import { trackedLinkRecord, type LinkRow } from '../../src/records/links.ts';
import { accountSettingsRecord } from '../../src/records/account-settings.ts';
import { consentEntryRecord, type ConsentRow } from '../../src/records/consent.ts';
import { scheduledMessageWithRRuleRecord } from '../../src/records/scheduled-messages.ts';

const mappers = recordMappers(createTimeFormat('UTC'));

// Any UTF-16 text, lone surrogates and control characters included.
const text = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 40 });
const id = fc.integer({ min: 1, max: 2 ** 40 });
const epoch = fc.integer({ min: 0, max: 4_102_444_800 });
const ids = fc.array(id, { maxLength: 200 });

const numberRow: fc.Arbitrary<NumberRow> = fc.record({
  number: fc.stringMatching(/^[0-9]{3,15}$/),
  status_id: fc.constantFrom(0, 1, 301, 302),
  blocked_at: fc.option(epoch, { nil: null }),
});
const limit = fc.integer({ min: 0, max: 2_147_483_647 });
const numberLimitsRow: fc.Arbitrary<NumberLimitsRow> = fc.tuple(numberRow, limit, limit, limit).map(([n, perSecond, perDay, perMonth]) => ({
  ...n,
  max_per_second: perSecond,
  max_per_day: perDay,
  max_recipients_per_month: perMonth,
}));
const toNumberLimits = numberLimitsRecord(createTimeFormat('UTC'));
const numberUsageRow: fc.Arbitrary<NumberUsageRow> = fc.record({
  number: fc.stringMatching(/^[0-9]{3,15}$/),
  max_per_second: limit,
  max_per_day: limit,
  max_recipients_per_month: limit,
  messages_today: fc.nat(),
  recipients_this_month: fc.nat(),
});
const messageRow: fc.Arbitrary<ScheduledMessageRow> = fc.record({
  id,
  mobile_phone: text,
  message: text,
  scheduled_at: epoch,
  status_id: fc.constantFrom(1, 2, 3),
  type_id: fc.constantFrom(1, 2),
  mms_template_id: fc.option(id, { nil: null }),
  subject: text,
});
const contactRow: fc.Arbitrary<ContactRow> = fc.record({
  id,
  number: text,
  opted_out: fc.constantFrom(0, 1),
  first_name: text,
  last_name: text,
  birthday: fc.option(fc.constantFrom('1990-02-28', '0000-00-00'), { nil: null }),
  email: text,
  zip: text,
  city: text,
  created_at: epoch,
  updated_at: epoch,
  group_ids: ids,
  custom_field_ids: ids,
});
const groupRow: fc.Arbitrary<GroupRow> = fc.record({
  id,
  name: text,
  note: text,
  keyword_id: fc.integer({ min: 0, max: 2 ** 31 }),
  parent_id: fc.integer({ min: 0, max: 2 ** 31 }),
  created_at: epoch,
  updated_at: epoch,
  member_ids: ids,
});
const entryRow: fc.Arbitrary<EntryRow> = fc.record({
  id,
  custom_field_id: id,
  contact_id: id,
  entry: text,
  created_at: epoch,
  updated_at: epoch,
});
const customFieldRow: fc.Arbitrary<CustomFieldRow> = fc.record({
  id,
  name: text,
  created_at: epoch,
  updated_at: epoch,
  entries: fc.array(entryRow, { maxLength: 5 }),
});
const keywordRow: fc.Arbitrary<KeywordReservationRow> = fc.record({
  id,
  keyword: text,
  number: fc.stringMatching(/^[1-9][0-9]{4,14}$/),
  autoreply_message: text,
});

// API.md §10.6: the message log and send-group batches.
const logRow: fc.Arbitrary<MessageRow> = fc.record({
  id,
  direction: fc.constantFrom(1, 2),
  number: fc.stringMatching(/^[0-9]{3,15}$/),
  mobile_phone: fc.stringMatching(/^[0-9]{3,15}$/),
  message: text,
  type_id: fc.constantFrom(1, 2),
  status_id: fc.integer({ min: 1, max: 7 }),
  segments: fc.integer({ min: 1, max: 11 }),
  credits: fc.integer({ min: 0, max: 2 ** 40 }),
  batch_id: fc.option(id, { nil: null }),
  scheduled_message_id: fc.option(id, { nil: null }),
  error_code: fc.constantFrom('', 'UNDELIV', 'OPTED_OUT'),
  created_at: epoch,
  sent_at: fc.option(epoch, { nil: null }),
  delivered_at: fc.option(epoch, { nil: null }),
});
const batchRow: fc.Arbitrary<BatchRow> = fc.record({
  id,
  group_id: id,
  number: fc.stringMatching(/^[0-9]{3,15}$/),
  message: text,
  type_id: fc.constantFrom(1, 2),
  recipients: fc.nat(),
  skipped: fc.nat(),
  credits: fc.integer({ min: 0, max: 2 ** 40 }),
  created_at: epoch,
});
const toMessage = messageRecord(createTimeFormat('UTC'));
const toBatch = batchRecord(createTimeFormat('UTC'));

// API.md §15: keys, people and audit entries.
const keyRow: fc.Arbitrary<KeyRow> = fc.record({
  id,
  account_id: id,
  token_hash: text,
  label: text,
  created_at: epoch,
  revoked_at: fc.constant(null),
  name: text,
  prefix: text,
  scopes: fc.array(text, { maxLength: 4 }).map((l) => JSON.stringify(l)),
  allowed_ips: fc.array(text, { maxLength: 3 }).map((l) => JSON.stringify(l)),
  expires_at: fc.option(epoch, { nil: null }),
  last_used_at: fc.option(epoch, { nil: null }),
  last_ip: text,
  updated_at: epoch,
  old_hash: fc.constant(null),
  old_expires_at: fc.constant(null),
});
const toKey = keyRecord(createTimeFormat('UTC'));
const userRow: fc.Arbitrary<UserRow> = fc.record({
  id,
  account_id: id,
  email: text,
  email_key: text,
  name: text,
  role: fc.constantFrom('owner', 'admin', 'member', 'viewer'),
  password_hash: fc.constant(null),
  invite_hash: fc.constant(null),
  invite_expires_at: fc.constant(null),
  totp_secret: fc.constant(null),
  totp_pending: fc.constant(null),
  totp_last_step: fc.nat(),
  two_factor: fc.constantFrom(0, 1),
  last_sign_in_at: fc.option(epoch, { nil: null }),
  created_at: epoch,
  updated_at: epoch,
});
const toUser = userRecord(createTimeFormat('UTC'));
const auditRow: fc.Arbitrary<AuditEntryRow> = fc.record({
  id,
  account_id: id,
  created_at: epoch,
  actor: text,
  ip: text,
  operation: text,
  object_id: text,
  status: fc.integer({ min: 100, max: 599 }),
  request_id: text,
});
const toAudit = auditEntryRecord(createTimeFormat('UTC'));

// API.md §10.1.1: credit ledger entries (signed amounts).
const ledgerRow: fc.Arbitrary<LedgerEntryRow> = fc.record({
  id,
  account_id: id,
  created_at: epoch,
  type: fc.constantFrom('topup', 'spend', 'refund', 'transfer_in', 'transfer_out', 'adjustment'),
  amount: fc.integer({ min: -(2 ** 40), max: 2 ** 40 }),
  balance: fc.integer({ min: 0, max: 2 ** 40 }),
  reference: text,
  note: text,
});
const toLedger = ledgerEntryRecord(createTimeFormat('UTC'));

// API.md §12: webhooks and deliveries.
const webhookRow: fc.Arbitrary<WebhookRow> = fc.record({
  id,
  account_id: id,
  url: text,
  events: fc.subarray([...EVENT_TYPES]).map((e) => JSON.stringify(e)),
  active: fc.constantFrom(0, 1),
  secret: text,
  created_at: epoch,
  updated_at: epoch,
});
const deliveryRow: fc.Arbitrary<DeliveryRow> = fc.record({
  id,
  account_id: id,
  webhook_id: id,
  event: fc.constantFrom(...EVENT_TYPES),
  msg_id: text,
  payload: fc.constant('{}'),
  status: fc.constantFrom('Pending', 'Delivered', 'Failed'),
  attempts: fc.integer({ min: 0, max: 7 }),
  last_status_code: fc.option(fc.integer({ min: 100, max: 599 }), { nil: null }),
  last_error: text,
  created_at: epoch,
  updated_at: epoch,
});
const toWebhook = webhookRecord(createTimeFormat('UTC'));
const toDelivery = deliveryRecord(createTimeFormat('UTC'));

/** What each route sends in JSON, built from random rows exactly as its handler builds it. */
// API.md §10.7 media and MMS templates.
const mediaRow: fc.Arbitrary<MediaRow> = fc.record({
  id,
  file_name: text,
  mime_type: fc.constantFrom('image/jpeg', 'image/gif', 'image/bmp', 'image/png', 'image/tiff'),
  size: fc.integer({ min: 1, max: 73_400_320 }),
  width: fc.nat({ max: 2 ** 31 - 1 }),
  height: fc.nat({ max: 2 ** 31 - 1 }),
  chunk_bytes: fc.constant(262_144),
  created_at: epoch,
});
const templateRow: fc.Arbitrary<MmsTemplateRow> = fc.record({
  id,
  name: text,
  subject: text,
  message: text,
  created_at: epoch,
  updated_at: epoch,
  media_ids: fc.array(id, { minLength: 1, maxLength: 10 }),
});
const toMedia = mediaRecord(createTimeFormat('UTC'));
const count = fc.nat({ max: 2 ** 40 });
const statsRow: fc.Arbitrary<StatsBucketRow> = fc.record({
  start: epoch,
  outbound: count,
  inbound: count,
  delivered: count,
  undelivered: count,
  failed: count,
  rejected: count,
  credits: count,
});
const toStatsBucket = statsBucketRecord(createTimeFormat('UTC'));
const toTemplate = mmsTemplateRecord(createTimeFormat('UTC'));
// API.md §14.3, §14.4: the records of this round's operations.
const toScheduledWithRRule = scheduledMessageWithRRuleRecord(createTimeFormat('UTC'));
const scheduledWithRRule = fc.tuple(messageRow, text).map(([r, rrule]) => toScheduledWithRRule({ ...r, rrule }));
const epochOrNull = fc.option(fc.integer({ min: 0, max: 4_102_444_800 }), { nil: null });
const linkRow: fc.Arbitrary<LinkRow> = fc.record({
  id: fc.nat(),
  code: text,
  url: text,
  clicks: fc.nat(),
  first_click_at: epochOrNull,
  last_click_at: epochOrNull,
});
const consentRow: fc.Arbitrary<ConsentRow> = fc.record({
  id: fc.nat(),
  opted_out: fc.integer({ min: 0, max: 1 }),
  source: text,
  detail: text,
  carrier: text,
  created_at: fc.integer({ min: 0, max: 4_102_444_800 }),
});
const toConversation = conversationRecord(createTimeFormat('UTC'));
const conversationRow = fc
  .tuple(logRow, fc.nat(), fc.option(fc.nat(), { nil: null }))
  .map(([m, unread, contactId]) => toConversation({ ...m, unread, contact_id: contactId }));

const subRow: fc.Arbitrary<AccountRecordRow> = fc.record({
  id: fc.nat(),
  name: text,
  status: fc.constantFrom('active', 'suspended', 'closed'),
  parent_id: fc.option(fc.nat(), { nil: null }),
  available_credits: fc.nat(),
  max_per_second: fc.nat(),
  max_per_day: fc.nat(),
  created_at: fc.nat({ max: 2_000_000_000 }),
  updated_at: fc.option(fc.nat({ max: 2_000_000_000 }), { nil: null }),
});
const toSub = subaccountRecord(createTimeFormat('UTC'));

const BODIES: Record<string, fc.Arbitrary<unknown>> = {
  '/v1/numbers/index': fc.array(numberRow, { maxLength: 5 }).map((rows) => rows.map(mappers.number)),
  // API.md §17: one number with its limits, and every number's use.
  '/v1/numbers/view': numberLimitsRow.map(toNumberLimits),
  '/v1/numbers/update': numberLimitsRow.map(toNumberLimits),
  '/v1/numbers/usage': fc.array(numberUsageRow, { maxLength: 5 }).map((rows) => rows.map(numberUsageRecord)),
  '/v1/credits/balance': fc.integer({ min: -(2 ** 31), max: 2 ** 40 }).map((n) => ({ AvailableCredits: n })),
  '/v1/sms/single-schedule-messages': fc.array(messageRow, { maxLength: 100 }).map((rows) => rows.map(mappers.scheduledMessage)),
  '/v1/contacts/find': contactRow.map(mappers.contact),
  '/v1/groups/update': groupRow.map(mappers.group),
  '/v1/custom-contact-fields/update': customFieldRow.map(mappers.customField),
  '/v1/custom-contact-fields-entry/update': entryRow.map(mappers.entry),
  '/v1/keyword/reserve': keywordRow.map((r) => [mappers.keywordReservation(r)]),
  // API.md §10.2, §10.3, §10.4, §10.5: lists are arrays of the record, view/create/update one record.
  '/v1/contacts/index': fc.array(contactRow, { maxLength: 5 }).map((rows) => rows.map(mappers.contact)),
  '/v1/contacts/view': contactRow.map(mappers.contact),
  '/v1/contacts/create': contactRow.map(mappers.contact),
  '/v1/contacts/update': contactRow.map(mappers.contact),
  '/v1/contacts/import': fc.record({
    Created: fc.nat(),
    Updated: fc.nat(),
    Failed: fc.nat(),
    Errors: fc.array(fc.record({ Line: fc.integer({ min: 1, max: 2 ** 40 }), Field: text, Message: text }), { maxLength: 5 }),
  }),
  '/v1/groups/index': fc.array(groupRow, { maxLength: 5 }).map((rows) => rows.map(mappers.group)),
  '/v1/groups/view': groupRow.map(mappers.group),
  '/v1/groups/create': groupRow.map(mappers.group),
  '/v1/groups/add-contacts': groupRow.map(mappers.group),
  '/v1/groups/remove-contacts': groupRow.map(mappers.group),
  '/v1/custom-contact-fields/index': fc.array(customFieldRow, { maxLength: 5 }).map((rows) => rows.map(mappers.customField)),
  '/v1/custom-contact-fields/view': customFieldRow.map(mappers.customField),
  '/v1/custom-contact-fields/create': customFieldRow.map(mappers.customField),
  '/v1/custom-contact-fields-entry/index': fc.array(entryRow, { maxLength: 5 }).map((rows) => rows.map(mappers.entry)),
  '/v1/custom-contact-fields-entry/view': entryRow.map(mappers.entry),
  '/v1/custom-contact-fields-entry/create': entryRow.map(mappers.entry),
  '/v1/keyword/index': fc.array(keywordRow, { maxLength: 5 }).map((rows) => rows.map(mappers.keywordReservation)),
  '/v1/keyword/view': keywordRow.map(mappers.keywordReservation),
  '/v1/keyword/update': keywordRow.map(mappers.keywordReservation),
  '/v1/keyword/check': fc.record({ Keyword: text, Number: fc.integer({ min: 10000, max: 2 ** 50 }), Available: fc.boolean() }),
  '/v1/sms/send': logRow.map((r) => [toMessage(r)]),
  '/v1/sms/send-group': batchRow.map(toBatch),
  '/v1/sms/index': fc.array(logRow, { maxLength: 5 }).map((rows) => rows.map(toMessage)),
  '/v1/sms/view': logRow.map(toMessage),
  // API.md §10.9: the stats buckets, every count an integer.
  '/v1/sms/stats': fc.array(statsRow, { maxLength: 5 }).map((rows) => rows.map(toStatsBucket)),
  // API.md §10.6 scheduled messages: one scheduled single message record (cancel-scheduled is 204).
  // API.md §14.3: the record of these three adds RRule as its last field.
  '/v1/sms/schedule': scheduledWithRRule,
  '/v1/sms/view-scheduled': scheduledWithRRule,
  '/v1/sms/update-scheduled': scheduledWithRRule,
  '/v1/sms/preview': fc
    .record({ message: text, encoding: fc.constantFrom('GSM-7', 'UCS-2', ''), segments: fc.nat(), credits: fc.nat() })
    .map(smsPreviewRecord),
  '/v1/sms/conversations': fc.array(conversationRow, { maxLength: 5 }),
  '/v1/sms/links': fc.array(linkRow, { maxLength: 5 }).map((rows) => rows.map(trackedLinkRecord(createTimeFormat('UTC')))),
  '/v1/account/settings': fc
    .record({
      quiet_start: fc.option(text, { nil: null }),
      quiet_end: fc.option(text, { nil: null }),
      time_zone: fc.option(text, { nil: null }),
      sender_selection: fc.constantFrom('first' as const, 'pool' as const),
    })
    .map(accountSettingsRecord('UTC')),
  '/v1/contacts/consent': fc.array(consentRow, { maxLength: 5 }).map((rows) => rows.map(consentEntryRecord(createTimeFormat('UTC')))),
  // API.md §11.2: the inbound records stored for the caller, one or none.
  '/v1/sandbox/inbound': fc.array(logRow, { maxLength: 1 }).map((rows) => rows.map(toMessage)),
  // API.md §10.7: media records (download is bytes, delete 204) and MMS templates.
  '/v1/media/index': fc.array(mediaRow, { maxLength: 5 }).map((rows) => rows.map(toMedia)),
  '/v1/media/view': mediaRow.map(toMedia),
  '/v1/media/upload': mediaRow.map(toMedia),
  '/v1/mms-templates/index': fc.array(templateRow, { maxLength: 5 }).map((rows) => rows.map(toTemplate)),
  '/v1/mms-templates/view': templateRow.map(toTemplate),
  '/v1/mms-templates/create': templateRow.map(toTemplate),
  '/v1/mms-templates/update': templateRow.map(toTemplate),
  // API.md §12.3: webhooks (create alone adds Secret) and their deliveries.
  '/v1/webhooks/index': fc.array(webhookRow, { maxLength: 5 }).map((rows) => rows.map(toWebhook)),
  '/v1/webhooks/view': webhookRow.map(toWebhook),
  '/v1/webhooks/create': webhookRow.map((r) => ({ ...toWebhook(r), Secret: r.secret })),
  '/v1/webhooks/update': webhookRow.map(toWebhook),
  '/v1/webhooks/deliveries': fc.array(deliveryRow, { maxLength: 5 }).map((rows) => rows.map(toDelivery)),
  '/v1/webhooks/redeliver': deliveryRow.map(toDelivery),
  // API.md §15.2: keys (create and roll alone add Secret).
  '/v1/keys/index': fc.array(keyRow, { maxLength: 5 }).map((rows) => rows.map(toKey)),
  '/v1/keys/view': keyRow.map(toKey),
  '/v1/keys/create': fc.tuple(keyRow, text).map(([r, secret]) => ({ ...toKey(r), Secret: secret })),
  '/v1/keys/update': keyRow.map(toKey),
  '/v1/keys/roll': fc.tuple(keyRow, text).map(([r, secret]) => ({ ...toKey(r), Secret: secret })),
  // API.md §15.3: people (create and reset add InviteUrl).
  '/v1/users/index': fc.array(userRow, { maxLength: 5 }).map((rows) => rows.map(toUser)),
  '/v1/users/view': userRow.map(toUser),
  '/v1/users/create': fc.tuple(userRow, text).map(([r, url]) => ({ ...toUser(r), InviteUrl: url })),
  '/v1/users/update': userRow.map(toUser),
  '/v1/users/reset': fc.tuple(userRow, text).map(([r, url]) => ({ ...toUser(r), InviteUrl: url })),
  // API.md §15.5: the audit log.
  '/v1/audit/index': fc.array(auditRow, { maxLength: 5 }).map((rows) => rows.map(toAudit)),
  '/v1/credits/ledger': fc.array(ledgerRow, { maxLength: 5 }).map((rows) => rows.map(toLedger)),
  // API.md §16.1: sub-accounts, their usage, and what their keys, users and numbers answer.
  '/v1/subaccounts/index': fc.array(subRow, { maxLength: 5 }).map((rows) => rows.map(toSub)),
  '/v1/subaccounts/view': subRow.map(toSub),
  '/v1/subaccounts/create': subRow.map(toSub),
  '/v1/subaccounts/update': subRow.map(toSub),
  '/v1/subaccounts/credits': subRow.map(toSub),
  '/v1/subaccounts/keys': fc.tuple(keyRow, text).map(([r, secret]) => ({ ...toKey(r), Secret: secret })),
  '/v1/subaccounts/users': fc.tuple(userRow, text).map(([r, url]) => ({ ...toUser(r), InviteUrl: url })),
  '/v1/subaccounts/numbers': numberRow.map(mappers.number),
  '/v1/subaccounts/usage': fc
    .array(fc.record({ id: fc.nat(), name: text, outbound: fc.nat(), delivered: fc.nat(), failed: fc.nat(), credits: fc.nat() }), {
      maxLength: 5,
    })
    .map((rows) => rows.map(usageRecord)),
  // API.md §10.9.2: the ErrorCode list (the real one, and arbitrary texts).
  '/v1/errors/index': fc.oneof(
    fc.constant(ERROR_CODES.map(errorCodeRecord)),
    fc
      .array(fc.record({ code: text, meaning: text, final: fc.constantFrom(0 as const, 1 as const) }), { maxLength: 5 })
      .map((rows) => rows.map(errorCodeRecord)),
  ),
};

/** Operations that answer 201 Created (API.md §1.4 `create`, and API.md's keyword/reserve). */
const CREATED = new Set([
  '/v1/subaccounts/keys',
  '/v1/subaccounts/users',
  '/v1/keyword/reserve',
  '/v1/media/upload',
  '/v1/sms/send',
  '/v1/sms/send-group',
  '/v1/sms/schedule',
  '/v1/sandbox/inbound',
  ...Object.keys(BODIES).filter((p) => p.endsWith('/create')),
]);

/** The response schema each operation registers, captured from its real registration. */
function registeredSchemas(): Map<string, { status: number; schema: TSchema }> {
  const found = new Map<string, { status: number; schema: TSchema }>();
  const recorder: Record<string, unknown> = {
    route: (opts: { url: string; schema?: { response?: Record<number, TSchema> } }) => {
      const entries = Object.entries(opts.schema?.response ?? {});
      if (entries.length === 0) return; // 204 No Content: nothing to serialise
      assert.equal(entries.length, 1, `${opts.url} declares one response schema`);
      found.set(opts.url, { status: Number(entries[0]![0]), schema: entries[0]![1] });
    },
    // Streaming-body operations (contacts/import) register in a child scope with their own parser.
    register: (plugin: (scope: unknown) => unknown) => void plugin(recorder),
    addContentTypeParser: () => {},
    removeAllContentTypeParsers: () => {},
  };
  registerOperations(recorder as never, OPERATIONS, {
    store: {} as never,
    config: { bodyLimitBytes: 1 } as never,
    time: createTimeFormat('UTC'),
  });
  return found;
}

test('every operation declares a response schema for its success status', () => {
  const schemas = registeredSchemas();
  assert.deepEqual([...schemas.keys()].sort(), Object.keys(BODIES).sort());
  for (const [path, { status }] of schemas) assert.equal(status, CREATED.has(path) ? 201 : 200, path);
});

test("each route's compiled serialiser writes exactly JSON.stringify of its records", async (t) => {
  const app = Fastify();
  t.after(() => app.close());
  let current: unknown;
  for (const [path, { status, schema }] of registeredSchemas()) {
    app.get(path, { schema: { response: { [status]: schema } } }, (_request, reply) => reply.code(status).send(current));
  }
  await app.ready();
  for (const [path, body] of Object.entries(BODIES)) {
    await fc.assert(
      fc.asyncProperty(body, async (value) => {
        current = value;
        const res = await app.inject({ url: path });
        assert.equal(res.payload, JSON.stringify(value), path);
      }),
      { numRuns: 150 },
    );
  }
});

test('the mixed fields keep both of their forms', async (t) => {
  const app = Fastify();
  t.after(() => app.close());
  const schemas = registeredSchemas();
  let current: unknown;
  for (const path of ['/v1/numbers/index', '/v1/sms/single-schedule-messages']) {
    app.get(path, { schema: { response: { 200: schemas.get(path)!.schema } } }, () => current);
  }
  const base = { id: 7, mobile_phone: '15550100001', message: 'Hi', scheduled_at: 0, status_id: 1, subject: '' };
  current = [
    mappers.scheduledMessage({ ...base, type_id: 2, mms_template_id: 42 }),
    mappers.scheduledMessage({ ...base, type_id: 1, mms_template_id: null }),
  ];
  const sms = JSON.parse((await app.inject({ url: '/v1/sms/single-schedule-messages' })).payload);
  assert.deepEqual(
    sms.map((m: { MmsTemplateId: unknown }) => m.MmsTemplateId),
    [42, ''],
  );
  current = [
    mappers.number({ number: '15550100003', status_id: 301, blocked_at: 1_700_000_000 }),
    mappers.number({ number: '15550100001', status_id: 0, blocked_at: null }),
  ];
  const numbers = JSON.parse((await app.inject({ url: '/v1/numbers/index' })).payload);
  assert.deepEqual(
    numbers.map((n: { Blocked_Date: unknown }) => n.Blocked_Date),
    ['2023-11-14 22:13:20', null],
  );
});
