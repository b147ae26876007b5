/**
 * Recurring scheduled messages (API.md §10.6 `RRule`, API.md §11.7; src/dispatch/scheduler.ts) on
 * each store, on the manual clock, the service zone Europe/Paris (or America/New_York): each
 * occurrence sent once as a Message with its ScheduledMessageId at its wall-clock time across both
 * daylight saving changes; COUNT (exactly that many, then view-scheduled 404), UNTIL, INTERVAL,
 * MONTHLY BYMONTHDAY=31; credits reserved for the next occurrence only; missed occurrences (the
 * scheduler down) sent once and skipped; a crash between an occurrence's send and the next
 * reservation neither skips nor doubles one; update-scheduled changing and clearing the rule;
 * cancel releasing the reservation; Action Required occurrences moving on; merge fields settled
 * at the send (excess refunded, shortfall debited, or Rejected NO_CREDITS); tracked links stored at
 * the send; the published list without RRule.
 */
import assert from 'node:assert/strict';
import type { DemoAccount } from '../../src/domain/demo.ts';
import { createManualClock, type ManualClock } from '../../src/lib/time.ts';
import { Scheduler } from '../../src/dispatch/scheduler.ts';
import { changeCredits } from '../../src/store/repositories/accounts.ts';
import { parseScheduleDateTime } from '../../src/domain/schedule-time.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { call, messagesFromDb } from '../helpers/operations.ts';
import { balanceOf, setBalance } from '../helpers/sms.ts';
import { CANCEL, LIST, UPDATE, VIEW, cancelDemoScheduled, schedule, stateOf, testScheduler } from '../helpers/scheduled.ts';
import { occurrencesOf, recordFromDb } from '../helpers/recurring.ts';
import { storeTest } from '../helpers/stores.ts';

const RECIPIENT = '+15551234567';
const PARIS = 'Europe/Paris';
const START = Date.UTC(2026, 2, 20, 12, 0, 0); // Friday 2026-03-20 13:00 in Paris

async function setup(t: { after(fn: () => unknown): void }, zone = PARIS, overrides: Record<string, string> = {}) {
  const clock = createManualClock(START);
  const ctx = await buildTestApp(t, { MSGSVC_TIMEZONE: zone, ...overrides }, { clock });
  const demo = await ctx.seed();
  // The demo's own scheduled messages are checked and sent like any: cancelled, so that the rounds
  // below hold this test's series only.
  await cancelDemoScheduled(ctx, demo);
  const scheduler = testScheduler(ctx, clock);
  return { ctx, demo, clock, scheduler, zone };
}

/** Epoch seconds of a wall-clock time in `zone`. */
const at = (wall: string, zone: string) => Math.floor(parseScheduleDateTime(wall, zone)! / 1000);
/** `YYYY-MM-DD HH:MM:SS` of an instant in `zone`. */
const wallOf = (seconds: number, zone: string) => new Date(seconds * 1000).toLocaleString('sv-SE', { timeZone: zone });

/**
 * Lets the series run: the clock goes to each next occurrence (the row's scheduled_at) and the
 * scheduler drains, until the row is gone or `until` (epoch seconds) is passed.
 * @returns the balance after each send's round (the next occurrence reserved by then).
 */
async function runSeries(ctx: TestApp, clock: ManualClock, scheduler: Scheduler, id: number, until = Infinity) {
  const balances: number[] = [];
  for (let i = 0; i < 100; i++) {
    const s = await stateOf(ctx, id);
    if (!s || s.scheduledAt > until) break;
    clock.set(Math.max(clock.nowMs(), s.scheduledAt * 1000));
    await scheduler.drain();
    const r = await ctx.store.db.selectFrom('scheduled_messages').select('account_id').where('id', '=', id).executeTakeFirst();
    if (r) balances.push(await balanceOf(ctx, r.account_id));
  }
  return balances;
}

function scheduleRule(ctx: TestApp, demo: DemoAccount, dateTime: string, rrule: string, body: Record<string, unknown> = {}) {
  return schedule(ctx, demo.token, { MobilePhone: RECIPIENT, Message: 'hello', DateTime: dateTime, RRule: rrule, ...body });
}

storeTest(
  'weekly at 09:00 in Paris across the spring change: each occurrence once, at 09:00 wall-clock; COUNT=3 then gone (404)',
  async (t) => {
    const { ctx, demo, clock, scheduler, zone } = await setup(t);
    const start = await balanceOf(ctx, demo.account.id);
    const id = await scheduleRule(ctx, demo, '2026-03-23 09:00:00', 'FREQ=WEEKLY;COUNT=3');
    await scheduler.drain();
    assert.equal(await balanceOf(ctx, demo.account.id), start - 1, 'only the first occurrence is reserved');
    const view = JSON.parse((await call(ctx.app, { path: VIEW, token: demo.token, query: `id=${id}` })).body) as Record<string, unknown>;
    assert.deepEqual(view, await recordFromDb(ctx, id, zone));
    assert.deepEqual([view.DateTime, view.Status_Id, view.RRule], ['2026:03:23 09:00:00', 3, 'FREQ=WEEKLY;COUNT=3']);
    assert.deepEqual(Object.keys(view).slice(-2), ['Subject', 'RRule'], 'RRule is the last field');

    clock.set(at('2026-03-23 09:00:00', zone) * 1000 - 1000);
    assert.equal((await scheduler.drain()).sent, 0, 'not before its time');
    const balances = await runSeries(ctx, clock, scheduler, id);
    const sent = await occurrencesOf(ctx, id);
    assert.deepEqual(
      sent.map((m) => wallOf(m.at, zone)),
      ['2026-03-23 09:00:00', '2026-03-30 09:00:00', '2026-04-06 09:00:00'],
    );
    assert.equal(sent[1]!.at - sent[0]!.at, 7 * 86_400 - 3600, 'the hour the clocks went forward');
    assert.deepEqual(
      sent.map((m) => [m.status, m.credits]),
      [
        [1, 1],
        [1, 1],
        [1, 1],
      ],
    );
    assert.deepEqual(balances, [start - 2, start - 3], 'after each send: the sent one paid, the next one reserved, no more');
    assert.equal(await balanceOf(ctx, demo.account.id), start - 3);
    assert.equal(await stateOf(ctx, id), undefined);
    assert.equal((await call(ctx.app, { path: VIEW, token: demo.token, query: `id=${id}` })).statusCode, 404);
    clock.advance(30 * 86_400_000);
    await scheduler.drain();
    assert.equal((await occurrencesOf(ctx, id)).length, 3, 'exactly COUNT messages');
  },
);

storeTest(
  'the autumn change (Paris) and both changes in America/New_York keep 09:00; DateTime always shows the next occurrence',
  async (t) => {
    for (const [zone, first, expected] of [
      [PARIS, '2026-10-19 09:00:00', ['2026-10-19 09:00:00', '2026-10-26 09:00:00']],
      ['America/New_York', '2027-03-08 09:00:00', ['2027-03-08 09:00:00', '2027-03-15 09:00:00']],
      ['America/New_York', '2026-10-26 09:00:00', ['2026-10-26 09:00:00', '2026-11-02 09:00:00']],
    ] as const) {
      const { ctx, demo, clock, scheduler } = await setup(t, zone);
      const id = await scheduleRule(ctx, demo, first, 'FREQ=WEEKLY;COUNT=2');
      await scheduler.drain();
      clock.set(at(first, zone) * 1000);
      await scheduler.drain();
      const view = JSON.parse((await call(ctx.app, { path: VIEW, token: demo.token, query: `id=${id}` })).body) as { DateTime: string };
      assert.equal(view.DateTime, expected[1].replace(/-/g, ':'), `${zone}: the next occurrence is shown`);
      await runSeries(ctx, clock, scheduler, id);
      assert.deepEqual(
        (await occurrencesOf(ctx, id)).map((m) => wallOf(m.at, zone)),
        expected,
        zone,
      );
    }
  },
);

storeTest('MONTHLY BYMONTHDAY=31 skips short months; UNTIL (a date, inclusive); INTERVAL=2', async (t) => {
  const { ctx, demo, clock, scheduler, zone } = await setup(t);
  const monthly = await scheduleRule(ctx, demo, '2026-03-31 08:00:00', 'FREQ=MONTHLY;BYMONTHDAY=31;COUNT=4');
  const until = await scheduleRule(ctx, demo, '2026-04-01 20:00:00', 'FREQ=DAILY;UNTIL=20260404');
  const every2 = await scheduleRule(ctx, demo, '2026-03-24 07:30:00', 'FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,FR;COUNT=5');
  await scheduler.drain();
  // Run them together: move the clock to the earliest next occurrence each time.
  for (let i = 0; i < 50; i++) {
    const next = (await Promise.all([monthly, until, every2].map((id) => stateOf(ctx, id)))).filter((s) => s !== undefined);
    if (next.length === 0) break;
    clock.set(Math.max(clock.nowMs(), Math.min(...next.map((s) => s.scheduledAt)) * 1000));
    await scheduler.drain();
  }
  const walls = async (id: number) => (await occurrencesOf(ctx, id)).map((m) => wallOf(m.at, zone));
  assert.deepEqual(await walls(monthly), ['2026-03-31 08:00:00', '2026-05-31 08:00:00', '2026-07-31 08:00:00', '2026-08-31 08:00:00']);
  assert.deepEqual(await walls(until), ['2026-04-01 20:00:00', '2026-04-02 20:00:00', '2026-04-03 20:00:00', '2026-04-04 20:00:00']);
  assert.deepEqual(await walls(every2), [
    '2026-03-24 07:30:00',
    '2026-03-27 07:30:00',
    '2026-04-07 07:30:00',
    '2026-04-10 07:30:00',
    '2026-04-21 07:30:00',
  ]);
});

storeTest('the scheduler down over several occurrences: the late one is sent once, the passed ones skipped (and counted)', async (t) => {
  const { ctx, demo, clock, scheduler, zone } = await setup(t);
  const start = await balanceOf(ctx, demo.account.id);
  const id = await scheduleRule(ctx, demo, '2026-03-23 09:00:00', 'FREQ=DAILY;COUNT=5');
  await scheduler.drain();
  // Down from before the first occurrence to 2026-03-25 12:00: occurrences 1, 2 and 3 have passed.
  clock.set(at('2026-03-25 12:00:00', zone) * 1000);
  const round = await scheduler.drain();
  assert.equal(round.sent, 1, 'one message for the passed ones');
  assert.equal((await stateOf(ctx, id))!.scheduledAt, at('2026-03-26 09:00:00', zone), 'the next one still ahead (occurrence 4)');
  await runSeries(ctx, clock, scheduler, id);
  const sent = await occurrencesOf(ctx, id);
  assert.deepEqual(
    sent.map((m) => wallOf(m.at, zone)),
    ['2026-03-25 12:00:00', '2026-03-26 09:00:00', '2026-03-27 09:00:00'],
    'occurrences 2 and 3 skipped; COUNT=5 ends with occurrence 5',
  );
  assert.equal(await balanceOf(ctx, demo.account.id), start - 3);
});

storeTest(
  'a crash between an occurrence’s send and the next reservation (the check throws; the lease runs out) skips and doubles nothing',
  async (t) => {
    const { ctx, demo, clock, scheduler, zone } = await setup(t);
    const start = await balanceOf(ctx, demo.account.id);
    const id = await scheduleRule(ctx, demo, '2026-03-23 09:00:00', 'FREQ=DAILY;COUNT=3');
    await scheduler.drain();
    // A scheduler whose check step dies (the process killed after the send committed).
    const crashing = testScheduler(ctx, clock);
    Object.assign(crashing, {
      check: () => Promise.reject(new Error('killed')),
    });
    clock.set(at('2026-03-23 09:00:00', zone) * 1000);
    const first = await crashing.runOnce();
    assert.equal(first.sent, 1);
    assert.deepEqual(
      [(await stateOf(ctx, id))!.status, (await stateOf(ctx, id))!.reserved],
      [1, 0],
      'sent and moved on in one transaction: Pending, nothing reserved',
    );
    await assert.rejects(crashing.runOnce(), /killed/);
    assert.equal((await scheduler.drain()).claimed, 0, 'its lease holds the row');
    assert.equal((await occurrencesOf(ctx, id)).length, 1);
    assert.equal(await balanceOf(ctx, demo.account.id), start - 1, 'nothing reserved for the next one yet');
    clock.advance(30_000);
    await scheduler.drain();
    assert.equal((await stateOf(ctx, id))!.reserved, 1, 'the healthy scheduler reserved the next occurrence');

    // A scheduler that dies holding the due occurrence (its send step never runs).
    const dying = testScheduler(ctx, clock);
    Object.assign(dying, { send: () => Promise.reject(new Error('killed')) });
    clock.set(at('2026-03-24 09:00:00', zone) * 1000);
    await assert.rejects(dying.runOnce(), /killed/);
    await scheduler.drain();
    assert.equal((await occurrencesOf(ctx, id)).length, 1, 'leased: not sent by another yet');
    clock.advance(30_000);
    await scheduler.drain();
    await runSeries(ctx, clock, scheduler, id);
    const sent = await occurrencesOf(ctx, id);
    assert.deepEqual(
      sent.map((m) => wallOf(m.at, zone)),
      ['2026-03-23 09:00:00', '2026-03-24 09:00:30', '2026-03-25 09:00:00'],
      'exactly one message per occurrence',
    );
    assert.equal(await balanceOf(ctx, demo.account.id), start - 3);
    assert.equal(await stateOf(ctx, id), undefined);
  },
);

storeTest(
  'update-scheduled: a new rule counts from DateTime again; Message alone keeps the count; "" clears it (the next send is the last)',
  async (t) => {
    const { ctx, demo, clock, scheduler, zone } = await setup(t);
    const start = await balanceOf(ctx, demo.account.id);
    const id = await scheduleRule(ctx, demo, '2026-03-23 09:00:00', 'FREQ=DAILY;COUNT=3');
    await scheduler.drain();
    clock.set(at('2026-03-23 09:00:00', zone) * 1000);
    await scheduler.drain();
    const patch = (body: Record<string, unknown>) =>
      call(ctx.app, { method: 'PATCH', path: UPDATE, token: demo.token, query: `id=${id}`, body });
    // Message only: occurrence 2 of 3 still.
    const m = await patch({ Message: 'changed' });
    assert.equal(m.statusCode, 200, m.body);
    assert.deepEqual(JSON.parse(m.body), await recordFromDb(ctx, id, zone));
    assert.equal((JSON.parse(m.body) as { RRule: string }).RRule, 'FREQ=DAILY;COUNT=3');
    assert.equal(await balanceOf(ctx, demo.account.id), start - 1, 'the update released the reservation');
    await runSeries(ctx, clock, scheduler, id);
    assert.deepEqual(
      (await occurrencesOf(ctx, id)).map((o) => [wallOf(o.at, zone), o.message]),
      [
        ['2026-03-23 09:00:00', 'hello'],
        ['2026-03-24 09:00:00', 'changed'],
        ['2026-03-25 09:00:00', 'changed'],
      ],
    );

    // A new rule: counted from the DateTime shown (the next occurrence).
    const b = await scheduleRule(ctx, demo, '2026-03-30 10:00:00', 'FREQ=DAILY;COUNT=2');
    await scheduler.drain();
    clock.set(at('2026-03-30 10:00:00', zone) * 1000);
    await scheduler.drain();
    const changed = await call(ctx.app, {
      method: 'PUT',
      path: UPDATE,
      token: demo.token,
      query: `id=${b}`,
      body: { RRule: 'FREQ=WEEKLY;COUNT=2' },
    });
    assert.equal(changed.statusCode, 200, changed.body);
    assert.deepEqual(
      [(JSON.parse(changed.body) as { DateTime: string }).DateTime, (JSON.parse(changed.body) as { RRule: string }).RRule],
      ['2026:03:31 10:00:00', 'FREQ=WEEKLY;COUNT=2'],
    );
    await runSeries(ctx, clock, scheduler, b);
    assert.deepEqual(
      (await occurrencesOf(ctx, b)).map((o) => wallOf(o.at, zone)),
      ['2026-03-30 10:00:00', '2026-03-31 10:00:00', '2026-04-07 10:00:00'],
    );

    // Cleared: a single message at the DateTime shown.
    const c = await scheduleRule(ctx, demo, '2026-04-10 10:00:00', 'FREQ=DAILY');
    const cleared = await call(ctx.app, { method: 'PATCH', path: UPDATE, token: demo.token, query: `id=${c}`, body: { RRule: '' } });
    assert.equal((JSON.parse(cleared.body) as { RRule: string }).RRule, '');
    await runSeries(ctx, clock, scheduler, c);
    assert.equal((await occurrencesOf(ctx, c)).length, 1);
    assert.equal(await stateOf(ctx, c), undefined);
  },
);

storeTest('cancel-scheduled of a recurring message releases the next occurrence’s reservation; nothing more is sent', async (t) => {
  const { ctx, demo, clock, scheduler, zone } = await setup(t);
  const start = await balanceOf(ctx, demo.account.id);
  const id = await scheduleRule(ctx, demo, '2026-03-23 09:00:00', 'FREQ=DAILY', { Message: 'b'.repeat(200) }); // 2 segments
  await scheduler.drain();
  clock.set(at('2026-03-23 09:00:00', zone) * 1000);
  await scheduler.drain();
  assert.equal(await balanceOf(ctx, demo.account.id), start - 4, 'one sent (2) and the next reserved (2)');
  assert.equal((await call(ctx.app, { method: 'DELETE', path: CANCEL, token: demo.token, query: `id=${id}` })).statusCode, 204);
  assert.equal(await balanceOf(ctx, demo.account.id), start - 2);
  clock.advance(10 * 86_400_000);
  await scheduler.drain();
  assert.equal((await occurrencesOf(ctx, id)).length, 1);
});

storeTest('Action Required: an occurrence that passes unsent is skipped and the next one checked; credits added approve it', async (t) => {
  const { ctx, demo, clock, scheduler, zone } = await setup(t);
  await setBalance(ctx, demo.account.id, 0);
  const id = await scheduleRule(ctx, demo, '2026-03-23 09:00:00', 'FREQ=DAILY;COUNT=3');
  await scheduler.drain();
  assert.deepEqual([(await stateOf(ctx, id))!.status, (await stateOf(ctx, id))!.reason], [2, 'NO_CREDITS']);
  clock.set(at('2026-03-23 09:00:00', zone) * 1000);
  const round = await scheduler.drain();
  assert.equal(round.skipped, 1);
  const s = (await stateOf(ctx, id))!;
  assert.deepEqual(
    [s.status, s.scheduledAt],
    [2, at('2026-03-24 09:00:00', zone)],
    'moved to occurrence 2, checked again: still no credits',
  );
  await changeCredits(ctx.store.db, demo.account.id, 5, 'add', clock.nowSeconds());
  await scheduler.drain();
  assert.deepEqual([(await stateOf(ctx, id))!.status, (await stateOf(ctx, id))!.reserved], [3, 1]);
  await runSeries(ctx, clock, scheduler, id);
  assert.deepEqual(
    (await occurrencesOf(ctx, id)).map((o) => wallOf(o.at, zone)),
    ['2026-03-24 09:00:00', '2026-03-25 09:00:00'],
  );
  // The last occurrence Action Required stays listed, unsent, as a single message does.
  await setBalance(ctx, demo.account.id, 0);
  const last = await scheduleRule(ctx, demo, '2026-03-27 09:00:00', 'FREQ=DAILY;COUNT=1');
  await scheduler.drain();
  clock.set(at('2026-03-27 09:00:00', zone) * 1000);
  assert.equal((await scheduler.drain()).skipped, 0);
  assert.equal((await stateOf(ctx, last))!.status, 2);
});

storeTest('merge fields: the check reserves the personalised cost; the send personalises again and settles the difference', async (t) => {
  const { ctx, demo, clock, scheduler, zone } = await setup(t);
  const contact = demo.contacts.find((c) => c.OptedOut === 0)!;
  const setName = (name: string) =>
    ctx.store.db
      .updateTable('contacts')
      .set({ first_name: name })
      .where('account_id', '=', demo.account.id)
      .where('number', '=', contact.Number)
      .execute();
  await setName('Al');
  const start = await balanceOf(ctx, demo.account.id);
  const id = await scheduleRule(ctx, demo, '2026-03-23 09:00:00', 'FREQ=DAILY;COUNT=3', {
    MobilePhone: `+${contact.Number}`,
    Message: `${'x'.repeat(155)} {FirstName}`,
  });
  await scheduler.drain();
  assert.equal(await balanceOf(ctx, demo.account.id), start - 1, '158 characters: one segment reserved');
  assert.equal((await recordFromDb(ctx, id, zone)).Message, `${'x'.repeat(155)} {FirstName}`, 'shown as written');
  // Longer now: 2 segments at the send, the extra debited.
  await setName('Alexandra');
  clock.set(at('2026-03-23 09:00:00', zone) * 1000);
  await scheduler.drain();
  let sent = await occurrencesOf(ctx, id);
  assert.deepEqual([sent[0]!.message, sent[0]!.segments, sent[0]!.credits, sent[0]!.status], [`${'x'.repeat(155)} Alexandra`, 2, 2, 1]);
  assert.equal(await balanceOf(ctx, demo.account.id), start - 2 - 2, 'sent (2) and the next reserved (2)');
  // Shorter again: the excess refunded at the send.
  await setName('Al');
  clock.set(at('2026-03-24 09:00:00', zone) * 1000);
  await scheduler.drain();
  sent = await occurrencesOf(ctx, id);
  assert.deepEqual([sent[1]!.segments, sent[1]!.credits], [1, 1]);
  assert.equal(await balanceOf(ctx, demo.account.id), start - 3 - 1);
  // Longer and no credits to pay the rest: Rejected NO_CREDITS, the reservation refunded.
  await setName('Alexandra');
  await setBalance(ctx, demo.account.id, 0);
  clock.set(at('2026-03-25 09:00:00', zone) * 1000);
  await scheduler.drain();
  sent = await occurrencesOf(ctx, id);
  assert.deepEqual([sent[2]!.status, sent[2]!.errorCode, sent[2]!.credits], [6, 'NO_CREDITS', 2]);
  assert.equal(await balanceOf(ctx, demo.account.id), 1, 'its reservation (1) given back');
  assert.equal(await stateOf(ctx, id), undefined);
});

storeTest('ShortenLinks: stored with the schedule, not in the record; the links are stored with each occurrence’s message', async (t) => {
  const { ctx, demo, clock, zone } = await setup(t, PARIS, { MSGSVC_LINK_DOMAIN: 'https://l.example' });
  const scheduler = new Scheduler({
    store: ctx.store,
    clock,
    prices: { smsSegmentCredits: 1, mmsCredits: 3 },
    batchSize: 100,
    leaseMs: 30_000,
    pollMs: 5,
    linkDomain: 'https://l.example',
  });
  const id = await scheduleRule(ctx, demo, '2026-03-23 09:00:00', 'FREQ=DAILY;COUNT=2', {
    Message: 'See https://example.com/a?b=1 now',
    ShortenLinks: 1,
  });
  const record = await recordFromDb(ctx, id, zone);
  assert.ok(!('ShortenLinks' in record));
  const view = JSON.parse((await call(ctx.app, { path: VIEW, token: demo.token, query: `id=${id}` })).body) as Record<string, unknown>;
  assert.deepEqual(view, record, 'the record has no ShortenLinks');
  await scheduler.drain();
  await runSeries(ctx, clock, scheduler, id);
  const sent = await occurrencesOf(ctx, id);
  assert.equal(sent.length, 2);
  const codes: string[] = [];
  for (const m of sent) {
    assert.match(m.message, /^See https:\/\/l\.example\/l\/[A-Za-z0-9_-]{7} now$/);
    const links = await ctx.store.db.selectFrom('message_links').select(['code', 'url']).where('message_id', '=', m.id).execute();
    assert.deepEqual(
      links.map((l) => l.url),
      ['https://example.com/a?b=1'],
    );
    assert.ok(m.message.endsWith(`${links[0]!.code} now`));
    codes.push(links[0]!.code);
  }
  assert.notEqual(codes[0], codes[1], 'each occurrence its own code');
});

storeTest(
  'sms/single-schedule-messages keeps API.md §9.10’s fields exactly for recurring messages (no RRule), JSON and SQL-built pages',
  async (t) => {
    const { ctx, demo, scheduler } = await setup(t, 'UTC');
    await scheduleRule(ctx, demo, '2026-03-23 09:00:00', 'FREQ=WEEKLY;COUNT=3');
    await scheduler.drain();
    const list = await call(ctx.app, { path: LIST, token: demo.token, query: 'per-page=100' });
    assert.equal(list.statusCode, 200);
    assert.ok(!list.body.includes('RRule'), list.body);
    assert.equal(list.body, JSON.stringify(await messagesFromDb(ctx, demo.account.id)));
    for (const r of JSON.parse(list.body) as Record<string, unknown>[])
      assert.deepEqual(Object.keys(r), [
        'Id',
        'MobilePhone',
        'Message',
        'DateTime',
        'Status_Id',
        'Status_Description',
        'Type_Id',
        'Type_Description',
        'MmsTemplateId',
        'Subject',
      ]);
    const xml = await call(ctx.app, { path: LIST, token: demo.token, wire: 'xml', query: 'per-page=100' });
    assert.ok(!xml.body.includes('RRule'));
  },
);
