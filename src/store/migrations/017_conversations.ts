import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';

/**
 * `conversations` (docs/API.md §14.4.1 `sms/conversations`, `sms/mark-read`): one row per (account,
 * other party's number) the account has sent to or received from, whichever of its numbers was
 * used: the id of the thread's newest message (`last_message_id`), how many inbound messages came
 * since the thread was last marked read (`unread`), and the newest message id when it was last
 * marked read (`read_up_to_id`, 0 when never; kept for audits, never shown).
 *
 * Kept by a trigger on every INSERT into `messages`, so every writer keeps it exact: sms/send,
 * send-group's INSERT … SELECT, inbound texts, the scheduler, the demo history, `msgsvc generate`'s
 * bulk inserts and plain SQL. A page of conversations then reads one index range of this small
 * table and one message per row, whatever the size of the log (10,000 threads over 1 M messages:
 * the page costs what 50 rows cost). `sms/mark-read` writes `unread = 0` on the one row.
 *
 * `list_totals.conversations` counts the account's rows (a trigger on INSERT into conversations),
 * so X-Pagination-Total-Count costs one row read, not a count of every thread.
 *
 * Messages are never moved to another account or another number, and are deleted only with their
 * account (which deletes its conversations too, cascade), so there is no UPDATE or DELETE trigger.
 *
 * SQLite: row triggers (an UPSERT per message). PostgreSQL: statement triggers over transition
 * tables (one grouped UPSERT per statement, rows taken in key order so that two concurrent
 * statements lock the rows they share in the same order).
 */
export function conversationsMigration(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('conversations')
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('mobile_phone', 'text', (c) => c.notNull())
        .addColumn('last_message_id', 'integer', (c) => c.notNull())
        .addColumn('unread', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('read_up_to_id', 'integer', (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint('conversations_pk', ['account_id', 'mobile_phone'])
        .execute();
      // The list: newest thread first, one index range per account.
      await db.schema.createIndex('conversations_recent_ix').on('conversations').columns(['account_id', 'last_message_id']).execute();
      await db.schema
        .alterTable('list_totals')
        .addColumn('conversations', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();

      if (dialect === 'sqlite') {
        await sql`
          CREATE TRIGGER messages_conversation_insert AFTER INSERT ON messages
          BEGIN
            INSERT INTO conversations (account_id, mobile_phone, last_message_id, unread)
              VALUES (NEW.account_id, NEW.mobile_phone, NEW.id, CASE WHEN NEW.direction = 2 THEN 1 ELSE 0 END)
              ON CONFLICT (account_id, mobile_phone) DO UPDATE
                SET last_message_id = max(last_message_id, excluded.last_message_id), unread = unread + excluded.unread;
          END`.execute(db);
        await sql`
          CREATE TRIGGER conversations_total_insert AFTER INSERT ON conversations
          BEGIN
            INSERT OR IGNORE INTO list_totals (account_id) VALUES (NEW.account_id);
            UPDATE list_totals SET conversations = conversations + 1 WHERE account_id = NEW.account_id;
          END`.execute(db);
      } else {
        await sql`
          CREATE FUNCTION conversations_from_messages() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            INSERT INTO conversations AS c (account_id, mobile_phone, last_message_id, unread)
              SELECT account_id, mobile_phone, max(id), count(*) FILTER (WHERE direction = 2)
                FROM new_rows GROUP BY account_id, mobile_phone ORDER BY account_id, mobile_phone
              ON CONFLICT (account_id, mobile_phone) DO UPDATE
                SET last_message_id = GREATEST(c.last_message_id, excluded.last_message_id), unread = c.unread + excluded.unread;
            RETURN NULL;
          END
          $$`.execute(db);
        await sql`
          CREATE TRIGGER messages_conversation_insert AFTER INSERT ON messages
          REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION conversations_from_messages()`.execute(db);
        // For INSERT … ON CONFLICT DO UPDATE, the INSERT trigger's transition table holds only the rows inserted.
        await sql`
          CREATE FUNCTION list_totals_conversations() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            INSERT INTO list_totals AS t (account_id, conversations)
              SELECT account_id, count(*) FROM new_rows GROUP BY account_id ORDER BY account_id
              ON CONFLICT (account_id) DO UPDATE SET conversations = t.conversations + excluded.conversations;
            RETURN NULL;
          END
          $$`.execute(db);
        await sql`
          CREATE TRIGGER conversations_total_insert AFTER INSERT ON conversations
          REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION list_totals_conversations()`.execute(db);
      }

      // The threads of the messages that exist already (never marked read: every inbound one is unread).
      await sql`
        INSERT INTO conversations (account_id, mobile_phone, last_message_id, unread, read_up_to_id)
        SELECT account_id, mobile_phone, max(id), sum(CASE WHEN direction = 2 THEN 1 ELSE 0 END), 0
        FROM messages GROUP BY account_id, mobile_phone`.execute(db);
    },
    down(): Promise<void> {
      return Promise.reject(new Error('msgsvc migrations are forward-only'));
    },
  };
}
