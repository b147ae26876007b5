import { sql, type RawBuilder } from 'kysely';
import { startCheckpointer, WAL_SIZE_LIMIT_BYTES } from '../checkpointer.ts';
import { checkpointRounds, sqliteHandle, type Store } from '../db.ts';
import { boundCount, isPostgres, jsonIds, prepareQuery } from '../prepared.ts';
import type { Db } from '../types.ts';

/**
 * The SQL of retention (MSGSVC_RETENTION_DAYS; src/domain/retention.ts, docs/guides/backup.md
 * "Retention"). Every function deletes or reads at most `limit` rows of its own kind per call, so
 * that the caller decides how long a lock is held: one window of up to `limit` messages, their
 * links and threads, per transaction. Kept here: Queued messages (status 1, claimed ones too), the
 * credit ledger and the consent ledger (neither references a message by a foreign key: a ledger
 * entry names it as text, `message:{Id}`), scheduled messages, batches.
 *
 * On PostgreSQL the message transaction never waits for a row lock: it takes its locks first, with
 * NOWAIT, and a lock held by a request fails it at once with `isRetentionBusy` true, so it can never
 * be part of a deadlock and never holds a request up. The caller retries the window later.
 */

/** One message of a window. */
export interface WindowRow {
  id: number;
  created_at: number;
  status_id: number;
}

/** True for the errors of a retention step that found rows locked by others (PostgreSQL NOWAIT, a deadlock, SQLite busy): retry later. */
export function isRetentionBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code === '55P03' || code === '40P01' || code === '40001' || code.startsWith('SQLITE_BUSY'));
}

const accountList = prepareQuery((db) => db.selectFrom('accounts').select('id').orderBy('id'));

/** Every account's id, in order (closed ones too: their log is kept as long as any other's). */
export async function accountIds(db: Db): Promise<number[]> {
  return (await accountList.column(db)).map(Number);
}

const window = prepareQuery((db, accountId: number, before: number, fromAt: number, limit: number) =>
  db
    .selectFrom('messages')
    .select(['id', 'created_at', 'status_id'])
    .where('account_id', '=', accountId)
    .where('created_at', '>=', fromAt)
    .where('created_at', '<', before)
    .orderBy('created_at')
    .limit(boundCount(limit)),
);

/**
 * The account's first `limit` messages created at or after `fromAt` and before `before` (epoch
 * seconds), oldest first: one range of messages_account_created_ix, read in its order (no sort, on
 * either store; messages of the same second come in any order). Every status: the caller keeps the
 * Queued ones and moves `fromAt` on.
 */
export async function oldMessageWindow(db: Db, accountId: number, before: number, fromAt: number, limit: number): Promise<WindowRow[]> {
  const rows = await window.all(db, accountId, before, fromAt, limit);
  return rows.map((r) => ({ id: Number(r.id), created_at: Number(r.created_at), status_id: Number(r.status_id) }));
}

const clicks = (db: Db, accountId: number, ids: readonly number[], limit: number) =>
  sql`delete from link_clicks where id in (
        select c.id from link_clicks c
        where c.link_id in (select l.id from message_links l where l.account_id = ${accountId} and ${among(db, 'l.message_id', ids)})
        limit ${boundCount(limit)})`;

/**
 * Deletes up to `limit` link clicks of the tracked links of the account's messages `ids` (a
 * window's messages that are not Queued, which retention deletes; a message that is not Queued
 * never is again). Called until it returns less than `limit` before the messages go, so that the clicks of a much-clicked link are never all deleted in one
 * statement (the messages' delete would take them all at once, by the foreign key's cascade).
 * @returns how many were deleted.
 */
export async function deleteLinkClicks(db: Db, accountId: number, ids: readonly number[], limit: number): Promise<number> {
  return Number((await clicks(db, accountId, ids, limit).execute(db)).numAffectedRows ?? 0n);
}

/** What one window's transaction deleted. */
export interface DeletedMessages {
  messages: number;
  links: number;
  /** Conversations deleted because none of their messages is left. */
  conversations: number;
}

/**
 * `column` is one of `values` (ids or texts), as one parameter: PostgreSQL `= any($1)` (an array,
 * whose length the planner sees: index probes, where a JSON list estimated at 100 rows got a hash
 * join over the whole table), SQLite `in (select value from json_each(?))`. Either way one
 * statement shape whatever the length, prepared once. `column` is a constant of this module.
 */
function among(db: Db, column: string, values: readonly (number | string)[]): RawBuilder<boolean> {
  return isPostgres(db)
    ? sql<boolean>`${sql.raw(column)} = any(${values})`
    : sql<boolean>`${sql.raw(column)} in (select value from json_each(${JSON.stringify(values)}))`;
}

/** ` for update nowait` on PostgreSQL (see the module's comment), nothing on SQLite (its transaction holds the write lock). */
function nowait(db: Db): RawBuilder<unknown> {
  return isPostgres(db) ? sql` for update nowait` : sql``;
}

/**
 * In the caller's transaction: deletes the account's messages `ids` (a window: at most the
 * caller's batch) that are not Queued, with their tracked links (and any click left,
 * by cascade), and keeps their conversations true to what is left:
 * - `unread` drops by the deleted inbound messages it counted (those after `read_up_to_id`);
 * - a conversation whose newest message was deleted points at its newest remaining one, or is
 *   deleted when none is left (`list_totals.conversations` drops with it).
 * @throws an error for which isRetentionBusy is true when, on PostgreSQL, a row it must change is
 *   locked by another transaction (nothing is changed: the caller's transaction rolls back).
 */
export async function deleteMessageWindow(tx: Db, accountId: number, ids: readonly number[]): Promise<DeletedMessages> {
  const pg = isPostgres(tx);
  const doomed = (
    await sql<{ id: number; mobile_phone: string }>`select id, mobile_phone from messages
      where account_id = ${accountId} and status_id <> 1 and ${among(tx, 'id', ids)} order by id${nowait(tx)}`.execute(tx)
  ).rows;
  if (doomed.length === 0) return { messages: 0, links: 0, conversations: 0 };
  const d = doomed.map((r) => Number(r.id));
  // The threads of the window's messages, by their primary key (account_id, mobile_phone).
  const p = [...new Set(doomed.map((r) => r.mobile_phone))].sort();
  if (pg) {
    await sql`select id from message_links where account_id = ${accountId} and ${among(tx, 'message_id', d)} order by id for update nowait`.execute(
      tx,
    );
    await sql`select mobile_phone from conversations where account_id = ${accountId} and ${among(tx, 'mobile_phone', p)}
      order by mobile_phone for update nowait`.execute(tx);
  }
  // The deleted inbound messages each thread's unread counted (those after read_up_to_id), by thread.
  // `+m.account_id`: the window's ids drive the plan (primary key), not the account's whole log.
  const floor = pg ? sql`greatest` : sql`max`;
  await sql`with d as (
        select m.mobile_phone, count(*) as n from messages m
        join conversations c on c.account_id = m.account_id and c.mobile_phone = m.mobile_phone
        where +m.account_id = ${accountId} and m.direction = 2 and ${among(tx, 'm.id', d)} and m.id > c.read_up_to_id
        group by m.mobile_phone)
      update conversations set unread = ${floor}(unread - (select d.n from d where d.mobile_phone = conversations.mobile_phone), 0)
      where account_id = ${accountId} and mobile_phone in (select d.mobile_phone from d)`.execute(tx);
  const links = await sql`delete from message_links where account_id = ${accountId} and ${among(tx, 'message_id', d)}`.execute(tx);
  const messages = await sql`delete from messages where account_id = ${accountId} and ${among(tx, 'id', d)}`.execute(tx);
  await sql`update conversations set last_message_id = (
        select max(m.id) from messages m where m.account_id = conversations.account_id and m.mobile_phone = conversations.mobile_phone)
      where account_id = ${accountId} and ${among(tx, 'mobile_phone', p)} and ${among(tx, 'last_message_id', d)}
        and exists (select 1 from messages m where m.account_id = conversations.account_id and m.mobile_phone = conversations.mobile_phone)`.execute(
    tx,
  );
  const emptied = Number(
    (
      await sql`delete from conversations
        where account_id = ${accountId} and ${among(tx, 'mobile_phone', p)} and ${among(tx, 'last_message_id', d)}`.execute(tx)
    ).numAffectedRows ?? 0n,
  );
  if (emptied > 0) {
    // Taken last and without waiting: every new thread and contact of the account updates this row.
    if (pg) await sql`select account_id from list_totals where account_id = ${accountId} for update nowait`.execute(tx);
    await sql`update list_totals set conversations = conversations - ${emptied} where account_id = ${accountId}`.execute(tx);
  }
  return {
    messages: Number(messages.numAffectedRows ?? 0n),
    links: Number(links.numAffectedRows ?? 0n),
    conversations: emptied,
  };
}

const deliveryWindow = prepareQuery((db, afterId: number, limit: number) =>
  db
    .selectFrom('webhook_deliveries')
    .select(['id', 'created_at', 'status'])
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(boundCount(limit)),
);

const deliveriesDelete = prepareQuery((db, idsJson: string, before: number) =>
  db
    .deleteFrom('webhook_deliveries')
    .where('id', 'in', jsonIds(db, idsJson))
    .where('status', '<>', 'Pending')
    .where('created_at', '<', before),
);

/**
 * One window of webhook deliveries: the next `limit` rows after `afterId` (every account, in id
 * order, which is the order they were written in); of them, those that ended (Delivered or Failed)
 * and were created before `before` (epoch seconds) are deleted. A Pending delivery is kept, however old.
 * @returns the window's last id (the next cursor; undefined when it was empty), how many of its
 *   rows were old, and how many were deleted.
 */
export async function deleteEndedDeliveries(
  db: Db,
  afterId: number,
  before: number,
  limit: number,
): Promise<{ lastId: number | undefined; old: number; deleted: number }> {
  const rows = await deliveryWindow.all(db, afterId, limit);
  if (rows.length === 0) return { lastId: undefined, old: 0, deleted: 0 };
  const old = rows.filter((r) => Number(r.created_at) < before);
  const ended = old.filter((r) => r.status !== 'Pending').map((r) => Number(r.id));
  const deleted = ended.length === 0 ? 0 : await deliveriesDelete.run(db, JSON.stringify(ended), before);
  return { lastId: Number(rows[rows.length - 1]!.id), old: old.length, deleted };
}

const inboundDelete = prepareQuery((db, beforeMs: number, limit: number) => ({
  compile: () =>
    sql`delete from carrier_inbound where (carrier, carrier_message_id) in (
          select carrier, carrier_message_id from carrier_inbound where received_at < ${beforeMs} order by received_at limit ${boundCount(limit)})`.compile(
      db,
    ),
}));

/**
 * Deletes up to `limit` inbound once-keys (`carrier_inbound`, migration 012) received before
 * `beforeMs` (epoch ms): a carrier repeats an inbound callback within hours, so a key that old no
 * longer stops a duplicate that could still come.
 * @returns how many were deleted.
 */
export async function deleteInboundKeys(db: Db, beforeMs: number, limit: number): Promise<number> {
  return inboundDelete.run(db, beforeMs, limit);
}

/** How often the purge's checkpoint thread checkpoints, in ms. */
const PURGE_CHECKPOINT_MS = 25;

/**
 * Runs `fn` (a purge) with the WAL checkpoints of this SQLite store on a thread of their own
 * (src/store/checkpointer.ts), unless the store has one already (MSGSVC_SQLITE_CHECKPOINT_MS).
 * A purge writes far more pages than requests do, and SQLite's automatic checkpoint runs inside
 * the COMMIT that fills the WAL: on a log of a million messages that COMMIT took 50 to 330 ms,
 * all of it on the event loop the requests share (measured with bench/retention.ts). With the
 * thread, a window's COMMIT only appends to the WAL.
 *
 * `fn` gets `settle`, to await after each of its transactions: it resolves once the thread has
 * run a whole checkpoint after it was called. Without it the purge wrote faster than the thread
 * checkpointed, the WAL never came back to its start and grew to 1.5 GB, and truncating it back
 * (journal_size_limit) stalled the event loop for a second. Afterwards the connection gets its
 * automatic checkpoint back. PostgreSQL, or a store with a thread already: `fn` runs as it is
 * (`settle` resolves at once).
 */
export async function withCheckpointThread<T>(store: Store, fn: (settle: () => Promise<void>) => Promise<T>): Promise<T> {
  const sqlite = sqliteHandle(store.db);
  if (!sqlite || checkpointRounds(store.db) !== undefined || sqlite.memory || sqlite.name.startsWith('file:')) {
    return fn(() => Promise.resolve());
  }
  const automatic = () => {
    if (sqlite.open) sqlite.pragma('wal_autocheckpoint = 1000');
  };
  sqlite.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  sqlite.pragma('wal_autocheckpoint = 0');
  const thread = startCheckpointer(sqlite.name, PURGE_CHECKPOINT_MS, automatic);
  /** Waits (at most 10 s) for a whole round of the thread begun after now; at once when the thread is gone. */
  const settle = async () => {
    const before = await thread.rounds();
    for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
      await new Promise((r) => setTimeout(r, PURGE_CHECKPOINT_MS / 2));
      const rounds = await thread.rounds();
      if (rounds === 0 || rounds > before + 1) return; // 0: the thread is gone
    }
  };
  try {
    return await fn(settle);
  } finally {
    // The WAL the purge leaves is checkpointed here, not by the next request's COMMIT.
    await settle();
    await thread.close();
    automatic();
  }
}
