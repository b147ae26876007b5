/**
 * Two dispatchers over one database (API.md §11.2: "any number of dispatchers share the work,
 * and no message is given to the carrier twice by two of them"): 10,000 messages queued by one
 * send-group, two dispatchers (on two pools on PostgreSQL; on SQLite on the one connection of the
 * process, see below) run their loops at once, and the sandbox's submits are counted per message:
 * each exactly once, both dispatchers did part of the work, every message ends Delivered, and the
 * balance is exactly what 10,000 messages cost.
 */
import assert from 'node:assert/strict';
import { sendGroupMessage } from '../../src/domain/messages.ts';
import { systemClock } from '../../src/lib/time.ts';
import { createSandboxCarrier } from '../../src/dispatch/sandbox.ts';
import { Dispatcher } from '../../src/dispatch/dispatcher.ts';
import { openStore } from '../../src/store/db.ts';
import { buildTestApp } from '../helpers/app.ts';
import { balanceOf, setBalance } from '../helpers/sms.ts';
import { storeTest } from '../helpers/stores.ts';

const MESSAGES = 10_000;

storeTest(
  `two dispatchers, one database, ${MESSAGES.toLocaleString('en-US')} queued messages: each submitted exactly once`,
  { timeout: 60_000 },
  async (t, kind) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const db = ctx.store.db;
    const accountId = demo.account.id;
    const now = Math.floor(Date.now() / 1000);
    const groupId = (
      await db
        .insertInto('groups')
        .values({ account_id: accountId, name: 'Everyone', note: '', keyword_id: 0, parent_id: 0, created_at: now, updated_at: now })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
    for (let i = 0; i < MESSAGES; i += 500) {
      const rows = Array.from({ length: Math.min(500, MESSAGES - i) }, (_, k) => {
        const digits = `1555${String(7_000_000 + i + k).padStart(7, '0')}`;
        return {
          account_id: accountId,
          number: digits,
          number_e164: `+${digits}`,
          opted_out: 0,
          first_name: '',
          last_name: '',
          birthday: null,
          email: '',
          zip: '',
          city: '',
          created_at: now,
          updated_at: now,
        };
      });
      const ids = await db.insertInto('contacts').values(rows).returning('id').execute();
      await db
        .insertInto('group_members')
        .values(ids.map((r) => ({ account_id: accountId, group_id: groupId, contact_id: r.id })))
        .execute();
    }
    await setBalance(ctx, accountId, MESSAGES + 5);
    const queuedAt = performance.now();
    const batch = await sendGroupMessage(
      { store: ctx.store, clock: systemClock, prices: { smsSegmentCredits: 1, mmsCredits: 3 }, region: 'US' },
      accountId,
      { GroupId: groupId, Message: 'to all ten thousand' },
    );
    const queueMs = performance.now() - queuedAt;
    assert.equal(batch.recipients, MESSAGES);
    assert.equal(await balanceOf(ctx, accountId), 5);

    // PostgreSQL: a second pool. SQLite: the same connection. Two SQLite connections in ONE process
    // cannot share a file's write lock (SQLite's busy wait blocks the only thread, so the holder can
    // never finish); two processes on one file are test/dispatch/reliability-dispatcher.test.ts's case.
    const second = kind === 'postgres' ? openStore(ctx.config.database) : ctx.store;
    if (second !== ctx.store) t.after(() => second.close());
    const submits = new Map<number, number>();
    const count = (m: { id: number }) => submits.set(m.id, (submits.get(m.id) ?? 0) + 1);
    const carriers = [createSandboxCarrier({ receiptMs: 0, onSubmit: count }), createSandboxCarrier({ receiptMs: 0, onSubmit: count })];
    const errors: unknown[] = [];
    const log = { info() {}, warn: (o: object) => errors.push(o), error: (o: object) => errors.push(o) };
    const dispatchers = [ctx.store, second].map(
      (store, i) =>
        new Dispatcher({
          store,
          carrier: carriers[i]!,
          clock: systemClock,
          batchSize: 250,
          leaseMs: 60_000,
          maxAttempts: 5,
          pollMs: 5,
          log,
        }),
    );
    const started = performance.now();
    await Promise.all(dispatchers.map((d) => d.start()));
    t.after(() => Promise.all(dispatchers.map((d) => d.stop())));
    const delivered = async () =>
      Number(
        (
          await db
            .selectFrom('messages')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('batch_id', '=', batch.id)
            .where('status_id', '=', 3)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const deadline = Date.now() + 45_000;
    while ((await delivered()) < MESSAGES && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const seconds = (performance.now() - started) / 1000;
    await Promise.all(dispatchers.map((d) => d.stop()));

    assert.deepEqual(errors, [], 'no round failed, no lease was lost');
    assert.equal(await delivered(), MESSAGES, 'every message Delivered');
    assert.equal(submits.size, MESSAGES, 'every message reached the carrier');
    const twice = [...submits].filter(([, n]) => n !== 1);
    assert.deepEqual(twice, [], 'no message was submitted twice');
    assert.equal(carriers[0]!.submits + carriers[1]!.submits, MESSAGES);
    assert.ok(
      carriers[0]!.submits > 0 && carriers[1]!.submits > 0,
      `both dispatchers worked (${carriers[0]!.submits} / ${carriers[1]!.submits})`,
    );
    assert.equal(await balanceOf(ctx, accountId), 5, 'no refund, no second debit');
    t.diagnostic(
      `${kind}: send-group queued ${MESSAGES} in ${queueMs.toFixed(0)} ms; two dispatchers took them to Delivered in ${seconds.toFixed(2)} s ` +
        `(${Math.round(MESSAGES / seconds)} messages/s; split ${carriers[0]!.submits} / ${carriers[1]!.submits})`,
    );
  },
);
