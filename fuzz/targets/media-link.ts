/**
 * The signed media links of a Twilio-compatible carrier (docs/API.md §14.1, src/lib/signed-link.ts):
 * issued as src/carriers/index.ts issues them (`signMediaLink` with `mediaLinkSecret(carrier)`,
 * expiring MEDIA_LINK_TTL_S after the clock's now, appended after `?` to
 * `{PUBLIC_URL}/v1/carriers/{name}/media`), and checked as `GET /v1/carriers/{name}/media` checks
 * them: the request target goes through the app's `canonicalUrl` (rewriteUrl), its raw query is
 * what follows the first `?` (the first onRequest hook), and `verifyMediaLink` reads it with the
 * route carrier's key, the clock's seconds and the route's carrier name. The link is then changed
 * once: a character edited, inserted or dropped, a parameter reordered, repeated, percent-encoded
 * or zero-padded, the signature padded or re-cased, the expiry or an id changed (the signature
 * kept), or checked under another carrier or token, or after its expiry.
 *
 * Oracle: nothing throws but signMediaLink's documented RangeError (a secret under 16 bytes, an id
 * that is not a positive safe integer, an expiry that is not a positive integer of at most 12
 * digits, since a later one makes a link no check accepts); a link it issues is exactly
 * `a={id}&m={id}&e={expiry}&s={43 base64url}`; verifyMediaLink returns the link's account and
 * medium exactly when the query is that very string, with the signature HMAC-SHA256 (base64url, no
 * padding) under the carrier's key over `msgsvc-media-v1\n{carrier}\n{a}\n{m}\n{e}` computed
 * here independently, the ids safe integers, and now ≤ expiry; else 'forbidden'. So a link verifies
 * until its expiry included and not one second after, and every change above is refused unless
 * it gives back the same string; the path's canonical form never changes the query.
 */
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { canonicalUrl } from '../../src/app.ts';
import { MEDIA_LINK_TTL_S } from '../../src/carriers/index.ts';
import { mediaLinkSecret, signMediaLink, verifyMediaLink } from '../../src/lib/signed-link.ts';
import { check, refusesOnlyWithSync, type FuzzTarget } from '../target.ts';

type Input = {
  /** The carrier's auth token and name; the route's name (usually the same). */
  token: string;
  carrier: string;
  routeCarrier: string;
  accountId: number;
  mediaId: number;
  /** When the link is issued (Unix seconds) and how long after it is fetched. */
  issuedAt: number;
  after: number;
  /** The path the provider requests (with its leading slashes and trailing slash variants). */
  path: string;
  /** The change: none, edit, insert, delete, reorder, dup, encode, zero, pad, case, expiry, id, token, extra. */
  what: string;
  at: number;
  with: string;
  /** A whole other query instead, when not empty. */
  raw: string;
};

const inputArb: fc.Arbitrary<Input> = fc.record({
  token: fc.oneof(fc.stringMatching(/^[0-9a-f]{32}$/), fc.constantFrom('tw-auth-token-0123456789abcdef', 'é', '')),
  carrier: fc.oneof(fc.constantFrom('tw', 'twilio-main'), fc.stringMatching(/^[a-z0-9_-]{1,32}$/)),
  routeCarrier: fc.constantFrom('', '', '', '', 'tw', 'tw2', 'TW'),
  accountId: fc.oneof(fc.integer({ min: 1, max: 10_000 }), fc.constantFrom(0, -1, 1.5, Number.MAX_SAFE_INTEGER, 2 ** 53, 1e16, NaN)),
  mediaId: fc.oneof(fc.integer({ min: 1, max: 1_000_000 }), fc.constantFrom(0, Number.MAX_SAFE_INTEGER, 2 ** 54 + 2, 1e21)),
  issuedAt: fc.oneof(fc.integer({ min: 1_600_000_000, max: 2_000_000_000 }), fc.constantFrom(0, 1, 999_999_999_999, 1e12, -5)),
  after: fc.oneof(
    fc.constantFrom(0, 1, MEDIA_LINK_TTL_S - 1, MEDIA_LINK_TTL_S, MEDIA_LINK_TTL_S + 1, -1, 10 * MEDIA_LINK_TTL_S),
    fc.integer({ min: -100, max: 2 * MEDIA_LINK_TTL_S }),
  ),
  path: fc.constantFrom(
    '/v1/carriers/tw/media',
    '//v1/carriers/tw/media',
    '/v1/carriers/tw/media/',
    '/msgsvc/v1/carriers/tw/media',
    '/v1/x',
  ),
  what: fc.constantFrom(
    'none',
    'none',
    'none',
    'edit',
    'insert',
    'delete',
    'reorder',
    'dup',
    'encode',
    'zero',
    'pad',
    'case',
    'expiry',
    'id',
    'token',
    'extra',
  ),
  at: fc.nat({ max: 200 }),
  with: fc.oneof(fc.constantFrom('', '0', '1', 'A', '-', '_', '=', '&', '%', '+', '/', ' ', 'é', '#', '?'), fc.string({ maxLength: 3 })),
  raw: fc.oneof(
    { weight: 12, arbitrary: fc.constant('') },
    {
      weight: 1,
      arbitrary: fc.constantFrom('a=1&m=1&e=1&s=', 'a=01&m=1&e=9999999999&s=' + 'A'.repeat(43), 'e=1&a=1&m=1&s=' + 'A'.repeat(43)),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 80 }) },
  ),
});

const QUERY = /^a=([1-9][0-9]{0,15})&m=([1-9][0-9]{0,15})&e=([1-9][0-9]{0,11})&s=([A-Za-z0-9_-]{43})$/;

/** The signature over the documented string, computed here. */
const sign = (secret: Buffer, carrier: string, a: string, m: string, e: string): string =>
  createHmac('sha256', secret).update(`msgsvc-media-v1\n${carrier}\n${a}\n${m}\n${e}`, 'utf8').digest('base64url');

/** What verifyMediaLink must answer, read from the documentation. */
function expected(secret: Buffer, query: string, now: number, carrier: string): { accountId: number; mediaId: number } | 'forbidden' {
  const parts = query.split('&');
  if (parts.length !== 4) return 'forbidden';
  const q = QUERY.exec(query);
  if (!q) return 'forbidden';
  const [, a, m, e, s] = q as unknown as [string, string, string, string, string];
  if (s !== sign(secret, carrier, a, m, e) || now > Number(e)) return 'forbidden';
  const accountId = Number(a);
  const mediaId = Number(m);
  return Number.isSafeInteger(accountId) && Number.isSafeInteger(mediaId) ? { accountId, mediaId } : 'forbidden';
}

function change(query: string, what: string, at: number, w: string): string {
  const i = Number.isFinite(at) ? Math.abs(Math.trunc(at)) % (query.length + 1) : 0;
  const parts = query.split('&');
  const k = i % parts.length;
  switch (what) {
    case 'edit':
      return query.slice(0, i) + w + query.slice(i + 1);
    case 'insert':
      return query.slice(0, i) + w + query.slice(i);
    case 'delete':
      return query.slice(0, i) + query.slice(i + 1);
    case 'reorder':
      return [...parts.slice(k), ...parts.slice(0, k)].join('&');
    case 'dup':
      return [...parts.slice(0, k + 1), parts[k]!, ...parts.slice(k + 1)].join('&');
    case 'encode': {
      const c = query[i] ?? '=';
      return query.slice(0, i) + `%${c.charCodeAt(0).toString(16).padStart(2, '0').toUpperCase()}` + query.slice(i + 1);
    }
    case 'zero':
      return parts.map((p, j) => (j === k ? p.replace('=', '=0') : p)).join('&');
    case 'pad':
      return `${query}=`;
    case 'case':
      return (
        query.slice(0, -1 - (i % 43)) +
        query.slice(-1 - (i % 43)).replace(/^[a-zA-Z]/, (c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()))
      );
    case 'expiry':
      return query.replace(/&e=([0-9]+)/, (_m, e: string) => `&e=${String(Number(e) + 1 + (i % 1000))}`);
    case 'id':
      return query.replace(/^a=([0-9]+)/, (_m, a: string) => `a=${String(Number(a) + 1)}`);
    case 'extra':
      return `${query}&${w === '' ? 'x=1' : w}`;
    default:
      return query;
  }
}

export const target: FuzzTarget<Input> = {
  name: 'media-link',
  oracle:
    'no throw but signMediaLink RangeError (short secret, bad id/expiry); a link is exactly a=&m=&e=&s=(43 base64url); verify returns the ids ⇔ ' +
    'the query is that exact string with the documented HMAC (computed here), safe ids and now ≤ expiry: valid until expiry included, ' +
    'any edit/reorder/repeat/encoding/padding/other carrier/token is refused; canonicalUrl keeps the query',
  files: ['src/lib/signed-link.ts'],
  arbitrary: inputArb,
  dictionary: ['a=', '&m=', '&e=', '&s=', '%3D', '%26', '=', '&', '0', '-', '_', '+', '/'],
  run(input) {
    const secret = refusesOnlyWithSync([RangeError], () => mediaLinkSecret({ authToken: input.token }));
    if (secret instanceof Error) {
      check(input.token === '', 'mediaLinkSecret refused a token');
      return;
    }
    const expiry = input.issuedAt + MEDIA_LINK_TTL_S;
    const link = refusesOnlyWithSync([RangeError], () =>
      signMediaLink(secret, { carrier: input.carrier, accountId: input.accountId, mediaId: input.mediaId }, expiry),
    );
    const positive = (n: number) => Number.isSafeInteger(n) && n > 0;
    // An expiry the query can carry: at most 12 digits.
    const expiryOk = positive(expiry) && expiry <= 999_999_999_999;
    if (link instanceof Error) {
      check(!positive(input.accountId) || !positive(input.mediaId) || !expiryOk, `signMediaLink refused valid arguments: ${link.message}`);
      if (input.raw === '') return;
    } else {
      check(positive(input.accountId) && positive(input.mediaId) && expiryOk, 'signMediaLink accepted a bad id or expiry');
      const a = String(input.accountId);
      const m = String(input.mediaId);
      const e = String(expiry);
      check(link === `a=${a}&m=${m}&e=${e}&s=${sign(secret, input.carrier, a, m, e)}`, `not the documented link: ${link}`);
    }
    const issued = link instanceof Error ? '' : link;

    // The provider fetches it (maybe changed), at `after` seconds past issue, under a route carrier.
    const query = input.raw !== '' ? input.raw : change(issued, input.what, input.at, input.with);
    const other = input.what === 'token' ? mediaLinkSecret({ authToken: `${input.token}x` }) : secret;
    const routeCarrier = input.routeCarrier === '' ? input.carrier : input.routeCarrier;
    const now = input.issuedAt + (Number.isFinite(input.after) ? input.after : 0);
    // A request target: a path (no ? or #, which would end it), then the query.
    const url = canonicalUrl(`${input.path.replace(/[?#]/g, '')}?${query}`);
    const q = url.indexOf('?');
    const rawQuery = q === -1 ? '' : url.slice(q + 1);
    check(rawQuery === query || query.includes('#'), `canonicalUrl changed the query: ${query} → ${rawQuery}`);

    const got = verifyMediaLink(other, rawQuery, now, routeCarrier);
    const want = expected(other, rawQuery, now, routeCarrier);
    check(
      JSON.stringify(got) === JSON.stringify(want),
      `verify ${JSON.stringify(rawQuery)} at ${now} (expiry ${expiry}) under ${routeCarrier}: ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`,
    );
    // The round trip, stated directly: the link as issued holds until its expiry, under its carrier and key.
    if (!(link instanceof Error) && input.raw === '' && input.what === 'none' && routeCarrier === input.carrier) {
      const holds = got !== 'forbidden' && got.accountId === input.accountId && got.mediaId === input.mediaId;
      check(holds === now <= expiry, `round trip at ${now - expiry} s from expiry: ${JSON.stringify(got)}`);
    }
  },
};
