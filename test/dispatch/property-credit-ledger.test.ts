/**
 * The credit ledger's invariant (docs/API.md §10.1.1), as a property on each store: random
 * sequences of sms/send (sometimes to the sandbox's failing +15005550002, which the dispatcher
 * ends Failed and refunds), sms/send-group (sometimes to a group holding that number: one refund
 * entry per batch and round), sms/schedule then cancel-scheduled, the scheduler's check reserving
 * credits (and sending what is due), top-ups and adjustments (`msgsvc credits add`, the operator's
 * accounts/credits), transfers between a parent and its sub-account (subaccounts/credits, both
 * ways), and dispatcher rounds, all on one manual clock; after EACH step, for every account, the
 * sum of its ledger entries is its AvailableCredits and its newest entry's Balance is it. At the
 * end the sub-account is closed: its Queued messages are refunded, its balance goes to the parent,
 * and the ledgers still add up.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createManualClock } from '../../src/lib/time.ts';
import { adjustCredits } from '../../src/domain/account-admin.ts';
import { ValidationFailedError } from '../../src/domain/errors.ts';
import { buildTestApp } from '../helpers/app.ts';
import { assertLedgerAddsUp } from '../helpers/ledger.ts';
import { call } from '../helpers/operations.ts';
import { testDispatcher } from '../helpers/sms.ts';
import { CANCEL, dateTimeForms, SCHEDULE, testScheduler } from '../helpers/scheduled.ts';
import { storeTest } from '../helpers/stores.ts';

const FAILING = '+15005550002';

type Step =
  | { kind: 'send'; account: number; failing: boolean; long: boolean }
  | { kind: 'group'; account: number; failing: boolean }
  | { kind: 'schedule'; account: number; secondsAhead: number; cancel: 'never' | 'before-check' | 'after-check' }
  | { kind: 'scheduler' }
  | { kind: 'dispatcher' }
  | { kind: 'add'; account: number; amount: number }
  | { kind: 'transfer'; amount: number }
  | { kind: 'advance'; seconds: number };

// 0 and 1: two top-level accounts; 2: a sub-account of 0.
const account = fc.integer({ min: 0, max: 2 });
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('send' as const), account, failing: fc.boolean(), long: fc.boolean() }),
  fc.record({ kind: fc.constant('group' as const), account, failing: fc.boolean() }),
  fc.record({
    kind: fc.constant('schedule' as const),
    account,
    secondsAhead: fc.constantFrom(2, 3600),
    cancel: fc.constantFrom('never' as const, 'before-check' as const, 'after-check' as const),
  }),
  fc.constant({ kind: 'scheduler' as const }),
  fc.constant({ kind: 'dispatcher' as const }),
  fc.record({ kind: fc.constant('add' as const), account, amount: fc.integer({ min: -300, max: 300 }).filter((n) => n !== 0) }),
  fc.record({ kind: fc.constant('transfer' as const), amount: fc.integer({ min: -60, max: 60 }).filter((n) => n !== 0) }),
  fc.record({ kind: fc.constant('advance' as const), seconds: fc.integer({ min: 1, max: 5 }) }),
);

storeTest(
  'property: after every send, group send, schedule, cancel, scheduler and dispatcher round and CLI add, each ledger adds up to its balance',
  { timeout: 120_000 },
  async (t) => {
    const clock = createManualClock(Date.UTC(2030, 0, 1, 12, 0, 0));
    const ctx = await buildTestApp(t, {}, { clock });
    const a = await ctx.seed('A');
    const b = await ctx.seed('B');
    // The sub-account, made and given credits, a key and a number the way a parent does it.
    const made = await call(ctx.app, {
      method: 'POST',
      path: '/v1/subaccounts/create',
      token: a.token,
      body: { Name: 'Child', Credits: 80 },
    });
    assert.equal(made.statusCode, 201, made.body);
    const childId = made.json<{ Id: number }>().Id;
    const key = await call(ctx.app, {
      method: 'POST',
      path: '/v1/subaccounts/keys',
      token: a.token,
      query: `id=${childId}`,
      body: { Name: 'child' },
    });
    assert.equal(key.statusCode, 201, key.body);
    const moved = await call(ctx.app, {
      method: 'POST',
      path: '/v1/subaccounts/numbers',
      token: a.token,
      query: `id=${childId}`,
      body: { Number: a.numbers.find((n) => n.Status_Id === 0)!.Number },
    });
    assert.equal(moved.statusCode, 200, moved.body);
    const accounts = [
      { token: a.token, account: a.account },
      { token: b.token, account: b.account },
      { token: key.json<{ Secret: string }>().Secret, account: { id: childId, name: 'Child' } },
    ];
    const { dispatcher } = testDispatcher(ctx, { clock, receiptMs: 1000 });
    const scheduler = testScheduler(ctx, clock);
    // Per account: a group holding a good recipient and the failing one, and a group of the good one only.
    const groups: { good: number; failing: number }[] = [];
    for (const acc of accounts) {
      const create = async (fname: string) => {
        const res = await call(ctx.app, { method: 'POST', path: '/v1/groups/create', token: acc.token, body: { fname } });
        assert.equal(res.statusCode, 201, res.body);
        return res.json<{ Id: number }>().Id;
      };
      const good = await create('Good ones');
      const failing = await create('With a failing one');
      for (const [Number, GroupIds] of [
        ['+15551230001', [good, failing]],
        [FAILING, [failing]],
      ] as const) {
        const res = await call(ctx.app, { method: 'POST', path: '/v1/contacts/create', token: acc.token, body: { Number, GroupIds } });
        assert.equal(res.statusCode, 201, res.body);
      }
      groups.push({ good, failing });
    }
    await assertLedgerAddsUp(ctx.store, 'after the seed');

    async function run(s: Step): Promise<void> {
      switch (s.kind) {
        case 'send': {
          const a = accounts[s.account]!;
          const body = { MobilePhone: s.failing ? FAILING : '+15551234567', Message: s.long ? 'x'.repeat(200) : 'hello' };
          const res = await call(ctx.app, { method: 'POST', path: '/v1/sms/send', token: a.token, body });
          assert.ok(res.statusCode === 201 || res.statusCode === 422, res.body);
          return;
        }
        case 'group': {
          const a = accounts[s.account]!;
          const GroupId = s.failing ? groups[s.account]!.failing : groups[s.account]!.good;
          const res = await call(ctx.app, {
            method: 'POST',
            path: '/v1/sms/send-group',
            token: a.token,
            body: { GroupId, Message: 'to the group' },
          });
          assert.ok(res.statusCode === 201 || res.statusCode === 422, res.body);
          return;
        }
        case 'schedule': {
          const a = accounts[s.account]!;
          const body = {
            MobilePhone: '+15551234567',
            Message: 'later',
            DateTime: dateTimeForms(clock.nowSeconds() + s.secondsAhead).colons,
          };
          const res = await call(ctx.app, { method: 'POST', path: SCHEDULE, token: a.token, body });
          assert.equal(res.statusCode, 201, res.body);
          const id = res.json<{ Id: number }>().Id;
          if (s.cancel === 'never') return;
          if (s.cancel === 'after-check') {
            await scheduler.drain();
            await assertLedgerAddsUp(ctx.store, 'after the check');
          }
          const cancelled = await call(ctx.app, { method: 'DELETE', path: CANCEL, token: a.token, query: `id=${id}` });
          assert.ok(cancelled.statusCode === 204 || cancelled.statusCode === 404, cancelled.body);
          return;
        }
        case 'scheduler':
          await scheduler.drain();
          return;
        case 'dispatcher':
          await dispatcher.drain();
          return;
        case 'add': {
          // What `msgsvc credits add` and the operator's accounts/credits do: never below zero.
          try {
            await adjustCredits({ store: ctx.store, clock }, accounts[s.account]!.account.id, s.amount, 'property');
          } catch (err) {
            if (!(err instanceof ValidationFailedError)) throw err;
          }
          return;
        }
        case 'transfer': {
          const res = await call(ctx.app, {
            method: 'POST',
            path: '/v1/subaccounts/credits',
            token: a.token,
            query: `id=${childId}`,
            body: { Amount: s.amount },
          });
          assert.ok(res.statusCode === 200 || res.statusCode === 422, res.body);
          return;
        }
        case 'advance':
          clock.advance(s.seconds * 1000);
          return;
      }
    }

    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 12 }), async (steps) => {
        for (const s of steps) {
          await run(s);
          await assertLedgerAddsUp(ctx.store, `after ${JSON.stringify(s)}`);
        }
        // Everything due goes out, and what fails is refunded: the ledger still adds up.
        clock.advance(5000);
        await scheduler.drain();
        await dispatcher.drain();
        await assertLedgerAddsUp(ctx.store, 'after the final rounds');
      }),
      {
        numRuns: 15,
        // One sequence always runs: a failing single send, a failing group send, a reservation and its release, the rounds.
        examples: [
          [
            [
              { kind: 'send', account: 0, failing: true, long: false },
              { kind: 'group', account: 0, failing: true },
              { kind: 'schedule', account: 1, secondsAhead: 3600, cancel: 'after-check' },
              { kind: 'add', account: 1, amount: 50 },
              { kind: 'transfer', amount: 30 },
              { kind: 'send', account: 2, failing: false, long: false },
              { kind: 'transfer', amount: -20 },
              { kind: 'dispatcher' },
            ],
          ],
        ],
      },
    );

    // The refunds of the failing recipient are in the ledger, by message and by batch; the reservations by scheduled message.
    const entries = await ctx.store.db.selectFrom('credit_ledger').select(['type', 'reference']).execute();
    const kinds = new Set(entries.map((e) => `${e.type} ${e.reference.replace(/\d+$/, '')}`));
    for (const k of [
      'refund message:',
      'refund batch:',
      'spend message:',
      'spend batch:',
      'spend scheduled:',
      'refund scheduled:',
      'topup ',
      'transfer_out account:',
      'transfer_in account:',
    ])
      assert.ok(kinds.has(k), `an entry ${k}: ${[...kinds].join(', ')}`);

    // Closing the sub-account with messages still Queued: refunded, and its balance is the parent's.
    const queued = await call(ctx.app, {
      method: 'POST',
      path: '/v1/sms/send',
      token: accounts[2]!.token,
      body: { MobilePhone: '+15551234567', Message: 'last' },
    });
    assert.ok(queued.statusCode === 201 || queued.statusCode === 422, queued.body);
    const closed = await call(ctx.app, { method: 'DELETE', path: '/v1/subaccounts/delete', token: a.token, query: `id=${childId}` });
    assert.equal(closed.statusCode, 204, closed.body);
    await assertLedgerAddsUp(ctx.store, 'after closing the sub-account');
    const left = await ctx.store.db
      .selectFrom('credit_balances')
      .select('available_credits')
      .where('account_id', '=', childId)
      .executeTakeFirstOrThrow();
    assert.equal(Number(left.available_credits), 0, "a closed sub-account's credits are all back with its parent");
  },
);
