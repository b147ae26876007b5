import { parseStatusCallback } from '../../../carriers/callbacks.ts';
import { applyCarrierReceipt } from '../../../domain/carrier-receipts.ts';
import { systemClock } from '../../../lib/time.ts';
import { HttpError } from '../../wire.ts';
import { defineCarrierRoute } from './common.ts';
import { signedTwilioForm } from './twilio-form.ts';

/**
 * `POST /v1/carriers/{name}/status` (docs/API.md §14.1): a Twilio-compatible provider's status
 * callback for a message it took. After the checks of signedTwilioForm (415, 400, 403):
 * `MessageSid` and `MessageStatus` are required (400 without); `delivered` sets Delivered,
 * `undelivered` and `failed` set Undelivered with ErrorCode `TWILIO_{ErrorCode}` (`UNDELIV`
 * without one), any other status changes nothing (src/carriers/callbacks.ts). The receipt is
 * applied to the message of THIS carrier with that id (src/domain/carrier-receipts.ts): a repeat
 * changes nothing twice; an id no message has (yet) is kept for a Sent commit that may still come
 * and otherwise ignored. The answer is 200 with an empty body in every one of these cases, once
 * the receipt is committed; a database failure answers 5xx, and the provider tries again.
 */
export const carrierStatus = defineCarrierRoute({
  action: 'status',
  kind: 'twilio',
  method: 'POST',
  handler: ({ store, clock, publicUrl }) => {
    const time = clock ?? systemClock;
    return async (request, reply, carrier) => {
      const params = signedTwilioForm(request, carrier, publicUrl, 'status');
      const callback = parseStatusCallback(params);
      if (callback.kind === 'malformed') throw new HttpError(400, `Bad Request: ${callback.reason}.`);
      if (callback.kind === 'receipt') await applyCarrierReceipt(store, time, carrier.name, callback.receipt);
      reply.code(200);
      return reply.send();
    };
  },
});
