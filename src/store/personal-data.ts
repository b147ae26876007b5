import type { Database } from './tables.ts';

/**
 * Where a person's data lives, and what `contacts/erase` (docs/API.md §10.2.1) does to each place:
 * the one list of every table and column that can hold a phone number of a contact, a message
 * text, or what else a contact's record holds (PERSONAL_DATA), beside the explicit list of every
 * other column (NO_PERSONAL_DATA). Together they classify every column of every table, which
 * test/store/personal-data.test.ts checks against the columns a migrated database really has, on
 * SQLite and PostgreSQL: a migration that adds a table or a column fails that test until its
 * columns are classified here, and a table classified as holding personal data needs its erasure
 * step. (The types check the names: a column listed must be a column of src/store/tables.ts.)
 *
 * The erasure (src/store/repositories/erasure.ts) has one step per table of PERSONAL_DATA (a
 * record keyed by these tables: a new one is a compile error there until it has its step), and the
 * values it writes (`erased`, `""`) come from the columns' `erasure` here (`erasedValues`).
 */

/** What `contacts/erase` does to a column (docs/API.md §10.2.1). */
export type Erasure =
  /** The row is deleted. */
  | 'delete'
  /** The value becomes the literal `erased`. */
  | 'erased'
  /** The value becomes `""`. */
  | 'blank'
  /** `conversations`: the person's thread becomes the account's one `erased` thread (merged into it when there is one). */
  | 'merge'
  /** `contact_consent`: the entries are kept in `erased_consent` with the number's SHA-256, then go with the contact. */
  | 'hash'
  /** JSON text: the person's values in it are replaced, record by record (scrubJson). */
  | 'scrub'
  /** Free text: every writing of the person's number in it becomes `erased`. */
  | 'redact'
  /** A unique `erased:{16 hex digits}`, so that a count of distinct values stays exact. */
  | 'token'
  /** `idempotency_keys.key`: a key that itself names the number is forgotten (its row is deleted). */
  | 'forget'
  /** Kept as it is, for the reason given. */
  | 'keep';

/** A column that can hold a person's phone number, a message text, or a contact's data. */
export interface PersonalColumn {
  /** What it can hold. */
  readonly holds: string;
  /** What erasure does to it. */
  readonly erasure: Erasure;
  /** Which rows it reaches, and why this treatment. */
  readonly note: string;
}

type TableName = keyof Database;
type ColumnOf<T extends TableName> = keyof Database[T] & string;

/** The value erasure writes in place of a phone number (docs/API.md §10.2.1). */
export const ERASED = 'erased';

const contactRow = (holds: string): PersonalColumn => ({
  holds,
  erasure: 'delete',
  note: "the account's contact with the number (one at most: numbers are unique in an account) is deleted",
});

/**
 * Every column that can hold a person's phone number, a message text to or from them, or their
 * contact's data, with what erasure does to it. Every row is the caller's account's: no other
 * account's row is read or written.
 */
export const PERSONAL_DATA = {
  contacts: {
    number: contactRow('phone number (E.164 digits)'),
    number_e164: contactRow('phone number (E.164)'),
    first_name: contactRow('contact data'),
    last_name: contactRow('contact data'),
    birthday: contactRow('contact data'),
    email: contactRow('contact data'),
    zip: contactRow('contact data'),
    city: contactRow('contact data'),
  },
  group_members: {
    contact_id: { holds: "the contact's group memberships", erasure: 'delete', note: "the contact's memberships are deleted" },
  },
  custom_field_entries: {
    contact_id: { holds: "the contact's custom field values", erasure: 'delete', note: "the contact's entries are deleted" },
    entry: { holds: 'contact data', erasure: 'delete', note: "the contact's entries are deleted" },
  },
  contact_consent: {
    contact_id: {
      holds: "the contact's consent ledger",
      erasure: 'hash',
      note: "the contact's entries are copied to erased_consent with the number's SHA-256, then go with the contact",
    },
  },
  erased_consent: {
    number_sha256: {
      holds: "SHA-256 of a phone number (E.164 digits without '+')",
      erasure: 'keep',
      note: "written by erasure: the proof of consent outlives the person's data, and holds the hash, never the number",
    },
  },
  messages: {
    mobile_phone: { holds: 'phone number (E.164 digits)', erasure: 'erased', note: 'every message of the account to or from the number' },
    message: { holds: 'message text', erasure: 'blank', note: 'every message of the account to or from the number' },
  },
  scheduled_messages: {
    mobile_phone: {
      holds: 'phone number (E.164 digits)',
      erasure: 'delete',
      note: 'every scheduled message to the number is cancelled (its reservation refunded): nothing more goes to the person',
    },
    message: { holds: 'message text', erasure: 'delete', note: 'cancelled with the row' },
    subject: { holds: 'message text (an MMS subject)', erasure: 'delete', note: 'cancelled with the row' },
  },
  batches: {
    message: {
      holds: "message text: a send-group's text as written, merge fields unfilled",
      erasure: 'keep',
      note: "the text the account wrote for a whole group, still the text of every other member's message; the person's own filled-in text is in messages, and goes there",
    },
  },
  conversations: {
    mobile_phone: {
      holds: 'phone number (E.164 digits)',
      erasure: 'merge',
      note: "the person's thread becomes the account's one `erased` thread (its Unread added, its newest message kept)",
    },
  },
  message_links: {
    url: {
      holds: 'message text (a URL of the text)',
      erasure: 'blank',
      note: "the links of the person's messages: their short links then answer 404",
    },
  },
  link_clicks: {
    ip: { holds: "the clicker's address (truncated)", erasure: 'blank', note: "the clicks of the person's links (their times are kept)" },
    user_agent: { holds: "the clicker's user agent", erasure: 'blank', note: "the clicks of the person's links (their times are kept)" },
  },
  number_month_recipients: {
    mobile_phone: {
      holds: 'phone number (E.164 digits)',
      erasure: 'token',
      note: "a number's distinct recipients of a month: the token keeps MaxRecipientsPerMonth's count exact",
    },
  },
  webhook_deliveries: {
    payload: {
      holds: 'phone number, message text and contact data (JSON: the stored row of an event)',
      erasure: 'scrub',
      note: 'every delivery of the account whose event is about the person: the number becomes `erased`, the texts and the contact\'s fields `""`',
    },
  },
  idempotency_keys: {
    response_body: {
      holds: 'phone number, message text and contact data (JSON: a kept response, replayed)',
      erasure: 'scrub',
      note: 'every kept response of the account: a replay then answers what the log now holds',
    },
    key: {
      holds: 'a key chosen by the client, which may be built from the number',
      erasure: 'forget',
      note: 'a key whose text holds the number is forgotten: the same key again runs as a new request',
    },
  },
  audit_log: {
    object_id: {
      holds: 'phone number as sent (numbers/update names a number)',
      erasure: 'redact',
      note: "the account's entries: a writing of the number becomes `erased`",
    },
    request_id: {
      holds: 'text chosen by the client (X-Request-Id)',
      erasure: 'redact',
      note: "the account's entries: a writing of the number becomes `erased`",
    },
  },
} as const satisfies { readonly [T in TableName]?: { readonly [C in ColumnOf<T>]?: PersonalColumn } };

/**
 * Every other column: it holds no phone number of a contact, no message text to or from one, and
 * no contact's data. Tables that are not in src/store/tables.ts (the migrator's own) are listed
 * too, for the check against a migrated database.
 */
export const NO_PERSONAL_DATA = {
  accounts: ['id', 'name', 'created_at', 'parent_id', 'status', 'max_per_second', 'max_per_day', 'updated_at', 'closed_at'],
  account_day_counts: ['account_id', 'day', 'messages'],
  operator_keys: ['id', 'name', 'token_hash', 'prefix', 'created_at', 'last_used_at', 'revoked_at'],
  operator_sessions: ['id', 'token_hash', 'csrf_token', 'operator_key_id', 'created_at', 'last_used_at', 'expires_at'],
  // The operator's writes are about accounts, keys, people and the service's numbers, never a contact.
  operator_idempotency_keys: [
    'operator_key_id',
    'key',
    'fingerprint',
    'response_status',
    'response_body',
    'response_location',
    'created_at',
    'expires_at',
  ],
  credit_balances: ['account_id', 'available_credits', 'updated_at'],
  // `reference` names records by id (`message:{Id}`); `note` is the service's or the operator's words.
  credit_ledger: ['id', 'account_id', 'created_at', 'type', 'amount', 'balance', 'reference', 'note'],
  api_tokens: [
    'id',
    'account_id',
    'token_hash',
    'label',
    'created_at',
    'revoked_at',
    'name',
    'prefix',
    'scopes',
    'allowed_ips',
    'expires_at',
    'last_used_at',
    'last_ip',
    'updated_at',
    'old_hash',
    'old_expires_at',
  ],
  // The people who use the account (their own removal is users/delete), not its contacts.
  users: [
    'id',
    'account_id',
    'email',
    'email_key',
    'name',
    'role',
    'password_hash',
    'invite_hash',
    'invite_expires_at',
    'totp_secret',
    'totp_pending',
    'totp_last_step',
    'two_factor',
    'last_sign_in_at',
    'created_at',
    'updated_at',
  ],
  user_recovery_codes: ['id', 'user_id', 'code_hash', 'used_at'],
  passkeys: ['id', 'user_id', 'credential_id', 'public_key', 'counter', 'transports', 'name', 'created_at', 'last_used_at'],
  webauthn_challenges: ['id', 'challenge', 'user_id', 'expires_at'],
  sessions: ['id', 'token_hash', 'csrf_token', 'account_id', 'user_id', 'key_id', 'created_at', 'last_used_at', 'expires_at'],
  // `subject`: `email:{a person's email}` or `ip:{address}` of a failed sign-in.
  sign_in_failures: ['id', 'subject', 'at'],
  // `actor`: the key or person who made the request; `ip`: the caller's address.
  audit_log: ['id', 'account_id', 'created_at', 'actor', 'ip', 'operation', 'status'],
  // The account's own numbers (`number`: digits of a number it sends from).
  account_numbers: [
    'id',
    'account_id',
    'number',
    'status_id',
    'blocked_at',
    'created_at',
    'max_per_second',
    'max_per_day',
    'max_recipients_per_month',
  ],
  number_day_counts: ['account_id', 'number', 'day', 'messages'],
  number_month_recipients: ['account_id', 'number', 'month'],
  contacts: ['id', 'account_id', 'opted_out', 'created_at', 'updated_at'],
  // The account's groups and fields: names and notes the account wrote, for everyone in them.
  groups: ['id', 'account_id', 'name', 'note', 'keyword_id', 'parent_id', 'created_at', 'updated_at'],
  group_members: ['account_id', 'group_id'],
  custom_fields: ['id', 'account_id', 'name', 'name_key', 'created_at', 'updated_at'],
  custom_field_entries: ['id', 'account_id', 'custom_field_id', 'created_at', 'updated_at'],
  // `detail`: the keyword as received, which is one of the stop and start words (API.md §11.5), or an operation's name.
  contact_consent: ['id', 'account_id', 'opted_out', 'source', 'detail', 'carrier', 'created_at'],
  erased_consent: ['id', 'account_id', 'opted_out', 'source', 'detail', 'carrier', 'created_at', 'erased_at'],
  scheduled_messages: [
    'id',
    'account_id',
    'scheduled_at',
    'status_id',
    'type_id',
    'mms_template_id',
    'created_at',
    'number',
    'reserved_credits',
    'due_at',
    'lease_token',
    'check_reason',
    'rrule',
    'rrule_start',
    'rrule_zone',
    'rrule_occurrence',
    'shorten_links',
    'priority',
  ],
  // The account's keywords and its autoreply texts (the same to whoever texts the keyword).
  keyword_reservations: ['id', 'account_id', 'account_number_id', 'keyword', 'keyword_key', 'autoreply_message', 'created_at', 'number'],
  list_totals: ['account_id', 'scheduled_messages', 'scheduled_messages_version', 'contacts', 'contacts_version', 'conversations'],
  // `fingerprint`: the SHA-256 of the whole request; `response_location`: the URL of a record by its id.
  idempotency_keys: ['account_id', 'fingerprint', 'response_status', 'response_location', 'created_at', 'expires_at'],
  batches: ['id', 'account_id', 'group_id', 'number', 'type_id', 'recipients', 'skipped', 'credits', 'created_at'],
  messages: [
    'id',
    'account_id',
    'direction',
    'number',
    'type_id',
    'status_id',
    'segments',
    'credits',
    'batch_id',
    'scheduled_message_id',
    'error_code',
    'created_at',
    'sent_at',
    'delivered_at',
    'opt_out_exempt',
    'due_at',
    'lease_token',
    'attempts',
    'carrier',
    'mms_template_id',
    // A carrier's id of the message, and of its error: never the recipient.
    'carrier_message_id',
    'receipt_status',
    'receipt_error',
    'receipt_due_at',
    'quiet_state',
    'priority',
  ],
  // The account's media and MMS templates: what it sends to everyone who gets the template.
  media: ['id', 'account_id', 'file_name', 'mime_type', 'size', 'width', 'height', 'chunk_bytes', 'created_at'],
  media_chunks: ['account_id', 'media_id', 'seq', 'data'],
  mms_templates: ['id', 'account_id', 'name', 'subject', 'message', 'created_at', 'updated_at'],
  mms_template_media: ['account_id', 'template_id', 'media_id', 'position'],
  webhooks: ['id', 'account_id', 'url', 'events', 'active', 'secret', 'created_at', 'updated_at'],
  // `last_error`: the delivery loop's own words (`HTTP 500`, `timeout`), never the receiver's answer.
  webhook_deliveries: [
    'id',
    'account_id',
    'webhook_id',
    'event',
    'msg_id',
    'status',
    'attempts',
    'last_status_code',
    'last_error',
    'created_at',
    'updated_at',
    'due_at',
    'lease_token',
  ],
  // A carrier's ids of receipts and inbound texts (the once-keys): never a number.
  carrier_receipts_pending: ['carrier', 'carrier_message_id', 'status', 'error_code', 'received_at'],
  carrier_inbound: ['carrier', 'carrier_message_id', 'received_at'],
  message_links: ['id', 'account_id', 'message_id', 'code', 'clicks', 'first_click_at', 'last_click_at', 'created_at'],
  link_clicks: ['id', 'account_id', 'link_id', 'clicked_at'],
  conversations: ['account_id', 'last_message_id', 'unread', 'read_up_to_id'],
  account_settings: ['account_id', 'quiet_start', 'quiet_end', 'time_zone', 'updated_at', 'sender_selection'],
  // Kysely's migrator: the names of the migrations applied, and its lock.
  kysely_migration: ['name', 'timestamp'],
  kysely_migration_lock: ['id', 'is_locked'],
} as const satisfies { readonly [T in TableName]?: readonly ColumnOf<T>[] } & Readonly<Record<string, readonly string[]>>;

type Personal = typeof PERSONAL_DATA;

// ------------------------------------------------------------------ reading the lists

/** The tables that hold personal data. */
export type PersonalTable = keyof Personal;

/** The personal columns of `table`, with their erasure. */
export function personalColumns(table: PersonalTable): Readonly<Record<string, PersonalColumn>> {
  return PERSONAL_DATA[table];
}

/**
 * What erasure writes over the columns of `table` that become `erased` or `""` (its `erased` and
 * `blank` columns), for an UPDATE's SET.
 */
export function erasedValues(table: PersonalTable): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [column, c] of Object.entries(personalColumns(table))) {
    if (c.erasure === 'erased') out[column] = ERASED;
    else if (c.erasure === 'blank') out[column] = '';
  }
  return out;
}

/** Every column of both lists, by table: what a migrated database must have, exactly. */
export function classifiedColumns(): Map<string, { personal: Set<string>; none: Set<string> }> {
  const out = new Map<string, { personal: Set<string>; none: Set<string> }>();
  const of = (table: string) => {
    let entry = out.get(table);
    if (!entry) out.set(table, (entry = { personal: new Set(), none: new Set() }));
    return entry;
  };
  for (const [table, columns] of Object.entries(PERSONAL_DATA)) for (const column of Object.keys(columns)) of(table).personal.add(column);
  for (const [table, columns] of Object.entries(NO_PERSONAL_DATA)) for (const column of columns) of(table).none.add(column);
  return out;
}

// ------------------------------------------------------------------ JSON kept by the service

/** The person being erased, as the JSON scrubber needs them. */
export interface ErasedPerson {
  /** E.164 digits without `+`. */
  readonly digits: string;
  /** Ids of the account's contacts with the number (erased). */
  readonly contactIds: ReadonlySet<number>;
  /** Ids of the account's messages to or from the number. */
  readonly messageIds: ReadonlySet<number>;
  /** The erased contact's own words (names, email, city, zip): what merge fields put in a text. */
  readonly contactTexts: readonly string[];
  /** `text` with every writing of the person's number replaced by `erased`. */
  readonly redact: (text: string) => string;
}

// The records of docs/API.md §9 (PascalCase, as a kept response holds them) and the stored rows of
// webhook events (snake_case, src/records/webhooks.ts): the same fields under both spellings.
const PHONE_KEYS = ['MobilePhone', 'mobile_phone'];
const TEXT_KEYS = ['Message', 'message', 'Subject', 'subject'];
const CONTACT_MARKS = ['FirstName', 'first_name'];
const CONTACT_NUMBER_KEYS = ['Number', 'number', 'number_e164'];
const CONTACT_TEXT_KEYS = ['FirstName', 'LastName', 'Email', 'Zip', 'City', 'first_name', 'last_name', 'email', 'zip', 'city'];
const CONTACT_ID_KEYS = ['Id', 'id'];
/** [key of the contact's id, key of its value]: a Custom field value record, an entry row. */
const ENTRY_KEYS: readonly (readonly [string, string])[] = [
  ['PhoneNumberId', 'Entry'],
  ['contact_id', 'entry'],
];
/** The fields of an SmsPreview record (sms/preview): a text personalised for someone, without their number. */
const PREVIEW_KEYS = ['Message', 'Encoding', 'Segments'];
/** [key of the message's id, key of the URL]: a link.clicked event's row or record. */
const LINK_KEYS: readonly (readonly [string, string])[] = [
  ['MessageId', 'Url'],
  ['message_id', 'url'],
];

const has = (o: Record<string, unknown>, key: string) => Object.hasOwn(o, key);
const isId = (value: unknown, ids: ReadonlySet<number>) =>
  (typeof value === 'number' || (typeof value === 'string' && /^\d+$/.test(value))) && ids.has(Number(value));

/**
 * `value` (parsed JSON: a kept response, an event's stored row) with the person's data replaced:
 * - a message or scheduled message of the person (`MobilePhone`/`mobile_phone` is their number):
 *   the number becomes `erased`, `Message` and `Subject` `""`;
 * - a contact of the person (a record with `FirstName`, whose `Number` is their number or whose
 *   `Id` is the erased contact's): `Number` `erased`, its names, email, zip and city `""`, its
 *   birthday unset;
 * - a custom field value of the erased contact: its `Entry` `""`;
 * - a tracked link of one of the person's messages (`link.clicked`): its `Url` `""`;
 * - a preview (sms/preview keeps no number) whose text holds the person's number or one of their
 *   contact's own words (a merge field filled in): its `Message` `""`;
 * - then every string (and number) in which the person's number is written: that writing becomes
 *   `erased` (a 422 that quotes the number as sent, a key, a free text).
 * Returns the same value (===) when nothing changed.
 */
export function scrubJson(value: unknown, person: ErasedPerson): unknown {
  if (typeof value === 'string') return person.redact(value);
  // A JSON number is the person's only when it is their whole E.164 number (`Number: 15551234567`
  // as a client sent it): a shorter one may as well be an id.
  if (typeof value === 'number') return String(value) === person.digits ? ERASED : value;
  if (Array.isArray(value)) {
    const out = value.map((v) => scrubJson(v, person));
    return out.every((v, i) => v === value[i]) ? value : out;
  }
  if (typeof value !== 'object' || value === null) return value;
  const o = value as Record<string, unknown>;
  const next: Record<string, unknown> = {};
  let changed = false;
  for (const [k, v] of Object.entries(o)) {
    const s = scrubJson(v, person);
    if (s !== v) changed = true;
    next[k] = s;
  }
  const set = (key: string, to: unknown) => {
    if (has(next, key) && next[key] !== to) {
      next[key] = to;
      changed = true;
    }
  };
  // A whole value that is a writing of the person's number (not yet erased).
  const isPersonsNumber = (v: unknown) =>
    (typeof v === 'string' && v !== ERASED && person.redact(v) === ERASED) || (typeof v === 'number' && String(v) === person.digits);
  // A message (or scheduled message) to or from the person.
  if (PHONE_KEYS.some((k) => has(o, k) && isPersonsNumber(o[k]))) {
    for (const k of PHONE_KEYS) set(k, ERASED);
    for (const k of TEXT_KEYS) set(k, '');
  }
  // A contact of the person: a Contact record or a contact's row.
  if (
    CONTACT_MARKS.some((k) => has(o, k)) &&
    (CONTACT_NUMBER_KEYS.some((k) => has(o, k) && isPersonsNumber(o[k])) ||
      CONTACT_ID_KEYS.some((k) => has(o, k) && isId(o[k], person.contactIds)))
  ) {
    for (const k of CONTACT_NUMBER_KEYS) set(k, ERASED);
    for (const k of CONTACT_TEXT_KEYS) set(k, '');
    set('BirthDay', '0000-00-00');
    set('birthday', null);
  }
  for (const [idKey, valueKey] of ENTRY_KEYS) if (has(o, idKey) && isId(o[idKey], person.contactIds)) set(valueKey, '');
  for (const [idKey, urlKey] of LINK_KEYS) if (has(o, idKey) && isId(o[idKey], person.messageIds)) set(urlKey, '');
  if (PREVIEW_KEYS.every((k) => has(o, k)) && typeof o.Message === 'string') {
    const text = o.Message;
    if (next.Message !== text || person.contactTexts.some((t) => text.includes(t))) set('Message', '');
  }
  return changed ? next : value;
}
