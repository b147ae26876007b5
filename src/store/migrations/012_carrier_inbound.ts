import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.ts';

/**
 * Inbound texts that came over HTTP, once each (docs/API.md §14.1: a Twilio-compatible carrier's
 * inbound callback, an Android phone's `sms:received` event).
 *
 * `carrier_inbound`: one row per inbound text a carrier delivered, keyed by the carrier's
 * configured name and its own id of the text (`MessageSid`; the Android event's `id`). The row is
 * inserted in the same transaction as everything the inbound rules write for the text
 * (src/domain/carrier-callbacks.ts), so the key exists exactly when those writes do: a repeat of
 * the callback finds it and runs nothing, and a crash before the commit leaves neither behind (the
 * provider's retry then runs the rules, once). Two names may hand out the same id, hence the pair.
 * `received_at` is epoch ms, so that old keys can be swept some day (a provider repeats a
 * callback within hours, not months); nothing sweeps them today. No account data: the text
 * itself is in `messages`.
 */
export function carrierInboundMigration(dialect: Dialect) {
  void dialect;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('carrier_inbound')
        .addColumn('carrier', 'text', (c) => c.notNull())
        .addColumn('carrier_message_id', 'text', (c) => c.notNull())
        .addColumn('received_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('carrier_inbound_pk', ['carrier', 'carrier_message_id'])
        .execute();
      await db.schema.createIndex('carrier_inbound_received_ix').on('carrier_inbound').column('received_at').execute();
    },
    down(): Promise<void> {
      return Promise.reject(new Error('msgsvc migrations are forward-only'));
    },
  };
}
