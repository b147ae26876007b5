import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Twilio's request signature (`X-Twilio-Signature`) for the callbacks of a Twilio-compatible
 * carrier (docs/API.md "Carriers over HTTP": status and inbound callbacks).
 *
 * The algorithm, as Twilio's own libraries compute it (twilio-node `getExpectedTwilioSignature`,
 * twilio-python `RequestValidator.compute_signature`):
 * 1. start with the exact URL Twilio requested (scheme, host, port if any, path, query);
 * 2. take the form fields' names sorted (UTF-16 code unit order, as JavaScript's and Java's
 *    default string sort), and append each name followed by its value (decoded, not
 *    re-encoded); a name that occurs several times contributes once per DISTINCT value, its
 *    values sorted the same way;
 * 3. HMAC-SHA1 over the UTF-8 bytes of that string, keyed with the auth token's UTF-8 bytes;
 *    the header is the base64 of the digest.
 */

/** Form fields as parsed from the body: a repeated name carries all its values. */
export type TwilioParams = Readonly<Record<string, string | readonly string[]>>;

/** Default JS sort compares UTF-16 code units: the order Twilio's signers use. */
function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The string Twilio signs: URL, then name+value of every field (see the module comment). */
function signedContent(url: string, params: TwilioParams): string {
  let data = url;
  for (const name of Object.keys(params).sort(byCodeUnits)) {
    const value = params[name];
    if (typeof value === 'string') data += name + value;
    else if (Array.isArray(value)) for (const v of [...new Set(value as readonly string[])].sort(byCodeUnits)) data += name + v;
  }
  return data;
}

/**
 * The `X-Twilio-Signature` of a request: base64 of HMAC-SHA1(authToken, url + sorted fields).
 * @param authToken the account's auth token (its UTF-8 bytes are the key).
 * @param url the exact URL requested, as configured at the provider (`{PUBLIC_URL}/v1/carriers/{name}/status`).
 * @param params the decoded form fields; repeated names as arrays.
 * @throws TypeError only for arguments that are not strings/objects (a programming error).
 */
export function twilioSignature(authToken: string, url: string, params: TwilioParams): string {
  return createHmac('sha1', Buffer.from(authToken, 'utf8'))
    .update(Buffer.from(signedContent(url, params), 'utf8'))
    .digest('base64');
}

/** `url` with its port removed, or undefined when it has none (as twilio-node's `removePort`). */
function withoutPort(url: string): string | undefined {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)/i.exec(url);
  if (!m) return undefined;
  const authority = m[2]!;
  const at = authority.lastIndexOf('@');
  const hostPort = authority.slice(at + 1);
  const colon = hostPort.indexOf(':', hostPort.lastIndexOf(']') + 1);
  if (colon === -1) return undefined;
  return m[1]! + authority.slice(0, at + 1) + hostPort.slice(0, colon) + url.slice(m[0].length);
}

/** `url` with its scheme's default port added, or undefined when it already has a port. */
function withDefaultPort(url: string): string | undefined {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)/i.exec(url);
  if (!m) return undefined;
  const authority = m[2]!;
  const hostPort = authority.slice(authority.lastIndexOf('@') + 1);
  if (hostPort.indexOf(':', hostPort.lastIndexOf(']') + 1) !== -1) return undefined;
  return m[1]! + authority + (m[1]!.toLowerCase() === 'https://' ? ':443' : ':80') + url.slice(m[0].length);
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  // The length of a base64 SHA-1 digest is public (28 characters): an early exit leaks nothing.
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Whether `header` is the signature Twilio would give this request: compared in constant time
 * against the signature over the exact `url`, and also over the same URL with its port removed
 * or with the scheme's default port added (the two forms Twilio's own validator accepts, since
 * providers sign the URL as configured and proxies may add or drop a default port). Nothing else
 * of the URL is normalised.
 * Never throws: a missing or malformed header, or parameters of the wrong shape, give false.
 */
export function verifyTwilioSignature(
  authToken: string,
  url: string,
  params: TwilioParams,
  header: string | readonly string[] | undefined,
): boolean {
  try {
    if (typeof header !== 'string' || header === '' || typeof authToken !== 'string' || authToken === '' || typeof url !== 'string')
      return false;
    if (params === null || typeof params !== 'object') return false;
    let ok = false;
    // Every candidate is computed and compared (no short cut), so the time does not depend on which matched.
    for (const candidate of [url, withoutPort(url), withDefaultPort(url)]) {
      if (candidate !== undefined && sameText(header, twilioSignature(authToken, candidate, params))) ok = true;
    }
    return ok;
  } catch {
    return false;
  }
}
