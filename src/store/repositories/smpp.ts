import { boundCount } from '../prepared.ts';
import type { Db } from '../types.ts';

/**
 * The SMPP carrier's one query (API.md §11.4): whether a pushed receipt has taken effect.
 * The carrier pushes a receipt through the dispatcher's sink (src/domain/carrier-receipts.ts
 * applyCarrierReceipt: Sent → Delivered or Undelivered by (carrier, carrier_message_id)); when the
 * SMSC answers faster than the dispatcher commits the Sent, the receipt is parked and applied by
 * the Sent commit, and the carrier also holds it and applies it again until this says it landed
 * (src/dispatch/smpp.ts).
 */

/**
 * True when a message with this carrier id exists and is no longer Sent (status_id 2): the
 * receipt, or an earlier one, has been applied. False when no message has the id yet (its Sent is
 * not committed) or it is still Sent.
 * @param carrierMessageId the SMSC's message_id (the first part's, for a long text).
 * @param carrier the carrier's configured name (API.md §14.1); absent: any carrier's message.
 */
export async function receiptLanded(db: Db, carrierMessageId: string, carrier?: string): Promise<boolean> {
  let query = db.selectFrom('messages').select('status_id').where('carrier_message_id', '=', carrierMessageId).where('status_id', '<>', 2);
  // A message of this carrier, or of none (written before migration 011), as the receipt's own match.
  if (carrier !== undefined) query = query.where((eb) => eb.or([eb('carrier', '=', carrier), eb('carrier', 'is', null)]));
  const row = await query.limit(boundCount(1)).executeTakeFirst();
  return row !== undefined;
}
