import { prepareQuery } from '../prepared.ts';
import type { Db } from '../types.ts';

/**
 * The inbound texts carriers delivered over HTTP, by (carrier, carrier_message_id) (migration 012,
 * docs/API.md §14.1): the key that makes a repeated callback run the inbound rules once.
 */

const claim = prepareQuery((db, carrier: string, carrierMessageId: string, receivedAtMs: number) =>
  db
    .insertInto('carrier_inbound')
    .values({ carrier, carrier_message_id: carrierMessageId, received_at: receivedAtMs })
    // A repeat leaves the first row alone and gets no row back.
    .onConflict((oc) => oc.columns(['carrier', 'carrier_message_id']).doNothing())
    .returning('carrier_message_id'),
);

/**
 * Records that `carrier` delivered its text `carrierMessageId`. Returns true when this call wrote
 * the key, false (writing nothing) when it was already there. Run it inside the transaction of the
 * text's own writes: on PostgreSQL a second transaction inserting the same key waits on the
 * primary key until the first ends, then gets false (first committed) or true (first rolled back);
 * on SQLite transactions take the one write lock in turn. Either way exactly one wins.
 * @param receivedAtMs epoch ms.
 */
export async function claimCarrierInbound(db: Db, carrier: string, carrierMessageId: string, receivedAtMs: number): Promise<boolean> {
  return (await claim.first(db, carrier, carrierMessageId, receivedAtMs)) !== undefined;
}
