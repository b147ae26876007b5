/**
 * MaxPerDay (docs/API.md §16 "Quotas and fairness"; src/domain/quotas.ts) on `sms/send`,
 * `sms/send-group` and `sms/preview`, on each store, on a manual clock: exactly MaxPerDay messages a
 * day pass (a multi-part SMS is one message, each recipient of a group one), the next gets the exact
 * 422 in JSON and XML and changes nothing (no message, no batch, no debit, no ledger entry, not
 * counted); a send-group is all or nothing, plain or personalised; the day is the service's
 * (MSGSVC_TIMEZONE), not UTC's; 0 is no limit, and the count goes on meanwhile, so a limit
 * lowered below the day's count refuses further sends and undoes nothing; thousands commas;
 * concurrent sends and send-groups when only one fits (two apps over one database): exactly one
 * passes; a sub-account's MaxPerDay is its own; an Idempotency-Key replay is not counted again.
 * MaxPerDay is set straight in the database (`accounts.max_per_day`).
 */
import assert from 'node:assert/strict';
import type { DemoAccount } from '../../../src/domain/demo.ts';
import { createManualClock, type ManualClock } from '../../../src/lib/time.ts';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import { assertLedgerAddsUp } from '../../helpers/ledger.ts';
import { assert422, call, fieldError, snapshotAccount, WIRES, XML_DECL, type Wire } from '../../helpers/operations.ts';
import { balanceOf, countMessages, setBalance } from '../../helpers/sms.ts';
import { storeTest } from '../../helpers/stores.ts';

const SEND = '/v1/sms/send';
const GROUP = '/v1/sms/send-group';
const PREVIEW = '/v1/sms/preview';
const RECIPIENT = '+15551234567';
/** Wednesday 2026-06-10 12:00 UTC. */
const NOON = Date.UTC(2026, 5, 10, 12, 0, 0);

/** The 422 list of a send past MaxPerDay `n` (API.md §16), the number with thousands commas. */
const dailyLimit = (n: number) => [fieldError('Message', `Daily limit of ${n.toLocaleString('en-US')} messages reached.`)];

/** The calendar day (`YYYY-MM-DD`) of an instant (epoch ms) in a zone, independently of src/. */
const dayOf = (ms: number, zone: string) => new Date(ms).toLocaleString('sv-SE', { timeZone: zone }).slice(0, 10);

async function setup(t: { after(fn: () => unknown): void }, start = NOON, overrides: Record<string, string> = {}) {
  const clock = createManualClock(start);
  const ctx = await buildTestApp(t, overrides, { clock });
  const demo = await ctx.seed();
  return { ctx, demo, clock };
}

function setMaxPerDay(ctx: Pick<TestApp, 'store'>, accountId: number, n: number) {
  return ctx.store.db.updateTable('accounts').set({ max_per_day: n }).where('id', '=', accountId).execute();
}

/** The account's counted messages of a day (`account_day_counts`), 0 when no row. */
async function counted(ctx: Pick<TestApp, 'store'>, accountId: number, day: string): Promise<number> {
  const r = await ctx.store.db
    .selectFrom('account_day_counts')
    .select('messages')
    .where('account_id', '=', accountId)
    .where('day', '=', day)
    .executeTakeFirst();
  return r ? Number(r.messages) : 0;
}

/** Everything a refused send must leave alone: the account's records, credits and ledger, messages, batches, day counts. */
async function snapshot(ctx: TestApp, accountId: number) {
  const base = await snapshotAccount(ctx, accountId);
  base.messages = await ctx.store.db.selectFrom('messages').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
  base.batches = await ctx.store.db.selectFrom('batches').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
  base.day_counts = await ctx.store.db
    .selectFrom('account_day_counts')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('day')
    .execute();
  return base;
}

function send(ctx: TestApp, token: string, body: Record<string, unknown> = {}, wire: Wire = 'json') {
  return call(ctx.app, { method: 'POST', path: SEND, token, wire, body: { Message: 'hello', MobilePhone: RECIPIENT, ...body } });
}

function sendGroup(ctx: TestApp, token: string, groupId: number, body: Record<string, unknown> = {}, wire: Wire = 'json') {
  return call(ctx.app, { method: 'POST', path: GROUP, token, wire, body: { GroupId: groupId, Message: 'to all', ...body } });
}

/** The 201 of a send (its body on failure). */
function assertSent(res: { statusCode: number; body: string }, what = '') {
  assert.equal(res.statusCode, 201, `${what}: ${res.body}`);
}

/** A demo group with at least 3 members who have not opted out, and how many those are (its send-group's recipients). */
async function groupOfSeveral(ctx: TestApp, demo: DemoAccount): Promise<{ id: number; recipients: number }> {
  for (const g of demo.groups) {
    const r = await ctx.store.db
      .selectFrom('group_members')
      .innerJoin('contacts', 'contacts.id', 'group_members.contact_id')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('group_members.account_id', '=', demo.account.id)
      .where('group_members.group_id', '=', g.Id)
      .where('contacts.opted_out', '=', 0)
      .executeTakeFirstOrThrow();
    if (Number(r.n) >= 3) return { id: g.Id, recipients: Number(r.n) };
  }
  throw new Error('the demo has no group of 3 or more');
}

storeTest(
  'sms/send: MaxPerDay 3 lets exactly 3 messages through (a 2-segment SMS is one); the 4th is the exact 422 in JSON and XML, and changes nothing',
  async (t) => {
    const { ctx, demo } = await setup(t);
    const id = demo.account.id;
    await setMaxPerDay(ctx, id, 3);
    const balance = await balanceOf(ctx, id);
    assertSent(await send(ctx, demo.token, { Message: 'one' }, 'json'), '1st');
    assertSent(await send(ctx, demo.token, { Message: 'b'.repeat(200) }, 'xml'), '2nd (2 segments)');
    assertSent(await send(ctx, demo.token, { Message: 'three' }, 'xml-param'), '3rd');
    assert.equal(await counted(ctx, id, '2026-06-10'), 3, 'messages are counted, not segments');
    assert.equal(await balanceOf(ctx, id), balance - 4, 'credits are per segment as ever');

    const before = await snapshot(ctx, id);
    for (const wire of WIRES) assert422(await send(ctx, demo.token, {}, wire), dailyLimit(3), wire);
    const json = await send(ctx, demo.token);
    assert.equal(json.statusMessage, 'Data Validation Failed.');
    assert.equal(json.headers['content-type'], 'application/json; charset=UTF-8');
    assert.equal(json.body, '[{"field":"Message","message":"Daily limit of 3 messages reached."}]');
    const xml = await send(ctx, demo.token, {}, 'xml');
    assert.equal(xml.headers['content-type'], 'application/xml; charset=UTF-8');
    assert.equal(
      xml.body,
      `${XML_DECL}\n<response><item><field>Message</field><message>Daily limit of 3 messages reached.</message></item></response>\n`,
    );
    assert.deepEqual(await snapshot(ctx, id), before, 'a refused send queues, debits, records and counts nothing');

    // Also when the balance is short: the limit is the answer (no top-up lifts it today).
    await setBalance(ctx, id, 0);
    const short = await snapshot(ctx, id);
    assert422(await send(ctx, demo.token), dailyLimit(3));
    assert.deepEqual(await snapshot(ctx, id), short);
    await assertLedgerAddsUp(ctx.store);
  },
);

storeTest(
  'MaxPerDay 0 is no limit, and the day is still counted: lowered below the count, further sends are refused and nothing is undone; raised, they go on',
  async (t) => {
    const { ctx, demo } = await setup(t);
    const id = demo.account.id;
    const queued = async () =>
      Number(
        (
          await ctx.store.db
            .selectFrom('messages')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('account_id', '=', id)
            .where('status_id', '=', 1)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const queuedBefore = await queued();
    for (let i = 0; i < 12; i++) assertSent(await send(ctx, demo.token, { Message: `m${i}` }), `send ${i}`);
    assert.equal(await counted(ctx, id, '2026-06-10'), 12);

    await setMaxPerDay(ctx, id, 5);
    assert422(await send(ctx, demo.token), dailyLimit(5));
    assert.equal(await queued(), queuedBefore + 12, 'the 12 already queued stay Queued');
    assert.equal(await counted(ctx, id, '2026-06-10'), 12);

    await setMaxPerDay(ctx, id, 13);
    assertSent(await send(ctx, demo.token), 'raised to 13: one more');
    assert422(await send(ctx, demo.token), dailyLimit(13));
    await setMaxPerDay(ctx, id, 0);
    assertSent(await send(ctx, demo.token), 'back to no limit');
    assert.equal(await counted(ctx, id, '2026-06-10'), 14);

    // Numbers over 999 with thousands commas; the count is what is checked, not the log.
    await ctx.store.db.updateTable('account_day_counts').set({ messages: 1000 }).where('account_id', '=', id).execute();
    await setMaxPerDay(ctx, id, 1000);
    for (const wire of WIRES) assert422(await send(ctx, demo.token, {}, wire), dailyLimit(1000), wire);
    await assertLedgerAddsUp(ctx.store);
  },
);

storeTest(
  'sms/send-group is all or nothing: a group that would go past MaxPerDay queues, debits, records and counts nothing (plain and personalised); one that fits exactly passes',
  async (t) => {
    const { ctx, demo } = await setup(t);
    const id = demo.account.id;
    const group = await groupOfSeveral(ctx, demo);
    const k = group.recipients;
    assertSent(await send(ctx, demo.token), 'one first');
    await setMaxPerDay(ctx, id, k); // room for k - 1
    const before = await snapshot(ctx, id);
    for (const wire of WIRES) {
      assert422(await sendGroup(ctx, demo.token, group.id, {}, wire), dailyLimit(k), wire);
      assert422(await sendGroup(ctx, demo.token, group.id, { Message: 'Hi {FirstName}' }, wire), dailyLimit(k), wire);
    }
    assert.deepEqual(await snapshot(ctx, id), before, 'no batch, no message, no debit, no ledger entry, not counted');
    await assertLedgerAddsUp(ctx.store);

    await setMaxPerDay(ctx, id, 1 + k);
    const balance = await balanceOf(ctx, id);
    const plain = await sendGroup(ctx, demo.token, group.id);
    assertSent(plain, 'fits exactly');
    assert.equal((JSON.parse(plain.body) as { Recipients: number }).Recipients, k);
    assert.equal(await counted(ctx, id, '2026-06-10'), 1 + k, 'each recipient is one message');
    assert.equal(await balanceOf(ctx, id), balance - k);
    assert422(await send(ctx, demo.token), dailyLimit(1 + k));

    await setMaxPerDay(ctx, id, 1 + 2 * k);
    assertSent(await sendGroup(ctx, demo.token, group.id, { Message: 'Hi {FirstName}' }), 'personalised, fits exactly');
    assert.equal(await counted(ctx, id, '2026-06-10'), 1 + 2 * k);
    assert422(await sendGroup(ctx, demo.token, group.id), dailyLimit(1 + 2 * k));
    await assertLedgerAddsUp(ctx.store);
  },
);

storeTest("the day is the service's (MSGSVC_TIMEZONE Asia/Tokyo): its midnight starts a new count, UTC's does not", async (t) => {
  const zone = 'Asia/Tokyo';
  const start = Date.UTC(2026, 5, 10, 14, 59, 0); // 2026-06-10 23:59 in Tokyo
  const { ctx, demo, clock } = await setup(t, start, { MSGSVC_TIMEZONE: zone });
  const id = demo.account.id;
  await setMaxPerDay(ctx, id, 1);
  assertSent(await send(ctx, demo.token), '23:59');
  assert422(await send(ctx, demo.token), dailyLimit(1));

  clock.advance(2 * 60_000); // 00:01 in Tokyo, still 2026-06-10 in UTC
  assert.equal(dayOf(clock.nowMs(), zone), '2026-06-11');
  assert.equal(dayOf(clock.nowMs(), 'UTC'), '2026-06-10');
  assertSent(await send(ctx, demo.token), 'a new day in Tokyo');
  assert422(await send(ctx, demo.token), dailyLimit(1));
  assert.equal(await counted(ctx, id, '2026-06-10'), 1);
  assert.equal(await counted(ctx, id, '2026-06-11'), 1);

  clock.set(Date.UTC(2026, 5, 11, 0, 1, 0)); // a new UTC day, 09:01 of the same day in Tokyo
  assert422(await send(ctx, demo.token), dailyLimit(1));
  clock.set(Date.UTC(2026, 5, 11, 15, 0, 0)); // 2026-06-12 00:00:00 in Tokyo
  assertSent(await send(ctx, demo.token), 'the next Tokyo day, at its first second');
  assert.equal(await counted(ctx, id, '2026-06-12'), 1);
});

storeTest(
  'concurrent sends when only one fits: exactly one passes, on two apps over one database, with the day not yet counted or already counted; the same for send-groups',
  async (t) => {
    const clock: ManualClock = createManualClock(NOON);
    const ctx = await buildTestApp(t, {}, { clock });
    // A second app over the same database: two connections (SQLite) or two pools (PostgreSQL) race.
    const twin = await buildTestApp(t, {}, { dir: ctx.dir, clock });
    const demo = await ctx.seed();
    const id = demo.account.id;
    // Round 1: the day's first messages (its count row does not exist yet: the racing inserts meet
    // on the primary key); round 2: the row exists (the racing updates meet on it).
    for (const limit of [1, 2]) {
      await setMaxPerDay(ctx, id, limit);
      const messages = await countMessages(ctx, id);
      const balance = await balanceOf(ctx, id);
      const results = await Promise.all(
        Array.from({ length: 16 }, (_, i) =>
          call((i % 2 === 0 ? ctx : twin).app, {
            method: 'POST',
            path: SEND,
            token: demo.token,
            body: { Message: `race ${limit} ${i}`, MobilePhone: RECIPIENT },
          }),
        ),
      );
      assert.deepEqual(
        results.map((r) => r.statusCode).sort(),
        [201, ...Array<number>(15).fill(422)],
        results.map((r) => r.body).join('\n'),
      );
      for (const r of results.filter((r) => r.statusCode === 422)) assert422(r, dailyLimit(limit));
      assert.equal(await countMessages(ctx, id), messages + 1);
      assert.equal(await balanceOf(ctx, id), balance - 1);
      assert.equal(await counted(ctx, id, '2026-06-10'), limit);
    }

    const group = await groupOfSeveral(ctx, demo);
    await setMaxPerDay(ctx, id, 2 + group.recipients); // room for one group
    const messages = await countMessages(ctx, id);
    const batches = await ctx.store.db.selectFrom('batches').select('id').where('account_id', '=', id).execute();
    // Plain (one INSERT … SELECT) and personalised (merge fields) send-groups racing one another.
    const groups = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        call((i % 2 === 0 ? ctx : twin).app, {
          method: 'POST',
          path: GROUP,
          token: demo.token,
          body: { GroupId: group.id, Message: i % 3 === 0 ? 'Hi {FirstName}' : `all ${i}` },
        }),
      ),
    );
    assert.deepEqual(groups.map((r) => r.statusCode).sort(), [201, 422, 422, 422, 422, 422], groups.map((r) => r.body).join('\n'));
    for (const r of groups.filter((r) => r.statusCode === 422)) assert422(r, dailyLimit(2 + group.recipients));
    assert.equal((await ctx.store.db.selectFrom('batches').select('id').where('account_id', '=', id).execute()).length, batches.length + 1);
    assert.equal(await countMessages(ctx, id), messages + group.recipients);
    assert.equal(await counted(ctx, id, '2026-06-10'), 2 + group.recipients);
    await assertLedgerAddsUp(ctx.store);
  },
);

storeTest('sms/preview answers the daily limit as send would, and counts nothing', async (t) => {
  const { ctx, demo } = await setup(t);
  const id = demo.account.id;
  await setMaxPerDay(ctx, id, 1);
  const preview = (wire: Wire = 'json') =>
    call(ctx.app, { method: 'POST', path: PREVIEW, token: demo.token, wire, body: { Message: 'hello', MobilePhone: RECIPIENT } });
  assert.equal((await preview()).statusCode, 200);
  assert.equal(await counted(ctx, id, '2026-06-10'), 0, 'a preview counts nothing');
  assertSent(await send(ctx, demo.token), 'the one of the day');
  for (const wire of WIRES) assert422(await preview(wire), dailyLimit(1), wire);
  assert.equal(await counted(ctx, id, '2026-06-10'), 1);
});

storeTest("a sub-account's MaxPerDay is its own: its messages count against it, not against its parent's", async (t) => {
  const { ctx, demo: parent } = await setup(t);
  const sub = await ctx.seed('Sub-account');
  await ctx.store.db.updateTable('accounts').set({ parent_id: parent.account.id }).where('id', '=', sub.account.id).execute();
  await setMaxPerDay(ctx, parent.account.id, 1);
  assertSent(await send(ctx, parent.token), 'parent');
  assert422(await send(ctx, parent.token), dailyLimit(1));
  for (let i = 0; i < 3; i++) assertSent(await send(ctx, sub.token), `sub-account, no limit of its own (${i})`);
  await setMaxPerDay(ctx, sub.account.id, 3);
  assert422(await send(ctx, sub.token), dailyLimit(3));
  assert.equal(await counted(ctx, parent.account.id, '2026-06-10'), 1);
  assert.equal(await counted(ctx, sub.account.id, '2026-06-10'), 3);
});

storeTest('an Idempotency-Key replay of a send is not counted again', async (t) => {
  const { ctx, demo } = await setup(t);
  const id = demo.account.id;
  await setMaxPerDay(ctx, id, 1);
  const keyed = () =>
    ctx.app.inject({
      method: 'POST',
      url: `${SEND}?access_token=${demo.token}`,
      headers: { 'content-type': 'application/json', 'idempotency-key': 'daily-1' },
      payload: JSON.stringify({ Message: 'once', MobilePhone: RECIPIENT }),
    });
  const first = await keyed();
  assertSent(first, 'first');
  const again = await keyed();
  assert.equal(again.statusCode, 201);
  assert.equal(again.headers['idempotent-replayed'], 'true');
  assert.equal(await counted(ctx, id, '2026-06-10'), 1);
  assert422(await send(ctx, demo.token), dailyLimit(1));
});
