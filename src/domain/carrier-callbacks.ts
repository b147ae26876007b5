import { inTransaction } from '../store/db.ts';
import { claimCarrierInbound } from '../store/repositories/carrier-inbound.ts';
import { receiveInboundIn, type InboundDeps, type InboundOutcome, type InboundTextIn } from './inbound.ts';

/**
 * Inbound texts that a carrier delivers over HTTP (docs/API.md §14.1): a Twilio-compatible
 * provider's inbound callback (`MessageSid`) and an Android phone's `sms:received` event (its
 * event `id`). Providers repeat a callback whenever they did not see our answer (a timeout, a
 * dropped connection, a 5xx), so the same text may arrive several times; the inbound rules
 * (docs/API.md §11.5) must run once for it: one message stored, one confirmation or autoreply.
 *
 * How "once" is made exact, also under concurrency and crashes: the key (carrier name, the
 * carrier's id of the text) is inserted into `carrier_inbound` (migration 012) with ON CONFLICT DO
 * NOTHING at the start of the SAME transaction that writes everything §11.5 causes. So:
 * - a repeat after the commit finds the key and writes nothing;
 * - two identical callbacks at the same moment: on PostgreSQL the second INSERT waits on the
 *   primary key until the first transaction ends, then finds the key (or, had the first rolled
 *   back, takes it and runs the rules itself); on SQLite the transactions take the one write lock
 *   in turn (BEGIN IMMEDIATE);
 * - a crash, or an error, before the commit leaves neither the key nor any of the rules' writes:
 *   the provider's retry runs them, once. There is no window in which the key exists without
 *   the text (insert-first in a separate transaction would lose the text on a crash between),
 *   nor the text without the key (insert-after would run the rules twice).
 */

/** An inbound text with the carrier's own id of it. Numbers are digits. */
export interface CarrierInboundText extends InboundTextIn {
  /** `MessageSid`, or the Android event id: 1 to 255 characters. */
  readonly carrierMessageId: string;
}

/** What became of a carrier's inbound text: run now (with what §11.5 did), or a repeat that ran nothing. */
export type CarrierInboundResult = { readonly kind: 'received'; readonly outcome: InboundOutcome } | { readonly kind: 'repeat' };

/** Longest carrier id of an inbound text kept as a key (Twilio's are 34 characters; the app's event ids 21 to 36). */
export const CARRIER_MESSAGE_ID_MAX = 255;

/**
 * Runs the inbound rules (docs/API.md §11.5, src/domain/inbound.ts) on a text `carrier` delivered,
 * once per (carrier, text.carrierMessageId), in one transaction with the once-only key (see the
 * module comment). A text to a number no account holds stores nothing but its key (so its
 * repeats are answered the same way).
 * @param carrier the carrier's configured name (also the Carrier of the consent ledger entries a STOP
 *   or START writes, API.md §10.2).
 * @throws RangeError when `carrierMessageId` is empty or over CARRIER_MESSAGE_ID_MAX characters
 *   (the callers check it first); whatever the store throws (nothing was written: the caller
 *   answers 5xx and the provider tries again).
 */
export async function receiveCarrierInbound(deps: InboundDeps, carrier: string, text: CarrierInboundText): Promise<CarrierInboundResult> {
  if (text.carrierMessageId === '' || text.carrierMessageId.length > CARRIER_MESSAGE_ID_MAX) {
    throw new RangeError(`a carrier message id must be 1 to ${CARRIER_MESSAGE_ID_MAX} characters`);
  }
  return inTransaction(
    deps.store,
    async (tx): Promise<CarrierInboundResult> => {
      if (!(await claimCarrierInbound(tx, carrier, text.carrierMessageId, deps.clock.nowMs()))) return { kind: 'repeat' };
      const outcome = await receiveInboundIn(tx, deps, { from: text.from, to: text.to, text: text.text, carrier });
      return { kind: 'received', outcome };
    },
    { immediate: true },
  );
}
