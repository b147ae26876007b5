/**
 * Sender pools at queue time (docs/API.md §17; src/domain/sender-pool.ts), through `sms/send`,
 * `sms/preview`, `sms/send-group` and `sms/schedule`, on each store, on a manual clock:
 * - with SenderSelection `pool` a message without `Number` goes from the sticky number (the one the
 *   recipient's thread last used, within 30 days), else a local one (the calling code; in the NANP
 *   the area code), else any Active number; the most room today wins, the first on a tie;
 * - a number past MaxPerDay (today) or, for a new recipient, MaxRecipientsPerMonth is skipped, and
 *   when every number is: 422 `Every number has reached its limit.`; a `Number` given (or the first
 *   under `first`) that is full: 422 `Number has reached its limit.`; nothing is queued, debited or
 *   counted; the next day (month) it has room again;
 * - a send-group is all or nothing, and its messages are spread over the pool;
 * - `Priority` is 0 or 1 and is stored on the message (the schedule's occurrences too);
 * - a scheduled message without `Number` under `pool` is given its number when it is queued, and
 *   an occurrence that finds every number full ends Rejected `NUMBER_LIMIT`, refunded.
 * Limits and SenderSelection are set straight in the database here (their operations have their
 * own suite).
 */
import assert from 'node:assert/strict';
import { purgeExpired } from '../../../src/domain/housekeeping.ts';
import { insertNumber } from '../../../src/store/repositories/numbers.ts';
import { createManualClock, type ManualClock } from '../../../src/lib/time.ts';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import { emptyAccount } from '../../helpers/conventions.ts';
import { assertLedgerAddsUp } from '../../helpers/ledger.ts';
import { assert422, call, fieldError, snapshotAccount, WIRES } from '../../helpers/operations.ts';
import { testScheduler } from '../../helpers/scheduled.ts';
import { balanceOf, setBalance } from '../../helpers/sms.ts';
import { storeTest } from '../../helpers/stores.ts';

/** Wednesday 2026-06-10 12:00 UTC. */
const NOON = Date.UTC(2026, 5, 10, 12, 0, 0);
const DAY = 86_400_000;

const NY = '12125550100'; // NANP, area code 212
const UK = '447700900100';
const SF = '14155550100'; // NANP, area code 415
const SHORT = '12345';

const EVERY_FULL = [fieldError('Number', 'Every number has reached its limit.')];
const NUMBER_FULL = [fieldError('Number', 'Number has reached its limit.')];

interface Pool {
  ctx: TestApp;
  clock: ManualClock;
  id: number;
  token: string;
}

async function setup(t: { after(fn: () => unknown): void }, numbers = [NY, UK, SF, SHORT]): Promise<Pool> {
  const clock = createManualClock(NOON);
  const ctx = await buildTestApp(t, {}, { clock });
  const { id, token } = await emptyAccount(ctx, 'Pool Ltd');
  await setBalance(ctx, id, 1000);
  for (const n of numbers) await insertNumber(ctx.store.db, id, n, 0, null, clock.nowSeconds());
  await ctx.store.db
    .insertInto('account_settings')
    .values({
      account_id: id,
      quiet_start: null,
      quiet_end: null,
      time_zone: null,
      updated_at: clock.nowSeconds(),
      sender_selection: 'pool',
    })
    .execute();
  return { ctx, clock, id, token };
}

function setLimits(p: Pool, number: string, limits: { max_per_day?: number; max_recipients_per_month?: number }) {
  return p.ctx.store.db.updateTable('account_numbers').set(limits).where('account_id', '=', p.id).where('number', '=', number).execute();
}

function send(p: Pool, to: string, body: Record<string, unknown> = {}) {
  return call(p.ctx.app, { method: 'POST', path: '/v1/sms/send', token: p.token, body: { Message: 'hello', MobilePhone: to, ...body } });
}

/** The Number a send queued from (asserts the 201). */
async function sentFrom(p: Pool, to: string, body: Record<string, unknown> = {}): Promise<string> {
  const res = await send(p, to, body);
  assert.equal(res.statusCode, 201, `${to}: ${res.body}`);
  return res.json<[{ Number: string }]>()[0].Number;
}

/** What a refused send must leave alone. */
async function snapshot(p: Pool) {
  const base = await snapshotAccount(p.ctx, p.id);
  const db = p.ctx.store.db;
  base.messages = await db.selectFrom('messages').selectAll().where('account_id', '=', p.id).orderBy('id').execute();
  base.batches = await db.selectFrom('batches').selectAll().where('account_id', '=', p.id).orderBy('id').execute();
  base.day = await db.selectFrom('number_day_counts').selectAll().where('account_id', '=', p.id).orderBy('number').execute();
  base.month = await db
    .selectFrom('number_month_recipients')
    .selectAll()
    .where('account_id', '=', p.id)
    .orderBy('number')
    .orderBy('mobile_phone')
    .execute();
  return base;
}

storeTest(
  'pool: sticky within 30 days, then local (the NANP area code, the calling code), then any; the most room today wins, the first on a tie',
  async (t) => {
    const p = await setup(t);
    assert.equal(await sentFrom(p, '+14155550123'), SF, 'local: same NANP area code');
    assert.equal(await sentFrom(p, '+447700900555'), UK, 'local: same calling code');
    assert.equal(await sentFrom(p, '+12125550199'), NY, 'local: 212');
    assert.equal(await sentFrom(p, '+13125550100'), NY, 'NANP, no number in 312: any, the first on a tie');
    // Room today decides among equals: NY and SF limited, UK and the short code not (unbounded room).
    await setLimits(p, NY, { max_per_day: 10 });
    await setLimits(p, SF, { max_per_day: 50 });
    assert.equal(await sentFrom(p, '+16505550100'), UK, 'any: an unlimited number has the most room');
    await p.ctx.store.db
      .updateTable('account_numbers')
      .set({ status_id: 1 })
      .where('account_id', '=', p.id)
      .where('number', 'in', [UK, SHORT])
      .execute();
    assert.equal(await sentFrom(p, '+16505550101'), SF, 'any: SF has 50 left, NY 10');
    // Two 415 numbers: the one with more room today.
    await insertNumber(p.ctx.store.db, p.id, '14155550199', 0, null, p.clock.nowSeconds());
    assert.equal(await sentFrom(p, '+14155550124'), '14155550199', 'local: unbounded beats 49 left');

    // Sticky: the thread's number, even when another is local; kept 30 days.
    await p.ctx.store.db.updateTable('account_numbers').set({ status_id: 0 }).where('account_id', '=', p.id).execute();
    assert.equal(await sentFrom(p, '+447700900777', { Number: SF }), SF, 'a Number given is used');
    assert.equal(await sentFrom(p, '+447700900777'), SF, 'sticky beats local');
    p.clock.advance(29 * DAY);
    assert.equal(await sentFrom(p, '+447700900777'), SF, 'still sticky at 29 days (the last message renews it)');
    p.clock.advance(31 * DAY);
    assert.equal(await sentFrom(p, '+447700900777'), UK, 'after 30 days: local again');
    // A sticky number that is full is skipped.
    await setLimits(p, UK, { max_per_day: 1 });
    assert.equal(await sentFrom(p, '+447700900777'), UK);
    assert.notEqual(await sentFrom(p, '+447700900777'), UK, 'full: skipped');
    // An inbound message makes its number the sticky one too.
    await p.ctx.store.db
      .insertInto('messages')
      .values({
        account_id: p.id,
        direction: 2,
        number: SHORT,
        mobile_phone: '14155550888',
        message: 'hi',
        type_id: 1,
        status_id: 7,
        segments: 1,
        credits: 0,
        batch_id: null,
        scheduled_message_id: null,
        created_at: p.clock.nowSeconds(),
        sent_at: null,
        delivered_at: null,
        due_at: null,
        lease_token: null,
        carrier: null,
        mms_template_id: null,
        carrier_message_id: null,
        receipt_status: null,
        receipt_error: null,
        receipt_due_at: null,
      })
      .execute();
    assert.equal(await sentFrom(p, '+14155550888'), SHORT, 'the reply goes from the number that was texted');
    await assertLedgerAddsUp(p.ctx.store);
  },
);

storeTest(
  'MaxPerDay of a number: a Number given past it, or a full pool, is the exact 422 and changes nothing; the next day it has room',
  async (t) => {
    const p = await setup(t, [NY, SF]);
    await setLimits(p, SF, { max_per_day: 2 });
    assert.equal(await sentFrom(p, '+14155550001', { Number: SF }), SF);
    assert.equal(await sentFrom(p, '+14155550002', { Number: SF }), SF);
    const before = await snapshot(p);
    for (const wire of WIRES) {
      assert422(
        await call(p.ctx.app, {
          method: 'POST',
          path: '/v1/sms/send',
          token: p.token,
          wire,
          body: { Message: 'x', MobilePhone: '+14155550003', Number: SF },
        }),
        NUMBER_FULL,
        wire,
      );
      assert422(
        await call(p.ctx.app, {
          method: 'POST',
          path: '/v1/sms/preview',
          token: p.token,
          wire,
          body: { Message: 'x', MobilePhone: '+14155550003', Number: SF },
        }),
        NUMBER_FULL,
        wire,
      );
    }
    assert.deepEqual(await snapshot(p), before, 'nothing queued, debited or counted');
    // The pool skips the full number: a 415 recipient goes from NY.
    await setLimits(p, NY, { max_per_day: 1 });
    assert.equal(await sentFrom(p, '+14155550004'), NY);
    const full = await snapshot(p);
    assert422(await send(p, '+14155550005'), EVERY_FULL);
    assert422(
      await call(p.ctx.app, {
        method: 'POST',
        path: '/v1/sms/preview',
        token: p.token,
        body: { Message: 'x', MobilePhone: '+14155550005' },
      }),
      EVERY_FULL,
    );
    assert.deepEqual(await snapshot(p), full);
    // Under `first` the first Active number is limited the same way.
    await p.ctx.store.db.updateTable('account_settings').set({ sender_selection: 'first' }).where('account_id', '=', p.id).execute();
    assert422(await send(p, '+14155550005'), NUMBER_FULL);
    // The next day of the service's zone (UTC here): room again.
    p.clock.advance(DAY);
    assert.equal(await sentFrom(p, '+14155550005'), NY);
    await assertLedgerAddsUp(p.ctx.store);
  },
);

storeTest(
  'MaxRecipientsPerMonth: a known recipient always fits, a new one only while the month has room; the next month starts again',
  async (t) => {
    const p = await setup(t, [SF]);
    await setLimits(p, SF, { max_recipients_per_month: 2 });
    assert.equal(await sentFrom(p, '+14155550001'), SF);
    assert.equal(await sentFrom(p, '+14155550002'), SF);
    assert.equal(await sentFrom(p, '+14155550001'), SF, 'known this month');
    assert422(await send(p, '+14155550003'), EVERY_FULL);
    assert422(await send(p, '+14155550003', { Number: SF }), NUMBER_FULL);
    p.clock.set(Date.UTC(2026, 6, 1, 0, 0, 1));
    assert.equal(await sentFrom(p, '+14155550003'), SF, 'July');
    const rows = await p.ctx.store.db
      .selectFrom('number_month_recipients')
      .select(['month', 'mobile_phone'])
      .where('account_id', '=', p.id)
      .orderBy('month')
      .orderBy('mobile_phone')
      .execute();
    assert.deepEqual(rows, [
      { month: '2026-06', mobile_phone: '14155550001' },
      { month: '2026-06', mobile_phone: '14155550002' },
      { month: '2026-07', mobile_phone: '14155550003' },
    ]);
  },
);

/** A group of the account with these members (digits), made through the API. */
async function groupOf(p: Pool, members: readonly string[]): Promise<number> {
  const g = await call(p.ctx.app, { method: 'POST', path: '/v1/groups/create', token: p.token, body: { fname: 'Pool group' } });
  assert.equal(g.statusCode, 201, g.body);
  const groupId = g.json<{ Id: number }>().Id;
  for (const m of members) {
    const c = await call(p.ctx.app, {
      method: 'POST',
      path: '/v1/contacts/create',
      token: p.token,
      body: { Number: `+${m}`, GroupIds: [groupId] },
    });
    assert.equal(c.statusCode, 201, c.body);
  }
  return groupId;
}

storeTest(
  'send-group under pool: spread over the numbers as one send each would be, all or nothing when they do not all fit',
  async (t) => {
    const p = await setup(t, [NY, SF]);
    const groupId = await groupOf(p, ['14155550001', '14155550002', '12125550003']);
    await setLimits(p, SF, { max_per_day: 1 });
    await setLimits(p, NY, { max_per_day: 1 });
    const before = await snapshot(p);
    for (const body of [{ Message: 'to all' }, { Message: 'Hi {FirstName}' }]) {
      assert422(
        await call(p.ctx.app, { method: 'POST', path: '/v1/sms/send-group', token: p.token, body: { GroupId: groupId, ...body } }),
        EVERY_FULL,
      );
    }
    assert.deepEqual(await snapshot(p), before, 'nothing queued, debited or counted');
    await setLimits(p, NY, { max_per_day: 2 });
    const res = await call(p.ctx.app, {
      method: 'POST',
      path: '/v1/sms/send-group',
      token: p.token,
      body: { GroupId: groupId, Message: 'to all', Priority: 1 },
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json<{ Number: string }>().Number, '', 'spread over two numbers: the Batch names none');
    const messages = await p.ctx.store.db
      .selectFrom('messages')
      .select(['mobile_phone', 'number', 'priority'])
      .where('account_id', '=', p.id)
      .orderBy('mobile_phone')
      .execute();
    assert.deepEqual(
      messages.map((m) => [m.mobile_phone, m.number, Number(m.priority)]),
      [
        ['12125550003', NY, 1],
        ['14155550001', SF, 1],
        ['14155550002', NY, 1],
      ],
    );
    // A Number given that cannot take them all: the number's own 422.
    p.clock.advance(DAY);
    assert422(
      await call(p.ctx.app, {
        method: 'POST',
        path: '/v1/sms/send-group',
        token: p.token,
        body: { GroupId: groupId, Message: 'x', Number: SF },
      }),
      NUMBER_FULL,
    );
    await assertLedgerAddsUp(p.ctx.store);
  },
);

storeTest('Priority: 0 or 1 (default 0), stored on the message; anything else is the 422 on Priority', async (t) => {
  const p = await setup(t, [SF]);
  for (const [value, stored] of [
    [undefined, 0],
    [0, 0],
    ['1', 1],
    [1, 1],
  ] as const) {
    const res = await send(p, '+14155550001', value === undefined ? {} : { Priority: value });
    assert.equal(res.statusCode, 201, res.body);
    const row = await p.ctx.store.db
      .selectFrom('messages')
      .select('priority')
      .where('id', '=', res.json<[{ Id: number }]>()[0].Id)
      .executeTakeFirstOrThrow();
    assert.equal(Number(row.priority), stored, `Priority ${String(value)}`);
  }
  for (const wire of WIRES) {
    const res = await call(p.ctx.app, {
      method: 'POST',
      path: '/v1/sms/send',
      token: p.token,
      wire,
      body: { Message: 'x', MobilePhone: '+14155550001', Priority: 2 },
    });
    assert422(res, [fieldError('Priority', 'Priority is invalid.')], wire);
  }
});

storeTest(
  'sms/schedule under pool: the number is chosen when the message is queued; every number full then: Rejected NUMBER_LIMIT, refunded',
  async (t) => {
    const p = await setup(t, [NY, SF]);
    const at = (minutes: number) => new Date(NOON + minutes * 60_000).toISOString().replace('.000Z', 'Z');
    const first = await call(p.ctx.app, {
      method: 'POST',
      path: '/v1/sms/schedule',
      token: p.token,
      body: { MobilePhone: '+14155550001', Message: 'later', DateTime: at(10), Priority: 1 },
    });
    assert.equal(first.statusCode, 201, first.body);
    const stored = await p.ctx.store.db
      .selectFrom('scheduled_messages')
      .select(['number', 'priority'])
      .where('account_id', '=', p.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(
      { ...stored, priority: Number(stored.priority) },
      { number: '', priority: 1 },
      'no number yet: the pool chooses at the send',
    );
    const scheduler = testScheduler(p.ctx, p.clock);
    await scheduler.drain();
    p.clock.advance(11 * 60_000);
    await scheduler.drain();
    const queued = await p.ctx.store.db
      .selectFrom('messages')
      .select(['number', 'status_id', 'priority'])
      .where('account_id', '=', p.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(
      { number: queued.number, status: Number(queued.status_id), priority: Number(queued.priority) },
      { number: SF, status: 1, priority: 1 },
    );

    // Every number full when the next one comes due.
    await setLimits(p, SF, { max_per_day: 1 });
    await setLimits(p, NY, { max_per_day: 1 });
    assert.equal(await sentFrom(p, '+12125550001'), NY);
    assert.equal(await sentFrom(p, '+14155550009'), SF);
    const second = await call(p.ctx.app, {
      method: 'POST',
      path: '/v1/sms/schedule',
      token: p.token,
      body: { MobilePhone: '+14155550002', Message: 'later', DateTime: at(30) },
    });
    assert.equal(second.statusCode, 201, second.body);
    await scheduler.drain();
    const balance = await balanceOf(p.ctx, p.id);
    p.clock.advance(20 * 60_000);
    await scheduler.drain();
    const rejected = await p.ctx.store.db
      .selectFrom('messages')
      .select(['status_id', 'error_code', 'number'])
      .where('account_id', '=', p.id)
      .where('mobile_phone', '=', '14155550002')
      .executeTakeFirstOrThrow();
    assert.deepEqual({ status: Number(rejected.status_id), code: rejected.error_code }, { status: 6, code: 'NUMBER_LIMIT' });
    assert.equal(await balanceOf(p.ctx, p.id), balance + 1, 'its reservation refunded');
    await assertLedgerAddsUp(p.ctx.store);
  },
);

storeTest("the hourly clean-up drops a number's counters of days and months that are over, and keeps today's", async (t) => {
  const p = await setup(t, [SF]);
  await setLimits(p, SF, { max_per_day: 100, max_recipients_per_month: 100 });
  assert.equal(await sentFrom(p, '+14155550001'), SF);
  const counters = async () => ({
    days: (await p.ctx.store.db.selectFrom('number_day_counts').select('day').execute()).map((r) => r.day),
    months: (await p.ctx.store.db.selectFrom('number_month_recipients').select('month').execute()).map((r) => r.month),
  });
  await purgeExpired(p.ctx.store, p.clock.nowSeconds(), 90);
  assert.deepEqual(await counters(), { days: ['2026-06-10'], months: ['2026-06'] }, 'today and this month are kept');
  p.clock.advance(40 * DAY);
  await purgeExpired(p.ctx.store, p.clock.nowSeconds(), 90);
  assert.deepEqual(await counters(), { days: [], months: ['2026-06'] }, 'July 20: June is last month, kept a while');
  p.clock.advance(30 * DAY);
  await purgeExpired(p.ctx.store, p.clock.nowSeconds(), 90);
  assert.deepEqual(await counters(), { days: [], months: [] });
});
