/**
 * MaxPerSecond (API.md §16 "Quotas and fairness"; src/dispatch/send-counter.ts), on each store, with
 * a manual clock (one window per second of it) and the sandbox carrier:
 * - one dispatcher (the counter in its memory): at most MaxPerSecond of the account's messages per
 *   second, the rest Queued untouched (no attempt, no lease, due as they were) and sent in the next
 *   seconds; another account is not held back;
 * - only messages handed to a carrier count: a claimed message that is rejected gives its place back
 *   within the same second;
 * - two dispatchers sharing one Redis: the cap holds for the two together (with a counter each in
 *   memory they would send twice the cap); both take part;
 * - Redis unreachable: the dispatcher counts in its own memory (the cap per process), with a warning.
 *
 * The 5 % over 30 s of real time across two processes is bench/fairness.ts's (c), not a unit test.
 * The claim reads the index of migration 023 (see store-fair-dispatch.test.ts).
 */
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { Dispatcher, type DispatcherOptions } from '../../src/dispatch/dispatcher.ts';
import { createSandboxCarrier } from '../../src/dispatch/sandbox.ts';
import { createMemorySendCounter, createRedisSendCounter, type SendCounter } from '../../src/dispatch/send-counter.ts';
import { createManualClock, type ManualClock } from '../../src/lib/time.ts';
import { openStore, type Store } from '../../src/store/db.ts';
import { createAccount } from '../../src/store/repositories/accounts.ts';
import { insertNumber } from '../../src/store/repositories/numbers.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { uniqueRatePrefix } from '../helpers/scale.ts';
import { REDIS_TEST_URL, redisSkip, storeTest } from '../helpers/stores.ts';

const T0 = Date.UTC(2030, 0, 15, 12, 0, 0);
const NUMBER = '55155';

async function prepare(t: { after(fn: () => unknown): void }): Promise<TestApp> {
  return buildTestApp(t);
}

/** A new active account with the Active number 55155 and the given MaxPerSecond (0: none). */
async function account(ctx: TestApp, name: string, maxPerSecond: number): Promise<number> {
  const now = Math.floor(T0 / 1000);
  const id = await createAccount(ctx.store.db, name, now);
  await insertNumber(ctx.store.db, id, NUMBER, 0, null, now);
  await ctx.store.db.updateTable('accounts').set({ max_per_second: maxPerSecond }).where('id', '=', id).execute();
  return id;
}

/** Queues `count` SMS of the account due at `dueAt` (epoch ms), recipients +1 555 <account><i>, in one statement. */
async function queue(ctx: TestApp, accountId: number, count: number, dueAt: number, first = 0): Promise<void> {
  const series =
    ctx.store.dialect === 'postgres'
      ? sql`select i from generate_series(0, ${count - 1}) as s(i)`
      : sql`select i from (with recursive s(i) as (select 0 union all select i + 1 from s where i < ${count - 1}) select i from s)`;
  await sql`insert into messages (account_id, direction, number, mobile_phone, message, type_id, status_id, segments, credits, created_at, due_at)
    select ${accountId}, 1, ${NUMBER}, '1555' || cast(cast(${accountId * 100_000 + first} as integer) + i as text), 'hello', 1, 1, 1, 1, ${Math.floor(dueAt / 1000)}, ${dueAt}
    from (${series}) as n`.execute(ctx.store.db);
}

/** The account's messages handed to the carrier (Sent or Delivered), in total and by second sent. */
async function sent(ctx: TestApp, accountId: number): Promise<{ total: number; perSecond: number[] }> {
  const rows = await ctx.store.db
    .selectFrom('messages')
    .select(['sent_at', (eb) => eb.fn.countAll<number>().as('n')])
    .where('account_id', '=', accountId)
    .where('status_id', 'in', [2, 3])
    .groupBy('sent_at')
    .orderBy('sent_at')
    .execute();
  const perSecond = rows.map((r) => Number(r.n));
  return { total: perSecond.reduce((a, b) => a + b, 0), perSecond };
}

function dispatcherFor(store: Store, clock: ManualClock, sendCounter: SendCounter, log?: DispatcherOptions['log']): Dispatcher {
  return new Dispatcher({
    store,
    carrier: createSandboxCarrier({ receiptMs: 60_000 }),
    clock,
    batchSize: 100,
    leaseMs: 30_000,
    maxAttempts: 5,
    pollMs: 5,
    sendCounter,
    ...(log ? { log } : {}),
  });
}

storeTest(
  'MaxPerSecond 10: ten a second of the clock, the rest Queued untouched for the next seconds; another account is not held back',
  async (t) => {
    const ctx = await prepare(t);
    const capped = await account(ctx, 'capped', 10);
    const free = await account(ctx, 'free', 0);
    await queue(ctx, capped, 45, T0 - 1000);
    await queue(ctx, free, 50, T0 - 1000);
    const clock = createManualClock(T0);
    const dispatcher = dispatcherFor(ctx.store, clock, createMemorySendCounter());
    await dispatcher.drain();
    assert.equal((await sent(ctx, capped)).total, 10, 'ten in the first second');
    assert.equal((await sent(ctx, free)).total, 50, 'the other account, all of them at once');
    const waiting = await ctx.store.db
      .selectFrom('messages')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', capped)
      .where('status_id', '=', 1)
      .where('attempts', '=', 0)
      .where('lease_token', 'is', null)
      .where('due_at', '=', T0 - 1000)
      .executeTakeFirstOrThrow();
    assert.equal(Number(waiting.n), 35, 'the rest: Queued, never claimed, still due (not Failed, no attempt, no delay)');

    clock.advance(999);
    await dispatcher.drain();
    assert.equal((await sent(ctx, capped)).total, 10, 'not one more within the same second');
    clock.advance(1);
    await dispatcher.drain();
    assert.equal((await sent(ctx, capped)).total, 20, 'the next second: ten more');
    for (let i = 0; i < 3; i++) {
      clock.advance(1000);
      await dispatcher.drain();
    }
    assert.deepEqual((await sent(ctx, capped)).perSecond, [10, 10, 10, 10, 5], 'ten a second until the last five');
  },
);

storeTest(
  'MaxPerSecond counts messages handed to a carrier: a claimed message rejected gives its place back in the same second',
  async (t) => {
    const ctx = await prepare(t);
    const capped = await account(ctx, 'capped', 10);
    // The 5 oldest go to recipients who opted out: claimed first, Rejected, never submitted.
    await queue(ctx, capped, 5, T0 - 2000, 0);
    await queue(ctx, capped, 30, T0 - 1000, 50);
    const now = Math.floor(T0 / 1000);
    for (let i = 0; i < 5; i++) {
      const digits = `1555${capped * 100_000 + i}`;
      await ctx.store.db
        .insertInto('contacts')
        .values({
          account_id: capped,
          number: digits,
          number_e164: `+${digits}`,
          opted_out: 1,
          first_name: '',
          last_name: '',
          birthday: null,
          email: '',
          zip: '',
          city: '',
          created_at: now,
          updated_at: now,
        })
        .execute();
    }
    const clock = createManualClock(T0);
    const dispatcher = dispatcherFor(ctx.store, clock, createMemorySendCounter());
    const round = await dispatcher.drain();
    assert.equal(round.rejected, 5);
    assert.equal((await sent(ctx, capped)).total, 10, 'ten handed to the carrier in the first second, the rejected not counted');
  },
);

storeTest(
  'MaxPerSecond across two dispatchers sharing Redis: the cap holds for the two together, and both take part',
  { skip: await redisSkip() },
  async (t, kind) => {
    const ctx = await prepare(t);
    const capped = await account(ctx, 'capped', 10);
    await queue(ctx, capped, 100, T0 - 1000);
    // PostgreSQL: a pool each, as two instances. SQLite: the one connection of this process (see
    // test/dispatch/scale-dispatcher.test.ts); the counter is what is shared here either way.
    const second = kind === 'postgres' ? openStore(ctx.config.database) : ctx.store;
    if (second !== ctx.store) t.after(() => second.close());
    const prefix = `${uniqueRatePrefix()}:mps`;
    const log = { info() {}, warn() {}, error() {} };
    const clock = createManualClock(T0);
    const dispatchers = [ctx.store, second].map((store) =>
      dispatcherFor(store, clock, createRedisSendCounter(REDIS_TEST_URL, prefix, log)),
    );
    t.after(() => Promise.all(dispatchers.map((d) => d.stop())));
    const byDispatcher = [0, 0];
    for (let second = 0; second < 4; second++) {
      // Within the second, the two take turns, the first of them changing every second.
      for (let i = 0; i < 6; i++) {
        const k = (second + i) % 2;
        byDispatcher[k]! += (await dispatchers[k]!.runOnce()).sent;
        clock.advance(100);
      }
      clock.advance(400);
    }
    assert.deepEqual(
      (await sent(ctx, capped)).perSecond,
      [10, 10, 10, 10],
      'ten a second between the two (each alone would have sent ten)',
    );
    assert.ok(byDispatcher[0]! > 0 && byDispatcher[1]! > 0, `both took part (${byDispatcher.join(' / ')})`);
  },
);

storeTest('Redis unreachable: the cap is counted in the dispatcher’s memory (per process), with one warning', async (t) => {
  const ctx = await prepare(t);
  const capped = await account(ctx, 'capped', 10);
  await queue(ctx, capped, 30, T0 - 1000);
  const warnings: string[] = [];
  const log = { info() {}, warn: (_o: object, msg?: string) => warnings.push(msg ?? ''), error() {} };
  // Nothing listens on port 1: the first take waits at most the command timeout, then memory.
  const counter = createRedisSendCounter('redis://127.0.0.1:1', 'unused', log, { commandTimeoutMs: 200 });
  const clock = createManualClock(T0);
  const dispatcher = dispatcherFor(ctx.store, clock, counter, log);
  t.after(() => dispatcher.stop());
  await dispatcher.drain();
  assert.equal((await sent(ctx, capped)).total, 10);
  clock.advance(1000);
  await dispatcher.drain();
  assert.equal((await sent(ctx, capped)).total, 20);
  assert.equal(warnings.filter((w) => w.includes('MaxPerSecond')).length, 1, warnings.join('\n'));
});
