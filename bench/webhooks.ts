/**
 * Webhook deliveries per second to a loopback receiver (issue 13 "Speed"; API.md §12.5), on
 * SQLite and PostgreSQL.
 *
 * N events (default 20,000) are written to the outbox the way the service writes them
 * (`emitEvent` in the transaction of a stored message, 1,000 per transaction), for one account
 * with one webhook pointing at a receiver on 127.0.0.1. The receiver is a separate process (so
 * its CPU is not the deliverer's) that answers 204 at once and checks the Standard Webhooks
 * signature of every request with a direct HMAC-SHA256 (node:crypto). Then ONE delivery loop
 * (src/webhooks/deliverer.ts, the one `msgsvc serve` / `msgsvc worker` runs, with its default
 * settings: MSGSVC_WEBHOOK_BATCH 100, MSGSVC_WEBHOOK_CONCURRENCY 32, keep-alive connections) is
 * started on the system clock, and the time until every delivery is Delivered is measured.
 * Checked: N Delivered, each with 1 attempt, N requests received, every signature valid.
 *
 *   node --import tsx bench/webhooks.ts [events] [--stores sqlite,postgres] [--pg-url postgres://…]
 *
 * The last line is `WEBHOOKS {json}`.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { benchDatabase, postgresReachable } from './lib/databases.ts';
import { createAccount } from '../src/domain/accounts.ts';
import { systemClock } from '../src/lib/time.ts';
import { createWebhook, emitEvent } from '../src/domain/webhooks.ts';
import { inTransaction, migrateToLatest, openStore, type Store } from '../src/store/db.ts';
import { insertMessage } from '../src/store/repositories/message-log.ts';
import { WebhookDeliverer } from '../src/webhooks/deliverer.ts';

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    stores: { type: 'string', default: 'sqlite,postgres' },
    'pg-url': { type: 'string', default: process.env.MSGSVC_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
  },
});
const N = Number(positionals[0] ?? 20_000);
const stores = flags.stores.split(',').map((s) => s.trim()) as ('sqlite' | 'postgres')[];

const RECEIVER = `
const { createServer } = require('node:http');
const { createHmac } = require('node:crypto');
let key; let received = 0; let bad = 0;
process.on('message', (m) => { if (m.secret) key = Buffer.from(m.secret.slice(6), 'base64'); if (m.report) process.send({ received, bad }); });
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString();
    const expected = 'v1,' + createHmac('sha256', key).update(req.headers['webhook-id'] + '.' + req.headers['webhook-timestamp'] + '.' + body).digest('base64');
    received++;
    if (expected !== req.headers['webhook-signature']) bad++;
    res.writeHead(204).end();
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
`;

async function run(kind: 'sqlite' | 'postgres') {
  const db = await benchDatabase(kind, 'webhooks', flags['pg-url']);
  const store: Store = openStore(db.config);
  const receiver = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  try {
    const [{ port }] = (await once(receiver, 'message')) as [{ port: number }];
    await migrateToLatest(store);
    const accountId = await createAccount(store, 'Webhook bench');
    const hook = await createWebhook({ store, clock: systemClock, allowPrivate: true }, accountId, {
      Url: `http://127.0.0.1:${port}/hook`,
      Events: ['message.received'],
    });
    receiver.send({ secret: hook.secret });
    const now = Math.floor(Date.now() / 1000);
    const writeStart = performance.now();
    for (let i = 0; i < N; i += 1000) {
      await inTransaction(store, async (tx) => {
        for (let j = i; j < Math.min(N, i + 1000); j++) {
          const m = await insertMessage(
            tx,
            accountId,
            {
              direction: 2,
              number: '55155',
              mobilePhone: '15557654321',
              message: `event ${j}`,
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
          await emitEvent(tx, accountId, 'message.received', m, now);
        }
      });
    }
    const writeSeconds = (performance.now() - writeStart) / 1000;
    const load = loadavg()[0]!;
    const deliverer = new WebhookDeliverer({
      store,
      clock: systemClock,
      allowPrivate: true,
      timeoutMs: 10_000,
      batchSize: 100,
      concurrency: 32,
      pollMs: 100,
    });
    const cpu0 = process.cpuUsage();
    const start = performance.now();
    deliverer.start();
    const done = async () =>
      Number(
        (
          await store.db
            .selectFrom('webhook_deliveries')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('status', '=', 'Delivered')
            .executeTakeFirst()
        )?.n ?? 0,
      );
    while ((await done()) < N) await new Promise((r) => setTimeout(r, 20));
    const seconds = (performance.now() - start) / 1000;
    const cpu = process.cpuUsage(cpu0);
    await deliverer.stop();
    receiver.send({ report: true });
    const [{ received, bad }] = (await once(receiver, 'message')) as [{ received: number; bad: number }];
    const attempts = await store.db.selectFrom('webhook_deliveries').select('attempts').where('attempts', '!=', 1).execute();
    if (received !== N || bad !== 0 || attempts.length !== 0)
      throw new Error(
        `${kind}: received ${received}/${N}, bad signatures ${bad}, deliveries with more than one attempt ${attempts.length}`,
      );
    const result = {
      store: kind,
      events: N,
      seconds: +seconds.toFixed(2),
      deliveriesPerSecond: Math.round(N / seconds),
      outboxWritesPerSecond: Math.round(N / writeSeconds),
      cpuSeconds: +((cpu.user + cpu.system) / 1e6).toFixed(2),
      loadBefore: +load.toFixed(2),
    };
    console.log(
      `${kind}: ${N} deliveries in ${result.seconds} s = ${result.deliveriesPerSecond}/s (outbox writes ${result.outboxWritesPerSecond}/s; deliverer CPU ${result.cpuSeconds} s; load ${result.loadBefore})`,
    );
    return result;
  } finally {
    receiver.kill();
    await store.close();
    await db.drop();
  }
}

const results = [];
const skipped: string[] = [];
for (const kind of stores) {
  if (kind === 'postgres' && !(await postgresReachable(flags['pg-url']))) {
    skipped.push(`postgres: ${flags['pg-url']} does not answer`);
    console.log(`postgres: skipped (${flags['pg-url']} does not answer)`);
    continue;
  }
  results.push(await run(kind));
}
console.log(`WEBHOOKS ${JSON.stringify({ events: N, results, skipped })}`);
