import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';

/**
 * `list_totals`: per account, how many scheduled messages it has, and a version that changes on
 * every insert or delete of one. Kept by triggers, so every writer (the API, the CLI, a bulk load,
 * plain SQL) keeps it exact. It lets a page of a million-row list be served without counting the
 * million rows (X-Pagination-Total-Count), and tells cached page anchors when they are stale
 * (src/store/repositories/messages.ts).
 *
 * SQLite: row triggers. PostgreSQL: statement triggers over transition tables (one upsert per
 * statement, not per row).
 */
export function listTotalsMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('list_totals')
        .addColumn('account_id', 'integer', (c) => c.primaryKey().references('accounts.id').onDelete('cascade'))
        .addColumn('scheduled_messages', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('scheduled_messages_version', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();

      if (dialect === 'sqlite') {
        await sql`
          CREATE TRIGGER scheduled_messages_total_insert AFTER INSERT ON scheduled_messages
          BEGIN
            INSERT OR IGNORE INTO list_totals (account_id) VALUES (NEW.account_id);
            UPDATE list_totals
              SET scheduled_messages = scheduled_messages + 1, scheduled_messages_version = scheduled_messages_version + 1
              WHERE account_id = NEW.account_id;
          END`.execute(db);
        await sql`
          CREATE TRIGGER scheduled_messages_total_delete AFTER DELETE ON scheduled_messages
          BEGIN
            UPDATE list_totals
              SET scheduled_messages = scheduled_messages - 1, scheduled_messages_version = scheduled_messages_version + 1
              WHERE account_id = OLD.account_id;
          END`.execute(db);
        await sql`
          CREATE TRIGGER scheduled_messages_total_move AFTER UPDATE OF account_id ON scheduled_messages
          WHEN NEW.account_id IS NOT OLD.account_id
          BEGIN
            UPDATE list_totals
              SET scheduled_messages = scheduled_messages - 1, scheduled_messages_version = scheduled_messages_version + 1
              WHERE account_id = OLD.account_id;
            INSERT OR IGNORE INTO list_totals (account_id) VALUES (NEW.account_id);
            UPDATE list_totals
              SET scheduled_messages = scheduled_messages + 1, scheduled_messages_version = scheduled_messages_version + 1
              WHERE account_id = NEW.account_id;
          END`.execute(db);
      } else {
        await sql`
          CREATE FUNCTION list_totals_scheduled_messages() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            IF TG_OP = 'DELETE' OR TG_OP = 'UPDATE' THEN
              UPDATE list_totals AS t
                SET scheduled_messages = t.scheduled_messages - d.n, scheduled_messages_version = t.scheduled_messages_version + d.n
                FROM (SELECT account_id, count(*) AS n FROM old_rows GROUP BY account_id) AS d
                WHERE t.account_id = d.account_id;
            END IF;
            IF TG_OP = 'INSERT' OR TG_OP = 'UPDATE' THEN
              INSERT INTO list_totals AS t (account_id, scheduled_messages, scheduled_messages_version)
                SELECT account_id, count(*), count(*) FROM new_rows GROUP BY account_id
                ON CONFLICT (account_id) DO UPDATE
                  SET scheduled_messages = t.scheduled_messages + excluded.scheduled_messages,
                      scheduled_messages_version = t.scheduled_messages_version + excluded.scheduled_messages_version;
            END IF;
            RETURN NULL;
          END
          $$`.execute(db);
        await sql`
          CREATE TRIGGER scheduled_messages_total_insert AFTER INSERT ON scheduled_messages
          REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION list_totals_scheduled_messages()`.execute(db);
        await sql`
          CREATE TRIGGER scheduled_messages_total_delete AFTER DELETE ON scheduled_messages
          REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION list_totals_scheduled_messages()`.execute(db);
        await sql`
          CREATE TRIGGER scheduled_messages_total_update AFTER UPDATE ON scheduled_messages
          REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION list_totals_scheduled_messages()`.execute(
          db,
        );
      }

      // Totals of the rows that exist already.
      await sql`
        INSERT INTO list_totals (account_id, scheduled_messages, scheduled_messages_version)
        SELECT account_id, count(*), count(*) FROM scheduled_messages GROUP BY account_id`.execute(db);
    },
    down(): Promise<void> {
      return Promise.reject(new Error('msgsvc migrations are forward-only'));
    },
  };
}
