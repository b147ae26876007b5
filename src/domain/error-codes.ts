import type { ErrorCodeRow } from '../records/error-codes.ts';

/**
 * Every `ErrorCode` the service can set on a message of the log (docs/API.md §9.11, §10.9
 * `GET /v1/errors`), with what it means and whether it is final. The one list: the console explains
 * a message's `ErrorCode` with it, and test/domain/error-codes.test.ts reads the sources for every
 * ErrorCode they can write (string literals, `PREFIX_${…}` templates, the SMPP command statuses)
 * and fails on one missing here.
 *
 * Who sets them:
 * - `OPTED_OUT`, `NUMBER_INACTIVE` (the dispatcher's check before a submit,
 *   src/store/repositories/dispatch.ts; a keyword's autoreply, src/domain/inbound.ts), `NO_CREDITS`
 *   (an autoreply, a scheduled occurrence: src/domain/inbound.ts, src/dispatch/scheduler.ts),
 *   `DAILY_LIMIT` (a scheduled occurrence past the account's MaxPerDay: src/dispatch/scheduler.ts,
 *   src/domain/quotas.ts), `NUMBER_LIMIT` (a scheduled occurrence whose number, or whole sender
 *   pool, is full: src/domain/sender-pool.ts), `ERASED` (a Queued message whose recipient's data
 *   was erased: src/store/repositories/erasure.ts): Rejected, never handed to a carrier;
 * - `NO_ROUTE`, `NO_MMS_ROUTE`, `RETRIES_EXHAUSTED`, `SUBMIT_ERROR` (src/dispatch/dispatcher.ts,
 *   src/carriers/config.ts);
 * - the carriers' submit outcomes: SMPP (src/dispatch/smpp.ts, the command status names of
 *   src/dispatch/smpp-codec.ts), the sandbox (src/dispatch/sandbox.ts), Twilio-compatible
 *   providers (src/carriers/twilio.ts), Android phones (src/carriers/android.ts);
 * - the carriers' receipts, which end a message Undelivered: SMPP's receipt state and error
 *   (src/dispatch/smpp.ts), Twilio's status callback (src/carriers/callbacks.ts), the phone's
 *   `sms:failed` reason (src/carriers/android-events.ts).
 *
 * **Final.** 1 when msgsvc never tries the message again after this error: every refusal and
 * every receipt (the message is Failed, Rejected or Undelivered as soon as it happens). 0 for a
 * temporary error: the dispatcher tries the message again later (on the next ready carrier of its
 * route, when there is one), and a message shows the code only when it was the error of its last
 * attempt, once its attempts ran out (it is then Failed, refunded). Final belongs to the code, not
 * to the message: every message that shows an ErrorCode has ended.
 *
 * **Families.** A code some part of which comes from a carrier is listed once, as a family, with
 * that part in braces: `TWILIO_{code}` (the provider's own error code), `HTTP_{4xx}` (an HTTP
 * status from 400 to 499 that has no entry of its own), `ESME_0x{hex}` (an SMPP command status
 * SMPP does not name, 8 hexadecimal digits), `{state}:{err}` (an SMPP receipt's state and the
 * SMSC's error code), `{reason}` (a carrier's reason in its own words). A code is explained by
 * the entry with exactly its Code, else by the first family it matches in the order of
 * FAMILY_ORDER (errorCodeEntry). The list is ordered by Code (code unit order).
 */

/** One ErrorCode, or one family of them, as `GET /v1/errors` lists it. */
export type ErrorCodeEntry = ErrorCodeRow;

/** A family of codes: its entry and the codes it stands for. */
interface Family extends ErrorCodeEntry {
  readonly matches: RegExp;
}

const entry = (code: string, final: 0 | 1, meaning: string): ErrorCodeEntry => ({ code, meaning, final });

/**
 * The SMPP 3.4 command statuses (§5.1.3, table 5-2) as the SMSC's answer to a submit_sm
 * (src/dispatch/smpp-codec.ts STATUS, written by statusName). Three are temporary and the
 * message is submitted again (smpp.ts: throttling, a full queue, the bind lost); any other status
 * ends it Failed. `ESME_ROK` is an ErrorCode only when the SMSC answers with a generic_nack whose
 * status is 0.
 */
const SMPP_STATUSES: readonly ErrorCodeEntry[] = [
  entry(
    'ESME_ROK',
    1,
    'The SMSC answered the submit with a generic_nack that named no error (SMPP ESME_ROK): it did not take the message.',
  ),
  entry('ESME_RINVMSGLEN', 1, 'The SMSC refused the message: the message length is invalid (SMPP).'),
  entry('ESME_RINVCMDLEN', 1, 'The SMSC refused the message: the command length is invalid (SMPP).'),
  entry('ESME_RINVCMDID', 1, 'The SMSC refused the message: it does not know the command (SMPP).'),
  entry(
    'ESME_RINVBNDSTS',
    0,
    'The SMSC said the connection was not bound for submitting (SMPP): msgsvc binds again and sends the message again.',
  ),
  entry('ESME_RALYBND', 1, 'The SMSC refused the message: the connection is already bound (SMPP).'),
  entry('ESME_RINVPRTFLG', 1, 'The SMSC refused the message: the priority flag is invalid (SMPP).'),
  entry('ESME_RINVREGDLVFLG', 1, 'The SMSC refused the message: the registered delivery (receipt) flag is invalid (SMPP).'),
  entry('ESME_RSYSERR', 1, 'The SMSC refused the message with a system error of its own (SMPP).'),
  entry('ESME_RINVSRCADR', 1, 'The SMSC refused the message: the sender address (the account number) is invalid (SMPP).'),
  entry('ESME_RINVDSTADR', 1, 'The SMSC refused the message: the destination address (the recipient) is invalid (SMPP).'),
  entry('ESME_RINVMSGID', 1, 'The SMSC refused the message: the message id is invalid (SMPP).'),
  entry('ESME_RBINDFAIL', 1, 'The SMSC refused the message: the bind failed (SMPP).'),
  entry('ESME_RINVPASWD', 1, 'The SMSC refused the message: the password is invalid (SMPP).'),
  entry('ESME_RINVSYSID', 1, 'The SMSC refused the message: the system id is invalid (SMPP).'),
  entry('ESME_RCANCELFAIL', 1, 'The SMSC answered the submit with "cancel failed" (SMPP) and did not take the message.'),
  entry('ESME_RREPLACEFAIL', 1, 'The SMSC answered the submit with "replace failed" (SMPP) and did not take the message.'),
  entry('ESME_RMSGQFUL', 0, "The SMSC's message queue was full (SMPP): msgsvc waits and sends the message again."),
  entry('ESME_RINVSERTYP', 1, 'The SMSC refused the message: the service type is invalid (SMPP).'),
  entry('ESME_RINVNUMDESTS', 1, 'The SMSC refused the message: the number of destinations is invalid (SMPP).'),
  entry('ESME_RINVDLNAME', 1, 'The SMSC refused the message: the distribution list name is invalid (SMPP).'),
  entry('ESME_RINVDESTFLAG', 1, 'The SMSC refused the message: the destination flag is invalid (SMPP).'),
  entry('ESME_RINVSUBREP', 1, 'The SMSC refused the message: the "submit with replace" request is invalid (SMPP).'),
  entry('ESME_RINVESMCLASS', 1, 'The SMSC refused the message: the esm_class field is invalid (SMPP).'),
  entry('ESME_RCNTSUBDL', 1, 'The SMSC refused the message: it cannot submit to a distribution list (SMPP).'),
  entry('ESME_RSUBMITFAIL', 1, 'The SMSC refused the message: the submit failed (SMPP); the sandbox gives this code to +15005550002.'),
  entry('ESME_RINVSRCTON', 1, "The SMSC refused the message: the sender address's type of number (TON) is invalid (SMPP)."),
  entry('ESME_RINVSRCNPI', 1, "The SMSC refused the message: the sender address's numbering plan (NPI) is invalid (SMPP)."),
  entry('ESME_RINVDSTTON', 1, "The SMSC refused the message: the destination address's type of number (TON) is invalid (SMPP)."),
  entry('ESME_RINVDSTNPI', 1, "The SMSC refused the message: the destination address's numbering plan (NPI) is invalid (SMPP)."),
  entry('ESME_RINVSYSTYP', 1, 'The SMSC refused the message: the system type is invalid (SMPP).'),
  entry('ESME_RINVREPFLAG', 1, 'The SMSC refused the message: the replace_if_present flag is invalid (SMPP).'),
  entry('ESME_RINVNUMMSGS', 1, 'The SMSC refused the message: the number of messages is invalid (SMPP).'),
  entry(
    'ESME_RTHROTTLED',
    0,
    'The SMSC refused submits as too many too fast (SMPP throttling) for longer than msgsvc waits: it sends the message again later.',
  ),
  entry('ESME_RINVSCHED', 1, 'The SMSC refused the message: the scheduled delivery time is invalid (SMPP).'),
  entry('ESME_RINVEXPIRY', 1, 'The SMSC refused the message: the validity period (expiry time) is invalid (SMPP).'),
  entry('ESME_RINVDFTMSGID', 1, 'The SMSC refused the message: the predefined message is invalid or not found (SMPP).'),
  entry('ESME_RX_T_APPN', 1, 'The SMSC refused the message with a temporary application error of the receiving side (SMPP).'),
  entry('ESME_RX_P_APPN', 1, 'The SMSC refused the message with a permanent application error of the receiving side (SMPP).'),
  entry('ESME_RX_R_APPN', 1, 'The SMSC rejected the message on behalf of the receiving side (SMPP).'),
  entry('ESME_RQUERYFAIL', 1, 'The SMSC answered the submit with "query failed" (SMPP) and did not take the message.'),
  entry('ESME_RINVOPTPARSTREAM', 1, 'The SMSC refused the message: the optional part of the request is in error (SMPP).'),
  entry('ESME_ROPTPARNOTALLWD', 1, 'The SMSC refused the message: an optional parameter is not allowed (SMPP).'),
  entry('ESME_RINVPARLEN', 1, 'The SMSC refused the message: a parameter length is invalid (SMPP).'),
  entry('ESME_RMISSINGOPTPARAM', 1, 'The SMSC refused the message: an optional parameter it expects is missing (SMPP).'),
  entry('ESME_RINVOPTPARAMVAL', 1, 'The SMSC refused the message: an optional parameter value is invalid (SMPP).'),
  entry('ESME_RDELIVERYFAILURE', 1, 'The SMSC refused the message with a delivery failure (SMPP).'),
  entry('ESME_RUNKNOWNERR', 1, 'The SMSC refused the message with an unknown error (SMPP).'),
];

/** The codes with an entry of their own (families below). */
const EXACT: readonly ErrorCodeEntry[] = [
  // Rejected before any carrier (docs/API.md §9.11, §11.5, §11.6).
  entry('OPTED_OUT', 1, "Not sent: the recipient has opted out of the account's messages (texted STOP)."),
  entry('NUMBER_INACTIVE', 1, 'Not sent: the number it was to go from is no longer an Active number of the account.'),
  entry('ACCOUNT_CLOSED', 1, 'Not sent: its account was closed while it waited in the queue (its credits were refunded first).'),
  entry(
    'ERASED',
    1,
    "Not sent: the recipient's data was erased (contacts/erase) while it waited in the queue (its credits were refunded).",
  ),
  entry(
    'NO_CREDITS',
    1,
    "Not sent: the account's credits could not pay for it when it was due (a keyword's autoreply, or a scheduled message whose personalised text cost more than was reserved).",
  ),
  entry(
    'DAILY_LIMIT',
    1,
    'Not sent: a scheduled message came due when its account had already queued its MaxPerDay messages that day (its reserved credits were refunded).',
  ),
  entry(
    'NUMBER_LIMIT',
    1,
    'Not sent: a scheduled message came due when its number (or, with a sender pool, every number) had reached its MaxPerDay, or its MaxRecipientsPerMonth for a new recipient (its reserved credits were refunded).',
  ),
  // The dispatcher (docs/API.md §11.2, §14.1).
  entry('NO_ROUTE', 1, 'No configured carrier can take it: no rule of MSGSVC_ROUTES matches its recipient.'),
  entry('NO_MMS_ROUTE', 1, 'It is an MMS and no carrier of its route takes MMS (SMPP and Android phones take SMS only).'),
  entry(
    'RETRIES_EXHAUSTED',
    1,
    'Its attempts to reach a carrier ran out (after temporary failures, or restarts that left it unanswered) with no more precise reason.',
  ),
  entry(
    'SUBMIT_ERROR',
    0,
    'An unexpected error occurred in msgsvc while handing it to the carrier (the server logs it): it is tried again.',
  ),
  // SMPP (docs/API.md §11.4).
  entry('SMPP_NOT_BOUND', 0, 'No SMPP connection to the SMSC was bound when it was due: it is tried again once one is.'),
  entry('SMPP_TIMEOUT', 0, 'The SMSC did not answer the submit in time (it may still have taken it): it is tried again.'),
  entry(
    'SMPP_CONNECTION_LOST',
    0,
    'The connection to the SMSC broke before the submit was answered (it may still have been taken): it is tried again.',
  ),
  entry('SMPP_NO_MESSAGE_ID', 1, 'The SMSC accepted the submit without giving a message id, so no receipt could ever be matched to it.'),
  ...SMPP_STATUSES,
  // Receipt states (SMPP 3.4 Appendix B; `UNDELIV` also for a Twilio or Android report without a reason).
  entry('DELETED', 1, "The carrier's receipt says the message was deleted before it was delivered."),
  entry('EXPIRED', 1, "The carrier's receipt says the message expired before it could reach the phone."),
  entry('REJECTD', 1, "The carrier's receipt says the network rejected the message."),
  entry('UNDELIV', 1, 'The carrier reported the message undelivered without a more precise reason.'),
  entry('UNKNOWN', 1, "The carrier's receipt says the message ended in an unknown state."),
  // Twilio-compatible providers (docs/API.md §14.1).
  entry('HTTP_429', 0, 'The provider answered 429 Too Many Requests: the message is sent again after the pause it asked for.'),
  entry(
    'HTTP_ADDRESS_NOT_ALLOWED',
    0,
    "The provider's address is private or loopback, which msgsvc does not connect to unless allowed: it is tried again.",
  ),
  entry(
    'HTTP_BAD_REPLY',
    0,
    'The provider answered with something that is not a valid reply (no message sid, or cut off): it is tried again.',
  ),
  entry('HTTP_CONNECTION_FAILED', 0, 'The connection to the provider failed or broke before its answer: it is tried again.'),
  entry('HTTP_TIMEOUT', 0, 'The provider did not answer in time (it may still have taken the message): it is tried again.'),
  // Android phones (docs/API.md §14.1).
  entry(
    'ANDROID_401',
    0,
    "The phone refused msgsvc's user and password (HTTP 401): the carrier is not ready until the operator fixes them.",
  ),
  entry('ANDROID_403', 0, "The phone refused msgsvc's credentials (HTTP 403): the carrier is not ready until the operator fixes them."),
  entry('ANDROID_409', 1, "The phone already holds another message under this message's id (HTTP 409), so it was not sent."),
  entry('ANDROID_429', 0, 'The phone answered 429 Too Many Requests: the message is sent again later.'),
  entry('ANDROID_NOT_READY', 0, 'The Android phone was not ready (its events not registered yet): it is tried again.'),
  entry('ANDROID_TIMEOUT', 0, 'The phone did not answer in time (it may still have taken the message): it is tried again.'),
  entry('ANDROID_UNREACHABLE', 0, 'The phone could not be reached (connection refused, reset or not found): it is tried again.'),
];

/**
 * The families, in the order a code is matched against them (after the exact codes): the
 * provider's code, then HTTP statuses, then the SMPP statuses SMPP does not name, then an SMPP
 * receipt's state and error, and last a carrier's reason in its own words, which any other text
 * may be.
 */
const FAMILIES: readonly Family[] = [
  {
    code: 'TWILIO_{code}',
    final: 1,
    meaning:
      "The Twilio-compatible provider refused the message, or reported it undelivered or failed, with this error code of its own (see the provider's list of error codes).",
    // src/carriers/twilio.ts permanentErrorCode, src/carriers/callbacks.ts ERROR_CODE.
    matches: /^TWILIO_[0-9A-Za-z_-]{1,32}$/,
  },
  {
    code: 'HTTP_{4xx}',
    final: 1,
    meaning: 'The Twilio-compatible provider refused the message with this HTTP status (400 to 499, not 429) and no error code of its own.',
    matches: /^HTTP_4\d\d$/,
  },
  {
    code: 'HTTP_{5xx}',
    final: 0,
    meaning: 'The Twilio-compatible provider answered with this server error status (500 or above): the message is sent again later.',
    matches: /^HTTP_[5-9]\d\d$/,
  },
  {
    code: 'HTTP_{3xx}',
    final: 0,
    meaning:
      'The Twilio-compatible provider answered with a redirect (or another status that is neither success nor error), which msgsvc does not follow: it is tried again.',
    matches: /^HTTP_[13]\d\d$/,
  },
  {
    code: 'ANDROID_{4xx}',
    final: 1,
    meaning: 'The Android phone refused the message with this HTTP status (400 to 499, other than those listed on their own).',
    matches: /^ANDROID_4\d\d$/,
  },
  {
    code: 'ANDROID_{5xx}',
    final: 0,
    meaning: 'The Android phone answered with this server error status (500 or above): the message is sent again later.',
    matches: /^ANDROID_[5-9]\d\d$/,
  },
  {
    code: 'ANDROID_{3xx}',
    final: 0,
    meaning:
      'The Android phone answered with a redirect (or another status that is neither success nor error): the message is tried again.',
    matches: /^ANDROID_[13]\d\d$/,
  },
  {
    code: 'ESME_0x{hex}',
    final: 1,
    meaning: 'The SMSC refused the message with a command status SMPP does not name (a vendor code), written as 8 hexadecimal digits.',
    // src/dispatch/smpp-codec.ts statusName.
    matches: /^ESME_0x[0-9A-F]{8}$/,
  },
  {
    code: '{state}:{err}',
    final: 1,
    meaning:
      "The SMSC's receipt says the message was not delivered: its final state (as above) followed by the SMSC's own error code, e.g. UNDELIV:001.",
    // src/dispatch/smpp.ts onReceipt: `${stat}:${err}` when err is not zero.
    matches: /^[^\s:]+:\S+$/,
  },
  {
    code: '{reason}',
    final: 1,
    meaning:
      "The carrier could not deliver the message and said why in its own words: an Android phone's failure reason (at most 64 characters), or an SMSC receipt state SMPP does not name.",
    // src/carriers/android-events.ts androidReasonCode; src/dispatch/smpp-codec.ts parseReceipt's `stat:` word.
    matches: /^.+$/su,
  },
];

/** Code unit order (the order of `GET /v1/errors`), the same on every platform and locale. */
const byCode = (a: ErrorCodeEntry, b: ErrorCodeEntry) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0);

/** Every entry, exact codes and families, ordered by Code. */
export const ERROR_CODES: readonly ErrorCodeEntry[] = Object.freeze(
  [...EXACT, ...FAMILIES.map(({ code, meaning, final }) => entry(code, final, meaning))].sort(byCode),
);

const EXACT_BY_CODE: ReadonlyMap<string, ErrorCodeEntry> = new Map(EXACT.map((e) => [e.code, e]));

/** The families' Codes, in the order errorCodeEntry tries them. */
export const FAMILY_ORDER: readonly string[] = FAMILIES.map((f) => f.code);

/**
 * The entry that explains `code`: the one with exactly this Code, else the first family it
 * matches (FAMILY_ORDER); undefined for `""` (no error).
 */
export function errorCodeEntry(code: string): ErrorCodeEntry | undefined {
  if (code === '') return undefined;
  const exact = EXACT_BY_CODE.get(code);
  if (exact) return exact;
  const family = FAMILIES.find((f) => f.matches.test(code));
  return family && ERROR_CODES.find((e) => e.code === family.code);
}

/** The entry with exactly this Code (a family by its braced Code), if any. */
export function errorCodeListed(code: string): ErrorCodeEntry | undefined {
  return ERROR_CODES.find((e) => e.code === code);
}
