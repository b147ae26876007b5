/**
 * Shared pieces of the scheduled message suites (API.md §10.6, from `schedule` to the end of
 * API.md §10.6): the scheduled single message record built from the raw row and API.md's tables (never
 * from src's mapper), the state the service keeps beside it, a scheduler on a manual clock, and
 * the three DateTime forms of an instant.
 */
import assert from 'node:assert/strict';
import type { TestApp } from './app.ts';
import { call, fmtSchedule, fmtTime } from './operations.ts';
import { Scheduler, type SchedulerOptions } from '../../src/dispatch/scheduler.ts';
import type { ManualClock } from '../../src/lib/time.ts';

const STATUS: Record<number, string> = { 1: 'Pending', 2: 'Action Required', 3: 'Approved and Scheduled' };
const TYPE: Record<number, string> = { 1: 'SMS', 2: 'MMS' };

export const SCHEDULE = '/v1/sms/schedule';
export const VIEW = '/v1/sms/view-scheduled';
export const UPDATE = '/v1/sms/update-scheduled';
export const CANCEL = '/v1/sms/cancel-scheduled';
export const LIST = '/v1/sms/single-schedule-messages';

/** API.md's scheduled single message record of a stored row (fields in API.md's order). */
export async function scheduledFromDb(ctx: Pick<TestApp, 'store'>, id: number, tz = 'UTC') {
  const r = await ctx.store.db.selectFrom('scheduled_messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  return {
    Id: r.id,
    MobilePhone: r.mobile_phone,
    Message: r.message,
    DateTime: fmtSchedule(Number(r.scheduled_at), tz),
    Status_Id: r.status_id,
    Status_Description: STATUS[r.status_id]!,
    Type_Id: r.type_id,
    Type_Description: TYPE[r.type_id]!,
    MmsTemplateId: r.type_id === 2 && r.mms_template_id !== null ? r.mms_template_id : '',
    Subject: r.subject,
  };
}

/** What the service keeps beside the record (migration 005), or undefined when the row is gone. */
export async function stateOf(ctx: Pick<TestApp, 'store'>, id: number) {
  const r = await ctx.store.db
    .selectFrom('scheduled_messages')
    .select(['status_id', 'reserved_credits', 'check_reason', 'number', 'due_at', 'scheduled_at'])
    .where('id', '=', id)
    .executeTakeFirst();
  if (!r) return undefined;
  return {
    status: r.status_id,
    reserved: r.reserved_credits === null ? null : Number(r.reserved_credits),
    reason: r.check_reason,
    number: r.number,
    dueAt: r.due_at === null ? null : Number(r.due_at),
    scheduledAt: Number(r.scheduled_at),
  };
}

/** The last scheduled message id of an account. */
export async function lastScheduledId(ctx: Pick<TestApp, 'store'>, accountId: number): Promise<number> {
  const r = await ctx.store.db
    .selectFrom('scheduled_messages')
    .select('id')
    .where('account_id', '=', accountId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirstOrThrow();
  return r.id;
}

/** A scheduler over the store on the given clock (drained by hand in tests). */
export function testScheduler(
  ctx: Pick<TestApp, 'store'>,
  clock: ManualClock,
  options: Partial<Omit<SchedulerOptions, 'store' | 'clock'>> = {},
): Scheduler {
  return new Scheduler({
    store: ctx.store,
    clock,
    prices: options.prices ?? { smsSegmentCredits: 1, mmsCredits: 3 },
    batchSize: options.batchSize ?? 100,
    leaseMs: options.leaseMs ?? 30_000,
    pollMs: options.pollMs ?? 5,
    ...(options.log ? { log: options.log } : {}),
  });
}

/** The three DateTime forms of an instant (epoch seconds): colons and dashes in `tz`, and ISO 8601 UTC `Z`. */
export function dateTimeForms(epochSeconds: number, tz = 'UTC') {
  return {
    colons: fmtSchedule(epochSeconds, tz),
    dashes: fmtTime(epochSeconds, tz),
    iso: new Date(epochSeconds * 1000).toISOString().replace('.000Z', 'Z'),
  };
}

/** Schedules one message through the API (JSON) and returns its Id; asserts the 201. */
export async function schedule(ctx: TestApp, token: string, body: Record<string, unknown>): Promise<number> {
  const res = await call(ctx.app, { method: 'POST', path: SCHEDULE, token, body });
  assert.equal(res.statusCode, 201, `${JSON.stringify(body)}: ${res.body}`);
  return (JSON.parse(res.body) as { Id: number }).Id;
}

/**
 * Cancels every scheduled message of the demo account through `cancel-scheduled` (the API's own
 * path), so that a scheduler's rounds hold only the test's own messages: the demo's are made as
 * sms/schedule makes them, due for their check at once (src/domain/demo.ts). Nothing was reserved
 * yet (they are Pending until a check), so the balance stays as the demo left it.
 */
export async function cancelDemoScheduled(ctx: TestApp, demo: { token: string; scheduledMessages: readonly { Id: number }[] }) {
  for (const m of demo.scheduledMessages) {
    const res = await call(ctx.app, { method: 'DELETE', path: CANCEL, token: demo.token, query: `id=${m.Id}` });
    assert.equal(res.statusCode, 204, res.body);
  }
}
