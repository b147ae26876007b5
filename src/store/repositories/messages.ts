import { createAnchors } from '../anchors.ts';
import { boundCount, prepareQuery, sqliteText } from '../prepared.ts';
import { SCHEDULED_MESSAGE_COLUMNS as MESSAGE_COLUMNS, type ScheduledMessageRow } from '../../records/scheduled-messages.ts';
import { MESSAGE_STATUSES, MESSAGE_TYPE_MMS, MESSAGE_TYPES } from '../../records/statuses.ts';
import type { Db } from '../types.ts';

/** Scheduled single messages. */

/** The account's total and list version, kept by triggers (migration 002): no count over the rows. */
const totals = prepareQuery((db, accountId: number) =>
  db.selectFrom('list_totals').select(['scheduled_messages', 'scheduled_messages_version']).where('account_id', '=', accountId),
);

const pageAt = prepareQuery((db, accountId: number, limit: number, offset: number) =>
  db
    .selectFrom('scheduled_messages')
    .select(MESSAGE_COLUMNS)
    .where('account_id', '=', accountId)
    .orderBy('id')
    .limit(boundCount(limit))
    .offset(boundCount(offset)),
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

// Deep pages start from a cached anchor (src/store/anchors.ts), invalidated by the list version.
const startOf = createAnchors('scheduled_messages', async (db, accountId) =>
  Number((await totals.first(db, accountId))?.scheduled_messages_version ?? 0),
);

export async function countScheduledMessages(db: Db, accountId: number): Promise<number> {
  const row = await totals.first(db, accountId);
  return row ? Number(row.scheduled_messages) : 0;
}

/** SQL `CASE` giving the text of a code from `names` (API.md's descriptions), '' for any other code. */
export function sqlDescription(column: string, names: Readonly<Record<number, string>>): string {
  const quote = (text: string) => `'${text.replace(/'/g, "''")}'`;
  return `case ${column} ${Object.entries(names)
    .map(([code, name]) => `when ${Number(code)} then ${quote(name)}`)
    .join(' ')} else '' end`;
}

// API.md's Scheduled single message record built by SQLite (see listScheduledMessagesJson):
// the keys, values and order of scheduledMessageRecord (src/records/scheduled-messages.ts),
// DateTime rendered in UTC as `Y:m:d H:i:s`.
const scheduledRecordJson = `json_object('Id', "id", 'MobilePhone', "mobile_phone", 'Message', "message",
  'DateTime', strftime('%Y:%m:%d %H:%M:%S', "scheduled_at", 'unixepoch'),
  'Status_Id', "status_id", 'Status_Description', ${sqlDescription('"status_id"', MESSAGE_STATUSES)},
  'Type_Id', "type_id", 'Type_Description', ${sqlDescription('"type_id"', MESSAGE_TYPES)},
  'MmsTemplateId', case when "type_id" = ${MESSAGE_TYPE_MMS} and "mms_template_id" is not null then "mms_template_id" else '' end,
  'Subject', "subject")`;
const PAGE_COLUMNS = MESSAGE_COLUMNS.map((c) => `"${c}"`).join(', ');
const pageAtJson = `select coalesce(json_group_array(${scheduledRecordJson} order by "id"), '[]') from (select ${PAGE_COLUMNS} from "scheduled_messages" where "account_id" = ? order by "id" limit cast(? as integer) offset cast(? as integer))`;
const pageFromJson = `select coalesce(json_group_array(${scheduledRecordJson} order by "id"), '[]') from (select ${PAGE_COLUMNS} from "scheduled_messages" where "account_id" = ? and "id" >= ? order by "id" limit cast(? as integer) offset cast(? as integer))`;

/**
 * The page listScheduledMessages returns, as the JSON text of its records, built by SQLite
 * (json_group_array): no row objects, no record objects and no JSON.stringify on the event loop
 * (issue 15, "SQLite JSON aggregation for 100-row pages"; measured in bench/levers.ts). The same
 * bytes as the records written by JSON.stringify (test/store/perf-json-pages.test.ts), times in UTC.
 * Undefined where SQLite cannot answer it directly (PostgreSQL, or inside another transaction).
 */
export async function listScheduledMessagesJson(db: Db, accountId: number, limit: number, offset: number): Promise<string | undefined> {
  const start = await startOf(db, accountId, offset);
  return start
    ? sqliteText(db, pageFromJson, [accountId, start.fromId, limit, start.offset])
    : sqliteText(db, pageAtJson, [accountId, limit, offset]);
}

/**
 * One page of scheduled messages in id order. A page far into the list starts from the nearest
 * cached anchor at or before `offset` (`id >= anchor … OFFSET < 1000`) instead of stepping over
 * `offset` rows: a page near the end of a million messages costs about what page 1 does.
 */
export async function listScheduledMessages(db: Db, accountId: number, limit: number, offset: number): Promise<ScheduledMessageRow[]> {
  const start = await startOf(db, accountId, offset);
  return start ? pageFrom.all(db, accountId, start.fromId, limit, start.offset) : pageAt.all(db, accountId, limit, offset);
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
