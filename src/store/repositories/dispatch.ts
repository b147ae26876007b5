import { sql } from 'kysely';
import { leaseClaim } from '../claim.ts';
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

const claim = leaseClaim<ClaimedMessage>('messages', RETURNING, true);

/**
 * Claims up to `limit` due messages (Queued and due, or `sending` with an expired lease) for
 * `token`, leasing them until `leaseUntil`. Committed on return (one autocommit statement), so
 * `sending` is recorded before any carrier call.
 */
export async function claimDue(db: Db, now: number, limit: number, leaseUntil: number, token: string): Promise<ClaimedMessage[]> {
  const rows = await claim(db, now, limit, leaseUntil, token);
  return rows.map((r) => ({ ...r, credits: Number(r.credits) }));
}

const blocked = prepareQuery((db, idsJson: string) => ({
  compile: () =>
    sql`select m.id as id,
          case
            when m.opt_out_exempt = 0 and exists (
              select 1 from contacts c where c.account_id = m.account_id and c.number_e164 = '+' || m.mobile_phone and c.opted_out = 1)
            then 'OPTED_OUT'
            when not exists (
              select 1 from account_numbers n where n.account_id = m.account_id and n.number = m.number and n.status_id = 0)
            then 'NUMBER_INACTIVE'
          end as reason
        from messages m where m.id in ${jsonIds(db, idsJson)}`.compile(db),
}));

/**
 * Of the given messages, those that must not go out (API.md §10.6 Rejected, API.md §11.6): the
 * recipient is an opted-out contact of the account (unless the message is an API.md §11.6 confirmation), or
 * the account number is no longer Active (or no longer the account's). Reason: `OPTED_OUT` or
 * `NUMBER_INACTIVE`, which becomes the message's ErrorCode.
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
