/**
 * The plain data that crosses the carrier boundary (API.md §11.2, §14.1): submits out, receipts
 * and inbound texts in. Here, below domain/, so that the domain's receipt and inbound rules
 * (src/domain/carrier-receipts.ts) can name them; src/dispatch/carrier.ts re-exports them with
 * the Carrier interface itself.
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
  /** Segments counted at queue time (API.md §11.1), for carriers that split the text. */
  readonly segments: number;
  /** 1 for the first attempt; more after a retry (a crash, a lease that ran out, a throttle). */
  readonly attempt: number;
  /**
   * An MMS's media, in its template's `MediaIds` order (`text` is then the template's Message).
   * Absent for an SMS, and for carriers that do not send media.
   */
  readonly mediaIds?: readonly number[];
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

/** An inbound text (API.md §11.5). Numbers are digits. */
export interface InboundText {
  readonly from: string;
  /** The account number it was sent to. */
  readonly to: string;
  readonly text: string;
  /**
   * The carrier's own id of the inbound message, when it has one (a Twilio `MessageSid`): a
   * repeat of the same id must run the inbound rules (docs/API.md §11.5) once.
   */
  readonly carrierMessageId?: string;
}
