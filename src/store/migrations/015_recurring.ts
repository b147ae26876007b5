import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';

/**
 * Recurring scheduled messages and the scheduled share of merge fields and tracked links (API.md
 * §10.6 `RRule`, `ShortenLinks`; API.md §11.7). New columns of `scheduled_messages`, never shown
 * but `rrule`:
 *
 * - `rrule`: the `RRule` exactly as sent, '' when the message does not recur.
 * - `rrule_start` (epoch seconds): the DateTime the rule is counted from (occurrence 1, RFC 5545's
 *   DTSTART); NULL when it does not recur. `scheduled_at` is the occurrence due next.
 * - `rrule_zone`: the IANA zone whose wall-clock time the occurrences keep (the service's zone when
 *   the rule was set), '' when it does not recur.
 * - `rrule_occurrence`: the number of the occurrence `scheduled_at` stands for (1 is `rrule_start`),
 *   for COUNT; occurrences skipped while the scheduler was down are counted too.
 * - `shorten_links`: 1 when the links of the text are to be shortened at each send.
 *
 * A recurring message that is Action Required waits with `due_at` at its occurrence (so the
 * scheduler skips to the next occurrence when it passes) instead of NULL. "Checked again when
 * credits are added" (migration 005's trigger) therefore now marks due every waiting Action Required
 * row of the account that no scheduler holds (`lease_token` NULL), whatever its `due_at`; its
 * partial index is replaced to match.
 */
export function recurringMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .alterTable('scheduled_messages')
        .addColumn('rrule', 'text', (c) => c.notNull().defaultTo(''))
        .execute();
      await db.schema.alterTable('scheduled_messages').addColumn('rrule_start', 'bigint').execute();
      await db.schema
        .alterTable('scheduled_messages')
        .addColumn('rrule_zone', 'text', (c) => c.notNull().defaultTo(''))
        .execute();
      await db.schema
        .alterTable('scheduled_messages')
        .addColumn('rrule_occurrence', 'integer', (c) => c.notNull().defaultTo(1))
        .execute();
      await db.schema
        .alterTable('scheduled_messages')
        .addColumn('shorten_links', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();

      await sql`DROP INDEX scheduled_messages_recheck_ix`.execute(db);
      await sql`CREATE INDEX scheduled_messages_recheck_ix ON scheduled_messages (account_id)
        WHERE status_id = 2 AND reserved_credits IS NOT NULL`.execute(db);

      const recheck = sql`UPDATE scheduled_messages SET due_at = 0
        WHERE account_id = NEW.account_id AND status_id = 2 AND reserved_credits IS NOT NULL
          AND lease_token IS NULL AND (due_at IS NULL OR due_at > 0)`;
      if (dialect === 'sqlite') {
        await sql`DROP TRIGGER credit_balances_recheck_scheduled`.execute(db);
        await sql`
          CREATE TRIGGER credit_balances_recheck_scheduled AFTER UPDATE OF available_credits ON credit_balances
          WHEN NEW.available_credits > OLD.available_credits
          BEGIN
            ${recheck};
          END`.execute(db);
      } else {
        await sql`
          CREATE OR REPLACE FUNCTION scheduled_messages_recheck() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            ${recheck};
            RETURN NULL;
          END
          $$`.execute(db);
      }
    },
    down(): Promise<void> {
      return Promise.reject(new Error('msgsvc migrations are forward-only'));
    },
  };
}
