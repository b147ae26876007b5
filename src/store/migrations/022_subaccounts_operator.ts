import { sql, type ColumnDefinitionBuilder, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';

/**
 * Sub-accounts, quotas and the operator (docs/API.md §16):
 * - `accounts.parent_id`: the account a sub-account belongs to (NULL: a top-level account). A
 *   sub-account has no sub-accounts of its own (enforced by the domain rules, one level only).
 * - `accounts.status`: `active`, `suspended` or `closed`; `closed_at` when it was closed.
 * - `accounts.max_per_second`, `max_per_day`: the quotas (0: no limit of its own).
 * - `accounts.updated_at`: DateUpdated (NULL until the first change: DateCreated is shown).
 * - `account_day_counts`: messages queued per account per day of the service's time zone, counted
 *   in the transaction that queues them, so `MaxPerDay` is one primary-key read, not a count of
 *   the message log.
 * - `operator_keys`: the operator's keys (`msgsvc operators create`), only their SHA-256 hash.
 */
export function subaccountsOperatorMigration(dialect: Dialect) {
  const idType = dialect === 'postgres' ? 'serial' : 'integer';
  const id = (c: ColumnDefinitionBuilder) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement());
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .alterTable('accounts')
        .addColumn('parent_id', 'integer', (c) => c.references('accounts.id'))
        .execute();
      await db.schema
        .alterTable('accounts')
        .addColumn('status', 'text', (c) =>
          c
            .notNull()
            .defaultTo('active')
            .check(sql`status in ('active', 'suspended', 'closed')`),
        )
        .execute();
      await db.schema
        .alterTable('accounts')
        .addColumn('max_per_second', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .alterTable('accounts')
        .addColumn('max_per_day', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable('accounts').addColumn('updated_at', 'bigint').execute();
      await db.schema.alterTable('accounts').addColumn('closed_at', 'bigint').execute();
      await db.schema.createIndex('accounts_parent_ix').on('accounts').columns(['parent_id', 'id']).execute();

      await db.schema
        .createTable('account_day_counts')
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('day', 'text', (c) => c.notNull())
        .addColumn('messages', 'bigint', (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint('account_day_counts_pk', ['account_id', 'day'])
        .execute();

      await db.schema
        .createTable('operator_keys')
        .addColumn('id', idType, id)
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('prefix', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_used_at', 'bigint')
        .addColumn('revoked_at', 'bigint')
        .execute();
    },
    down(): Promise<void> {
      return Promise.reject(new Error('msgsvc migrations are forward-only'));
    },
  };
}
