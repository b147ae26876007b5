import { sql } from 'kysely';
import type { AccountRecordRow, UsageRow } from '../../records/accounts.ts';
import { boundCount } from '../prepared.ts';
import type { Db } from '../types.ts';

/**
 * Accounts as records (API.md §16): sub-accounts under a parent, and every account for the
 * operator. Every function takes the db (or a transaction) first. `parentId` scopes a lookup: a
 * number finds only that parent's sub-accounts; `null` only top-level accounts; `undefined` any.
 */

export type { AccountRecordRow, UsageRow } from '../../records/accounts.ts';

export type AccountScope = number | null | undefined;

function base(db: Db) {
  return db
    .selectFrom('accounts as a')
    .innerJoin('credit_balances as b', 'b.account_id', 'a.id')
    .select([
      'a.id',
      'a.name',
      'a.status',
      'a.parent_id',
      'b.available_credits',
      'a.max_per_second',
      'a.max_per_day',
      'a.created_at',
      'a.updated_at',
    ]);
}

function normalise(r: AccountRecordRow): AccountRecordRow {
  return {
    ...r,
    id: Number(r.id),
    parent_id: r.parent_id === null ? null : Number(r.parent_id),
    available_credits: Number(r.available_credits),
    max_per_second: Number(r.max_per_second),
    max_per_day: Number(r.max_per_day),
    created_at: Number(r.created_at),
    updated_at: r.updated_at === null ? null : Number(r.updated_at),
  };
}

/** The account `id` if it is in `parentId`'s scope. */
export async function findAccountRecord(db: Db, id: number, parentId: AccountScope): Promise<AccountRecordRow | undefined> {
  let q = base(db).where('a.id', '=', id);
  if (parentId === null) q = q.where('a.parent_id', 'is', null);
  else if (parentId !== undefined) q = q.where('a.parent_id', '=', parentId);
  const row = await q.executeTakeFirst();
  return row && normalise(row);
}

/** How many accounts are in `parentId`'s scope. */
export async function countAccountRecords(db: Db, parentId: AccountScope): Promise<number> {
  let q = db.selectFrom('accounts').select((eb) => eb.fn.countAll<number>().as('n'));
  if (parentId === null) q = q.where('parent_id', 'is', null);
  else if (parentId !== undefined) q = q.where('parent_id', '=', parentId);
  return Number((await q.executeTakeFirstOrThrow()).n);
}

/** The accounts in `parentId`'s scope by Id ascending. */
export async function listAccountRecords(db: Db, parentId: AccountScope, limit: number, offset: number): Promise<AccountRecordRow[]> {
  let q = base(db);
  if (parentId === null) q = q.where('a.parent_id', 'is', null);
  else if (parentId !== undefined) q = q.where('a.parent_id', '=', parentId);
  const rows = (await q.orderBy('a.id').limit(boundCount(limit)).offset(boundCount(offset)).execute()) as AccountRecordRow[];
  return rows.map(normalise);
}

/** Creates an account (a sub-account when `parentId` is a number) with a zero balance. */
export async function insertAccount(
  db: Db,
  a: { name: string; parentId: number | null; maxPerSecond: number; maxPerDay: number },
  now: number,
): Promise<number> {
  const { id } = await db
    .insertInto('accounts')
    .values({
      name: a.name,
      parent_id: a.parentId,
      max_per_second: a.maxPerSecond,
      max_per_day: a.maxPerDay,
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db.insertInto('credit_balances').values({ account_id: id, available_credits: 0, updated_at: now }).execute();
  return Number(id);
}

/** Sets the given fields of the account; DateUpdated becomes `now`. */
export async function updateAccount(
  db: Db,
  id: number,
  set: { name?: string; status?: string; maxPerSecond?: number; maxPerDay?: number; closedAt?: number },
  now: number,
): Promise<void> {
  await db
    .updateTable('accounts')
    .set({
      ...(set.name !== undefined ? { name: set.name } : {}),
      ...(set.status !== undefined ? { status: set.status } : {}),
      ...(set.maxPerSecond !== undefined ? { max_per_second: set.maxPerSecond } : {}),
      ...(set.maxPerDay !== undefined ? { max_per_day: set.maxPerDay } : {}),
      ...(set.closedAt !== undefined ? { closed_at: set.closedAt } : {}),
      updated_at: now,
    })
    .where('id', '=', id)
    .execute();
}

/**
 * Locks the balance rows of `ids` in id order (PostgreSQL `FOR UPDATE`; on SQLite the write
 * transaction already holds the database), so two transfers between the same accounts cannot
 * deadlock and each reads the balance it changes. Returns the balances by account.
 */
export async function lockBalances(db: Db, ids: readonly number[]): Promise<Map<number, number>> {
  const sorted = [...new Set(ids)].sort((a, b) => a - b);
  const out = new Map<number, number>();
  for (const id of sorted) {
    const row = await db
      .updateTable('credit_balances')
      .set((eb) => ({ updated_at: eb.ref('updated_at') }))
      .where('account_id', '=', id)
      .returning('available_credits')
      .executeTakeFirst();
    out.set(id, row ? Number(row.available_credits) : 0);
  }
  return out;
}

/** A message being rejected at closing: what its refund and its event need. */
export interface ClosedMessage {
  id: number;
  account_id: number;
  batch_id: number | null;
  credits: number;
}

/**
 * Ends the account's Queued messages that no dispatcher holds (no lease, or a lease past `nowMs`):
 * Rejected, ErrorCode `ACCOUNT_CLOSED`. A message a dispatcher is submitting now keeps its lease
 * and ends as the carrier answers.
 */
export async function rejectQueued(db: Db, accountId: number, nowMs: number): Promise<ClosedMessage[]> {
  const rows = await db
    .updateTable('messages')
    .set({ status_id: 6, error_code: 'ACCOUNT_CLOSED', due_at: null, lease_token: null })
    .where('account_id', '=', accountId)
    .where('direction', '=', 1)
    .where('status_id', '=', 1)
    .where((eb) => eb.or([eb('lease_token', 'is', null), eb('due_at', '<=', nowMs)]))
    .returning(['id', 'account_id', 'batch_id', 'credits'])
    .execute();
  return rows.map((r) => ({
    id: Number(r.id),
    account_id: Number(r.account_id),
    batch_id: r.batch_id === null ? null : Number(r.batch_id),
    credits: Number(r.credits),
  }));
}

/** Deletes every scheduled message of the account; returns each one's id and reserved credits. */
export async function deleteAllScheduled(db: Db, accountId: number): Promise<{ id: number; reserved: number }[]> {
  const rows = await db
    .deleteFrom('scheduled_messages')
    .where('account_id', '=', accountId)
    .returning(['id', 'reserved_credits'])
    .execute();
  return rows.map((r) => ({ id: Number(r.id), reserved: Number(r.reserved_credits ?? 0) }));
}

/** Revokes every live key of the account and ends every console session in it. */
export async function endCredentials(db: Db, accountId: number, now: number): Promise<void> {
  await db.updateTable('api_tokens').set({ revoked_at: now }).where('account_id', '=', accountId).where('revoked_at', 'is', null).execute();
  await db.deleteFrom('sessions').where('account_id', '=', accountId).execute();
}

/** True when `accountId` has keywords reserved on its number `digits` (they tie the number to it). */
export async function numberHasKeywords(db: Db, accountId: number, digits: string): Promise<boolean> {
  const row = await db
    .selectFrom('keyword_reservations as k')
    .innerJoin('account_numbers as n', (j) => j.onRef('n.id', '=', 'k.account_number_id').onRef('n.account_id', '=', 'k.account_id'))
    .select('k.id')
    .where('n.account_id', '=', accountId)
    .where('n.number', '=', digits)
    .limit(boundCount(1))
    .executeTakeFirst();
  return row !== undefined;
}

/** Moves the account number `digits` from `from` to `to` when `from` holds it Active; true when moved. */
export async function moveNumber(db: Db, digits: string, from: number, to: number): Promise<boolean> {
  const res = await db
    .updateTable('account_numbers')
    .set({ account_id: to })
    .where('account_id', '=', from)
    .where('number', '=', digits)
    .where('status_id', '=', 0)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/**
 * Per account in `parentId`'s scope (by Id), its outbound messages created in [from, to] (epoch
 * seconds): how many, how many Delivered, how many Failed, and the credits they cost less the
 * credits refunded (a Failed or Rejected message is refunded, API.md §10.6).
 */
export async function usage(db: Db, parentId: AccountScope, from: number, to: number, limit: number, offset: number): Promise<UsageRow[]> {
  const scope = parentId === null ? sql`a.parent_id is null` : parentId === undefined ? sql`1 = 1` : sql`a.parent_id = ${parentId}`;
  const { rows } = await sql<UsageRow>`
    select a.id as id, a.name as name,
      (select count(*) from messages m where m.account_id = a.id and m.direction = 1
         and m.created_at >= ${from} and m.created_at <= ${to}) as outbound,
      (select count(*) from messages m where m.account_id = a.id and m.direction = 1 and m.status_id = 3
         and m.created_at >= ${from} and m.created_at <= ${to}) as delivered,
      (select count(*) from messages m where m.account_id = a.id and m.direction = 1 and m.status_id = 5
         and m.created_at >= ${from} and m.created_at <= ${to}) as failed,
      (select coalesce(sum(m.credits), 0) from messages m where m.account_id = a.id and m.direction = 1
         and m.status_id not in (5, 6) and m.created_at >= ${from} and m.created_at <= ${to}) as credits
    from accounts a where ${scope} order by a.id limit ${boundCount(limit)} offset ${boundCount(offset)}`.execute(db);
  return rows.map((r) => ({
    id: Number(r.id),
    name: r.name,
    outbound: Number(r.outbound),
    delivered: Number(r.delivered),
    failed: Number(r.failed),
    credits: Number(r.credits),
  }));
}
