import { sql } from 'kysely';
import { isPostgres, jsonIds, prepareQuery } from '../prepared.ts';
import type { Row } from '../tables.ts';
import type { Db } from '../types.ts';

/**
 * The SQL of account settings and quiet hours (API.md §14.3.4). Every function is scoped to the
 * account(s) it is given; `db` may be an open transaction (the caller owns it). Times: `now` in
 * epoch seconds, `nowMs` in epoch milliseconds (messages' `due_at`).
 */

/** A stored settings row (no row: the defaults, `DEFAULT_SETTINGS`). */
export type AccountSettingsRow = Pick<Row<'account_settings'>, 'account_id' | 'quiet_start' | 'quiet_end' | 'time_zone'>;

/** A stored settings row with the account's SenderSelection (API.md §17), as the settings operations read it. */
export type FullAccountSettingsRow = AccountSettingsRow & Pick<Row<'account_settings'>, 'sender_selection'>;

const COLUMNS = ['account_id', 'quiet_start', 'quiet_end', 'time_zone', 'sender_selection'] as const;

const one = prepareQuery((db, accountId: number) => db.selectFrom('account_settings').select(COLUMNS).where('account_id', '=', accountId));

/** The account's settings row, if it ever saved one. */
export function findSettings(db: Db, accountId: number): Promise<FullAccountSettingsRow | undefined> {
  return one.first(db, accountId);
}

const many = prepareQuery((db, idsJson: string) => ({
  compile: () =>
    sql`select account_id, quiet_start, quiet_end, time_zone from account_settings where account_id in ${jsonIds(db, idsJson)}`.compile(db),
}));
const manyLocked = prepareQuery((db, idsJson: string) => ({
  compile: () =>
    sql`select account_id, quiet_start, quiet_end, time_zone from account_settings where account_id in ${jsonIds(db, idsJson)} for share`.compile(
      db,
    ),
}));

/**
 * The settings rows of these accounts (those that have one), in one statement: what the
 * dispatcher reads once per round. `lock`: on PostgreSQL, the rows are read `FOR SHARE`, so a
 * `PUT /v1/account/settings` in progress is waited for and one that starts later waits for the
 * caller's transaction (SQLite's transactions already run one at a time).
 */
export async function findSettingsMany(db: Db, accountIds: readonly number[], lock = false): Promise<AccountSettingsRow[]> {
  if (accountIds.length === 0) return [];
  const json = JSON.stringify(accountIds);
  const rows = (await (lock && isPostgres(db) ? manyLocked : many).all(db, json)) as AccountSettingsRow[];
  return rows.map((r) => ({ ...r, account_id: Number(r.account_id) }));
}

/** Writes the account's settings (inserting its row the first time); `now` in epoch seconds. */
export async function saveSettings(
  db: Db,
  accountId: number,
  s: { quietStart: string | null; quietEnd: string | null; timeZone: string | null; senderSelection: 'first' | 'pool' },
  now: number,
): Promise<void> {
  const values = {
    quiet_start: s.quietStart,
    quiet_end: s.quietEnd,
    time_zone: s.timeZone,
    sender_selection: s.senderSelection,
    updated_at: now,
  };
  await db
    .insertInto('account_settings')
    .values({ account_id: accountId, ...values })
    .onConflict((oc) => oc.column('account_id').doUpdateSet(values))
    .execute();
}

const release = prepareQuery((db, accountId: number, nowMs: number) =>
  db
    .updateTable('messages')
    .set({ due_at: nowMs })
    .where('account_id', '=', accountId)
    .where('status_id', '=', 1)
    .where('quiet_state', '=', 1)
    .where('lease_token', 'is', null)
    .where('due_at', '>', nowMs),
);

/**
 * Makes the account's messages held by quiet hours due at `nowMs` (epoch ms), so that the
 * dispatcher checks them against the new settings at once (API.md §14.3.4). A message a dispatcher
 * holds now (leased) is left be: its round reads the settings again before it holds it.
 * Reads the account's Queued messages through `messages_account_status_ix`.
 * @returns how many were released.
 */
export function releaseQuietHeld(db: Db, accountId: number, nowMs: number): Promise<number> {
  return release.run(db, accountId, nowMs);
}

const exempt = prepareQuery((db, accountId: number, id: number) =>
  db.updateTable('messages').set({ quiet_state: 2 }).where('account_id', '=', accountId).where('id', '=', id),
);

/** Marks an outbound message as never held by quiet hours (a keyword's autoreply, API.md §14.3.4). */
export async function markNeverHeld(db: Db, accountId: number, messageId: number): Promise<void> {
  await exempt.run(db, accountId, messageId);
}
