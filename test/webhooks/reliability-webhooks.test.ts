/**
 * Webhook delivery guarantees (API.md §12, docs/RELIABILITY.md "Webhook delivery"):
 * - kill -9 of `msgsvc serve` after the change and before its delivery, then kill -9 again while
 *   the attempt is in flight: after the restart the event is delivered, with the same webhook-id;
 * - two delivery loops over one PostgreSQL database at once: each attempt is made once.
 * A real receiver on loopback verifies every signature (test/helpers/webhook-receiver.ts).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDemoAccount } from '../../src/domain/demo.ts';
import { parseDatabaseUrl } from '../../src/config.ts';
import { createTimeFormat, createManualClock, systemClock } from '../../src/lib/time.ts';
import { createWebhook, emitEvent } from '../../src/domain/webhooks.ts';
import { recordMappers } from '../../src/records/index.ts';
import { inTransaction, migrateToLatest, openStore } from '../../src/store/db.ts';
import { insertMessage } from '../../src/store/repositories/message-log.ts';
import { WebhookDeliverer } from '../../src/webhooks/deliverer.ts';
import { testDatabaseUrl } from '../helpers/app.ts';
import { spawnServe, waitForHttp } from '../helpers/cli.ts';
import { freePort } from '../helpers/net.ts';
import { storeTest } from '../helpers/stores.ts';
import { startReceiver } from '../helpers/webhook-receiver.ts';

async function waitFor(what: string, ok: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

storeTest(
  'kill -9 of msgsvc serve between the change and the delivery, and again mid-attempt: delivered after restart, same webhook-id',
  { timeout: 60_000 },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'msgsvc-webhook-crash-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const databaseUrl = await testDatabaseUrl(dir);
    const store = openStore(parseDatabaseUrl(databaseUrl));
    t.after(() => store.close());
    await migrateToLatest(store);
    const demo = await createDemoAccount(store, recordMappers(createTimeFormat('UTC')), 'US', 'Webhook crash test');
    const receiver = await startReceiver();
    t.after(() => receiver.close());
    const hook = await createWebhook({ store, clock: systemClock, allowPrivate: true }, demo.account.id, {
      Url: receiver.url,
      Events: ['message.received'],
    });
    receiver.secret = hook.secret;
    receiver.answer = (_r, n) => (n === 1 ? 'hang' : 200);
    const env = (port: number, loops: '0' | '1') => ({
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      MSGSVC_DEMO: '0',
      MSGSVC_DISPATCHER: loops,
      MSGSVC_WEBHOOK_ALLOW_PRIVATE: '1',
      MSGSVC_WEBHOOK_TIMEOUT_MS: '1500',
      MSGSVC_DISPATCH_POLL_MS: '20',
    });

    // 1. The change (an inbound text) is committed with its event; the server dies before any attempt.
    let port = await freePort();
    let server = spawnServe(t, [], env(port, '0'));
    await waitForHttp(`http://127.0.0.1:${port}/healthz`);
    const res = await fetch(`http://127.0.0.1:${port}/v1/sandbox/inbound?access_token=${demo.token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ From: '+15557654321', To: demo.numbers[0]!.Number, Message: 'crash me' }),
    });
    assert.equal(res.status, 201);
    server.child.kill('SIGKILL');
    await server.exited;
    const pending = await store.db.selectFrom('webhook_deliveries').selectAll().execute();
    assert.equal(pending.length, 1, 'the event survived the kill');
    assert.equal(pending[0]!.status, 'Pending');

    // 2. A new server claims it; the receiver holds the attempt; the server dies mid-attempt.
    port = await freePort();
    server = spawnServe(t, [], env(port, '1'));
    await waitFor('the first attempt', () => receiver.received.length === 1, 20_000);
    server.child.kill('SIGKILL');
    await server.exited;

    // 3. Once the dead server's lease runs out (timeout + 5 s), the next server delivers it.
    port = await freePort();
    server = spawnServe(t, [], env(port, '1'));
    await waitFor(
      'the delivery after restart',
      async () => (await store.db.selectFrom('webhook_deliveries').select('status').executeTakeFirst())?.status === 'Delivered',
      30_000,
    );
    await server.stop();
    assert.equal(receiver.received.length, 2);
    assert.equal(receiver.received[1]!.id, receiver.received[0]!.id, 'the same webhook-id on the attempt after the crash');
    assert.ok(receiver.received.every((r) => r.verified));
    assert.equal(receiver.received[1]!.json.type, 'message.received');
    assert.equal(receiver.received[1]!.json.data.Message, 'crash me');
    const row = await store.db.selectFrom('webhook_deliveries').selectAll().executeTakeFirstOrThrow();
    assert.equal(Number(row.attempts), 2);
  },
);

// Two instances share the work over PostgreSQL: a [postgres] case only.
storeTest(
  'two delivery loops over one database at once: each attempt is made by one of them only',
  { stores: ['postgres'], timeout: 60_000 },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'msgsvc-webhook-scale-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const databaseUrl = await testDatabaseUrl(dir);
    const a = openStore(parseDatabaseUrl(databaseUrl));
    const b = openStore(parseDatabaseUrl(databaseUrl));
    t.after(() => Promise.all([a.close(), b.close()]));
    await migrateToLatest(a);
    const demo = await createDemoAccount(a, recordMappers(createTimeFormat('UTC')), 'US', 'Webhook scale test');
    const receiver = await startReceiver();
    t.after(() => receiver.close());
    const hook = await createWebhook({ store: a, clock: systemClock, allowPrivate: true }, demo.account.id, {
      Url: receiver.url,
      Events: ['message.received'],
    });
    receiver.secret = hook.secret;
    const seen = new Map<string, number>();
    // Every first attempt fails, every second succeeds.
    receiver.answer = (r) => {
      seen.set(r.id, (seen.get(r.id) ?? 0) + 1);
      return seen.get(r.id) === 1 ? 500 : 200;
    };
    const EVENTS = 300;
    const now = Math.floor(Date.now() / 1000);
    await inTransaction(a, async (tx) => {
      for (let i = 0; i < EVENTS; i++) {
        const m = await insertMessage(
          tx,
          demo.account.id,
          {
            direction: 2,
            number: demo.numbers[0]!.Number,
            mobilePhone: '15557654321',
            message: `m${i}`,
            typeId: 1,
            statusId: 7,
            segments: 1,
            credits: 0,
            batchId: null,
            scheduledMessageId: null,
            optOutExempt: 0,
            dueAt: null,
          },
          now,
        );
        await emitEvent(tx, demo.account.id, 'message.received', m, now);
      }
    });
    const clock = createManualClock((now + 1) * 1000);
    const loop = (store: typeof a) =>
      new WebhookDeliverer({ store, clock, allowPrivate: true, timeoutMs: 5000, batchSize: 20, concurrency: 8, pollMs: 5 });
    const [x, y] = [loop(a), loop(b)];
    const [r1, r2] = await Promise.all([x.drain(), y.drain()]);
    assert.equal(r1.claimed + r2.claimed, EVENTS);
    assert.ok(r1.claimed > 0 && r2.claimed > 0, `both instances worked (${r1.claimed}, ${r2.claimed})`);
    assert.equal(receiver.received.length, EVENTS);
    assert.ok(
      [...seen.values()].every((n) => n === 1),
      'each first attempt made once',
    );
    clock.advance(5000);
    const [s1, s2] = await Promise.all([x.drain(), y.drain()]);
    assert.equal(s1.delivered + s2.delivered, EVENTS);
    assert.equal(receiver.received.length, 2 * EVENTS);
    assert.ok(
      [...seen.values()].every((n) => n === 2),
      'each second attempt made once',
    );
    assert.ok(receiver.received.every((r) => r.verified));
    const statuses = await a.db.selectFrom('webhook_deliveries').select(['status', 'attempts']).execute();
    assert.ok(statuses.every((s) => s.status === 'Delivered' && Number(s.attempts) === 2));
  },
);
