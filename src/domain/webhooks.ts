import { randomBytes, randomUUID } from 'node:crypto';
import { inTransaction, type Store } from '../store/db.ts';
import type { Db } from '../store/types.ts';
import * as repo from '../store/repositories/webhooks.ts';
import { storedEvent, webhookEvents, type DeliveryRow, type EventRow, type WebhookRow } from '../records/webhooks.ts';
import { findMessage } from '../store/repositories/message-log.ts';
import { hostAllowed } from '../lib/ssrf.ts';
import { ValidationFailedError, type FieldError } from './errors.ts';
import { findOr404, loadOr404 } from './find.ts';
import { EVENT_TYPES, LOG_STATUS, type EventType } from '../records/statuses.ts';
import type { Clock } from '../lib/time.ts';
import { characterLength, defineRules, isEmpty, messages, validate, type Input } from './validation.ts';

/**
 * Webhooks (API.md §12): the account's endpoints, and THE OUTBOX. `emitEvent` writes an
 * event, one delivery per active webhook of the account that takes it, in the transaction of the
 * change that causes it (the caller's `tx`): the change and its event commit together or not at
 * all, so a crash loses no event. The delivery loop (src/webhooks/deliverer.ts) sends them.
 */

/** The message event of a log status (API.md §12.1 table), if that status has one. */
export const MESSAGE_EVENT_OF_STATUS: Readonly<Partial<Record<number, EventType>>> = {
  [LOG_STATUS.SENT]: 'message.sent',
  [LOG_STATUS.DELIVERED]: 'message.delivered',
  [LOG_STATUS.UNDELIVERED]: 'message.undelivered',
  [LOG_STATUS.FAILED]: 'message.failed',
  [LOG_STATUS.REJECTED]: 'message.rejected',
  [LOG_STATUS.RECEIVED]: 'message.received',
};

/**
 * Writes event `type` for `accountId` in `tx`: one Pending delivery, due at once, per active
 * webhook of the account whose `Events` include it; nothing when none does. `data` is the
 * record's stored row, or a function that loads it (called only when some webhook takes the
 * event, so a change costs one indexed read when nobody listens). Each delivery gets its own
 * `webhook-id` (`msg_…`), kept for every attempt.
 * @param at the event's time, epoch seconds (the change's `now`).
 * @returns how many deliveries were written.
 */
export async function emitEvent(
  tx: Db,
  accountId: number,
  type: EventType,
  data: EventRow | undefined | (() => Promise<EventRow | undefined>),
  at: number,
): Promise<number> {
  const hooks = (await repo.activeWebhooks(tx, accountId)).filter((h) => webhookEvents(h).includes(type));
  if (hooks.length === 0) return 0;
  const row = typeof data === 'function' ? await data() : data;
  if (row === undefined) return 0;
  // The versioned outbox payload (src/records/webhooks.ts), rendered when the delivery is sent.
  const payload = storedEvent(type, at, row);
  for (const h of hooks) {
    await repo.insertDelivery(tx, {
      accountId,
      webhookId: h.id,
      event: type,
      msgId: `msg_${randomUUID().replace(/-/g, '')}`,
      payload,
      now: at,
      dueAt: at * 1000,
    });
  }
  return hooks.length;
}

/**
 * The message events of messages whose status just changed in `tx` (the dispatcher's outcomes
 * and receipts): each message's event is that of its status now (API.md §12.1 table). Accounts with no
 * active webhook cost one query for the whole list.
 */
export async function emitMessageEvents(tx: Db, changed: readonly { id: number; account_id: number }[], at: number): Promise<void> {
  if (changed.length === 0) return;
  const hooked = await repo.accountsWithWebhooks(tx, [...new Set(changed.map((m) => Number(m.account_id)))]);
  if (hooked.size === 0) return;
  for (const m of changed) {
    if (!hooked.has(Number(m.account_id))) continue;
    const row = await findMessage(tx, Number(m.account_id), Number(m.id));
    const type = row && MESSAGE_EVENT_OF_STATUS[row.status_id];
    if (type) await emitEvent(tx, Number(m.account_id), type, row, at);
  }
}

// ------------------------------------------------------------------ CRUD

const RULES = defineRules([
  { field: 'Url', rule: 'required' },
  { field: 'Events', rule: 'required' },
  { field: 'Active', rule: 'in', values: [0, 1] },
]);
const FIELDS = ['Url', 'Events', 'Active'];

export interface WebhookDeps {
  store: Store;
  clock: Clock;
  allowPrivate: boolean;
}

/** The body read and checked: the values of the fields sent, or errors (API.md §4.4 order). */
async function readBody(
  input: Input,
  deps: WebhookDeps,
  mode: 'create' | 'update',
): Promise<{ errors: FieldError[]; url?: string; events?: string[]; active?: number }> {
  const sent = (f: string) => Object.hasOwn(input, f);
  const picked: Record<string, unknown> = {};
  for (const f of FIELDS) if (sent(f)) picked[f] = input[f];
  // On update a field may be left out, but not sent blank (API.md §4.6).
  const rules = mode === 'create' ? RULES : RULES.filter((r) => r.rule !== 'required' || sent(r.field));
  const checked = validate(picked, rules);
  const errors = [...checked.errors];
  const out: { errors: FieldError[]; url?: string; events?: string[]; active?: number } = { errors };
  if (!checked.failed('Url') && sent('Url') && !isEmpty(input.Url)) {
    // API.md §12: an absolute http or https URL of at most 2,048 characters, else `Url is not a valid URL.`
    const url = typeof input.Url === 'string' && characterLength(input.Url) <= 2048 ? input.Url : '';
    let parsed: URL | undefined;
    try {
      parsed = url === '' ? undefined : new URL(url);
    } catch {
      parsed = undefined;
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.hostname === '') {
      errors.push({ field: 'Url', message: 'Url is not a valid URL.' });
    } else if (!(await hostAllowed(parsed.hostname, deps.allowPrivate))) {
      errors.push({ field: 'Url', message: messages.invalid('Url') });
    } else out.url = url;
  }
  if (!checked.failed('Events') && sent('Events') && !isEmpty(input.Events)) {
    const ev = input.Events;
    const names = Array.isArray(ev) ? ev : typeof ev === 'object' && ev !== null ? Object.values(ev) : undefined;
    if (!names || names.length === 0 || !names.every((n) => typeof n === 'string' && (EVENT_TYPES as readonly string[]).includes(n))) {
      errors.push({ field: 'Events', message: messages.invalid('Events') });
    } else out.events = [...new Set(names as string[])];
  }
  if (checked.values.Active !== undefined) out.active = checked.values.Active;
  errors.sort((a, b) => FIELDS.indexOf(a.field) - FIELDS.indexOf(b.field));
  return out;
}

/** A new signing secret: `whsec_` and the base64 of 32 random bytes (API.md §12.3). */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * webhooks/create (API.md §10.8): `Url` (required; http/https, ≤ 2,048 characters: `Url is not a valid
 * URL.`; a private/loopback/link-local/unspecified host: `Url is invalid.`), `Events` (required,
 * event names: `Events cannot be blank.` / `Events is invalid.`), `Active` (0 or 1, default 1).
 * @returns the webhook row, its new secret included (shown once, in this reply).
 */
export async function createWebhook(deps: WebhookDeps, accountId: number, input: Input): Promise<WebhookRow> {
  const body = await readBody(input, deps, 'create');
  if (body.errors.length > 0) throw new ValidationFailedError(body.errors);
  // One transaction: its audit entry commits with it (API.md §15.5).
  return inTransaction(deps.store, (tx) =>
    repo.insertWebhook(
      tx,
      accountId,
      { url: body.url!, events: JSON.stringify(body.events), active: body.active ?? 1, secret: newSecret() },
      deps.clock.nowSeconds(),
    ),
  );
}

/**
 * webhooks/update?id= (API.md §10.8): only the fields sent change. An update whose every value equals the
 * stored one (Events: the same names in the same order) saves nothing and leaves DateUpdated as it
 * was (docs/API.md §4.6). @throws NotFoundError, ValidationFailedError.
 */
export async function updateWebhook(deps: WebhookDeps, accountId: number, id: string, input: Input): Promise<WebhookRow> {
  const body = await readBody(input, deps, 'update');
  return inTransaction(deps.store, async (tx) => {
    const row = await loadOr404(id, (n) => repo.findWebhook(tx, accountId, n));
    if (body.errors.length > 0) throw new ValidationFailedError(body.errors);
    const next = {
      url: body.url ?? row.url,
      events: body.events ? JSON.stringify(body.events) : row.events,
      active: body.active ?? row.active,
    };
    if (next.url === row.url && next.events === row.events && next.active === row.active) return row;
    return (await repo.updateWebhook(tx, accountId, row.id, next, deps.clock.nowSeconds()))!;
  });
}

export async function viewWebhook(store: Store, accountId: number, id: string): Promise<WebhookRow> {
  return loadOr404(id, (n) => repo.findWebhook(store.db, accountId, n));
}

/** webhooks/delete?id= (API.md §10.8): the webhook and its deliveries go. */
export async function deleteWebhook(store: Store, accountId: number, id: string): Promise<void> {
  await inTransaction(store, async (tx) => {
    const n = await findOr404(id, (n) => repo.findWebhook(tx, accountId, n));
    await repo.deleteWebhook(tx, accountId, n);
  });
}

export async function webhooksPage(store: Store, accountId: number) {
  const total = await repo.countWebhooks(store.db, accountId);
  return { total, fetch: (limit: number, offset: number) => repo.listWebhooks(store.db, accountId, limit, offset) };
}

/** webhooks/deliveries?id= (API.md §12): the webhook's deliveries, newest first. @throws NotFoundError. */
export async function deliveriesPage(store: Store, accountId: number, id: string) {
  const webhook = await loadOr404(id, (n) => repo.findWebhook(store.db, accountId, n));
  const total = await repo.countDeliveries(store.db, accountId, webhook.id);
  return { total, fetch: (limit: number, offset: number) => repo.listDeliveries(store.db, accountId, webhook.id, limit, offset) };
}

/** webhooks/redeliver?id= (API.md §12.4; the id of a delivery): queues it once more, due now. @throws NotFoundError. */
export async function redeliver(deps: Pick<WebhookDeps, 'store' | 'clock'>, accountId: number, id: string): Promise<DeliveryRow> {
  return inTransaction(deps.store, async (tx) => {
    const row = await loadOr404(id, (n) => repo.findDelivery(tx, accountId, n));
    return (await repo.requeueDelivery(tx, accountId, row.id, deps.clock.nowMs(), deps.clock.nowSeconds()))!;
  });
}
