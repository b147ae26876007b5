/**
 * The credit ledger's invariant (docs/API.md §10.1.1): for every account, the sum of its ledger
 * entries is its AvailableCredits, and its newest entry's Balance is that balance.
 */
import assert from 'node:assert/strict';
import type { Store } from '../../src/store/db.ts';

export interface LedgerCheck {
  accountId: number;
  available: number;
  sum: number;
  newest: number | null;
}

/** For every account: its balance, the sum of its entries and its newest entry's Balance (null when none). */
export async function ledgerState(store: Pick<Store, 'db'>): Promise<LedgerCheck[]> {
  const db = store.db;
  const balances = await db.selectFrom('credit_balances').select(['account_id', 'available_credits']).orderBy('account_id').execute();
  const sums = await db
    .selectFrom('credit_ledger')
    .select((eb) => ['account_id', eb.fn.sum<number>('amount').as('sum'), eb.fn.max<number>('id').as('last')])
    .groupBy('account_id')
    .execute();
  const byAccount = new Map(sums.map((s) => [Number(s.account_id), { sum: Number(s.sum), last: Number(s.last) }]));
  const out: LedgerCheck[] = [];
  for (const b of balances) {
    const s = byAccount.get(Number(b.account_id));
    let newest: number | null = null;
    if (s) {
      const row = await db.selectFrom('credit_ledger').select('balance').where('id', '=', s.last).executeTakeFirstOrThrow();
      newest = Number(row.balance);
    }
    out.push({ accountId: Number(b.account_id), available: Number(b.available_credits), sum: s?.sum ?? 0, newest });
  }
  return out;
}

/**
 * Asserts, for every account, SUM(amount) of its ledger entries == its available_credits, and
 * (when it has entries) that the newest entry's Balance is it.
 */
export async function assertLedgerAddsUp(store: Pick<Store, 'db'>, message = ''): Promise<void> {
  for (const c of await ledgerState(store)) {
    assert.equal(c.sum, c.available, `${message} account ${c.accountId}: ledger sum ${c.sum}, balance ${c.available}`);
    if (c.newest !== null)
      assert.equal(c.newest, c.available, `${message} account ${c.accountId}: newest Balance ${c.newest}, balance ${c.available}`);
  }
}
