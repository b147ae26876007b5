import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';

/**
 * The account's resources over the API (API.md §1.4, §10.2, §10.3, §10.4, §10.5):
 * - keyword reservations carry their number's digits, and a keyword is unique on a number across
 *   ALL accounts (a shared short code routes an inbound text by its keyword, API.md §10.5), by a unique index
 *   on (number, keyword_key);
 * - custom field names are unique per account compared case-insensitively (API.md §10.4), by a unique index
 *   on a case-folded key that the application computes (NFKC, trimmed, lower case);
 * - Idempotency-Key records (API.md §7): one row per account and key, kept 24 hours.
 */
export function extensionsMigration(dialect: Dialect) {
  const epoch = 'bigint';
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .alterTable('keyword_reservations')
        .addColumn('number', 'text', (c) => c.notNull().defaultTo(''))
        .execute();
      await sql`UPDATE keyword_reservations SET number = (SELECT n.number FROM account_numbers n WHERE n.id = keyword_reservations.account_number_id)`.execute(
        db,
      );
      await db.schema
        .createIndex('keyword_reservations_global_keyword_uq')
        .on('keyword_reservations')
        .columns(['number', 'keyword_key'])
        .unique()
        .execute();
      await db.schema.createIndex('keyword_reservations_account_ix').on('keyword_reservations').columns(['account_id', 'id']).execute();

      await db.schema
        .alterTable('custom_fields')
        .addColumn('name_key', 'text', (c) => c.notNull().defaultTo(''))
        .execute();
      await sql`UPDATE custom_fields SET name_key = lower(trim(name))`.execute(db);
      await db.schema
        .createIndex('custom_fields_account_name_uq')
        .on('custom_fields')
        .columns(['account_id', 'name_key'])
        .unique()
        .execute();

      await db.schema.createIndex('custom_field_entries_account_ix').on('custom_field_entries').columns(['account_id', 'id']).execute();
      await db.schema.createIndex('groups_parent_ix').on('groups').columns(['account_id', 'parent_id']).execute();
      await db.schema.createIndex('groups_keyword_ix').on('groups').columns(['account_id', 'keyword_id']).execute();
      await db.schema.createIndex('contacts_opted_out_ix').on('contacts').columns(['account_id', 'opted_out', 'id']).execute();

      await db.schema
        .createTable('idempotency_keys')
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('key', 'text', (c) => c.notNull())
        /** SHA-256 of method, path, query less access_token, and body. */
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        /** null while the first request runs; its status once it finished below 500. */
        .addColumn('response_status', 'integer')
        .addColumn('response_body', 'text')
        .addColumn('response_location', 'text')
        .addColumn('created_at', epoch, (c) => c.notNull())
        .addColumn('expires_at', epoch, (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_keys_pk', ['account_id', 'key'])
        .execute();
      await db.schema.createIndex('idempotency_keys_expires_ix').on('idempotency_keys').column('expires_at').execute();
      void dialect;
    },
    down(): Promise<void> {
      return Promise.reject(new Error('msgsvc migrations are forward-only'));
    },
  };
}
