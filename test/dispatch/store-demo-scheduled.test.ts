/**
 * The demo account's scheduled messages are made by the rules real ones are made by (src/domain/demo.ts,
 * through sms/schedule's scheduleMessageIn), on each store: right after createDemoAccount they are
 * 1 Pending, managed, nothing reserved, their check due at once, exactly as a message scheduled over
 * HTTP; one round of the scheduler's check leaves none Pending: Approved and Scheduled with their
 * cost reserved, or Action Required with a reason that is true of the account (a recipient who really
 * opted out); and the real loop (the one `serve` runs) checks them within a second.
 */
import assert from 'node:assert/strict';
import { createScheduler } from '../../src/dispatch/index.ts';
import { createManualClock, systemClock } from '../../src/lib/time.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { call } from '../helpers/operations.ts';
import { testScheduler } from '../helpers/scheduled.ts';
import { balanceOf } from '../helpers/sms.ts';
import { storeTest } from '../helpers/stores.ts';

/** Every scheduled row of the account, with the state the service keeps beside the record. */
async function rowsOf(ctx: TestApp, accountId: number) {
  const rows = await ctx.store.db
    .selectFrom('scheduled_messages')
    .select(['id', 'status_id', 'type_id', 'reserved_credits', 'check_reason', 'due_at', 'number', 'mobile_phone', 'mms_template_id'])
    .where('account_id', '=', accountId)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({
    ...r,
    reserved_credits: r.reserved_credits === null ? null : Number(r.reserved_credits),
    due_at: r.due_at === null ? null : Number(r.due_at),
  }));
}

/**
 * Whether `reason` is true of the row now, read from the database on its own (not through the
 * scheduler's query): the recipient an opted-out contact of the account, the number not an Active
 * number of the account, the template of an MMS without media, the balance short of its cost.
 */
async function reasonHolds(ctx: TestApp, accountId: number, row: Awaited<ReturnType<typeof rowsOf>>[number], reason: string) {
  const db = ctx.store.db;
  switch (reason) {
    case 'OPTED_OUT':
      return (
        (await db
          .selectFrom('contacts')
          .select('id')
          .where('account_id', '=', accountId)
          .where('number', '=', row.mobile_phone)
          .where('opted_out', '=', 1)
          .executeTakeFirst()) !== undefined
      );
    case 'NUMBER_INACTIVE':
      return (
        (await db
          .selectFrom('account_numbers')
          .select('id')
          .where('account_id', '=', accountId)
          .where('number', '=', row.number)
          .where('status_id', '=', 0)
          .executeTakeFirst()) === undefined
      );
    case 'NO_MEDIA':
      return (
        row.type_id === 2 &&
        (await db
          .selectFrom('mms_template_media')
          .select('media_id')
          .where('account_id', '=', accountId)
          .where('template_id', '=', row.mms_template_id ?? 0)
          .executeTakeFirst()) === undefined
      );
    case 'NO_CREDITS':
      return (await balanceOf(ctx, accountId)) < (row.type_id === 2 ? 3 : 1);
    default:
      return false;
  }
}

storeTest(
  'demo: its scheduled messages are Pending and due as sms/schedule makes them; one check leaves none Pending, every Action Required one with a true reason',
  async (t) => {
    const clock = createManualClock();
    const ctx = await buildTestApp(t, {}, { clock });
    const demo = await ctx.seed();

    // As made: managed (nothing reserved, not NULL), 1 Pending, due for their check now, from an Active number.
    const made = await rowsOf(ctx, demo.account.id);
    assert.equal(made.length, demo.scheduledMessages.length);
    assert.ok(made.length >= 4);
    for (const r of made) {
      assert.deepEqual([r.status_id, r.reserved_credits, r.check_reason, r.due_at], [1, 0, '', clock.nowMs()], `row ${r.id} as made`);
      assert.equal(r.number, '55155', 'from the first Active number, as schedule resolves a blank Number');
    }
    assert.deepEqual(
      demo.scheduledMessages.map((m) => [m.Status_Id, m.Status_Description]),
      made.map(() => [1, 'Pending']),
    );
    // The records are those of the API's own list.
    assert.deepEqual(
      JSON.parse((await call(ctx.app, { path: '/v1/sms/single-schedule-messages', token: demo.token })).body),
      demo.scheduledMessages,
    );
    const start = await balanceOf(ctx, demo.account.id);

    const round = await testScheduler(ctx, clock).runOnce();
    assert.equal(round.claimed, made.length, 'every one of them is due for the check at once');
    const checked = await rowsOf(ctx, demo.account.id);
    assert.equal(checked.filter((r) => r.status_id === 1).length, 0, 'none is Pending after the check');
    let reserved = 0;
    for (const r of checked) {
      if (r.status_id === 3) {
        assert.equal(r.check_reason, '');
        assert.equal(r.reserved_credits, r.type_id === 2 ? 3 : 1, `row ${r.id}: its cost reserved`);
        reserved += r.reserved_credits ?? 0;
        for (const reason of ['OPTED_OUT', 'NUMBER_INACTIVE', 'NO_MEDIA'])
          assert.equal(await reasonHolds(ctx, demo.account.id, r, reason), false, `row ${r.id} approved, yet ${reason}`);
      } else {
        assert.equal(r.status_id, 2);
        assert.notEqual(r.check_reason, '', `row ${r.id}: Action Required with a reason`);
        assert.equal(await reasonHolds(ctx, demo.account.id, r, r.check_reason), true, `row ${r.id}: ${r.check_reason} is true`);
        assert.equal(r.reserved_credits, 0);
      }
    }
    // Both types in both outcomes: the demo shows what the check does.
    for (const type of [1, 2])
      for (const status of [2, 3])
        assert.ok(
          checked.some((r) => r.type_id === type && r.status_id === status),
          `type ${type} status ${status}`,
        );
    assert.equal(await balanceOf(ctx, demo.account.id), start - reserved, 'the approved ones reserved their cost, and only they');
    // The API shows the outcome.
    const listed = JSON.parse((await call(ctx.app, { path: '/v1/sms/single-schedule-messages', token: demo.token })).body) as {
      Id: number;
      Status_Id: number;
    }[];
    assert.deepEqual(
      listed.map((m) => [m.Id, m.Status_Id]),
      checked.map((r) => [r.id, r.status_id]),
    );
  },
);

storeTest('demo: the real loop (serve and worker run it) checks the demo account’s scheduled messages within a second', async (t) => {
  const ctx = await buildTestApp(t);
  const scheduler = createScheduler(ctx.config, ctx.store, { clock: systemClock });
  scheduler.start();
  t.after(() => scheduler.stop());
  const demo = await ctx.seed();
  const started = Date.now();
  for (;;) {
    const rows = await rowsOf(ctx, demo.account.id);
    if (rows.every((r) => r.status_id !== 1)) break;
    if (Date.now() - started > 1000) assert.fail(`still Pending after a second: ${rows.filter((r) => r.status_id === 1).length}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  await scheduler.stop();
  for (const r of await rowsOf(ctx, demo.account.id)) {
    if (r.status_id === 2) assert.equal(await reasonHolds(ctx, demo.account.id, r, r.check_reason), true, `${r.check_reason} is true`);
  }
});
