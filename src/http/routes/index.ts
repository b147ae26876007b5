import type { Config } from '../../config.ts';
import { allowOf, type Operation } from '../operation.ts';
import { account } from './account/index.ts';
import { contacts } from './contacts/index.ts';
import { credits } from './credits/index.ts';
import { customContactFieldsEntry } from './custom-contact-fields-entry/index.ts';
import { customContactFields } from './custom-contact-fields/index.ts';
import { groups } from './groups/index.ts';
import { keyword } from './keyword/index.ts';
import { media } from './media/index.ts';
import { mmsTemplates } from './mms-templates/index.ts';
import { numbers } from './numbers/index.ts';
import { sms } from './sms/index.ts';
import { sandbox } from './sandbox/index.ts';
import { webhooks } from './webhooks/index.ts';
import { keys } from './keys/index.ts';
import { users } from './users/index.ts';
import { audit } from './audit/index.ts';
import { errors } from './errors/index.ts';
import { subaccounts } from './subaccounts/index.ts';

/**
 * `/v1/carriers/{name}/…` (docs/API.md §14.1): the routes carriers call back (receipts, inbound
 * texts, MMS media, phone events). Not in CONTROLLERS: they are no operations of the API (no
 * token, no rate limit, a carrier name in the path, answers in the carrier's own terms), so
 * app.ts registers them beside the probes, and only while an HTTP carrier is configured.
 */
export { carrierRoutesEnabled, registerCarrierRoutes } from './carriers/index.ts';

/**
 * The registry: every controller of /v1, each listing its actions. Its order is the order of the
 * OpenAPI document's paths and tags, which is why it is a list and not a discovered folder. A new
 * resource adds its own folder, its import and one line here (docs/ARCHITECTURE.md, "Adding a
 * resource"; test/docs/architecture-recipe.test.ts applies that recipe).
 */
export const CONTROLLERS: Readonly<Record<string, readonly Operation[]>> = {
  numbers,
  credits,
  account,
  sms,
  contacts,
  groups,
  'custom-contact-fields': customContactFields,
  'custom-contact-fields-entry': customContactFieldsEntry,
  keyword,
  sandbox,
  media,
  'mms-templates': mmsTemplates,
  webhooks,
  keys,
  users,
  audit,
  errors,
  subaccounts,
};

/** Every operation of the API. */
export const OPERATIONS: readonly Operation[] = Object.values(CONTROLLERS).flat();

/** The operations that exist under `config` (an operation's `enabled`, e.g. sandbox/inbound, API.md §11.3). */
export function operationsFor(config: Config): readonly Operation[] {
  return OPERATIONS.filter((op) => op.enabled?.(config) ?? true);
}

/**
 * The `Allow` value of each path of `ops` (API.md §1.4: GET also answers HEAD); undefined for
 * an unknown path.
 */
export function allowedMethodsOf(ops: readonly Operation[]): (path: string) => string | undefined {
  const byPath = new Map<string, string>();
  for (const op of ops) if (!byPath.has(op.path)) byPath.set(op.path, allowOf(ops, op.path)!);
  return (path) => byPath.get(path);
}
