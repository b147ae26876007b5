import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';

/**
 * Webhooks and their outbox (API.md §12).
 *
 * `webhooks`: one row per endpoint of an account: its `url`, the `events` it takes (a JSON array
 * of event names), `active`, and its signing `secret` (`whsec_…`). The secret has to be kept as
 * is, since every attempt is signed with it (HMAC); the API shows it only in the reply to
 * `create`, and logs never carry it.
 *
 * `webhook_deliveries`: THE OUTBOX. An event is written here, one row per subscribed webhook, in
 * the same transaction as the change that causes it (src/domain/webhooks.ts `emitEvent`), so a
 * crash loses none. `msg_id` is the `webhook-id` header, the same on every attempt. `payload`
 * holds the event's type, time and record snapshot. The delivery loop (src/webhooks/deliverer.ts)
 * claims due rows as the dispatcher claims messages: `due_at` (epoch ms) is when it is due next
 * (while claimed: the lease's end), `lease_token` the claim's token; NULL `due_at` once it is
 * Delivered or Failed, so the claim reads only a partial index of due rows.
 */
export function webhooksMigration(dialect: Dialect) {
  const idType = dialect === 'postgres' ? 'serial' : 'integer';
  const epoch = 'bigint';
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('webhooks')
        .addColumn('id', idType, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('events', 'text', (c) => c.notNull())
        .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('created_at', epoch, (c) => c.notNull())
        .addColumn('updated_at', epoch, (c) => c.notNull())
        .addUniqueConstraint('webhooks_account_id_uq', ['account_id', 'id'])
        .addCheckConstraint('webhooks_active_ck', sql`active in (0, 1)`)
        .execute();
      await db.schema.createIndex('webhooks_account_ix').on('webhooks').columns(['account_id', 'active']).execute();

      await db.schema
        .createTable('webhook_deliveries')
        .addColumn('id', idType, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('webhook_id', 'integer', (c) => c.notNull())
        .addColumn('event', 'text', (c) => c.notNull())
        .addColumn('msg_id', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull().defaultTo('Pending'))
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('last_status_code', 'integer')
        .addColumn('last_error', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('created_at', epoch, (c) => c.notNull())
        .addColumn('updated_at', epoch, (c) => c.notNull())
        .addColumn('due_at', epoch)
        .addColumn('lease_token', 'text')
        .addUniqueConstraint('webhook_deliveries_msg_id_uq', ['msg_id'])
        .addForeignKeyConstraint('webhook_deliveries_webhook_fk', ['account_id', 'webhook_id'], 'webhooks', ['account_id', 'id'], (c) =>
          c.onDelete('cascade'),
        )
        .addCheckConstraint('webhook_deliveries_status_ck', sql`status in ('Pending', 'Delivered', 'Failed')`)
        .execute();
      await db.schema.createIndex('webhook_deliveries_webhook_ix').on('webhook_deliveries').columns(['webhook_id', 'id']).execute();
      await sql`create index webhook_deliveries_due_ix on webhook_deliveries (due_at) where due_at is not null`.execute(db);
    },
    down(): Promise<void> {
      return Promise.reject(new Error('msgsvc migrations are forward-only'));
    },
  };
}
