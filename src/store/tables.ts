import type { ColumnType, Generated } from 'kysely';

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
}

export interface CreditBalancesTable {
  account_id: number;
  available_credits: number;
  updated_at: Epoch;
}

export interface ApiTokensTable {
  id: Id;
  account_id: number;
  /** SHA-256 of the token, lowercase hex. The token itself is never stored (CONVENTIONS §9). */
  token_hash: string;
  label: string;
  created_at: Epoch;
  revoked_at: ColumnType<Epoch | null, Epoch | null | undefined, Epoch | null>;
}

export interface AccountNumbersTable {
  id: Id;
  account_id: number;
  /** Digits only: a short code (e.g. `12345`) or a long number in E.164 without `+`. */
  number: string;
  /** Spec "Number status": 0 Active, 1 Inactive, 301 Temporarily blocked., 302 Permanently blocked. */
  status_id: number;
  blocked_at: ColumnType<Epoch | null, Epoch | null | undefined, Epoch | null>;
  created_at: Epoch;
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
  /** Spec "Scheduled message status": 1 Pending, 2 Action Required, 3 Approved and Scheduled. */
  status_id: number;
  /** 1 SMS, 2 MMS. */
  type_id: number;
  mms_template_id: number | null;
  subject: string;
  created_at: Epoch;
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
}

/** Per-account list totals, kept by triggers (migration 002). */
export interface ListTotalsTable {
  account_id: number;
  scheduled_messages: Generated<number>;
  /** Changes on every insert or delete of one of the account's scheduled messages. */
  scheduled_messages_version: Generated<number>;
}

export interface Database {
  accounts: AccountsTable;
  credit_balances: CreditBalancesTable;
  api_tokens: ApiTokensTable;
  account_numbers: AccountNumbersTable;
  contacts: ContactsTable;
  groups: GroupsTable;
  group_members: GroupMembersTable;
  custom_fields: CustomFieldsTable;
  custom_field_entries: CustomFieldEntriesTable;
  scheduled_messages: ScheduledMessagesTable;
  keyword_reservations: KeywordReservationsTable;
  list_totals: ListTotalsTable;
}
