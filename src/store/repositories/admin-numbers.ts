import { boundCount } from '../prepared.ts';
import type { Db } from '../types.ts';

/**
 * The service's numbers across accounts (docs/API.md §16.4 `numbers/…`, `msgsvc numbers add`):
 * `account_numbers` rows with the account that holds each. A number may be held by several accounts
 * (a shared short code); (account, number) is unique. Every function takes the db (or a
 * transaction) first.
 */

/** One account's hold on one number. Times in epoch seconds. */
export interface ServiceNumberRow {
  id: number;
  account_id: number;
  number: string;
  status_id: number;
  blocked_at: number | null;
  created_at: number;
}

/** The filters of the operator's numbers/index. */
export interface ServiceNumberFilter {
  accountId?: number;
  number?: string;
}

const COLUMNS = ['id', 'account_id', 'number', 'status_id', 'blocked_at', 'created_at'] as const;

function normalise(r: ServiceNumberRow): ServiceNumberRow {
  return {
    id: Number(r.id),
    account_id: Number(r.account_id),
    number: r.number,
    status_id: Number(r.status_id),
    blocked_at: r.blocked_at === null ? null : Number(r.blocked_at),
    created_at: Number(r.created_at),
  };
}

function filtered(db: Db, f: ServiceNumberFilter) {
  let q = db.selectFrom('account_numbers');
  if (f.accountId !== undefined) q = q.where('account_id', '=', f.accountId);
  if (f.number !== undefined) q = q.where('number', '=', f.number);
  return q;
}

export async function countServiceNumbers(db: Db, f: ServiceNumberFilter): Promise<number> {
  const r = await filtered(db, f)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** A page of the numbers, by id (the order they were added). */
export async function listServiceNumbers(db: Db, f: ServiceNumberFilter, limit: number, offset: number): Promise<ServiceNumberRow[]> {
  const rows = await filtered(db, f).select(COLUMNS).orderBy('id').limit(boundCount(limit)).offset(boundCount(offset)).execute();
  return rows.map(normalise);
}

/** Every account's hold on the number `digits` (index account_numbers_number_ix), by account. */
export async function findHolders(db: Db, digits: string): Promise<ServiceNumberRow[]> {
  const rows = await db.selectFrom('account_numbers').select(COLUMNS).where('number', '=', digits).orderBy('account_id').execute();
  return rows.map(normalise);
}

export async function findServiceNumberById(db: Db, id: number): Promise<ServiceNumberRow | undefined> {
  const row = await db.selectFrom('account_numbers').select(COLUMNS).where('id', '=', id).executeTakeFirst();
  return row && normalise(row);
}

/** Sets the given columns of one row. */
export async function updateServiceNumber(
  db: Db,
  id: number,
  set: { accountId?: number; statusId?: number; blockedAt?: number | null },
): Promise<void> {
  await db
    .updateTable('account_numbers')
    .set({
      ...(set.accountId !== undefined ? { account_id: set.accountId } : {}),
      ...(set.statusId !== undefined ? { status_id: set.statusId } : {}),
      ...(set.blockedAt !== undefined ? { blocked_at: set.blockedAt } : {}),
    })
    .where('id', '=', id)
    .execute();
}

/** Deletes one row; its keyword reservations go with it (their foreign key cascades). */
export async function deleteServiceNumber(db: Db, id: number): Promise<void> {
  await db.deleteFrom('account_numbers').where('id', '=', id).execute();
}

/** How many keyword reservations hang on the row `numberId`. */
export async function countKeywordReservations(db: Db, numberId: number): Promise<number> {
  const r = await db
    .selectFrom('keyword_reservations')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_number_id', '=', numberId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}
