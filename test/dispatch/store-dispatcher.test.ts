/**
 * The dispatcher and the sandbox carrier (API.md §11.3, §10.6 credits), on each store,
 * with a manual clock: the sandbox's three magic recipients, refunds on Failed and Rejected only,
 * Rejected for a recipient who opted out or a number no longer Active after queueing, `sending`
 * committed before the carrier call, a lease that runs out is retried, a late outcome of a lost
 * lease is not written, temporary refusals back off and end Failed after the last attempt, MMS
 * routing, receipts pushed by a carrier, and the real loop started and stopped.
 */
import assert from 'node:assert/strict';
import type { DemoAccount } from '../../src/domain/demo.ts';
import type { Carrier, OutboundMessage, SubmitResult } from '../../src/dispatch/carrier.ts';
import { createSandboxCarrier } from '../../src/dispatch/sandbox.ts';
import { claimDue, markSent } from '../../src/store/repositories/dispatch.ts';
import { insertMessage } from '../../src/store/repositories/message-log.ts';
import { debitCredits } from '../../src/store/repositories/credits.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { call } from '../helpers/operations.ts';
import { balanceOf, messageFromDb, setNumberStatus, setOptedOut, testDispatcher } from '../helpers/sms.ts';
import { storeTest } from '../helpers/stores.ts';

async function send(ctx: TestApp, demo: DemoAccount, body: Record<string, unknown>): Promise<number> {
  const res = await call(ctx.app, { method: 'POST', path: '/v1/sms/send', token: demo.token, body: { Message: 'hello', ...body } });
  assert.equal(res.statusCode, 201, res.body);
  return (JSON.parse(res.body) as { Id: number }[])[0]!.Id;
}

const status = async (ctx: TestApp, id: number) => {
  const m = await messageFromDb(ctx, id);
  return `${m.Status_Description}${m.ErrorCode ? ` ${m.ErrorCode}` : ''}`;
};

/** A carrier scripted per attempt: `script(message)` decides each submit. */
function scriptedCarrier(
  script: (m: OutboundMessage) => SubmitResult | Promise<SubmitResult>,
  supportsMms = true,
): Carrier & { calls: OutboundMessage[] } {
  const calls: OutboundMessage[] = [];
  return {
    name: 'scripted',
    supportsMms,
    window: 4,
    calls,
    async start() {},
    async stop() {},
    async submit(m) {
      calls.push(m);
      return script(m);
    },
  };
}

storeTest(
  'sandbox: Sent at once, Delivered a moment later; +15005550001 Undelivered, …0002 Failed (refunded), …0003 stays Sent',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const start = await balanceOf(ctx, demo.account.id);
    const ids = {
      ok: await send(ctx, demo, { MobilePhone: '+15551234567', Message: 'a'.repeat(200) }),
      undelivered: await send(ctx, demo, { MobilePhone: '+15005550001' }),
      failed: await send(ctx, demo, { MobilePhone: '+15005550002', Message: 'b'.repeat(400) }),
      silent: await send(ctx, demo, { MobilePhone: '+15005550003' }),
    };
    const queued = start - (await balanceOf(ctx, demo.account.id));
    assert.equal(queued, 2 + 1 + 3 + 1);
    const { dispatcher, clock, submits } = testDispatcher(ctx, { receiptMs: 1500 });
    const sentAt = clock.nowSeconds();
    const first = await dispatcher.drain();
    assert.deepEqual([first.claimed, first.sent, first.failed], [4, 3, 1]);
    assert.equal(await status(ctx, ids.ok), 'Sent');
    assert.equal(await status(ctx, ids.failed), 'Failed ESME_RSUBMITFAIL');
    assert.equal(await balanceOf(ctx, demo.account.id), start - queued + 3, 'the Failed message is refunded at once');
    clock.advance(1499);
    assert.equal((await dispatcher.drain()).receipts, 0, 'not yet');
    clock.advance(1);
    assert.equal((await dispatcher.drain()).receipts, 2);
    assert.equal(await status(ctx, ids.ok), 'Delivered');
    assert.equal(await status(ctx, ids.undelivered), 'Undelivered UNDELIV');
    assert.equal(await status(ctx, ids.silent), 'Sent');
    clock.advance(3_600_000);
    await dispatcher.drain();
    assert.equal(await status(ctx, ids.silent), 'Sent', 'no receipt ever comes for +15005550003');
    assert.equal(await balanceOf(ctx, demo.account.id), start - queued + 3, 'Undelivered is not refunded');
    const ok = await messageFromDb(ctx, ids.ok);
    assert.equal(ok.DateSent, new Date(sentAt * 1000).toISOString().slice(0, 19).replace('T', ' '));
    assert.equal(
      ok.DateDelivered,
      new Date((sentAt + 1) * 1000).toISOString().slice(0, 19).replace('T', ' '),
      'delivered 1.5 s later, by the clock',
    );
    assert.deepEqual(
      [...submits.entries()].sort(),
      Object.values(ids)
        .map((id) => [id, 1])
        .sort(),
      'each submitted once',
    );
  },
);

storeTest(
  'Rejected with a refund: recipient opted out, number no longer Active (or gone); an API.md §11.6 confirmation still goes',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const [a, b] = demo.contacts.filter((c) => c.OptedOut === 0);
    const start = await balanceOf(ctx, demo.account.id);
    const optedOut = await send(ctx, demo, { PhoneNumberId: a!.Id, Message: 'x'.repeat(300) });
    const inactive = await send(ctx, demo, { PhoneNumberId: b!.Id, Number: '15550100001' });
    const fine = await send(ctx, demo, { MobilePhone: '+15551234567' });
    // An API.md §11.5 confirmation (free, exempt from the opt-out rule), written as API.md §11.5 will write it.
    const confirmation = (
      await insertMessage(
        ctx.store.db,
        demo.account.id,
        {
          direction: 1,
          number: '55155',
          mobilePhone: a!.Number,
          message: 'You have been unsubscribed…',
          typeId: 1,
          statusId: 1,
          segments: 1,
          credits: 0,
          batchId: null,
          scheduledMessageId: null,
          optOutExempt: 1,
          dueAt: 0,
        },
        0,
      )
    ).id;
    await setOptedOut(ctx, demo.account.id, a!.Number, 1);
    await setNumberStatus(ctx, demo.account.id, '15550100001', 301);
    const { dispatcher, submits, clock } = testDispatcher(ctx);
    const round = await dispatcher.drain();
    assert.equal(round.rejected, 2);
    assert.equal(await status(ctx, optedOut), 'Rejected OPTED_OUT');
    assert.equal(await status(ctx, inactive), 'Rejected NUMBER_INACTIVE');
    assert.equal(await status(ctx, fine), 'Sent');
    assert.equal(await status(ctx, confirmation), 'Sent');
    assert.equal(submits.get(optedOut), undefined, 'a Rejected message never reaches the carrier');
    assert.equal(submits.get(inactive), undefined);
    assert.equal(await balanceOf(ctx, demo.account.id), start - 1, 'both Rejected refunded; only the sent one paid');
    // A number the account no longer has at all.
    const gone = await send(ctx, demo, { MobilePhone: '+15551234567', Number: '55155' });
    await ctx.store.db
      .updateTable('account_numbers')
      .set({ number: '55166' })
      .where('account_id', '=', demo.account.id)
      .where('number', '=', '55155')
      .execute();
    // Queued on the system clock after the dispatcher's clock was set (a slow run may cross its second).
    clock.advance(60_000);
    await dispatcher.drain();
    assert.equal(await status(ctx, gone), 'Rejected NUMBER_INACTIVE');
  },
);

storeTest(
  'sending is committed with a lease before the carrier call; a lease that runs out is retried; a lost lease writes nothing',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const id = await send(ctx, demo, { MobilePhone: '+15551234567' });
    const seen: unknown[] = [];
    const carrier = scriptedCarrier(async (m) => {
      // Another connection's view of the row while the carrier has it: committed as sending.
      const row = await ctx.store.db
        .selectFrom('messages')
        .select(['status_id', 'lease_token', 'due_at', 'attempts'])
        .where('id', '=', m.id)
        .executeTakeFirstOrThrow();
      seen.push({ ...row, due_at: Number(row.due_at) });
      return { kind: 'accepted', carrierMessageId: `c-${m.attempt}` };
    });
    const { dispatcher, clock } = testDispatcher(ctx, { carrier, leaseMs: 10_000 });

    // A dispatcher that claimed the message and died before writing anything.
    const dead = await claimDue(ctx.store.db, clock.nowMs(), 10, clock.nowMs() + 10_000, 'dead-token');
    assert.deepEqual(
      dead.map((m) => [m.id, m.attempts]),
      [[id, 1]],
    );
    assert.equal((await dispatcher.runOnce()).claimed, 0, 'held by the lease');
    clock.advance(9_999);
    assert.equal((await dispatcher.runOnce()).claimed, 0);
    clock.advance(1);
    const round = await dispatcher.runOnce();
    assert.deepEqual([round.claimed, round.sent], [1, 1], 'retried once the lease ran out');
    assert.deepEqual(seen, [
      { status_id: 1, lease_token: (seen[0] as { lease_token: string }).lease_token, due_at: clock.nowMs() + 10_000, attempts: 2 },
    ]);
    assert.notEqual((seen[0] as { lease_token: string }).lease_token, null);
    assert.deepEqual(
      carrier.calls.map((c) => c.attempt),
      [2],
    );
    // The dead dispatcher comes back late with its outcome: its lease is gone, nothing is written.
    assert.equal(await markSent(ctx.store.db, id, 'dead-token', 1, 'late', undefined), false);
    const row = await ctx.store.db
      .selectFrom('messages')
      .select(['status_id', 'carrier_message_id', 'lease_token', 'due_at'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.deepEqual({ ...row }, { status_id: 2, carrier_message_id: 'c-2', lease_token: null, due_at: null });
  },
);

storeTest('temporary refusals back off and are retried; the last attempt ends Failed with a refund; a throw is temporary', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const start = await balanceOf(ctx, demo.account.id);
  const flaky = await send(ctx, demo, { MobilePhone: '+15551234567' });
  const hopeless = await send(ctx, demo, { MobilePhone: '+15557654321', Message: 'z'.repeat(170) });
  const carrier = scriptedCarrier((m) => {
    if (m.to === '15557654321') return { kind: 'retry', errorCode: 'ESME_RTHROTTLED' };
    if (m.attempt === 1) throw new Error('link down');
    if (m.attempt === 2) return { kind: 'retry', errorCode: 'ESME_RMSGQFUL', afterMs: 500 };
    return { kind: 'accepted', carrierMessageId: 'ok' };
  });
  const { dispatcher, clock } = testDispatcher(ctx, { carrier, maxAttempts: 3, retryDelayMs: (n) => n * 1000 });
  await dispatcher.drain();
  assert.deepEqual([await status(ctx, flaky), await status(ctx, hopeless)], ['Queued', 'Queued']);
  clock.advance(999);
  assert.equal((await dispatcher.drain()).claimed, 0, 'backing off (1 s after attempt 1)');
  clock.advance(1);
  await dispatcher.drain(); // attempt 2 of both: the flaky one asks for 500 ms, the hopeless one backs off 2 s
  clock.advance(500);
  await dispatcher.drain();
  assert.equal(await status(ctx, flaky), 'Sent');
  assert.equal(await status(ctx, hopeless), 'Queued');
  clock.advance(1500);
  await dispatcher.drain(); // attempt 3 of 3
  assert.equal(await status(ctx, hopeless), 'Failed ESME_RTHROTTLED');
  assert.deepEqual(
    carrier.calls.map((c) => [c.to, c.attempt]),
    [
      ['15551234567', 1],
      ['15557654321', 1],
      ['15551234567', 2],
      ['15557654321', 2],
      ['15551234567', 3],
      ['15557654321', 3],
    ],
  );
  assert.equal(await balanceOf(ctx, demo.account.id), start - 1, 'the Failed one refunded');
  // Attempts used up by leases that ran out (crashes): Failed RETRIES_EXHAUSTED, refunded.
  const crashy = await send(ctx, demo, { MobilePhone: '+15551234567' });
  for (let i = 0; i < 3; i++) {
    await claimDue(ctx.store.db, clock.nowMs(), 10, clock.nowMs() + 1000, `dead-${i}`);
    clock.advance(1000);
  }
  await dispatcher.drain();
  assert.equal(await status(ctx, crashy), 'Failed RETRIES_EXHAUSTED');
  assert.equal(await balanceOf(ctx, demo.account.id), start - 1);
});

storeTest('MMS: Failed NO_MMS_ROUTE (refunded) on a carrier without MMS; the sandbox takes them', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const start = await balanceOf(ctx, demo.account.id);
  // sms/send cannot make an MMS before templates (API.md §10.7): written as it will be, with its debit.
  const mms = async () => {
    await debitCredits(ctx.store.db, demo.account.id, 3, 0, '');
    return (
      await insertMessage(
        ctx.store.db,
        demo.account.id,
        {
          direction: 1,
          number: '55155',
          mobilePhone: '15551234567',
          message: 'picture',
          typeId: 2,
          statusId: 1,
          segments: 1,
          credits: 3,
          batchId: null,
          scheduledMessageId: null,
          optOutExempt: 0,
          dueAt: 0,
        },
        0,
      )
    ).id;
  };
  const noRoute = await mms();
  const sms = scriptedCarrier(() => ({ kind: 'accepted', carrierMessageId: 'x' }), false);
  await testDispatcher(ctx, { carrier: sms }).dispatcher.drain();
  assert.equal(await status(ctx, noRoute), 'Failed NO_MMS_ROUTE');
  assert.equal(sms.calls.length, 0);
  assert.equal(await balanceOf(ctx, demo.account.id), start);
  const routed = await mms();
  const { dispatcher, clock } = testDispatcher(ctx);
  await dispatcher.drain();
  clock.advance(1000);
  await dispatcher.drain();
  assert.equal(await status(ctx, routed), 'Delivered');
  assert.equal(await balanceOf(ctx, demo.account.id), start - 3);
});

storeTest('receipts pushed by a carrier: applied once, by carrier id; a late or unknown receipt changes nothing', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const a = await send(ctx, demo, { MobilePhone: '+15551234567' });
  const b = await send(ctx, demo, { MobilePhone: '+15551234568' });
  const carrier = scriptedCarrier((m) => ({ kind: 'accepted', carrierMessageId: `smsc-${m.to}` }));
  const { dispatcher } = testDispatcher(ctx, { carrier });
  await dispatcher.drain();
  await dispatcher.sink.receipt({ carrierMessageId: 'smsc-15551234567', status: 'delivered', errorCode: '' });
  await dispatcher.sink.receipt({ carrierMessageId: 'smsc-15551234568', status: 'undelivered', errorCode: 'UNDELIV' });
  await dispatcher.sink.receipt({ carrierMessageId: 'smsc-15551234567', status: 'undelivered', errorCode: 'EXPIRED' });
  await dispatcher.sink.receipt({ carrierMessageId: 'nobody', status: 'delivered', errorCode: '' });
  assert.equal(await status(ctx, a), 'Delivered');
  assert.equal(await status(ctx, b), 'Undelivered UNDELIV');
  assert.notEqual((await messageFromDb(ctx, a)).DateDelivered, null);
  let dropped = 0;
  const logged = testDispatcher(ctx, { carrier, log: { info() {}, error() {}, warn: () => void dropped++ } });
  await logged.dispatcher.sink.inbound({ from: '15551234567', to: '55155', text: 'HELLO' });
  assert.equal(dropped, 1, 'inbound texts wait for API.md §11.5: logged and dropped');
  let got: unknown;
  const inbound = (text: unknown) => {
    got = text;
    return Promise.resolve();
  };
  await testDispatcher(ctx, { carrier, inbound }).dispatcher.sink.inbound({ from: '1', to: '2', text: 'STOP' });
  assert.deepEqual(got, { from: '1', to: '2', text: 'STOP' });
});

storeTest('the loop: start() dispatches on its own (real time, bounded wait), stop() ends it after the round', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const ids = [await send(ctx, demo, { MobilePhone: '+15551234567' }), await send(ctx, demo, { MobilePhone: '+15005550001' })];
  const { dispatcher } = testDispatcher(ctx, { realTime: true, carrier: createSandboxCarrier({ receiptMs: 20 }), pollMs: 5 });
  await dispatcher.start();
  t.after(() => dispatcher.stop());
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline && (await status(ctx, ids[0]!)) !== 'Delivered') await new Promise((r) => setTimeout(r, 10));
  assert.equal(await status(ctx, ids[0]!), 'Delivered');
  while (Date.now() < deadline && (await status(ctx, ids[1]!)) !== 'Undelivered UNDELIV') await new Promise((r) => setTimeout(r, 10));
  assert.equal(await status(ctx, ids[1]!), 'Undelivered UNDELIV');
  await dispatcher.stop();
  const later = await send(ctx, demo, { MobilePhone: '+15551234567' });
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(await status(ctx, later), 'Queued', 'stopped');
});
