import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';

/**
 * Scheduled messages that live (API.md §11.7): what the scheduler
 * (src/dispatch/scheduler.ts) needs on `scheduled_messages`, which the API never shows.
 *
 * - `number`: digits of the account number the message goes from ('' on rows written before this
 *   migration or by the demo and generator).
 * - `reserved_credits`: credits debited for the message while it is 3 Approved and Scheduled; 0
 *   while Pending or Action Required. NULL marks a row the service never managed (written before
 *   this migration, or directly by `msgsvc demo` / `msgsvc generate`): the scheduler neither checks
 *   nor sends it, and an `update-scheduled` makes it managed (Pending).
 * - `due_at` (epoch ms): when the scheduler takes the row next. Pending: now (a check is due);
 *   Approved: its DateTime (it is sent then); claimed: the end of the lease (a scheduler that dies
 *   leaves it due again then); Action Required: NULL until credits are added (see the trigger).
 * - `lease_token`: the claim that holds the row; outcomes are written only under it.
 * - `check_reason`: why it is Action Required (`NUMBER_INACTIVE`, `OPTED_OUT`, `NO_CREDITS`), ''
 *   otherwise. For logs and tests, never shown.
 *
 * "Checked again when credits are added" is a trigger on `credit_balances`: any update that raises
 * `available_credits` (CLI `credits add/set`, a refund, a released reservation, plain SQL) marks the
 * account's managed Action Required rows due (`due_at = 0`), so the scheduler re-checks them within
 * its poll interval, whoever changed the balance. A debit (a send) fires nothing.
 *
 * PostgreSQL: migration 002's statement-level UPDATE trigger counted every updated row as a delete
 * plus an insert in `list_totals` (taking that row's lock and bumping the list version). Scheduled
 * rows are now updated often (checks, leases), so it is replaced by a row trigger that fires only
 * when `account_id` really changes (what it was for); SQLite's 002 trigger already fires only then.
 */
export function scheduledMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .alterTable('scheduled_messages')
        .addColumn('number', 'text', (c) => c.notNull().defaultTo(''))
        .execute();
      await db.schema.alterTable('scheduled_messages').addColumn('reserved_credits', 'bigint').execute();
      await db.schema.alterTable('scheduled_messages').addColumn('due_at', 'bigint').execute();
      await db.schema.alterTable('scheduled_messages').addColumn('lease_token', 'text').execute();
      await db.schema
        .alterTable('scheduled_messages')
        .addColumn('check_reason', 'text', (c) => c.notNull().defaultTo(''))
        .execute();
      // The scheduler's claim reads only rows with work due; the re-check trigger only the
      // account's waiting Action Required rows.
      await db.schema
        .createIndex('scheduled_messages_due_ix')
        .on('scheduled_messages')
        .column('due_at')
        .where(sql.ref('due_at'), 'is not', null)
        .execute();
      await sql`CREATE INDEX scheduled_messages_recheck_ix ON scheduled_messages (account_id)
        WHERE status_id = 2 AND due_at IS NULL AND reserved_credits IS NOT NULL`.execute(db);

      if (dialect === 'sqlite') {
        await sql`
          CREATE TRIGGER credit_balances_recheck_scheduled AFTER UPDATE OF available_credits ON credit_balances
          WHEN NEW.available_credits > OLD.available_credits
          BEGIN
            UPDATE scheduled_messages SET due_at = 0
              WHERE account_id = NEW.account_id AND status_id = 2 AND due_at IS NULL AND reserved_credits IS NOT NULL;
          END`.execute(db);
      } else {
        await sql`
          CREATE FUNCTION scheduled_messages_recheck() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            UPDATE scheduled_messages SET due_at = 0
              WHERE account_id = NEW.account_id AND status_id = 2 AND due_at IS NULL AND reserved_credits IS NOT NULL;
            RETURN NULL;
          END
          $$`.execute(db);
        await sql`
          CREATE TRIGGER credit_balances_recheck_scheduled AFTER UPDATE OF available_credits ON credit_balances
          FOR EACH ROW WHEN (NEW.available_credits > OLD.available_credits) EXECUTE FUNCTION scheduled_messages_recheck()`.execute(db);

        await sql`DROP TRIGGER scheduled_messages_total_update ON scheduled_messages`.execute(db);
        await sql`
          CREATE FUNCTION list_totals_scheduled_messages_move() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            UPDATE list_totals
              SET scheduled_messages = scheduled_messages - 1, scheduled_messages_version = scheduled_messages_version + 1
              WHERE account_id = OLD.account_id;
            INSERT INTO list_totals AS t (account_id, scheduled_messages, scheduled_messages_version) VALUES (NEW.account_id, 1, 1)
              ON CONFLICT (account_id) DO UPDATE
                SET scheduled_messages = t.scheduled_messages + 1, scheduled_messages_version = t.scheduled_messages_version + 1;
            RETURN NULL;
          END
          $$`.execute(db);
        await sql`
          CREATE TRIGGER scheduled_messages_total_move AFTER UPDATE OF account_id ON scheduled_messages
          FOR EACH ROW WHEN (OLD.account_id IS DISTINCT FROM NEW.account_id) EXECUTE FUNCTION list_totals_scheduled_messages_move()`.execute(
          db,
        );
      }
    },
    down(): Promise<void> {
      return Promise.reject(new Error('msgsvc migrations are forward-only'));
    },
  };
}
