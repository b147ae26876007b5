import { viewMedia } from '../../../domain/media.ts';
import { mediaLinkSecret, verifyMediaLink } from '../../../lib/signed-link.ts';
import { systemClock } from '../../../lib/time.ts';
import { HttpError } from '../../wire.ts';
import { mediaBytesReply } from '../media/download.ts';
import { defineCarrierRoute } from './common.ts';

/** The 403 of a media link that was altered, is not one we issue, or has expired. */
export const BAD_MEDIA_LINK = 'This media link is invalid or has expired.';

/**
 * `GET /v1/carriers/{name}/media?a=…&m=…&e=…&s=…` (and HEAD; docs/API.md §14.1): a medium of an
 * MMS, fetched by the Twilio-compatible provider that was given the link as a `MediaUrl`. No
 * access token: the query itself is the permission. It must be exactly the string msgsvc issued
 * for this carrier (src/lib/signed-link.ts: account, medium and expiry signed with
 * mediaLinkSecret(carrier), the key derived from the carrier's auth token) and not past its
 * expiry (the app's clock, in whole seconds); anything else is 403 and no byte is sent. A valid
 * link to a medium deleted since is 404 `Object not found: {id}`. The bytes are served as
 * media/download serves them: the medium's Content-Type and Content-Length, one `Range` (206,
 * 416), HEAD without a body.
 */
export const carrierMedia = defineCarrierRoute({
  action: 'media',
  kind: 'twilio',
  method: 'GET',
  handler: ({ store, config, clock }) => {
    const time = clock ?? systemClock;
    // One key per carrier, derived once.
    const secrets = new Map(config.carriers.flatMap((c) => (c.kind === 'twilio' ? [[c.name, mediaLinkSecret(c)] as const] : [])));
    return async (request, reply, carrier) => {
      const secret = secrets.get(carrier.name);
      const link = secret === undefined ? 'forbidden' : verifyMediaLink(secret, request.rawQuery, time.nowSeconds(), carrier.name);
      if (link === 'forbidden') throw new HttpError(403, BAD_MEDIA_LINK);
      const row = await viewMedia(store, link.accountId, String(link.mediaId));
      return mediaBytesReply(store, request, reply, link.accountId, row);
    };
  },
});
