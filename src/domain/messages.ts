import type { CountryCode } from 'libphonenumber-js';
import { inTransaction, type Store } from '../store/db.ts';
import * as contacts from '../store/repositories/contacts.ts';
import * as credits from '../store/repositories/credits.ts';
import * as groups from '../store/repositories/groups.ts';
import * as log from '../store/repositories/message-log.ts';
import type { MessageFilter } from '../store/repositories/message-log.ts';
import type { BatchRow, MessageRow } from '../records/messages.ts';
import * as numbers from '../store/repositories/numbers.ts';
import * as accounts from '../store/repositories/accounts.ts';
import { ValidationFailedError, type FieldError } from './errors.ts';
import { loadOr404 } from './find.ts';
import { messageCost, type Prices } from './segments.ts';
import { ownsTemplate } from './mms-templates.ts';
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
 *   Template Id cannot be blank.`; one the account does not own (another account's included), `Mms
 *   Template Id is invalid.` An MMS costs the MMS price (MSGSVC_MMS_CREDITS). For an SMS,
 *   `MmsTemplateId` is ignored. The Message record does not carry the template (API.md §10.7).
 * - `Number` is read as keyword/reserve reads it (an integer: the digits of a short code or of a
 *   long number, a leading `+` allowed), then must be an Active number of the account.
 * - `send-group` to a group whose members have all opted out (or that has none) queues nothing and
 *   still answers 201 with a Batch of 0 recipients and 0 credits. It has no `Location`: there is
 *   no view action for batches (its messages are `sms/index?BatchId=`).
 */

/** What the messaging rules need: the store, the clock, the prices and the phone region. */
export interface MessagingDeps {
  store: Store;
  clock: Clock;
  prices: Prices;
  /** Region national phone numbers are read in (MSGSVC_DEFAULT_REGION). */
  region: CountryCode;
}

/** API.md §10.6 field order of send and send-group: errors are listed in this order (API.md §4.4). */
const FIELD_ORDER = ['Message', 'MobilePhone', 'PhoneNumberId', 'GroupId', 'Number', 'Type_Id', 'MmsTemplateId'];
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
}

/**
 * The rules that need no database: requireds first (Message for an SMS, a recipient, the template
 * of an MMS), then types and lengths. A blank `MobilePhone` leaves the recipient to
 * `PhoneNumberId`; a given one makes `PhoneNumberId` ignored.
 */
function readDraft(input: Input, region: CountryCode, recipient: 'one' | 'group'): Draft {
  const fields: Record<string, unknown> = { Message: input.Message, Number: input.Number, Type_Id: input.Type_Id };
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
  // inFieldOrder keeps the first error of each field: a required one before its type rule's.
  return {
    errors: inFieldOrder(errors),
    typeId,
    message: typeof input.Message === 'string' ? input.Message : '',
    values: checked.values,
    ...(templateId !== undefined ? { templateId } : {}),
  };
}

/** `Mms Template Id is invalid.` when the MMS names a template the account does not own (API.md §1.3, §10.7). */
async function templateErrors(store: Store, accountId: number, draft: Draft): Promise<FieldError[]> {
  if (draft.templateId === undefined || (await ownsTemplate(store.db, accountId, draft.templateId))) return [];
  return [{ field: 'MmsTemplateId', message: messages.invalid('MmsTemplateId') }];
}

/**
 * The account number a message goes from (API.md §10.6 `Number`, shared by send, send-group
 * and schedule): the one given (`n`, the integer read from the body) when it is an Active number of
 * the account, else (none given) the account's first Active number in numbers/index order.
 * @returns its digits, or undefined when there is none (`Number is invalid.`).
 */
export async function resolveNumber(store: Store, accountId: number, n: number | undefined): Promise<string | undefined> {
  if (n === undefined) return (await log.firstActiveNumber(store.db, accountId))?.number;
  if (n < 0 || !Number.isSafeInteger(n)) return undefined;
  const row = await numbers.findNumber(store.db, accountId, String(n));
  return row && row.status_id === NUMBER_STATUS_ACTIVE ? row.number : undefined;
}

/** `Not enough credits: {cost} needed, {available} available.` (API.md §10.6), numbers with thousands commas. */
export function notEnoughCreditsMessage(cost: number, available: number): string {
  return `Not enough credits: ${formatCount(cost)} needed, ${formatCount(available)} available.`;
}

/** `{Label} has opted out.` (API.md §10.6). */
function optedOut(field: string): FieldError {
  return { field, message: `${fieldLabel(field)} has opted out.` };
}

/**
 * `sms/send` (API.md §10.6): queues one message and debits its cost in one transaction.
 * Body: `Message` (required for an SMS, 1 to 1,600 characters), `MobilePhone` (a phone number in
 * any common format) or `PhoneNumberId` (a contact of the account), `Number` (an Active number of
 * the account; default its first Active number), `Type_Id` (1 or 2) and `MmsTemplateId`.
 * @returns the new message (Status_Id 1 Queued), as stored.
 * @throws ValidationFailedError (422) with the first error of each field in API.md §10.6 order, e.g.
 *   `Mobile Phone cannot be blank.` (no recipient), `Phone Number Id is invalid.`, `Mobile Phone has
 *   opted out.`, `Number is invalid.`, `Mms Template Id is invalid.`; and, when all else passed,
 *   on `Message`: `Not enough credits: {cost} needed, {available} available.`
 */
export async function sendMessage(deps: MessagingDeps, accountId: number, input: Input): Promise<MessageRow> {
  const { store, clock } = deps;
  const draft = readDraft(input, deps.region, 'one');
  const errors = [...draft.errors];
  const failed = new Set(errors.map((e) => e.field));
  const v = draft.values;
  let recipient: string | undefined;
  if (v.MobilePhone) {
    recipient = v.MobilePhone.digits;
    const contact = await contacts.findContactFieldsByE164(store.db, accountId, v.MobilePhone.e164);
    if (contact?.opted_out === 1) errors.push(optedOut('MobilePhone'));
  } else if (v.PhoneNumberId !== undefined) {
    const id = toId(canonicalInteger(input.PhoneNumberId, input, 'PhoneNumberId') ?? '');
    const contact = id === null ? undefined : await contacts.findContactFields(store.db, accountId, id);
    if (!contact) errors.push({ field: 'PhoneNumberId', message: messages.invalid('PhoneNumberId') });
    else if (contact.opted_out === 1) errors.push(optedOut('PhoneNumberId'));
    else recipient = contact.number;
  }
  let number: string | undefined;
  if (!failed.has('Number')) {
    number = await resolveNumber(store, accountId, v.Number);
    if (number === undefined) errors.push({ field: 'Number', message: messages.invalid('Number') });
  }
  errors.push(...(await templateErrors(store, accountId, draft)));
  if (errors.length > 0) throw new ValidationFailedError(inFieldOrder(errors));

  const cost = messageCost(draft.typeId, draft.message, deps.prices);
  const now = clock.nowSeconds();
  return inTransaction(
    store,
    async (tx) => {
      // The debit is the transaction's first statement (on SQLite it takes the write lock at once).
      if (!(await credits.debitCredits(tx, accountId, cost.credits, now))) {
        const available = await accounts.getCredits(tx, accountId);
        throw new ValidationFailedError([{ field: 'Message', message: notEnoughCreditsMessage(cost.credits, available) }]);
      }
      return log.insertMessage(
        tx,
        accountId,
        {
          direction: DIRECTION_OUTBOUND,
          number: number!,
          mobilePhone: recipient!,
          message: draft.message,
          typeId: draft.typeId,
          statusId: LOG_STATUS.QUEUED,
          segments: cost.segments,
          credits: cost.credits,
          batchId: null,
          scheduledMessageId: null,
          optOutExempt: 0,
          dueAt: clock.nowMs(),
          mmsTemplateId: draft.typeId === MESSAGE_TYPE_MMS ? (draft.templateId ?? null) : null,
        },
        now,
      );
    },
    { immediate: true },
  );
}

/**
 * `sms/send-group` (API.md §10.6): one message to every member of the account's group who
 * has not opted out (the opted-out are skipped), all or nothing, in one transaction: the batch,
 * its messages (one INSERT … SELECT) and the debit of their total cost. Body: `GroupId` (required,
 * a group of the account), and `Message`, `Number`, `Type_Id`, `MmsTemplateId` as `sms/send`.
 * @returns the Batch: recipients (messages queued), skipped (opted-out members), credits (total).
 * @throws ValidationFailedError (422) as `sms/send` (`Group Id cannot be blank.`, `Group Id is
 *   invalid.` for a group the account does not own), and `Not enough credits: {total} needed,
 *   {available} available.` on `Message`, when the balance cannot pay for every recipient: then
 *   nothing is queued.
 */
export async function sendGroupMessage(deps: MessagingDeps, accountId: number, input: Input): Promise<BatchRow> {
  const { store, clock } = deps;
  const draft = readDraft(input, deps.region, 'group');
  const errors = [...draft.errors];
  const failed = new Set(errors.map((e) => e.field));
  let groupId: number | undefined;
  if (draft.values.GroupId !== undefined) {
    const id = toId(canonicalInteger(input.GroupId, input, 'GroupId') ?? '');
    if (id !== null && (await groups.groupExists(store.db, accountId, id))) groupId = id;
    else errors.push({ field: 'GroupId', message: messages.invalid('GroupId') });
  }
  let number: string | undefined;
  if (!failed.has('Number')) {
    number = await resolveNumber(store, accountId, draft.values.Number);
    if (number === undefined) errors.push({ field: 'Number', message: messages.invalid('Number') });
  }
  errors.push(...(await templateErrors(store, accountId, draft)));
  if (errors.length > 0) throw new ValidationFailedError(inFieldOrder(errors));

  const cost = messageCost(draft.typeId, draft.message, deps.prices);
  const now = clock.nowSeconds();
  return inTransaction(
    store,
    async (tx) => {
      const batchId = await log.insertBatch(
        tx,
        accountId,
        { groupId: groupId!, number: number!, message: draft.message, typeId: draft.typeId },
        now,
      );
      const recipients = await log.insertGroupMessages(
        tx,
        accountId,
        groupId!,
        batchId,
        {
          number: number!,
          message: draft.message,
          typeId: draft.typeId,
          segments: cost.segments,
          credits: cost.credits,
          dueAt: clock.nowMs(),
          mmsTemplateId: draft.typeId === MESSAGE_TYPE_MMS ? (draft.templateId ?? null) : null,
        },
        now,
      );
      const total = recipients * cost.credits;
      if (!(await credits.debitCredits(tx, accountId, total, now))) {
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
