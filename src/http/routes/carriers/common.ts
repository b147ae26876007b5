import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CarrierSpec } from '../../../lib/carrier-settings.ts';
import { negotiateFormat } from '../../plugins/negotiate.ts';
import type { RouteDeps } from '../../operation.ts';
import { HttpError, setWireHeader } from '../../wire.ts';

/**
 * What the carrier routes share (docs/API.md §14.1): how a route is declared, how it finds its
 * carrier, how its body arrives, and how its errors are rendered.
 *
 * These routes are called by carriers, not by API clients: no `access_token`, no rate limit, no
 * Idempotency-Key (a provider's repeat is recognised by its own ids instead), and a success in the
 * carrier's own terms (an empty 200, Twilio's empty TwiML, a medium's bytes). Errors keep the
 * usual shape (docs/API.md §4.1), in the format Accept asks for, or JSON when it asks for neither
 * (a provider sends `*∕*` or something of its own: its request is never refused for that).
 */

/** The kinds of carrier that call back over HTTP. */
export type HttpCarrierKind = 'twilio' | 'android';

/** A configured carrier of one kind. */
export type CarrierOf<K extends HttpCarrierKind> = Extract<CarrierSpec, { kind: K }>;

/** The largest body a carrier may post, bytes (docs/API.md §14.1); larger: 413. */
export const CARRIER_BODY_LIMIT_BYTES = 64 * 1024;

/** The body as the root parser keeps it (src/http/plugins/body.ts collectRawBodies): the exact bytes and the media type. */
export interface RawBody {
  readonly mediaType: string;
  readonly raw: Buffer;
}

/** The request body's exact bytes and media type (none sent: empty). */
export function rawBodyOf(request: FastifyRequest): RawBody {
  const body = request.body as RawBody | undefined;
  return body && Buffer.isBuffer(body.raw) ? body : { mediaType: request.headers['content-type'] ?? '', raw: Buffer.alloc(0) };
}

/** One route of `/v1/carriers/{name}/…`, declared once; carriers/index.ts registers it. */
export interface CarrierRoute<K extends HttpCarrierKind = HttpCarrierKind> {
  /** The last path segment: `/v1/carriers/{name}/{action}`. */
  readonly action: 'status' | 'inbound' | 'media' | 'events';
  /** The kind of carrier it serves: a name of another kind is unknown here (404). */
  readonly kind: K;
  /** Its method (GET also answers HEAD). */
  readonly method: 'GET' | 'POST';
  /** Builds the handler once per application; `carrier` is the carrier the request named. */
  readonly handler: (deps: CarrierRouteDeps) => (request: FastifyRequest, reply: FastifyReply, carrier: CarrierOf<K>) => Promise<unknown>;
}

/** What a carrier route needs: the app's route dependencies, and MSGSVC_PUBLIC_URL (required with an HTTP carrier). */
export interface CarrierRouteDeps extends RouteDeps {
  readonly publicUrl: string;
}

/** Declares a carrier route (keeps its kind's type for the handler). */
export function defineCarrierRoute<K extends HttpCarrierKind>(route: CarrierRoute<K>): CarrierRoute<K> {
  return route;
}

/** `{PUBLIC_URL}/v1/carriers/{name}/{action}`: the exact URL a provider is given, and signs. */
export function carrierUrl(publicUrl: string, name: string, action: CarrierRoute['action']): string {
  return `${publicUrl}/v1/carriers/${name}/${action}`;
}

/**
 * onRequest of the carrier routes: `Vary: Accept` and the format errors are rendered in, as
 * negotiation decides it, falling back to JSON where negotiation would refuse (406) or fail (400).
 */
export function lenientFormat(request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void {
  setWireHeader(reply, 'Vary', 'Accept');
  try {
    request.format = negotiateFormat(request.queryParams.get('_format'), request.headers.accept);
  } catch {
    request.format = 'json';
  }
  done();
}

/** The 404 of a carrier name that is not configured, or not of the route's kind: the routing 404 (docs/API.md §4.2). */
export function carrierNotFound(): HttpError {
  return new HttpError(404, 'Page not found.');
}

/** The 403 of a callback whose signature is missing or wrong (nothing was changed). */
export const BAD_SIGNATURE = 'The request signature is missing or invalid.';
