import { boundCount, prepareQuery } from '../prepared.ts';
import type { Db } from '../types.ts';

/** A stored scheduled message (times in epoch seconds). */
export interface ScheduledMessageRow {
  id: number;
  mobile_phone: string;
  message: string;
  scheduled_at: number;
  status_id: number;
  type_id: number;
  mms_template_id: number | null;
  subject: string;
}

/** Scheduled single messages. */

const MESSAGE_COLUMNS = ['id', 'mobile_phone', 'message', 'scheduled_at', 'status_id', 'type_id', 'mms_template_id', 'subject'] as const;

/** The account's total and list version, kept by triggers (migration 002): no count over the rows. */
const totals = prepareQuery((db, accountId: number) =>
  db.selectFrom('list_totals').select(['scheduled_messages', 'scheduled_messages_version']).where('account_id', '=', accountId),
);

const pageAt = prepareQuery((db, accountId: number, limit: number, offset: number) =>
  db.selectFrom('scheduled_messages').select(MESSAGE_COLUMNS).where('account_id', '=', accountId).orderBy('id').limit(boundCount(limit)).offset(boundCount(offset)),
);

const pageFrom = prepareQuery((db, accountId: number, fromId: number, limit: number, offset: number) =>
  db
    .selectFrom('scheduled_messages')
    .select(MESSAGE_COLUMNS)
    .where('account_id', '=', accountId)
    .where('id', '>=', fromId)
    .orderBy('id')
    .limit(boundCount(limit))
    .offset(boundCount(offset)),
);

/**
 * Page anchors are the ids at positions 0, ANCHOR_STEP, 2 × ANCHOR_STEP, … of the account's list.
 * They are found by walking the (account_id, id) index from one anchor to the next, each step a
 * query that skips ANCHOR_STEP - 1 index entries: no sort and no temporary table, so building the
 * anchors of a million messages reads the index once and holds nothing but the anchors.
 */
const ANCHOR_STEP = 1000;
const firstId = prepareQuery((db, accountId: number) =>
  db.selectFrom('scheduled_messages').select('id').where('account_id', '=', accountId).orderBy('id').limit(boundCount(1)),
);
const nextAnchor = prepareQuery((db, accountId: number, afterId: number) =>
  db
    .selectFrom('scheduled_messages')
    .select('id')
    .where('account_id', '=', accountId)
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(boundCount(1))
    .offset(boundCount(ANCHOR_STEP - 1)),
);

async function buildAnchors(db: Db, accountId: number): Promise<number[]> {
  const ids: number[] = [];
  let id = (await firstId.column(db, accountId))[0];
  while (id !== undefined) {
    ids.push(Number(id));
    id = (await nextAnchor.column(db, accountId, Number(id)))[0];
  }
  return ids;
}

interface Anchors {
  version: number;
  ids: number[];
}
// Per database handle, per account. Rebuilt when the account's list version changes, so any
// insert or delete, by any process, invalidates them.
const anchorCache = new WeakMap<object, Map<number, Anchors>>();
const ANCHOR_CACHE_ACCOUNTS = 1000;

export async function countScheduledMessages(db: Db, accountId: number): Promise<number> {
  const row = await totals.first(db, accountId);
  return row ? Number(row.scheduled_messages) : 0;
}

/**
 * One page of scheduled messages in id order. A page far into the list starts from the nearest
 * cached anchor at or before `offset` (`id >= anchor … OFFSET < 1000`) instead of stepping over
 * `offset` rows: a page near the end of a million messages costs about what page 1 does.
 */
export async function listScheduledMessages(db: Db, accountId: number, limit: number, offset: number): Promise<ScheduledMessageRow[]> {
  if (offset < ANCHOR_STEP || db.isTransaction) return pageAt.all(db, accountId, limit, offset);
  let cache = anchorCache.get(db);
  if (!cache) anchorCache.set(db, (cache = new Map()));
  const version = Number((await totals.first(db, accountId))?.scheduled_messages_version ?? 0);
  let anchors = cache.get(accountId);
  if (!anchors || anchors.version !== version) {
    const ids = await buildAnchors(db, accountId);
    if (cache.size >= ANCHOR_CACHE_ACCOUNTS) cache.clear();
    cache.set(accountId, (anchors = { version, ids }));
  }
  const k = Math.floor(offset / ANCHOR_STEP);
  const from = anchors.ids[k];
  if (from === undefined) return pageAt.all(db, accountId, limit, offset);
  return pageFrom.all(db, accountId, from, limit, offset - k * ANCHOR_STEP);
}

export interface NewScheduledMessage {
  mobilePhone: string;
  message: string;
  scheduledAt: number;
  statusId: number;
  typeId: number;
  mmsTemplateId: number | null;
  subject: string;
}

export async function insertScheduledMessage(db: Db, accountId: number, m: NewScheduledMessage, now: number): Promise<number> {
  const { id } = await db
    .insertInto('scheduled_messages')
    .values({
      account_id: accountId,
      mobile_phone: m.mobilePhone,
      message: m.message,
      scheduled_at: m.scheduledAt,
      status_id: m.statusId,
      type_id: m.typeId,
      mms_template_id: m.mmsTemplateId,
      subject: m.subject,
      created_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}
