import type { CountryCode } from 'libphonenumber-js';
import type { Config } from '../config.ts';
import { inTransaction, type Store } from '../store/db.ts';
import * as credits from '../store/repositories/credits.ts';
import * as inbound from '../store/repositories/inbound.ts';
import * as log from '../store/repositories/message-log.ts';
import * as numbers from '../store/repositories/numbers.ts';
import type { MessageRow } from '../records/messages.ts';
import type { Db } from '../store/types.ts';
import { ValidationFailedError, type FieldError } from './errors.ts';
import type { MessagingDeps } from './messages.ts';
import { normalisePhone, type NormalisedPhone } from './phone.ts';
import { messageCost, smsSegments } from './segments.ts';
import { DIRECTION_INBOUND, DIRECTION_OUTBOUND, LOG_STATUS, NUMBER_STATUS_ACTIVE } from '../records/statuses.ts';
import { keywordKey } from './text.ts';
import type { Clock } from '../lib/time.ts';
import { canonicalInteger, defineRules, isBlank, messages, validate, type Input } from './validation.ts';
import { emitEvent } from './webhooks.ts';
import { recordKeyword } from './consent.ts';
import { findContactByE164 } from '../store/repositories/contacts.ts';
import { markNeverHeld } from '../store/repositories/account-settings.ts';

/**
 * Inbound texts, opt-out and keywords at work (API.md §11.5), and the sandbox's
 * `POST /v1/sandbox/inbound` (API.md §11.3), which runs the same rules on a text the caller makes up.
 *
 * An inbound text to an account number is stored as a Message (Direction Inbound, Status_Id 7
 * Received, 0 credits, Type_Id 1) for the account that holds the number; then, on the trimmed
 * text, compared case-insensitively, the first rule that applies is the one that runs:
 * 1. the whole text is STOP, STOPALL, UNSUBSCRIBE, CANCEL, END or QUIT: the sender's contact
 *    (created if unknown) gets OptedOut 1, and one free confirmation is sent (MSGSVC_STOP_REPLY);
 * 2. the whole text is START or UNSTOP: OptedOut 0, and a free confirmation (MSGSVC_START_REPLY);
 * 3. the whole text is HELP or INFO: a free reply (MSGSVC_HELP_REPLY);
 * 4. the text begins with a keyword reserved on that number (the keyword followed by white space or
 *    the end of the text; a keyword of several words, such as `JOIN NOW`, matches its words in
 *    order, separated by any white space; the longest such keyword wins): its AutoreplyMessage,
 *    when not empty, is sent to the sender as an ordinary paid message, and the sender (a contact
 *    created if unknown) joins every group whose KeywordId is that reservation.
 * Rules 1–3 never meet rule 4: the carrier words cannot be reserved as keywords (API.md §10.5).
 *
 * Shared short code (several accounts hold the number): a keyword text goes to the keyword's
 * account only (stored there, and nowhere else); STOP, START and HELP apply to every account that
 * holds the number (stored and applied in each), and ONE confirmation in all is sent, logged in the
 * account with the lowest id among them; any other text is stored for each of them.
 *
 * Every change of a contact's OptedOut by STOP or START appends an entry to that contact's consent
 * ledger (API.md §10.2 contacts/consent; src/domain/consent.ts): Source `keyword`, Detail the text
 * as received, trimmed (its case kept), Carrier the configured name of the carrier the text came
 * through (`InboundTextIn.carrier`; for `POST /v1/sandbox/inbound`, the sandbox carrier's name).
 * A STOP or START that changes no contact writes none.
 *
 * Everything one text causes (the stored texts, contacts, memberships, ledger entries, replies and
 * the autoreply's debit) is written in ONE transaction: a carrier's text is acknowledged after that commit
 * (CarrierSink), so a crash loses none of it and never keeps half of it.
 *
 * The three replies are Queued like any message and go out through the dispatcher, free (Credits
 * 0) and marked opt_out_exempt: they are the only messages that reach an opted-out number.
 * From then on every other outbound message to an opted-out number is refused: `sms/send` gives
 * 422 `… has opted out.` (messages.ts), `send-group` skips the number, and a queued message ends
 * Rejected `OPTED_OUT` with its credits refunded (the dispatcher, src/dispatch/dispatcher.ts).
 *
 * Choices API.md §11.5 leaves open, written down here:
 * - "Trimmed" is JavaScript's trim (Unicode white space); "case-insensitively" is ASCII case
 *   folding for the carrier words (`ſtop`, with a long s, is not STOP), and the keywords' own key
 *   for rule 4 (src/domain/text.ts `keywordKey`: NFKC, trimmed, lower case, each run of white
 *   space one space, as keyword/reserve stores it). Rule 4 compares the key of the whole text with
 *   the keys of the number's reservations: a keyword matches when the text's key is its key, or
 *   starts with its key and a space, so it ends at a word's end (`JOIN NOW` is not in
 *   `JOIN NOWHERE` nor in `JOINNOW`), and `JOIN\t\nNOW please` texts `JOIN NOW`. Of the keywords
 *   that match (`JOIN` and `JOIN NOW` both match `join now`), the longest key wins; there is no tie,
 *   as two keys of one length that both begin the text are the same key, unique on the number.
 *   Punctuation is part of a word: `winner!` is not `WINNER`.
 * - START from an unknown sender creates no contact (there is nothing to clear); the confirmation
 *   is still sent. STOP from a sender already opted out, or START from one who is not, changes no
 *   contact (DateUpdated stays) and still sends the confirmation.
 * - The autoreply is paid by the keyword's account like `sms/send`, debited in the same
 *   transaction. When it cannot go out it is still logged, at once Rejected with nothing debited
 *   (its Credits show its price, as a refunded Rejected message's do), ErrorCode:
 *   `OPTED_OUT` (the sender opted out of that account: texting a keyword does not opt back in),
 *   `NUMBER_INACTIVE` (the number is no longer Active), or `NO_CREDITS` (the balance is below its
 *   price). The sender still joins the keyword's groups. A blank AutoreplyMessage sends nothing.
 * - The replies and the autoreply go from the number the text was sent to. A confirmation from a
 *   number that is no longer Active is Rejected `NUMBER_INACTIVE` by the dispatcher (free: nothing
 *   to refund). Texts to a number that is not Active are stored and handled all the same.
 * - A sender that is not a possible phone number (a carrier may pass an alphanumeric sender) gets
 *   its text stored, in the accounts the routing above picks, and nothing else: no contact, no
 *   reply, no autoreply.
 * - A text to a number no account holds is dropped (nothing stored); the dispatcher logs it.
 */

/** The three reply texts (settings MSGSVC_STOP_REPLY, MSGSVC_START_REPLY, MSGSVC_HELP_REPLY). */
export interface InboundReplies {
  stop: string;
  start: string;
  help: string;
}

/** What the inbound rules need: the messaging rules' store, clock, prices, region, and the reply texts. */
export interface InboundDeps extends MessagingDeps {
  replies: InboundReplies;
  /**
   * The carrier name of a text that names none (`InboundTextIn.carrier`), for the consent ledger:
   * the sandbox carrier's configured name when there is one (`POST /v1/sandbox/inbound`), else
   * the first carrier's. Default `sandbox`.
   */
  defaultCarrier?: string;
}

/** The inbound rules' dependencies from the settings (API.md §11.5: the replies are settings). */
export function inboundDeps(
  config: Pick<Config, 'smsSegmentCredits' | 'mmsCredits' | 'defaultRegion' | 'stopReply' | 'startReply' | 'helpReply'> & {
    readonly carriers?: Config['carriers'];
  },
  store: Store,
  clock: Clock,
): InboundDeps {
  return {
    store,
    clock,
    prices: { smsSegmentCredits: config.smsSegmentCredits, mmsCredits: config.mmsCredits },
    region: config.defaultRegion,
    replies: { stop: config.stopReply, start: config.startReply, help: config.helpReply },
    defaultCarrier: (config.carriers?.find((c) => c.kind === 'sandbox') ?? config.carriers?.[0])?.name ?? 'sandbox',
  };
}

/** An inbound text (the carrier boundary's InboundText): numbers as digits. */
export interface InboundTextIn {
  readonly from: string;
  readonly to: string;
  readonly text: string;
  /** The configured name of the carrier it came through (the consent ledger's Carrier); default `InboundDeps.defaultCarrier`. */
  readonly carrier?: string;
}

/** Which rule of API.md §11.5 a text falls under (`keyword` only when the text begins with a keyword reserved on the number). */
export type InboundKind = 'stop' | 'start' | 'help' | 'keyword' | 'other';

/** A message written for one account. */
export interface AccountMessage {
  accountId: number;
  message: MessageRow;
}

/** What one inbound text did. */
export interface InboundOutcome {
  kind: InboundKind;
  /** The inbound messages stored (Received), one per account concerned, lowest account id first; none when no account holds the number. */
  received: AccountMessage[];
  /** The outbound messages written: the one confirmation or reply, or the autoreply (Queued, or Rejected at once). */
  replies: AccountMessage[];
  /** For a keyword: the groups the sender newly joined. */
  joinedGroupIds: number[];
}

// Without the `u` flag, `i` folds ASCII only: `ſtop` (long s) or `ſtart` are not carrier words.
const STOP_WORDS = /^(?:STOP|STOPALL|UNSUBSCRIBE|CANCEL|END|QUIT)$/i;
const START_WORDS = /^(?:START|UNSTOP)$/i;
const HELP_WORDS = /^(?:HELP|INFO)$/i;

/**
 * The carrier-word rule a text falls under (API.md §11.5 rules 1–3), on the trimmed text,
 * ASCII case-insensitively; else `other` with the key of the whole text (`keywordKey`), whose
 * beginning rule 4 matches with the keys of the number's keywords.
 */
export function classifyInbound(text: string): { kind: 'stop' | 'start' | 'help' } | { kind: 'other'; textKey: string } {
  const trimmed = text.trim();
  if (STOP_WORDS.test(trimmed)) return { kind: 'stop' };
  if (START_WORDS.test(trimmed)) return { kind: 'start' };
  if (HELP_WORDS.test(trimmed)) return { kind: 'help' };
  return { kind: 'other', textKey: keywordKey(trimmed) };
}

/** ErrorCodes of an autoreply that could not go out (see the module comment). */
export const AUTOREPLY_REJECTED = Object.freeze({ OPTED_OUT: 'OPTED_OUT', NUMBER_INACTIVE: 'NUMBER_INACTIVE', NO_CREDITS: 'NO_CREDITS' });

/** The sender as a phone number: digits as a carrier gives them (with or without `+`), else a number in `region`; null when not possible. */
function senderPhone(from: string, region: CountryCode): NormalisedPhone | null {
  const raw = from.trim();
  if (/^\+?\d+$/.test(raw)) return normalisePhone(raw.startsWith('+') ? raw : `+${raw}`, region) ?? normalisePhone(raw, region);
  return normalisePhone(raw, region);
}

/** Digits of a number as stored (`+15550100001` → `15550100001`). */
function digitsOf(number: string): string {
  const raw = number.trim();
  return raw.startsWith('+') ? raw.slice(1) : raw;
}

/**
 * Runs API.md §11.5 on one inbound text (see the module comment for every rule and choice),
 * in one transaction, and returns what it stored and sent. The carriers' inbound sink and
 * `POST /v1/sandbox/inbound` (API.md §11.3) both come here.
 */
export async function receiveInbound(deps: InboundDeps, text: InboundTextIn): Promise<InboundOutcome> {
  return inTransaction(deps.store, (tx) => receiveInboundIn(tx, deps, text), { immediate: true });
}

/**
 * `receiveInbound` inside a transaction the caller holds (`tx`), so that the caller's own writes
 * commit or roll back with API.md §11.5's (a carrier callback's once-only key, src/domain/carrier-callbacks.ts).
 */
export async function receiveInboundIn(tx: Db, deps: InboundDeps, text: InboundTextIn): Promise<InboundOutcome> {
  const { clock, replies } = deps;
  const to = digitsOf(text.to);
  const sender = senderPhone(text.from, deps.region);
  const mobilePhone = sender?.digits ?? digitsOf(text.from);
  const classified = classifyInbound(text.text);
  const inSegments = smsSegments(text.text).segments;
  const now = clock.nowSeconds();
  const dueAt = clock.nowMs();
  const outcome: InboundOutcome = { kind: classified.kind, received: [], replies: [], joinedGroupIds: [] };
  const carrierName = text.carrier ?? deps.defaultCarrier ?? 'sandbox';
  const holders = await inbound.numberHolders(tx, to);
  if (holders.length === 0) return outcome;
  const accountIds = [...new Set(holders.map((h) => h.account_id))];

  let keyword: inbound.ReservedKeyword | undefined;
  if (classified.kind === 'other' && classified.textKey !== '') {
    keyword = await inbound.reservedKeywordAtStart(tx, to, classified.textKey);
    // Always one of the holders (a reservation's number is its own account's); checked all the same.
    if (keyword && !accountIds.includes(keyword.account_id)) keyword = undefined;
    if (keyword) outcome.kind = 'keyword';
  }

  // The text is stored for the keyword's account only, else for every holder.
  const concerned = keyword ? [keyword.account_id] : accountIds;
  for (const accountId of concerned) {
    const message = await log.insertMessage(
      tx,
      accountId,
      {
        direction: DIRECTION_INBOUND,
        number: to,
        mobilePhone,
        message: text.text,
        typeId: 1,
        statusId: LOG_STATUS.RECEIVED,
        segments: inSegments,
        credits: 0,
        batchId: null,
        scheduledMessageId: null,
        optOutExempt: 0,
        dueAt: null,
      },
      now,
    );
    outcome.received.push({ accountId, message });
    // API.md §12: message.received, in the transaction that stores it.
    await emitEvent(tx, accountId, 'message.received', message, now);
  }
  if (sender === null) return outcome;

  const free = async (accountId: number, reply: string): Promise<void> => {
    const message = await log.insertMessage(
      tx,
      accountId,
      {
        direction: DIRECTION_OUTBOUND,
        number: to,
        mobilePhone: sender.digits,
        message: reply,
        typeId: 1,
        statusId: LOG_STATUS.QUEUED,
        segments: smsSegments(reply).segments,
        credits: 0,
        batchId: null,
        scheduledMessageId: null,
        optOutExempt: 1,
        dueAt,
      },
      now,
    );
    outcome.replies.push({ accountId, message });
  };

  switch (outcome.kind) {
    case 'stop':
      for (const accountId of accountIds) {
        const contact = await inbound.ensureContact(tx, accountId, sender, 1, now);
        const changed = contact.created || (await inbound.setContactOptedOut(tx, accountId, sender.e164, 1, now));
        // API.md §12: contact.opted_out when STOP changes the contact; API.md §10.2: its consent ledger entry.
        if (changed) {
          await recordKeyword(tx, accountId, sender.e164, 1, text.text.trim(), carrierName, now);
          await emitEvent(tx, accountId, 'contact.opted_out', () => findContactByE164(tx, accountId, sender.e164), now);
        }
      }
      await free(accountIds[0]!, replies.stop);
      break;
    case 'start':
      for (const accountId of accountIds) {
        // API.md §12: contact.opted_in when START changes the contact; API.md §10.2: its consent ledger entry.
        if (await inbound.setContactOptedOut(tx, accountId, sender.e164, 0, now)) {
          await recordKeyword(tx, accountId, sender.e164, 0, text.text.trim(), carrierName, now);
          await emitEvent(tx, accountId, 'contact.opted_in', () => findContactByE164(tx, accountId, sender.e164), now);
        }
      }
      await free(accountIds[0]!, replies.start);
      break;
    case 'help':
      await free(accountIds[0]!, replies.help);
      break;
    case 'keyword': {
      const accountId = keyword!.account_id;
      const contact = await inbound.ensureContact(tx, accountId, sender, 0, now);
      outcome.joinedGroupIds = await inbound.joinKeywordGroups(tx, accountId, keyword!.id, contact.id, now);
      if (!isBlank(keyword!.autoreply_message)) {
        const active = holders.some((h) => h.account_id === accountId && h.status_id === NUMBER_STATUS_ACTIVE);
        const message = await autoreply(tx, deps, accountId, {
          to,
          recipient: sender.digits,
          text: keyword!.autoreply_message,
          blocked: contact.opted_out === 1 ? AUTOREPLY_REJECTED.OPTED_OUT : !active ? AUTOREPLY_REJECTED.NUMBER_INACTIVE : undefined,
          now,
          dueAt,
        });
        outcome.replies.push({ accountId, message });
      }
      break;
    }
    case 'other':
      break;
  }
  return outcome;
}

/**
 * The keyword's autoreply (API.md §11.5 rule 4), an ordinary paid message: Queued with its
 * price debited, or, when `blocked` says why it cannot go out or the balance is short, logged
 * Rejected at once with nothing debited.
 */
async function autoreply(
  tx: Db,
  deps: InboundDeps,
  accountId: number,
  a: { to: string; recipient: string; text: string; blocked: string | undefined; now: number; dueAt: number },
): Promise<MessageRow> {
  const cost = messageCost(1, a.text, deps.prices);
  let reason = a.blocked;
  const balance = reason === undefined ? await credits.takeCredits(tx, accountId, cost.credits, a.now) : undefined;
  if (reason === undefined && balance === undefined) reason = AUTOREPLY_REJECTED.NO_CREDITS;
  const message = await log.insertMessage(
    tx,
    accountId,
    {
      direction: DIRECTION_OUTBOUND,
      number: a.to,
      mobilePhone: a.recipient,
      message: a.text,
      typeId: 1,
      statusId: reason === undefined ? LOG_STATUS.QUEUED : LOG_STATUS.REJECTED,
      segments: cost.segments,
      credits: cost.credits,
      batchId: null,
      scheduledMessageId: null,
      optOutExempt: 0,
      dueAt: reason === undefined ? a.dueAt : null,
    },
    a.now,
  );
  // API.md §14.3.5: a keyword's autoreply answers a text just received: quiet hours never hold it.
  if (reason === undefined) {
    // Its ledger entry, now that the message's id is known (API.md §10.1.1).
    if (balance !== undefined && cost.credits > 0)
      await credits.recordLedgerEntry(tx, accountId, a.now, 'spend', -cost.credits, balance, `message:${message.id}`);
    await markNeverHeld(tx, accountId, message.id);
    return message;
  }
  await inbound.setMessageErrorCode(tx, accountId, message.id, reason);
  // API.md §12: message.rejected, in the transaction that logs it Rejected.
  await emitEvent(tx, accountId, 'message.rejected', { ...message, error_code: reason }, a.now);
  return { ...message, error_code: reason };
}

/**
 * A carrier's inbound sink handler (API.md §11.5, §11.2): runs `receiveInbound` and resolves
 * once it is committed; a text to a number no account holds is logged and dropped. `carrier`:
 * the configured name of the carrier it came through (the dispatcher's sink passes it).
 */
export function createInboundHandler(
  deps: InboundDeps,
  logger?: { warn(obj: object, msg?: string): void },
): (text: InboundTextIn, carrier?: string) => Promise<void> {
  return async (text, carrier) => {
    const outcome = await receiveInbound(deps, carrier === undefined ? text : { ...text, carrier });
    if (outcome.received.length === 0) logger?.warn({ to: text.to }, 'inbound text dropped: no account holds the number');
  };
}

// ------------------------------------------------------------------ POST /v1/sandbox/inbound

/** API.md §11.3 field order of sandbox/inbound: errors are listed in this order (API.md §4.4). */
const SANDBOX_FIELDS = ['From', 'To', 'Message'];

const SANDBOX_RULES = defineRules([
  { field: 'From', rule: 'required' },
  { field: 'To', rule: 'required' },
  { field: 'Message', rule: 'required' },
  { field: 'From', rule: 'phone' },
  { field: 'Message', rule: 'string', max: 1600 },
]);

/**
 * The digits an account number is written with in `To`: an integer (a JSON number, or digits with
 * an optional leading `+`, as `Number` is read by sms/send and keyword/reserve), or a phone number
 * in any common format; null otherwise.
 */
function numberDigits(value: unknown, input: Input, region: CountryCode): string | null {
  const integer = canonicalInteger(value, input, 'To');
  if (integer !== null) return integer.startsWith('-') ? null : integer;
  if (typeof value !== 'string') return null;
  return normalisePhone(value, region)?.digits ?? null;
}

/**
 * `POST /v1/sandbox/inbound` (API.md §11.3): a text from `From` (a phone number in any
 * common format) to `To` (an account number of the caller, any status) saying `Message`
 * (required, at most 1,600 characters), run through API.md §11.5 exactly as a carrier's text is
 * (`receiveInbound`): on a shared short code it may reach, opt out or answer in other accounts.
 * @returns the inbound messages stored for the CALLER's account: one, or none when the text went
 *   to another account's keyword.
 * @throws ValidationFailedError (422), first error of each field in the order From, To, Message:
 *   `From cannot be blank.`, `From is invalid.`, `To cannot be blank.`, `To is invalid.` (not a
 *   number of the caller's), `Message cannot be blank.`, `Message must be a string.`,
 *   `Message should contain at most 1,600 characters.`
 */
export async function sandboxInbound(deps: InboundDeps, accountId: number, input: Input): Promise<MessageRow[]> {
  const checked = validate({ From: input.From, To: input.To, Message: input.Message }, SANDBOX_RULES, { region: deps.region });
  const errors: FieldError[] = [...checked.errors];
  let to: string | undefined;
  if (!checked.failed('To')) {
    const digits = numberDigits(input.To, input, deps.region);
    const number = digits === null ? undefined : await numbers.findNumber(deps.store.db, accountId, digits);
    if (number) to = number.number;
    else errors.push({ field: 'To', message: messages.invalid('To') });
  }
  if (errors.length > 0) {
    const rank = (e: FieldError) => SANDBOX_FIELDS.indexOf(e.field);
    throw new ValidationFailedError(errors.sort((a, b) => rank(a) - rank(b)));
  }
  const outcome = await receiveInbound(deps, { from: checked.values.From!.e164, to: to!, text: checked.values.Message! });
  return outcome.received.filter((r) => r.accountId === accountId).map((r) => r.message);
}
