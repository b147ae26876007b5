import { boundCount } from '../prepared.ts';
import type { Db } from '../types.ts';

/**
 * The SMPP carrier's one query (API.md §11.4): whether a pushed receipt has taken effect.
 * The carrier pushes a receipt through the dispatcher's sink (applyReceipt: Sent → Delivered or
 * Undelivered by carrier_message_id, index messages_carrier_id); when the SMSC answers faster than
 * the dispatcher commits the Sent, that update finds nothing, and the carrier holds the receipt
 * and applies it again (src/dispatch/smpp.ts).
 */

/**
 * True when a message with this carrier id exists and is no longer Sent (status_id 2): the
 * receipt, or an earlier one, has been applied. False when no message has the id yet (its Sent is
 * not committed) or it is still Sent.
 * @param carrierMessageId the SMSC's message_id (the first part's, for a long text).
 */
export async function receiptLanded(db: Db, carrierMessageId: string): Promise<boolean> {
  const row = await db
    .selectFrom('messages')
    .select('status_id')
    .where('carrier_message_id', '=', carrierMessageId)
    .where('status_id', '<>', 2)
    .limit(boundCount(1))
    .executeTakeFirst();
  return row !== undefined;
}
