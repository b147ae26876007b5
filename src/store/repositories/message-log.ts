import { sql } from 'kysely';
import { boundCount, isPostgres, prepareQuery } from '../prepared.ts';
import { BATCH_COLUMNS, MESSAGE_COLUMNS as COLUMNS, type BatchRow, type MessageRow } from '../../records/messages.ts';
import type { Row } from '../tables.ts';
import type { Db } from '../types.ts';

/**
 * The message log (API.md §10.6): messages and send-group batches. Every query is scoped to
 * the account. Times: `*_at` in epoch seconds, `due_at` in epoch milliseconds.
 */

/** A new outbound message, Queued (or any status for the log's other writers). */
export interface NewMessage {
  direction: number;
  number: string;
  mobilePhone: string;
  message: string;
  typeId: number;
  statusId: number;
  segments: number;
  credits: number;
  batchId: number | null;
  scheduledMessageId: number | null;
  /** 1 for the API.md §11.6 confirmations (sent to opted-out numbers). */
  optOutExempt: number;
  /** Epoch ms when the dispatcher should take it; null for a message it never takes (Received). */
  dueAt: number | null;
  /** An outbound MMS's template (API.md §10.7), whose Message and MediaIds the dispatcher hands an MMS carrier; default none. */
  mmsTemplateId?: number | null;
  /** API.md §17: 1 goes to the carrier before every Queued 0; default 0. */
  priority?: number;
}

const insert = prepareQuery(
  (
    db,
    accountId: number,
    direction: number,
    number: string,
    mobilePhone: string,
    message: string,
    typeId: number,
    statusId: number,
    segments: number,
    credits: number,
    batchId: number | null,
    scheduledMessageId: number | null,
    optOutExempt: number,
    now: number,
    dueAt: number | null,
    mmsTemplateId: number | null,
    priority: number,
  ) =>
    db
      .insertInto('messages')
      .values({
        account_id: accountId,
        direction,
        number,
        mobile_phone: mobilePhone,
        message,
        type_id: typeId,
        status_id: statusId,
        segments,
        credits,
        batch_id: batchId,
        scheduled_message_id: scheduledMessageId,
        opt_out_exempt: optOutExempt,
        created_at: now,
        sent_at: null,
        delivered_at: null,
        due_at: dueAt,
        lease_token: null,
        mms_template_id: mmsTemplateId,
        carrier_message_id: null,
        receipt_status: null,
        receipt_error: null,
        receipt_due_at: null,
        priority,
      })
      .returning(COLUMNS),
);

/** Adds a message to the account's log; returns it as stored. */
export async function insertMessage(db: Db, accountId: number, m: NewMessage, now: number): Promise<MessageRow> {
  const row = await insert.first(
    db,
    accountId,
    m.direction,
    m.number,
    m.mobilePhone,
    m.message,
    m.typeId,
    m.statusId,
    m.segments,
    m.credits,
    m.batchId,
    m.scheduledMessageId,
    m.optOutExempt,
    now,
    m.dueAt,
    m.mmsTemplateId ?? null,
    m.priority ?? 0,
  );
  return row!;
}

const byId = prepareQuery((db, accountId: number, id: number) =>
  db.selectFrom('messages').select(COLUMNS).where('account_id', '=', accountId).where('id', '=', id),
);

/** The account's message `id`, if any. */
export async function findMessage(db: Db, accountId: number, id: number): Promise<MessageRow | undefined> {
  return byId.first(db, accountId, id);
}

// ------------------------------------------------------------------ send-group

/**
 * One Queued message per member of the group who has not opted out, in contact id order, in one
 * INSERT … SELECT (a group of 100,000 members is one statement). Casts give the bound values
 * their column types, which PostgreSQL cannot infer in a SELECT list.
 */
const insertForGroup = prepareQuery(
  (
    db,
    accountId: number,
    groupId: number,
    number: string,
    message: string,
    typeId: number,
    segments: number,
    credits: number,
    batchId: number,
    now: number,
    dueAt: number,
    mmsTemplateId: number | null,
    priority: number,
  ) => ({
    compile: () =>
      sql`insert into messages (account_id, direction, number, mobile_phone, message, type_id, status_id, segments, credits, batch_id, created_at, due_at, mms_template_id, priority)
        select cast(${accountId} as integer), 1, cast(${number} as text), c.number, cast(${message} as text), cast(${typeId} as integer), 1,
          cast(${segments} as integer), cast(${credits} as bigint), cast(${batchId} as integer), cast(${now} as bigint), cast(${dueAt} as bigint),
          cast(${mmsTemplateId} as integer), cast(${priority} as smallint)
        from group_members gm
        join contacts c on c.account_id = gm.account_id and c.id = gm.contact_id
        where gm.group_id = ${groupId} and gm.account_id = ${accountId} and c.opted_out = 0
        order by gm.contact_id`.compile(db),
  }),
);

/** The fields every message of a batch shares. */
export interface GroupSend {
  number: string;
  message: string;
  typeId: number;
  segments: number;
  /** Credits of ONE message. */
  credits: number;
  dueAt: number;
  /** An MMS's template (see NewMessage); default none. */
  mmsTemplateId?: number | null;
  /** API.md §17 Priority (see NewMessage); default 0. */
  priority?: number;
}

/**
 * Queues one message per member of the account's group `groupId` who has not opted out, all with
 * `batchId`. Returns how many were queued.
 */
export async function insertGroupMessages(
  db: Db,
  accountId: number,
  groupId: number,
  batchId: number,
  m: GroupSend,
  now: number,
): Promise<number> {
  return insertForGroup.run(
    db,
    accountId,
    groupId,
    m.number,
    m.message,
    m.typeId,
    m.segments,
    m.credits,
    batchId,
    now,
    m.dueAt,
    m.mmsTemplateId ?? null,
    m.priority ?? 0,
  );
}

/** One personalised message of a batch: its recipient and text as sent, and its cost. */
export interface BatchMessage {
  mobilePhone: string;
  message: string;
  segments: number;
  credits: number;
  /** The account number it goes from when not the batch's (a sender pool, API.md §17). */
  number?: string;
}

type NewId = { id: number };

/**
 * Queued messages from a JSON array parameter of `[mobilePhone, message, segments, credits]`, in
 * array order: one statement shape whatever the chunk length, prepared once.
 */
const insertFromJson = prepareQuery(
  (
    db,
    accountId: number,
    number: string,
    typeId: number,
    batchId: number,
    now: number,
    dueAt: number,
    mmsTemplateId: number | null,
    priority: number,
    rowsJson: string,
  ) => ({
    compile: () =>
      (isPostgres(db)
        ? sql<NewId>`insert into messages (account_id, direction, number, mobile_phone, message, type_id, status_id, segments, credits, batch_id, created_at, due_at, mms_template_id, priority)
            select cast(${accountId} as integer), 1, coalesce(r.v->>4, cast(${number} as text)), r.v->>0, r.v->>1, cast(${typeId} as integer), 1,
              cast(r.v->>2 as integer), cast(r.v->>3 as bigint), cast(${batchId} as integer), cast(${now} as bigint), cast(${dueAt} as bigint),
              cast(${mmsTemplateId} as integer), cast(${priority} as smallint)
            from json_array_elements(cast(${rowsJson} as json)) with ordinality as r(v, i) order by r.i
            returning id`
        : sql<NewId>`insert into messages (account_id, direction, number, mobile_phone, message, type_id, status_id, segments, credits, batch_id, created_at, due_at, mms_template_id, priority)
            select ${accountId}, 1, coalesce(json_extract(r.value, '$[4]'), ${number}), json_extract(r.value, '$[0]'), json_extract(r.value, '$[1]'), ${typeId}, 1,
              json_extract(r.value, '$[2]'), json_extract(r.value, '$[3]'), ${batchId}, ${now}, ${dueAt}, ${mmsTemplateId}, ${priority}
            from json_each(${rowsJson}) as r order by r.key
            returning id`
      ).compile(db),
  }),
);

/**
 * Queues messages of a batch that differ per recipient (personalised texts), in chunks of 5,000
 * rows per statement. A lone surrogate in a text is stored as U+FFFD, as a bound text is.
 * @returns the new ids, in the order of `rows`.
 */
export async function insertMessages(
  db: Db,
  accountId: number,
  m: { number: string; typeId: number; batchId: number; dueAt: number; mmsTemplateId: number | null; priority?: number },
  rows: readonly BatchMessage[],
  now: number,
): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < rows.length; i += 5000) {
    const chunk = rows
      .slice(i, i + 5000)
      .map((r) =>
        r.number === undefined
          ? [r.mobilePhone, r.message.toWellFormed(), r.segments, r.credits]
          : [r.mobilePhone, r.message.toWellFormed(), r.segments, r.credits, r.number],
      );
    const got = await insertFromJson.column(
      db,
      accountId,
      m.number,
      m.typeId,
      m.batchId,
      now,
      m.dueAt,
      m.mmsTemplateId,
      m.priority ?? 0,
      JSON.stringify(chunk),
    );
    // Ids of one statement are given in row order; RETURNING lists them in no promised order.
    ids.push(...got.map(Number).sort((a, b) => a - b));
  }
  return ids;
}

const members = prepareQuery((db, accountId: number, groupId: number) =>
  db
    .selectFrom('group_members')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('group_id', '=', groupId)
    .where('account_id', '=', accountId),
);

/** How many members the account's group has (opted out or not). */
export async function countGroupMembers(db: Db, accountId: number, groupId: number): Promise<number> {
  return Number((await members.first(db, accountId, groupId))?.n ?? 0);
}

const newBatch = prepareQuery((db, accountId: number, groupId: number, number: string, message: string, typeId: number, now: number) =>
  db
    .insertInto('batches')
    .values({ account_id: accountId, group_id: groupId, number, message, type_id: typeId, created_at: now })
    .returning('id'),
);

/** Starts a batch (counts 0); returns its id. */
export async function insertBatch(
  db: Db,
  accountId: number,
  b: { groupId: number; number: string; message: string; typeId: number },
  now: number,
): Promise<number> {
  return Number((await newBatch.first(db, accountId, b.groupId, b.number, b.message, b.typeId, now))!.id);
}

const finish = prepareQuery(
  (db, accountId: number, id: number, recipients: number, skipped: number, credits: number, number: string | null) =>
    db
      .updateTable('batches')
      .set((eb) => ({ recipients, skipped, credits, number: eb.fn.coalesce(eb.val(number), eb.ref('number')) }))
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .returning(BATCH_COLUMNS),
);

/** Writes a batch's counts; returns the batch. */
export async function finishBatch(
  db: Db,
  accountId: number,
  id: number,
  c: { recipients: number; skipped: number; credits: number; number?: string },
): Promise<BatchRow> {
  return (await finish.first(db, accountId, id, c.recipients, c.skipped, c.credits, c.number ?? null))!;
}

const batchExists = prepareQuery((db, accountId: number, id: number) =>
  db.selectFrom('batches').select('id').where('account_id', '=', accountId).where('id', '=', id),
);

/** True when the account has batch `id`. */
export async function hasBatch(db: Db, accountId: number, id: number): Promise<boolean> {
  return (await batchExists.first(db, accountId, id)) !== undefined;
}

// ------------------------------------------------------------------ sms/index

/** Filters of sms/index (API.md §10.6), already validated; `batchId` must be the account's. */
export interface MessageFilter {
  direction?: number;
  statusId?: number;
  /** Digits of the other party. */
  mobilePhone?: string;
  batchId?: number;
}

function filtered(db: Db, accountId: number, f: MessageFilter) {
  let q = db.selectFrom('messages').where('account_id', '=', accountId);
  if (f.direction !== undefined) q = q.where('direction', '=', f.direction);
  if (f.statusId !== undefined) q = q.where('status_id', '=', f.statusId);
  if (f.mobilePhone !== undefined) q = q.where('mobile_phone', '=', f.mobilePhone);
  if (f.batchId !== undefined) q = q.where('batch_id', '=', f.batchId);
  return q;
}

/** How many of the account's messages match the filter (an index range of the filter's columns). */
export async function countMessages(db: Db, accountId: number, f: MessageFilter): Promise<number> {
  const row = await filtered(db, accountId, f)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** One page of the account's messages matching the filter, newest first (Id descending). */
export async function listMessages(db: Db, accountId: number, f: MessageFilter, limit: number, offset: number): Promise<MessageRow[]> {
  return filtered(db, accountId, f).select(COLUMNS).orderBy('id', 'desc').limit(boundCount(limit)).offset(boundCount(offset)).execute();
}

// ------------------------------------------------------------------ numbers

const firstActive = prepareQuery((db, accountId: number) =>
  db
    .selectFrom('account_numbers as n')
    .leftJoin('account_settings as s', 's.account_id', 'n.account_id')
    .select(['n.id', 'n.number', 'n.max_per_day', 'n.max_recipients_per_month', 's.sender_selection'])
    .where('n.account_id', '=', accountId)
    .where('n.status_id', '=', 0)
    .orderBy('n.id')
    .limit(boundCount(1)),
);

/** The first Active number, its limits (API.md §17), and the account's SenderSelection (null: never set, `first`). */
export type FirstActiveNumber = Pick<Row<'account_numbers'>, 'id' | 'number' | 'max_per_day' | 'max_recipients_per_month'> & {
  sender_selection: 'first' | 'pool' | null;
};

/**
 * The account's first Active number in numbers/index order (id ascending), if any (API.md §10.6
 * `Number` default), with what a send needs to know of the sender pool (API.md §17) in the same
 * read: its limits and the account's SenderSelection.
 */
export async function firstActiveNumber(db: Db, accountId: number): Promise<FirstActiveNumber | undefined> {
  return firstActive.first(db, accountId);
}

/** A message that has already ended (the demo's history): its final status and times. */
export interface PastMessage extends Omit<NewMessage, 'dueAt' | 'batchId' | 'scheduledMessageId' | 'optOutExempt' | 'mmsTemplateId'> {
  /** Epoch seconds the carrier took it; null for one it never took (Failed, Rejected, Received). */
  sentAt: number | null;
  /** Epoch seconds of its delivery receipt; null unless Delivered. */
  deliveredAt: number | null;
  /** Why it ended Undelivered, Failed or Rejected (API.md §9.11); `''` otherwise. */
  errorCode: string;
}

/**
 * Adds a message in a final state (Delivered, Undelivered, Failed, Rejected or Received) created at
 * `createdAt` (epoch seconds): no `due_at`, lease or receipt, so neither the dispatcher nor the
 * receipt loop ever takes it. The caller debits (and for Failed or Rejected refunds) its credits.
 * @returns its id.
 */
export async function insertPastMessage(db: Db, accountId: number, m: PastMessage, createdAt: number): Promise<number> {
  const row = await db
    .insertInto('messages')
    .values({
      account_id: accountId,
      direction: m.direction,
      number: m.number,
      mobile_phone: m.mobilePhone,
      message: m.message,
      type_id: m.typeId,
      status_id: m.statusId,
      segments: m.segments,
      credits: m.credits,
      batch_id: null,
      scheduled_message_id: null,
      opt_out_exempt: 0,
      error_code: m.errorCode,
      created_at: createdAt,
      sent_at: m.sentAt,
      delivered_at: m.deliveredAt,
      due_at: null,
      lease_token: null,
      mms_template_id: null,
      carrier_message_id: null,
      receipt_status: null,
      receipt_error: null,
      receipt_due_at: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}
