import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';

/**
 * `list_totals.contacts` and `contacts_version`: per account, how many contacts it has and a
 * version that changes on every insert or delete of one, kept by triggers (as 002 keeps the
 * scheduled messages'), so that `contacts/index` without a filter answers
 * X-Pagination-Total-Count (API.md §5) without counting a million rows (a covering index scan
 * of ~23 µs per thousand contacts on SQLite, ~23 ms per request at a million), and its deep pages
 * start from cached anchors (src/store/anchors.ts) that the version invalidates.
 *
 * A contact never moves to another account (its memberships and entries reference it through
 * (account_id, contact_id)), so there is no update trigger. SQLite: row triggers. PostgreSQL:
 * statement triggers over transition tables (one upsert per statement).
 */
export function contactTotalsMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .alterTable('list_totals')
        .addColumn('contacts', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .alterTable('list_totals')
        .addColumn('contacts_version', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
      if (dialect === 'sqlite') {
        await sql`
          CREATE TRIGGER contacts_total_insert AFTER INSERT ON contacts
          BEGIN
            INSERT OR IGNORE INTO list_totals (account_id) VALUES (NEW.account_id);
            UPDATE list_totals SET contacts = contacts + 1, contacts_version = contacts_version + 1 WHERE account_id = NEW.account_id;
          END`.execute(db);
        await sql`
          CREATE TRIGGER contacts_total_delete AFTER DELETE ON contacts
          BEGIN
            UPDATE list_totals SET contacts = contacts - 1, contacts_version = contacts_version + 1 WHERE account_id = OLD.account_id;
          END`.execute(db);
      } else {
        await sql`
          CREATE FUNCTION list_totals_contacts() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            IF TG_OP = 'DELETE' THEN
              UPDATE list_totals AS t SET contacts = t.contacts - d.n, contacts_version = t.contacts_version + d.n
                FROM (SELECT account_id, count(*) AS n FROM old_rows GROUP BY account_id) AS d
                WHERE t.account_id = d.account_id;
            ELSE
              INSERT INTO list_totals AS t (account_id, contacts, contacts_version)
                SELECT account_id, count(*), count(*) FROM new_rows GROUP BY account_id
                ON CONFLICT (account_id) DO UPDATE
                  SET contacts = t.contacts + excluded.contacts, contacts_version = t.contacts_version + excluded.contacts_version;
            END IF;
            RETURN NULL;
          END
          $$`.execute(db);
        await sql`
          CREATE TRIGGER contacts_total_insert AFTER INSERT ON contacts
          REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION list_totals_contacts()`.execute(db);
        await sql`
          CREATE TRIGGER contacts_total_delete AFTER DELETE ON contacts
          REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION list_totals_contacts()`.execute(db);
      }
      // Totals of the contacts that exist already.
      await sql`INSERT INTO list_totals (account_id) SELECT DISTINCT account_id FROM contacts WHERE account_id NOT IN (SELECT account_id FROM list_totals)`.execute(
        db,
      );
      await sql`UPDATE list_totals SET contacts = (SELECT count(*) FROM contacts WHERE contacts.account_id = list_totals.account_id)`.execute(
        db,
      );
      await sql`UPDATE list_totals SET contacts_version = contacts`.execute(db);
    },
    down(): Promise<void> {
      return Promise.reject(new Error('msgsvc migrations are forward-only'));
    },
  };
}
