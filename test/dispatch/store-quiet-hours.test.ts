/**
 * Quiet hours in the dispatcher (API.md §14.3.5) on each store, on one manual clock shared by the
 * app and the dispatcher: a message whose turn comes inside the quiet hours of the recipient's
 * local time waits Queued (no attempt spent, no carrier asked) and goes at the exact end; a window
 * spanning midnight; the zone of a country of one zone (+33 while the account is in New York) and
 * the account's zone for a country of several (+1); a PUT that clears or changes the hours
 * releases the held messages at once; STOP/HELP replies and keyword autoreplies are never held;
 * a day the clocks change.
 */
import assert from 'node:assert/strict';
import type { DemoAccount } from '../../src/domain/demo.ts';
import { Dispatcher } from '../../src/dispatch/dispatcher.ts';
import { createSandboxCarrier } from '../../src/dispatch/sandbox.ts';
import { createManualClock, type ManualClock } from '../../src/lib/time.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { call } from '../helpers/operations.ts';
import { storeTest } from '../helpers/stores.ts';

const US = '+12025550143'; // Washington DC: a US number, the US has several zones
const FR = '+33612345678'; // France: Europe/Paris
const JP = '+819012345678'; // Japan: Asia/Tokyo

interface World {
  ctx: TestApp;
  demo: DemoAccount;
  clock: ManualClock;
  dispatcher: Dispatcher;
  submits: Map<number, number>;
}

async function world(t: { after(fn: () => unknown): void }, startMs: number, serviceZone = 'UTC'): Promise<World> {
  const clock = createManualClock(startMs);
  const ctx = await buildTestApp(t, { MSGSVC_TIMEZONE: serviceZone }, { clock });
  const demo = await ctx.seed();
  const submits = new Map<number, number>();
  const carrier = createSandboxCarrier({ receiptMs: 10 * 86_400_000, onSubmit: (m) => submits.set(m.id, (submits.get(m.id) ?? 0) + 1) });
  const dispatcher = new Dispatcher({
    store: ctx.store,
    carrier,
    clock,
    batchSize: 100,
    leaseMs: 30_000,
    maxAttempts: 5,
    pollMs: 5,
    timeZone: serviceZone,
  });
  // Whatever the demo queued is sent before the case starts.
  await dispatcher.drain();
  submits.clear();
  return { ctx, demo, clock, dispatcher, submits };
}

/** Runs rounds until nothing is due; `held`: how many of their claims quiet hours held (the stats' count). */
async function drain(w: World) {
  const before = w.dispatcher.stats().held;
  const r = await w.dispatcher.drain();
  return { ...r, held: w.dispatcher.stats().held - before };
}

async function settings(w: World, body: Record<string, unknown>): Promise<void> {
  const res = await call(w.ctx.app, { method: 'PUT', path: '/v1/account/settings', token: w.demo.token, body });
  assert.equal(res.statusCode, 200, res.body);
}

async function send(w: World, mobilePhone: string, message = 'hello'): Promise<number> {
  const res = await call(w.ctx.app, {
    method: 'POST',
    path: '/v1/sms/send',
    token: w.demo.token,
    body: { MobilePhone: mobilePhone, Message: message },
  });
  assert.equal(res.statusCode, 201, res.body);
  return (JSON.parse(res.body) as { Id: number }[])[0]!.Id;
}

async function state(w: World, id: number) {
  const r = await w.ctx.store.db
    .selectFrom('messages')
    .select(['status_id', 'due_at', 'attempts', 'quiet_state', 'lease_token'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return { status: r.status_id, dueAt: r.due_at === null ? null : Number(r.due_at), attempts: r.attempts, quiet: r.quiet_state };
}

const at = (iso: string) => Date.parse(iso);

storeTest('held inside the quiet hours (22:00–07:00 spans midnight), Queued with no attempt spent; sent at the exact end', async (t) => {
  // 22:00 in New York (EST, UTC−5): the first minute of the window.
  const w = await world(t, at('2027-01-12T03:00:00Z'));
  await settings(w, { QuietHoursStart: '22:00', QuietHoursEnd: '07:00', TimeZone: 'America/New_York' });
  const id = await send(w, US);
  const round = await drain(w);
  assert.equal(round.claimed, 1);
  assert.equal(round.held, 1);
  assert.equal(round.sent, 0);
  assert.equal(w.submits.size, 0, 'no carrier was asked');
  const end = at('2027-01-12T12:00:00Z'); // 07:00 EST
  assert.deepEqual(await state(w, id), { status: 1, dueAt: end, attempts: 0, quiet: 1 });
  assert.equal(w.dispatcher.stats().held, 1);
  assert.equal(w.dispatcher.stats().submits.retry + w.dispatcher.stats().submits.error, 0, 'no carrier failure counted');
  // Still inside one millisecond before the end: nothing due.
  w.clock.set(end - 1);
  assert.equal((await drain(w)).claimed, 0);
  w.clock.set(end);
  const released = await drain(w);
  assert.equal(released.sent, 1);
  assert.deepEqual(await state(w, id), { status: 2, dueAt: null, attempts: 1, quiet: 0 });
  assert.equal(w.submits.get(id), 1);
});

storeTest('spanning midnight: 21:59 goes, 22:00 and 06:59 are held, 07:00 goes (account zone UTC by default)', async (t) => {
  const w = await world(t, at('2027-01-12T21:59:59.999Z'));
  await settings(w, { QuietHoursStart: '22:00', QuietHoursEnd: '07:00' });
  const before = await send(w, US);
  assert.equal((await drain(w)).sent, 1, '21:59:59.999 is outside');
  w.clock.set(at('2027-01-12T22:00:00Z'));
  const late = await send(w, US);
  w.clock.set(at('2027-01-13T06:59:00Z'));
  const early = await send(w, US);
  w.clock.set(at('2027-01-12T22:00:00Z'));
  await drain(w);
  assert.equal((await state(w, late)).dueAt, at('2027-01-13T07:00:00Z'));
  w.clock.set(at('2027-01-13T06:59:00Z'));
  await drain(w);
  assert.equal((await state(w, early)).dueAt, at('2027-01-13T07:00:00Z'));
  assert.equal((await state(w, before)).status, 2);
  w.clock.set(at('2027-01-13T07:00:00Z'));
  assert.equal((await drain(w)).sent, 2);
});

storeTest("the recipient's zone: +33 in Paris time while the account is in New York; +1 in the account's zone; +81 outside", async (t) => {
  // 03:00Z: 22:00 in New York (inside), 04:00 in Paris (inside), 12:00 in Tokyo (outside).
  const w = await world(t, at('2027-01-12T03:00:00Z'));
  await settings(w, { QuietHoursStart: '22:00', QuietHoursEnd: '07:00', TimeZone: 'America/New_York' });
  const fr = await send(w, FR);
  const us = await send(w, US);
  const jp = await send(w, JP);
  const round = await drain(w);
  assert.equal(round.held, 2);
  assert.equal(round.sent, 1);
  assert.equal((await state(w, jp)).status, 2);
  assert.equal((await state(w, fr)).dueAt, at('2027-01-12T06:00:00Z'), '07:00 in Paris (CET, UTC+1)');
  assert.equal((await state(w, us)).dueAt, at('2027-01-12T12:00:00Z'), '07:00 in New York');
  w.clock.set(at('2027-01-12T06:00:00Z'));
  assert.equal((await drain(w)).sent, 1);
  assert.equal((await state(w, fr)).status, 2);
  assert.equal((await state(w, us)).status, 1);
});

storeTest('a PUT that changes or clears the hours releases the held messages at once; the dispatcher checks them again', async (t) => {
  const w = await world(t, at('2027-01-12T03:00:00Z'));
  await settings(w, { QuietHoursStart: '22:00', QuietHoursEnd: '07:00', TimeZone: 'America/New_York' });
  const a = await send(w, US);
  const b = await send(w, US);
  await drain(w);
  assert.equal((await state(w, a)).dueAt, at('2027-01-12T12:00:00Z'));
  // A new end: due now, then held again until the new end.
  w.clock.advance(60_000);
  await settings(w, { QuietHoursEnd: '05:00' });
  assert.equal((await state(w, a)).dueAt, w.clock.nowMs(), 'released by the PUT');
  const again = await drain(w);
  assert.equal(again.held, 2);
  assert.equal((await state(w, a)).dueAt, at('2027-01-12T10:00:00Z'), '05:00 in New York');
  assert.equal((await state(w, b)).attempts, 0);
  // Moved so that now is outside: they go at once.
  w.clock.advance(60_000);
  await settings(w, { QuietHoursStart: '23:00' });
  assert.equal((await drain(w)).sent, 2);
  // Cleared: a held one goes at once.
  await settings(w, { QuietHoursStart: '22:00', QuietHoursEnd: '07:00' });
  const c = await send(w, US);
  assert.equal((await drain(w)).held, 1);
  await settings(w, { QuietHoursStart: '', QuietHoursEnd: '' });
  assert.equal((await state(w, c)).dueAt, w.clock.nowMs());
  assert.equal((await drain(w)).sent, 1);
  assert.deepEqual(await state(w, c), { status: 2, dueAt: null, attempts: 1, quiet: 0 });
  // A change of TimeZone releases too: in Tokyo it is day.
  await settings(w, { QuietHoursStart: '22:00', QuietHoursEnd: '07:00' });
  const d = await send(w, US);
  assert.equal((await drain(w)).held, 1);
  await settings(w, { TimeZone: 'Asia/Tokyo' });
  assert.equal((await drain(w)).sent, 1);
  assert.equal((await state(w, d)).status, 2);
});

storeTest('STOP and HELP replies and keyword autoreplies are never held; other messages of the account are', async (t) => {
  const w = await world(t, at('2027-01-12T03:00:00Z'));
  await settings(w, { QuietHoursStart: '00:00', QuietHoursEnd: '23:59' });
  const reserve = await call(w.ctx.app, {
    method: 'POST',
    path: '/v1/keyword/reserve',
    token: w.demo.token,
    body: { Keyword: 'QUIETWORD', Number: 55155, AutoreplyMessage: 'Thanks for joining!' },
  });
  assert.equal(reserve.statusCode, 201, reserve.body);
  // (STOP from another sender: the keyword's sender must not have opted out when its autoreply goes.)
  for (const [from, text] of [
    ['+12025550177', 'HELP'],
    ['+12025550177', 'QUIETWORD please'],
    ['+12025550179', 'STOP'],
  ]) {
    const res = await call(w.ctx.app, {
      method: 'POST',
      path: '/v1/sandbox/inbound',
      token: w.demo.token,
      body: { From: from, To: '55155', Message: text },
    });
    assert.equal(res.statusCode, 201, res.body);
  }
  const plain = await send(w, '+12025550178');
  const round = await drain(w);
  assert.equal(round.held, 1, 'only the ordinary message');
  assert.equal((await state(w, plain)).quiet, 1);
  const replies = await w.ctx.store.db
    .selectFrom('messages')
    .select(['message', 'status_id', 'quiet_state', 'opt_out_exempt'])
    .where('account_id', '=', w.demo.account.id)
    .where('mobile_phone', 'in', ['12025550177', '12025550179'])
    .where('direction', '=', 1)
    .orderBy('id')
    .execute();
  assert.deepEqual(
    replies.map((r) => [r.message.slice(0, 20), r.status_id]),
    [
      ['Reply STOP to unsubs', 2],
      ['Thanks for joining!', 2],
      ['You have been unsubs', 2],
    ],
  );
  assert.equal(replies[1]!.quiet_state, 2, 'the autoreply is marked never held');
});

storeTest('a day the clocks change: 22:00–07:00 in New York ends at 07:00 EDT (11:00Z) on 14 March 2027', async (t) => {
  // 22:30 EST on Saturday 13 March; the clocks go forward at 02:00 on the 14th.
  const w = await world(t, at('2027-03-14T03:30:00Z'), 'America/New_York');
  await settings(w, { QuietHoursStart: '22:00', QuietHoursEnd: '07:00' });
  const id = await send(w, US);
  await drain(w);
  assert.equal((await state(w, id)).dueAt, at('2027-03-14T11:00:00Z'));
  // An end in the skipped hour: the moment the clocks jump (03:00 EDT = 07:00Z).
  await settings(w, { QuietHoursEnd: '02:30' });
  await drain(w);
  assert.equal((await state(w, id)).dueAt, at('2027-03-14T07:00:00Z'));
});
