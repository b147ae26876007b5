/**
 * Several real carriers in one process (docs/API.md §14.1), on each store, in real time with
 * bounded waits: two Twilio-compatible providers (test/helpers/fake-twilio.ts) and the Perl SMSC
 * (test/helpers/smsc.ts), configured by MSGSVC_CARRIERS / MSGSVC_ROUTES and built by
 * createDispatcher. Routing by prefix; SMPP receipts come back through the carrier's own sink;
 * a provider that goes down (connections refused) or hangs mid-run: its messages go on on the
 * next carrier of the rule, and no message reaches the providers twice beyond the hanging one's
 * window; /readyz and the per-carrier metrics.
 */
import assert from 'node:assert/strict';
import type { DemoAccount } from '../../src/domain/demo.ts';
import { createDispatcher, type Dispatcher } from '../../src/dispatch/index.ts';
import { buildApp } from '../../src/app.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { startFakeTwilio, type FakeTwilio } from '../helpers/fake-twilio.ts';
import { call } from '../helpers/operations.ts';
import { balanceOf } from '../helpers/sms.ts';
import { FakeSmsc, smppSkip } from '../helpers/smsc.ts';
import { storeTest } from '../helpers/stores.ts';

const skip = smppSkip();

interface Env {
  ctx: TestApp;
  demo: DemoAccount;
  tw1: FakeTwilio;
  tw2: FakeTwilio;
  smsc: FakeSmsc;
  dispatcher: Dispatcher;
}

async function setup(t: { after(fn: () => unknown): void }, tw1Query = ''): Promise<Env> {
  const tw1 = await startFakeTwilio();
  const tw2 = await startFakeTwilio();
  const smsc = await FakeSmsc.start(['--system-id', 'msgsvc', '--password', 'secret']);
  const entry = (name: string, f: FakeTwilio, q = '') => `${name}=twilio+http://${f.accountSid}:${f.authToken}@127.0.0.1:${f.port}${q}`;
  const ctx = await buildTestApp(undefined, {
    MSGSVC_CARRIERS: [entry('tw1', tw1, tw1Query), entry('tw2', tw2), `smsc=smpp://msgsvc:secret@127.0.0.1:${smsc.port}?rate=2000`].join(
      ',',
    ),
    MSGSVC_ROUTES: '*=tw1>tw2; 44=smsc>tw2',
    MSGSVC_PUBLIC_URL: 'https://msgsvc.example.com',
    MSGSVC_CARRIER_ALLOW_PRIVATE: '1',
    MSGSVC_CARRIER_TIMEOUT_MS: '400',
    MSGSVC_SMPP_TIMEOUT_MS: '2000',
    MSGSVC_DISPATCH_POLL_MS: '10',
    MSGSVC_DISPATCH_BATCH: '20',
  });
  const demo = await ctx.seed();
  const dispatcher = createDispatcher(ctx.config, ctx.store);
  await dispatcher.start();
  t.after(async () => {
    await dispatcher.stop();
    await ctx.close();
    await Promise.all([tw1.close(), tw2.close(), smsc.kill()]);
  });
  return { ctx, demo, tw1, tw2, smsc, dispatcher };
}

async function send(env: Env, to: string): Promise<number> {
  const res = await call(env.ctx.app, {
    method: 'POST',
    path: '/v1/sms/send',
    token: env.demo.token,
    body: { Number: '55155', MobilePhone: to, Message: 'hello' },
  });
  assert.equal(res.statusCode, 201, res.body);
  return (JSON.parse(res.body) as { Id: number }[])[0]!.Id;
}

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function rows(env: Env, ids: number[]) {
  return env.ctx.store.db
    .selectFrom('messages')
    .select(['id', 'status_id', 'carrier', 'carrier_message_id', 'error_code'])
    .where('id', 'in', ids)
    .orderBy('id')
    .execute();
}

/** Every message the providers answered with a sid, by `To` digits: how often each was accepted. */
function acceptedTwice(...fakes: FakeTwilio[]): number {
  const seen = new Map<string, number>();
  for (const f of fakes) for (const s of f.submits) if (s.sid) seen.set(String(s.form.To), (seen.get(String(s.form.To)) ?? 0) + 1);
  return [...seen.values()].filter((n) => n > 1).length;
}

storeTest(
  'two Twilio-compatible providers and an SMSC in one process: routed by prefix, SMPP receipts by carrier name; a provider down mid-run fails over',
  { skip },
  async (t) => {
    const env = await setup(t);
    const start = await balanceOf(env.ctx, env.demo.account.id);
    await until('every carrier ready', () => Object.values(env.dispatcher.carrierStates()).every((s) => s === 'ok'));
    const us: number[] = [];
    for (let i = 0; i < 6; i++) us.push(await send(env, `+1555010${String(i).padStart(4, '0')}`));
    const uk = [await send(env, '+447700900001'), await send(env, '+447700900002')];
    await until('all Sent or Delivered', async () =>
      (await rows(env, [...us, ...uk])).every((r) => r.status_id === 2 || r.status_id === 3),
    );
    await until('the SMPP receipts', async () => (await rows(env, uk)).every((r) => r.status_id === 3));
    for (const r of await rows(env, us)) assert.equal(r.carrier, 'tw1', `message ${r.id}: the first of *=tw1>tw2`);
    for (const r of await rows(env, uk)) assert.equal(r.carrier, 'smsc', `message ${r.id}: 44=smsc`);
    assert.equal(env.tw1.submits.length, 6);
    assert.equal(env.tw2.submits.length, 0);
    const sids = new Set(env.tw1.submits.map((s) => s.sid));
    for (const r of await rows(env, us)) assert.ok(sids.has(r.carrier_message_id!), "the provider's sid is the carrier id");

    // tw1 goes down (connections refused): the next messages go on tw2, none lost or sent twice.
    await env.tw1.goDown();
    const later: number[] = [];
    for (let i = 0; i < 8; i++) later.push(await send(env, `+1555020${String(i).padStart(4, '0')}`));
    await until('the later ones Sent', async () => (await rows(env, later)).every((r) => r.status_id === 2));
    for (const r of await rows(env, later)) assert.equal(r.carrier, 'tw2', `message ${r.id}: failed over to tw2`);
    assert.equal(env.tw2.submits.length, 8);
    assert.equal(acceptedTwice(env.tw1, env.tw2), 0, 'no message accepted twice');

    // /readyz lists every carrier; the old field says whether any can take submits.
    const probe = buildApp(env.ctx.config, {
      store: env.ctx.store,
      carrierState: () => env.dispatcher.carrierState(),
      carrierStates: () => env.dispatcher.carrierStates(),
    });
    t.after(() => probe.close());
    const ready = JSON.parse((await probe.inject({ url: '/readyz' })).body) as Record<string, unknown>;
    assert.deepEqual(Object.keys(ready.carriers as object), ['tw1', 'tw2', 'smsc'], 'in MSGSVC_CARRIERS order');
    assert.deepEqual([(ready.carriers as Record<string, string>).tw2, (ready.carriers as Record<string, string>).smsc], ['ok', 'ok']);
    assert.equal(ready.carrier, 'ok');
    const stats = env.dispatcher.stats();
    assert.equal(stats.carriers.tw2!.submits.accepted, 8);
    assert.equal(stats.carriers.smsc!.submits.accepted, 2);
    assert.ok(stats.carriers.smsc!.smpp, "the SMPP carrier's own counters");
    assert.equal(await balanceOf(env.ctx, env.demo.account.id), start - 16, 'every message paid once, none refunded');

    // Back up: tw1, the first of the rule, takes messages again (once its probe answers, and it is
    // no longer passed over for its recent refusals).
    await env.tw1.comeBack();
    let n = 0;
    await until('a message on tw1 again', async () => {
      const id = await send(env, `+155503${String(n++).padStart(5, '0')}`);
      await until('Sent', async () => (await rows(env, [id]))[0]!.status_id === 2);
      return (await rows(env, [id]))[0]!.carrier === 'tw1';
    });
    assert.equal(acceptedTwice(env.tw1, env.tw2), 0);
  },
);

storeTest(
  'a provider that hangs mid-run: its messages continue on the next carrier; at most its window reached it',
  { skip },
  async (t) => {
    const env = await setup(t, '?window=3');
    await until('every carrier ready', () => Object.values(env.dispatcher.carrierStates()).every((s) => s === 'ok'));
    env.tw1.answer = () => 'hang';
    const ids: number[] = [];
    for (let i = 0; i < 12; i++) ids.push(await send(env, `+1555040${String(i).padStart(4, '0')}`));
    await until('all Sent', async () => (await rows(env, ids)).every((r) => r.status_id === 2));
    for (const r of await rows(env, ids)) assert.equal(r.carrier, 'tw2', `message ${r.id}: on tw2`);
    assert.ok(env.tw1.submits.length <= 3, `at most tw1's window (3) reached it: ${env.tw1.submits.length}`);
    assert.equal(env.tw2.submits.length, 12, 'each once on tw2');
    assert.equal(new Set(env.tw2.submits.map((s) => String(s.form.To))).size, 12);
  },
);
