import type { Config } from '../../config.ts';
import { allowOf, type Operation } from '../operation.ts';
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

/**
 * The registry: every controller of /v1, each listing its actions. A new resource adds its own
 * folder and one line here.
 */
export const CONTROLLERS: Readonly<Record<string, readonly Operation[]>> = {
  numbers,
  credits,
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
};

/** Every operation of the API. */
export const OPERATIONS: readonly Operation[] = Object.values(CONTROLLERS).flat();

/** The operations that exist under `config` (an operation's `enabled`, e.g. sandbox/inbound, API-EXTENSIONS §8). */
export function operationsFor(config: Config): readonly Operation[] {
  return OPERATIONS.filter((op) => op.enabled?.(config) ?? true);
}

/**
 * The `Allow` value of each path of `ops` (CONVENTIONS §5: GET also answers HEAD); undefined for
 * an unknown path.
 */
export function allowedMethodsOf(ops: readonly Operation[]): (path: string) => string | undefined {
  const byPath = new Map<string, string>();
  for (const op of ops) if (!byPath.has(op.path)) byPath.set(op.path, allowOf(ops, op.path)!);
  return (path) => byPath.get(path);
}
