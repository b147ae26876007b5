/**
 * The dispatcher's side of sender pools (docs/API.md §17), on each store, with a manual clock and
 * the sandbox carrier:
 * - the priority lane: a Priority 1 message queued after a backlog of Priority 0 messages goes to
 *   the carrier in the very first claim; it is still an active account's message within its
 *   MaxPerSecond (a suspended account's waits, a capped account's goes at its rate);
 * - a number's MaxPerSecond: at most that many of its messages a second of the clock, the others
 *   released unattempted for the next seconds, while the account's other numbers are not held
 *   back; with two dispatchers sharing one Redis, the cap holds for the two together.
 */
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { Dispatcher } from '../../src/dispatch/dispatcher.ts';
import { createSandboxCarrier } from '../../src/dispatch/sandbox.ts';
import { createMemorySendCounter, createRedisSendCounter, type SendCounter } from '../../src/dispatch/send-counter.ts';
import { createManualClock, type ManualClock } from '../../src/lib/time.ts';
import type { Store } from '../../src/store/db.ts';
import { createAccount } from '../../src/store/repositories/accounts.ts';
import { insertNumber } from '../../src/store/repositories/numbers.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { uniqueRatePrefix } from '../helpers/scale.ts';
import { REDIS_TEST_URL, redisSkip, storeTest } from '../helpers/stores.ts';

const T0 = Date.UTC(2030, 0, 15, 12, 0, 0);
const A = '14155550100';
const B = '14155550101';

async function account(ctx: TestApp, name: string, maxPerSecond = 0): Promise<number> {
  const now = Math.floor(T0 / 1000);
  const id = await createAccount(ctx.store.db, name, now);
  for (const n of [A, B]) await insertNumber(ctx.store.db, id, n, 0, null, now);
  await ctx.store.db.updateTable('accounts').set({ max_per_second: maxPerSecond }).where('id', '=', id).execute();
  return id;
}

/** Queues `count` SMS from `number` due at `dueAt` (epoch ms) with `priority`, in one statement. */
async function queue(
  ctx: TestApp,
  accountId: number,
  o: { count: number; dueAt: number; number?: string; priority?: number; first?: number },
) {
  const series =
    ctx.store.dialect === 'postgres'
      ? sql`select i from generate_series(0, ${o.count - 1}) as s(i)`
      : sql`select i from (with recursive s(i) as (select 0 union all select i + 1 from s where i < ${o.count - 1}) select i from s)`;
  await sql`insert into messages (account_id, direction, number, mobile_phone, message, type_id, status_id, segments, credits, created_at, due_at, priority)
    select ${accountId}, 1, ${o.number ?? A}, '1555' || cast(cast(${accountId * 100_000 + (o.first ?? 0)} as integer) + i as text), 'hello', 1, 1, 1, 1,
      ${Math.floor(o.dueAt / 1000)}, ${o.dueAt}, ${o.priority ?? 0}
    from (${series}) as n`.execute(ctx.store.db);
}

/** Messages handed to the carrier (Sent or Delivered), by filter. */
async function sent(ctx: TestApp, accountId: number, where: { number?: string; priority?: number } = {}): Promise<number> {
  let q = ctx.store.db
    .selectFrom('messages')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .where('status_id', 'in', [2, 3]);
  if (where.number !== undefined) q = q.where('number', '=', where.number);
  if (where.priority !== undefined) q = q.where('priority', '=', where.priority);
  return Number((await q.executeTakeFirstOrThrow()).n);
}

function dispatcherFor(
  store: Store,
  clock: ManualClock,
  sendCounter: SendCounter = createMemorySendCounter(),
  batchSize = 100,
): Dispatcher {
  return new Dispatcher({
    store,
    carrier: createSandboxCarrier({ receiptMs: 60_000 }),
    clock,
    batchSize,
    leaseMs: 30_000,
    maxAttempts: 5,
    pollMs: 5,
    sendCounter,
  });
}

storeTest(
  'the priority lane: a Priority 1 message queued behind 2,000 Priority 0 ones goes in the first claim; limits still apply',
  async (t) => {
    const ctx = await buildTestApp(t);
    const busy = await account(ctx, 'busy');
    await queue(ctx, busy, { count: 2000, dueAt: T0 - 5000 });
    // Due after the whole backlog: oldest-due-first would take it last.
    await queue(ctx, busy, { count: 1, dueAt: T0, priority: 1, first: 50_000 });
    const clock = createManualClock(T0);
    const dispatcher = dispatcherFor(ctx.store, clock);
    const round = await dispatcher.runOnce();
    assert.equal(round.claimed, 100);
    assert.equal(await sent(ctx, busy, { priority: 1 }), 1, 'in the first claim');

    // A suspended account's Priority 1 message waits; a capped account's goes at its rate.
    const suspended = await account(ctx, 'suspended');
    await ctx.store.db.updateTable('accounts').set({ status: 'suspended' }).where('id', '=', suspended).execute();
    await queue(ctx, suspended, { count: 1, dueAt: T0, priority: 1 });
    const capped = await account(ctx, 'capped', 2);
    await queue(ctx, capped, { count: 5, dueAt: T0, priority: 1 });
    // The accounts with MaxPerSecond are read once a second of the clock.
    clock.advance(1000);
    await dispatcher.runOnce();
    assert.equal(await sent(ctx, suspended), 0, 'suspended: held');
    assert.equal(await sent(ctx, capped, { priority: 1 }), 2, 'MaxPerSecond 2: two this second');
    clock.advance(1000);
    await dispatcher.runOnce();
    assert.equal(await sent(ctx, capped, { priority: 1 }), 4, 'two more the next second');
  },
);

storeTest(
  "a number's MaxPerSecond: that many a second, the rest Queued unattempted; the account's other number is not held back",
  async (t) => {
    const ctx = await buildTestApp(t);
    const id = await account(ctx, 'pool');
    await ctx.store.db
      .updateTable('account_numbers')
      .set({ max_per_second: 3 })
      .where('account_id', '=', id)
      .where('number', '=', A)
      .execute();
    await queue(ctx, id, { count: 10, dueAt: T0 - 1000, number: A });
    await queue(ctx, id, { count: 10, dueAt: T0 - 1000, number: B, first: 1000 });
    const clock = createManualClock(T0);
    const dispatcher = dispatcherFor(ctx.store, clock);
    await dispatcher.drain();
    assert.equal(await sent(ctx, id, { number: A }), 3, 'three from A in the first second');
    assert.equal(await sent(ctx, id, { number: B }), 10, 'B: every one at once');
    const waiting = await ctx.store.db
      .selectFrom('messages')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', id)
      .where('number', '=', A)
      .where('status_id', '=', 1)
      .where('attempts', '=', 0)
      .where('lease_token', 'is', null)
      .executeTakeFirstOrThrow();
    assert.equal(Number(waiting.n), 7, 'the rest Queued, no attempt spent, no lease held');
    clock.advance(999);
    await dispatcher.drain();
    assert.equal(await sent(ctx, id, { number: A }), 3, 'not one more within the second');
    for (const expected of [6, 9, 10]) {
      clock.advance(1000);
      await dispatcher.drain();
      assert.equal(await sent(ctx, id, { number: A }), expected);
    }
  },
);

storeTest(
  "a number's MaxPerSecond across two dispatchers sharing Redis: the cap holds for the two together",
  { skip: await redisSkip() },
  async (t) => {
    const ctx = await buildTestApp(t);
    const id = await account(ctx, 'shared');
    await ctx.store.db
      .updateTable('account_numbers')
      .set({ max_per_second: 4 })
      .where('account_id', '=', id)
      .where('number', '=', A)
      .execute();
    await queue(ctx, id, { count: 40, dueAt: T0 - 1000, number: A });
    const clock = createManualClock(T0);
    const prefix = uniqueRatePrefix();
    const log = { info: () => undefined, warn: () => undefined };
    const counters = [createRedisSendCounter(REDIS_TEST_URL, prefix, log), createRedisSendCounter(REDIS_TEST_URL, prefix, log)];
    const [one, two] = counters.map((c) => dispatcherFor(ctx.store, clock, c, 3));
    t.after(() => Promise.all([one!.stop(), two!.stop()]));
    for (let second = 1; second <= 3; second++) {
      await Promise.all([one!.drain(), two!.drain()]);
      assert.equal(await sent(ctx, id, { number: A }), 4 * second, `second ${second}`);
      clock.advance(1000);
    }
  },
);
