import type { FastifyRequest } from 'fastify';
import type { AccountAdminDeps } from '../../../domain/account-admin.ts';
import { systemClock } from '../../../lib/time.ts';
import type { RouteDeps } from '../../operation.ts';
import { baseUrlOf } from '../users/deps.ts';

/** What the account rules need, for one request (the system clock unless one was injected). */
export function accountAdminDeps({ store, config, clock }: RouteDeps, request: FastifyRequest): AccountAdminDeps {
  return {
    store,
    clock: clock ?? systemClock,
    timeZone: config.timeZone,
    baseUrl: baseUrlOf(config, request),
    region: config.defaultRegion,
  };
}
