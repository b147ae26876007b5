import { boundCount, prepareQuery } from '../prepared.ts';
import type { Db } from '../types.ts';

/**
 * Debits and refunds of the credit balance (API.md §11.1), and the credit ledger (API.md §10.1.1).
 * The debit is one conditional UPDATE (`… WHERE available_credits >= cost`): under concurrent
 * sends it is the database that decides, so the balance never goes below zero on either store
 * (SQLite serialises writers; PostgreSQL re-checks the condition on the row version it waited
 * for). Every change of the balance writes one ledger entry in the same transaction, with the
 * balance after it (read back by the UPDATE's RETURNING), so that the sum of an account's entries
 * is always its balance. The caller owns the transaction.
 */

/** The kinds of ledger entry (API.md §10.1.1). */
export const LEDGER_TYPES = ['topup', 'spend', 'refund', 'transfer_in', 'transfer_out', 'adjustment'] as const;
export type LedgerType = (typeof LEDGER_TYPES)[number];

const entry = prepareQuery(
  (db, accountId: number, now: number, type: string, amount: number, balance: number, reference: string, note: string) =>
    db.insertInto('credit_ledger').values({ account_id: accountId, created_at: now, type, amount, balance, reference, note }),
);

/**
 * Writes one ledger entry: `amount` (signed) was added to the account's balance, which is now
 * `balance`. For a change made here or by changeCredits, in its transaction.
 */
export async function recordLedgerEntry(
  db: Db,
  accountId: number,
  now: number,
  type: LedgerType,
  amount: number,
  balance: number,
  reference: string,
  note = '',
): Promise<void> {
  await entry.run(db, accountId, now, type, amount, balance, reference, note);
}

const debit = prepareQuery((db, accountId: number, amount: number, now: number) =>
  db
    .updateTable('credit_balances')
    .set((eb) => ({ available_credits: eb('available_credits', '-', amount), updated_at: now }))
    .where('account_id', '=', accountId)
    .where('available_credits', '>=', amount)
    .returning('available_credits'),
);

/**
 * Takes `amount` credits (≥ 0) from the account's balance if it holds that many, and writes NO
 * ledger entry: for a caller that learns the entry's reference only later (the message's id) and
 * then calls recordLedgerEntry (`spend`, `-amount`, the balance returned) in the same transaction.
 * @returns the balance after the debit; undefined (nothing changed) when the balance is below `amount`.
 */
export async function takeCredits(db: Db, accountId: number, amount: number, now: number): Promise<number | undefined> {
  const row = await debit.first(db, accountId, amount, now);
  return row ? Number(row.available_credits) : undefined;
}

/**
 * Takes `amount` credits (≥ 0) from the account's balance if it holds that many, with its
 * `spend` entry (`reference`: `batch:{Id}`, `scheduled:{Id}`, …; none for 0 credits).
 * @returns true when debited; false (nothing changed) when the balance is below `amount`.
 */
export async function debitCredits(db: Db, accountId: number, amount: number, now: number, reference: string, note = ''): Promise<boolean> {
  const balance = await takeCredits(db, accountId, amount, now);
  if (balance === undefined) return false;
  if (amount > 0) await entry.run(db, accountId, now, 'spend', -amount, balance, reference, note);
  return true;
}

const credit = prepareQuery((db, accountId: number, amount: number, now: number) =>
  db
    .updateTable('credit_balances')
    .set((eb) => ({ available_credits: eb('available_credits', '+', amount), updated_at: now }))
    .where('account_id', '=', accountId)
    .returning('available_credits'),
);

/**
 * Gives `amount` credits (≥ 0) back to the account (a refund on Failed or Rejected, API.md §10.6,
 * or a released reservation), with its `refund` entry.
 */
export async function refundCredits(db: Db, accountId: number, amount: number, now: number, reference: string, note = ''): Promise<void> {
  if (amount <= 0) return;
  const row = await credit.first(db, accountId, amount, now);
  if (!row) return;
  await entry.run(db, accountId, now, 'refund', amount, Number(row.available_credits), reference, note);
  await forwardIfClosed(db, accountId, amount, now);
}

const closedParent = prepareQuery((db, accountId: number) =>
  db
    .selectFrom('accounts')
    .select('parent_id')
    .where('id', '=', accountId)
    .where('status', '=', 'closed')
    .where('parent_id', 'is not', null),
);

/**
 * A refund that reaches a closed sub-account (its message was being handed to a carrier when it
 * was closed, API.md §16.2) goes on to the parent, as the rest of its credits did: a
 * `transfer_out` of the sub-account and a `transfer_in` of the parent, in the same transaction.
 */
async function forwardIfClosed(db: Db, accountId: number, amount: number, now: number): Promise<void> {
  const closed = await closedParent.first(db, accountId);
  if (!closed || closed.parent_id === null) return;
  const parentId = Number(closed.parent_id);
  const giver = await debit.first(db, accountId, amount, now);
  const taker = giver && (await credit.first(db, parentId, amount, now));
  if (!giver || !taker) return;
  await entry.run(db, accountId, now, 'transfer_out', -amount, Number(giver.available_credits), `account:${parentId}`, 'Account closed');
  await entry.run(db, parentId, now, 'transfer_in', amount, Number(taker.available_credits), `account:${accountId}`, 'Account closed');
}

export interface LedgerFilter {
  type?: LedgerType;
  /** Inclusive bounds on created_at (epoch seconds). */
  from?: number;
  to?: number;
}

function filtered(db: Db, accountId: number, f: LedgerFilter) {
  let q = db.selectFrom('credit_ledger').where('account_id', '=', accountId);
  if (f.type !== undefined) q = q.where('type', '=', f.type);
  if (f.from !== undefined) q = q.where('created_at', '>=', f.from);
  if (f.to !== undefined) q = q.where('created_at', '<=', f.to);
  return q;
}

export async function countLedger(db: Db, accountId: number, f: LedgerFilter): Promise<number> {
  const r = await filtered(db, accountId, f)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** A page of the account's ledger entries, newest first (Id descending). */
export async function listLedger(db: Db, accountId: number, f: LedgerFilter, limit: number, offset: number) {
  return filtered(db, accountId, f).selectAll().orderBy('id', 'desc').limit(boundCount(limit)).offset(boundCount(offset)).execute();
}
