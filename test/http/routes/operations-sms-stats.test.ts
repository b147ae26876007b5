/**
 * sms/stats (API.md §10.9): the account's messages per hour or per day of the service's time
 * zone, every bucket present, counted by their status now, with the credits they spent less the
 * refunds; whole buckets from the one holding `from` to the one holding `to`; the default range
 * (the last 7 days) on a manual clock; calendar days of 23 and 25 hours and wall-clock hours on
 * Europe/London's DST days; the 422s; another account's messages never counted. JSON, XML,
 * `fields=`, HEAD, on every store.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { DemoAccount } from '../../../src/domain/demo.ts';
import { bucketBounds } from '../../../src/domain/message-stats.ts';
import { createManualClock } from '../../../src/lib/time.ts';
import { insertMessage } from '../../../src/store/repositories/message-log.ts';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import { assert422, assertBody, assertError, call, fieldError, fmtTime, WIRES, type Wire } from '../../helpers/operations.ts';
import { balanceOf, testDispatcher } from '../../helpers/sms.ts';
import { storeTest } from '../../helpers/stores.ts';

const STATS = '/v1/sms/stats';

interface Bucket {
  Time: string;
  Outbound: number;
  Inbound: number;
  Delivered: number;
  Undelivered: number;
  Failed: number;
  Rejected: number;
  Credits: number;
}

/** Epoch seconds of an ISO instant (`2026-10-25T00:30:00Z`). */
const at = (iso: string) => Date.parse(iso) / 1000;

/** An empty bucket starting at `time`, with `counts` over it. */
const bucket = (time: string, counts: Partial<Omit<Bucket, 'Time'>> = {}): Bucket => ({
  Time: time,
  Outbound: 0,
  Inbound: 0,
  Delivered: 0,
  Undelivered: 0,
  Failed: 0,
  Rejected: 0,
  Credits: 0,
  ...counts,
});

/** A message in the account's log, created at `createdAt` (epoch seconds), written through the repository. */
async function logMessage(
  ctx: TestApp,
  accountId: number,
  createdAt: number,
  m: { direction?: 1 | 2; statusId?: number; credits?: number } = {},
): Promise<number> {
  const inbound = m.direction === 2;
  const row = await insertMessage(
    ctx.store.db,
    accountId,
    {
      direction: m.direction ?? 1,
      number: '55155',
      mobilePhone: '15551234567',
      message: 'hello',
      typeId: 1,
      statusId: m.statusId ?? (inbound ? 7 : 1),
      segments: 1,
      credits: m.credits ?? (inbound ? 0 : 1),
      batchId: null,
      scheduledMessageId: null,
      optOutExempt: 0,
      dueAt: null,
    },
    createdAt,
  );
  return row.id;
}

async function stats(ctx: TestApp, demo: DemoAccount, query: string, wire: Wire = 'json'): Promise<Bucket[]> {
  const res = await call(ctx.app, { path: STATS, token: demo.token, query, wire });
  assert.equal(res.statusCode, 200, res.body);
  return JSON.parse(res.body) as Bucket[];
}

const q = (from: string, to: string, interval?: string) =>
  `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}${interval ? `&interval=${interval}` : ''}`;

storeTest('sms/stats: every bucket present, counts by status now, in JSON, XML, fields= and HEAD', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const other = await ctx.seed('Other account');
  const id = demo.account.id;
  await logMessage(ctx, id, at('2026-06-01T00:00:00Z'), { statusId: 3, credits: 2 }); // Delivered
  await logMessage(ctx, id, at('2026-06-01T23:59:59Z'), { statusId: 4, credits: 3 }); // Undelivered: kept
  await logMessage(ctx, id, at('2026-06-01T12:00:00Z'), { statusId: 5, credits: 4 }); // Failed: refunded
  await logMessage(ctx, id, at('2026-06-03T08:00:00Z'), { statusId: 6, credits: 5 }); // Rejected: refunded
  await logMessage(ctx, id, at('2026-06-03T09:00:00Z'), { direction: 2 }); // Received
  await logMessage(ctx, id, at('2026-06-03T10:00:00Z'), { statusId: 1, credits: 6 }); // Queued
  await logMessage(ctx, id, at('2026-06-03T11:00:00Z'), { statusId: 2, credits: 7 }); // Sent
  await logMessage(ctx, id, at('2026-05-31T23:59:59Z'), { credits: 100 }); // before the range
  await logMessage(ctx, id, at('2026-06-04T00:00:00Z'), { credits: 100 }); // after it
  // Another account's messages, in the same buckets: never counted.
  for (const s of [at('2026-06-01T10:00:00Z'), at('2026-06-02T10:00:00Z'), at('2026-06-03T10:00:00Z')]) {
    await logMessage(ctx, other.account.id, s, { statusId: 3, credits: 50 });
    await logMessage(ctx, other.account.id, s, { direction: 2 });
  }
  const expected = [
    bucket('2026-06-01 00:00:00', { Outbound: 3, Delivered: 1, Undelivered: 1, Failed: 1, Credits: 5 }),
    bucket('2026-06-02 00:00:00'),
    bucket('2026-06-03 00:00:00', { Outbound: 3, Inbound: 1, Rejected: 1, Credits: 13 }),
  ];
  const query = q('2026-06-01 00:00:00', '2026-06-03 23:59:59');
  for (const wire of WIRES) assertBody(await call(ctx.app, { path: STATS, token: demo.token, query, wire }), wire, 200, expected);
  // Not paginated: no pagination headers, no Link.
  const res = await call(ctx.app, { path: STATS, token: demo.token, query });
  assert.equal(res.headers['x-pagination-total-count'], undefined);
  assert.equal(res.headers.link, undefined);
  // The buckets are whole: `from` and `to` inside a day still count that whole day; `interval=day` is the default.
  assert.deepEqual(await stats(ctx, demo, `${q('2026-06-01 13:00:00', '2026-06-03 00:00:00')}&interval=day`), expected);
  assert.deepEqual(await stats(ctx, demo, q('2026-06-01 13:00:00', '2026-06-03 00:00:00')), expected);
  // `to` equal to `from`: the one bucket holding it.
  assert.deepEqual(await stats(ctx, demo, q('2026-06-02 05:00:00', '2026-06-02 05:00:00')), [bucket('2026-06-02 00:00:00')]);
  // By hour, an empty hour between two that are not.
  assert.deepEqual(await stats(ctx, demo, q('2026-06-03 08:59:59', '2026-06-03 10:00:00', 'hour')), [
    bucket('2026-06-03 08:00:00', { Outbound: 1, Rejected: 1 }),
    bucket('2026-06-03 09:00:00', { Inbound: 1 }),
    bucket('2026-06-03 10:00:00', { Outbound: 1, Credits: 6 }),
  ]);
  // The other account sees its own.
  const theirs = await call(ctx.app, { path: STATS, token: other.token, query });
  assert.deepEqual(JSON.parse(theirs.body), [
    bucket('2026-06-01 00:00:00', { Outbound: 1, Inbound: 1, Delivered: 1, Credits: 50 }),
    bucket('2026-06-02 00:00:00', { Outbound: 1, Inbound: 1, Delivered: 1, Credits: 50 }),
    bucket('2026-06-03 00:00:00', { Outbound: 1, Inbound: 1, Delivered: 1, Credits: 50 }),
  ]);
  // fields= keeps those fields of every bucket, in the record's order.
  const picked = expected.map((b) => ({ Time: b.Time, Credits: b.Credits }));
  for (const wire of WIRES) {
    assertBody(await call(ctx.app, { path: STATS, token: demo.token, query: `${query}&fields=Credits,Time`, wire }), wire, 200, picked);
  }
  // HEAD: the same headers, no body.
  const head = await call(ctx.app, { method: 'HEAD', path: STATS, token: demo.token, query });
  assert.equal(head.statusCode, 200);
  assert.equal(head.headers['content-type'], res.headers['content-type']);
  assert.equal(head.body, '');
  // Auth, rate limit and negotiation as every operation.
  for (const wire of WIRES) {
    assertError(
      await call(ctx.app, { path: STATS, token: 'not-a-token', query, wire }),
      401,
      'Your request was made with invalid credentials.',
      wire,
    );
  }
  const post = await call(ctx.app, { method: 'POST', path: STATS, token: demo.token, query, body: {} });
  assert.equal(post.statusCode, 405);
  assert.equal(post.headers.allow, 'GET, HEAD');
});

storeTest(
  'sms/stats: counts follow the status now, and credits are the spent less the refunds (the dispatcher on a manual clock)',
  async (t) => {
    const clock = createManualClock(Date.parse('2026-06-15T10:00:00Z'));
    const ctx = await buildTestApp(t, {}, { clock });
    const demo = await ctx.seed();
    const before = await balanceOf(ctx, demo.account.id);
    const send = async (body: Record<string, unknown>) => {
      const res = await call(ctx.app, { method: 'POST', path: '/v1/sms/send', token: demo.token, body: { Message: 'hello', ...body } });
      assert.equal(res.statusCode, 201, res.body);
    };
    await send({ MobilePhone: '+15551234567' }); // delivered by the sandbox
    await send({ MobilePhone: '+15005550001', Message: 'x'.repeat(161) }); // undelivered, 2 credits, not refunded
    await send({ MobilePhone: '+15005550002', Message: 'ж'.repeat(71) }); // refused: Failed, 2 credits (UCS-2) refunded
    await send({ MobilePhone: '+15005550003' }); // no receipt: stays Sent
    const query = q('2026-06-15 10:00:00', '2026-06-15 10:00:00', 'hour');
    const spent = before - (await balanceOf(ctx, demo.account.id));
    assert.equal(spent, 6);
    assert.deepEqual(await stats(ctx, demo, query), [bucket('2026-06-15 10:00:00', { Outbound: 4, Credits: 6 })]);
    const { dispatcher } = testDispatcher(ctx, { receiptMs: 2000, clock });
    await dispatcher.drain();
    clock.advance(2000);
    await dispatcher.drain();
    const refunded = before - (await balanceOf(ctx, demo.account.id));
    assert.equal(refunded, 4);
    // The buckets are those of creation: the messages stay in 10:00 whatever time they changed at.
    assert.deepEqual(await stats(ctx, demo, query), [
      bucket('2026-06-15 10:00:00', { Outbound: 4, Delivered: 1, Undelivered: 1, Failed: 1, Credits: refunded }),
    ]);
  },
);

storeTest('sms/stats: the default range is the last 7 days on the clock, by day or by hour', async (t) => {
  const clock = createManualClock(Date.parse('2026-06-15T10:30:00Z'));
  const ctx = await buildTestApp(t, {}, { clock });
  const demo = await ctx.seed();
  await logMessage(ctx, demo.account.id, at('2026-06-08T10:30:00Z')); // now − 7 days: the first bucket
  await logMessage(ctx, demo.account.id, at('2026-06-08T09:59:59Z')); // the day before, an hour before
  await logMessage(ctx, demo.account.id, at('2026-06-15T10:30:00Z')); // now: the last bucket
  const days = await stats(ctx, demo, '');
  assert.deepEqual(
    days.map((b) => [b.Time, b.Outbound]),
    [
      ['2026-06-08 00:00:00', 2],
      ['2026-06-09 00:00:00', 0],
      ['2026-06-10 00:00:00', 0],
      ['2026-06-11 00:00:00', 0],
      ['2026-06-12 00:00:00', 0],
      ['2026-06-13 00:00:00', 0],
      ['2026-06-14 00:00:00', 0],
      ['2026-06-15 00:00:00', 1],
    ],
  );
  const hours = await stats(ctx, demo, 'interval=hour');
  assert.equal(hours.length, 7 * 24 + 1);
  assert.deepEqual(hours[0], bucket('2026-06-08 10:00:00', { Outbound: 1, Credits: 1 }));
  assert.deepEqual(hours.at(-1), bucket('2026-06-15 10:00:00', { Outbound: 1, Credits: 1 }));
  for (const [i, b] of hours.entries())
    assert.equal(Date.parse(`${b.Time.replace(' ', 'T')}Z`), Date.parse('2026-06-08T10:00:00Z') + i * 3_600_000);
  // Only `to`: `from` is 7 days before it. Only `from`: `to` is now.
  assert.deepEqual(
    (await stats(ctx, demo, `to=${encodeURIComponent('2026-06-10 00:00:00')}`)).map((b) => b.Time),
    [
      '2026-06-03 00:00:00',
      '2026-06-04 00:00:00',
      '2026-06-05 00:00:00',
      '2026-06-06 00:00:00',
      '2026-06-07 00:00:00',
      '2026-06-08 00:00:00',
      '2026-06-09 00:00:00',
      '2026-06-10 00:00:00',
    ],
  );
  assert.deepEqual(
    (await stats(ctx, demo, `from=${encodeURIComponent('2026-06-14 23:00:00')}&interval=hour`)).map((b) => b.Time),
    ['2026-06-14 23:00:00', ...Array.from({ length: 11 }, (_, h) => `2026-06-15 ${String(h).padStart(2, '0')}:00:00`)],
  );
});

storeTest("sms/stats: the service's time zone, days of 23 and 25 hours and wall-clock hours on DST days (Europe/London)", async (t) => {
  const clock = createManualClock(Date.parse('2026-10-31T12:00:00Z'));
  const ctx = await buildTestApp(t, { MSGSVC_TIMEZONE: 'Europe/London' }, { clock });
  const demo = await ctx.seed();
  const id = demo.account.id;
  // Spring forward, Sunday 2026-03-29: 01:00 GMT becomes 02:00 BST; the day lasts 23 hours.
  await logMessage(ctx, id, at('2026-03-28T23:59:59Z')); // 2026-03-28 23:59:59 GMT
  await logMessage(ctx, id, at('2026-03-29T00:00:00Z')); // 2026-03-29 00:00:00 GMT
  await logMessage(ctx, id, at('2026-03-29T00:59:59Z')); // 00:59:59 GMT
  await logMessage(ctx, id, at('2026-03-29T01:00:00Z')); // 02:00:00 BST
  await logMessage(ctx, id, at('2026-03-29T22:59:59Z')); // 23:59:59 BST
  await logMessage(ctx, id, at('2026-03-29T23:00:00Z')); // 2026-03-30 00:00:00 BST
  assert.deepEqual(
    (await stats(ctx, demo, q('2026-03-28 12:00:00', '2026-03-30 12:00:00'))).map((b) => [b.Time, b.Outbound]),
    [
      ['2026-03-28 00:00:00', 1],
      ['2026-03-29 00:00:00', 4],
      ['2026-03-30 00:00:00', 1],
    ],
  );
  // By hour: no 01:00 bucket (that hour is not on the clock), 00:00 and 02:00 are one real hour each.
  assert.deepEqual(
    (await stats(ctx, demo, q('2026-03-29 00:00:00', '2026-03-29 03:59:59', 'hour'))).map((b) => [b.Time, b.Outbound]),
    [
      ['2026-03-29 00:00:00', 2],
      ['2026-03-29 02:00:00', 1],
      ['2026-03-29 03:00:00', 0],
    ],
  );
  // A `from` in the skipped hour is read as PHP reads it (moved forward by the gap): 02:30 BST.
  assert.deepEqual(
    (await stats(ctx, demo, q('2026-03-29 01:30:00', '2026-03-29 02:59:59', 'hour'))).map((b) => b.Time),
    ['2026-03-29 02:00:00'],
  );

  // Fall back, Sunday 2026-10-25: 02:00 BST becomes 01:00 GMT; the day lasts 25 hours.
  await logMessage(ctx, id, at('2026-10-24T22:59:59Z')); // 2026-10-24 23:59:59 BST
  await logMessage(ctx, id, at('2026-10-24T23:00:00Z')); // 2026-10-25 00:00:00 BST
  await logMessage(ctx, id, at('2026-10-25T00:30:00Z')); // 01:30 BST
  await logMessage(ctx, id, at('2026-10-25T01:30:00Z')); // 01:30 GMT, the repeated hour
  await logMessage(ctx, id, at('2026-10-25T02:00:00Z')); // 02:00 GMT
  await logMessage(ctx, id, at('2026-10-25T23:59:59Z')); // 23:59:59 GMT
  await logMessage(ctx, id, at('2026-10-26T00:00:00Z')); // 2026-10-26 00:00:00 GMT
  assert.deepEqual(
    (await stats(ctx, demo, q('2026-10-24 00:00:00', '2026-10-26 00:00:00'))).map((b) => [b.Time, b.Outbound]),
    [
      ['2026-10-24 00:00:00', 1],
      ['2026-10-25 00:00:00', 5],
      ['2026-10-26 00:00:00', 1],
    ],
  );
  // By hour: one 01:00 bucket of two real hours (01:00 BST to 02:00 GMT), labelled once.
  const fallBack = await stats(ctx, demo, q('2026-10-25 00:00:00', '2026-10-25 03:00:00', 'hour'));
  assert.deepEqual(
    fallBack.map((b) => [b.Time, b.Outbound]),
    [
      ['2026-10-25 00:00:00', 1],
      ['2026-10-25 01:00:00', 2],
      ['2026-10-25 02:00:00', 1],
      ['2026-10-25 03:00:00', 0],
    ],
  );
  // XML renders the same buckets.
  const xml = await call(ctx.app, {
    path: STATS,
    token: demo.token,
    query: q('2026-10-25 00:00:00', '2026-10-25 03:00:00', 'hour'),
    wire: 'xml',
  });
  assertBody(xml, 'xml', 200, fallBack);
  // The default week on the clock (2026-10-31 12:00 GMT) by hour holds the repeated hour once:
  // from 2026-10-24 13:00 BST, 7 × 24 + 1 real hours in 168 buckets.
  const week = await stats(ctx, demo, 'interval=hour');
  assert.equal(week.length, 168);
  assert.equal(week[0]!.Time, '2026-10-24 13:00:00');
  assert.equal(week.at(-1)!.Time, '2026-10-31 12:00:00');
  assert.equal(week.filter((b) => b.Time === '2026-10-25 01:00:00').length, 1);
  // Interval day across the fall back from the clock: 8 calendar days.
  assert.deepEqual(
    (await stats(ctx, demo, `to=${encodeURIComponent('2026-10-27 00:30:00')}`)).map((b) => [b.Time, b.Outbound]),
    [
      ['2026-10-20 00:00:00', 0],
      ['2026-10-21 00:00:00', 0],
      ['2026-10-22 00:00:00', 0],
      ['2026-10-23 00:00:00', 0],
      ['2026-10-24 00:00:00', 1],
      ['2026-10-25 00:00:00', 5],
      ['2026-10-26 00:00:00', 1],
      ['2026-10-27 00:00:00', 0],
    ],
  );
});

storeTest('sms/stats: a bad from, to or interval, and more than 366 buckets, give 422', async (t) => {
  const clock = createManualClock(Date.parse('2026-06-15T10:30:00Z'));
  const ctx = await buildTestApp(t, {}, { clock });
  const demo = await ctx.seed();
  const fromFormat = fieldError('from', 'The format of From is invalid.');
  const toFormat = fieldError('to', 'The format of To is invalid.');
  const toInvalid = fieldError('to', 'To is invalid.');
  const intervalInvalid = fieldError('interval', 'Interval is invalid.');
  const cases: [string, { field: string; message: string }[]][] = [
    ['from=yesterday', [fromFormat]],
    [`from=${encodeURIComponent('2026-02-30 00:00:00')}`, [fromFormat]],
    [`from=${encodeURIComponent('2026-06-01 24:00:00')}`, [fromFormat]],
    [`from=${encodeURIComponent('2026-06-01')}`, [fromFormat]],
    [`from[]=${encodeURIComponent('2026-06-01 00:00:00')}`, [fromFormat]],
    [`to=${encodeURIComponent('2026-06-01T00:00:00')}`, [toFormat]],
    ['interval=week', [intervalInvalid]],
    ['interval=Hour', [intervalInvalid]],
    ['interval[]=hour', [intervalInvalid]],
    [`from=x&to=y&interval=minute`, [fromFormat, toFormat, intervalInvalid]],
    // `to` before `from`; a `from` after now with no `to` (which is now).
    [q('2026-06-02 00:00:00', '2026-06-01 23:59:59'), [toInvalid]],
    [`from=${encodeURIComponent('2026-06-16 00:00:00')}`, [toInvalid]],
    // 367 buckets: by day from 2025-06-01 to 2026-06-02; by hour 366 hours and one more.
    [q('2025-06-01 00:00:00', '2026-06-02 00:00:00'), [toInvalid]],
    [q('2026-06-01 00:00:00', '2026-06-16 06:00:00', 'hour'), [toInvalid]],
    [q('1970-01-01 00:00:00', '9999-12-31 23:59:59', 'hour'), [toInvalid]],
  ];
  for (const [query, errors] of cases) {
    for (const wire of WIRES) assert422(await call(ctx.app, { path: STATS, token: demo.token, query, wire }), errors, wire);
  }
  // 366 buckets are fine, by day and by hour.
  assert.equal((await stats(ctx, demo, q('2025-06-02 00:00:00', '2026-06-02 23:59:59'))).length, 366);
  assert.equal((await stats(ctx, demo, q('2026-06-01 00:00:00', '2026-06-16 05:59:59', 'hour'))).length, 366);
  // Empty values are the defaults; `from` and `to` also read as sms/schedule's DateTime does.
  assert.equal((await stats(ctx, demo, 'from=&to=&interval=')).length, 8);
  assert.deepEqual(
    (await stats(ctx, demo, `${q('2026:06:01 10:00:00', '2026-06-01T12:30:00+01:00')}&interval=hour`)).map((b) => b.Time),
    ['2026-06-01 10:00:00', '2026-06-01 11:00:00'],
  );
});

/**
 * The buckets by their definition, minute by minute: a bucket starts at the first minute whose
 * wall-clock hour (or day) is later than every one seen before.
 */
function bucketsByMinute(timeZone: string, interval: 'hour' | 'day', from: number, to: number): string[] {
  const wall = new Intl.DateTimeFormat('sv-SE', { timeZone, hourCycle: 'h23', dateStyle: 'short', timeStyle: 'medium' });
  const key = (s: number) => wall.format(new Date(s * 1000)).slice(0, interval === 'day' ? 10 : 13);
  const starts: string[] = [];
  let last = '';
  // From a day before `from`, so that the bucket holding `from` is found at its start.
  for (let s = Math.floor(from / 60) * 60 - 86_400; s <= to; s += 60) {
    const k = key(s);
    if (k > last) {
      if (s <= from) starts.length = 0;
      starts.push(wall.format(new Date(s * 1000)));
      last = k;
    }
  }
  return starts;
}

test('sms/stats buckets: the walk over the zone matches the definition, minute by minute, where clocks change', () => {
  const cases: [string, string, string][] = [
    ['Europe/London', '2026-03-28T20:30:00Z', '2026-03-30T03:00:00Z'],
    ['Europe/London', '2026-10-24T20:30:00Z', '2026-10-26T03:00:00Z'],
    ['America/New_York', '2026-11-01T00:00:00Z', '2026-11-02T12:00:00Z'],
    // A DST change of 30 minutes.
    ['Australia/Lord_Howe', '2026-10-03T10:00:00Z', '2026-10-05T00:00:00Z'],
    ['Australia/Lord_Howe', '2026-04-04T10:00:00Z', '2026-04-06T00:00:00Z'],
    // An offset of 5:30; a change at midnight (the day starts at 01:00); a day skipped (2011-12-30).
    ['Asia/Kolkata', '2026-06-01T00:00:00Z', '2026-06-02T12:00:00Z'],
    ['America/Santiago', '2026-09-05T12:00:00Z', '2026-09-07T12:00:00Z'],
    ['Pacific/Apia', '2011-12-28T12:00:00Z', '2012-01-01T00:00:00Z'],
  ];
  for (const [zone, fromIso, toIso] of cases) {
    for (const interval of ['hour', 'day'] as const) {
      const [from, to] = [at(fromIso), at(toIso)];
      const bounds = bucketBounds(zone, interval, from, to)!;
      const labels = bounds.slice(0, -1).map((s) => fmtTime(s, zone));
      assert.deepEqual(labels, bucketsByMinute(zone, interval, from, to), `${zone} by ${interval}`);
      assert.ok(bounds[0]! <= from && from < bounds[1]! && bounds.at(-2)! <= to && to < bounds.at(-1)!, `${zone} by ${interval}`);
    }
  }
});
