import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../../../config.ts';
import type { RouteDeps } from '../../operation.ts';
import { HttpError, setWireHeader } from '../../wire.ts';
import {
  CARRIER_BODY_LIMIT_BYTES,
  carrierNotFound,
  lenientFormat,
  type CarrierOf,
  type CarrierRoute,
  type HttpCarrierKind,
} from './common.ts';
import { carrierEvents } from './events.ts';
import { carrierInbound } from './inbound.ts';
import { carrierMedia } from './media.ts';
import { carrierStatus } from './status.ts';

/**
 * `/v1/carriers/{name}/…`: what carriers call (docs/API.md §14.1). Not operations of the API
 * (src/http/operation.ts): no access token, no rate limit, no Idempotency-Key, a carrier name in
 * the path, and answers in the carrier's own terms; nor in the OpenAPI document, which describes
 * what API clients call. They are registered beside the probes, outside the /v1 scope whose hooks
 * authenticate and count requests, so none of those steps runs for them.
 */
export const CARRIER_ROUTES: readonly CarrierRoute[] = [
  carrierStatus,
  carrierInbound,
  carrierMedia,
  carrierEvents,
] as readonly CarrierRoute[];

/** Methods a carrier path answers 405 to (with Allow), when the name is a carrier of its kind. */
const OTHER_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** Whether the carrier routes exist under `config`: an HTTP carrier (Twilio-compatible or Android) is configured, and with it MSGSVC_PUBLIC_URL. */
export function carrierRoutesEnabled(config: Pick<Config, 'carriers' | 'publicUrl'>): boolean {
  return config.publicUrl !== undefined && config.carriers.some((c) => c.kind === 'twilio' || c.kind === 'android');
}

/**
 * Registers `/v1/carriers/{name}/{status|inbound|media|events}` on `app` (the root: no auth, no
 * rate limit), when carrierRoutesEnabled(config); else nothing (those paths are unknown: 404).
 * Each route takes a name of its kind only: any other name is 404 `Page not found.`, before the
 * body is read. Other methods on a route of a known carrier are 405 with Allow. Bodies are at
 * most CARRIER_BODY_LIMIT_BYTES (413).
 */
export function registerCarrierRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const { config } = deps;
  if (!carrierRoutesEnabled(config)) return;
  const carriers = new Map(config.carriers.map((c) => [c.name, c]));
  const routeDeps = { ...deps, publicUrl: config.publicUrl! };
  const carrierFor = <K extends HttpCarrierKind>(request: FastifyRequest, kind: K): CarrierOf<K> | undefined => {
    const name = (request.params as { name?: string }).name;
    const carrier = name === undefined ? undefined : carriers.get(name);
    return carrier?.kind === kind ? (carrier as CarrierOf<K>) : undefined;
  };
  // eslint-disable-next-line @typescript-eslint/require-await -- an async plugin: a throw while registering rejects app.ready()
  app.register(async (scope) => {
    scope.addHook('onRequest', lenientFormat);
    for (const route of CARRIER_ROUTES) {
      const url = `/v1/carriers/:name/${route.action}`;
      const known = (request: FastifyRequest, _reply: unknown, done: (err?: Error) => void) =>
        done(carrierFor(request, route.kind) ? undefined : carrierNotFound());
      const handle = route.handler(routeDeps);
      scope.route({
        method: route.method,
        url,
        bodyLimit: CARRIER_BODY_LIMIT_BYTES,
        onRequest: known,
        handler: (request, reply) => handle(request, reply, carrierFor(request, route.kind)!),
      });
      const allow = route.method === 'GET' ? 'GET, HEAD' : route.method;
      scope.route({
        method: OTHER_METHODS.filter((m) => m !== route.method),
        url,
        bodyLimit: CARRIER_BODY_LIMIT_BYTES,
        onRequest: known,
        handler: (_request, reply) => {
          setWireHeader(reply, 'Allow', allow);
          throw new HttpError(405, `Method Not Allowed. This URL can only handle the following request methods: ${allow}.`);
        },
      });
    }
  });
}
