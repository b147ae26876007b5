import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';
import { systemClock } from '../../lib/time.ts';
import { registerOperations, type Operation } from '../operation.ts';
import type { IdempotencyHooks } from '../plugins/idempotency.ts';
import { negotiateHook } from '../plugins/negotiate.ts';
import { fieldsHook } from '../serializers/fields.ts';
import { adminAccounts } from './accounts.ts';
import { adminAudit } from './audit.ts';
import { createOperatorAuthenticator, operatorRateLimitAndScope } from './auth.ts';
import { adminCarriers } from './carriers.ts';
import { adminNumbers } from './numbers.ts';
import { ADMIN_PREFIX, isAdminOperation, operatorAuditHook, type AdminRouteDeps } from './operation.ts';
import { adminUsage } from './usage.ts';

/**
 * The operator's registry (docs/API.md §16.4): every controller of `/admin/v1`, each listing its
 * actions, in the order of the docs and of docs/openapi-admin.json. Kept apart from `/v1`'s
 * CONTROLLERS (src/http/routes/index.ts): no operator operation is in the public API's document,
 * its scopes, its console or its tests of every `/v1` operation.
 */
export const ADMIN_CONTROLLERS: Readonly<Record<string, readonly Operation[]>> = {
  accounts: adminAccounts,
  numbers: adminNumbers,
  usage: adminUsage,
  carriers: adminCarriers,
  audit: adminAudit,
};

/** Every operator operation. */
export const ADMIN_OPERATIONS: readonly Operation[] = Object.values(ADMIN_CONTROLLERS).flat();

/** The operator operations that exist under `config` (all of them, today). */
export function adminOperationsFor(config: Config): readonly Operation[] {
  return ADMIN_OPERATIONS.filter((op) => op.enabled?.(config) ?? true);
}

type Hook = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => void;

/**
 * Checks that the two registries never mix: every operator operation is under `/admin/v1/` with the
 * `admin` marker, and no `/v1` operation is either. Run once when the app is built.
 * @throws Error naming the operation in the wrong registry.
 */
export function checkRegistries(v1: readonly Operation[], admin: readonly Operation[]): void {
  for (const op of admin) {
    if (!isAdminOperation(op) || !op.path.startsWith(ADMIN_PREFIX))
      throw new Error(`${op.id} is in the operator registry without the admin marker`);
  }
  for (const op of v1) {
    if (isAdminOperation(op) || op.path.startsWith('/admin/')) throw new Error(`${op.id} is an operator operation in the /v1 registry`);
  }
}

/**
 * Registers `/admin/v1/…` on `app`: its own scope with the steps of `/v1` in the same order
 * (negotiation 406 → the operator's authentication 401 → the rate limit 429, per operator key →
 * the scope step 403 → the operation), `fields=`, and the operator's audit entries
 * (src/http/admin/operation.ts). Routing 404 and 405 with Allow come from app.ts's not-found
 * handler, which knows these paths. Every POST honours Idempotency-Key with `/v1`'s hooks, its
 * keys kept per operator key (src/http/plugins/idempotency.ts, migration 027).
 * @param rateLimit `/v1`'s rate-limit hook (src/http/plugins/rate-limit.ts), counted per operator key.
 * @param idempotency `/v1`'s Idempotency-Key hooks.
 */
export function registerAdminApi(
  app: FastifyInstance,
  deps: AdminRouteDeps,
  operations: readonly Operation[],
  rateLimit: Hook,
  idempotency?: IdempotencyHooks,
): void {
  // eslint-disable-next-line @typescript-eslint/require-await -- an async plugin: a throw while registering rejects app.ready()
  app.register(async (api) => {
    api.addHook('onRequest', negotiateHook);
    api.addHook('onRequest', createOperatorAuthenticator(deps.store, deps.clock ?? systemClock));
    api.addHook('onRequest', operatorRateLimitAndScope(rateLimit));
    api.addHook('preSerialization', fieldsHook);
    api.addHook('onResponse', operatorAuditHook(deps.store));
    registerOperations(api, operations, deps, idempotency);
  });
}
