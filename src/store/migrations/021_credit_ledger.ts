import { sql, type ColumnDefinitionBuilder, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';

/**
 * The credit ledger (docs/API.md §10.1.1): one row per change of an account's
 * `credit_balances.available_credits`, written in the transaction that changes it, so that at
 * every moment the sum of an account's `amount`s is its balance. A balance that existed before
 * this migration gets one opening `adjustment` entry equal to it.
 */
export function creditLedgerMigration(dialect: Dialect) {
  const idType = dialect === 'postgres' ? 'serial' : 'integer';
  const id = (c: ColumnDefinitionBuilder) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement());
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('credit_ledger')
        .addColumn('id', idType, id)
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('amount', 'bigint', (c) => c.notNull())
        .addColumn('balance', 'bigint', (c) => c.notNull())
        .addColumn('reference', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('note', 'text', (c) => c.notNull().defaultTo(''))
        .addCheckConstraint('credit_ledger_type_ck', sql`type in ('topup', 'spend', 'refund', 'transfer_in', 'transfer_out', 'adjustment')`)
        .execute();
      await db.schema.createIndex('credit_ledger_account_ix').on('credit_ledger').columns(['account_id', 'id']).execute();
      await sql`insert into credit_ledger (account_id, created_at, type, amount, balance, reference, note)
        select account_id, updated_at, 'adjustment', available_credits, available_credits, '', 'Opening balance'
        from credit_balances where available_credits <> 0 order by account_id`.execute(db);
    },
    down(): Promise<void> {
      return Promise.reject(new Error('msgsvc migrations are forward-only'));
    },
  };
}
