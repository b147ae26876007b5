import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';

/**
 * Several carriers in one process (API.md §14.1).
 *
 * `messages.carrier`: the configured name of the carrier that took the message (NULL until one
 * does, and on messages sent before this migration). Two carriers may hand out the same id, so a
 * receipt names its message by (carrier, carrier_message_id): index `messages_carrier_msg_ix`
 * (partial: only messages a carrier took). The old single-column index stays for the receipts of
 * messages written before this migration (carrier NULL).
 *
 * `messages.mms_template_id`: the MMS template an outbound MMS was queued with (API.md §10.7), so that the
 * dispatcher can hand a carrier that takes MMS the template's Message and MediaIds. NULL for an SMS,
 * an inbound message, and messages queued before this migration. Not a foreign key: deleting a
 * template leaves queued messages be (they then go with their own text and no media).
 *
 * `carrier_receipts_pending`: a receipt that came before the message's Sent was committed (a
 * carrier may call back faster than the dispatcher writes). It is parked here, one row per
 * (carrier, carrier_message_id), and the dispatcher's Sent commit takes it and applies it in the
 * same transaction (src/domain/carrier-receipts.ts). `status`: 3 Delivered or 4 Undelivered;
 * `error_code` the receipt's ErrorCode ('' when none); `received_at` epoch ms (old rows may be
 * swept). It holds no account data: the account is known only once the message is found.
 */
export function carriersMigration(dialect: Dialect) {
  const epoch = 'bigint';
  void dialect;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('messages').addColumn('carrier', 'text').execute();
      await db.schema.alterTable('messages').addColumn('mms_template_id', 'integer').execute();
      await db.schema
        .createIndex('messages_carrier_msg_ix')
        .on('messages')
        .columns(['carrier', 'carrier_message_id'])
        .where(sql.ref('carrier_message_id'), 'is not', null)
        .execute();

      await db.schema
        .createTable('carrier_receipts_pending')
        .addColumn('carrier', 'text', (c) => c.notNull())
        .addColumn('carrier_message_id', 'text', (c) => c.notNull())
        .addColumn('status', 'integer', (c) => c.notNull())
        .addColumn('error_code', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('received_at', epoch, (c) => c.notNull())
        .addPrimaryKeyConstraint('carrier_receipts_pending_pk', ['carrier', 'carrier_message_id'])
        .addCheckConstraint('carrier_receipts_pending_status_ck', sql`status in (3, 4)`)
        .execute();
      await db.schema.createIndex('carrier_receipts_pending_received_ix').on('carrier_receipts_pending').column('received_at').execute();
    },
    down(): Promise<void> {
      return Promise.reject(new Error('msgsvc migrations are forward-only'));
    },
  };
}
