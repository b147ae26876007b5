/**
 * The SMPP carrier when the SMSC dies (API.md §11.4, docs/RELIABILITY.md "Delivery
 * guarantees"): the Perl SMSC (test/smsc/fake-smsc.pl) answers each submit_sm 150 ms late so that
 * the window is full, is killed with SIGKILL in the middle of the run and started again on the same
 * port (its --state file keeps the receipts it owes, as a real SMSC's store does). Then: the bind
 * comes back, every message reaches a final state (Delivered), none is lost, and the messages
 * submitted twice (taken by the dead SMSC without an answer) are at most one window.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../../src/app.ts';
import { createDispatcher } from '../../src/dispatch/index.ts';
import { createSmppCarrier } from '../../src/dispatch/smpp.ts';
import { receiptLanded } from '../../src/store/repositories/smpp.ts';
import { buildTestApp } from '../helpers/app.ts';
import { call } from '../helpers/operations.ts';
import { balanceOf } from '../helpers/sms.ts';
import { FakeSmsc, smppSkip } from '../helpers/smsc.ts';
import { freePort } from '../helpers/net.ts';
import { storeTest } from '../helpers/stores.ts';

const WINDOW = 10;
const MESSAGES = 60;

storeTest(
  `SMPP: the SMSC killed mid-window and restarted → the bind comes back, all ${MESSAGES} messages end Delivered, none lost, repeats ≤ one window (${WINDOW})`,
  { skip: smppSkip() },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'msgsvc-smsc-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const smsc = await FakeSmsc.start(['--resp-delay-ms', '150', '--receipt-delay-ms', '20', '--state', join(dir, 'smsc.state')]);
    t.after(() => smsc.kill());
    const ctx = await buildTestApp(undefined, { MSGSVC_DISPATCH_POLL_MS: '10' });
    const demo = await ctx.seed();
    const start = await balanceOf(ctx, demo.account.id);
    const ids: number[] = [];
    for (let i = 0; i < MESSAGES; i++) {
      const res = await call(ctx.app, {
        method: 'POST',
        path: '/v1/sms/send',
        token: demo.token,
        body: { Number: '55155', MobilePhone: `+1555124${String(i).padStart(4, '0')}`, Message: `message ${i}` },
      });
      assert.equal(res.statusCode, 201, res.body);
      ids.push((JSON.parse(res.body) as { Id: number }[])[0]!.Id);
    }
    const carrier = createSmppCarrier({
      url: `smpp://msgsvc:pw@127.0.0.1:${smsc.port}`,
      rate: 2000,
      window: WINDOW,
      timeoutMs: 2000,
      enquireMs: 500,
      reconnectMinMs: 50,
      reconnectMaxMs: 400,
      receiptHoldMs: 3000,
      receiptLanded: (id) => receiptLanded(ctx.store.db, id),
    });
    const dispatcher = createDispatcher(ctx.config, ctx.store, { carrier });
    await dispatcher.start();
    try {
      await smsc.waitFor((e) => e.ev === 'submit_sm' && smsc.submits().length >= 25, 15_000, '25 submits');
      const before = smsc.submits().length;
      await smsc.restart();
      t.diagnostic(`killed after ${before} submit_sm (window ${WINDOW} open), restarted on port ${smsc.port}`);

      const deadline = Date.now() + 30_000;
      let rows: { id: number; status_id: number; mobile_phone: string; error_code: string }[] = [];
      for (;;) {
        rows = await ctx.store.db
          .selectFrom('messages')
          .select(['id', 'status_id', 'mobile_phone', 'error_code'])
          .where('id', 'in', ids)
          .execute();
        if (rows.every((r) => r.status_id >= 3)) break;
        if (Date.now() > deadline) assert.fail(`not final after 30 s: ${JSON.stringify(rows.filter((r) => r.status_id < 3))}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(rows.length, MESSAGES, 'none lost');
      assert.deepEqual(
        rows.filter((r) => r.status_id !== 3),
        [],
        'every message Delivered',
      );
      const status = carrier.status();
      assert.equal(status.state, 'bound');
      assert.ok(
        status.counters.binds >= 2,
        `bound again (${status.counters.binds} binds, ${status.counters.reconnects} reconnect attempts)`,
      );

      // What reached the SMSC (both processes): every message at least once; twice for at most one window.
      const accepted = new Map<string, number>();
      for (const e of smsc.submits()) accepted.set(e.dst, (accepted.get(e.dst) ?? 0) + 1);
      const repeated = [...accepted.values()].filter((n) => n > 1).length;
      assert.equal(accepted.size, MESSAGES, 'each message reached the SMSC');
      assert.ok(repeated <= WINDOW, `${repeated} messages submitted twice (at most ${WINDOW})`);
      assert.ok(Math.max(...accepted.values()) <= 2);
      assert.equal(await balanceOf(ctx, demo.account.id), start - MESSAGES, 'each paid once, none refunded');
      t.diagnostic(`repeats: ${repeated}; receipts held ${status.counters.receiptsHeld}, unmatched ${status.counters.receiptsUnmatched}`);
    } finally {
      await dispatcher.stop();
      await ctx.close();
    }
  },
);

storeTest(
  'SMPP: while the link is down the dispatcher claims nothing, so an outage longer than every retry fails no message; when the SMSC comes up they are Delivered',
  { skip: smppSkip() },
  async (t) => {
    // One attempt only: any claim during the outage would end the message Failed (RETRIES_EXHAUSTED).
    const ctx = await buildTestApp(undefined, { MSGSVC_DISPATCH_POLL_MS: '10', MSGSVC_DISPATCH_MAX_ATTEMPTS: '1' });
    const demo = await ctx.seed();
    const start = await balanceOf(ctx, demo.account.id);
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await call(ctx.app, {
        method: 'POST',
        path: '/v1/sms/send',
        token: demo.token,
        body: { Number: '55155', MobilePhone: `+1555126${String(i).padStart(4, '0')}`, Message: `outage ${i}` },
      });
      assert.equal(res.statusCode, 201, res.body);
      ids.push((JSON.parse(res.body) as { Id: number }[])[0]!.Id);
    }
    const port = await freePort(); // nothing listens there yet
    // receiptLanded as createCarrier wires it: on PostgreSQL a receipt can beat the Sent commit.
    const carrier = createSmppCarrier({
      url: `smpp://msgsvc:pw@127.0.0.1:${port}`,
      rate: 2000,
      window: WINDOW,
      timeoutMs: 500,
      enquireMs: 500,
      reconnectMinMs: 20,
      reconnectMaxMs: 100,
      receiptHoldMs: 3000,
      receiptLanded: (id) => receiptLanded(ctx.store.db, id),
    });
    const dispatcher = createDispatcher(ctx.config, ctx.store, { carrier });
    await dispatcher.start();
    let smsc: FakeSmsc | undefined;
    t.after(() => smsc?.kill());
    try {
      // The outage: many poll intervals and reconnect attempts.
      await new Promise((r) => setTimeout(r, 800));
      const during = await ctx.store.db.selectFrom('messages').select(['status_id', 'attempts']).where('id', 'in', ids).execute();
      assert.deepEqual(
        during.map((r) => [r.status_id, Number(r.attempts)]),
        ids.map(() => [1, 0]),
        'still Queued, no attempt spent',
      );
      assert.equal(carrier.ready(), false);
      // /readyz shows the carrier away, and stays 200: sends still queue.
      const probe = buildApp(ctx.config, { store: ctx.store, carrierState: () => dispatcher.carrierState() });
      t.after(() => probe.close());
      const away = await probe.inject({ url: '/readyz' });
      assert.equal(away.statusCode, 200);
      assert.equal(JSON.parse(away.body).carrier, 'unavailable');
      smsc = await FakeSmsc.start(['--receipt-delay-ms', '20'], port);
      const deadline = Date.now() + 15_000;
      for (;;) {
        const rows = await ctx.store.db.selectFrom('messages').select('status_id').where('id', 'in', ids).execute();
        if (rows.every((r) => r.status_id === 3)) break;
        if (Date.now() > deadline) assert.fail(`not Delivered after the SMSC came up: ${JSON.stringify(rows)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(await balanceOf(ctx, demo.account.id), start - 5, 'each paid once, none refunded');
      assert.equal(JSON.parse((await probe.inject({ url: '/readyz' })).body).carrier, 'ok');
    } finally {
      await dispatcher.stop();
      await ctx.close();
    }
  },
);
