/**
 * Fair dispatch and suspended accounts (API.md §16 "Quotas and fairness"), on each store, with a
 * manual clock and the sandbox carrier (src/dispatch/dispatcher.ts, src/store/claim.ts
 * fairMessageClaim):
 * - one account's backlog does not hold back another account's message: it goes in the first round;
 * - each round is shared evenly between the accounts with due messages, and what a small account
 *   leaves goes to the big ones (the batch stays full);
 * - with more accounts than one claim serves, every account gets its turn (the round-robin cursor);
 * - a suspended account's messages are not claimed (Queued, no attempt, credits kept) until it is
 *   active again, expired leases included; a claim whose account is suspended or closed since is
 *   caught before any carrier is asked.
 *
 * The messages are written straight into the table in one statement per account (thousands, not a
 * million: the million is bench/fairness.ts). The claim reads the index
 * `messages_account_due_ix (account_id, due_at, id) WHERE due_at IS NOT NULL` (migration 023).
 */
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { Dispatcher, type DispatchRound } from '../../src/dispatch/dispatcher.ts';
import { createSandboxCarrier } from '../../src/dispatch/sandbox.ts';
import { createManualClock, type ManualClock } from '../../src/lib/time.ts';
import { ACCOUNT_NOT_ACTIVE, claimDue, findBlocked } from '../../src/store/repositories/dispatch.ts';
import { createAccount } from '../../src/store/repositories/accounts.ts';
import { insertNumber } from '../../src/store/repositories/numbers.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { balanceOf, setBalance } from '../helpers/sms.ts';
import { storeTest } from '../helpers/stores.ts';

const T0 = Date.UTC(2030, 0, 15, 12, 0, 0);
const NUMBER = '55155';

async function prepare(t: { after(fn: () => unknown): void }): Promise<TestApp> {
  return buildTestApp(t);
}

/** A new account with the Active number 55155 (the dispatcher checks it before a submit). */
async function account(ctx: TestApp, name: string): Promise<number> {
  const now = Math.floor(T0 / 1000);
  const id = await createAccount(ctx.store.db, name, now);
  await insertNumber(ctx.store.db, id, NUMBER, 0, null, now);
  return id;
}

/**
 * Queues `count` SMS of the account, due at `dueAt` (epoch ms), to +1 555 …, in one statement
 * (as a send-group writes them: Queued, one credit each, already paid).
 */
async function queue(ctx: TestApp, accountId: number, count: number, dueAt: number): Promise<void> {
  const series =
    ctx.store.dialect === 'postgres'
      ? sql`select i from generate_series(0, ${count - 1}) as s(i)`
      : sql`select i from (with recursive s(i) as (select 0 union all select i + 1 from s where i < ${count - 1}) select i from s)`;
  await sql`insert into messages (account_id, direction, number, mobile_phone, message, type_id, status_id, segments, credits, created_at, due_at)
    select ${accountId}, 1, ${NUMBER}, '1555' || cast(cast(${accountId * 100_000} as integer) + i as text), 'hello', 1, 1, 1, 1, ${Math.floor(dueAt / 1000)}, ${dueAt}
    from (${series}) as n`.execute(ctx.store.db);
}

/** Messages of the account by status: queued (1), sent (2 or 3, handed to the carrier), other. */
async function counts(ctx: TestApp, accountId: number): Promise<{ queued: number; sent: number; other: number }> {
  const rows = await ctx.store.db
    .selectFrom('messages')
    .select(['status_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('account_id', '=', accountId)
    .groupBy('status_id')
    .execute();
  const out = { queued: 0, sent: 0, other: 0 };
  for (const r of rows) {
    const n = Number(r.n);
    if (r.status_id === 1) out.queued += n;
    else if (r.status_id === 2 || r.status_id === 3) out.sent += n;
    else out.other += n;
  }
  return out;
}

/**
 * One round that claims something: a round after a full claim may find nothing above the last
 * account served (the round-robin cursor) and claim nothing; the next one starts again from the
 * first account (the loop runs it at once).
 */
async function claimingRound(dispatcher: Dispatcher): Promise<DispatchRound> {
  const round = await dispatcher.runOnce();
  return round.claimed > 0 ? round : dispatcher.runOnce();
}

function dispatcherFor(ctx: TestApp, clock: ManualClock, batchSize: number): Dispatcher {
  return new Dispatcher({
    store: ctx.store,
    carrier: createSandboxCarrier({ receiptMs: 60_000 }),
    clock,
    batchSize,
    leaseMs: 30_000,
    maxAttempts: 5,
    pollMs: 5,
  });
}

storeTest("one account's backlog does not hold back another account's message: it goes in the first round", async (t) => {
  const ctx = await prepare(t);
  const a = await account(ctx, 'A');
  const b = await account(ctx, 'B');
  // A's 5,000 were queued a minute before B's one: oldest first, B would wait 50 rounds of 100.
  await queue(ctx, a, 5000, T0 - 60_000);
  await queue(ctx, b, 1, T0);
  const clock = createManualClock(T0);
  const dispatcher = dispatcherFor(ctx, clock, 100);
  const first = await dispatcher.runOnce();
  assert.equal(first.sent, 100, 'the batch is full');
  assert.deepEqual(await counts(ctx, b), { queued: 0, sent: 1, other: 0 }, "B's message went in the first round");
  assert.equal((await counts(ctx, a)).sent, 99, 'A had the rest of the batch');

  // Later, A still has thousands queued: B's next message goes in the next round, again.
  clock.advance(10);
  await claimingRound(dispatcher);
  clock.advance(10);
  await queue(ctx, b, 1, clock.nowMs());
  await claimingRound(dispatcher);
  assert.equal((await counts(ctx, b)).sent, 2, "B's second message went in the round after it was queued");
  assert.ok((await counts(ctx, a)).sent >= 199, 'and A went on meanwhile');
});

storeTest('each round is shared evenly between the accounts with due messages; what a small one leaves goes to the big ones', async (t) => {
  const ctx = await prepare(t);
  const big = [await account(ctx, 'A'), await account(ctx, 'B'), await account(ctx, 'C')];
  const small = await account(ctx, 'D');
  // A is the oldest: oldest first would give it the whole batch.
  await queue(ctx, big[0]!, 1000, T0 - 60_000);
  await queue(ctx, big[1]!, 1000, T0 - 30_000);
  await queue(ctx, big[2]!, 1000, T0);
  await queue(ctx, small, 3, T0);
  const dispatcher = dispatcherFor(ctx, createManualClock(T0), 30);
  assert.equal((await claimingRound(dispatcher)).sent, 30);
  // Share 30 / 4 accounts = 8 each; D has 3, so its 5 unused go to the three big ones: 9 each.
  assert.deepEqual(await Promise.all([...big, small].map(async (id) => (await counts(ctx, id)).sent)), [9, 9, 9, 3]);
  assert.equal((await claimingRound(dispatcher)).sent, 30);
  assert.deepEqual(await Promise.all(big.map(async (id) => (await counts(ctx, id)).sent)), [19, 19, 19], 'then 10 each');
});

storeTest('more accounts than one claim serves: every account gets its turn, in id order from where the last claim stopped', async (t) => {
  const ctx = await prepare(t);
  const ids: number[] = [];
  for (let i = 0; i < 12; i++) ids.push(await account(ctx, `acct ${i}`));
  // Every account has 4 messages, the lower ids the older: a claim that always started from the
  // first account (or took the oldest) would serve accounts 1-5 until they were empty.
  for (const [i, id] of ids.entries()) await queue(ctx, id, 4, T0 - (12 - i) * 1000);
  const dispatcher = dispatcherFor(ctx, createManualClock(T0), 5);
  const sentBy = async () => Promise.all(ids.map(async (id) => (await counts(ctx, id)).sent));
  await claimingRound(dispatcher);
  assert.deepEqual(await sentBy(), [1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0], 'a claim serves at most its batch of accounts, one each');
  await claimingRound(dispatcher);
  assert.deepEqual(await sentBy(), [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0], 'the next one goes on after the last account served');
  await claimingRound(dispatcher);
  assert.deepEqual(await sentBy(), [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 2], 'the last two accounts share the third');
  await claimingRound(dispatcher);
  assert.deepEqual(await sentBy(), [2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 3, 2], 'and the walk starts again from the first');
  await dispatcher.drain();
  assert.deepEqual(await sentBy(), Array<number>(12).fill(4), 'all sent in the end');
});

storeTest('a suspended account: its messages wait Queued (no attempt, credits kept) until it is active again, then go', async (t) => {
  const ctx = await prepare(t);
  const s = await account(ctx, 'suspended');
  const other = await account(ctx, 'active');
  await setBalance(ctx, s, 100);
  await queue(ctx, s, 20, T0 - 60_000);
  // A lease that ran out while the account was suspended (a dispatcher died holding 5 of them).
  const clock = createManualClock(T0);
  assert.equal((await claimDue(ctx.store.db, clock.nowMs(), 5, clock.nowMs() + 10_000, 'dead')).length, 5);
  await queue(ctx, other, 20, T0);
  await ctx.store.db.updateTable('accounts').set({ status: 'suspended' }).where('id', '=', s).execute();
  clock.advance(10_001);
  const dispatcher = dispatcherFor(ctx, clock, 100);
  await dispatcher.drain();
  assert.deepEqual(await counts(ctx, other), { queued: 0, sent: 20, other: 0 });
  assert.deepEqual(await counts(ctx, s), { queued: 20, sent: 0, other: 0 }, 'none sent, none ended');
  const untouched = await ctx.store.db
    .selectFrom('messages')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', s)
    .where('attempts', '=', 0)
    .where('lease_token', 'is', null)
    .where('due_at', '=', T0 - 60_000)
    .executeTakeFirstOrThrow();
  assert.equal(Number(untouched.n), 15, 'the 15 never claimed are exactly as queued');
  clock.advance(3_600_000);
  await dispatcher.drain();
  assert.deepEqual(await counts(ctx, s), { queued: 20, sent: 0, other: 0 }, 'an hour later, still waiting');
  assert.equal(await balanceOf(ctx, s), 100, 'no refund: the credits stay debited');

  await ctx.store.db.updateTable('accounts').set({ status: 'active' }).where('id', '=', s).execute();
  await dispatcher.drain();
  assert.deepEqual(await counts(ctx, s), { queued: 0, sent: 20, other: 0 }, 'active again: they go');
  assert.equal(await balanceOf(ctx, s), 100);
});

storeTest(
  'a claim whose account is suspended or closed since: caught before the carrier (suspended: waits; closed: ACCOUNT_CLOSED)',
  async (t) => {
    const ctx = await prepare(t);
    const s = await account(ctx, 'to suspend');
    const c = await account(ctx, 'to close');
    const fine = await account(ctx, 'fine');
    for (const id of [s, c, fine]) await queue(ctx, id, 2, T0);
    const claimed = await claimDue(ctx.store.db, T0, 100, T0 + 10_000, 'x');
    assert.equal(claimed.length, 6);
    await ctx.store.db.updateTable('accounts').set({ status: 'suspended' }).where('id', '=', s).execute();
    await ctx.store.db.updateTable('accounts').set({ status: 'closed' }).where('id', '=', c).execute();
    const blocked = await findBlocked(
      ctx.store.db,
      claimed.map((m) => m.id),
    );
    const reasonOf = (account: number) => [...new Set(claimed.filter((m) => m.account_id === account).map((m) => blocked.get(m.id)))];
    assert.deepEqual(reasonOf(s), [ACCOUNT_NOT_ACTIVE]);
    assert.deepEqual(reasonOf(c), ['ACCOUNT_CLOSED']);
    assert.deepEqual(reasonOf(fine), [undefined]);
  },
);
