import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Signed, expiring links to a medium (docs/API.md "Carriers over HTTP": MMS media links), which
 * a provider fetches from `{PUBLIC_URL}/v1/carriers/{name}/media?{query}` without an access token.
 *
 * The query is exactly `a={accountId}&m={mediaId}&e={expiresAt}&s={signature}`: ids and the
 * expiry (Unix seconds) as plain decimal numbers, the signature the unpadded base64url of
 * HMAC-SHA256(secret, "msgsvc-media-v1\n{carrier}\n{accountId}\n{mediaId}\n{expiresAt}"). The
 * carrier's name is signed but not carried: a link works only under the carrier it was issued
 * for. Verification accepts only that exact string: no reordering, no extra or repeated
 * parameter, no percent-encoding, no leading zero, no padding; anything altered is forbidden.
 */

/** What a link names. */
export interface MediaLinkTarget {
  /** The carrier's name (the `{name}` of the route). */
  readonly carrier: string;
  readonly accountId: number;
  readonly mediaId: number;
}

const QUERY = /^a=([1-9][0-9]{0,15})&m=([1-9][0-9]{0,15})&e=([1-9][0-9]{0,11})&s=([A-Za-z0-9_-]{43})$/;

function signature(secret: string | Uint8Array, carrier: string, accountId: string, mediaId: string, expiresAt: string): string {
  return createHmac('sha256', secret)
    .update(`msgsvc-media-v1\n${carrier}\n${accountId}\n${mediaId}\n${expiresAt}`, 'utf8')
    .digest('base64url');
}

/**
 * The query string (without `?`) of a link to `target`, valid until `expiresAtSeconds` included.
 * @param secret the signing key (at least 16 bytes; the same on every instance).
 * @param expiresAtSeconds Unix seconds (an integer); the caller gives at least 24 hours from now.
 * @throws RangeError for a short secret, ids that are not positive safe integers, or an expiry that is not a positive integer of at most 12 digits.
 */
export function signMediaLink(secret: string | Uint8Array, target: MediaLinkTarget, expiresAtSeconds: number): string {
  if ((typeof secret === 'string' ? Buffer.byteLength(secret, 'utf8') : secret.length) < 16)
    throw new RangeError('media link secret must be at least 16 bytes');
  for (const [name, v] of [
    ['accountId', target.accountId],
    ['mediaId', target.mediaId],
    ['expiresAtSeconds', expiresAtSeconds],
  ] as const) {
    if (!Number.isSafeInteger(v) || v <= 0) throw new RangeError(`${name} must be a positive integer`);
  }
  // The query carries at most 12 digits of expiry (QUERY): a later one would make a link no check accepts.
  if (expiresAtSeconds > 999_999_999_999) throw new RangeError('expiresAtSeconds must have at most 12 digits');
  const a = String(target.accountId);
  const m = String(target.mediaId);
  const e = String(expiresAtSeconds);
  return `a=${a}&m=${m}&e=${e}&s=${signature(secret, target.carrier, a, m, e)}`;
}

/**
 * Checks a link's query string (the raw text after `?`, exactly as received) for `carrier`.
 * @returns the account and medium it names, or 'forbidden' when the query is not exactly one this
 *   module issues, the signature does not match (constant-time compare), or `nowSeconds` is past
 *   the expiry. Never throws.
 */
export function verifyMediaLink(
  secret: string | Uint8Array,
  query: string,
  nowSeconds: number,
  carrier: string,
): { accountId: number; mediaId: number } | 'forbidden' {
  try {
    if (typeof query !== 'string' || typeof carrier !== 'string') return 'forbidden';
    if ((typeof secret === 'string' ? Buffer.byteLength(secret, 'utf8') : secret.length) < 16) return 'forbidden';
    const q = QUERY.exec(query);
    if (!q) return 'forbidden';
    const [, a, m, e, s] = q as unknown as [string, string, string, string, string];
    const expected = Buffer.from(signature(secret, carrier, a, m, e), 'utf8');
    const given = Buffer.from(s, 'utf8');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'forbidden';
    if (!(nowSeconds <= Number(e))) return 'forbidden';
    const accountId = Number(a);
    const mediaId = Number(m);
    if (!Number.isSafeInteger(accountId) || !Number.isSafeInteger(mediaId)) return 'forbidden';
    return { accountId, mediaId };
  } catch {
    return 'forbidden';
  }
}

/** The label the media-link key is derived with (changing it voids every link issued). */
const MEDIA_LINK_KEY_LABEL = 'msgsvc media links';

/**
 * The key that signs and checks a Twilio-compatible carrier's media links: HMAC-SHA256 keyed with
 * the carrier's auth token, over the fixed label `msgsvc media links` (32 bytes). Derived, not the
 * token itself, so a link never exposes anything the token signs; and every instance, the
 * dispatcher signing `MediaUrl`s and the HTTP route checking them, computes the same key from the
 * configuration alone. Changing the token voids the links issued under the old one.
 * @param carrier a `twilio` CarrierSpec (anything with its `authToken`).
 * @throws RangeError when the token is empty (parseCarriers never gives one).
 */
export function mediaLinkSecret(carrier: { readonly authToken: string }): Buffer {
  if (typeof carrier.authToken !== 'string' || carrier.authToken === '')
    throw new RangeError('a media link secret needs the carrier auth token');
  return createHmac('sha256', Buffer.from(carrier.authToken, 'utf8')).update(MEDIA_LINK_KEY_LABEL, 'utf8').digest();
}
