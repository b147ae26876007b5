import type { CountryCode } from 'libphonenumber-js';
import { inTransaction, type Store } from '../store/db.ts';
import type { Db } from '../store/types.ts';
import * as contacts from '../store/repositories/contacts.ts';
import * as erasure from '../store/repositories/erasure.ts';
import { numberSha256 } from './erasure.ts';
import * as credits from '../store/repositories/credits.ts';
import * as groups from '../store/repositories/groups.ts';
import * as log from '../store/repositories/message-log.ts';
import * as poolRepo from '../store/repositories/sender-pool.ts';
import * as pool from './sender-pool.ts';
import type { MessageFilter } from '../store/repositories/message-log.ts';
import type { BatchRow, MessageRow } from '../records/messages.ts';
import * as accounts from '../store/repositories/accounts.ts';
import * as quotas from './quotas.ts';
import { ValidationFailedError, type FieldError } from './errors.ts';
import { loadOr404 } from './find.ts';
import { messageCost, type Prices } from './segments.ts';
import { sendableTemplate } from './mms-templates.ts';
import * as media from '../store/repositories/media.ts';
import * as personal from '../store/repositories/personalise.ts';
import { lockCredits } from '../store/repositories/scheduled.ts';
import {
  contactValues,
  finishText,
  parseMerge,
  personalise,
  readShortenLinks,
  renderMerge,
  storeLinkRows,
  storeLinks,
  type Personalised,
} from './personalise.ts';
import type { SmsEncoding } from './segments.ts';
import { DIRECTION_INBOUND, DIRECTION_OUTBOUND, LOG_STATUS, MESSAGE_TYPE_MMS, NUMBER_STATUS_ACTIVE } from '../records/statuses.ts';
import type { Clock } from '../lib/time.ts';
import {
  canonicalInteger,
  defineRules,
  fieldLabel,
  formatCount,
  isBlank,
  isEmpty,
  messages,
  toId,
  validate,
  type Input,
} from './validation.ts';

/**
 * Sending and the message log (API.md §10.6): `sms/send`, `sms/send-group`, `sms/index`,
 * `sms/view`. A message is queued (Status_Id 1, due for the dispatcher at once) in the same
 * transaction that debits its credits; the dispatcher (src/dispatch) takes it from there.
 *
 * Choices the extension leaves open, written down here:
 * - Both `MobilePhone` and `PhoneNumberId` given: `MobilePhone` is the recipient and
 *   `PhoneNumberId` is ignored.
 * - `Type_Id` 2 needs an `MmsTemplateId` of the account (API.md §10.7): without one, `Mms
 *   Template Id cannot be blank.`; one the account does not own (another account's included), or
 *   one whose media have all been deleted (it cannot be sent, API.md §10.7), `Mms Template Id is
 *   invalid.`, before any debit; `sms/preview` answers the same. An MMS costs the MMS price
 *   (MSGSVC_MMS_CREDITS). For an SMS, `MmsTemplateId` is ignored. The Message record does not carry
 *   the template (API.md §10.7). An MMS already queued when its template loses its last medium is
 *   not taken back: it goes out as its template then is (src/dispatch/dispatcher.ts), with no picture.
 * - `Number` is read as keyword/reserve reads it (an integer: the digits of a short code or of a
 *   long number, a leading `+` allowed), then must be an Active number of the account.
 * - `send-group` to a group whose members have all opted out (or that has none) queues nothing and
 *   still answers 201 with a Batch of 0 recipients and 0 credits. It has no `Location`: there is
 *   no view action for batches (its messages are `sms/index?BatchId=`).
 * - Merge fields and `ShortenLinks` (API.md §10.6; the grammar and the link rules are
 *   src/domain/personalise.ts's): each recipient's text is personalised when it is queued; the log
 *   shows it as sent, with its own Segments and Credits. The Batch keeps the `Message` as sent in
 *   the body (with its merge fields) and its `Credits` is the sum of its messages'. `send-group` is
 *   all or nothing on that sum. An MMS's own `Message` (the log's text) is merged too; the carrier
 *   is handed the template's Message, merged when it is handed over (src/dispatch/dispatcher.ts).
 *   `ShortenLinks` shortens the links of an SMS only: an MMS shows its template's text, read when
 *   it goes out, so its links stay as they are (the value is still checked).
 * - A text with neither merge field nor shortening (its `{{`/`}}` unescaped, the same for every
 *   recipient) is queued by `send-group` in one INSERT … SELECT; otherwise the members are read with
 *   their contact values in one query (their custom field entries in a second, only when
 *   `{Field:…}` is used), and the messages are inserted in chunks of 5,000.
 * - `sms/preview` validates as `send` and answers what `send` would queue (API.md §10.6); for an
 *   MMS its `Message` is the template's Message merged for the recipient (what the phone shows),
 *   `Encoding` `""`, `Segments` 1 and `Credits` the MMS price.
 * - `MaxPerDay` (API.md §16; the rule is src/domain/quotas.ts): `send` counts one message,
 *   `send-group` one per recipient queued, on the service's day, in the transaction that queues
 *   them; past the limit, 422 `Daily limit of {n} messages reached.` on `Message` and nothing is
 *   queued or debited (a `send-group` all or nothing). It comes before `Not enough credits` (both
 *   are on `Message`, which shows one error): no top-up lifts it today. `sms/preview` answers it too,
 *   from the day's count as it stands (nothing counted).
 */

/** What the messaging rules need: the store, the clock, the prices and the phone region. */
export interface MessagingDeps {
  store: Store;
  clock: Clock;
  prices: Prices;
  /** Region national phone numbers are read in (MSGSVC_DEFAULT_REGION). */
  region: CountryCode;
  /** MSGSVC_LINK_DOMAIN, the base of tracked links (`ShortenLinks`); unset: `ShortenLinks` 1 is refused. */
  linkDomain?: string | undefined;
  /**
   * MSGSVC_TIMEZONE, the IANA zone whose calendar days `MaxPerDay` counts (API.md §16) in `send`,
   * `send-group` and `preview`; unset: `UTC`, the setting's default (the routes always set it).
   */
  timeZone?: string;
}

/** API.md §10.6 field order of send and send-group: errors are listed in this order (API.md §4.4). */
const FIELD_ORDER = [
  'Message',
  'MobilePhone',
  'PhoneNumberId',
  'GroupId',
  'Number',
  'Type_Id',
  'MmsTemplateId',
  'ShortenLinks',
  'Priority',
];
const FIELD_RANK = new Map(FIELD_ORDER.map((f, i) => [f, i]));
function inFieldOrder(errors: FieldError[]): FieldError[] {
  const first = new Map<string, FieldError>();
  for (const e of errors) if (!first.has(e.field)) first.set(e.field, e);
  return [...first.values()].sort((a, b) => (FIELD_RANK.get(a.field) ?? 99) - (FIELD_RANK.get(b.field) ?? 99));
}

const COMMON_RULES = defineRules([
  { field: 'Message', rule: 'string', min: 1, max: 1600 },
  { field: 'MobilePhone', rule: 'phone' },
  { field: 'PhoneNumberId', rule: 'integer' },
  { field: 'GroupId', rule: 'integer' },
  { field: 'Number', rule: 'integer' },
  { field: 'Type_Id', rule: 'in', values: [1, 2] },
  { field: 'Priority', rule: 'in', values: [0, 1] },
]);
const TEMPLATE_RULES = defineRules([{ field: 'MmsTemplateId', rule: 'integer' }]);

/** The checked fields common to send and send-group, before the database rules. */
interface Draft {
  errors: FieldError[];
  typeId: number;
  message: string;
  values: ReturnType<typeof validate<typeof COMMON_RULES>>['values'];
  /** The MMS template named (an integer, its ownership not yet checked: `templateErrors`). */
  templateId?: number;
  /** `ShortenLinks` 1 (API.md §10.6), for an SMS (an MMS's links are never shortened). */
  shortenLinks: boolean;
}

/**
 * The rules that need no database: requireds first (Message for an SMS, a recipient, the template
 * of an MMS), then types and lengths. A blank `MobilePhone` leaves the recipient to
 * `PhoneNumberId`; a given one makes `PhoneNumberId` ignored.
 */
function readDraft(input: Input, deps: Pick<MessagingDeps, 'region' | 'linkDomain'>, recipient: 'one' | 'group'): Draft {
  const region = deps.region;
  const fields: Record<string, unknown> = {
    Message: input.Message,
    Number: input.Number,
    Type_Id: input.Type_Id,
    Priority: input.Priority,
  };
  if (recipient === 'group') fields.GroupId = input.GroupId;
  else if (!isBlank(input.MobilePhone)) fields.MobilePhone = input.MobilePhone;
  else fields.PhoneNumberId = input.PhoneNumberId;
  const checked = validate(fields, COMMON_RULES, { region });
  const typeId = checked.values.Type_Id ?? 1;
  const blank = (field: string): FieldError => ({ field, message: `${fieldLabel(field)} cannot be blank.` });
  const required: FieldError[] = [];
  if (typeId !== MESSAGE_TYPE_MMS && isBlank(input.Message)) required.push(blank('Message'));
  if (recipient === 'one' && isBlank(input.MobilePhone) && isBlank(input.PhoneNumberId)) required.push(blank('MobilePhone'));
  if (recipient === 'group' && isBlank(input.GroupId)) required.push(blank('GroupId'));
  const errors = [...required, ...checked.errors];
  let templateId: number | undefined;
  if (typeId === MESSAGE_TYPE_MMS) {
    if (isBlank(input.MmsTemplateId)) errors.push(blank('MmsTemplateId'));
    else {
      const template = validate({ MmsTemplateId: input.MmsTemplateId }, TEMPLATE_RULES);
      errors.push(...template.errors);
      templateId = template.values.MmsTemplateId;
    }
  }
  const shorten = readShortenLinks(input, deps.linkDomain);
  if ('error' in shorten) errors.push(shorten.error);
  // inFieldOrder keeps the first error of each field: a required one before its type rule's.
  return {
    errors: inFieldOrder(errors),
    typeId,
    message: typeof input.Message === 'string' ? input.Message : '',
    values: checked.values,
    ...(templateId !== undefined ? { templateId } : {}),
    shortenLinks: 'value' in shorten && shorten.value && typeId !== MESSAGE_TYPE_MMS,
  };
}

/**
 * `Mms Template Id is invalid.` when the MMS names a template the account does not own (API.md
 * §1.3, §10.7), or one whose media have all been deleted (API.md §10.7: it cannot be sent).
 */
async function templateErrors(store: Store, accountId: number, draft: Draft): Promise<FieldError[]> {
  if (draft.templateId === undefined || (await sendableTemplate(store.db, accountId, draft.templateId))) return [];
  return [{ field: 'MmsTemplateId', message: messages.invalid('MmsTemplateId') }];
}

/**
 * The account number a message goes from (API.md §10.6 `Number`, shared by send, send-group
 * and schedule): the one given (`n`, the integer read from the body) when it is an Active number of
 * the account, else (none given) the account's first Active number in numbers/index order.
 * @returns its digits, or undefined when there is none (`Number is invalid.`).
 */
export async function resolveNumber(store: Store, accountId: number, n: number | undefined): Promise<string | undefined> {
  return (await resolveSender(store, accountId, n))?.number;
}

/**
 * As `resolveNumber`, with what the queueing transaction needs of the sender pool (docs/API.md
 * §17) read in the same query: for no `Number`, whether the account's SenderSelection is `pool`
 * (then the pool chooses when the message is queued); and whether the number has limits.
 */
export async function resolveSender(store: Store, accountId: number, n: number | undefined): Promise<pool.Sender | undefined> {
  if (n === undefined) {
    const first = await log.firstActiveNumber(store.db, accountId);
    return first && pool.senderOf(first, first.sender_selection === 'pool');
  }
  if (n < 0 || !Number.isSafeInteger(n)) return undefined;
  const row = await poolRepo.sendingNumber(store.db, accountId, String(n));
  return row && row.status_id === NUMBER_STATUS_ACTIVE ? pool.senderOf(row, false) : undefined;
}

/** `Not enough credits: {cost} needed, {available} available.` (API.md §10.6), numbers with thousands commas. */
export function notEnoughCreditsMessage(cost: number, available: number): string {
  return `Not enough credits: ${formatCount(cost)} needed, ${formatCount(available)} available.`;
}

/** `{Label} has opted out.` (API.md §10.6). */
function optedOut(field: string): FieldError {
  return { field, message: `${fieldLabel(field)} has opted out.` };
}

/** A send body that passed every rule but the credits: what to send, from where, to whom. */
interface CheckedSend {
  draft: Draft;
  /** The recipient's digits (E.164 without +). */
  recipient: string;
  /** The account number (or the pool) it goes from: decided in the queueing transaction. */
  sender: pool.Sender;
}

/**
 * The rules of `sms/send` but the credits (shared with `sms/preview`).
 * @throws ValidationFailedError as `sendMessage`, but `Not enough credits`.
 */
async function checkSend(deps: MessagingDeps, accountId: number, input: Input): Promise<CheckedSend> {
  const { store } = deps;
  const draft = readDraft(input, deps, 'one');
  const errors = [...draft.errors];
  const failed = new Set(errors.map((e) => e.field));
  const v = draft.values;
  let recipient: string | undefined;
  if (v.MobilePhone) {
    recipient = v.MobilePhone.digits;
    const contact = await contacts.findContactFieldsByE164(store.db, accountId, v.MobilePhone.e164);
    if (contact?.opted_out === 1) errors.push(optedOut('MobilePhone'));
    // A number erased while opted out stays opted out, by its hash, until it is a contact again
    // (API.md §10.2.1): the proof of the opt-out outlives the person's data, and so does its effect.
    else if (!contact && (await erasure.erasedOptedOut(store.db, accountId, numberSha256(recipient)))) errors.push(optedOut('MobilePhone'));
  } else if (v.PhoneNumberId !== undefined) {
    const id = toId(canonicalInteger(input.PhoneNumberId, input, 'PhoneNumberId') ?? '');
    const contact = id === null ? undefined : await contacts.findContactFields(store.db, accountId, id);
    if (!contact) errors.push({ field: 'PhoneNumberId', message: messages.invalid('PhoneNumberId') });
    else if (contact.opted_out === 1) errors.push(optedOut('PhoneNumberId'));
    else recipient = contact.number;
  }
  let sender: pool.Sender | undefined;
  if (!failed.has('Number')) {
    sender = await resolveSender(store, accountId, v.Number);
    if (sender === undefined) errors.push({ field: 'Number', message: messages.invalid('Number') });
  }
  errors.push(...(await templateErrors(store, accountId, draft)));
  if (errors.length > 0) throw new ValidationFailedError(inFieldOrder(errors));
  return { draft, recipient: recipient!, sender: sender! };
}

/**
 * `sms/send` (API.md §10.6): queues one message and debits its cost in one transaction.
 * Body: `Message` (required for an SMS, 1 to 1,600 characters, merge fields allowed), `MobilePhone`
 * (a phone number in any common format) or `PhoneNumberId` (a contact of the account), `Number` (an
 * Active number of the account; default its first Active number), `Type_Id` (1 or 2),
 * `MmsTemplateId` and `ShortenLinks` (0 or 1). The text is personalised for the recipient (merge
 * fields, tracked links: src/domain/personalise.ts) and costed as sent; its links are stored in the
 * same transaction.
 * @returns the new message (Status_Id 1 Queued), as stored.
 * @throws ValidationFailedError (422) with the first error of each field in API.md §10.6 order, e.g.
 *   `Mobile Phone cannot be blank.` (no recipient), `Phone Number Id is invalid.`, `Mobile Phone has
 *   opted out.`, `Number is invalid.`, `Mms Template Id is invalid.`, `Shorten Links is invalid.`;
 *   and, when all else passed, on `Message`: `Daily limit of {n} messages reached.` (the account's
 *   MaxPerDay, API.md §16, reached today), else `Not enough credits: {cost} needed, {available}
 *   available.`; then nothing is queued, debited or counted.
 */
export async function sendMessage(deps: MessagingDeps, accountId: number, input: Input): Promise<MessageRow> {
  const { store, clock } = deps;
  const { draft, recipient, sender } = await checkSend(deps, accountId, input);
  const sent = await personalise(store.db, personaliseDeps(deps), accountId, recipient, draft.message, draft.typeId, draft.shortenLinks);
  const now = clock.nowSeconds();
  return inTransaction(
    store,
    async (tx) => {
      // The debit is the transaction's first statement (on SQLite it takes the write lock at once).
      const balance = await credits.takeCredits(tx, accountId, sent.credits, now);
      // MaxPerDay (API.md §16): counted after the balance row (the lock order of quotas.ts), and
      // refused before the credits. A refusal throws: the debit and the count roll back.
      const at = quotaTime(deps, now);
      const room = await quotas.takeDailyRoom(tx, accountId, 1, at);
      if (!room.ok) throw quotas.dailyLimitError(room.limit);
      // The sender pool and the number's limits (API.md §17), counted under the same lock.
      const number = await pool.senderFor(tx, accountId, recipient, sender, at);
      if (balance === undefined) {
        const available = await accounts.getCredits(tx, accountId);
        throw new ValidationFailedError([{ field: 'Message', message: notEnoughCreditsMessage(sent.credits, available) }]);
      }
      const row = await log.insertMessage(
        tx,
        accountId,
        {
          direction: DIRECTION_OUTBOUND,
          number,
          mobilePhone: recipient,
          message: sent.message,
          typeId: draft.typeId,
          statusId: LOG_STATUS.QUEUED,
          segments: sent.segments,
          credits: sent.credits,
          batchId: null,
          scheduledMessageId: null,
          optOutExempt: 0,
          dueAt: clock.nowMs(),
          mmsTemplateId: draft.typeId === MESSAGE_TYPE_MMS ? (draft.templateId ?? null) : null,
          priority: draft.values.Priority ?? 0,
        },
        now,
      );
      // Its ledger entry, now that the message's id is known (API.md §10.1.1).
      if (sent.credits > 0) await credits.recordLedgerEntry(tx, accountId, now, 'spend', -sent.credits, balance, `message:${row.id}`);
      if (sent.links.length === 0) return row;
      // A code clash (never, in practice) rewrites the stored text: then read it back.
      return (await storeLinks(tx, accountId, row.id, sent.links, now)) ? (await log.findMessage(tx, accountId, row.id))! : row;
    },
    { immediate: true },
  );
}

/** When a send queues, for MaxPerDay (API.md §16): `nowSeconds` (epoch seconds) in the service's zone. */
function quotaTime(deps: MessagingDeps, nowSeconds: number): quotas.QuotaTime {
  return { nowSeconds, timeZone: deps.timeZone ?? 'UTC' };
}

/** What the personalising rules need of the messaging deps. */
function personaliseDeps(deps: MessagingDeps): { prices: Prices; linkDomain: string | undefined } {
  return { prices: deps.prices, linkDomain: deps.linkDomain };
}

/** What `sms/preview` answers (API.md §10.6): the text as it would be sent and its cost. */
export interface MessagePreview {
  message: string;
  /** `GSM-7` or `UCS-2`; `""` for an MMS. */
  encoding: SmsEncoding | '';
  segments: number;
  credits: number;
}

/**
 * `sms/preview` (API.md §10.6): the body of `sms/send`, validated as `send` validates it, and what
 * `send` would queue: the text personalised for the recipient (links shortened with codes that
 * are not kept), its encoding, segments and credits. Nothing is stored or debited. For an MMS the
 * text is the template's Message merged for the recipient (what the phone shows), `Encoding` `""`.
 * @throws ValidationFailedError as `sendMessage`, `Daily limit of {n} messages reached.` (today's
 *   count read now, nothing counted) and `Not enough credits: …` (the balance read now) included.
 */
export async function previewMessage(deps: MessagingDeps, accountId: number, input: Input): Promise<MessagePreview> {
  const { store } = deps;
  const { draft, recipient, sender } = await checkSend(deps, accountId, input);
  let text = draft.message;
  if (draft.typeId === MESSAGE_TYPE_MMS && draft.templateId !== undefined) {
    text = (await media.findTemplate(store.db, accountId, draft.templateId))?.message ?? '';
  }
  const p: Personalised = await personalise(store.db, personaliseDeps(deps), accountId, recipient, text, draft.typeId, draft.shortenLinks);
  const at = quotaTime(deps, deps.clock.nowSeconds());
  await quotas.assertDailyRoom(store.db, accountId, 1, at);
  await pool.senderFor(store.db, accountId, recipient, sender, at, false);
  const available = await accounts.getCredits(store.db, accountId);
  if (available < p.credits) {
    throw new ValidationFailedError([{ field: 'Message', message: notEnoughCreditsMessage(p.credits, available) }]);
  }
  return { message: p.message, encoding: p.encoding ?? '', segments: p.segments, credits: p.credits };
}

/**
 * `sms/send-group` (API.md §10.6): one message to every member of the account's group who
 * has not opted out (the opted-out are skipped), all or nothing, in one transaction: the batch,
 * its messages and the debit of their total cost. Body: `GroupId` (required, a group of the
 * account), and `Message`, `Number`, `Type_Id`, `MmsTemplateId`, `ShortenLinks` as `sms/send`.
 * Each member's text is personalised (merge fields, tracked links) and costed as sent; a text
 * that is the same for everyone is queued in one INSERT … SELECT, others in chunks
 * (`queuePersonalised`).
 * @returns the Batch: recipients (messages queued), skipped (opted-out members), credits (the sum
 *   of its messages' credits).
 * @throws ValidationFailedError (422) as `sms/send` (`Group Id cannot be blank.`, `Group Id is
 *   invalid.` for a group the account does not own), and on `Message`: `Daily limit of {n} messages
 *   reached.` when its recipients would take the day's count past the account's MaxPerDay (API.md
 *   §16), else `Not enough credits: {sum} needed, {available} available.` when the balance cannot
 *   pay for every personalised message: then nothing is queued, debited or counted.
 */
export async function sendGroupMessage(deps: MessagingDeps, accountId: number, input: Input): Promise<BatchRow> {
  const { store, clock } = deps;
  const draft = readDraft(input, deps, 'group');
  const errors = [...draft.errors];
  const failed = new Set(errors.map((e) => e.field));
  let groupId: number | undefined;
  if (draft.values.GroupId !== undefined) {
    const id = toId(canonicalInteger(input.GroupId, input, 'GroupId') ?? '');
    if (id !== null && (await groups.groupExists(store.db, accountId, id))) groupId = id;
    else errors.push({ field: 'GroupId', message: messages.invalid('GroupId') });
  }
  let sender: pool.Sender | undefined;
  if (!failed.has('Number')) {
    sender = await resolveSender(store, accountId, draft.values.Number);
    if (sender === undefined) errors.push({ field: 'Number', message: messages.invalid('Number') });
  }
  errors.push(...(await templateErrors(store, accountId, draft)));
  if (errors.length > 0) throw new ValidationFailedError(inFieldOrder(errors));

  const template = parseMerge(draft.message);
  const now = clock.nowSeconds();
  const mmsTemplateId = draft.typeId === MESSAGE_TYPE_MMS ? (draft.templateId ?? null) : null;
  const priority = draft.values.Priority ?? 0;
  const number = sender!.number;
  const batch = { groupId: groupId!, number, message: draft.message, typeId: draft.typeId };
  // A pool, or a number with limits (API.md §17), decides per recipient: the members are read.
  if (template.hasFields || draft.shortenLinks || sender!.pool || sender!.limited) {
    return inTransaction(
      store,
      async (tx) => {
        const batchId = await log.insertBatch(tx, accountId, batch, now);
        const queued = await queuePersonalised(deps, tx, accountId, groupId!, template, draft, {
          sender: sender!,
          batchId,
          dueAt: clock.nowMs(),
          mmsTemplateId,
          priority,
          now,
        });
        const members = await log.countGroupMembers(tx, accountId, groupId!);
        return log.finishBatch(tx, accountId, batchId, {
          recipients: queued.recipients,
          skipped: members - queued.recipients,
          credits: queued.credits,
          number: queued.number,
        });
      },
      { immediate: true },
    );
  }

  // The same text for everyone: one INSERT … SELECT.
  const cost = messageCost(draft.typeId, template.plain, deps.prices);
  return inTransaction(
    store,
    async (tx) => {
      // The balance row first, as every path that queues (the debit, or the scheduler's
      // lockCredits) takes it before the messages' rows (their conversations, migration 017): a
      // concurrent personalised send-group, which debits before it inserts, cannot deadlock this one.
      await lockCredits(tx, accountId);
      const batchId = await log.insertBatch(tx, accountId, batch, now);
      const recipients = await log.insertGroupMessages(
        tx,
        accountId,
        groupId!,
        batchId,
        {
          number,
          message: template.plain,
          typeId: draft.typeId,
          segments: cost.segments,
          credits: cost.credits,
          dueAt: clock.nowMs(),
          mmsTemplateId,
          priority,
        },
        now,
      );
      const total = recipients * cost.credits;
      const paid = await credits.debitCredits(tx, accountId, total, now, `batch:${batchId}`);
      // MaxPerDay (API.md §16), all or nothing: see sendMessage.
      const room = await quotas.takeDailyRoom(tx, accountId, recipients, quotaTime(deps, now));
      if (!room.ok) throw quotas.dailyLimitError(room.limit);
      if (!paid) {
        const available = await accounts.getCredits(tx, accountId);
        throw new ValidationFailedError([{ field: 'Message', message: notEnoughCreditsMessage(total, available) }]);
      }
      const members = await log.countGroupMembers(tx, accountId, groupId!);
      return log.finishBatch(tx, accountId, batchId, { recipients, skipped: members - recipients, credits: total });
    },
    { immediate: true },
  );
}

/**
 * Queues a batch's personalised messages inside the caller's transaction: reads the members who
 * have not opted out with their contact values (one query; their custom field entries in a second,
 * only when `{Field:…}` is used), personalises each text, debits the sum of their credits, counts
 * them against MaxPerDay (API.md §16), then inserts the messages in chunks and their links.
 * @returns how many were queued and their total credits.
 * @throws ValidationFailedError on `Message`: `Daily limit of {n} messages reached.`, else `Not
 *   enough credits: {sum} needed, {available} available.`
 */
async function queuePersonalised(
  deps: MessagingDeps,
  tx: Db,
  accountId: number,
  groupId: number,
  template: ReturnType<typeof parseMerge>,
  draft: Draft,
  shared: { sender: pool.Sender; batchId: number; dueAt: number; mmsTemplateId: number | null; priority: number; now: number },
): Promise<{ recipients: number; credits: number; number: string }> {
  const members = await personal.groupMergeContacts(tx, accountId, groupId);
  const entries = template.customKeys.length > 0 ? await personal.groupEntries(tx, accountId, groupId, template.customKeys) : undefined;
  const pdeps = personaliseDeps(deps);
  const rows: log.BatchMessage[] = new Array<log.BatchMessage>(members.length);
  const links: (readonly Personalised['links'][number][])[] = [];
  let total = 0;
  for (let i = 0; i < members.length; i++) {
    const c = members[i]!;
    const merged = template.hasFields ? renderMerge(template, contactValues(c, entries?.get(c.id))) : template.plain;
    const p = finishText(merged, draft.typeId, pdeps, draft.shortenLinks);
    total += p.credits;
    rows[i] = { mobilePhone: c.number, message: p.message, segments: p.segments, credits: p.credits };
    if (p.links.length > 0) links[i] = p.links;
  }
  const paid = await credits.debitCredits(tx, accountId, total, shared.now, `batch:${shared.batchId}`);
  // MaxPerDay (API.md §16), all or nothing: see sendMessage.
  const at = quotaTime(deps, shared.now);
  const room = await quotas.takeDailyRoom(tx, accountId, members.length, at);
  if (!room.ok) throw quotas.dailyLimitError(room.limit);
  // The sender pool and the number's limits (API.md §17), all or nothing, counted under the same lock.
  const numbers = await pool.sendersFor(
    tx,
    accountId,
    rows.map((r) => r.mobilePhone),
    shared.sender,
    at,
  );
  if (shared.sender.pool) for (let i = 0; i < rows.length; i++) rows[i]!.number = numbers[i]!;
  if (!paid) {
    const available = await accounts.getCredits(tx, accountId);
    throw new ValidationFailedError([{ field: 'Message', message: notEnoughCreditsMessage(total, available) }]);
  }
  const ids = await log.insertMessages(
    tx,
    accountId,
    {
      number: shared.sender.number,
      typeId: draft.typeId,
      batchId: shared.batchId,
      dueAt: shared.dueAt,
      mmsTemplateId: shared.mmsTemplateId,
      priority: shared.priority,
    },
    rows,
    shared.now,
  );
  if (links.length > 0) {
    const linkRows: personal.LinkRow[] = [];
    links.forEach((list, i) => {
      for (const l of list) linkRows.push([ids[i]!, l.code, l.url]);
    });
    await storeLinkRows(tx, accountId, linkRows, shared.now);
  }
  // The Batch's Number: the one its messages go from, or "" when a pool spread them over several.
  const used = new Set(numbers);
  const number = used.size <= 1 ? (numbers[0] ?? shared.sender.number) : '';
  return { recipients: members.length, credits: total, number };
}

/**
 * `sms/view?id=` (API.md §10.6): one message of the account's log.
 * @throws NotFoundError `Object not found: {id}` (also for another account's message).
 */
export async function viewMessage(store: Store, accountId: number, id: string): Promise<MessageRow> {
  return loadOr404(id, (n) => log.findMessage(store.db, accountId, n));
}

/** The sms/index filters as sent (query text, a list for `key[]=`, or absent). */
export interface MessageFilterInput {
  Direction?: unknown;
  Status_Id?: unknown;
  MobilePhone?: unknown;
  BatchId?: unknown;
}

/** Validated sms/index filters; `batchId` as canonical integer text. */
export interface MessageListQuery {
  direction?: number;
  statusId?: number;
  mobilePhone?: string;
  batchId?: string;
}

const FILTER_RULES = defineRules([
  { field: 'Status_Id', rule: 'in', values: [1, 2, 3, 4, 5, 6, 7] },
  { field: 'MobilePhone', rule: 'phone' },
  { field: 'BatchId', rule: 'integer' },
]);

/**
 * Reads the sms/index filters (API.md §10.6, §4.4): `Direction` `Outbound` or `Inbound`
 * (`Direction is invalid.`), `Status_Id` 1 to 7 (`Status Id is invalid.` / `… must be an
 * integer.`), `MobilePhone` a phone number in any format (`Mobile Phone is invalid.`), `BatchId`
 * an integer (`Batch Id must be an integer.`). Empty values are no filter.
 * @throws ValidationFailedError (422) with the first error of each filter, in that order.
 */
export function readMessageFilters(query: MessageFilterInput, region: CountryCode): MessageListQuery {
  const errors: FieldError[] = [];
  const out: MessageListQuery = {};
  if (!isEmpty(query.Direction)) {
    if (query.Direction === 'Outbound') out.direction = DIRECTION_OUTBOUND;
    else if (query.Direction === 'Inbound') out.direction = DIRECTION_INBOUND;
    else errors.push({ field: 'Direction', message: messages.invalid('Direction') });
  }
  const checked = validate({ Status_Id: query.Status_Id, MobilePhone: query.MobilePhone, BatchId: query.BatchId }, FILTER_RULES, {
    region,
  });
  errors.push(...checked.errors);
  if (errors.length > 0) throw new ValidationFailedError(errors);
  if (checked.values.Status_Id !== undefined) out.statusId = checked.values.Status_Id;
  if (checked.values.MobilePhone !== undefined) out.mobilePhone = checked.values.MobilePhone.digits;
  if (checked.values.BatchId !== undefined) out.batchId = canonicalInteger(query.BatchId)!;
  return out;
}

/**
 * The sms/index list (newest first): its total and a page fetcher, for ctx.paginate. A `BatchId`
 * that is not one of the account's batches gives an empty list.
 */
export async function messageList(
  store: Store,
  accountId: number,
  query: MessageListQuery,
): Promise<{ total: number; fetch: (limit: number, offset: number) => Promise<MessageRow[]> }> {
  const filter: MessageFilter = {};
  if (query.direction !== undefined) filter.direction = query.direction;
  if (query.statusId !== undefined) filter.statusId = query.statusId;
  if (query.mobilePhone !== undefined) filter.mobilePhone = query.mobilePhone;
  if (query.batchId !== undefined) {
    const id = toId(query.batchId);
    if (id === null || !(await log.hasBatch(store.db, accountId, id))) return { total: 0, fetch: () => Promise.resolve([]) };
    filter.batchId = id;
  }
  const total = await log.countMessages(store.db, accountId, filter);
  return { total, fetch: (limit, offset) => log.listMessages(store.db, accountId, filter, limit, offset) };
}
