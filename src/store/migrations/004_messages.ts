import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';

/**
 * The message log and its dispatch state (API.md §10.6, §11.2).
 *
 * `batches`: one row per `sms/send-group` (the Batch record). `messages`: one row per message sent
 * or received (the Message record, its columns in the record's order), plus what the dispatcher
 * needs, which the API never shows:
 * - `due_at` (epoch ms): when a dispatcher should take the message next. A Queued message is due
 *   at once (or at its retry time); a claimed one (`sending`) is due again when its lease runs
 *   out, which is how a message whose dispatcher died is retried. NULL for every other status,
 *   so the claim reads only the partial index of due messages.
 * - `lease_token`: set by the claim while the message is `sending`; the result of the carrier call
 *   is written only under the same token, so a dispatcher whose lease ran out cannot overwrite
 *   (or refund) what another did since.
 * - `attempts`: carrier attempts so far (each claim counts one).
 * - `carrier_message_id`: the carrier's id, which its receipts name (index for their lookup).
 * - `receipt_status`, `receipt_error`, `receipt_due_at` (epoch ms): a receipt the carrier announced
 *   when it accepted the message (the sandbox does), written with Sent in the same statement, so a
 *   crash cannot lose it; applied when due.
 * - `opt_out_exempt`: 1 for the three API.md §11.6 confirmations, which go to opted-out numbers.
 *
 * Ownership is in the keys as in migration 001: a message's batch is referenced by
 * (account_id, batch_id), so a message can never point at another account's batch.
 */
export function messagesMigration(dialect: Dialect) {
  const idType = dialect === 'postgres' ? 'serial' : 'integer';
  const epoch = 'bigint';
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('batches')
        .addColumn('id', idType, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        // No foreign key: the batch stays in the history when its group is deleted.
        .addColumn('group_id', 'integer', (c) => c.notNull())
        .addColumn('number', 'text', (c) => c.notNull())
        .addColumn('message', 'text', (c) => c.notNull())
        .addColumn('type_id', 'integer', (c) => c.notNull())
        .addColumn('recipients', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('skipped', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('credits', epoch, (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', epoch, (c) => c.notNull())
        .addUniqueConstraint('batches_account_id_uq', ['account_id', 'id'])
        .addCheckConstraint('batches_type_ck', sql`type_id in (1, 2)`)
        .execute();

      await db.schema
        .createTable('messages')
        .addColumn('id', idType, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        // The Message record, in its order (API.md §10.6).
        .addColumn('direction', 'integer', (c) => c.notNull())
        .addColumn('number', 'text', (c) => c.notNull())
        .addColumn('mobile_phone', 'text', (c) => c.notNull())
        .addColumn('message', 'text', (c) => c.notNull())
        .addColumn('type_id', 'integer', (c) => c.notNull())
        .addColumn('status_id', 'integer', (c) => c.notNull())
        .addColumn('segments', 'integer', (c) => c.notNull())
        .addColumn('credits', epoch, (c) => c.notNull())
        .addColumn('batch_id', 'integer')
        .addColumn('scheduled_message_id', 'integer')
        .addColumn('error_code', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('created_at', epoch, (c) => c.notNull())
        .addColumn('sent_at', epoch)
        .addColumn('delivered_at', epoch)
        // Dispatch state (API.md §11.2), never shown.
        .addColumn('opt_out_exempt', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('due_at', epoch)
        .addColumn('lease_token', 'text')
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('carrier_message_id', 'text')
        .addColumn('receipt_status', 'integer')
        .addColumn('receipt_error', 'text')
        .addColumn('receipt_due_at', epoch)
        .addUniqueConstraint('messages_account_id_uq', ['account_id', 'id'])
        .addForeignKeyConstraint('messages_batch_fk', ['account_id', 'batch_id'], 'batches', ['account_id', 'id'], (c) =>
          c.onDelete('cascade'),
        )
        .addCheckConstraint('messages_direction_ck', sql`direction in (1, 2)`)
        .addCheckConstraint('messages_type_ck', sql`type_id in (1, 2)`)
        .addCheckConstraint('messages_status_ck', sql`status_id between 1 and 7`)
        .addCheckConstraint('messages_credits_ck', sql`credits >= 0`)
        .execute();
      // The log's filters (sms/index, newest first): each reads one index range in id order.
      await db.schema.createIndex('messages_account_status_ix').on('messages').columns(['account_id', 'status_id', 'id']).execute();
      await db.schema.createIndex('messages_account_phone_ix').on('messages').columns(['account_id', 'mobile_phone', 'id']).execute();
      await db.schema.createIndex('messages_account_batch_ix').on('messages').columns(['account_id', 'batch_id', 'id']).execute();
      await db.schema.createIndex('messages_account_direction_ix').on('messages').columns(['account_id', 'direction', 'id']).execute();
      // The dispatcher: due work, due announced receipts, receipts by carrier id. Partial: final
      // messages (nearly all of a large log) are in none of the first two.
      await db.schema.createIndex('messages_due_ix').on('messages').column('due_at').where(sql.ref('due_at'), 'is not', null).execute();
      await db.schema
        .createIndex('messages_receipt_due_ix')
        .on('messages')
        .column('receipt_due_at')
        .where(sql.ref('receipt_due_at'), 'is not', null)
        .execute();
      await db.schema
        .createIndex('messages_carrier_id_ix')
        .on('messages')
        .column('carrier_message_id')
        .where(sql.ref('carrier_message_id'), 'is not', null)
        .execute();
    },
    down(): Promise<void> {
      return Promise.reject(new Error('msgsvc migrations are forward-only'));
    },
  };
}
