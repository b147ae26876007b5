/**
 * MaxPerDay and scheduled messages (docs/API.md §16; src/dispatch/scheduler.ts, src/domain/quotas.ts)
 * on each store, on a manual clock, the service zone America/New_York, with the scheduler as the
 * server builds it (createScheduler: the zone from MSGSVC_TIMEZONE): scheduling counts nothing and
 * is accepted whatever the day's count; an occurrence counts on the day (of the service's zone) it
 * is queued; one that comes when the day's limit is reached ends Rejected `DAILY_LIMIT` (logged, its
 * Credits its price, the reservation refunded, `message.rejected` emitted, not counted), the others
 * of the same round in id order until the limit; a recurring message moves on to its next
 * occurrence; an occurrence Rejected `NO_CREDITS` is not counted, and one both over the limit and
 * short of credits is `DAILY_LIMIT`; a round racing an API send for the last room of the day: exactly
 * one of them gets it. The ledger adds up throughout.
 */
import assert from 'node:assert/strict';
import type { DemoAccount } from '../../src/domain/demo.ts';
import { createScheduler } from '../../src/dispatch/index.ts';
import { parseScheduleDateTime } from '../../src/domain/schedule-time.ts';
import { createManualClock, type ManualClock } from '../../src/lib/time.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { assertLedgerAddsUp } from '../helpers/ledger.ts';
import { assert422, call, fieldError } from '../helpers/operations.ts';
import { occurrencesOf } from '../helpers/recurring.ts';
import { cancelDemoScheduled, schedule, stateOf } from '../helpers/scheduled.ts';
import { balanceOf, setBalance } from '../helpers/sms.ts';
import { storeTest } from '../helpers/stores.ts';

const ZONE = 'America/New_York';
const RECIPIENT = '+15551234567';
const SEND = '/v1/sms/send';
/** Wednesday 2026-06-10 08:00 in New York (12:00 UTC). */
const START = Date.UTC(2026, 5, 10, 12, 0, 0);

/** Epoch ms of a wall-clock time in New York. */
const at = (wall: string) => parseScheduleDateTime(wall, ZONE)!;

async function setup(t: { after(fn: () => unknown): void }) {
  const clock = createManualClock(START);
  const ctx = await buildTestApp(t, { MSGSVC_TIMEZONE: ZONE }, { clock });
  const demo = await ctx.seed();
  // The demo's own scheduled messages are checked and sent like any: cancelled, so that the rounds
  // below hold this test's messages only.
  await cancelDemoScheduled(ctx, demo);
  const scheduler = createScheduler(ctx.config, ctx.store, { clock });
  return { ctx, demo, clock, scheduler };
}

function setMaxPerDay(ctx: Pick<TestApp, 'store'>, accountId: number, n: number) {
  return ctx.store.db.updateTable('accounts').set({ max_per_day: n }).where('id', '=', accountId).execute();
}

async function counted(ctx: Pick<TestApp, 'store'>, accountId: number, day: string): Promise<number> {
  const r = await ctx.store.db
    .selectFrom('account_day_counts')
    .select('messages')
    .where('account_id', '=', accountId)
    .where('day', '=', day)
    .executeTakeFirst();
  return r ? Number(r.messages) : 0;
}

const dailyLimit = (n: number) => [fieldError('Message', `Daily limit of ${n.toLocaleString('en-US')} messages reached.`)];

function sendNow(ctx: TestApp, demo: DemoAccount, body: Record<string, unknown> = {}) {
  return call(ctx.app, { method: 'POST', path: SEND, token: demo.token, body: { MobilePhone: RECIPIENT, Message: 'now', ...body } });
}

function scheduleAt(ctx: TestApp, demo: DemoAccount, wall: string, body: Record<string, unknown> = {}) {
  return schedule(ctx, demo.token, { MobilePhone: RECIPIENT, Message: 'later', DateTime: wall, ...body });
}

/** [Status_Id, ErrorCode, Credits] of each message a scheduled message became. */
async function outcomes(ctx: TestApp, scheduledId: number) {
  return (await occurrencesOf(ctx, scheduledId)).map((o) => [o.status, o.errorCode, o.credits]);
}

/** Runs the scheduler at `wall` (New York). */
async function runAt(clock: ManualClock, scheduler: ReturnType<typeof createScheduler>, wall: string) {
  clock.set(at(wall));
  return scheduler.drain();
}

storeTest(
  'an occurrence counts on the day it is queued; past the limit it ends Rejected DAILY_LIMIT, refunded, with message.rejected; scheduling counts nothing',
  async (t) => {
    const { ctx, demo, clock, scheduler } = await setup(t);
    const id = demo.account.id;
    const hook = await call(ctx.app, {
      method: 'POST',
      path: '/v1/webhooks/create',
      token: demo.token,
      body: { Url: 'https://example.com/hook', Events: ['message.rejected'] },
    });
    assert.equal(hook.statusCode, 201, hook.body);
    await setMaxPerDay(ctx, id, 2);
    const start = await balanceOf(ctx, id);
    const a = await scheduleAt(ctx, demo, '2026-06-10 10:00:00');
    const b = await scheduleAt(ctx, demo, '2026-06-10 10:00:00', { Message: 'b'.repeat(200) }); // 2 segments
    const tomorrow = await scheduleAt(ctx, demo, '2026-06-11 10:00:00');
    await scheduler.drain();
    assert.equal(await balanceOf(ctx, id), start - 4, 'the three are reserved by the check');
    assert.equal(await counted(ctx, id, '2026-06-10'), 0, 'scheduling and the check count nothing');

    assert.equal((await sendNow(ctx, demo)).statusCode, 201);
    const round = await runAt(clock, scheduler, '2026-06-10 10:00:00');
    assert.equal(round.sent, 2);
    assert.deepEqual(await outcomes(ctx, a), [[1, '', 1]], 'the first in id order fits');
    assert.deepEqual(await outcomes(ctx, b), [[6, 'DAILY_LIMIT', 2]], 'the next is Rejected, its Credits its price');
    assert.equal(await stateOf(ctx, b), undefined, 'it leaves the scheduled list, as any sent one');
    assert.equal(await balanceOf(ctx, id), start - 4 - 1 + 2, "b's reservation (2) given back");
    assert.equal(await counted(ctx, id, '2026-06-10'), 2, 'the send and a; b is not counted');
    assert422(await sendNow(ctx, demo), dailyLimit(2));

    const rejected = await ctx.store.db
      .selectFrom('webhook_deliveries')
      .select(['event', 'payload'])
      .where('account_id', '=', id)
      .where('event', '=', 'message.rejected')
      .execute();
    assert.equal(rejected.length, 1);
    const data = (JSON.parse(rejected[0]!.payload) as { data: Record<string, unknown> }).data;
    assert.deepEqual([data.scheduled_message_id, data.error_code, data.status_id], [b, 'DAILY_LIMIT', 6]);

    // Scheduling is accepted when the day is full: it is counted (or not) when it comes.
    const late = await scheduleAt(ctx, demo, '2026-06-10 11:00:00');
    await scheduler.drain();
    assert.equal((await stateOf(ctx, late))!.status, 3, 'approved: the check does not look at the day');
    await runAt(clock, scheduler, '2026-06-10 11:00:00');
    assert.deepEqual(await outcomes(ctx, late), [[6, 'DAILY_LIMIT', 1]]);

    await runAt(clock, scheduler, '2026-06-11 10:00:00');
    assert.deepEqual(await outcomes(ctx, tomorrow), [[1, '', 1]], 'a new day: queued');
    assert.equal(await counted(ctx, id, '2026-06-11'), 1);
    await assertLedgerAddsUp(ctx.store);
  },
);

storeTest("the scheduler counts the service zone's day: 23:30 in New York is still that day there (UTC's next day)", async (t) => {
  const { ctx, demo, clock, scheduler } = await setup(t);
  const id = demo.account.id;
  await setMaxPerDay(ctx, id, 1);
  const lateEvening = await scheduleAt(ctx, demo, '2026-06-10 23:30:00'); // 2026-06-11 03:30 UTC
  const afterMidnight = await scheduleAt(ctx, demo, '2026-06-11 00:30:00');
  await scheduler.drain();
  clock.set(at('2026-06-10 23:00:00'));
  assert.equal((await sendNow(ctx, demo)).statusCode, 201);
  await runAt(clock, scheduler, '2026-06-10 23:30:00');
  assert.deepEqual(await outcomes(ctx, lateEvening), [[6, 'DAILY_LIMIT', 1]]);
  await runAt(clock, scheduler, '2026-06-11 00:30:00');
  assert.deepEqual(await outcomes(ctx, afterMidnight), [[1, '', 1]]);
  assert.deepEqual([await counted(ctx, id, '2026-06-10'), await counted(ctx, id, '2026-06-11')], [1, 1]);
});

storeTest(
  'a recurring message: an occurrence past the day’s limit is Rejected DAILY_LIMIT and the series moves on; the next day’s is queued',
  async (t) => {
    const { ctx, demo, clock, scheduler } = await setup(t);
    const id = demo.account.id;
    await setMaxPerDay(ctx, id, 1);
    const series = await scheduleAt(ctx, demo, '2026-06-11 10:00:00', { RRule: 'FREQ=DAILY;COUNT=3' });
    await scheduler.drain();
    await runAt(clock, scheduler, '2026-06-11 10:00:00');
    clock.set(at('2026-06-12 09:00:00'));
    assert.equal((await sendNow(ctx, demo)).statusCode, 201, "the 12th's room, taken before its occurrence");
    await runAt(clock, scheduler, '2026-06-12 10:00:00');
    const state = await stateOf(ctx, series);
    assert.ok(state, 'the series goes on');
    assert.equal(state.scheduledAt * 1000, at('2026-06-13 10:00:00'));
    await runAt(clock, scheduler, '2026-06-13 10:00:00');
    assert.deepEqual(await outcomes(ctx, series), [
      [1, '', 1],
      [6, 'DAILY_LIMIT', 1],
      [1, '', 1],
    ]);
    assert.equal(await stateOf(ctx, series), undefined, 'COUNT=3: done');
    await assertLedgerAddsUp(ctx.store);
  },
);

storeTest('an occurrence Rejected NO_CREDITS is not counted; one both over the limit and short of credits is DAILY_LIMIT', async (t) => {
  const { ctx, demo, clock, scheduler } = await setup(t);
  const id = demo.account.id;
  const contact = demo.contacts.find((c) => c.OptedOut === 0)!;
  const setName = (name: string) =>
    ctx.store.db
      .updateTable('contacts')
      .set({ first_name: name })
      .where('account_id', '=', id)
      .where('number', '=', contact.Number)
      .execute();
  await setName('Al');
  await setMaxPerDay(ctx, id, 1);
  const body = { MobilePhone: `+${contact.Number}`, Message: `${'x'.repeat(155)} {FirstName}` };
  const short = await scheduleAt(ctx, demo, '2026-06-10 10:00:00', body);
  const both = await scheduleAt(ctx, demo, '2026-06-11 10:00:00', body);
  await scheduler.drain(); // one segment reserved each
  // Longer at the send (2 segments) and nothing to pay the rest with.
  await setName('Alexandra');
  await setBalance(ctx, id, 0);
  await runAt(clock, scheduler, '2026-06-10 10:00:00');
  assert.deepEqual(await outcomes(ctx, short), [[6, 'NO_CREDITS', 2]]);
  assert.equal(await counted(ctx, id, '2026-06-10'), 0, 'not queued, not counted');
  assert.equal(await balanceOf(ctx, id), 1, 'its reservation given back');

  // The 11th: its room taken by a send, and still short of credits.
  clock.set(at('2026-06-11 09:00:00'));
  assert.equal((await sendNow(ctx, demo)).statusCode, 201);
  assert.equal(await balanceOf(ctx, id), 0);
  await runAt(clock, scheduler, '2026-06-11 10:00:00');
  assert.deepEqual(await outcomes(ctx, both), [[6, 'DAILY_LIMIT', 2]]);
  assert.equal(await counted(ctx, id, '2026-06-11'), 1);
  assert.equal(await balanceOf(ctx, id), 1, 'its reservation given back');
  await assertLedgerAddsUp(ctx.store);
});

storeTest('a scheduler round and an API send racing for the day’s last room: exactly one of them gets it', async (t) => {
  const { ctx, demo, clock, scheduler } = await setup(t);
  const id = demo.account.id;
  for (const [day, n] of [
    ['2026-06-10', 1],
    ['2026-06-11', 2],
    ['2026-06-12', 3],
  ] as const) {
    await setMaxPerDay(ctx, id, 1);
    const ids: number[] = [];
    for (let i = 0; i < n; i++) ids.push(await scheduleAt(ctx, demo, `${day} 10:00:00`));
    await scheduler.drain();
    clock.set(at(`${day} 10:00:00`));
    const [res] = await Promise.all([sendNow(ctx, demo), scheduler.drain()]);
    const queued = (await Promise.all(ids.map((s) => outcomes(ctx, s)))).flat().filter((o) => o[0] === 1).length;
    assert.equal(queued + (res.statusCode === 201 ? 1 : 0), 1, `${day}: one message queued in all (send ${res.statusCode})`);
    if (res.statusCode !== 201) assert422(res, dailyLimit(1));
    assert.equal(await counted(ctx, id, day), 1);
  }
  await assertLedgerAddsUp(ctx.store);
});
