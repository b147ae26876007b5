import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';

/**
 * The index of `sms/stats` (docs/API.md §10.9): an account's messages by creation time. The stats
 * read one account's messages created in a time range and group them by bucket; without this
 * index that is a scan of every message of the account (1 M rows for a busy one) for a week's
 * chart. With it, the query reads the range alone.
 *
 * Only `(account_id, created_at)`, not a covering index with the status and credits: `created_at`
 * never changes, so the dispatcher's status changes (every message moves two or three times)
 * leave this index untouched; the rows of one range sit together in the table (they were
 * inserted in time order), so reading them from the table costs little.
 */
export function messageStatsMigration(dialect: Dialect) {
  void dialect;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.createIndex('messages_account_created_ix').on('messages').columns(['account_id', 'created_at']).execute();
    },
    down(): Promise<void> {
      return Promise.reject(new Error('msgsvc migrations are forward-only'));
    },
  };
}
