import type { ColumnDefinitionBuilder, Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';

/**
 * The operator's console sessions (docs/API.md §16.4): a session signed in with an operator key.
 * Kept apart from `sessions`, whose rows always belong to an account: an operator belongs to none,
 * and a cookie found here opens `/admin/v1` only, never `/v1`. As for `sessions`, only the SHA-256
 * hash of the cookie's value is stored; revoking the operator key ends its sessions (the join on a
 * live key), and removing it removes them (ON DELETE CASCADE).
 */
export function operatorSessionsMigration(dialect: Dialect) {
  const idType = dialect === 'postgres' ? 'serial' : 'integer';
  const id = (c: ColumnDefinitionBuilder) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement());
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('operator_sessions')
        .addColumn('id', idType, id)
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('csrf_token', 'text', (c) => c.notNull())
        .addColumn('operator_key_id', 'integer', (c) => c.notNull().references('operator_keys.id').onDelete('cascade'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_used_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('operator_sessions_key_ix').on('operator_sessions').column('operator_key_id').execute();
    },
    down(): Promise<void> {
      return Promise.reject(new Error('msgsvc migrations are forward-only'));
    },
  };
}
