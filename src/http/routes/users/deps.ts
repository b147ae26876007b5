import type { FastifyRequest } from 'fastify';
import type { UserDeps } from '../../../domain/users.ts';
import { systemClock } from '../../../lib/time.ts';
import type { RouteDeps } from '../../operation.ts';

/** `MSGSVC_PUBLIC_URL`, else the request's own scheme and host: where invite links point. */
export function baseUrlOf(config: RouteDeps['config'], request: FastifyRequest): string {
  return config.publicUrl ?? `${request.protocol}://${request.host}`;
}

/** What the people rules need, for one request. */
export function userDeps({ store, config, clock }: RouteDeps, request: FastifyRequest): UserDeps {
  return { store, clock: clock ?? systemClock, baseUrl: baseUrlOf(config, request) };
}
