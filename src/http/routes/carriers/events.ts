import { androidEventAction } from '../../../carriers/android-events.ts';
import { applyCarrierReceipt } from '../../../domain/carrier-receipts.ts';
import { CARRIER_MESSAGE_ID_MAX, receiveCarrierInbound } from '../../../domain/carrier-callbacks.ts';
import { inboundDeps } from '../../../domain/inbound.ts';
import { systemClock } from '../../../lib/time.ts';
import { HttpError } from '../../wire.ts';
import { BAD_SIGNATURE, defineCarrierRoute, rawBodyOf } from './common.ts';

/** Whether `raw` is a JSON object (what every event of the app is). */
function isJsonObject(raw: Buffer): boolean {
  try {
    const value: unknown = JSON.parse(raw.toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/**
 * `POST /v1/carriers/{name}/events` (docs/API.md §14.1): an event of the Android phone carrier
 * `{name}` ("SMS Gateway for Android", which msgsvc registers this URL on at start). Checked on
 * the exact bytes received (src/carriers/android-events.ts): `X-Signature` must be the hex
 * HMAC-SHA256 of the body followed by `X-Timestamp`, keyed with the carrier's `key`, and
 * `X-Timestamp` within 5 minutes of the app's clock; else 403 and nothing changes. Then:
 * - `sms:delivered` sets Delivered, `sms:failed` Undelivered (ErrorCode the reason, at most 64
 *   characters), on this carrier's message with that id (src/domain/carrier-receipts.ts; a
 *   repeat changes nothing twice);
 * - `sms:received` runs the inbound rules (docs/API.md §11.5), From the sender's digits and To
 *   the carrier's `number`, once per event id (the app keeps the id on every retry);
 * - any other event (`sms:sent`, …), or one without what msgsvc needs, changes nothing.
 * The answer is 200 with an empty body (a non-2xx only makes the app send the event again),
 * except a signed body that is not a JSON object: 400.
 */
export const carrierEvents = defineCarrierRoute({
  action: 'events',
  kind: 'android',
  method: 'POST',
  handler: ({ store, config, clock }) => {
    const time = clock ?? systemClock;
    const deps = inboundDeps(config, store, time);
    return async (request, reply, carrier) => {
      const raw = rawBodyOf(request).raw;
      const action = androidEventAction({ signingKey: carrier.key, number: carrier.number }, raw, request.headers, time.nowSeconds());
      switch (action.kind) {
        case 'forbidden':
          throw new HttpError(403, BAD_SIGNATURE);
        case 'receipt':
          await applyCarrierReceipt(store, time, carrier.name, action.receipt);
          break;
        case 'inbound': {
          const id = action.inbound.carrierMessageId ?? '';
          if (id.length > CARRIER_MESSAGE_ID_MAX)
            throw new HttpError(400, `Bad Request: the event id is longer than ${CARRIER_MESSAGE_ID_MAX} characters.`);
          const { from, to, text } = action.inbound;
          const result = await receiveCarrierInbound(deps, carrier.name, { from, to, text, carrierMessageId: id });
          if (result.kind === 'received' && result.outcome.received.length === 0) {
            request.log.warn({ reqId: request.id, carrier: carrier.name, to }, 'inbound text dropped: no account holds the number');
          }
          break;
        }
        case 'ignore':
          if (!isJsonObject(raw)) throw new HttpError(400, 'Bad Request: the body is not a JSON object.');
          break;
      }
      reply.code(200);
      return reply.send();
    };
  },
});
