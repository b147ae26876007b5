import { prepareQuery } from '../prepared.ts';
import type { Db } from '../types.ts';

/**
 * Debits and refunds of the credit balance (API.md §11.1). The debit is one
 * conditional UPDATE (`… WHERE available_credits >= cost`): under concurrent sends it is the
 * database that decides, so the balance never goes below zero on either store (SQLite serialises
 * writers; PostgreSQL re-checks the condition on the row version it waited for).
 */

const debit = prepareQuery((db, accountId: number, amount: number, now: number) =>
  db
    .updateTable('credit_balances')
    .set((eb) => ({ available_credits: eb('available_credits', '-', amount), updated_at: now }))
    .where('account_id', '=', accountId)
    .where('available_credits', '>=', amount),
);

/**
 * Takes `amount` credits (≥ 0) from the account's balance if it holds that many.
 * @returns true when debited; false (nothing changed) when the balance is below `amount`.
 */
export async function debitCredits(db: Db, accountId: number, amount: number, now: number): Promise<boolean> {
  return (await debit.run(db, accountId, amount, now)) === 1;
}

const credit = prepareQuery((db, accountId: number, amount: number, now: number) =>
  db
    .updateTable('credit_balances')
    .set((eb) => ({ available_credits: eb('available_credits', '+', amount), updated_at: now }))
    .where('account_id', '=', accountId),
);

/** Gives `amount` credits (≥ 0) back to the account (a refund on Failed or Rejected, API.md §10.6). */
export async function refundCredits(db: Db, accountId: number, amount: number, now: number): Promise<void> {
  if (amount > 0) await credit.run(db, accountId, amount, now);
}
