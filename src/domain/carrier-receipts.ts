import { inTransaction, type Store } from '../store/db.ts';
import type { Db } from '../store/types.ts';
import * as repo from '../store/repositories/carrier-receipts.ts';
import { emitMessageEvents } from './webhooks.ts';
import { LOG_STATUS } from '../records/statuses.ts';
import type { Clock } from '../lib/time.ts';
import type { Receipt } from '../lib/carrier-types.ts';

/**
 * Delivery receipts from a named carrier (API.md §11.4, §14.1): an SMPP deliver_sm, a Twilio
 * status callback, an Android phone's delivered / failed event all end here.
 *
 * Rules (the same as SMPP receipts before several carriers): a receipt changes a Sent message of
 * that carrier to Delivered (DateDelivered now) or Undelivered (ErrorCode the receipt's), once: a
 * repeat, or a receipt for a message no longer Sent, changes nothing. Credits are not touched (an
 * Undelivered message was carried, so it is not refunded). The API.md §12
 * `message.delivered` / `message.undelivered` event is written in the receipt's transaction.
 *
 * A carrier may answer faster than the dispatcher commits the Sent (its callback races our
 * transaction): such a receipt is parked (`carrier_receipts_pending`) and the Sent commit applies
 * it (applyParkedReceipts, called by the dispatcher in the Sent's transaction). On PostgreSQL the
 * two transactions can still miss each other (each reads before the other commits), so the
 * dispatcher also applies, now and then, parked receipts whose message has since appeared
 * (applyMatchedParkedReceipts). A parked receipt that never finds its message is dropped after a
 * day (dropStaleParkedReceipts).
 */

/** How long a parked receipt waits for its message, ms. */
export const PARKED_RECEIPT_TTL_MS = 24 * 3600_000;

/**
 * Applies one receipt of `carrier` (its configured name).
 * @returns `applied` (the message changed and its event was written), `held` (no message of that
 *   carrier has the id yet: parked, applied by the Sent commit), or `ignored` (the message is no
 *   longer Sent: a repeat or a late receipt).
 * @throws only what the store throws (database unavailable): the caller answers its carrier with
 *   an error so that the carrier sends the receipt again.
 */
export async function applyCarrierReceipt(
  store: Store,
  clock: Clock,
  carrier: string,
  receipt: Receipt,
): Promise<'applied' | 'held' | 'ignored'> {
  const statusId = receipt.status === 'delivered' ? LOG_STATUS.DELIVERED : LOG_STATUS.UNDELIVERED;
  const nowSeconds = clock.nowSeconds();
  return inTransaction(
    store,
    async (tx) => {
      const changed = await repo.applyCarrierReceiptRow(tx, carrier, receipt.carrierMessageId, statusId, receipt.errorCode, nowSeconds);
      if (changed.length > 0) {
        await emitMessageEvents(tx, changed, nowSeconds);
        return 'applied';
      }
      if (await repo.carrierMessageKnown(tx, carrier, receipt.carrierMessageId)) return 'ignored';
      await repo.parkReceipt(tx, carrier, receipt.carrierMessageId, statusId, receipt.errorCode, clock.nowMs());
      return 'held';
    },
    { immediate: true },
  );
}

async function applyTaken(tx: Db, taken: readonly repo.ParkedReceipt[], nowSeconds: number): Promise<number> {
  const changed: repo.ChangedMessage[] = [];
  for (const r of taken)
    changed.push(...(await repo.applyCarrierReceiptRow(tx, r.carrier, r.carrierMessageId, r.statusId, r.errorCode, nowSeconds)));
  await emitMessageEvents(tx, changed, nowSeconds);
  return changed.length;
}

/**
 * In the transaction that commits these messages Sent (with their carrier and carrier id): takes
 * and applies the receipts parked for them, with their events. Returns how many messages changed.
 * One statement when none is parked (the usual case).
 */
export async function applyParkedReceipts(tx: Db, messageIds: readonly number[], nowSeconds: number): Promise<number> {
  const taken = await repo.takeParkedReceipts(tx, messageIds);
  return taken.length === 0 ? 0 : applyTaken(tx, taken, nowSeconds);
}

/**
 * Applies up to `limit` parked receipts whose message has appeared since (see the module comment),
 * and drops those older than PARKED_RECEIPT_TTL_MS. A read first: nothing is written when nothing
 * is parked. Returns how many messages changed.
 */
export async function applyMatchedParkedReceipts(store: Store, clock: Clock, limit: number): Promise<number> {
  if (!(await repo.hasParkedReceipts(store.db))) return 0;
  return inTransaction(
    store,
    async (tx) => {
      const applied = await applyTaken(tx, await repo.takeMatchedParkedReceipts(tx, limit), clock.nowSeconds());
      await repo.dropStaleParkedReceipts(tx, clock.nowMs() - PARKED_RECEIPT_TTL_MS);
      return applied;
    },
    { immediate: true },
  );
}
