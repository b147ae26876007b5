import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';

/**
 * Sender pools (docs/API.md §17):
 * - `account_numbers.max_per_second`, `max_per_day`, `max_recipients_per_month`: a number's
 *   limits (0: none).
 * - `account_settings.sender_selection`: `first` (the first Active number, as before) or `pool`.
 * - `messages.priority` (and `scheduled_messages.priority`, what its occurrences are queued with): 0, or 1 for the lane that goes to the carrier before every Queued 0. The
 *   partial index holds only Priority 1 messages still due: the dispatcher's first look each round
 *   is an empty index probe while no one uses the lane.
 * - `number_day_counts`: messages queued per (account, number, day of the service's time zone),
 *   and `number_month_recipients`: the distinct recipients per (account, number, calendar month).
 *   Both are kept only for a number with the matching limit (set, they are filled from the message
 *   log in the same transaction), so a number without limits costs a send nothing more.
 */
export function senderPoolsMigration(dialect: Dialect) {
  void dialect;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      for (const column of ['max_per_second', 'max_per_day', 'max_recipients_per_month']) {
        await db.schema
          .alterTable('account_numbers')
          .addColumn(column, 'integer', (c) => c.notNull().defaultTo(0))
          .execute();
      }
      await db.schema
        .alterTable('account_settings')
        .addColumn('sender_selection', 'text', (c) =>
          c
            .notNull()
            .defaultTo('first')
            .check(sql`sender_selection in ('first', 'pool')`),
        )
        .execute();
      await db.schema
        .alterTable('messages')
        .addColumn('priority', 'smallint', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .alterTable('scheduled_messages')
        .addColumn('priority', 'smallint', (c) => c.notNull().defaultTo(0))
        .execute();
      await sql`CREATE INDEX IF NOT EXISTS messages_priority_due_ix ON messages (account_id, due_at, id) WHERE due_at IS NOT NULL AND priority = 1`.execute(
        db,
      );
      await db.schema
        .createTable('number_day_counts')
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('number', 'text', (c) => c.notNull())
        .addColumn('day', 'text', (c) => c.notNull())
        .addColumn('messages', 'bigint', (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint('number_day_counts_pk', ['account_id', 'number', 'day'])
        .execute();
      await db.schema
        .createTable('number_month_recipients')
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('number', 'text', (c) => c.notNull())
        .addColumn('month', 'text', (c) => c.notNull())
        .addColumn('mobile_phone', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('number_month_recipients_pk', ['account_id', 'number', 'month', 'mobile_phone'])
        .execute();
    },
    down(): Promise<void> {
      return Promise.reject(new Error('msgsvc migrations are forward-only'));
    },
  };
}
