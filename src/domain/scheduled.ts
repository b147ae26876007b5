import { inTransaction, type Store } from '../store/db.ts';
import { refundCredits } from '../store/repositories/credits.ts';
import * as scheduled from '../store/repositories/scheduled.ts';
import * as scheduledList from '../store/repositories/messages.ts';
import type { ScheduledMessageRow } from '../records/scheduled-messages.ts';
import type { ScheduledFields, ScheduledStateRow } from '../store/repositories/scheduled.ts';
import type { Db } from '../store/types.ts';
import { NotFoundError, ValidationFailedError, type FieldError } from './errors.ts';
import { loadOr404 } from './find.ts';
import { resolveSender, type MessagingDeps } from './messages.ts';
import { parseScheduleDateTime } from './schedule-time.ts';
import { MESSAGE_TYPE_MMS } from '../records/statuses.ts';
import { ownsTemplate } from './mms-templates.ts';
import { defineRules, fieldLabel, isBlank, isEmpty, messages, validate, type Input } from './validation.ts';
import { checkSeries, parseRRule, RRULE_LABEL, type RecurrenceRule } from './recurrence.ts';
import { readShortenLinks } from './personalise.ts';

/**
 * Scheduled single messages (API.md §10.6, from `schedule` to the end of API.md §10.6): `sms/schedule`,
 * `sms/view-scheduled`, `sms/update-scheduled`, `sms/cancel-scheduled`. The list
 * (`sms/single-schedule-messages`) keeps its published behaviour. The status life (Pending → Approved
 * and Scheduled or Action Required, the send at DateTime) is the scheduler's, in the dispatcher
 * process: src/dispatch/scheduler.ts; its SQL is src/store/repositories/scheduled.ts (migration 005).
 *
 * Choices the extension leaves open, written down here:
 * - Required on `schedule`: `MobilePhone` and `DateTime` only, as API.md §10.6 marks them. `Message` is
 *   optional (at most 1,600 characters, as send's); an empty SMS costs one segment.
 * - Errors are listed in API.md §10.6's field order: MobilePhone, Message, DateTime, Type_Id, MmsTemplateId,
 *   Subject, Number, RRule, ShortenLinks (the first error of each field, API.md §4.4).
 * - `RRule` (API.md §10.6; the grammar and the occurrences are src/domain/recurrence.ts): optional;
 *   `""` is none (on update: the message stops recurring and is sent once, at the DateTime shown).
 *   Anything that is not a rule (a non-string, JSON null included, more than 255 characters, a
 *   part outside the contract) and a rule with no occurrence from DateTime is `R Rule is invalid.`
 *   (Yii2's label of RRule is `R Rule`). Stored and shown exactly as sent, as the last field of
 *   the record of schedule, view-scheduled and update-scheduled; `sms/single-schedule-messages`
 *   and the `scheduled.action_required` webhook's data keep API.md §9.10's fields (a receiver
 *   written for them reads the same bytes). DateTime is the first
 *   occurrence and then always the next one; the occurrences keep its wall-clock time in the
 *   service's zone (MSGSVC_TIMEZONE, kept with the rule when it is set).
 * - Update and the rule: sending a `RRule` other than the stored one, or a `DateTime`, starts the
 *   series again from the (new or shown) DateTime: COUNT counts from there. Other changes keep
 *   the series (its origin and the number of the occurrence due). A kept rule is checked against a
 *   new DateTime (UNTIL before it: `R Rule is invalid.`).
 * - `ShortenLinks` (0 or 1, default 0; 1 needs MSGSVC_LINK_DOMAIN: src/domain/personalise.ts) is
 *   stored and applied at each send; it is not part of the record. On update only when sent.
 * - Merge fields: `Message` is stored and shown as written; the scheduler reserves and sends the
 *   text personalised for the recipient (src/dispatch/scheduler.ts).
 * - `DateTime`: its three forms and the time zone are src/domain/schedule-time.ts. A value that is
 *   not a string (a number, an array) has no format: `The format of Date Time is invalid.` "In the
 *   future" is strictly after the clock's now; "at most 366 days ahead" is ≤ now + 366 × 24 h,
 *   both to the millisecond; the stored time is the whole second (rounded down).
 * - `Type_Id`, `MmsTemplateId` as send does (src/domain/messages.ts): `Type_Id` 2 needs a template
 *   of the account (API.md §10.7): none gives `Mms Template Id cannot be blank.`, one the
 *   account does not own `Mms Template Id is invalid.`; it is stored and shown in the record, and
 *   the message costs the MMS price. For an SMS `MmsTemplateId` is ignored and stored as none (the
 *   record shows `""`). A template whose media have all been deleted is no 422 here, unlike send:
 *   as for an opted-out recipient, the message is accepted and the check makes it Action Required
 *   (`NO_MEDIA`, API.md §10.7); deleting a template's last medium (or the template) makes the
 *   Approved MMS that name it Pending again, so that they are checked again within a second
 *   (src/domain/mms-templates.ts recheckScheduledWithoutMedia).
 * - `Number` is read as send reads it; blank means the default (the first Active number). It is
 *   resolved when scheduled (or updated) and stored; the check and the send use the stored one.
 * - An opted-out recipient is not a 422: the message is accepted (Pending) and the check makes it
 *   Action Required, as API.md §11.7's check lists the opt-out.
 * - `update-scheduled`: only the fields sent are checked and change (a required one sent blank
 *   gives `cannot be blank.`). The body is checked first, then the record is looked up (404), then
 *   the rules that need the database (API.md §1.5). Every successful update, even one that
 *   changes nothing, is a change: what the message had reserved is released and it is 1 Pending,
 *   checked again within a second. Changing `Type_Id` to 2 needs a template (sent, or the one
 *   stored); changing it to 1 drops the template. A stored `Number` (not sent) is not checked
 *   here: if it is no longer Active, the check makes the message Action Required.
 * - `cancel-scheduled` releases the reserved credits in the same transaction that deletes it; for a
 *   recurring message that is the next occurrence's reservation, and the series ends.
 * - Rows the service never managed (`msgsvc generate`'s, written straight into the table, or older
 *   data; `reserved_credits` NULL) are shown as they are and never checked or sent; an update makes
 *   them managed (Pending). The demo account's are made by `scheduleMessageIn`, as this operation
 *   makes them: managed, and checked like any.
 * - "Checked again when credits are added": a trigger on `credit_balances` (migration 005) marks
 *   the account's Action Required messages due for a check whenever the balance goes up, whoever
 *   raised it (CLI `credits add/set`, a refund of a Failed or Rejected message, a cancel or update
 *   releasing a reservation, plain SQL). Only messages whose DateTime is still ahead are checked
 *   again that way: one still Action Required at its time stays listed, unsent, until it is
 *   updated (then it is checked, and sent at once if approved) or cancelled.
 * - At its DateTime an approved message becomes a Message of the log (Queued, `ScheduledMessageId`
 *   its Id, `Credits` its reservation: no second debit, refunded if it ends Failed or Rejected)
 *   and leaves the scheduled list. A recipient who opted out or a number no longer Active after
 *   the approval does not stop that: the dispatcher then ends the message Rejected with a refund
 *   (API.md §11.6 "queued or scheduled: Rejected with a refund").
 */

/** What the scheduled message rules need: the messaging deps and the service's time zone. */
export interface ScheduleDeps extends MessagingDeps {
  /** IANA zone of the two wall-clock DateTime forms (MSGSVC_TIMEZONE). */
  timeZone: string;
}

/** What `sms/schedule` reads of the deps (no prices: the check reserves, not the schedule). */
export type ScheduleInputDeps = Pick<ScheduleDeps, 'store' | 'clock' | 'region' | 'timeZone' | 'linkDomain'>;

/** API.md §10.6 `schedule` field order: errors are listed in this order. */
export const SCHEDULE_FIELDS = [
  'MobilePhone',
  'Message',
  'DateTime',
  'Type_Id',
  'MmsTemplateId',
  'Subject',
  'Number',
  'RRule',
  'ShortenLinks',
  'Priority',
] as const;
const FIELD_RANK = new Map<string, number>(SCHEDULE_FIELDS.map((f, i) => [f, i]));

function inFieldOrder(errors: FieldError[]): FieldError[] {
  const first = new Map<string, FieldError>();
  for (const e of errors) if (!first.has(e.field)) first.set(e.field, e);
  return [...first.values()].sort((a, b) => (FIELD_RANK.get(a.field) ?? 99) - (FIELD_RANK.get(b.field) ?? 99));
}

const RULES = defineRules([
  { field: 'MobilePhone', rule: 'phone' },
  { field: 'Message', rule: 'string', min: 1, max: 1600 },
  { field: 'Type_Id', rule: 'in', values: [1, 2] },
  { field: 'MmsTemplateId', rule: 'integer' },
  { field: 'Subject', rule: 'string', max: 255 },
  { field: 'Number', rule: 'integer' },
  { field: 'Priority', rule: 'in', values: [0, 1] },
]);

/** Days ahead a DateTime may be (API.md §10.6: at most 366 days). */
export const MAX_DAYS_AHEAD = 366;

const blank = (field: string): FieldError => ({ field, message: `${fieldLabel(field)} cannot be blank.` });

/**
 * The `DateTime` rule (API.md §10.6): one of the three forms (else `The format of Date Time
 * is invalid.`), strictly after `nowMs` and at most 366 days after it (else `Date Time is
 * invalid.`). A blank value is the caller's `cannot be blank.`
 * @returns the time in whole epoch seconds, or the error.
 */
export function readDateTime(value: unknown, timeZone: string, nowMs: number): { seconds: number } | { error: FieldError } {
  const ms = parseScheduleDateTime(value, timeZone);
  if (ms === null) return { error: { field: 'DateTime', message: `The format of ${fieldLabel('DateTime')} is invalid.` } };
  if (!(ms > nowMs) || ms > nowMs + MAX_DAYS_AHEAD * 86_400_000)
    return { error: { field: 'DateTime', message: messages.invalid('DateTime') } };
  return { seconds: Math.floor(ms / 1000) };
}

/** What a checked body changes: only the fields it holds (for an update), all of them (for a schedule). */
interface Change {
  mobilePhone?: string;
  message?: string;
  scheduledAt?: number;
  typeId?: number;
  /** A non-empty `MmsTemplateId` was sent (its rules count only for an MMS: `templateErrors`). */
  mmsTemplateSent?: boolean;
  /** Its own rule's error (`Mms Template Id must be an integer.`), kept aside likewise. */
  templateError?: FieldError;
  /** The template id sent, when an integer (its ownership is checked by `templateErrors`). */
  mmsTemplateId?: number;
  subject?: string;
  /** The Number as sent: a value (to check), or 'default' (blank: the first Active number). */
  number?: number | 'default';
  /** The RRule as sent and read (`rule` null: `""`, none). */
  rrule?: { text: string; rule: RecurrenceRule | null };
  shortenLinks?: boolean;
  /** API.md §17 Priority as sent (0 or 1). */
  priority?: number;
}

/** `R Rule is invalid.` (Yii2's label of `RRule`, API.md §10.6). */
const rruleInvalid = (): FieldError => ({ field: 'RRule', message: `${RRULE_LABEL} is invalid.` });

/**
 * The rules that need no database, over the fields `present` (all of them for a schedule; those
 * sent for an update). Required fields are required when present (or always, for a schedule).
 */
function readChange(input: Input, deps: ScheduleInputDeps, mode: 'create' | 'update'): { errors: FieldError[]; change: Change } {
  const present = (field: string) => mode === 'create' || Object.hasOwn(input, field);
  const fields: Record<string, unknown> = {};
  for (const f of ['MobilePhone', 'Message', 'Type_Id', 'MmsTemplateId', 'Subject', 'Number', 'Priority'])
    if (present(f)) fields[f] = input[f];
  const checked = validate(fields, RULES, { region: deps.region });
  const errors: FieldError[] = [];
  const change: Change = {};
  const v = checked.values;

  if (present('MobilePhone') && isBlank(input.MobilePhone)) errors.push(blank('MobilePhone'));
  else if (v.MobilePhone) change.mobilePhone = v.MobilePhone.digits;
  if (present('Message') && !checked.failed('Message')) change.message = v.Message ?? '';
  if (present('DateTime')) {
    if (isBlank(input.DateTime)) errors.push(blank('DateTime'));
    else {
      const dt = readDateTime(input.DateTime, deps.timeZone, deps.clock.nowMs());
      if ('error' in dt) errors.push(dt.error);
      else change.scheduledAt = dt.seconds;
    }
  }
  if (v.Type_Id !== undefined) change.typeId = v.Type_Id;
  if (present('Subject') && !checked.failed('Subject')) change.subject = v.Subject ?? '';
  if (present('Number') && !checked.failed('Number')) change.number = v.Number ?? 'default';
  if (v.Priority !== undefined) change.priority = v.Priority;
  if (present('MmsTemplateId') && !isEmpty(input.MmsTemplateId)) change.mmsTemplateSent = true;
  // MmsTemplateId's own rules count only for an MMS (send ignores it for an SMS): kept aside.
  const templateError = checked.errors.find((e) => e.field === 'MmsTemplateId');
  if (templateError) change.templateError = templateError;
  else if (v.MmsTemplateId !== undefined) change.mmsTemplateId = v.MmsTemplateId;
  errors.push(...checked.errors.filter((e) => e.field !== 'MmsTemplateId'));
  if (Object.hasOwn(input, 'RRule')) {
    const text = input.RRule;
    if (text === '') change.rrule = { text: '', rule: null };
    else {
      const rule = parseRRule(text);
      if (rule) change.rrule = { text: text as string, rule };
      else errors.push(rruleInvalid());
    }
  }
  if (mode === 'create' || Object.hasOwn(input, 'ShortenLinks')) {
    const shorten = readShortenLinks(input, deps.linkDomain);
    if ('error' in shorten) errors.push(shorten.error);
    else change.shortenLinks = shorten.value;
  }
  return { errors, change };
}

/** What a schedule or an update stores of the recurrence: the rule, its DTSTART and zone, the occurrence due. */
type Recurrence = Pick<ScheduledFields, 'rrule' | 'rruleStart' | 'rruleZone' | 'rruleOccurrence'>;

const NO_RECURRENCE: Recurrence = { rrule: '', rruleStart: null, rruleZone: '', rruleOccurrence: 1 };

/**
 * The recurrence a change leaves (see the module comment): a rule counted from `scheduledAt` in
 * the service's zone, or the stored one kept, or none; or `R Rule is invalid.` when the rule has
 * no occurrence from that DateTime.
 * @param stored the row being updated (undefined for a schedule).
 * @param rule the rule read from the stored text, when it is kept.
 */
function recurrenceOf(
  change: Change,
  scheduledAt: number,
  timeZone: string,
  stored: Pick<ScheduledStateRow, 'rrule' | 'rrule_start' | 'rrule_zone' | 'rrule_occurrence'> | undefined,
): Recurrence | FieldError {
  const restart = (text: string, rule: RecurrenceRule): Recurrence | FieldError =>
    checkSeries({ rule, startSeconds: scheduledAt, zone: timeZone })
      ? { rrule: text, rruleStart: scheduledAt, rruleZone: timeZone, rruleOccurrence: 1 }
      : rruleInvalid();
  if (change.rrule !== undefined && (stored === undefined || change.rrule.text !== stored.rrule)) {
    return change.rrule.rule ? restart(change.rrule.text, change.rrule.rule) : NO_RECURRENCE;
  }
  if (stored === undefined || stored.rrule === '') return NO_RECURRENCE;
  const rule = parseRRule(stored.rrule);
  // A stored rule always reads (it was checked when set); one that does not is dropped.
  if (!rule) return NO_RECURRENCE;
  if (change.scheduledAt !== undefined) return restart(stored.rrule, rule);
  return {
    rrule: stored.rrule,
    rruleStart: stored.rrule_start ?? scheduledAt,
    rruleZone: stored.rrule_zone || timeZone,
    rruleOccurrence: stored.rrule_occurrence,
  };
}

/**
 * The `MmsTemplateId` rule for the resulting type (as send, src/domain/messages.ts): an MMS needs
 * one (`Mms Template Id cannot be blank.`), an integer (`… must be an integer.`) of a template of
 * the account (API.md §10.7; another account's, or none, gives `Mms Template Id is invalid.`).
 * An SMS has none.
 * @param db the store's handle, or the open transaction's.
 * @param stored the template stored on the row being updated (kept when none is sent).
 */
async function templateErrors(db: Db, accountId: number, change: Change, typeId: number, stored: number | null): Promise<FieldError[]> {
  if (typeId !== MESSAGE_TYPE_MMS) return [];
  if (change.templateError) return [change.templateError];
  if (change.mmsTemplateSent) {
    const ok = change.mmsTemplateId !== undefined && (await ownsTemplate(db, accountId, change.mmsTemplateId));
    return ok ? [] : [{ field: 'MmsTemplateId', message: messages.invalid('MmsTemplateId') }];
  }
  if (stored === null) return [blank('MmsTemplateId')];
  return [];
}

/**
 * The number a change resolves to: the one sent (an Active number of the account), the stored one
 * (not sent), or the default (sent blank, or none stored); or `Number is invalid.`
 * @param store the store, or the open transaction as a store (SQLite: queries of a transaction
 *   must run on its handle).
 */
async function numberOf(
  store: Store,
  accountId: number,
  change: Change,
  stored: string,
): Promise<{ number: string } | { error: FieldError }> {
  if (change.number === undefined && stored !== '') return { number: stored };
  const sender = await resolveSender(store, accountId, typeof change.number === 'number' ? change.number : undefined);
  if (sender === undefined) return { error: { field: 'Number', message: messages.invalid('Number') } };
  // SenderSelection `pool` and no Number (API.md §17): '' stored, the pool chooses when it is queued.
  return { number: sender.pool ? '' : sender.number };
}

/**
 * `sms/schedule` (API.md §11.7): adds a scheduled single message, 1 Pending with nothing
 * reserved; the scheduler checks it within a second (src/dispatch/scheduler.ts).
 * Body: `MobilePhone` (required, a phone number in any common format, stored as E.164 digits),
 * `Message` (at most 1,600 characters), `DateTime` (required; `YYYY:MM:DD HH:MM:SS` or
 * `YYYY-MM-DD HH:MM:SS` in the service's zone, or ISO 8601 with an offset; in the future, at most
 * 366 days ahead), `Type_Id` (1 SMS by default, 2 MMS with `MmsTemplateId`), `Subject` (at most 255
 * characters), `Number` (an Active number of the account; default its first Active number),
 * `RRule` (a recurrence rule counted from DateTime, `""` none), `ShortenLinks` (0 or 1).
 * @returns the new row (record fields and state).
 * @throws ValidationFailedError (422), the first error of each field in API.md §10.6 order: `Mobile Phone
 *   cannot be blank.`, `Mobile Phone is invalid.`, `Message should contain at most 1,600
 *   characters.`, `Date Time cannot be blank.`, `The format of Date Time is invalid.`, `Date Time
 *   is invalid.`, `Type Id is invalid.`, `Mms Template Id cannot be blank.` / `… is invalid.`,
 *   `Subject should contain at most 255 characters.`, `Number must be an integer.`, `Number is invalid.`,
 *   `R Rule is invalid.`, `Shorten Links must be an integer.` / `… is invalid.`
 */
export async function scheduleMessage(deps: ScheduleInputDeps, accountId: number, input: Input): Promise<ScheduledStateRow> {
  const fields = await checkSchedule(deps, deps.store, accountId, input);
  // One transaction: its audit entry commits with it (API.md §15.5).
  return inTransaction(deps.store, (tx) => scheduled.insertScheduled(tx, accountId, fields, deps.clock.nowSeconds(), deps.clock.nowMs()));
}

/**
 * `sms/schedule` inside a transaction the caller holds (`tx`): the same rules, the same row (1
 * Pending, nothing reserved, its check due now, so that the scheduler checks it within a second).
 * For the demo account (src/domain/demo.ts), whose scheduled messages are made as the API makes
 * them, in the transaction that creates the account.
 * @throws ValidationFailedError as `scheduleMessage`.
 */
export async function scheduleMessageIn(tx: Db, deps: ScheduleInputDeps, accountId: number, input: Input): Promise<ScheduledStateRow> {
  const fields = await checkSchedule(deps, { ...deps.store, db: tx }, accountId, input);
  return scheduled.insertScheduled(tx, accountId, fields, deps.clock.nowSeconds(), deps.clock.nowMs());
}

/**
 * The rules of `sms/schedule` (see `scheduleMessage`), read through `store` (the store, or the
 * caller's transaction as a store): the fields of the row to insert.
 * @throws ValidationFailedError as `scheduleMessage`.
 */
async function checkSchedule(deps: ScheduleInputDeps, store: Store, accountId: number, input: Input): Promise<ScheduledFields> {
  const { errors, change } = readChange(input, deps, 'create');
  const typeId = change.typeId ?? 1;
  errors.push(...(await templateErrors(store.db, accountId, change, typeId, null)));
  let number: string | undefined;
  if (!errors.some((e) => e.field === 'Number')) {
    const n = await numberOf(store, accountId, change, '');
    if ('error' in n) errors.push(n.error);
    else number = n.number;
  }
  let recurrence = NO_RECURRENCE;
  if (change.scheduledAt !== undefined) {
    const r = recurrenceOf(change, change.scheduledAt, deps.timeZone, undefined);
    if ('field' in r) errors.push(r);
    else recurrence = r;
  }
  if (errors.length > 0) throw new ValidationFailedError(inFieldOrder(errors));
  return {
    mobilePhone: change.mobilePhone!,
    message: change.message ?? '',
    scheduledAt: change.scheduledAt!,
    typeId,
    mmsTemplateId: typeId === MESSAGE_TYPE_MMS ? (change.mmsTemplateId ?? null) : null,
    subject: change.subject ?? '',
    number: number!,
    ...recurrence,
    shortenLinks: change.shortenLinks ?? false,
    priority: change.priority ?? 0,
  };
}

/** How many scheduled messages the account has (sms/single-schedule-messages). */
export function countScheduledMessages(store: Store, accountId: number): Promise<number> {
  return scheduledList.countScheduledMessages(store.db, accountId);
}

/** One page of the account's scheduled messages in id order (`limit` rows from `offset`). */
export function listScheduledMessages(store: Store, accountId: number, limit: number, offset: number): Promise<ScheduledMessageRow[]> {
  return scheduledList.listScheduledMessages(store.db, accountId, limit, offset);
}

/**
 * The same page as listScheduledMessages as the JSON text of its records (times in UTC), when the
 * store can build it (SQLite, outside another transaction); undefined otherwise.
 */
export function listScheduledMessagesJson(store: Store, accountId: number, limit: number, offset: number): Promise<string | undefined> {
  return scheduledList.listScheduledMessagesJson(store.db, accountId, limit, offset);
}

/**
 * `sms/view-scheduled?id=` (API.md §10.6): one scheduled message of the account.
 * @throws NotFoundError `Object not found: {id}` (another account's, or one already sent or cancelled).
 */
export async function viewScheduled(store: Store, accountId: number, id: string): Promise<ScheduledStateRow> {
  return loadOr404(id, (n) => scheduled.findScheduled(store.db, accountId, n));
}

/**
 * `sms/update-scheduled?id=` (API.md §10.6): the fields of `schedule`, only those sent
 * change (a required one may be left out, not sent blank). In one transaction: what the message
 * had reserved is released (refunded), and it becomes 1 Pending, checked again within a second.
 * @param id canonical integer text of the `id` query parameter.
 * @throws NotFoundError `Object not found: {id}`, after the body's own rules passed or failed and
 *   before the rules that need the database (API.md §1.5).
 * @throws ValidationFailedError (422) as `scheduleMessage`.
 */
export async function updateScheduled(deps: ScheduleDeps, accountId: number, id: string, input: Input): Promise<ScheduledStateRow> {
  const { errors, change } = readChange(input, deps, 'update');
  return inTransaction(
    deps.store,
    async (tx) => {
      // Lock order (src/store/repositories/scheduled.ts): the balance row first, then the message.
      await scheduled.lockCredits(tx, accountId);
      const row = await loadOr404(id, (n) => scheduled.findScheduled(tx, accountId, n));
      const typeId = change.typeId ?? row.type_id;
      const stored = row.type_id === MESSAGE_TYPE_MMS ? row.mms_template_id : null;
      const all = [...errors, ...(await templateErrors(tx, accountId, change, typeId, stored))];
      let number = row.number;
      if (!all.some((e) => e.field === 'Number')) {
        const n = await numberOf({ ...deps.store, db: tx }, accountId, change, row.number);
        if ('error' in n) all.push(n.error);
        else number = n.number;
      }
      const scheduledAt = change.scheduledAt ?? row.scheduled_at;
      let recurrence = NO_RECURRENCE;
      if (!errors.some((e) => e.field === 'DateTime' || e.field === 'RRule')) {
        const r = recurrenceOf(change, scheduledAt, deps.timeZone, row);
        if ('field' in r) all.push(r);
        else recurrence = r;
      }
      if (all.length > 0) throw new ValidationFailedError(inFieldOrder(all));
      const fields: ScheduledFields = {
        mobilePhone: change.mobilePhone ?? row.mobile_phone,
        message: change.message ?? row.message,
        scheduledAt,
        typeId,
        mmsTemplateId: typeId === MESSAGE_TYPE_MMS ? (change.mmsTemplateId ?? stored) : null,
        subject: change.subject ?? row.subject,
        number,
        ...recurrence,
        shortenLinks: change.shortenLinks ?? row.shorten_links === 1,
        priority: change.priority ?? Number(row.priority),
      };
      const updated = await scheduled.rewriteScheduled(tx, accountId, row.id, fields, deps.clock.nowMs());
      // Sent or cancelled between the read and the write (PostgreSQL): it is gone.
      if (!updated) throw new NotFoundError(id);
      await refundCredits(tx, accountId, row.reserved_credits ?? 0, deps.clock.nowSeconds(), `scheduled:${row.id}`);
      return updated;
    },
    { immediate: true },
  );
}

/**
 * `sms/cancel-scheduled?id=` (API.md §10.6): deletes the scheduled message and releases
 * (refunds) its reserved credits, in one transaction. The route answers 204.
 * @throws NotFoundError `Object not found: {id}` (another account's, or already sent or cancelled).
 */
export async function cancelScheduled(deps: Pick<ScheduleDeps, 'store' | 'clock'>, accountId: number, id: string): Promise<void> {
  await inTransaction(
    deps.store,
    async (tx) => {
      await scheduled.lockCredits(tx, accountId);
      const n = await loadOr404(id, (n) => Promise.resolve(n));
      const reserved = await scheduled.deleteScheduled(tx, accountId, n);
      if (reserved === undefined) throw new NotFoundError(id);
      await refundCredits(tx, accountId, reserved, deps.clock.nowSeconds(), `scheduled:${n}`);
    },
    { immediate: true },
  );
}
