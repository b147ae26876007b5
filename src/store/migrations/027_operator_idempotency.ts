import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';

/**
 * The operator's Idempotency-Key records (docs/API.md §7, §16.4): the POSTs of `/admin/v1` honour
 * the header as `/v1`'s do, with the keys scoped to the operator key that sent them (an operator
 * belongs to no account, and `idempotency_keys` rows always belong to one). The columns are those
 * of `idempotency_keys` (migration 003), owned by `operator_key_id`; the primary key decides which
 * of two racing requests runs, and removing the operator key removes its rows (ON DELETE CASCADE).
 */
export function operatorIdempotencyMigration(dialect: Dialect) {
  const epoch = 'bigint';
  void dialect;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('operator_idempotency_keys')
        .addColumn('operator_key_id', 'integer', (c) => c.notNull().references('operator_keys.id').onDelete('cascade'))
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('response_status', 'integer')
        .addColumn('response_body', 'text')
        .addColumn('response_location', 'text')
        .addColumn('created_at', epoch, (c) => c.notNull())
        .addColumn('expires_at', epoch, (c) => c.notNull())
        .addPrimaryKeyConstraint('operator_idempotency_keys_pk', ['operator_key_id', 'key'])
        .execute();
      await db.schema.createIndex('operator_idempotency_keys_expires_ix').on('operator_idempotency_keys').column('expires_at').execute();
    },
    down(): Promise<void> {
      return Promise.reject(new Error('msgsvc migrations are forward-only'));
    },
  };
}
