import { leaseClaim } from '../claim.ts';
import { boundCount } from '../prepared.ts';
import { DELIVERY_COLUMNS, type DeliveryRow, type WebhookRow } from '../../records/webhooks.ts';
import type { Row } from '../tables.ts';
import type { Db } from '../types.ts';

/**
 * Webhooks and their deliveries (API.md §12; migration 010). Every query is scoped to the
 * account except the delivery loop's claim, which is the dispatcher's kind of claim
 * (src/store/repositories/dispatch.ts): ONE statement per store, `FOR UPDATE SKIP LOCKED` in a
 * materialised CTE on PostgreSQL, `UPDATE … WHERE id IN (SELECT … LIMIT n) RETURNING` on SQLite,
 * setting a lease (`due_at` = its end) and a token; every outcome is written only while that token
 * still holds the row. Times: `*_at` epoch seconds, `due_at` epoch ms.
 */

const num = <T extends { created_at: number; updated_at: number }>(r: T): T => ({
  ...r,
  created_at: Number(r.created_at),
  updated_at: Number(r.updated_at),
});

export async function insertWebhook(
  db: Db,
  accountId: number,
  w: { url: string; events: string; active: number; secret: string },
  now: number,
): Promise<WebhookRow> {
  const row = await db
    .insertInto('webhooks')
    .values({ account_id: accountId, url: w.url, events: w.events, active: w.active, secret: w.secret, created_at: now, updated_at: now })
    .returningAll()
    .executeTakeFirstOrThrow();
  return num(row);
}

export async function findWebhook(db: Db, accountId: number, id: number): Promise<WebhookRow | undefined> {
  const row = await db.selectFrom('webhooks').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
  return row ? num(row) : undefined;
}

/** A webhook by id alone, for the delivery loop. */
export async function webhookById(db: Db, id: number): Promise<WebhookRow | undefined> {
  const row = await db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? num(row) : undefined;
}

export async function updateWebhook(
  db: Db,
  accountId: number,
  id: number,
  w: { url: string; events: string; active: number },
  now: number,
): Promise<WebhookRow | undefined> {
  const row = await db
    .updateTable('webhooks')
    .set({ url: w.url, events: w.events, active: w.active, updated_at: now })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  return row ? num(row) : undefined;
}

export async function deleteWebhook(db: Db, accountId: number, id: number): Promise<boolean> {
  await db.deleteFrom('webhook_deliveries').where('account_id', '=', accountId).where('webhook_id', '=', id).execute();
  const r = await db.deleteFrom('webhooks').where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

export async function countWebhooks(db: Db, accountId: number): Promise<number> {
  const r = await db
    .selectFrom('webhooks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}

export async function listWebhooks(db: Db, accountId: number, limit: number, offset: number): Promise<WebhookRow[]> {
  const rows = await db
    .selectFrom('webhooks')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('id')
    .limit(boundCount(limit))
    .offset(boundCount(offset))
    .execute();
  return rows.map((r) => num(r));
}

/** The account's active webhooks (id and events), for emitEvent. */
export async function activeWebhooks(db: Db, accountId: number): Promise<Pick<WebhookRow, 'id' | 'events'>[]> {
  return db
    .selectFrom('webhooks')
    .select(['id', 'events'])
    .where('account_id', '=', accountId)
    .where('active', '=', 1)
    .orderBy('id')
    .execute();
}

/** Of these accounts, those with at least one active webhook (one query). */
export async function accountsWithWebhooks(db: Db, accountIds: readonly number[]): Promise<Set<number>> {
  if (accountIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('webhooks')
    .select('account_id')
    .distinct()
    .where('active', '=', 1)
    .where('account_id', 'in', [...accountIds])
    .execute();
  return new Set(rows.map((r) => Number(r.account_id)));
}

export async function insertDelivery(
  db: Db,
  d: { accountId: number; webhookId: number; event: string; msgId: string; payload: string; now: number; dueAt: number },
): Promise<void> {
  await db
    .insertInto('webhook_deliveries')
    .values({
      account_id: d.accountId,
      webhook_id: d.webhookId,
      event: d.event,
      msg_id: d.msgId,
      payload: d.payload,
      created_at: d.now,
      updated_at: d.now,
      due_at: d.dueAt,
      lease_token: null,
      last_status_code: null,
    })
    .execute();
}

const toDelivery = (r: DeliveryRow): DeliveryRow => ({
  ...num(r),
  attempts: Number(r.attempts),
  last_status_code: r.last_status_code === null ? null : Number(r.last_status_code),
});

export async function countDeliveries(db: Db, accountId: number, webhookId: number): Promise<number> {
  const r = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .where('webhook_id', '=', webhookId)
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}

/** The webhook's deliveries, newest first. */
export async function listDeliveries(db: Db, accountId: number, webhookId: number, limit: number, offset: number): Promise<DeliveryRow[]> {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select(DELIVERY_COLUMNS)
    .where('account_id', '=', accountId)
    .where('webhook_id', '=', webhookId)
    .orderBy('id', 'desc')
    .limit(boundCount(limit))
    .offset(boundCount(offset))
    .execute();
  return rows.map((r) => toDelivery(r));
}

export async function findDelivery(db: Db, accountId: number, id: number): Promise<DeliveryRow | undefined> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select(DELIVERY_COLUMNS)
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? toDelivery(row) : undefined;
}

/** redeliver: the delivery is Pending and due at `dueAt` once more (any claim on it is void). */
export async function requeueDelivery(db: Db, accountId: number, id: number, dueAt: number, now: number): Promise<DeliveryRow | undefined> {
  const row = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'Pending', due_at: dueAt, lease_token: null, updated_at: now })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .returning(DELIVERY_COLUMNS)
    .executeTakeFirst();
  return row ? toDelivery(row) : undefined;
}

// ------------------------------------------------------------------ the delivery loop

const CLAIM_RETURNING = ['id', 'account_id', 'webhook_id', 'msg_id', 'payload', 'attempts'] as const;

/** A claimed delivery: what an attempt needs (`attempts` counts this one). */
export type ClaimedDelivery = Pick<Row<'webhook_deliveries'>, (typeof CLAIM_RETURNING)[number]>;

const claim = leaseClaim<ClaimedDelivery>('webhook_deliveries', CLAIM_RETURNING, true);

/** True when some delivery is due: a read, so an idle delivery loop takes no write lock (SQLite). */
export async function hasDueDeliveries(db: Db, now: number): Promise<boolean> {
  return (
    (await db.selectFrom('webhook_deliveries').select('id').where('due_at', '<=', now).limit(boundCount(1)).executeTakeFirst()) !==
    undefined
  );
}

/**
 * Claims up to `limit` due deliveries for `token`, leased until `leaseUntil` (epoch ms), counting
 * one more attempt. One autocommit statement: the claim is recorded before any HTTP call.
 */
export async function claimDueDeliveries(
  db: Db,
  now: number,
  limit: number,
  leaseUntil: number,
  token: string,
): Promise<ClaimedDelivery[]> {
  const rows = await claim(db, now, limit, leaseUntil, token);
  return rows.map((r) => ({ ...r, id: Number(r.id), attempts: Number(r.attempts) }));
}

/**
 * Writes an attempt's outcome while `token` still holds the delivery: its status, the answer's
 * status code (null: none), the error text, and when it is due next (null: ended).
 * @returns false when the lease was lost (nothing written).
 */
export async function recordAttempt(
  db: Db,
  id: number,
  token: string,
  o: { status: 'Pending' | 'Delivered' | 'Failed'; statusCode: number | null; error: string; dueAt: number | null; now: number },
): Promise<boolean> {
  const r = await db
    .updateTable('webhook_deliveries')
    .set({ status: o.status, last_status_code: o.statusCode, last_error: o.error, due_at: o.dueAt, lease_token: null, updated_at: o.now })
    .where('id', '=', id)
    .where('lease_token', '=', token)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
