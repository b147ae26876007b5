import type { Db } from '../types.ts';
import type { NumberRow } from '../../domain/records.ts';

/** The account's own numbers (short codes and long numbers). */

export async function countNumbers(db: Db, accountId: number): Promise<number> {
  const row = await db
    .selectFrom('account_numbers')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** One page of numbers in id order. */
export async function listNumbers(db: Db, accountId: number, limit: number, offset: number): Promise<NumberRow[]> {
  return db
    .selectFrom('account_numbers')
    .select(['number', 'status_id', 'blocked_at'])
    .where('account_id', '=', accountId)
    .orderBy('id')
    .limit(limit)
    .offset(offset)
    .execute();
}

export async function insertNumber(
  db: Db,
  accountId: number,
  number: string,
  statusId: number,
  blockedAt: number | null,
  now: number,
): Promise<number> {
  const { id } = await db
    .insertInto('account_numbers')
    .values({ account_id: accountId, number, status_id: statusId, blocked_at: blockedAt, created_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}

/** The account's number with exactly these digits, if any. */
export async function findNumber(db: Db, accountId: number, digits: string) {
  return db
    .selectFrom('account_numbers')
    .select(['id', 'number', 'status_id'])
    .where('account_id', '=', accountId)
    .where('number', '=', digits)
    .executeTakeFirst();
}
