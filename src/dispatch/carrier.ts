/**
 * The carrier boundary (API-EXTENSIONS §8): everything the dispatcher knows about a carrier.
 * Three things cross it: submits out, receipts in, inbound texts in. The sandbox (sandbox.ts)
 * implements it now; the SMPP 3.4 carrier of the next issue implements the same interface, and
 * the dispatcher does not change.
 */

/** A message handed to the carrier. Phone numbers are digits (E.164 without `+`, or a short code). */
export interface OutboundMessage {
  /** The log's message id (never shown to the carrier's recipient; useful for logs and journals). */
  readonly id: number;
  readonly accountId: number;
  /** The account number it goes from. */
  readonly from: string;
  /** The recipient. */
  readonly to: string;
  readonly text: string;
  /** 1 SMS, 2 MMS. */
  readonly typeId: number;
  /** Segments counted at queue time (API-EXTENSIONS §6), for carriers that split the text. */
  readonly segments: number;
  /** 1 for the first attempt; more after a retry (a crash, a lease that ran out, a throttle). */
  readonly attempt: number;
}

/** What became of a submit. */
export type SubmitResult =
  /**
   * The carrier accepted the message: it is Sent. `receipt`: a carrier that knows the outcome at
   * once (the sandbox) announces the receipt here; it is stored with Sent in the same write and
   * applied at `afterMs`, so no crash can lose it. Carriers with real receipts push them instead.
   */
  | { readonly kind: 'accepted'; readonly carrierMessageId: string; readonly receipt?: AnnouncedReceipt }
  /** A permanent refusal: the message ends Failed (refunded) with `errorCode` as its ErrorCode. */
  | { readonly kind: 'failed'; readonly errorCode: string }
  /** A temporary refusal (throttled, queue full, link down): retried after `afterMs` (default: the dispatcher's backoff). */
  | { readonly kind: 'retry'; readonly errorCode: string; readonly afterMs?: number };

/** A receipt announced at acceptance: the final status it will report and when. */
export interface AnnouncedReceipt {
  readonly status: 'delivered' | 'undelivered';
  /** The receipt's state and error, for Undelivered (`UNDELIV`); '' for Delivered. */
  readonly errorCode: string;
  /** Milliseconds after acceptance. */
  readonly afterMs: number;
}

/** A delivery receipt pushed by the carrier (SMPP deliver_sm with a receipt esm_class). */
export interface Receipt {
  /** The id the carrier gave at acceptance. */
  readonly carrierMessageId: string;
  readonly status: 'delivered' | 'undelivered';
  /** For Undelivered: the receipt's state and error (e.g. `UNDELIV`); '' for Delivered. */
  readonly errorCode: string;
}

/** An inbound text (API-EXTENSIONS §7). Numbers are digits. */
export interface InboundText {
  readonly from: string;
  /** The account number it was sent to. */
  readonly to: string;
  readonly text: string;
}

/** Where a carrier delivers what comes in. Each call resolves once it is durably recorded (ack after commit). */
export interface CarrierSink {
  receipt(receipt: Receipt): Promise<void>;
  inbound(text: InboundText): Promise<void>;
}

/** A carrier. */
export interface Carrier {
  /** For logs: `sandbox`, `smpp://host:port`, … */
  readonly name: string;
  /** Whether it can take an MMS (API-EXTENSIONS §8: else an MMS ends Failed `NO_MMS_ROUTE`, refunded). */
  readonly supportsMms: boolean;
  /** How many submits may await their answer at once (SMPP's window). */
  readonly window: number;
  /**
   * False while it cannot take submits (an SMPP link that is down or not yet bound): the dispatcher
   * then claims nothing, so an outage of any length spends none of a message's attempts
   * (API-EXTENSIONS §8: every queued message reaches a final state, not Failed for an outage).
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
