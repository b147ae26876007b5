import type { FastifyRequest } from 'fastify';
import { parseFormBody } from '../../../carriers/callbacks.ts';
import { verifyTwilioSignature, type TwilioParams } from '../../../carriers/twilio-signature.ts';
import { HttpError } from '../../wire.ts';
import { BAD_SIGNATURE, carrierUrl, rawBodyOf, type CarrierOf } from './common.ts';

const FORM = 'application/x-www-form-urlencoded';

/**
 * The fields of a Twilio-compatible callback (`…/status`, `…/inbound`), checked in this order
 * (docs/API.md §14.1), before anything is changed:
 * - a body that is not a form (its media type, compared without case and parameters, is not
 *   `application/x-www-form-urlencoded`; an empty body counts as an empty form): 415;
 * - a form that cannot be read (a bad %-escape, bytes that are not UTF-8, a field without a
 *   name): 400;
 * - `X-Twilio-Signature` missing or not the base64 HMAC-SHA1 of the carrier's token over
 *   `{PUBLIC_URL}/v1/carriers/{name}/{action}` and the fields sorted by name: 403.
 * The form is read from the exact bytes received (the signature covers the values as the
 * provider decoded them, src/carriers/twilio-signature.ts).
 * @throws HttpError 415, 400 or 403.
 */
export function signedTwilioForm(
  request: FastifyRequest,
  carrier: CarrierOf<'twilio'>,
  publicUrl: string,
  action: 'status' | 'inbound',
): TwilioParams {
  const body = rawBodyOf(request);
  const mediaType = body.mediaType.trim().toLowerCase();
  if (body.raw.length > 0 && mediaType !== FORM) {
    throw new HttpError(415, `Unsupported Media Type: send the body as ${FORM}.`);
  }
  const params = parseFormBody(body.raw);
  if (params === 'malformed') throw new HttpError(400, `Bad Request: the body is not a valid ${FORM} form.`);
  if (
    !verifyTwilioSignature(carrier.authToken, carrierUrl(publicUrl, carrier.name, action), params, request.headers['x-twilio-signature'])
  ) {
    throw new HttpError(403, BAD_SIGNATURE);
  }
  return params;
}
