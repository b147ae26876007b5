import { sql } from 'kysely';
import { leaseClaim } from '../claim.ts';
import { jsonIds, prepareQuery } from '../prepared.ts';
import { SCHEDULED_MESSAGE_COLUMNS, type ScheduledMessageRow } from '../../records/scheduled-messages.ts';
import type { Row } from '../tables.ts';
import type { Db } from '../types.ts';

/**
 * Scheduled messages that live (API.md §10.6; migration 005): the writes of `sms/schedule`,
 * `update-scheduled` and `cancel-scheduled`, and the scheduler's claim, checks and sends
 * (src/dispatch/scheduler.ts). Times: `scheduled_at` in epoch seconds, `due_at`, `now`, `lease` in
 * epoch milliseconds. Every API query is scoped to the account.
 *
 * Lock order (PostgreSQL), the same on every path that touches credits, so none can deadlock
 * another: the account's `credit_balances` row first (a debit, a refund, or `lockCredits`), then
 * its scheduled rows, then `list_totals` (by the 002 triggers on insert and delete).
 */

// Beside the record's: the account, the account number it goes from ('' on a row never managed)
// and the credits debited while Approved (0 while Pending or Action Required; null: never managed);
// the recurrence (migration 015: the rule as sent, shown as RRule; its DTSTART, zone and the
// number of the occurrence due next) and whether links are shortened.
const STATE_COLUMNS = [
  ...SCHEDULED_MESSAGE_COLUMNS,
  'account_id',
  'number',
  'reserved_credits',
  'rrule',
  'rrule_start',
  'rrule_zone',
  'rrule_occurrence',
  'shorten_links',
  'priority',
] as const;

/** A scheduled message with what the service keeps beside its record (migration 005). */
export type ScheduledStateRow = ScheduledMessageRow & Pick<Row<'scheduled_messages'>, (typeof STATE_COLUMNS)[number]>;

function toState(r: ScheduledStateRow): ScheduledStateRow {
  return {
    ...r,
    scheduled_at: Number(r.scheduled_at),
    reserved_credits: r.reserved_credits === null ? null : Number(r.reserved_credits),
    rrule_start: r.rrule_start === null ? null : Number(r.rrule_start),
    rrule_occurrence: Number(r.rrule_occurrence),
    shorten_links: Number(r.shorten_links),
  };
}

const byId = prepareQuery((db, accountId: number, id: number) =>
  db.selectFrom('scheduled_messages').select(STATE_COLUMNS).where('account_id', '=', accountId).where('id', '=', id),
);

/** The account's scheduled message `id` with its state, if any. */
export async function findScheduled(db: Db, accountId: number, id: number): Promise<ScheduledStateRow | undefined> {
  const row = await byId.first(db, accountId, id);
  return row ? toState(row) : undefined;
}

/** The fields a schedule or an update writes. */
export interface ScheduledFields {
  mobilePhone: string;
  message: string;
  /** Epoch seconds. */
  scheduledAt: number;
  typeId: number;
  mmsTemplateId: number | null;
  subject: string;
  number: string;
  // Migration 015; left out: a message that does not recur, links left alone.
  /** The recurrence rule as sent, '' for none. */
  rrule?: string;
  /** Epoch seconds of occurrence 1 (DTSTART); null when it does not recur. */
  rruleStart?: number | null;
  /** The zone of the occurrences' wall-clock time; '' when it does not recur. */
  rruleZone?: string;
  /** The number of the occurrence `scheduledAt` stands for (1 when it does not recur). */
  rruleOccurrence?: number;
  shortenLinks?: boolean;
  /** API.md §17 Priority of its messages (0 or 1); default 0. */
  priority?: number;
}

const insert = prepareQuery(
  (
    db,
    accountId: number,
    mobilePhone: string,
    message: string,
    scheduledAt: number,
    typeId: number,
    mmsTemplateId: number | null,
    subject: string,
    number: string,
    now: number,
    dueAt: number,
    rrule: string,
    rruleStart: number | null,
    rruleZone: string,
    rruleOccurrence: number,
    shortenLinks: number,
    priority: number,
  ) =>
    db
      .insertInto('scheduled_messages')
      .values({
        account_id: accountId,
        mobile_phone: mobilePhone,
        message,
        scheduled_at: scheduledAt,
        status_id: 1,
        type_id: typeId,
        mms_template_id: mmsTemplateId,
        subject,
        created_at: now,
        number,
        reserved_credits: 0,
        due_at: dueAt,
        lease_token: null,
        check_reason: '',
        rrule,
        rrule_start: rruleStart,
        rrule_zone: rruleZone,
        rrule_occurrence: rruleOccurrence,
        shorten_links: shortenLinks,
        priority,
      })
      .returning(STATE_COLUMNS),
);

/**
 * Adds a managed scheduled message, 1 Pending with nothing reserved, its check due at `dueAt`
 * (epoch ms). `now` is created_at (epoch seconds).
 */
export async function insertScheduled(
  db: Db,
  accountId: number,
  f: ScheduledFields,
  now: number,
  dueAt: number,
): Promise<ScheduledStateRow> {
  const row = await insert.first(
    db,
    accountId,
    f.mobilePhone,
    f.message,
    f.scheduledAt,
    f.typeId,
    f.mmsTemplateId,
    f.subject,
    f.number,
    now,
    dueAt,
    f.rrule ?? '',
    f.rruleStart ?? null,
    f.rruleZone ?? '',
    f.rruleOccurrence ?? 1,
    f.shortenLinks ? 1 : 0,
    f.priority ?? 0,
  );
  return toState(row as ScheduledStateRow);
}

const update = prepareQuery(
  (
    db,
    accountId: number,
    id: number,
    mobilePhone: string,
    message: string,
    scheduledAt: number,
    typeId: number,
    mmsTemplateId: number | null,
    subject: string,
    number: string,
    dueAt: number,
    rrule: string,
    rruleStart: number | null,
    rruleZone: string,
    rruleOccurrence: number,
    shortenLinks: number,
    priority: number,
  ) =>
    db
      .updateTable('scheduled_messages')
      .set({
        mobile_phone: mobilePhone,
        message,
        scheduled_at: scheduledAt,
        type_id: typeId,
        mms_template_id: mmsTemplateId,
        subject,
        number,
        status_id: 1,
        reserved_credits: 0,
        due_at: dueAt,
        lease_token: null,
        check_reason: '',
        rrule,
        rrule_start: rruleStart,
        rrule_zone: rruleZone,
        rrule_occurrence: rruleOccurrence,
        shorten_links: shortenLinks,
        priority,
      })
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .returning(STATE_COLUMNS),
);

/**
 * Rewrites a scheduled message after an update: the fields, and 1 Pending with nothing reserved
 * (the caller released the reservation in the same transaction), its check due at `dueAt`; any
 * scheduler claim on it is dropped (its outcome will not be written).
 * @returns the row, or undefined when it no longer exists (sent or cancelled meanwhile).
 */
export async function rewriteScheduled(
  db: Db,
  accountId: number,
  id: number,
  f: ScheduledFields,
  dueAt: number,
): Promise<ScheduledStateRow | undefined> {
  const row = await update.first(
    db,
    accountId,
    id,
    f.mobilePhone,
    f.message,
    f.scheduledAt,
    f.typeId,
    f.mmsTemplateId,
    f.subject,
    f.number,
    dueAt,
    f.rrule ?? '',
    f.rruleStart ?? null,
    f.rruleZone ?? '',
    f.rruleOccurrence ?? 1,
    f.shortenLinks ? 1 : 0,
    f.priority ?? 0,
  );
  return row ? toState(row) : undefined;
}

const remove = prepareQuery((db, accountId: number, id: number) =>
  db.deleteFrom('scheduled_messages').where('account_id', '=', accountId).where('id', '=', id).returning(['reserved_credits']),
);

/**
 * Deletes the account's scheduled message `id`.
 * @returns its reserved credits (0 when none or never managed), or undefined when there was no such row.
 */
export async function deleteScheduled(db: Db, accountId: number, id: number): Promise<number | undefined> {
  const row = await remove.first(db, accountId, id);
  return row ? Number(row.reserved_credits ?? 0) : undefined;
}

const lock = prepareQuery((db, accountId: number) =>
  db
    .updateTable('credit_balances')
    .set((eb) => ({ updated_at: eb.ref('updated_at') }))
    .where('account_id', '=', accountId),
);

/**
 * Takes the account's balance row lock without changing it (PostgreSQL; on SQLite the
 * transaction already holds the write lock): the first step of every write that releases or
 * reserves a scheduled message's credits (see the lock order above).
 */
export async function lockCredits(db: Db, accountId: number): Promise<void> {
  await lock.run(db, accountId);
}

/**
 * Of the account's managed scheduled MMS that are Pending or Approved and Scheduled, those whose
 * template holds no medium (all deleted, or the template deleted) are made 1 Pending with nothing
 * reserved, their check due at `dueAt` (epoch ms), any scheduler claim on them dropped, as an
 * update does (src/domain/mms-templates.ts recheckScheduledWithoutMedia). The caller holds the
 * balance row (lockCredits), so no reservation of the account changes between the read and the
 * write, and releases what they had reserved in the same transaction.
 * @returns the credits they had reserved.
 */
export async function recheckWithoutMedia(db: Db, accountId: number, dueAt: number): Promise<number> {
  const rows = await db
    .selectFrom('scheduled_messages')
    .select(['id', 'reserved_credits'])
    .where('account_id', '=', accountId)
    .where('type_id', '=', 2)
    .where('status_id', 'in', [1, 3])
    .where('reserved_credits', 'is not', null)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('mms_template_media as tm')
            .select('tm.media_id')
            .where('tm.account_id', '=', accountId)
            .whereRef('tm.template_id', '=', 'scheduled_messages.mms_template_id'),
        ),
      ),
    )
    .execute();
  if (rows.length === 0) return 0;
  await db
    .updateTable('scheduled_messages')
    .set({ status_id: 1, reserved_credits: 0, due_at: dueAt, lease_token: null, check_reason: '' })
    .where('account_id', '=', accountId)
    .where(
      'id',
      'in',
      rows.map((r) => r.id),
    )
    .execute();
  return rows.reduce((sum, r) => sum + Number(r.reserved_credits ?? 0), 0);
}

// ------------------------------------------------------------------ the scheduler

const CLAIM_RETURNING = [
  'id',
  'account_id',
  'number',
  'mobile_phone',
  'message',
  'type_id',
  'status_id',
  'scheduled_at',
  'reserved_credits',
  'mms_template_id',
  'rrule',
  'rrule_start',
  'rrule_zone',
  'rrule_occurrence',
  'shorten_links',
  'priority',
] as const;

/** A claimed scheduled message: what a check and a send need (`scheduled_at` epoch seconds; no reservation reads as 0). */
export type ClaimedScheduled = Omit<Pick<Row<'scheduled_messages'>, (typeof CLAIM_RETURNING)[number]>, 'reserved_credits'> & {
  reserved_credits: number;
};

function toClaimed(r: Pick<Row<'scheduled_messages'>, (typeof CLAIM_RETURNING)[number]>): ClaimedScheduled {
  return {
    ...r,
    scheduled_at: Number(r.scheduled_at),
    reserved_credits: Number(r.reserved_credits ?? 0),
    rrule_start: r.rrule_start === null ? null : Number(r.rrule_start),
    rrule_occurrence: Number(r.rrule_occurrence),
    shorten_links: Number(r.shorten_links),
  };
}

const claim = leaseClaim<Pick<Row<'scheduled_messages'>, (typeof CLAIM_RETURNING)[number]>>('scheduled_messages', CLAIM_RETURNING, false);

/**
 * Claims up to `limit` scheduled messages with work due (`due_at <= now`: a check, a DateTime, an
 * expired lease) for `token`, leased until `leaseUntil`, in ONE statement per store, committed on
 * return: PostgreSQL picks the rows `FOR UPDATE SKIP LOCKED` (rows another scheduler is claiming
 * are skipped), SQLite runs one `UPDATE … WHERE id IN (SELECT … LIMIT n) RETURNING` (one writer at
 * a time). No two schedulers hold the same row.
 */
export async function claimDueScheduled(
  db: Db,
  now: number,
  limit: number,
  leaseUntil: number,
  token: string,
): Promise<ClaimedScheduled[]> {
  const rows = await claim(db, now, limit, leaseUntil, token);
  return rows.map(toClaimed);
}

const blocked = prepareQuery((db, idsJson: string) => ({
  compile: () =>
    sql`select s.id as id,
          case
            when not exists (
              select 1 from account_numbers n where n.account_id = s.account_id and n.status_id = 0 and (n.number = s.number or s.number = ''))
            then 'NUMBER_INACTIVE'
            when exists (
              select 1 from contacts c where c.account_id = s.account_id and c.number_e164 = '+' || s.mobile_phone and c.opted_out = 1)
            then 'OPTED_OUT'
            when s.type_id = 2 and not exists (
              select 1 from mms_template_media tm where tm.account_id = s.account_id and tm.template_id = s.mms_template_id)
            then 'NO_MEDIA'
          end as reason
        from scheduled_messages s where s.id in ${jsonIds(db, idsJson)}`.compile(db),
}));

/**
 * Of the given scheduled messages, those that cannot be approved (API.md §10.6): the number
 * is not an Active number of the account, or (none stored: a sender pool's, API.md §17) the
 * account has no Active number (`NUMBER_INACTIVE`), the recipient is an opted-out
 * contact of the account (`OPTED_OUT`), or it is an MMS whose template holds no medium any more,
 * or is gone (`NO_MEDIA`, API.md §10.7: a template whose media have all been deleted cannot be
 * sent). The first that applies, in this order.
 */
export async function findBlockedScheduled(db: Db, ids: readonly number[]): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  if (ids.length === 0) return out;
  for (const r of (await blocked.all(db, JSON.stringify(ids))) as { id: number; reason: string | null }[]) {
    if (r.reason) out.set(Number(r.id), r.reason);
  }
  return out;
}

const checked = prepareQuery((db, id: number, token: string, statusId: number, reserved: number, dueAt: number | null, reason: string) =>
  db
    .updateTable('scheduled_messages')
    .set({ status_id: statusId, reserved_credits: reserved, due_at: dueAt, lease_token: null, check_reason: reason })
    .where('id', '=', id)
    .where('lease_token', '=', token),
);

/**
 * Writes the outcome of a check, if `token` still holds the row: 3 Approved and Scheduled with
 * `reserved` credits, due at its DateTime (`dueAt`, epoch ms); or 2 Action Required with nothing
 * reserved, waiting (`dueAt` null) for credits or an update, `reason` kept.
 * @returns false when the claim was lost (updated or cancelled meanwhile): nothing written.
 */
export async function markChecked(
  db: Db,
  id: number,
  token: string,
  statusId: 2 | 3,
  reserved: number,
  dueAt: number | null,
  reason: string,
): Promise<boolean> {
  return (await checked.run(db, id, token, statusId, reserved, dueAt, reason)) === 1;
}

const putBack = prepareQuery((db, id: number, token: string, dueAt: number | null) =>
  db.updateTable('scheduled_messages').set({ due_at: dueAt, lease_token: null }).where('id', '=', id).where('lease_token', '=', token),
);

/** Lets go of a claimed row unchanged, due again at `dueAt` (epoch ms; null: waiting), if `token` still holds it. */
export async function releaseClaim(db: Db, id: number, token: string, dueAt: number | null): Promise<boolean> {
  return (await putBack.run(db, id, token, dueAt)) === 1;
}

const take = prepareQuery((db, accountId: number, idsJson: string, token: string) => ({
  compile: () =>
    sql`delete from scheduled_messages
        where account_id = ${accountId} and lease_token = ${token} and status_id = 3 and id in ${jsonIds(db, idsJson)}
        returning ${sql.raw(CLAIM_RETURNING.join(', '))}`.compile(db),
}));

/**
 * Removes from the scheduled list the account's Approved messages of this claim that `token`
 * still holds (one statement per account: the 002 triggers then lock one `list_totals` row).
 * @returns the rows removed, to be queued as messages in the same transaction.
 */
export async function takeForSending(db: Db, accountId: number, ids: readonly number[], token: string): Promise<ClaimedScheduled[]> {
  if (ids.length === 0) return [];
  const rows = (await take.all(db, accountId, JSON.stringify(ids), token)) as ClaimedScheduled[];
  return rows.map(toClaimed);
}

const advance = prepareQuery((db, id: number, token: string, fromStatus: number, scheduledAt: number, occurrence: number, dueAt: number) =>
  db
    .updateTable('scheduled_messages')
    .set({
      scheduled_at: scheduledAt,
      rrule_occurrence: occurrence,
      status_id: 1,
      reserved_credits: 0,
      due_at: dueAt,
      lease_token: null,
      check_reason: '',
    })
    .where('id', '=', id)
    .where('lease_token', '=', token)
    .where('status_id', '=', fromStatus),
);

/**
 * Moves a recurring message of this claim to its next occurrence, if `token` still holds it in
 * status `fromStatus` (3: its occurrence is being sent, in the transaction that queues it; 2: an
 * Action Required occurrence whose time passed): `scheduled_at` and the occurrence's number, then
 * 1 Pending with nothing reserved (the caller settled the reservation in the same transaction),
 * its check due at `dueAt` (epoch ms). The row stays in the list (no `list_totals` change).
 * @returns false when the claim was lost (updated, cancelled or taken meanwhile): nothing written.
 */
export async function advanceOccurrence(
  db: Db,
  id: number,
  token: string,
  fromStatus: 2 | 3,
  next: { scheduledAt: number; occurrence: number },
  dueAt: number,
): Promise<boolean> {
  return (await advance.run(db, id, token, fromStatus, next.scheduledAt, next.occurrence, dueAt)) === 1;
}
