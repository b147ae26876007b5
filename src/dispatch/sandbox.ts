import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Carrier, OutboundMessage, SubmitResult } from './carrier.ts';

/**
 * The sandbox carrier (API.md §11.3), the default when no carrier is configured, so that a
 * new user sees a message's whole life with no carrier account: every message (SMS or MMS) is
 * Sent at once and Delivered `receiptMs` later, except three magic recipients:
 * - `+15005550001` ends Undelivered, ErrorCode `UNDELIV`;
 * - `+15005550002` is refused by the carrier: Failed, ErrorCode `ESME_RSUBMITFAIL`, refunded;
 * - `+15005550003` stays Sent: no receipt ever comes.
 *
 * The receipt is announced with the acceptance (see SubmitResult), so it is stored with Sent and
 * survives a crash of the dispatcher, as a real carrier's pending receipts survive one.
 */

/** The magic recipients (digits). */
export const SANDBOX_RECIPIENTS = Object.freeze({
  UNDELIVERED: '15005550001',
  FAILED: '15005550002',
  NO_RECEIPT: '15005550003',
});

/** ErrorCode of the recipient the sandbox refuses (an SMPP command status name, as the SMPP carrier will write). */
export const SANDBOX_FAILED_CODE = 'ESME_RSUBMITFAIL';
/** ErrorCode of the Undelivered recipient: the receipt's state. */
export const SANDBOX_UNDELIVERED_CODE = 'UNDELIV';

export interface SandboxOptions {
  /** Milliseconds from Sent to the receipt (MSGSVC_SANDBOX_RECEIPT_MS). */
  receiptMs: number;
  /** Milliseconds each submit takes (MSGSVC_SANDBOX_SUBMIT_MS; real time, to imitate latency). Default 0. */
  submitMs?: number;
  /** A file that gets `{message id} {carrier message id or -}` per submit, before it is answered (MSGSVC_SANDBOX_JOURNAL). */
  journal?: string;
  /** Called on every submit, before it is answered (tests count submits with it). */
  onSubmit?: (message: OutboundMessage) => void;
  /** Submits awaiting their answer at once. Default 100. */
  window?: number;
}

/** A sandbox carrier with a count of the submits it received. */
export interface SandboxCarrier extends Carrier {
  /** Submits received so far (retries included). */
  readonly submits: number;
}

/** Creates a sandbox carrier (see above). */
export function createSandboxCarrier(options: SandboxOptions): SandboxCarrier {
  let submits = 0;
  const submitMs = options.submitMs ?? 0;
  return {
    name: 'sandbox',
    supportsMms: true,
    window: options.window ?? 100,
    get submits() {
      return submits;
    },
    async start() {},
    async stop() {},
    async submit(message): Promise<SubmitResult> {
      if (submitMs > 0) await sleep(submitMs);
      submits++;
      options.onSubmit?.(message);
      const failed = message.to === SANDBOX_RECIPIENTS.FAILED;
      const carrierMessageId = failed ? undefined : randomUUID();
      if (options.journal) appendFileSync(options.journal, `${message.id} ${carrierMessageId ?? '-'}\n`);
      if (carrierMessageId === undefined) return { kind: 'failed', errorCode: SANDBOX_FAILED_CODE };
      if (message.to === SANDBOX_RECIPIENTS.NO_RECEIPT) return { kind: 'accepted', carrierMessageId };
      const undelivered = message.to === SANDBOX_RECIPIENTS.UNDELIVERED;
      return {
        kind: 'accepted',
        carrierMessageId,
        receipt: {
          status: undelivered ? 'undelivered' : 'delivered',
          errorCode: undelivered ? SANDBOX_UNDELIVERED_CODE : '',
          afterMs: options.receiptMs,
        },
      };
    },
  };
}
