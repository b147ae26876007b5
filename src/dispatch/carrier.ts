/**
 * The carrier boundary (API.md §11.2): everything the dispatcher knows about a carrier.
 * Three things cross it: submits out, receipts in, inbound texts in. The sandbox (sandbox.ts)
 * implements it now; the SMPP 3.4 carrier of the next issue implements the same interface, and
 * the dispatcher does not change.
 */

import type { InboundText, OutboundMessage, Receipt, SubmitResult } from '../lib/carrier-types.ts';

export type { AnnouncedReceipt, InboundText, OutboundMessage, Receipt, SubmitResult } from '../lib/carrier-types.ts';

/** Where a carrier delivers what comes in. Each call resolves once it is durably recorded (ack after commit). */
export interface CarrierSink {
  receipt(receipt: Receipt): Promise<void>;
  inbound(text: InboundText): Promise<void>;
}

/** A carrier. */
export interface Carrier {
  /** For logs: `sandbox`, `smpp://host:port`, … */
  readonly name: string;
  /** Whether it can take an MMS (API.md §11.2: else an MMS ends Failed `NO_MMS_ROUTE`, refunded). */
  readonly supportsMms: boolean;
  /** How many submits may await their answer at once (SMPP's window). */
  readonly window: number;
  /**
   * False while it cannot take submits (an SMPP link that is down or not yet bound): the dispatcher
   * then claims nothing, so an outage of any length spends none of a message's attempts
   * (API.md §11.2: every queued message reaches a final state, not Failed for an outage).
   * Absent: always ready.
   */
  ready?(): boolean;
  /** Connects (binds) and starts delivering receipts and inbound texts to `sink`. */
  start(sink: CarrierSink): Promise<void>;
  /** Hands one message to the carrier. Throwing counts as a `retry` (the dispatcher backs off). */
  submit(message: OutboundMessage): Promise<SubmitResult>;
  /** Disconnects; submits already made resolve first. */
  stop(): Promise<void>;
}
