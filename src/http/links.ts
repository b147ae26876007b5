import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { followLink, isLinkCode } from '../domain/links.ts';
import { systemClock } from '../lib/time.ts';
import type { RouteDeps } from './operation.ts';
import { negotiateFormat } from './plugins/negotiate.ts';
import { HttpError, setWireHeader } from './wire.ts';

/**
 * `GET /l/{code}`, the short links of tracked links (docs/API.md §14.4.3). Not an operation of the
 * API: no `/v1`, no access token (one given is ignored), no rate limit, no Idempotency-Key, not in
 * the OpenAPI document. It is registered beside the probes, outside the /v1 scope whose hooks
 * authenticate and count requests.
 *
 * Choices the contract leaves open, written down here:
 * - 302 with `Location` the stored URL exactly, `Cache-Control: no-store` (so every click reaches
 *   the service, none is answered by a cache) and an empty body. The click is committed before
 *   the answer is written (src/domain/links.ts followLink). A URL holding characters outside
 *   visible ASCII (which a header cannot carry) has each of them percent-encoded as UTF-8 bytes;
 *   every other URL is sent byte for byte.
 * - The path must be exactly `/l/` and a code of 7 characters of `A-Z a-z 0-9 - _`, as the client
 *   wrote it: a percent-escape (`/l/abc%41def`), a trailing slash, repeated slashes or a further
 *   segment are no code, and neither is a code no link has. Each is 404 `Page not found.` without
 *   `Location`, in the format `_format` or Accept asks for, JSON when neither asks for one it can
 *   give (never 406: a browser or a bot follows these links). A query string is ignored.
 * - HEAD answers as GET does (302 with the same `Location`, or 404) and records no click: link
 *   previews and crawlers ask with HEAD, and a click is a person following the link.
 * - Other methods on a well-formed code are 405 with `Allow: GET, HEAD` (the code is not looked
 *   up); on a malformed one 404.
 * - The IP recorded is the peer address of the connection: the app trusts no proxy header
 *   (Fastify's `trustProxy` is off), so behind a reverse proxy it is the proxy's address.
 */

/** The methods `/l/{code}` answers (GET also answers HEAD). */
export const LINK_ALLOW = 'GET, HEAD';
const OTHER_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** onRequest of `/l/{code}`: `Vary: Accept` and the format of its errors, JSON where negotiation would refuse. */
function lenientFormat(request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void {
  setWireHeader(reply, 'Vary', 'Accept');
  try {
    request.format = negotiateFormat(request.queryParams.get('_format'), request.headers.accept);
  } catch {
    request.format = 'json';
  }
  done();
}

/** The code of the request target exactly as sent (before the canonical rewrite), or undefined when the path is not `/l/` and a code. */
export function linkCodeOf(target: string): string | undefined {
  const q = target.indexOf('?');
  const path = q === -1 ? target : target.slice(0, q);
  if (path.length !== 10 || !path.startsWith('/l/')) return undefined;
  const code = path.slice(3);
  return isLinkCode(code) ? code : undefined;
}

/** A stored URL as a `Location` value: itself when it is visible ASCII (every URL a text holds, in practice), else those characters percent-encoded. */
export function locationOf(url: string): string {
  if (/^[\x21-\x7e]*$/.test(url)) return url;
  let out = '';
  for (const ch of url) {
    const c = ch.codePointAt(0)!;
    if (c >= 0x21 && c <= 0x7e) out += ch;
    // A lone surrogate is written as U+FFFD's bytes (what Buffer.from makes of it).
    else for (const b of Buffer.from(ch, 'utf8')) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

const pageNotFound = () => new HttpError(404, 'Page not found.');

/** Registers `GET /l/{code}` (and HEAD, and the 405 of other methods) on `app`, the root: no auth, no rate limit. */
export function registerLinkRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const linkDeps = { store: deps.store, clock: deps.clock ?? systemClock };
  app.route({
    method: 'GET',
    url: '/l/:code',
    onRequest: lenientFormat,
    handler: async (request, reply) => {
      const code = linkCodeOf(request.originalUrl);
      if (code === undefined) throw pageNotFound();
      const head = request.method === 'HEAD';
      const url = await followLink(linkDeps, code, head ? undefined : { ip: request.ip, userAgent: request.headers['user-agent'] });
      if (url === undefined) throw pageNotFound();
      setWireHeader(reply, 'Location', locationOf(url));
      setWireHeader(reply, 'Cache-Control', 'no-store');
      return reply.code(302).send();
    },
  });
  app.route({
    method: [...OTHER_METHODS],
    url: '/l/:code',
    onRequest: lenientFormat,
    handler: (request, reply) => {
      if (linkCodeOf(request.originalUrl) === undefined) throw pageNotFound();
      setWireHeader(reply, 'Allow', LINK_ALLOW);
      throw new HttpError(405, `Method Not Allowed. This URL can only handle the following request methods: ${LINK_ALLOW}.`);
    },
  });
}
