import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';

/**
 * Tracked links (docs/API.md §14.4.3).
 *
 * `message_links`: one row per (message, URL) of a message sent with `ShortenLinks`, written in
 * the transaction that queues the message. `code` is the 7 characters of `A-Z a-z 0-9 - _` in the
 * short link (64^7, 42 bits of randomness), unique over the whole service because `GET /l/{code}`
 * carries no account. `clicks`, `first_click_at` and `last_click_at` are kept by the redirect in
 * the transaction that records the click, so `sms/links` reads one row per link.
 *
 * `link_clicks`: one row per click: the time, the client's IP truncated before it is stored (/24
 * for IPv4, /48 for IPv6) and its user agent. Rows go with their link, and links with their
 * message's account.
 */
export function linksMigration(dialect: Dialect) {
  const idType = dialect === 'postgres' ? 'serial' : 'integer';
  const epoch = 'bigint';
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('message_links')
        .addColumn('id', idType, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('message_id', 'integer', (c) => c.notNull())
        .addColumn('code', 'text', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('clicks', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('first_click_at', epoch)
        .addColumn('last_click_at', epoch)
        .addColumn('created_at', epoch, (c) => c.notNull())
        .addUniqueConstraint('message_links_code_uq', ['code'])
        .addUniqueConstraint('message_links_account_id_uq', ['account_id', 'id'])
        .addForeignKeyConstraint('message_links_message_fk', ['account_id', 'message_id'], 'messages', ['account_id', 'id'], (c) =>
          c.onDelete('cascade'),
        )
        .addCheckConstraint('message_links_code_ck', sql`length(code) = 7`)
        .execute();
      await db.schema.createIndex('message_links_message_ix').on('message_links').columns(['account_id', 'message_id', 'id']).execute();

      await db.schema
        .createTable('link_clicks')
        .addColumn('id', idType, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('link_id', 'integer', (c) => c.notNull())
        .addColumn('clicked_at', epoch, (c) => c.notNull())
        .addColumn('ip', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('user_agent', 'text', (c) => c.notNull().defaultTo(''))
        .addForeignKeyConstraint('link_clicks_link_fk', ['account_id', 'link_id'], 'message_links', ['account_id', 'id'], (c) =>
          c.onDelete('cascade'),
        )
        .execute();
      await db.schema.createIndex('link_clicks_link_ix').on('link_clicks').columns(['link_id', 'id']).execute();
    },
    down(): Promise<void> {
      return Promise.reject(new Error('msgsvc migrations are forward-only'));
    },
  };
}
