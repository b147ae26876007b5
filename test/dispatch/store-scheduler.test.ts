/**
 * The status life of scheduled messages (API.md §11.7; the
 * scheduler, src/dispatch/scheduler.ts) on each store, with a manual clock: Pending →
 * Approved and Scheduled with its credits reserved, or Action Required with nothing debited
 * (number not Active, recipient opted out, not enough credits); checked again when credits are
 * added (the CLI's credits add/set, a refund, a cancel) or when it is updated; credits that add up
 * exactly through reserve, release, the send (carried over, no second debit) and the refund of a
 * sent message that fails; the send at DateTime (a Message with its ScheduledMessageId, gone from
 * the list); Action Required at its time stays unsent; leases, lost claims, and two schedulers
 * sharing the work with each message checked and sent once; the real loop within a second.
 */
import assert from 'node:assert/strict';
import type { DemoAccount } from '../../src/domain/demo.ts';
import { createManualClock, systemClock, type ManualClock } from '../../src/lib/time.ts';
import { createScheduler } from '../../src/dispatch/index.ts';
import { changeCredits } from '../../src/store/repositories/accounts.ts';
import { claimDueScheduled, insertScheduled, markChecked } from '../../src/store/repositories/scheduled.ts';
import { insertScheduledMessage } from '../../src/store/repositories/messages.ts';
import { openStore } from '../../src/store/db.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { call, messagesFromDb } from '../helpers/operations.ts';
import { balanceOf, countMessages, messageFromDb, setBalance, setNumberStatus, setOptedOut, testDispatcher } from '../helpers/sms.ts';
import {
  CANCEL,
  cancelDemoScheduled,
  dateTimeForms,
  LIST,
  UPDATE,
  VIEW,
  schedule,
  scheduledFromDb,
  stateOf,
  testScheduler,
} from '../helpers/scheduled.ts';
import { storeTest } from '../helpers/stores.ts';

const RECIPIENT = '+15551234567';

async function setup(t: { after(fn: () => unknown): void }) {
  const clock = createManualClock();
  const ctx = await buildTestApp(t, {}, { clock });
  const demo = await ctx.seed();
  // The demo's own scheduled messages are checked like any (test/dispatch/store-demo-scheduled.test.ts):
  // cancelled here, so that every round below holds this test's messages only.
  await cancelDemoScheduled(ctx, demo);
  const scheduler = testScheduler(ctx, clock);
  return { ctx, demo, clock, scheduler };
}

/** Schedules `body` `secondsAhead` from the clock's now. */
function scheduleAt(ctx: TestApp, demo: DemoAccount, clock: ManualClock, secondsAhead: number, body: Record<string, unknown> = {}) {
  return schedule(ctx, demo.token, {
    MobilePhone: RECIPIENT,
    Message: 'hello',
    DateTime: dateTimeForms(clock.nowSeconds() + secondsAhead).colons,
    ...body,
  });
}

const statusOf = async (ctx: TestApp, id: number) => {
  const s = await stateOf(ctx, id);
  return s ? `${s.status}${s.reason ? ` ${s.reason}` : ''} reserved ${s.reserved}` : 'gone';
};

/** The one message of the log a scheduled message became. */
async function messageOf(ctx: TestApp, scheduledId: number) {
  const rows = await ctx.store.db.selectFrom('messages').select('id').where('scheduled_message_id', '=', scheduledId).execute();
  assert.equal(rows.length, 1, `exactly one message for scheduled message ${scheduledId}`);
  return messageFromDb(ctx, rows[0]!.id);
}

storeTest(
  'a new message is Pending, then within a round Approved and Scheduled with its cost reserved (debited now), exactly',
  async (t) => {
    const { ctx, demo, clock, scheduler } = await setup(t);
    const start = await balanceOf(ctx, demo.account.id);
    const one = await scheduleAt(ctx, demo, clock, 3600);
    const two = await scheduleAt(ctx, demo, clock, 3600, { Message: 'b'.repeat(200) }); // 2 segments
    const ucs = await scheduleAt(ctx, demo, clock, 3600, { Message: '😀'.repeat(40) }); // 80 UCS-2 units: 2 segments
    // An MMS (written through the repository), naming one of the demo's templates: it holds a medium.
    const mms = (
      await insertScheduled(
        ctx.store.db,
        demo.account.id,
        {
          mobilePhone: '15551234567',
          message: 'pic',
          scheduledAt: clock.nowSeconds() + 3600,
          typeId: 2,
          mmsTemplateId: Number(demo.scheduledMessages.find((m) => m.Type_Id === 2)!.MmsTemplateId),
          subject: 'S',
          number: '55155',
        },
        clock.nowSeconds(),
        clock.nowMs(),
      )
    ).id;
    assert.equal((await scheduledFromDb(ctx, one)).Status_Description, 'Pending');
    assert.equal(await balanceOf(ctx, demo.account.id), start, 'Pending: nothing debited');
    const round = await scheduler.runOnce();
    assert.deepEqual([round.claimed, round.approved, round.actionRequired], [4, 4, 0]);
    for (const [id, cost] of [
      [one, 1],
      [two, 2],
      [ucs, 2],
      [mms, 3],
    ] as const) {
      assert.equal(await statusOf(ctx, id), `3 reserved ${cost}`);
      const record = await scheduledFromDb(ctx, id);
      assert.deepEqual([record.Status_Id, record.Status_Description], [3, 'Approved and Scheduled']);
    }
    assert.equal(await balanceOf(ctx, demo.account.id), start - 8, 'the reservations are debited at once');
    assert.equal((await scheduler.drain()).claimed, 0, 'nothing more to do until their DateTime');
  },
);

storeTest(
  'Action Required with nothing debited: recipient opted out, number no longer Active, not enough credits (the first ones that fit are approved)',
  async (t) => {
    const { ctx, demo, clock, scheduler } = await setup(t);
    const optedOut = demo.contacts.find((c) => c.OptedOut === 1)!;
    const toOptedOut = await scheduleAt(ctx, demo, clock, 600, { MobilePhone: `+${optedOut.Number}` });
    const inactive = await scheduleAt(ctx, demo, clock, 600, { Number: '15550100001' });
    await setNumberStatus(ctx, demo.account.id, '15550100001', 301);
    await setBalance(ctx, demo.account.id, 3);
    const fits = await scheduleAt(ctx, demo, clock, 600, { Message: 'b'.repeat(200) });
    const tooMuch = await scheduleAt(ctx, demo, clock, 600, { Message: 'c'.repeat(200) });
    const small = await scheduleAt(ctx, demo, clock, 600);
    const round = await scheduler.drain();
    assert.deepEqual([round.approved, round.actionRequired], [2, 3]);
    assert.equal(await statusOf(ctx, toOptedOut), '2 OPTED_OUT reserved 0');
    assert.equal(await statusOf(ctx, inactive), '2 NUMBER_INACTIVE reserved 0');
    assert.equal(await statusOf(ctx, fits), '3 reserved 2');
    assert.equal(await statusOf(ctx, tooMuch), '2 NO_CREDITS reserved 0');
    assert.equal(await statusOf(ctx, small), '3 reserved 1', 'checked in id order: the next one that fits');
    assert.equal(await balanceOf(ctx, demo.account.id), 0);
    const record = await scheduledFromDb(ctx, toOptedOut);
    assert.deepEqual([record.Status_Id, record.Status_Description], [2, 'Action Required']);
    const listed = JSON.parse((await call(ctx.app, { path: LIST, token: demo.token })).body) as { Id: number; Status_Id: number }[];
    assert.deepEqual(listed, await messagesFromDb(ctx, demo.account.id));
    assert.equal(listed.find((m) => m.Id === tooMuch)!.Status_Id, 2);
  },
);

storeTest(
  'checked again when credits are added (credits add/set, a refund, a cancel), not when they go down; only while its DateTime is ahead',
  async (t) => {
    const { ctx, demo, clock, scheduler } = await setup(t);
    await setBalance(ctx, demo.account.id, 2);
    const a = await scheduleAt(ctx, demo, clock, 3600, { Message: 'b'.repeat(300) }); // 2 segments, then 3 below
    await scheduler.drain();
    assert.equal(await statusOf(ctx, a), '3 reserved 2');
    await call(ctx.app, { method: 'PATCH', path: UPDATE, token: demo.token, query: `id=${a}`, body: { Message: 'b'.repeat(400) } });
    await scheduler.drain();
    assert.equal(await statusOf(ctx, a), '2 NO_CREDITS reserved 0', 'its release (2) does not pay for 3');
    // A debit (a send) or a balance set lower (or the same) triggers nothing.
    await call(ctx.app, { method: 'POST', path: '/v1/sms/send', token: demo.token, body: { MobilePhone: RECIPIENT, Message: 'now' } });
    await changeCredits(ctx.store.db, demo.account.id, 0, 'set', clock.nowSeconds());
    await changeCredits(ctx.store.db, demo.account.id, 0, 'set', clock.nowSeconds());
    assert.equal(await balanceOf(ctx, demo.account.id), 0);
    assert.equal((await scheduler.drain()).claimed, 0, 'no re-check without credits added');
    const b = await scheduleAt(ctx, demo, clock, 3600); // 1
    await scheduler.drain();
    assert.equal(await statusOf(ctx, b), '2 NO_CREDITS reserved 0');
    // `credits add` (the CLI's repository call): 1 credit → b fits, a does not.
    await changeCredits(ctx.store.db, demo.account.id, 1, 'add', clock.nowSeconds());
    const round = await scheduler.drain();
    assert.deepEqual([round.claimed, round.approved, round.actionRequired], [2, 1, 1]);
    assert.equal(await statusOf(ctx, a), '2 NO_CREDITS reserved 0');
    assert.equal(await statusOf(ctx, b), '3 reserved 1');
    // Cancelling b releases its credit: a is checked again (still short), then `credits set` 5.
    assert.equal((await call(ctx.app, { method: 'DELETE', path: CANCEL, token: demo.token, query: `id=${b}` })).statusCode, 204);
    assert.equal(await balanceOf(ctx, demo.account.id), 1, 'the cancel released the reservation');
    assert.deepEqual([(await scheduler.drain()).actionRequired, await statusOf(ctx, a)], [1, '2 NO_CREDITS reserved 0']);
    await changeCredits(ctx.store.db, demo.account.id, 5, 'set', clock.nowSeconds());
    await scheduler.drain();
    assert.equal(await statusOf(ctx, a), '3 reserved 3');
    assert.equal(await balanceOf(ctx, demo.account.id), 2);

    // A refund (a sent message that ends Failed) is credits added too.
    const failing = await call(ctx.app, {
      method: 'POST',
      path: '/v1/sms/send',
      token: demo.token,
      body: { MobilePhone: '+15005550002', Message: 'fails' },
    });
    assert.equal(failing.statusCode, 201, failing.body);
    const c = await scheduleAt(ctx, demo, clock, 3600); // 1
    const e = await scheduleAt(ctx, demo, clock, 3600); // 1: nothing left for it
    await scheduler.drain();
    assert.deepEqual(
      [await statusOf(ctx, c), await statusOf(ctx, e), await balanceOf(ctx, demo.account.id)],
      ['3 reserved 1', '2 NO_CREDITS reserved 0', 0],
    );
    const { dispatcher } = testDispatcher(ctx, { clock });
    await dispatcher.drain(); // the sandbox refuses +15005550002: Failed, its credit refunded
    assert.equal(await balanceOf(ctx, demo.account.id), 1);
    await scheduler.drain();
    assert.equal(await statusOf(ctx, e), '3 reserved 1', 'the refund of a Failed message re-checked it');
    assert.equal(await balanceOf(ctx, demo.account.id), 0);

    // An Action Required message past its DateTime is not checked again: it stays listed, unsent.
    const late = await scheduleAt(ctx, demo, clock, 60);
    await scheduler.drain();
    assert.equal(await statusOf(ctx, late), '2 NO_CREDITS reserved 0');
    clock.advance(61_000);
    await changeCredits(ctx.store.db, demo.account.id, 10, 'add', clock.nowSeconds());
    const round2 = await scheduler.drain();
    assert.equal(round2.waiting, 1);
    assert.equal(await statusOf(ctx, late), '2 NO_CREDITS reserved 0');
    assert.equal((await ctx.store.db.selectFrom('messages').select('id').where('scheduled_message_id', '=', late).execute()).length, 0);
    assert.equal((await call(ctx.app, { path: VIEW, token: demo.token, query: `id=${late}` })).statusCode, 200, 'still listed');
  },
);

storeTest(`the CLI's credits add re-checks Action Required messages`, async (t) => {
  const { ctx, demo, clock, scheduler } = await setup(t);
  await setBalance(ctx, demo.account.id, 0);
  const id = await scheduleAt(ctx, demo, clock, 3600);
  await scheduler.drain();
  assert.equal(await statusOf(ctx, id), '2 NO_CREDITS reserved 0');
  const url = ctx.config.database.kind === 'sqlite' ? ctx.config.database.path : ctx.config.database.url;
  const res = await runCli(['credits', 'add', '--account', String(demo.account.id), '--amount', '5'], { DATABASE_URL: url });
  assert.equal(res.code, 0, res.stderr);
  await scheduler.drain();
  assert.equal(await statusOf(ctx, id), '3 reserved 1');
  assert.equal(await balanceOf(ctx, demo.account.id), 4);
});

storeTest(
  'an update releases what was reserved, is Pending, and is checked again; a Number no longer Active makes it Action Required',
  async (t) => {
    const { ctx, demo, clock, scheduler } = await setup(t);
    const start = await balanceOf(ctx, demo.account.id);
    const id = await scheduleAt(ctx, demo, clock, 3600, { Message: 'b'.repeat(400), Number: '15550100001' }); // 3
    await scheduler.drain();
    assert.equal(await balanceOf(ctx, demo.account.id), start - 3);
    const res = await call(ctx.app, { method: 'PATCH', path: UPDATE, token: demo.token, query: `id=${id}`, body: { Message: 'short' } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(await statusOf(ctx, id), '1 reserved 0');
    assert.equal(await balanceOf(ctx, demo.account.id), start, 'released in the update');
    await scheduler.drain();
    assert.equal(await statusOf(ctx, id), '3 reserved 1');
    assert.equal(await balanceOf(ctx, demo.account.id), start - 1);
    // The stored Number goes Inactive: the next update (of anything) makes it Action Required.
    await setNumberStatus(ctx, demo.account.id, '15550100001', 1);
    await call(ctx.app, { method: 'PUT', path: UPDATE, token: demo.token, query: `id=${id}`, body: { Subject: 'x' } });
    await scheduler.drain();
    assert.equal(await statusOf(ctx, id), '2 NUMBER_INACTIVE reserved 0');
    assert.equal(await balanceOf(ctx, demo.account.id), start, 'nothing reserved');
    // An update of an Action Required message releases nothing; a good Number approves it.
    await call(ctx.app, { method: 'PATCH', path: UPDATE, token: demo.token, query: `id=${id}`, body: { Number: 55155 } });
    assert.equal(await balanceOf(ctx, demo.account.id), start);
    await scheduler.drain();
    assert.equal(await statusOf(ctx, id), '3 reserved 1');
    // Cancel: released.
    await call(ctx.app, { method: 'DELETE', path: CANCEL, token: demo.token, query: `id=${id}` });
    assert.equal(await balanceOf(ctx, demo.account.id), start);
  },
);

storeTest(
  'at its DateTime an approved message becomes a Message (Queued, ScheduledMessageId, its reservation as Credits) and leaves the list; the dispatcher takes it from there; failures are refunded',
  async (t) => {
    const { ctx, demo, clock, scheduler } = await setup(t);
    const start = await balanceOf(ctx, demo.account.id);
    const ok = await scheduleAt(ctx, demo, clock, 120, { Message: 'b'.repeat(200) });
    const failed = await scheduleAt(ctx, demo, clock, 120, { MobilePhone: '+15005550002', Message: 'c'.repeat(200) });
    const optedLater = demo.contacts.find((c) => c.OptedOut === 0)!;
    const rejected = await scheduleAt(ctx, demo, clock, 120, { MobilePhone: `+${optedLater.Number}`, Number: '15550100001' });
    const later = await scheduleAt(ctx, demo, clock, 3600);
    await scheduler.drain();
    assert.equal(await balanceOf(ctx, demo.account.id), start - 6);
    await setOptedOut(ctx, demo.account.id, optedLater.Number, 1); // after the approval

    clock.advance(119_999);
    assert.equal((await scheduler.drain()).sent, 0, 'not before its time');
    clock.advance(1);
    const round = await scheduler.drain();
    assert.equal(round.sent, 3);
    assert.equal(await balanceOf(ctx, demo.account.id), start - 6, 'no second debit: the reservation is carried over');
    const record = await scheduledFromDb(ctx, later);
    const list = JSON.parse((await call(ctx.app, { path: LIST, token: demo.token, query: 'per-page=100' })).body) as { Id: number }[];
    assert.deepEqual(
      list.map((m) => m.Id).filter((id) => [ok, failed, rejected, later].includes(id)),
      [later],
      'the sent ones left the list',
    );
    assert.deepEqual(
      list.find((m) => m.Id === later),
      record,
    );
    for (const id of [ok, failed, rejected]) {
      assert.equal(await stateOf(ctx, id), undefined);
      const view = await call(ctx.app, { path: VIEW, token: demo.token, query: `id=${id}` });
      assert.equal(view.statusCode, 404);
      assert.equal(JSON.parse(view.body).message, `Object not found: ${id}`);
    }
    const m = await messageOf(ctx, ok);
    const sentAt = new Date(clock.nowSeconds() * 1000).toISOString().slice(0, 19).replace('T', ' ');
    assert.deepEqual(
      { ...m, Id: 0 },
      {
        Id: 0,
        Direction: 'Outbound',
        Number: '55155',
        MobilePhone: '15551234567',
        Message: 'b'.repeat(200),
        Type_Id: 1,
        Type_Description: 'SMS',
        Status_Id: 1,
        Status_Description: 'Queued',
        Segments: 2,
        Credits: 2,
        BatchId: '',
        ScheduledMessageId: ok,
        ErrorCode: '',
        DateCreated: sentAt,
        DateSent: null,
        DateDelivered: null,
      },
    );
    const view = await call(ctx.app, { path: '/v1/sms/view', token: demo.token, query: `id=${m.Id}` });
    assert.deepEqual(JSON.parse(view.body), m, 'sms/view shows it');

    const { dispatcher } = testDispatcher(ctx, { clock, receiptMs: 1000 });
    await dispatcher.drain();
    clock.advance(1000);
    await dispatcher.drain();
    assert.equal((await messageOf(ctx, ok)).Status_Description, 'Delivered');
    assert.deepEqual(
      [(await messageOf(ctx, failed)).Status_Description, (await messageOf(ctx, failed)).ErrorCode],
      ['Failed', 'ESME_RSUBMITFAIL'],
    );
    assert.deepEqual(
      [(await messageOf(ctx, rejected)).Status_Description, (await messageOf(ctx, rejected)).ErrorCode],
      ['Rejected', 'OPTED_OUT'],
    );
    assert.equal(
      await balanceOf(ctx, demo.account.id),
      start - 2 - 1,
      'the Failed (2) and the Rejected (1) are refunded; the Delivered (2) and the later one (1) are paid',
    );
    assert.equal((await scheduledFromDb(ctx, later)).Status_Id, 3);
  },
);

storeTest('Action Required at its time stays listed and unsent; an update then checks it and, approved, sends it at once', async (t) => {
  const { ctx, demo, clock, scheduler } = await setup(t);
  const optedOut = demo.contacts.find((c) => c.OptedOut === 1)!;
  const id = await scheduleAt(ctx, demo, clock, 60, { MobilePhone: `+${optedOut.Number}` });
  await scheduler.drain();
  clock.advance(3_600_000);
  await scheduler.drain();
  assert.equal(await statusOf(ctx, id), '2 OPTED_OUT reserved 0');
  assert.equal(await countMessages(ctx, demo.account.id), 0);
  const start = await balanceOf(ctx, demo.account.id);
  const res = await call(ctx.app, {
    method: 'PATCH',
    path: UPDATE,
    token: demo.token,
    query: `id=${id}`,
    body: { MobilePhone: RECIPIENT },
  });
  assert.equal(res.statusCode, 200, res.body);
  const round = await scheduler.drain();
  assert.deepEqual([round.approved, round.sent], [1, 1]);
  assert.equal((await messageOf(ctx, id)).MobilePhone, '15551234567');
  assert.equal(await balanceOf(ctx, demo.account.id), start - 1);
});

storeTest(
  'a scheduler that dies after its claim: the lease holds the rows, then another does the work once; a lost claim writes nothing and keeps no debit',
  async (t) => {
    const { ctx, demo, clock, scheduler } = await setup(t);
    const start = await balanceOf(ctx, demo.account.id);
    const id = await scheduleAt(ctx, demo, clock, 60);
    const dead = await claimDueScheduled(ctx.store.db, clock.nowMs(), 10, clock.nowMs() + 30_000, 'dead');
    assert.deepEqual(
      dead.map((r) => r.id),
      [id],
    );
    assert.equal((await scheduler.runOnce()).claimed, 0, 'held by the lease');
    clock.advance(30_000);
    assert.equal((await scheduler.runOnce()).approved, 1, 'the lease ran out: checked by the next round');
    assert.equal(await balanceOf(ctx, demo.account.id), start - 1);
    assert.equal(await markChecked(ctx.store.db, id, 'dead', 2, 0, null, 'NO_CREDITS'), false, 'the dead claim writes nothing');
    // A claim lost to an update: the update wins, the late outcome is not written.
    clock.advance(30_000); // its DateTime: due to be sent
    const held = await claimDueScheduled(ctx.store.db, clock.nowMs(), 10, clock.nowMs() + 30_000, 'slow');
    assert.deepEqual(
      held.map((r) => r.id),
      [id],
    );
    const res = await call(ctx.app, {
      method: 'PATCH',
      path: UPDATE,
      token: demo.token,
      query: `id=${id}`,
      body: { DateTime: dateTimeForms(clock.nowSeconds() + 600).colons },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(await markChecked(ctx.store.db, id, 'slow', 3, 1, 0, ''), false);
    assert.equal(await statusOf(ctx, id), '1 reserved 0');
    assert.equal(await balanceOf(ctx, demo.account.id), start, 'the update released the reservation');
    await scheduler.drain();
    assert.equal(await statusOf(ctx, id), '3 reserved 1');
    assert.equal(await countMessages(ctx, demo.account.id), 0, 'not sent: its new time is ahead');
    // A cancel while a scheduler holds it for sending: nothing is sent.
    clock.advance(600_000);
    await claimDueScheduled(ctx.store.db, clock.nowMs(), 10, clock.nowMs() + 30_000, 'slow2');
    assert.equal((await call(ctx.app, { method: 'DELETE', path: CANCEL, token: demo.token, query: `id=${id}` })).statusCode, 204);
    clock.advance(30_000);
    assert.equal((await scheduler.drain()).sent, 0);
    assert.equal(await countMessages(ctx, demo.account.id), 0);
    assert.equal(await balanceOf(ctx, demo.account.id), start);
  },
);

storeTest('two schedulers share the work: every message checked once and sent once, credits exact', async (t, kind) => {
  const { ctx, demo, clock } = await setup(t);
  const twin = await buildTestApp(t, {}, { dir: ctx.dir, clock });
  const other = await ctx.seed('Other');
  await cancelDemoScheduled(ctx, other);
  // PostgreSQL: a second pool. SQLite: the same connection: two SQLite connections in ONE process
  // cannot share the file's write lock (the busy wait blocks the only thread, so the holder never
  // finishes), as in test/dispatch/scale-dispatcher.test.ts.
  const second = kind === 'postgres' ? openStore(ctx.config.database) : ctx.store;
  if (second !== ctx.store) t.after(() => second.close());
  await setBalance(ctx, demo.account.id, 150);
  const ids: number[] = [];
  for (let i = 0; i < 120; i++) {
    const [account, app] = i % 3 === 0 ? [other, twin] : [demo, ctx];
    ids.push(
      await schedule(app, account.token, {
        MobilePhone: `+1555200${String(1000 + i)}`,
        Message: i % 4 === 0 ? 'b'.repeat(200) : 'm',
        DateTime: dateTimeForms(clock.nowSeconds() + 60 + (i % 5)).colons,
      }),
    );
  }
  const a = testScheduler(ctx, clock, { batchSize: 7 });
  const b = testScheduler({ store: second }, clock, { batchSize: 7 });
  const [ra, rb] = await Promise.all([a.drain(), b.drain()]);
  assert.equal(ra.approved + rb.approved + ra.actionRequired + rb.actionRequired, 120, 'each checked once');
  assert.equal(ra.lost + rb.lost, 0);
  const states = await Promise.all(ids.map((id) => stateOf(ctx, id)));
  const reservedDemo = states.filter((s, i) => i % 3 !== 0 && s!.status === 3).reduce((n, s) => n + s!.reserved!, 0);
  assert.equal(await balanceOf(ctx, demo.account.id), 150 - reservedDemo, 'the balance pays exactly what is reserved');
  assert.ok(reservedDemo <= 150);
  clock.advance(65_000);
  const [sa, sb] = await Promise.all([a.drain(), b.drain()]);
  const approved = states.filter((s) => s!.status === 3).length;
  assert.equal(sa.sent + sb.sent, approved, 'each approved one sent once');
  const rows = await ctx.store.db
    .selectFrom('messages')
    .select(['scheduled_message_id', 'credits'])
    .where('scheduled_message_id', 'is not', null)
    .execute();
  assert.equal(rows.length, approved);
  assert.equal(new Set(rows.map((r) => r.scheduled_message_id)).size, approved, 'no scheduled message queued twice');
  assert.equal(
    rows.reduce((n, r) => n + Number(r.credits), 0),
    states.filter((s) => s!.status === 3).reduce((n, s) => n + s!.reserved!, 0),
    'the messages carry exactly the reservations',
  );
  assert.equal(await balanceOf(ctx, demo.account.id), 150 - reservedDemo, 'sending debits nothing more');
});

storeTest(
  'schedulers, updates, cancels, credits added and the dispatcher at once: no deadlock, and every credit accounted for',
  async (t, kind) => {
    const { ctx, demo, clock } = await setup(t);
    // PostgreSQL: the API on a second pool and a second scheduler on a third; SQLite: one connection (see above).
    const twin = kind === 'postgres' ? await buildTestApp(t, {}, { dir: ctx.dir, clock }) : ctx;
    const second = kind === 'postgres' ? openStore(ctx.config.database) : ctx.store;
    if (second !== ctx.store) t.after(() => second.close());
    await setBalance(ctx, demo.account.id, 40);
    let added = 0;
    const ids: number[] = [];
    for (let i = 0; i < 60; i++) {
      const phone = i % 10 === 3 ? '+15005550002' : `+1555300${String(1000 + i)}`; // some fail at the carrier: refunded
      ids.push(await scheduleAt(ctx, demo, clock, 1 + (i % 20), { MobilePhone: phone, Message: i % 3 === 0 ? 'b'.repeat(200) : 'm' }));
    }
    const a = testScheduler(ctx, clock, { batchSize: 5 });
    const b = testScheduler({ store: second }, clock, { batchSize: 5 });
    const { dispatcher } = testDispatcher(ctx, { clock, receiptMs: 0 });
    for (let step = 0; step < 40; step++) {
      const id = ids[(step * 7) % ids.length]!;
      const api = async () => {
        if (step % 4 === 0) await call(twin.app, { method: 'DELETE', path: CANCEL, token: demo.token, query: `id=${id}` });
        else if (step % 4 === 1)
          await call(twin.app, {
            method: 'PATCH',
            path: UPDATE,
            token: demo.token,
            query: `id=${id}`,
            body: { Message: step % 8 === 1 ? 'c'.repeat(300) : 'x' },
          });
        else if (step % 4 === 2) {
          await changeCredits(twin.store.db, demo.account.id, 3, 'add', clock.nowSeconds());
          added += 3;
        }
      };
      await Promise.all([a.runOnce(), b.runOnce(), api(), dispatcher.runOnce()]);
      clock.advance(500);
    }
    clock.advance(60_000);
    await a.drain();
    await dispatcher.drain();
    const reserved = await ctx.store.db
      .selectFrom('scheduled_messages')
      .select('reserved_credits')
      .where('account_id', '=', demo.account.id)
      .where('reserved_credits', 'is not', null)
      .execute();
    const paid = await ctx.store.db
      .selectFrom('messages')
      .select(['credits', 'status_id', 'scheduled_message_id'])
      .where('account_id', '=', demo.account.id)
      .execute();
    const kept = paid.filter((m) => m.status_id !== 5 && m.status_id !== 6).reduce((n, m) => n + Number(m.credits), 0);
    const held = reserved.reduce((n, r) => n + Number(r.reserved_credits), 0);
    assert.equal(
      (await balanceOf(ctx, demo.account.id)) + held + kept,
      40 + added,
      'balance + reservations + messages paid = what the account was given',
    );
    assert.ok(
      paid.some((m) => m.status_id === 5),
      'some failed at the carrier and were refunded',
    );
    const sources = paid.map((m) => m.scheduled_message_id);
    assert.equal(new Set(sources).size, sources.length, 'no scheduled message sent twice');
    assert.equal(held, 0, 'every approved message was sent; the rest are Action Required, holding nothing');
  },
);

storeTest(`rows the service never managed (msgsvc generate's, older data) are shown as they are and never checked or sent`, async (t) => {
  const { ctx, demo, clock, scheduler } = await setup(t);
  // Written straight into the table, as `msgsvc generate` writes them: no reservation (NULL), never due.
  for (const statusId of [1, 2, 3]) {
    await insertScheduledMessage(
      ctx.store.db,
      demo.account.id,
      {
        mobilePhone: '15551234567',
        message: `never managed ${statusId}`,
        scheduledAt: clock.nowSeconds() + statusId * 3600,
        statusId,
        typeId: 1,
        mmsTemplateId: null,
        subject: '',
      },
      clock.nowSeconds(),
    );
  }
  const listed = JSON.parse((await call(ctx.app, { path: LIST, token: demo.token })).body) as { Id: number; Status_Id: number }[];
  assert.deepEqual(
    listed.map((m) => m.Status_Id),
    [1, 2, 3],
  );
  await changeCredits(ctx.store.db, demo.account.id, 100, 'add', clock.nowSeconds());
  clock.advance(10 * 86_400_000);
  assert.equal((await scheduler.drain()).claimed, 0);
  assert.deepEqual(JSON.parse((await call(ctx.app, { path: LIST, token: demo.token })).body), listed);
  assert.equal(await countMessages(ctx, demo.account.id), 0);
  // An update makes one managed: Pending, nothing reserved, then checked like any.
  const [first] = listed;
  const res = await call(ctx.app, {
    method: 'PATCH',
    path: UPDATE,
    token: demo.token,
    query: `id=${first!.Id}`,
    body: { DateTime: dateTimeForms(clock.nowSeconds() + 3600).colons },
  });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(await statusOf(ctx, first!.Id), '1 reserved 0');
  assert.equal((await scheduler.drain()).approved, 1);
  assert.equal(await statusOf(ctx, first!.Id), '3 reserved 1');
});

storeTest('the real loop (serve and worker run it): a new message is checked within a second and sent at its time', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const scheduler = createScheduler(ctx.config, ctx.store, { clock: systemClock });
  scheduler.start();
  t.after(() => scheduler.stop());
  const at = Math.floor(Date.now() / 1000) + 2;
  const id = await schedule(ctx, demo.token, { MobilePhone: RECIPIENT, Message: 'soon', DateTime: dateTimeForms(at).iso });
  const started = Date.now();
  const waitFor = async (what: string, ok: () => Promise<boolean>, ms: number) => {
    const deadline = Date.now() + ms;
    while (!(await ok())) {
      if (Date.now() > deadline) assert.fail(`${what} within ${ms} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  await waitFor('approved', async () => (await stateOf(ctx, id))?.status === 3, 1000);
  assert.ok(Date.now() - started < 1000);
  await waitFor('sent', async () => (await stateOf(ctx, id)) === undefined, 4000);
  assert.ok(Date.now() >= at * 1000, 'not before its time');
  assert.equal((await messageOf(ctx, id)).Status_Description, 'Queued');
  await scheduler.stop();
});
