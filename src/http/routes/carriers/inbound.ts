import { INBOUND_REPLY_BODY, INBOUND_REPLY_CONTENT_TYPE, parseInboundCallback } from '../../../carriers/callbacks.ts';
import { CARRIER_MESSAGE_ID_MAX, receiveCarrierInbound } from '../../../domain/carrier-callbacks.ts';
import { inboundDeps } from '../../../domain/inbound.ts';
import { systemClock } from '../../../lib/time.ts';
import { HttpError } from '../../wire.ts';
import { defineCarrierRoute } from './common.ts';
import { signedTwilioForm } from './twilio-form.ts';

/**
 * `POST /v1/carriers/{name}/inbound` (docs/API.md §14.1): a text sent to one of our numbers, as a
 * Twilio-compatible provider posts it. After the checks of signedTwilioForm (415, 400, 403):
 * `MessageSid`, `From` and `To` are required, the numbers as `+digits` or digits (400 otherwise);
 * `Body` may be absent (''); other fields are ignored. The text goes through the inbound rules
 * (docs/API.md §11.5) with From and To as digits, ONCE per MessageSid of this carrier
 * (src/domain/carrier-callbacks.ts: the key is written in the rules' own transaction). The
 * answer, the first time and on every repeat, is 200 `text/xml` with an empty TwiML response:
 * replies (STOP's confirmation, a keyword's autoreply) go out as messages through the dispatcher,
 * never as TwiML.
 */
export const carrierInbound = defineCarrierRoute({
  action: 'inbound',
  kind: 'twilio',
  method: 'POST',
  handler: ({ store, config, clock, publicUrl }) => {
    const deps = inboundDeps(config, store, clock ?? systemClock);
    return async (request, reply, carrier) => {
      const params = signedTwilioForm(request, carrier, publicUrl, 'inbound');
      const text = parseInboundCallback(params);
      if (text.kind === 'malformed') throw new HttpError(400, `Bad Request: ${text.reason}.`);
      if (text.messageSid.length > CARRIER_MESSAGE_ID_MAX)
        throw new HttpError(400, `Bad Request: MessageSid is longer than ${CARRIER_MESSAGE_ID_MAX} characters.`);
      const result = await receiveCarrierInbound(deps, carrier.name, {
        from: text.from,
        to: text.to,
        text: text.text,
        carrierMessageId: text.messageSid,
      });
      if (result.kind === 'received' && result.outcome.received.length === 0) {
        request.log.warn({ reqId: request.id, carrier: carrier.name, to: text.to }, 'inbound text dropped: no account holds the number');
      }
      reply.code(200);
      reply.header('Content-Type', INBOUND_REPLY_CONTENT_TYPE);
      return reply.send(INBOUND_REPLY_BODY);
    };
  },
});
