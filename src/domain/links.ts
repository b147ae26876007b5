import { isIPv4, isIPv6 } from 'node:net';
import { inTransaction, type Store } from '../store/db.ts';
import * as repo from '../store/repositories/links.ts';
import { findMessage } from '../store/repositories/message-log.ts';
import type { Clock } from '../lib/time.ts';
import { loadOr404 } from './find.ts';
import { emitEvent } from './webhooks.ts';

/**
 * Tracked links, the serving half (docs/API.md §14.4.3): following a short link (`GET /l/{code}`)
 * and reading a message's links (`sms/links?id=`). The links themselves are written when a
 * message sent with `ShortenLinks` is queued (storeLinks, src/domain/personalise.ts).
 *
 * Choices the contract leaves open, written down here:
 * - A code is exactly 7 characters of `A-Z a-z 0-9 - _` (64^7 = 2^42 codes, 42 bits drawn at
 *   random per link: unguessable, ≥ 40 bits). Anything else is no code: it is never looked up.
 * - A click is counted and recorded in ONE transaction, committed before the redirect is answered:
 *   the `link_clicks` row, `clicks` + 1 with `first_click_at` / `last_click_at`, and the
 *   `link.clicked` event (`{"MessageId","Url","Clicks"}`, `Clicks` after this click) for every
 *   active webhook of the link's account that takes it.
 * - The client's IP is stored truncated (truncateIp): IPv4 to its /24 (`203.0.113.0`), IPv6 to its
 *   /48 (`2001:db8:1::`), an IPv4-mapped IPv6 address as the IPv4 it maps; an address that cannot
 *   be read is stored as `""`. The full address is never written anywhere.
 * - The user agent is stored as sent, capped at USER_AGENT_MAX_CHARS characters, NUL characters
 *   removed (PostgreSQL text cannot hold them); none sent: `""`.
 * - Looking a link up without following it (HEAD, link-preview bots) records nothing.
 */

/** The characters of a short link's code, and its length (docs/API.md §14.4.3). */
export const LINK_CODE_PATTERN = /^[A-Za-z0-9_-]{7}$/;

/** True when `code` has the shape of a link code (7 characters of `A-Z a-z 0-9 - _`). */
export function isLinkCode(code: string): boolean {
  return LINK_CODE_PATTERN.test(code);
}

/** The longest user agent stored with a click, in characters (UTF-16 code units); longer ones are cut. */
export const USER_AGENT_MAX_CHARS = 512;

/** A user agent as stored: NUL characters removed, at most USER_AGENT_MAX_CHARS characters, `""` when none. */
export function capUserAgent(userAgent: string | undefined): string {
  if (userAgent === undefined) return '';
  let ua = userAgent.includes('\u0000') ? userAgent.replace(/\u0000/g, '') : userAgent;
  if (ua.length > USER_AGENT_MAX_CHARS) {
    ua = ua.slice(0, USER_AGENT_MAX_CHARS);
    // Never keep half of a surrogate pair.
    const last = ua.charCodeAt(ua.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) ua = ua.slice(0, -1);
  }
  return ua;
}

/** The 8 groups of an IPv6 address (a zone id dropped, an IPv4 tail read as two groups); undefined when it is none. */
function ipv6Groups(address: string): number[] | undefined {
  const zone = address.indexOf('%');
  let text = zone === -1 ? address : address.slice(0, zone);
  if (!isIPv6(text)) return undefined;
  const v4 = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = [Number(v4[2]), Number(v4[3]), Number(v4[4]), Number(v4[5])];
    text = `${v4[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const double = text.indexOf('::');
  if (double === -1) return parse(text);
  const head = parse(text.slice(0, double));
  const rest = parse(text.slice(double + 2));
  return [...head, ...new Array<number>(8 - head.length - rest.length).fill(0), ...rest];
}

/** An IPv6 address's 8 groups in the RFC 5952 text form (lower case, the longest run of two or more zero groups as `::`). */
function formatIpv6(groups: readonly number[]): string {
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (gs: readonly number[]) => gs.map((g) => g.toString(16)).join(':');
  if (best === -1) return hex(groups);
  return `${hex(groups.slice(0, best))}::${hex(groups.slice(best + bestLen))}`;
}

/**
 * The client address as a click stores it (docs/API.md §14.4.3): an IPv4 address truncated to its
 * /24 (`203.0.113.77` → `203.0.113.0`), an IPv6 address to its /48 (`2001:db8:1:2::5` →
 * `2001:db8:1::`, RFC 5952 form), an IPv4-mapped IPv6 address (`::ffff:203.0.113.77`,
 * `::ffff:cb00:714d`) as the IPv4 address it maps, truncated to /24. Anything else (absent, not an
 * IP address): `""`.
 */
export function truncateIp(address: string | undefined): string {
  if (address === undefined || address === '') return '';
  if (isIPv4(address)) {
    const o = address.split('.');
    return `${o[0]}.${o[1]}.${o[2]}.0`;
  }
  const groups = ipv6Groups(address);
  if (!groups) return '';
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.0`;
  }
  return formatIpv6([groups[0]!, groups[1]!, groups[2]!, 0, 0, 0, 0, 0]);
}

/** What following a link needs. */
export interface LinkDeps {
  store: Store;
  clock: Clock;
}

/** The client of a click, as the HTTP request shows it. */
export interface ClickClient {
  /** The peer address of the request (no proxy header is trusted). */
  ip: string | undefined;
  userAgent: string | undefined;
}

/**
 * `GET /l/{code}` (docs/API.md §14.4.3): the original URL of the link with this code, counting the
 * click when `client` is given. The click (its `link_clicks` row, the link's counters and the
 * `link.clicked` event) is committed before this resolves, so a redirect is only ever answered for
 * a recorded click. Without `client` (HEAD) the link is only looked up.
 * @param code the code from the path; a string of another shape is no link (nothing is read).
 * @returns the URL exactly as stored; undefined when no link has this code.
 */
export async function followLink(deps: LinkDeps, code: string, client: ClickClient | undefined): Promise<string | undefined> {
  if (!isLinkCode(code)) return undefined;
  if (client === undefined) return repo.findLinkUrl(deps.store.db, code);
  const now = deps.clock.nowSeconds();
  const ip = truncateIp(client.ip);
  const userAgent = capUserAgent(client.userAgent);
  return inTransaction(deps.store, async (tx) => {
    const link = await repo.countLinkClick(tx, code, now);
    if (!link) return undefined;
    const accountId = Number(link.account_id);
    await repo.insertLinkClick(tx, accountId, link.id, now, ip, userAgent);
    await emitEvent(tx, accountId, 'link.clicked', { message_id: Number(link.message_id), url: link.url, clicks: link.clicks }, now);
    return link.url;
  });
}

/**
 * `sms/links?id=` (docs/API.md §14.4.3): the links of the account's message `id`, by id ascending,
 * as a page source.
 * @throws NotFoundError `Object not found: {id}` when the id is no message of the account.
 */
export async function linksPage(store: Store, accountId: number, id: string) {
  const message = await loadOr404(id, (n) => findMessage(store.db, accountId, n));
  const total = await repo.countLinks(store.db, accountId, message.id);
  return { total, fetch: (limit: number, offset: number) => repo.listLinks(store.db, accountId, message.id, limit, offset) };
}
