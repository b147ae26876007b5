import { sql } from 'kysely';
import { fairMessageClaim, priorityMessageClaim } from '../claim.ts';
import { boundCount, isPostgres, jsonIds, prepareQuery } from '../prepared.ts';
import type { Row } from '../tables.ts';
import type { Db } from '../types.ts';

/**
 * The dispatcher's queries (API.md §11.2). Times: `now`, `due`, `lease` in epoch
 * milliseconds; `nowSeconds` in epoch seconds (the log's sent_at, delivered_at).
 *
 * The claim is ONE statement per store, so no two dispatchers ever hold the same message:
 * - PostgreSQL: the due ids are picked with `FOR UPDATE SKIP LOCKED` in a materialised CTE (rows
 *   another dispatcher is claiming are skipped, not waited for) and updated in the same statement;
 * - SQLite: a single `UPDATE … WHERE id IN (SELECT … LIMIT n) RETURNING …`; SQLite runs one writer
 *   at a time, so the select and the update cannot interleave with another claim.
 * Claiming sets the lease: `due_at` becomes the lease's end (a dispatcher that dies leaves the
 * message due again then), `lease_token` the claim's token, and `attempts` counts one more.
 *
 * Which due messages a claim takes is shared between accounts (API.md §16 "Quotas and fairness";
 * src/store/claim.ts fairMessageClaim): round-robin over the accounts that have due messages, only
 * `active` accounts, and an account with MaxPerSecond no more than its grant of the current second.
 * It reads the index `messages_account_due_ix` (account_id, due_at, id) WHERE due_at IS NOT NULL.
 */

const RETURNING = [
  'id',
  'account_id',
  'number',
  'mobile_phone',
  'message',
  'type_id',
  'segments',
  'credits',
  'attempts',
  'opt_out_exempt',
  'mms_template_id',
  'quiet_state',
] as const;

/** A claimed message: what the carrier needs, and its cost for a refund (`attempts` counts this one). */
export type ClaimedMessage = Pick<Row<'messages'>, (typeof RETURNING)[number]>;

const claim = fairMessageClaim<ClaimedMessage>(RETURNING);
const claimLane = priorityMessageClaim<ClaimedMessage>(RETURNING);

/**
 * Claims up to `limit` due messages of Priority 1 (API.md §17) for `token`, before the round's
 * fair claim (src/store/claim.ts priorityMessageClaim): oldest due first, only `active` accounts,
 * each account with MaxPerSecond at most its grant in `grants`. Committed on return.
 */
export async function claimPriorityDue(
  db: Db,
  now: number,
  limit: number,
  leaseUntil: number,
  token: string,
  grants?: ReadonlyMap<number, number>,
): Promise<ClaimedMessage[]> {
  const json: Record<string, number> = {};
  for (const [account, n] of grants ?? []) json[String(account)] = n;
  const rows = await claimLane(db, { now, limit, leaseUntil, token, grantsJson: JSON.stringify(json) });
  return rows.map((r) => ({ ...r, account_id: Number(r.account_id), credits: Number(r.credits) }));
}

/**
 * How many accounts with a backlog one claim serves at most (by default): each gets at least
 * ⌈batch / 10⌉ of the batch (50 of 500), so that a round's writes (the claim, Sent, the receipt)
 * touch 10 ranges of the table and its indexes, not one per account. Measured on SQLite, 100,000
 * messages of 100 accounts against those of one account (bench/fairness.ts (b)): every account
 * in every round, about 60 % of the one account's rate; 20 accounts a round, about 77 %; 10, 96 %.
 * Accounts with fewer due messages take less room, so a claim serves as many of those as fill it.
 * With more accounts than that, the round-robin cursor gives each its turn: a message waits at
 * most ⌈accounts with a backlog / 10⌉ rounds (100 such accounts: 10 rounds of 500, about half a
 * second at 10,000 messages/s).
 */
export const BACKLOGGED_PER_CLAIM = 10;

/** How a claim shares itself between accounts (claimDue); every field optional. */
export interface ClaimShare {
  /** Only accounts whose id is above it (the dispatcher's round-robin cursor). Default 0: every account. */
  cursor?: number;
  /**
   * How many of an account's due messages count, at most, towards the batch's worth of accounts a
   * claim looks at (src/store/claim.ts fairMessageClaim). Default ⌈limit / BACKLOGGED_PER_CLAIM⌉.
   */
  perAccount?: number;
  /**
   * Per account with MaxPerSecond (`max_per_second` > 0): how many of its messages this claim may
   * take. Such an account that is not in the map gets none. Default: empty.
   */
  grants?: ReadonlyMap<number, number>;
}

/**
 * Claims up to `limit` due messages (Queued and due, or `sending` with an expired lease) for
 * `token`, leasing them until `leaseUntil` (epoch ms; `now` too). Committed on return (one
 * autocommit statement), so `sending` is recorded before any carrier call. The messages are shared
 * between the accounts that have due messages (see the head of this file): only `active`
 * accounts, each account with MaxPerSecond at most its grant in `share.grants`.
 */
export async function claimDue(
  db: Db,
  now: number,
  limit: number,
  leaseUntil: number,
  token: string,
  share: ClaimShare = {},
): Promise<ClaimedMessage[]> {
  const grants: Record<string, number> = {};
  for (const [account, n] of share.grants ?? []) grants[String(account)] = n;
  const rows = await claim(db, {
    now,
    limit,
    leaseUntil,
    token,
    cursor: share.cursor ?? 0,
    perAccount: Math.max(1, Math.min(limit, share.perAccount ?? Math.ceil(limit / BACKLOGGED_PER_CLAIM))),
    grantsJson: JSON.stringify(grants),
  });
  return rows.map((r) => ({ ...r, account_id: Number(r.account_id), credits: Number(r.credits) }));
}

const limited = prepareQuery((db) =>
  db.selectFrom('accounts').select(['id', 'max_per_second']).where('max_per_second', '>', 0).where('status', '=', 'active'),
);

/**
 * The active accounts with MaxPerSecond (API.md §16): id → messages per second. The dispatcher
 * reads it at most once a second (the accounts table is small next to the message log).
 */
export async function findRateLimitedAccounts(db: Db): Promise<Map<number, number>> {
  const rows = (await limited.all(db)) as { id: number; max_per_second: number }[];
  return new Map(rows.map((r) => [Number(r.id), Number(r.max_per_second)]));
}

const limitedNumbers = prepareQuery((db) =>
  db
    .selectFrom('account_numbers')
    .select(['account_id', 'number', 'max_per_second'])
    .where('max_per_second', '>', 0)
    .where('status_id', '=', 0),
);

/**
 * The Active numbers with a MaxPerSecond of their own (API.md §17): `{account id}:{digits}` →
 * messages per second. Read at most once a second, as the accounts' (no number has one: empty).
 */
export async function findRateLimitedNumbers(db: Db): Promise<Map<string, number>> {
  const rows = await limitedNumbers.all(db);
  return new Map(rows.map((r) => [`${Number(r.account_id)}:${r.number}`, Number(r.max_per_second)]));
}

const dueOf = prepareQuery((db, idsJson: string, now: number) => ({
  compile: () =>
    // The earliest pending due_at of each account, the first entry of its range in
    // messages_account_due_ix; the range form keeps PostgreSQL on that index (see fairMessageClaim).
    sql`select a.value as id from ${jsonIds(db, idsJson)} as a
        where (select m.due_at from messages m where m.account_id >= a.value and m.account_id <= a.value and m.due_at is not null
               order by m.account_id, m.due_at limit 1) <= ${now}`.compile(db),
}));

/**
 * Of the given accounts, those with a message due at `now` (epoch ms): one index seek each
 * (messages_account_due_ix). The dispatcher asks the MaxPerSecond counter for these only.
 */
export async function accountsWithDue(db: Db, accountIds: readonly number[], now: number): Promise<number[]> {
  if (accountIds.length === 0) return [];
  return ((await dueOf.all(db, JSON.stringify(accountIds), now)) as { id: number }[]).map((r) => Number(r.id));
}

const blocked = prepareQuery((db, idsJson: string) => ({
  compile: () =>
    sql`select m.id as id,
          case
            when a.status = 'closed' then 'ACCOUNT_CLOSED'
            when a.status <> 'active' then ${sql.lit(ACCOUNT_NOT_ACTIVE)}
            when m.opt_out_exempt = 0 and exists (
              select 1 from contacts c where c.account_id = m.account_id and c.number_e164 = '+' || m.mobile_phone and c.opted_out = 1)
            then 'OPTED_OUT'
            when not exists (
              select 1 from account_numbers n where n.account_id = m.account_id and n.number = m.number and n.status_id = 0)
            then 'NUMBER_INACTIVE'
          end as reason
        from messages m join accounts a on a.id = m.account_id where m.id in ${jsonIds(db, idsJson)}`.compile(db),
}));

/**
 * findBlocked's reason for a message whose account is suspended (API.md §16): not an ErrorCode:
 * the message is put back in the queue unattempted, to go when the account is active again.
 */
export const ACCOUNT_NOT_ACTIVE = 'ACCOUNT_NOT_ACTIVE';

/**
 * Of the given messages, those that must not go out (API.md §10.6 Rejected, API.md §11.6): the
 * recipient is an opted-out contact of the account (unless the message is an API.md §11.6 confirmation), or
 * the account number is no longer Active (or no longer the account's). Reason: `OPTED_OUT` or
 * `NUMBER_INACTIVE`, which becomes the message's ErrorCode.
 *
 * Checked first, the account's status (API.md §16), which the claim only takes `active` accounts'
 * messages for, but which may have changed since the claim: `ACCOUNT_CLOSED` (an ErrorCode: the
 * closing rejects the messages it finds unleased, so a held one ends the same way), or
 * ACCOUNT_NOT_ACTIVE for a suspended account (not an ErrorCode: the message waits).
 */
export async function findBlocked(db: Db, ids: readonly number[]): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  if (ids.length === 0) return out;
  for (const r of (await blocked.all(db, JSON.stringify(ids))) as { id: number; reason: string | null }[]) {
    if (r.reason) out.set(Number(r.id), r.reason);
  }
  return out;
}

const sent = prepareQuery(
  (
    db,
    id: number,
    token: string,
    nowSeconds: number,
    carrier: string | null,
    carrierId: string,
    receiptStatus: number | null,
    receiptError: string | null,
    receiptDue: number | null,
  ) =>
    db
      .updateTable('messages')
      .set({
        status_id: 2,
        sent_at: nowSeconds,
        carrier,
        carrier_message_id: carrierId,
        error_code: '',
        due_at: null,
        lease_token: null,
        receipt_status: receiptStatus,
        receipt_error: receiptError,
        receipt_due_at: receiptDue,
      })
      .where('id', '=', id)
      .where('lease_token', '=', token),
);

/** A receipt the carrier announced with its acceptance: status 3 or 4, error code, due (epoch ms). */
export interface AnnouncedReceipt {
  statusId: number;
  errorCode: string;
  dueAt: number;
}

/**
 * Records that the carrier accepted the message (Sent), if `token` still holds it.
 * @param carrier the configured name of the carrier that took it (API.md §14.1); null: none recorded.
 * @returns false when the lease was lost (another dispatcher took the message): nothing written.
 */
export async function markSent(
  db: Db,
  id: number,
  token: string,
  nowSeconds: number,
  carrierId: string,
  receipt: AnnouncedReceipt | undefined,
  carrier: string | null = null,
): Promise<boolean> {
  return (
    (await sent.run(
      db,
      id,
      token,
      nowSeconds,
      carrier,
      carrierId,
      receipt?.statusId ?? null,
      receipt?.errorCode ?? null,
      receipt?.dueAt ?? null,
    )) === 1
  );
}

/** One accepted message of a claim, for markSentMany. */
export interface SentItem {
  id: number;
  /** The configured name of the carrier that took it (API.md §14.1). */
  carrier: string;
  carrierId: string;
  receipt: AnnouncedReceipt | undefined;
}

const sentMany = prepareQuery((db, itemsJson: string, token: string, nowSeconds: number) => ({
  compile: () =>
    (isPostgres(db)
      ? sql`update messages m set status_id = 2, sent_at = ${nowSeconds}, carrier = v.car, carrier_message_id = v.cid, error_code = '', due_at = null,
            lease_token = null, receipt_status = v.rs, receipt_error = v.re, receipt_due_at = v.rd
          from json_to_recordset(cast(${itemsJson} as json)) as v(id integer, car text, cid text, rs integer, re text, rd bigint)
          where m.id = v.id and m.lease_token = ${token}
          returning m.id`
      : sql`update messages set status_id = 2, sent_at = ${nowSeconds}, carrier = v.car, carrier_message_id = v.cid, error_code = '', due_at = null,
            lease_token = null, receipt_status = v.rs, receipt_error = v.re, receipt_due_at = v.rd
          from (select value ->> '$.id' as id, value ->> '$.car' as car, value ->> '$.cid' as cid, value ->> '$.rs' as rs, value ->> '$.re' as re, value ->> '$.rd' as rd
                from json_each(${itemsJson})) as v
          where messages.id = v.id and messages.lease_token = ${token}
          returning messages.id`
    ).compile(db),
}));

/**
 * markSent for many messages of one claim in ONE statement (what a round writes most): each
 * becomes Sent if `token` still holds it.
 * @returns the ids written; the others' leases were lost.
 */
export async function markSentMany(db: Db, token: string, nowSeconds: number, items: readonly SentItem[]): Promise<Set<number>> {
  if (items.length === 0) return new Set();
  const json = JSON.stringify(
    items.map((i) => ({
      id: i.id,
      car: i.carrier,
      cid: i.carrierId,
      rs: i.receipt?.statusId ?? null,
      re: i.receipt?.errorCode ?? null,
      rd: i.receipt?.dueAt ?? null,
    })),
  );
  const rows = (await sentMany.all(db, json, token, nowSeconds)) as { id: number }[];
  return new Set(rows.map((r) => Number(r.id)));
}

const ended = prepareQuery((db, id: number, token: string, statusId: number, errorCode: string) =>
  db
    .updateTable('messages')
    .set({ status_id: statusId, error_code: errorCode, due_at: null, lease_token: null })
    .where('id', '=', id)
    .where('lease_token', '=', token)
    .returning(['account_id', 'credits', 'batch_id']),
);

/**
 * Ends a held message Failed (5) or Rejected (6) with `errorCode`, if `token` still holds it.
 * @returns its account, credits and batch (to refund, in the same transaction), or undefined when the lease was lost.
 */
export async function markEnded(
  db: Db,
  id: number,
  token: string,
  statusId: 5 | 6,
  errorCode: string,
): Promise<Pick<Row<'messages'>, 'account_id' | 'credits' | 'batch_id'> | undefined> {
  const row = await ended.first(db, id, token, statusId, errorCode);
  return row ? { account_id: row.account_id, credits: Number(row.credits), batch_id: row.batch_id } : undefined;
}

const retry = prepareQuery((db, id: number, token: string, dueAt: number) =>
  db.updateTable('messages').set({ due_at: dueAt, lease_token: null }).where('id', '=', id).where('lease_token', '=', token),
);

/** Puts a held message back in the queue, due at `dueAt` (epoch ms), if `token` still holds it. */
export async function markRetry(db: Db, id: number, token: string, dueAt: number): Promise<boolean> {
  return (await retry.run(db, id, token, dueAt)) === 1;
}

const released = prepareQuery((db, idsJson: string, token: string, dueAt: number) => ({
  compile: () =>
    sql`update messages set due_at = ${dueAt}, lease_token = null, attempts = attempts - 1
        where id in ${jsonIds(db, idsJson)} and lease_token = ${token}`.compile(db),
}));

/**
 * Puts held messages back in the queue WITHOUT spending an attempt (the claim's count is taken
 * back), due at `dueAt` (epoch ms), those `token` still holds: messages none of whose carriers
 * was ready (API.md §14.1: they wait Queued, spending no attempt). Returns how many.
 */
export async function releaseUnattempted(db: Db, ids: readonly number[], token: string, dueAt: number): Promise<number> {
  if (ids.length === 0) return 0;
  return released.run(db, JSON.stringify(ids), token, dueAt);
}

const held = prepareQuery((db, itemsJson: string, token: string) => ({
  compile: () =>
    (isPostgres(db)
      ? sql`update messages m set due_at = v.due, lease_token = null, attempts = m.attempts - 1, quiet_state = 1
          from json_to_recordset(cast(${itemsJson} as json)) as v(id integer, due bigint)
          where m.id = v.id and m.lease_token = ${token}`
      : sql`update messages set due_at = v.due, lease_token = null, attempts = attempts - 1, quiet_state = 1
          from (select value ->> '$.id' as id, value ->> '$.due' as due from json_each(${itemsJson})) as v
          where messages.id = v.id and messages.lease_token = ${token}`
    ).compile(db),
}));

/** One message of a claim held by quiet hours (API.md §14.3.5): its id, and when they end (epoch ms). */
export interface HeldItem {
  id: number;
  dueAt: number;
}

/**
 * Puts messages held by quiet hours back in the queue (API.md §14.3.5), each due when its quiet
 * hours end, marked `quiet_state` 1 (so that a change of the settings finds them), WITHOUT
 * spending an attempt (the claim's count is taken back), those `token` still holds. ONE statement.
 * @returns how many were written.
 */
export async function holdQuiet(db: Db, items: readonly HeldItem[], token: string): Promise<number> {
  if (items.length === 0) return 0;
  return held.run(db, JSON.stringify(items.map((i) => ({ id: i.id, due: i.dueAt }))), token);
}

const unheld = prepareQuery((db, idsJson: string, token: string) => ({
  compile: () =>
    sql`update messages set quiet_state = 0 where id in ${jsonIds(db, idsJson)} and lease_token = ${token} and quiet_state = 1`.compile(db),
}));

/**
 * Clears the quiet-hours mark of claimed messages that are no longer held (their quiet hours are
 * over), those `token` still holds; written before their outcome, in its transaction.
 */
export async function clearQuietHeld(db: Db, ids: readonly number[], token: string): Promise<number> {
  if (ids.length === 0) return 0;
  return unheld.run(db, JSON.stringify(ids), token);
}

// ------------------------------------------------------------------ receipts

// Unqualified on both stores: in PostgreSQL's UPDATE … FROM due, `due` has only `id`.
const RECEIPT_SET = `status_id = case when status_id = 2 then receipt_status else status_id end,
  error_code = case when status_id = 2 then coalesce(receipt_error, '') else error_code end,
  receipt_status = null, receipt_error = null, receipt_due_at = null`;

const dueReceipts = prepareQuery((db, now: number, limit: number, nowSeconds: number) => ({
  compile: () =>
    (isPostgres(db)
      ? sql`with due as materialized (
            select id from messages where receipt_due_at <= ${now} order by receipt_due_at limit ${limit} for update skip locked)
          update messages m set delivered_at = case when status_id = 2 and receipt_status = 3 then ${nowSeconds} else delivered_at end,
            ${sql.raw(RECEIPT_SET)}
          from due where m.id = due.id
          returning m.id, m.account_id`
      : sql`update messages set delivered_at = case when status_id = 2 and receipt_status = 3 then ${nowSeconds} else delivered_at end,
            ${sql.raw(RECEIPT_SET)}
          where id in (select id from messages where receipt_due_at <= ${now} order by receipt_due_at limit ${limit})
          returning id, account_id`
    ).compile(db),
}));

/**
 * Applies up to `limit` announced receipts that are due (API.md §11.2): a Sent message
 * becomes Delivered (DateDelivered now) or Undelivered (ErrorCode the receipt's). One statement;
 * on PostgreSQL rows another dispatcher is applying are skipped. Returns how many were applied.
 */
export async function applyDueReceipts(db: Db, now: number, limit: number, nowSeconds: number): Promise<number> {
  return (await dueReceipts.all(db, now, limit, nowSeconds)).length;
}

/** applyDueReceipts, returning the messages applied (for their API.md §12.1 events, in the same transaction). */
export async function applyDueReceiptRows(
  db: Db,
  now: number,
  limit: number,
  nowSeconds: number,
): Promise<Pick<Row<'messages'>, 'id' | 'account_id'>[]> {
  return (await dueReceipts.all(db, now, limit, nowSeconds)) as Pick<Row<'messages'>, 'id' | 'account_id'>[];
}

const anyDueReceipt = prepareQuery((db, now: number) =>
  db.selectFrom('messages').select('id').where('receipt_due_at', '<=', now).limit(boundCount(1)),
);

/**
 * True when some announced receipt is due: a read (the partial index), so an idle round opens no
 * write transaction (on SQLite a write, even one that changes nothing, takes the database's lock).
 */
export async function hasDueReceipts(db: Db, now: number): Promise<boolean> {
  return (await anyDueReceipt.first(db, now)) !== undefined;
}
