import type { ColumnType, Generated, Selectable } from 'kysely';

/**
 * Row types of every table. Times are Unix epoch seconds (UTC); dates are `YYYY-MM-DD` text.
 * Every table but `accounts` carries `account_id`: all reads and writes are scoped by it.
 */

type Id = Generated<number>;
/** bigint columns arrive as number (SQLite) or are parsed to number (PostgreSQL type parser). */
type Epoch = number;

export interface AccountsTable {
  id: Id;
  name: string;
  created_at: Epoch;
  /** The parent of a sub-account (migration 022, API.md §16); NULL for a top-level account. */
  parent_id: ColumnType<number | null, number | null | undefined, number | null>;
  /** `active`, `suspended` or `closed` (API.md §16). */
  status: ColumnType<string, string | undefined, string>;
  /** Messages to carriers per second across every instance; 0: no limit of its own. */
  max_per_second: ColumnType<number, number | undefined, number>;
  /** Messages queued per day in the service's time zone; 0: no limit of its own. */
  max_per_day: ColumnType<number, number | undefined, number>;
  /** DateUpdated; NULL until the first change (DateCreated is shown). */
  updated_at: ColumnType<Epoch | null, Epoch | null | undefined, Epoch | null>;
  closed_at: ColumnType<Epoch | null, Epoch | null | undefined, Epoch | null>;
}

/** Messages queued per account per day of the service's time zone (migration 022, API.md §16 `MaxPerDay`). */
export interface AccountDayCountsTable {
  account_id: number;
  /** `YYYY-MM-DD` in the service's time zone. */
  day: string;
  messages: number;
}

/** The operator's keys (`msgsvc operators create`, API.md §16): only the secret's SHA-256 hash is kept. */
export interface OperatorKeysTable {
  id: Id;
  name: string;
  token_hash: string;
  prefix: ColumnType<string, string | undefined, string>;
  created_at: Epoch;
  last_used_at: ColumnType<Epoch | null, Epoch | null | undefined, Epoch | null>;
  revoked_at: ColumnType<Epoch | null, Epoch | null | undefined, Epoch | null>;
}

/** The operator's console sessions (migration 024, docs/API.md §16.4). */
export interface OperatorSessionsTable {
  id: Id;
  token_hash: string;
  csrf_token: string;
  operator_key_id: number;
  created_at: Epoch;
  last_used_at: Epoch;
  /** The 7-day limit from sign-in. */
  expires_at: Epoch;
}

export interface CreditBalancesTable {
  account_id: number;
  available_credits: number;
  updated_at: Epoch;
}

/** One change of an account's balance (migration 021, API.md §10.1.1); the sum of an account's `amount`s is its balance. */
export interface CreditLedgerTable {
  id: Id;
  account_id: number;
  created_at: Epoch;
  /** `topup`, `spend`, `refund`, `transfer_in`, `transfer_out` or `adjustment`. */
  type: string;
  /** Signed: what the change added to the balance. */
  amount: number;
  /** The balance after the change. */
  balance: number;
  /** `message:{Id}`, `batch:{Id}`, `scheduled:{Id}`, `account:{Id}` or `''`. */
  reference: string;
  note: string;
}

export interface ApiTokensTable {
  id: Id;
  account_id: number;
  /** SHA-256 of the token, lowercase hex. The token itself is never stored (API.md §1.2). */
  token_hash: string;
  label: string;
  created_at: Epoch;
  revoked_at: ColumnType<Epoch | null, Epoch | null | undefined, Epoch | null>;
  /** API.md §15 Keys: the key's Name (1 to 64 characters). */
  name: ColumnType<string, string | undefined, string>;
  /** The first 8 characters of the secret ('' for a token made before keys, until its first use). */
  prefix: ColumnType<string, string | undefined, string>;
  /** JSON array of scopes (`["*"]`, `["contacts:read"]`, …). */
  scopes: ColumnType<string, string | undefined, string>;
  /** JSON array of IPv4/IPv6 addresses or CIDR ranges; `[]` is any. */
  allowed_ips: ColumnType<string, string | undefined, string>;
  expires_at: ColumnType<Epoch | null, Epoch | null | undefined, Epoch | null>;
  last_used_at: ColumnType<Epoch | null, Epoch | null | undefined, Epoch | null>;
  last_ip: ColumnType<string, string | undefined, string>;
  updated_at: ColumnType<Epoch, Epoch | undefined, Epoch>;
  /** The hash of the secret before the last roll, working until `old_expires_at`. */
  old_hash: ColumnType<string | null, string | null | undefined, string | null>;
  old_expires_at: ColumnType<Epoch | null, Epoch | null | undefined, Epoch | null>;
}

/** API.md §15 People: a person who signs in to the console. */
export interface UsersTable {
  id: Id;
  account_id: number;
  email: string;
  /** The email in lower case: unique in the whole service. */
  email_key: string;
  name: string;
  role: string;
  /** Argon2id (PHC string); null until the invite is taken. */
  password_hash: ColumnType<string | null, string | null | undefined, string | null>;
  /** SHA-256 of the invite (or reset) code, while one is open. */
  invite_hash: ColumnType<string | null, string | null | undefined, string | null>;
  invite_expires_at: ColumnType<Epoch | null, Epoch | null | undefined, Epoch | null>;
  /** The TOTP secret (base32) while two-factor is on. */
  totp_secret: ColumnType<string | null, string | null | undefined, string | null>;
  /** A TOTP secret offered by POST /console/api/2fa, not yet confirmed. */
  totp_pending: ColumnType<string | null, string | null | undefined, string | null>;
  /** The last TOTP time step accepted: a code of that step or an earlier one is refused (replay). */
  totp_last_step: ColumnType<number, number | undefined, number>;
  two_factor: ColumnType<number, number | undefined, number>;
  last_sign_in_at: ColumnType<Epoch | null, Epoch | null | undefined, Epoch | null>;
  created_at: Epoch;
  updated_at: Epoch;
}

export interface UserRecoveryCodesTable {
  id: Id;
  user_id: number;
  code_hash: string;
  used_at: ColumnType<Epoch | null, Epoch | null | undefined, Epoch | null>;
}

/** A WebAuthn credential (passkey) of a user. */
export interface PasskeysTable {
  id: Id;
  user_id: number;
  /** base64url credential id. */
  credential_id: string;
  /** base64url COSE public key. */
  public_key: string;
  counter: number;
  transports: ColumnType<string, string | undefined, string>;
  name: ColumnType<string, string | undefined, string>;
  created_at: Epoch;
  last_used_at: ColumnType<Epoch | null, Epoch | null | undefined, Epoch | null>;
}

/** A WebAuthn challenge handed out and not yet answered (5 minutes). */
export interface WebauthnChallengesTable {
  id: string;
  challenge: string;
  user_id: number | null;
  expires_at: Epoch;
}

/** A console session (the `msgsvc_session` cookie, by its hash). */
export interface SessionsTable {
  id: Id;
  token_hash: string;
  csrf_token: string;
  account_id: number;
  user_id: number | null;
  key_id: number | null;
  created_at: Epoch;
  last_used_at: Epoch;
  /** The 7-day limit from sign-in. */
  expires_at: Epoch;
}

/** A failed sign-in, by `email:{lower-case email}` or `ip:{address}` (the lockout). */
export interface SignInFailuresTable {
  id: Id;
  subject: string;
  at: Epoch;
}

/** API.md §15 Audit log. */
export interface AuditLogTable {
  id: Id;
  account_id: number;
  created_at: Epoch;
  actor: string;
  ip: string;
  operation: string;
  object_id: string;
  status: number;
  request_id: string;
}

export interface AccountNumbersTable {
  id: Id;
  account_id: number;
  /** Digits only: a short code (e.g. `12345`) or a long number in E.164 without `+`. */
  number: string;
  /** API.md §9.2: 0 Active, 1 Inactive, 301 Temporarily blocked., 302 Permanently blocked. */
  status_id: number;
  blocked_at: ColumnType<Epoch | null, Epoch | null | undefined, Epoch | null>;
  created_at: Epoch;
  /** API.md §17 (migration 025): the number's limits, 0 for none. */
  max_per_second: Generated<number>;
  max_per_day: Generated<number>;
  /** Distinct recipients in a calendar month of the service's time zone. */
  max_recipients_per_month: Generated<number>;
}

/** Messages queued per account number per day (API.md §17, migration 025); kept while the number has a MaxPerDay. */
export interface NumberDayCountsTable {
  account_id: number;
  number: string;
  /** `YYYY-MM-DD` in the service's time zone. */
  day: string;
  messages: Generated<number>;
}

/** The distinct recipients of an account number per month (API.md §17, migration 025); kept while it has a MaxRecipientsPerMonth. */
export interface NumberMonthRecipientsTable {
  account_id: number;
  number: string;
  /** `YYYY-MM` in the service's time zone. */
  month: string;
  mobile_phone: string;
}

export interface ContactsTable {
  id: Id;
  account_id: number;
  /** Digits of the E.164 form, without `+` (what the API shows as Contact.Number). */
  number: string;
  /** E.164 form (`+15551234567`): the lookup key of contacts/find. */
  number_e164: string;
  opted_out: number;
  first_name: string;
  last_name: string;
  /** `YYYY-MM-DD`, or null when unset (shown as `0000-00-00`). */
  birthday: string | null;
  email: string;
  zip: string;
  city: string;
  created_at: Epoch;
  updated_at: Epoch;
}

export interface GroupsTable {
  id: Id;
  account_id: number;
  name: string;
  note: string;
  keyword_id: number;
  parent_id: number;
  created_at: Epoch;
  updated_at: Epoch;
}

export interface GroupMembersTable {
  account_id: number;
  group_id: number;
  contact_id: number;
}

export interface CustomFieldsTable {
  id: Id;
  account_id: number;
  name: string;
  /** Case-folded name (NFKC, trimmed, lower case): unique per account (migration 003). */
  name_key: ColumnType<string, string | undefined, string>;
  created_at: Epoch;
  updated_at: Epoch;
}

export interface CustomFieldEntriesTable {
  id: Id;
  account_id: number;
  custom_field_id: number;
  contact_id: number;
  entry: string;
  created_at: Epoch;
  updated_at: Epoch;
}

export interface ScheduledMessagesTable {
  id: Id;
  account_id: number;
  mobile_phone: string;
  message: string;
  scheduled_at: Epoch;
  /** API.md §9.10: 1 Pending, 2 Action Required, 3 Approved and Scheduled. */
  status_id: number;
  /** 1 SMS, 2 MMS. */
  type_id: number;
  mms_template_id: number | null;
  subject: string;
  created_at: Epoch;
  // Migration 005 (API.md §11.7 status life; src/dispatch/scheduler.ts), never shown.
  /** Digits of the account number it goes from; '' on rows the service never managed. */
  number: Generated<string>;
  /** Credits debited while Approved (0 while Pending or Action Required); NULL: a row the service never managed (demo, generator, older data). */
  reserved_credits: number | null;
  /** Epoch ms when the scheduler takes it next (check due, DateTime, or lease end); NULL while it waits. */
  due_at: number | null;
  /** The scheduler claim that holds it. */
  lease_token: string | null;
  /** Why it is Action Required (NUMBER_INACTIVE, OPTED_OUT, NO_MEDIA, NO_CREDITS), '' otherwise. */
  check_reason: Generated<string>;
  // Migration 015 (API.md §10.6 RRule, ShortenLinks; src/domain/recurrence.ts).
  /** The `RRule` as sent; '' when it does not recur. */
  rrule: Generated<string>;
  /** Epoch seconds of occurrence 1 (the DateTime the rule is counted from); NULL when it does not recur. */
  rrule_start: ColumnType<Epoch | null, Epoch | null | undefined, Epoch | null>;
  /** The IANA zone whose wall-clock time the occurrences keep; '' when it does not recur. */
  rrule_zone: Generated<string>;
  /** The number of the occurrence `scheduled_at` stands for (1 is `rrule_start`). */
  rrule_occurrence: Generated<number>;
  /** 1: shorten the text's links at each send (`ShortenLinks`). */
  shorten_links: Generated<number>;
  /** API.md §17 (migration 025): the Priority its messages are queued with. */
  priority: Generated<number>;
}

export interface KeywordReservationsTable {
  id: Id;
  account_id: number;
  account_number_id: number;
  keyword: string;
  /** Case-folded keyword; unique per number, so uniqueness is enforced by the index, not by a check. */
  keyword_key: string;
  autoreply_message: string;
  created_at: Epoch;
  /** Digits of the number (migration 003): a keyword is unique on a number across all accounts. */
  number: ColumnType<string, string | undefined, string>;
}

export interface IdempotencyKeysTable {
  account_id: number;
  key: string;
  /** SHA-256 of method, path, query less access_token, and body (API.md §7). */
  fingerprint: string;
  /** null while the first request is running. */
  response_status: number | null;
  response_body: string | null;
  response_location: string | null;
  created_at: Epoch;
  expires_at: Epoch;
}

/** An operator key's Idempotency-Key record (API.md §7, §16.4), migration 027: as IdempotencyKeysTable, owned by an operator key. */
export interface OperatorIdempotencyKeysTable extends Omit<IdempotencyKeysTable, 'account_id'> {
  operator_key_id: number;
}

/** One `sms/send-group` (API.md §10.6 Batch record), migration 004. */
export interface BatchesTable {
  id: Id;
  account_id: number;
  group_id: number;
  /** Digits of the account number it went from. */
  number: string;
  message: string;
  type_id: number;
  recipients: Generated<number>;
  skipped: Generated<number>;
  credits: Generated<number>;
  created_at: Epoch;
}

/** The message log (API.md §10.6 Message record) and its dispatch state (API.md §11.2), migration 004. */
export interface MessagesTable {
  id: Id;
  account_id: number;
  /** 1 Outbound, 2 Inbound. */
  direction: number;
  /** Digits of the account number that sent or received it. */
  number: string;
  /** Digits (E.164 without `+`) of the other party. */
  mobile_phone: string;
  message: string;
  /** 1 SMS, 2 MMS. */
  type_id: number;
  /** 1 Queued, 2 Sent, 3 Delivered, 4 Undelivered, 5 Failed, 6 Rejected, 7 Received. */
  status_id: number;
  segments: number;
  credits: number;
  batch_id: number | null;
  scheduled_message_id: number | null;
  error_code: Generated<string>;
  created_at: Epoch;
  sent_at: Epoch | null;
  delivered_at: Epoch | null;
  /** 1 for the API.md §11.6 confirmations, which go to opted-out numbers. */
  opt_out_exempt: Generated<number>;
  /** Epoch ms when a dispatcher takes it next (queued: due; sending: lease end); NULL otherwise. */
  due_at: number | null;
  /** Set while a dispatcher holds it (`sending`). */
  lease_token: string | null;
  attempts: Generated<number>;
  /** The configured name of the carrier that took it (API.md §14.1), migration 011; NULL before. */
  carrier: string | null;
  /** An outbound MMS's template (API.md §10.7), for the carrier's media; NULL otherwise (migration 011). */
  mms_template_id: number | null;
  carrier_message_id: string | null;
  /** A receipt the carrier announced at submit: its status (3 or 4), error code and due time (epoch ms). */
  receipt_status: number | null;
  receipt_error: string | null;
  receipt_due_at: number | null;
  /** Quiet hours (API.md §14.3, migration 016): 0 may be held, 1 held now (due when they end), 2 never held (a keyword's autoreply). */
  quiet_state: Generated<number>;
  /** API.md §17 (migration 025): 1 goes to the carrier before every Queued 0. */
  priority: Generated<number>;
}

/** Per-account list totals, kept by triggers (migration 002). */
export interface ListTotalsTable {
  account_id: number;
  scheduled_messages: Generated<number>;
  /** Changes on every insert or delete of one of the account's scheduled messages. */
  scheduled_messages_version: Generated<number>;
  /** How many contacts the account has (migration 008's triggers). */
  contacts: Generated<number>;
  /** Changes on every insert or delete of one of the account's contacts. */
  contacts_version: Generated<number>;
  /** How many conversations the account has (migration 017's trigger on `conversations`). */
  conversations: Generated<number>;
}

/** API.md §10.7 media (migration 009): the record fields; the bytes are in media_chunks. */
export interface MediaTable {
  id: Id;
  account_id: number;
  file_name: string;
  mime_type: string;
  size: number;
  width: number;
  height: number;
  /** The length of every chunk but the last (a Range read finds its chunk by arithmetic). */
  chunk_bytes: number;
  created_at: Epoch;
}

/** API.md §10.7: the bytes of a media, in order from seq 0. */
export interface MediaChunksTable {
  account_id: number;
  media_id: number;
  seq: number;
  data: Buffer;
}

/** API.md §10.7 MMS templates (migration 009). */
export interface MmsTemplatesTable {
  id: Id;
  account_id: number;
  name: string;
  subject: string;
  message: string;
  created_at: Epoch;
  updated_at: Epoch;
}

/** API.md §10.7 a template's MediaIds, in the order sent. */
export interface MmsTemplateMediaTable {
  account_id: number;
  template_id: number;
  media_id: number;
  position: number;
}

export interface Database {
  accounts: AccountsTable;
  account_day_counts: AccountDayCountsTable;
  operator_keys: OperatorKeysTable;
  operator_sessions: OperatorSessionsTable;
  operator_idempotency_keys: OperatorIdempotencyKeysTable;
  credit_balances: CreditBalancesTable;
  credit_ledger: CreditLedgerTable;
  api_tokens: ApiTokensTable;
  users: UsersTable;
  user_recovery_codes: UserRecoveryCodesTable;
  passkeys: PasskeysTable;
  webauthn_challenges: WebauthnChallengesTable;
  sessions: SessionsTable;
  sign_in_failures: SignInFailuresTable;
  audit_log: AuditLogTable;
  account_numbers: AccountNumbersTable;
  contacts: ContactsTable;
  groups: GroupsTable;
  group_members: GroupMembersTable;
  custom_fields: CustomFieldsTable;
  custom_field_entries: CustomFieldEntriesTable;
  scheduled_messages: ScheduledMessagesTable;
  keyword_reservations: KeywordReservationsTable;
  list_totals: ListTotalsTable;
  idempotency_keys: IdempotencyKeysTable;
  batches: BatchesTable;
  messages: MessagesTable;
  media: MediaTable;
  media_chunks: MediaChunksTable;
  mms_templates: MmsTemplatesTable;
  mms_template_media: MmsTemplateMediaTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  carrier_receipts_pending: CarrierReceiptsPendingTable;
  carrier_inbound: CarrierInboundTable;
  conversations: ConversationsTable;
  contact_consent: ContactConsentTable;
  erased_consent: ErasedConsentTable;
  message_links: MessageLinksTable;
  link_clicks: LinkClicksTable;
  account_settings: AccountSettingsTable;
  number_day_counts: NumberDayCountsTable;
  number_month_recipients: NumberMonthRecipientsTable;
}

/**
 * A row of `table` as a select reads it (Kysely's `Selectable`: generated and defaulted columns as
 * plain values). Every row type of the store and of src/records is this, a `Pick` of it, or a
 * `Pick` joined (`&`) with derived columns, so a column's type is written once, above.
 */
export type Row<T extends keyof Database> = Selectable<Database[T]>;

/** API.md §12 webhook endpoints (migration 010). */
export interface WebhooksTable {
  id: Id;
  account_id: number;
  url: string;
  /** JSON array of event names. */
  events: string;
  active: Generated<number>;
  /** `whsec_…`: kept to sign every attempt; shown only in the reply to create. */
  secret: string;
  created_at: Epoch;
  updated_at: Epoch;
}

/** API.md §12.1 deliveries: the outbox of events, one row per (event, webhook) (migration 010). */
export interface WebhookDeliveriesTable {
  id: Id;
  account_id: number;
  webhook_id: number;
  event: string;
  /** The `webhook-id` header, the same on every attempt. */
  msg_id: string;
  /** JSON `{v, type, at, data}`: the payload's version, the event's type, time (epoch s) and record snapshot (src/records/webhooks.ts). */
  payload: string;
  status: Generated<string>;
  attempts: Generated<number>;
  last_status_code: number | null;
  last_error: Generated<string>;
  created_at: Epoch;
  updated_at: Epoch;
  /** Epoch ms when the delivery loop takes it next (claimed: the lease's end); NULL once ended. */
  due_at: number | null;
  lease_token: string | null;
}

/**
 * API.md §14.1: a carrier's receipt that came before the message's Sent commit (migration
 * 011), one per (carrier, carrier_message_id); the Sent commit takes and applies it.
 */
export interface CarrierReceiptsPendingTable {
  carrier: string;
  carrier_message_id: string;
  /** 3 Delivered, 4 Undelivered. */
  status: number;
  error_code: Generated<string>;
  /** Epoch ms. */
  received_at: Epoch;
}

/**
 * An inbound text a carrier delivered over HTTP, once per (carrier, carrier_message_id)
 * (migration 012): written with the inbound rules' own writes, so a repeat runs them once.
 */
export interface CarrierInboundTable {
  carrier: string;
  carrier_message_id: string;
  /** Epoch ms. */
  received_at: Epoch;
}

/** A tracked link of a message (migration 014, API.md §14.4): one per (message, URL). */
export interface MessageLinksTable {
  id: Id;
  account_id: number;
  message_id: number;
  /** 7 characters of `A-Z a-z 0-9 - _`, unique over the service: the path of `GET /l/{code}`. */
  code: string;
  /** The original `http://` or `https://` URL, as it stood in the text. */
  url: string;
  clicks: Generated<number>;
  first_click_at: ColumnType<Epoch | null, Epoch | null | undefined, Epoch | null>;
  last_click_at: ColumnType<Epoch | null, Epoch | null | undefined, Epoch | null>;
  created_at: Epoch;
}

/** One click of a tracked link (migration 014): IP truncated to /24 or /48 before it is stored. */
export interface LinkClicksTable {
  id: Id;
  account_id: number;
  link_id: number;
  clicked_at: Epoch;
  ip: Generated<string>;
  user_agent: Generated<string>;
}

/**
 * The consent ledger (migration 018, API.md §10.2 contacts/consent): one row per change of a
 * contact's OptedOut, append-only (triggers refuse UPDATE, and DELETE while the contact exists).
 */
export interface ContactConsentTable {
  id: Id;
  account_id: number;
  contact_id: number;
  /** The new OptedOut: 0 or 1. */
  opted_out: number;
  /** `keyword`, `api`, `import` or `console`. */
  source: string;
  /** The keyword as received (trimmed), or the operation (`contacts/update`). */
  detail: string;
  /** The configured name of the carrier a keyword came through; '' for the other sources. */
  carrier: string;
  created_at: Epoch;
}

/**
 * The consent ledger of erased contacts (migration 026, API.md §10.2.1 contacts/erase): a
 * contact's `contact_consent` entries, kept when its person's data is erased, with the phone number
 * replaced by its SHA-256. Append-only (triggers refuse UPDATE, and DELETE while the account exists).
 */
export interface ErasedConsentTable {
  /** The entry's id in `contact_consent`, kept. */
  id: number;
  account_id: number;
  /** SHA-256 (lowercase hex) of the number's E.164 digits without `+` (Contact.Number). */
  number_sha256: string;
  opted_out: number;
  source: string;
  detail: string;
  carrier: string;
  created_at: Epoch;
  /** When the erasure happened. */
  erased_at: Epoch;
}

/**
 * One thread per (account, other party's number) (migration 017, API.md §10.6 sms/conversations),
 * kept by a trigger on every INSERT into messages; `sms/mark-read` clears `unread`.
 */
export interface ConversationsTable {
  account_id: number;
  /** Digits (E.164 without `+`) of the other party: messages.mobile_phone. */
  mobile_phone: string;
  /** Id of the thread's newest message. */
  last_message_id: number;
  /** Inbound messages since the thread was last marked read (all of them when never). */
  unread: Generated<number>;
  /** The thread's newest message id when it was last marked read; 0 when never. */
  read_up_to_id: Generated<number>;
}

/** An account's settings (API.md §14.3, migration 016): at most one row per account; none means the defaults. */
export interface AccountSettingsTable {
  account_id: number;
  /** Quiet hours `HH:MM` (24-hour), both set or both NULL (no quiet hours). */
  quiet_start: string | null;
  quiet_end: string | null;
  /** An IANA zone name as sent; NULL: the service's MSGSVC_TIMEZONE. */
  time_zone: string | null;
  updated_at: Epoch;
  /** API.md §17 (migration 025): `first` or `pool`. */
  sender_selection: Generated<'first' | 'pool'>;
}

/**
 * Every table that holds an account's data, in dependency order: the isolation, secrets and fuzz
 * suites fingerprint each of them, so a new table is covered by adding it here. Not `audit_log`:
 * it records every request, refused ones too (API.md §15.5), so it is no data a request changes;
 * test/http/audit.test.ts checks it on its own (no secret in it, one entry per request).
 */
export const TABLES = [
  'accounts',
  'account_day_counts',
  'credit_balances',
  'credit_ledger',
  'api_tokens',
  'account_numbers',
  'number_day_counts',
  'number_month_recipients',
  'contacts',
  'contact_consent',
  'erased_consent',
  'groups',
  'group_members',
  'custom_fields',
  'custom_field_entries',
  'scheduled_messages',
  'keyword_reservations',
  'idempotency_keys',
  'batches',
  'messages',
  'conversations',
  'media',
  'media_chunks',
  'mms_templates',
  'mms_template_media',
  'webhooks',
  'webhook_deliveries',
  'message_links',
  'link_clicks',
  'account_settings',
  'users',
  'sessions',
] as const satisfies readonly (keyof Database)[];
