import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';

/**
 * Fair dispatch (docs/API.md §16.3): the dispatcher takes turns between the accounts that have
 * messages due, walking them in account order and reading each one's oldest-due messages. This
 * index serves both seeks (the next account with a due message; that account's first due rows)
 * without ever scanning one account's backlog. `messages_due_ix` stays for the metrics.
 */
export function fairDispatchMigration(dialect: Dialect) {
  void dialect;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await sql`CREATE INDEX IF NOT EXISTS messages_account_due_ix ON messages (account_id, due_at, id) WHERE due_at IS NOT NULL`.execute(
        db,
      );
    },
    down(): Promise<void> {
      return Promise.reject(new Error('msgsvc migrations are forward-only'));
    },
  };
}
