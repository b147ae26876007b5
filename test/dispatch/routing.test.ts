/**
 * Several carriers in one dispatcher (docs/API.md §14.1), on each store, with a manual clock and
 * scripted carriers: the rule with the longest prefix of the recipient (a typed rule winning a
 * tie) and its failover order; the first carrier of the rule that takes the type and is ready;
 * messages whose carriers are all not ready wait Queued spending no attempt; a temporary refusal
 * goes on to the next ready carrier at once, a permanent one ends Failed with no failover;
 * NO_ROUTE / NO_MMS_ROUTE refunded (credits add up); the carrier's name is stored with its id; an
 * MMS goes with its template's Message and MediaIds, read once per round; receipts by (carrier, id): applied once,
 * parked when early and applied by the Sent commit.
 */
import assert from 'node:assert/strict';
import type { DemoAccount } from '../../src/domain/demo.ts';
import type { Carrier, OutboundMessage, SubmitResult } from '../../src/dispatch/carrier.ts';
import { Dispatcher, type NamedCarrier } from '../../src/dispatch/dispatcher.ts';
import { applyCarrierReceipt } from '../../src/domain/carrier-receipts.ts';
import { parseRoutes } from '../../src/carriers/config.ts';
import type { CarrierSpec } from '../../src/lib/carrier-settings.ts';
import { createManualClock, type ManualClock } from '../../src/lib/time.ts';
import { insertMessage } from '../../src/store/repositories/message-log.ts';
import { debitCredits } from '../../src/store/repositories/credits.ts';
import { changeTemplate, finishMedia, insertMedia, insertTemplate, setTemplateMedia } from '../../src/store/repositories/media.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { balanceOf, messageFromDb } from '../helpers/sms.ts';
import { storeTest } from '../helpers/stores.ts';

interface Scripted extends Carrier {
  calls: OutboundMessage[];
  up: boolean;
}

/** A carrier named `name` whose submits `script` decides; `up` is its readiness. */
function scripted(
  name: string,
  options: { mms?: boolean; window?: number; script?: (m: OutboundMessage, n: number) => SubmitResult | Promise<SubmitResult> } = {},
): Scripted {
  const calls: OutboundMessage[] = [];
  const c: Scripted = {
    name,
    supportsMms: options.mms ?? false,
    window: options.window ?? 4,
    calls,
    up: true,
    ready: () => c.up,
    async start() {},
    async stop() {},
    submit(m) {
      calls.push(m);
      return Promise.resolve(options.script?.(m, calls.length) ?? { kind: 'accepted', carrierMessageId: `${name}-${m.id}` });
    },
  };
  return c;
}

/** parseRoutes needs specs: names and MMS capability are all it reads of them here. */
function routes(value: string, carriers: readonly NamedCarrier[]) {
  const specs: CarrierSpec[] = carriers.map((c) => ({
    kind: 'sandbox',
    name: c.name,
    rate: undefined,
    window: 1,
    supportsMms: c.carrier.supportsMms,
    display: 'x',
  }));
  return parseRoutes(value, specs);
}

function dispatcherOf(ctx: TestApp, carriers: Scripted[], routeSetting: string | undefined, clock: ManualClock): Dispatcher {
  const named = carriers.map((c) => ({ name: c.name, carrier: c }));
  return new Dispatcher({
    store: ctx.store,
    carriers: named,
    routes: routes(routeSetting ?? '', named),
    clock,
    batchSize: 50,
    leaseMs: 30_000,
    maxAttempts: 5,
    pollMs: 5,
  });
}

const clockNow = () => createManualClock((Math.floor(Date.now() / 1000) + 1) * 1000);

/** Queues a message as sms/send does (debit included): `to` digits, SMS (1 credit) or MMS (3, with `template`). */
async function queue(
  ctx: TestApp,
  demo: DemoAccount,
  to: string,
  options: { mms?: boolean; template?: number | null } = {},
): Promise<number> {
  const credits = options.mms ? 3 : 1;
  assert.ok(await debitCredits(ctx.store.db, demo.account.id, credits, 0, ''));
  const row = await insertMessage(
    ctx.store.db,
    demo.account.id,
    {
      direction: 1,
      number: '55155',
      mobilePhone: to,
      message: options.mms ? 'own text' : 'hello',
      typeId: options.mms ? 2 : 1,
      statusId: 1,
      segments: 1,
      credits,
      batchId: null,
      scheduledMessageId: null,
      optOutExempt: 0,
      dueAt: 0,
      mmsTemplateId: options.template ?? null,
    },
    0,
  );
  return row.id;
}

async function row(ctx: TestApp, id: number) {
  return ctx.store.db
    .selectFrom('messages')
    .select(['status_id', 'error_code', 'carrier', 'carrier_message_id', 'attempts'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
}

const status = async (ctx: TestApp, id: number) => {
  const m = await messageFromDb(ctx, id);
  return `${m.Status_Description}${m.ErrorCode ? ` ${m.ErrorCode}` : ''}`;
};

storeTest(
  'routes: the longest prefix of the recipient wins, a typed rule wins a tie, and the carrier name is stored with its id',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const a = scripted('a');
    const b = scripted('b', { mms: true });
    const c = scripted('c', { mms: true });
    const d = dispatcherOf(ctx, [a, b, c], '*=a; 44=b; sms:44=c; 4477=a>b; mms:*=b', clockNow());
    const ids = {
      us: await queue(ctx, demo, '15551234567'),
      uk: await queue(ctx, demo, '442071234567'),
      ukMobile: await queue(ctx, demo, '447700900123'),
      ukMms: await queue(ctx, demo, '442071234567', { mms: true }),
      usMms: await queue(ctx, demo, '15551234567', { mms: true }),
    };
    const round = await d.drain();
    assert.equal(round.sent, 5);
    const where = async (id: number) => (await row(ctx, id)).carrier;
    assert.equal(await where(ids.us), 'a', '* = a');
    assert.equal(await where(ids.uk), 'c', 'sms:44 wins the tie with 44');
    assert.equal(await where(ids.ukMobile), 'a', '4477 is longer than 44');
    assert.equal(await where(ids.ukMms), 'b', 'an MMS takes 44 (sms:44 is not its type)');
    assert.equal(await where(ids.usMms), 'b', 'mms:* wins the tie with *');
    const r = await row(ctx, ids.ukMobile);
    assert.deepEqual([r.status_id, r.carrier_message_id], [2, `a-${ids.ukMobile}`]);
    assert.deepEqual([a.calls.length, b.calls.length, c.calls.length], [2, 2, 1], 'each submitted once, to its carrier only');
  },
);

storeTest(
  'the first carrier of the rule that takes the type and is ready gets the message; none ready: Queued, no attempt spent',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const smpp = scripted('smpp');
    const tw = scripted('tw', { mms: true });
    const spare = scripted('spare');
    const clock = clockNow();
    const d = dispatcherOf(ctx, [smpp, tw, spare], '*=smpp>tw; 44=spare', clock);
    smpp.up = false;
    const sms = await queue(ctx, demo, '15551234567');
    const mms = await queue(ctx, demo, '15551234568', { mms: true });
    await d.drain();
    assert.equal((await row(ctx, sms)).carrier, 'tw', 'smpp is down: the next of the rule');
    assert.equal((await row(ctx, mms)).carrier, 'tw', 'an MMS skips smpp, which takes none');
    assert.equal(smpp.calls.length, 0);

    // Every carrier of the rule down: the message waits, Queued, its attempt given back.
    tw.up = false;
    const waiting = await queue(ctx, demo, '15551234569');
    const other = await queue(ctx, demo, '447700900123');
    const round = await d.runOnce();
    assert.equal(round.waiting, 1);
    assert.equal(round.sent, 1, 'a message of another rule, whose carrier is up, still goes');
    assert.equal((await row(ctx, other)).carrier, 'spare');
    for (let i = 0; i < 5; i++) {
      clock.advance(1000);
      await d.drain();
    }
    const w = await row(ctx, waiting);
    assert.deepEqual([w.status_id, w.attempts, w.carrier], [1, 0, null], 'still Queued, no attempt spent, however many rounds');
    // Every carrier down: nothing is claimed at all.
    spare.up = false;
    clock.advance(1000);
    assert.equal((await d.runOnce()).claimed, 0);
    smpp.up = true;
    clock.advance(1000);
    await d.drain();
    const sent = await row(ctx, waiting);
    assert.deepEqual([sent.status_id, sent.attempts, sent.carrier], [2, 1, 'smpp'], 'back up: sent, on its first attempt');
    assert.deepEqual(d.carrierStates(), { smpp: 'ok', tw: 'unavailable', spare: 'unavailable' });
    assert.equal(d.carrierState(), 'ok');
    const stats = d.stats();
    assert.equal(stats.carriers.tw!.submits.accepted, 2);
    assert.equal(stats.carriers.tw!.ready, false);
  },
);

storeTest(
  'a temporary refusal goes on to the next ready carrier at once; a permanent one ends Failed, refunded, with no failover',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const start = await balanceOf(ctx, demo.account.id);
    const a = scripted('a', {
      script: (m) =>
        /[13]$/.test(m.to)
          ? { kind: 'retry', errorCode: 'HTTP_503' }
          : m.to.endsWith('2')
            ? { kind: 'failed', errorCode: 'TWILIO_21211' }
            : { kind: 'accepted', carrierMessageId: `a-${m.id}` },
    });
    const b = scripted('b', {
      script: (m) =>
        m.to.endsWith('3') ? { kind: 'retry', errorCode: 'HTTP_TIMEOUT' } : { kind: 'accepted', carrierMessageId: `b-${m.id}` },
    });
    const clock = clockNow();
    const d = dispatcherOf(ctx, [a, b], '*=a>b', clock);
    const temporary = await queue(ctx, demo, '15550000001');
    const permanent = await queue(ctx, demo, '15550000002');
    const bothRefuse = await queue(ctx, demo, '15550000003');
    const round = await d.runOnce();
    assert.deepEqual([round.sent, round.failed, round.retried], [1, 1, 1]);
    assert.deepEqual([(await row(ctx, temporary)).carrier, await status(ctx, temporary)], ['b', 'Sent'], 'retried on b in the same round');
    assert.equal(await status(ctx, permanent), 'Failed TWILIO_21211');
    assert.equal(b.calls.filter((m) => m.id === permanent).length, 0, 'no failover after a permanent refusal');
    const r = await row(ctx, bothRefuse);
    assert.deepEqual([r.status_id, r.attempts], [1, 1], 'both refused for now: back to the queue, one attempt spent');
    assert.equal(await balanceOf(ctx, demo.account.id), start - 2, 'the Failed one is refunded');
  },
);

storeTest('NO_ROUTE and NO_MMS_ROUTE end Failed and are refunded; credits add up', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const start = await balanceOf(ctx, demo.account.id);
  const uk = scripted('uk');
  const d = dispatcherOf(ctx, [uk], '44=uk', clockNow());
  const noRule = await queue(ctx, demo, '15551234567');
  const mmsNoCarrier = await queue(ctx, demo, '447700900123', { mms: true });
  const fine = await queue(ctx, demo, '447700900123');
  assert.equal(await balanceOf(ctx, demo.account.id), start - 5);
  const round = await d.drain();
  assert.deepEqual([round.sent, round.failed], [1, 2]);
  assert.equal(await status(ctx, noRule), 'Failed NO_ROUTE');
  assert.equal(await status(ctx, mmsNoCarrier), 'Failed NO_MMS_ROUTE');
  assert.equal(await status(ctx, fine), 'Sent');
  assert.equal(await balanceOf(ctx, demo.account.id), start - 1, 'both Failed refunded; only the sent one paid');
  assert.equal(uk.calls.length, 1);
});

storeTest("an MMS is handed its template's Message and MediaIds; one without a template its own text", async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const media: number[] = [];
  for (const name of ['a.png', 'b.jpg']) {
    const id = await insertMedia(ctx.store.db, demo.account.id, { fileName: name, mimeType: 'image/png', chunkBytes: 1024 }, 0);
    await finishMedia(ctx.store.db, demo.account.id, id, 10, 1, 1);
    media.push(id);
  }
  const template = await insertTemplate(ctx.store.db, demo.account.id, { name: 'promo', subject: 'S', message: 'See the pictures' }, 0);
  await setTemplateMedia(ctx.store.db, demo.account.id, template, [media[1]!, media[0]!]);
  const tw = scripted('tw', { mms: true });
  const d = dispatcherOf(ctx, [tw], undefined, clockNow());
  const withTemplate = await queue(ctx, demo, '15551234567', { mms: true, template });
  const without = await queue(ctx, demo, '15551234567', { mms: true });
  await d.drain();
  const byId = new Map(tw.calls.map((m) => [m.id, m]));
  assert.equal(byId.get(withTemplate)!.text, 'See the pictures');
  assert.deepEqual(byId.get(withTemplate)!.mediaIds, [media[1], media[0]]);
  assert.equal(byId.get(without)!.text, 'own text');
  assert.equal(byId.get(without)!.mediaIds, undefined);
});

storeTest(
  'one round reads each MMS template once for all its messages; the next round reads it again (a change between rounds is what goes)',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const template = await insertTemplate(ctx.store.db, demo.account.id, { name: 'promo', subject: 'S', message: 'first text' }, 0);
    // The first submit changes the template, and its window slot frees only once that is written:
    // a message of the same round reading the template again would see the new text.
    const tw = scripted('tw', {
      mms: true,
      window: 2,
      script: async (m, n) => {
        if (n === 1) await changeTemplate(ctx.store.db, demo.account.id, template, { message: 'second text' }, 0);
        return { kind: 'accepted', carrierMessageId: `tw-${m.id}` };
      },
    });
    const d = dispatcherOf(ctx, [tw], undefined, clockNow());
    for (let i = 0; i < 6; i++) await queue(ctx, demo, `1555123450${i}`, { mms: true, template });
    const first = await d.runOnce();
    assert.equal(first.claimed, 6);
    assert.deepEqual(
      tw.calls.map((m) => m.text),
      Array(6).fill('first text'),
      'the whole round goes with the template as the round read it',
    );
    await queue(ctx, demo, '15551234599', { mms: true, template });
    await d.drain();
    assert.equal(tw.calls.at(-1)!.text, 'second text', 'the next round reads the template as it is now');
  },
);

storeTest(
  "receipts by (carrier, id): applied once; early ones parked and applied by the Sent commit; another carrier's id untouched",
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const start = await balanceOf(ctx, demo.account.id);
    const same = (m: OutboundMessage): SubmitResult => ({ kind: 'accepted', carrierMessageId: m.to.endsWith('1') ? 'SM1' : 'SM2' });
    const a = scripted('a', { script: same });
    const b = scripted('b', { script: same });
    const clock = clockNow();
    const d = dispatcherOf(ctx, [a, b], '15550000001=a; 15550000002=b', clock);
    const onA = await queue(ctx, demo, '15550000001');
    const onB = await queue(ctx, demo, '15550000002');
    // b's receipt comes before b's Sent is committed: parked.
    assert.equal(
      await applyCarrierReceipt(ctx.store, clock, 'b', { carrierMessageId: 'SM2', status: 'undelivered', errorCode: 'TWILIO_30003' }),
      'held',
    );
    assert.equal(
      await applyCarrierReceipt(ctx.store, clock, 'b', { carrierMessageId: 'SM2', status: 'undelivered', errorCode: 'TWILIO_30003' }),
      'held',
      'a repeat while parked',
    );
    const round = await d.drain();
    assert.equal(round.sent, 2);
    assert.equal(await status(ctx, onB), 'Undelivered TWILIO_30003', 'the Sent commit applied the parked receipt');
    assert.equal(await status(ctx, onA), 'Sent');
    const parked = await ctx.store.db.selectFrom('carrier_receipts_pending').selectAll().execute();
    assert.equal(parked.length, 0);
    // a's receipt names SM1 of a; b's message SM2 stays as it is.
    assert.equal(
      await applyCarrierReceipt(ctx.store, clock, 'b', { carrierMessageId: 'SM1', status: 'delivered', errorCode: '' }),
      'held',
      "b has no SM1: parked, a's message untouched",
    );
    assert.equal(await status(ctx, onA), 'Sent');
    assert.equal(
      await applyCarrierReceipt(ctx.store, clock, 'a', { carrierMessageId: 'SM1', status: 'delivered', errorCode: '' }),
      'applied',
    );
    assert.equal(await status(ctx, onA), 'Delivered');
    assert.equal(
      await applyCarrierReceipt(ctx.store, clock, 'a', { carrierMessageId: 'SM1', status: 'undelivered', errorCode: 'X' }),
      'ignored',
      'a repeat (or a late contradiction) changes nothing',
    );
    assert.equal(await status(ctx, onA), 'Delivered');
    assert.equal(await balanceOf(ctx, demo.account.id), start - 2, 'Undelivered is not refunded');
    // A parked receipt that never finds its message is dropped after a day.
    clock.advance(24 * 3600_000 + 1000);
    await d.drain();
    assert.equal((await ctx.store.db.selectFrom('carrier_receipts_pending').selectAll().execute()).length, 0);
  },
);
