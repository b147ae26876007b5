/**
 * Shared pieces of the recurring schedule suites (API.md §10.6 `RRule`, API.md §11.7): the record
 * of `schedule`, `view-scheduled` and `update-scheduled` (API.md §9.10's fields, then `RRule`)
 * built from the raw row, and the messages a scheduled message became.
 */
import type { TestApp } from './app.ts';
import { scheduledFromDb } from './scheduled.ts';

/** The record of schedule / view-scheduled / update-scheduled: API.md §9.10's fields, then `RRule` (the stored rule, '' when none). */
export async function recordFromDb(ctx: Pick<TestApp, 'store'>, id: number, tz = 'UTC') {
  const row = await ctx.store.db.selectFrom('scheduled_messages').select('rrule').where('id', '=', id).executeTakeFirstOrThrow();
  return { ...(await scheduledFromDb(ctx, id, tz)), RRule: row.rrule };
}

/** The messages of the log a scheduled message became, in id order: text, status, credits, time created (epoch seconds). */
export async function occurrencesOf(ctx: Pick<TestApp, 'store'>, scheduledId: number) {
  const rows = await ctx.store.db
    .selectFrom('messages')
    .select(['id', 'message', 'status_id', 'credits', 'segments', 'created_at', 'error_code'])
    .where('scheduled_message_id', '=', scheduledId)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    message: r.message,
    status: r.status_id,
    credits: Number(r.credits),
    segments: r.segments,
    at: Number(r.created_at),
    errorCode: r.error_code,
  }));
}
