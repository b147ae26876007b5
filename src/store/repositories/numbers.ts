import { boundCount, prepareQuery } from '../prepared.ts';
import { NUMBER_COLUMNS, type NumberRow } from '../../records/numbers.ts';
import type { Db } from '../types.ts';

/** The account's own numbers (short codes and long numbers). */

const count = prepareQuery((db, accountId: number) =>
  db
    .selectFrom('account_numbers')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId),
);

// An account has a handful of numbers: counting them by index is cheap, no stored total needed.
export async function countNumbers(db: Db, accountId: number): Promise<number> {
  const row = await count.first(db, accountId);
  return Number(row?.n ?? 0);
}

const page = prepareQuery((db, accountId: number, limit: number, offset: number) =>
  db
    .selectFrom('account_numbers')
    .select(NUMBER_COLUMNS)
    .where('account_id', '=', accountId)
    .orderBy('id')
    .limit(boundCount(limit))
    .offset(boundCount(offset)),
);

/** One page of numbers in id order. */
export async function listNumbers(db: Db, accountId: number, limit: number, offset: number): Promise<NumberRow[]> {
  return page.all(db, accountId, limit, offset);
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
const byDigits = prepareQuery((db, accountId: number, digits: string) =>
  db.selectFrom('account_numbers').select(['id', 'number', 'status_id']).where('account_id', '=', accountId).where('number', '=', digits),
);

export async function findNumber(db: Db, accountId: number, digits: string) {
  return byDigits.first(db, accountId, digits);
}
