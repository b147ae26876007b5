import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';

/**
 * Inbound texts (API.md §11.5): a text arrives for a number, not for an account, and every
 * account that holds the number must be found (a shared short code). `account_numbers` is indexed
 * by (account_id, number) only, so this adds an index on the number alone: one index range per
 * inbound text, whatever the number of accounts.
 */
export function inboundMigration(_dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.createIndex('account_numbers_number_ix').on('account_numbers').columns(['number', 'account_id']).execute();
    },
    down(): Promise<void> {
      return Promise.reject(new Error('msgsvc migrations are forward-only'));
    },
  };
}
