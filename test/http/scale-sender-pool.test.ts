/**
 * Sender pools under concurrency (docs/API.md §17; src/domain/sender-pool.ts), on each store: two
 * apps over one database (two SQLite connections, or two PostgreSQL pools) and 16 clients sending
 * at once through both, to an account with SenderSelection `pool` and 4 Active numbers:
 * - MaxPerDay 10 each (room 40): of 60 sends to new recipients exactly 40 are queued and 20 are the
 *   exact 422 `Every number has reached its limit.`; each 422 answers when the 40 are already
 *   counted; no number queues more than 10 today, and `number_day_counts` is exactly the count of its
 *   messages; with room 1 left on one number, 16 concurrent sends queue exactly one;
 * - MaxRecipientsPerMonth 5 each (room 20 recipients): of 36 new recipients exactly 20 are queued;
 *   sends to the recipients a number already has this month, racing with new ones, all pass (from
 *   that number, the sticky one) while every new one is refused; `number_month_recipients` is exactly
 *   the distinct recipients of each number's messages; room for 1 more recipient queues exactly one;
 * - send-groups: two racing send-groups that fit alone but not together: exactly one is queued, the
 *   other refused with nothing queued, debited or counted (all or nothing); then six racing
 *   send-groups for the exact room left: exactly one.
 * Every refusal leaves the balance alone and the ledger adds up. Limits and SenderSelection are set
 * straight in the database (their operations have their own suite).
 */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { insertNumber } from '../../src/store/repositories/numbers.ts';
import { createManualClock, type ManualClock } from '../../src/lib/time.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { emptyAccount } from '../helpers/conventions.ts';
import { assertLedgerAddsUp } from '../helpers/ledger.ts';
import { assert422, call, fieldError } from '../helpers/operations.ts';
import { balanceOf, setBalance } from '../helpers/sms.ts';
import { storeTest } from '../helpers/stores.ts';

/** Wednesday 2026-06-10 12:00 UTC (the service's zone is UTC). */
const NOON = Date.UTC(2026, 5, 10, 12, 0, 0);
const DAY = '2026-06-10';
const MONTH = '2026-06';

const NUMBERS = ['12125550100', '14155550100', '16465550100', '447700900100'];
const EVERY_FULL = [fieldError('Number', 'Every number has reached its limit.')];
const CLIENTS = 16;
const CREDITS = 10_000;

interface Pool {
  /** Two apps over one database. */
  apps: [TestApp, TestApp];
  clock: ManualClock;
  id: number;
  token: string;
}

async function setup(t: { after(fn: () => unknown): void }): Promise<Pool> {
  const clock = createManualClock(NOON);
  const first = await buildTestApp(t, {}, { clock });
  const twin = await buildTestApp(t, {}, { dir: first.dir, clock });
  const { id, token } = await emptyAccount(first, 'Pool Ltd');
  await setBalance(first, id, CREDITS);
  for (const n of NUMBERS) await insertNumber(first.store.db, id, n, 0, null, clock.nowSeconds());
  await first.store.db
    .insertInto('account_settings')
    .values({
      account_id: id,
      quiet_start: null,
      quiet_end: null,
      time_zone: null,
      updated_at: clock.nowSeconds(),
      sender_selection: 'pool',
    })
    .execute();
  return { apps: [first, twin], clock, id, token };
}

function setLimits(p: Pool, numbers: readonly string[], limits: { max_per_day?: number; max_recipients_per_month?: number }) {
  return p.apps[0].store.db
    .updateTable('account_numbers')
    .set(limits)
    .where('account_id', '=', p.id)
    .where('number', 'in', numbers)
    .execute();
}

/** `count` distinct recipients (E.164) no earlier call made: spread over area codes and a country, some local to a number, some not. */
const fresh = (() => {
  const prefixes = ['1212555', '1415555', '1646555', '1312555', '44770090'];
  let next = 0;
  return (count: number): string[] =>
    Array.from({ length: count }, () => {
      const i = next++;
      return `+${prefixes[i % prefixes.length]!}${String(1000 + i).padStart(4, '0')}`;
    });
})();

interface Outcome {
  to: string;
  res: LightMyRequestResponse;
  /** For a 422: what the database held when it answered (see `race`). */
  seen?: number;
}

/**
 * Sends to every recipient through CLIENTS concurrent clients (each takes the next recipient when its
 * last answer arrives), alternately through both apps. When a 422 arrives, `probe` reads the database.
 */
async function race(p: Pool, recipients: readonly string[], probe?: () => Promise<number>): Promise<Outcome[]> {
  const out = new Array<Outcome>(recipients.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, client) => {
      while (next < recipients.length) {
        const i = next++;
        const to = recipients[i]!;
        const res = await call(p.apps[client % 2]!.app, {
          method: 'POST',
          path: '/v1/sms/send',
          token: p.token,
          body: { Message: `race ${i}`, MobilePhone: to },
        });
        out[i] = { to, res, ...(res.statusCode === 422 && probe ? { seen: await probe() } : {}) };
      }
    }),
  );
  return out;
}

/** The 201s and the 422s of a race; each 422 the exact EVERY_FULL, nothing else. */
function split(outcomes: readonly Outcome[]): { sent: { to: string; number: string; id: number }[]; refused: Outcome[] } {
  const sent = [];
  const refused = [];
  for (const o of outcomes) {
    if (o.res.statusCode === 201) {
      const [m] = o.res.json<[{ Id: number; Number: string }]>();
      sent.push({ to: o.to.slice(1), number: m.Number, id: m.Id });
    } else {
      assert422(o.res, EVERY_FULL);
      refused.push(o);
    }
  }
  return { sent, refused };
}

/** Per number: its messages queued (all today here). */
async function messagesPerNumber(p: Pool): Promise<Map<string, number>> {
  const rows = await p.apps[0].store.db
    .selectFrom('messages')
    .select((eb) => ['number', eb.fn.countAll<number>().as('n')])
    .where('account_id', '=', p.id)
    .groupBy('number')
    .execute();
  return new Map(rows.map((r) => [r.number, Number(r.n)]));
}

/** Per number: `number_day_counts` of today. */
async function dayCounts(p: Pool): Promise<Map<string, number>> {
  const rows = await p.apps[0].store.db
    .selectFrom('number_day_counts')
    .select(['number', 'day', 'messages'])
    .where('account_id', '=', p.id)
    .execute();
  for (const r of rows) assert.equal(r.day, DAY);
  return new Map(rows.map((r) => [r.number, Number(r.messages)]));
}

/** Per number: the distinct recipients of its messages, and its `number_month_recipients` of the month. */
async function monthRecipients(p: Pool): Promise<{ actual: Map<string, string[]>; counted: Map<string, string[]> }> {
  const db = p.apps[0].store.db;
  const group = (rows: { number: string; mobile_phone: string }[]) => {
    const out = new Map<string, string[]>();
    for (const r of rows) out.set(r.number, [...(out.get(r.number) ?? []), r.mobile_phone]);
    return out;
  };
  const actual = await db
    .selectFrom('messages')
    .select(['number', 'mobile_phone'])
    .distinct()
    .where('account_id', '=', p.id)
    .orderBy('number')
    .orderBy('mobile_phone')
    .execute();
  const counted = await db
    .selectFrom('number_month_recipients')
    .select(['number', 'mobile_phone', 'month'])
    .where('account_id', '=', p.id)
    .orderBy('number')
    .orderBy('mobile_phone')
    .execute();
  for (const r of counted) assert.equal(r.month, MONTH);
  return { actual: group(actual), counted: group(counted) };
}

async function messageCount(p: Pool): Promise<number> {
  const r = await p.apps[0].store.db
    .selectFrom('messages')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', p.id)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

async function countedRecipients(p: Pool): Promise<number> {
  const r = await p.apps[0].store.db
    .selectFrom('number_month_recipients')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', p.id)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

const sorted = (m: Map<string, unknown>) => [...m.entries()].sort(([a], [b]) => a.localeCompare(b));

storeTest(
  'MaxPerDay 10 on 4 numbers, 16 clients on two apps: of 60 new recipients exactly 40 queued, 20 refused once the room is gone; room 1: exactly one',
  { timeout: 60_000 },
  async (t) => {
    const p = await setup(t);
    await setLimits(p, NUMBERS, { max_per_day: 10 });

    const first = split(await race(p, fresh(60), () => messageCount(p)));
    assert.equal(first.sent.length, 40, 'exactly the room of the 4 numbers');
    assert.equal(first.refused.length, 20);
    // A refusal is decided with every message before it counted: each 422 answers when the 40 are queued.
    for (const r of first.refused) assert.equal(r.seen, 40, `${r.to} refused when ${r.seen} were queued`);
    const perNumber = await messagesPerNumber(p);
    assert.deepEqual(
      sorted(perNumber),
      NUMBERS.map((n) => [n, 10]),
      'no number past its MaxPerDay: 10 each',
    );
    assert.deepEqual(sorted(await dayCounts(p)), sorted(perNumber), 'number_day_counts is what was queued');
    // Each 201 names the number its message went from.
    const stored = await p.apps[0].store.db.selectFrom('messages').select(['id', 'number']).where('account_id', '=', p.id).execute();
    const numberOf = new Map(stored.map((m) => [Number(m.id), m.number]));
    for (const s of first.sent) assert.equal(numberOf.get(s.id), s.number);
    assert.equal(await balanceOf(p.apps[0], p.id), CREDITS - 40, 'the refused are not debited');

    // Room 1 left on one number: 16 racing sends queue exactly one, from it.
    await setLimits(p, [NUMBERS[1]!], { max_per_day: 11 });
    const second = split(await race(p, fresh(CLIENTS)));
    assert.deepEqual(
      second.sent.map((s) => s.number),
      [NUMBERS[1]],
    );
    assert.equal(second.refused.length, CLIENTS - 1);
    const after = await messagesPerNumber(p);
    assert.deepEqual(
      sorted(after),
      NUMBERS.map((n) => [n, n === NUMBERS[1] ? 11 : 10]),
    );
    assert.deepEqual(sorted(await dayCounts(p)), sorted(after));
    assert.equal(await balanceOf(p.apps[0], p.id), CREDITS - 41);
    await assertLedgerAddsUp(p.apps[0].store);
  },
);

storeTest(
  'MaxRecipientsPerMonth 5 on 4 numbers, 16 clients on two apps: exactly 20 new recipients queued; known recipients always pass, racing new ones; room 1: exactly one',
  { timeout: 60_000 },
  async (t) => {
    const p = await setup(t);
    await setLimits(p, NUMBERS, { max_recipients_per_month: 5 });

    const first = split(await race(p, fresh(36), () => countedRecipients(p)));
    assert.equal(first.sent.length, 20, 'exactly the room of the 4 numbers');
    assert.equal(first.refused.length, 16);
    for (const r of first.refused) assert.equal(r.seen, 20, `${r.to} refused when ${r.seen} recipients were counted`);
    let month = await monthRecipients(p);
    assert.deepEqual(
      NUMBERS.map((n) => month.actual.get(n)?.length),
      [5, 5, 5, 5],
      'no number past its MaxRecipientsPerMonth: 5 each',
    );
    assert.deepEqual(sorted(month.counted), sorted(month.actual), 'number_month_recipients is who was sent to');
    const numberOf = new Map(first.sent.map((s) => [s.to, s.number]));

    // Known recipients (each twice) racing 16 new ones: every known one passes, from its own number
    // (sticky, and known there this month); every new one is refused.
    const known = [...numberOf.keys()].map((d) => `+${d}`);
    const newcomers = fresh(CLIENTS);
    const mixed = [...known, ...known].flatMap((k, i) => (i < newcomers.length ? [k, newcomers[i]!] : [k]));
    const second = split(await race(p, mixed));
    assert.equal(second.sent.length, 40, second.refused.map((r) => `${r.to}: ${r.res.body}`).join('\n'));
    for (const s of second.sent) assert.equal(s.number, numberOf.get(s.to), `${s.to} goes from its number`);
    assert.deepEqual(second.refused.map((r) => r.to).sort(), [...newcomers].sort(), 'every new recipient refused');
    month = await monthRecipients(p);
    assert.deepEqual(
      NUMBERS.map((n) => month.actual.get(n)?.length),
      [5, 5, 5, 5],
    );
    assert.deepEqual(sorted(month.counted), sorted(month.actual));

    // Room for one more recipient on one number: of 16 racing new recipients exactly one passes,
    // while the known ones still all do.
    await setLimits(p, [NUMBERS[2]!], { max_recipients_per_month: 6 });
    const more = fresh(CLIENTS);
    const third = split(await race(p, [...more, ...known.slice(0, 8)]));
    assert.equal(third.sent.length, 9);
    const newlySent = third.sent.filter((s) => more.includes(`+${s.to}`));
    assert.deepEqual(
      newlySent.map((s) => s.number),
      [NUMBERS[2]],
    );
    month = await monthRecipients(p);
    assert.deepEqual(
      NUMBERS.map((n) => month.actual.get(n)?.length),
      [5, 5, 6, 5],
    );
    assert.deepEqual(sorted(month.counted), sorted(month.actual));
    assert.equal(await messageCount(p), 20 + 40 + 9);
    assert.equal(await balanceOf(p.apps[0], p.id), CREDITS - 69);
    await assertLedgerAddsUp(p.apps[0].store);
  },
);

/** A group of the account with these members (E.164), made through the API. */
async function groupOf(p: Pool, members: readonly string[]): Promise<number> {
  const app = p.apps[0].app;
  const g = await call(app, { method: 'POST', path: '/v1/groups/create', token: p.token, body: { fname: `Group ${members[0]}` } });
  assert.equal(g.statusCode, 201, g.body);
  const groupId = g.json<{ Id: number }>().Id;
  for (const m of members) {
    const c = await call(app, { method: 'POST', path: '/v1/contacts/create', token: p.token, body: { Number: m, GroupIds: [groupId] } });
    assert.equal(c.statusCode, 201, c.body);
  }
  return groupId;
}

async function batchCount(p: Pool): Promise<number> {
  const r = await p.apps[0].store.db
    .selectFrom('batches')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', p.id)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

storeTest(
  'send-groups racing on two apps for the room of a pool: exactly one is queued, all or nothing',
  { timeout: 60_000 },
  async (t) => {
    const p = await setup(t);
    await setLimits(p, NUMBERS, { max_per_day: 10 });
    const a = await groupOf(p, fresh(25));
    const b = await groupOf(p, fresh(25));
    const sendGroup = (i: number, groupId: number, message: string) =>
      call(p.apps[i % 2]!.app, {
        method: 'POST',
        path: '/v1/sms/send-group',
        token: p.token,
        body: { GroupId: groupId, Message: message },
      });

    // 25 + 25 recipients for a room of 40: each fits alone, not both. One plain, one personalised.
    const first = await Promise.all([sendGroup(0, a, 'to all'), sendGroup(1, b, 'Hi {FirstName}')]);
    assert.deepEqual(first.map((r) => r.statusCode).sort(), [201, 422], first.map((r) => r.body).join('\n'));
    assert422(
      first.find((r) => r.statusCode === 422)!,
      EVERY_FULL,
    );
    assert.equal(first.find((r) => r.statusCode === 201)!.json<{ Recipients: number }>().Recipients, 25);
    assert.equal(await batchCount(p), 1, 'the refused batch is not kept');
    assert.equal(await messageCount(p), 25, 'nothing of the refused one queued');
    let perNumber = await messagesPerNumber(p);
    assert.ok(
      [...perNumber.values()].every((n) => n <= 10),
      JSON.stringify(sorted(perNumber)),
    );
    assert.deepEqual(sorted(await dayCounts(p)), sorted(perNumber), 'the refused one counted nothing');
    assert.equal(await balanceOf(p.apps[0], p.id), CREDITS - 25, 'nor debited');

    // The room left (15) for six racing send-groups of 15: exactly one.
    const c = await groupOf(p, fresh(15));
    const second = await Promise.all(Array.from({ length: 6 }, (_, i) => sendGroup(i, c, i % 2 === 0 ? `all ${i}` : 'Hi {FirstName}')));
    assert.deepEqual(second.map((r) => r.statusCode).sort(), [201, 422, 422, 422, 422, 422], second.map((r) => r.body).join('\n'));
    for (const r of second.filter((r) => r.statusCode === 422)) assert422(r, EVERY_FULL);
    assert.equal(await batchCount(p), 2);
    perNumber = await messagesPerNumber(p);
    assert.deepEqual(
      sorted(perNumber),
      NUMBERS.map((n) => [n, 10]),
      'every number exactly full',
    );
    assert.deepEqual(sorted(await dayCounts(p)), sorted(perNumber));
    assert.equal(await balanceOf(p.apps[0], p.id), CREDITS - 40);
    await assertLedgerAddsUp(p.apps[0].store);
  },
);
