/**
 * One number of the account and its limits (API.md §17), on each store: `numbers/view?number=` and
 * `numbers/update?number=` read the number in any common format (a short code as digits), 404
 * `Object not found: {number as sent}` for a number the account does not hold (another account's
 * included, and one that is no number at all), 400 without `number`; the record is the Number
 * record followed by the three limits, in that order, in JSON and XML, while `numbers/index` keeps
 * the Number record's four fields; update changes only the fields sent, every 422 in order in JSON
 * and XML (nothing changes), PUT, PATCH and form bodies, its audit entry names the number; a limit
 * set fills its counter from the message log (today's messages, this month's distinct recipients,
 * in the service's time zone, of this account and number only), taken off it deletes them; and
 * `numbers/usage`: per number in `numbers/index` order, the log for a number without the limit, the
 * counter for one with it, paginated, JSON and XML.
 */
import assert from 'node:assert/strict';
import { createManualClock } from '../../../src/lib/time.ts';
import { insertMessage } from '../../../src/store/repositories/message-log.ts';
import { insertNumber } from '../../../src/store/repositories/numbers.ts';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import { assert422, assertBody, assertError, call, fieldError, WIRES, type Wire } from '../../helpers/operations.ts';
import { storeTest } from '../../helpers/stores.ts';

const VIEW = '/v1/numbers/view';
const UPDATE = '/v1/numbers/update';
const USAGE = '/v1/numbers/usage';

/** Wednesday 2026-06-10 12:00 UTC: 08:00 in New York (EDT, UTC−4). */
const NOON = Date.UTC(2026, 5, 10, 12, 0, 0);
const at = (iso: string) => Math.floor(Date.parse(iso) / 1000);

const LONG = '15550100001'; // the demo's Active long number
const SHORT = '55155'; // the demo's Active short code

/** The Number record with its limits, as API.md §9.2 and §17 define it, built by hand. */
function limitsRecord(
  number: string,
  statusId: number,
  description: string,
  blocked: string | null,
  limits: [number, number, number] = [0, 0, 0],
) {
  return {
    Number: number,
    Status_Id: statusId,
    Status_Description: description,
    Blocked_Date: blocked,
    MaxPerSecond: limits[0],
    MaxPerDay: limits[1],
    MaxRecipientsPerMonth: limits[2],
  };
}

function view(ctx: TestApp, token: string, number: string, wire: Wire = 'json') {
  return call(ctx.app, { path: VIEW, token, query: `number=${encodeURIComponent(number)}`, wire });
}

function update(ctx: TestApp, token: string, number: string, body: unknown, wire: Wire = 'json', method: 'PUT' | 'PATCH' = 'PUT') {
  return call(ctx.app, { method, path: UPDATE, token, query: `number=${encodeURIComponent(number)}`, body, wire });
}

async function limitsOf(ctx: TestApp, accountId: number, number: string) {
  return ctx.store.db
    .selectFrom('account_numbers')
    .select(['max_per_second', 'max_per_day', 'max_recipients_per_month'])
    .where('account_id', '=', accountId)
    .where('number', '=', number)
    .executeTakeFirstOrThrow();
}

async function dayCounts(ctx: TestApp, accountId: number) {
  const rows = await ctx.store.db
    .selectFrom('number_day_counts')
    .select(['number', 'day', 'messages'])
    .where('account_id', '=', accountId)
    .orderBy('number')
    .orderBy('day')
    .execute();
  return rows.map((r) => [r.number, r.day, Number(r.messages)]);
}

async function monthRecipients(ctx: TestApp, accountId: number) {
  const rows = await ctx.store.db
    .selectFrom('number_month_recipients')
    .select(['number', 'month', 'mobile_phone'])
    .where('account_id', '=', accountId)
    .orderBy('number')
    .orderBy('month')
    .orderBy('mobile_phone')
    .execute();
  return rows.map((r) => [r.number, r.month, r.mobile_phone]);
}

/** A message written straight to the log at `createdAt` (epoch seconds): outbound (1) or inbound (2). */
async function logMessage(ctx: TestApp, accountId: number, direction: 1 | 2, number: string, phone: string, createdAt: number) {
  await insertMessage(
    ctx.store.db,
    accountId,
    {
      direction,
      number,
      mobilePhone: phone,
      message: direction === 2 ? 'in' : 'out',
      typeId: 1,
      statusId: direction === 2 ? 7 : 3,
      segments: 1,
      credits: direction === 2 ? 0 : 1,
      batchId: null,
      scheduledMessageId: null,
      optOutExempt: 0,
      dueAt: null,
    },
    createdAt,
  );
}

storeTest('numbers/view: any number format, a short code as digits; the record and its field order in JSON and XML; HEAD', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const active = limitsRecord(LONG, 0, 'Active', null);
  for (const written of [LONG, `+${LONG}`, '+1 (555) 010-0001', '(555) 010-0001', '1-555-010-0001', ' 15550100001 ']) {
    assertBody(await view(ctx, demo.token, written), 'json', 200, active);
  }
  for (const wire of WIRES) assertBody(await view(ctx, demo.token, SHORT, wire), wire, 200, limitsRecord(SHORT, 0, 'Active', null));
  // Exactly these fields in this order, in both formats.
  const json = await view(ctx, demo.token, LONG);
  assert.equal(
    json.body,
    '{"Number":"15550100001","Status_Id":0,"Status_Description":"Active","Blocked_Date":null,"MaxPerSecond":0,"MaxPerDay":0,"MaxRecipientsPerMonth":0}',
  );
  const xml = await view(ctx, demo.token, LONG, 'xml');
  assert.equal(
    xml.body,
    '<?xml version="1.0" encoding="UTF-8"?>\n<response><Number>15550100001</Number><Status_Id>0</Status_Id><Status_Description>Active</Status_Description><Blocked_Date></Blocked_Date><MaxPerSecond>0</MaxPerSecond><MaxPerDay>0</MaxPerDay><MaxRecipientsPerMonth>0</MaxRecipientsPerMonth></response>\n',
  );
  // Every other status, as numbers/index shows it, plus the limits.
  const index = JSON.parse((await call(ctx.app, { path: '/v1/numbers/index', token: demo.token })).body) as Record<string, unknown>[];
  assert.equal(index.length, 5);
  for (const n of index) {
    assert.deepEqual(Object.keys(n), ['Number', 'Status_Id', 'Status_Description', 'Blocked_Date'], 'numbers/index keeps the four fields');
    assertBody(await view(ctx, demo.token, String(n.Number)), 'json', 200, {
      ...n,
      MaxPerSecond: 0,
      MaxPerDay: 0,
      MaxRecipientsPerMonth: 0,
    });
  }
  const blocked = index.find((n) => n.Status_Id === 302)!;
  assert.notEqual(blocked.Blocked_Date, null);
  // fields= picks among the seven.
  const picked = await call(ctx.app, { path: VIEW, token: demo.token, query: `number=${LONG}&fields=MaxPerDay,Number` });
  assert.equal(picked.body, '{"Number":"15550100001","MaxPerDay":0}');
  const head = await call(ctx.app, { method: 'HEAD', path: VIEW, token: demo.token, query: `number=${LONG}` });
  assert.equal(head.statusCode, 200);
  assert.equal(head.headers['content-length'], String(Buffer.byteLength(json.body)));
});

storeTest('numbers/view and update: 404 for a number the account does not hold (another account’s too), 400 without number', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const other = await ctx.seed('Other account');
  // A number only the other account holds, and one nobody holds.
  await insertNumber(ctx.store.db, other.account.id, '15550109999', 0, null, Math.floor(Date.now() / 1000));
  const before = await limitsOf(ctx, other.account.id, '15550109999');
  for (const wire of WIRES) {
    for (const written of ['+1 555 010 9999', '15550108888', 'abc', '', '12']) {
      assertError(await view(ctx, demo.token, written, wire), 404, `Object not found: ${written}`, wire);
      // The body is read (a valid one), then the number is looked up: 404 before any 422.
      assertError(await update(ctx, demo.token, written, { MaxPerDay: 5 }, wire), 404, `Object not found: ${written}`, wire);
      assertError(await update(ctx, demo.token, written, { MaxPerDay: 'x' }, wire), 404, `Object not found: ${written}`, wire);
    }
    assertError(await call(ctx.app, { path: VIEW, token: demo.token, wire }), 400, 'Missing required parameters: number', wire);
    assertError(
      await call(ctx.app, { method: 'PUT', path: UPDATE, token: demo.token, body: { MaxPerDay: 5 }, wire }),
      400,
      'Missing required parameters: number',
      wire,
    );
  }
  assertError(
    await call(ctx.app, { path: VIEW, token: demo.token, query: `number[]=${LONG}` }),
    400,
    'Invalid data received for parameter "number".',
  );
  // Bad JSON is a 400 before the number is looked up.
  const badJson = await call(ctx.app, { method: 'PUT', path: UPDATE, token: demo.token, query: 'number=15550108888', rawBody: '{' });
  assertError(badJson, 400, 'Invalid JSON data in request body: Syntax error');
  assert.deepEqual(await limitsOf(ctx, other.account.id, '15550109999'), before, "the other account's number is untouched");
  // The other account sees its own.
  assertBody(await view(ctx, other.token, '15550109999'), 'json', 200, limitsRecord('15550109999', 0, 'Active', null));
  // Only PUT and PATCH update; only GET and HEAD view.
  const post = await call(ctx.app, { method: 'POST', path: UPDATE, token: demo.token, query: `number=${LONG}`, body: {} });
  assertError(post, 405, 'Method Not Allowed. This URL can only handle the following request methods: PUT, PATCH.');
  assert.equal(post.headers.allow, 'PUT, PATCH');
  const put = await call(ctx.app, { method: 'PUT', path: VIEW, token: demo.token, query: `number=${LONG}`, body: {} });
  assert.equal(put.statusCode, 405);
  assert.equal(put.headers.allow, 'GET, HEAD');
});

storeTest('numbers/update: only the fields sent change; PUT, PATCH, a form body, XML; the audit entry names the number', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const other = await ctx.seed('Other account');
  let res = await update(ctx, demo.token, '+1 (555) 010-0001', { MaxPerSecond: 5, MaxPerDay: '250', MaxRecipientsPerMonth: 40 });
  assertBody(res, 'json', 200, limitsRecord(LONG, 0, 'Active', null, [5, 250, 40]));
  assert.deepEqual(await limitsOf(ctx, demo.account.id, LONG), { max_per_second: 5, max_per_day: 250, max_recipients_per_month: 40 });
  res = await update(ctx, demo.token, LONG, { MaxPerDay: 300 }, 'xml', 'PATCH');
  assertBody(res, 'xml', 200, limitsRecord(LONG, 0, 'Active', null, [5, 300, 40]));
  res = await update(ctx, demo.token, LONG, { MaxRecipientsPerMonth: '+0', Foo: 'ignored', MaxPerSecond: '' }, 'xml-param');
  assertBody(res, 'xml-param', 200, limitsRecord(LONG, 0, 'Active', null, [5, 300, 0]));
  const form = await call(ctx.app, {
    method: 'PUT',
    path: UPDATE,
    token: demo.token,
    query: `number=${SHORT}`,
    rawBody: 'MaxPerSecond=1&MaxPerDay=100000',
    contentType: 'application/x-www-form-urlencoded',
  });
  assertBody(form, 'json', 200, limitsRecord(SHORT, 0, 'Active', null, [1, 100000, 0]));
  // An empty body changes nothing; the bounds themselves are accepted.
  assertBody(await update(ctx, demo.token, SHORT, {}), 'json', 200, limitsRecord(SHORT, 0, 'Active', null, [1, 100000, 0]));
  const max = [100_000, 2_147_483_647, 2_147_483_647] as [number, number, number];
  res = await update(ctx, demo.token, '15550100003', { MaxPerSecond: max[0], MaxPerDay: max[1], MaxRecipientsPerMonth: max[2] });
  assert.equal(res.statusCode, 200, res.body);
  const blocked = JSON.parse(res.body) as { Status_Id: number; Blocked_Date: string | null };
  assert.equal(blocked.Status_Id, 301);
  assert.notEqual(blocked.Blocked_Date, null);
  assertBody(await view(ctx, demo.token, '15550100003'), 'json', 200, JSON.parse(res.body));
  // The other account's same numbers keep their limits; its numbers/index is the same as before.
  assert.deepEqual(await limitsOf(ctx, other.account.id, LONG), { max_per_second: 0, max_per_day: 0, max_recipients_per_month: 0 });
  const index = JSON.parse((await call(ctx.app, { path: '/v1/numbers/index', token: demo.token })).body) as Record<string, unknown>[];
  assert.ok(index.every((n) => Object.keys(n).join() === 'Number,Status_Id,Status_Description,Blocked_Date'));
  // The audit log: numbers.update (and .patch), ObjectId the number as sent.
  const entries = await ctx.store.db
    .selectFrom('audit_log')
    .select(['operation', 'object_id', 'status'])
    .where('account_id', '=', demo.account.id)
    .where('operation', 'like', 'numbers.%')
    .orderBy('id')
    .execute();
  assert.deepEqual(
    entries.map((e) => [e.operation, e.object_id, Number(e.status)]),
    [
      ['numbers.update', '+1 (555) 010-0001', 200],
      ['numbers.update.patch', LONG, 200],
      ['numbers.update', LONG, 200],
      ['numbers.update', SHORT, 200],
      ['numbers.update', SHORT, 200],
      ['numbers.update', '15550100003', 200],
    ],
  );
});

storeTest('numbers/update: every 422 with its message, in the order of the record, JSON and XML; nothing changes', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  await update(ctx, demo.token, LONG, { MaxPerSecond: 2, MaxPerDay: 20, MaxRecipientsPerMonth: 10 });
  const cases: [Record<string, unknown>, { field: string; message: string }[]][] = [
    [{ MaxPerDay: 'abc' }, [fieldError('MaxPerDay', 'Max Per Day must be an integer.')]],
    [{ MaxPerDay: 1.5 }, [fieldError('MaxPerDay', 'Max Per Day must be an integer.')]],
    [{ MaxPerDay: true }, [fieldError('MaxPerDay', 'Max Per Day must be an integer.')]],
    [{ MaxPerDay: [5] }, [fieldError('MaxPerDay', 'Max Per Day must be an integer.')]],
    [{ MaxPerDay: -1 }, [fieldError('MaxPerDay', 'Max Per Day must be no less than 0.')]],
    [{ MaxPerDay: 2_147_483_648 }, [fieldError('MaxPerDay', 'Max Per Day must be no greater than 2,147,483,647.')]],
    [{ MaxPerSecond: 100_001 }, [fieldError('MaxPerSecond', 'Max Per Second must be no greater than 100,000.')]],
    [{ MaxPerSecond: '-3' }, [fieldError('MaxPerSecond', 'Max Per Second must be no less than 0.')]],
    [
      { MaxRecipientsPerMonth: 2_147_483_648 },
      [fieldError('MaxRecipientsPerMonth', 'Max Recipients Per Month must be no greater than 2,147,483,647.')],
    ],
    [{ MaxRecipientsPerMonth: 'x' }, [fieldError('MaxRecipientsPerMonth', 'Max Recipients Per Month must be an integer.')]],
    // All three, listed in the record's order whatever the body's; a valid field with them changes nothing.
    [
      { MaxRecipientsPerMonth: -1, MaxPerDay: 'x', MaxPerSecond: 1e20 },
      [
        fieldError('MaxPerSecond', 'Max Per Second must be an integer.'),
        fieldError('MaxPerDay', 'Max Per Day must be an integer.'),
        fieldError('MaxRecipientsPerMonth', 'Max Recipients Per Month must be no less than 0.'),
      ],
    ],
    [{ MaxPerSecond: 7, MaxPerDay: -5 }, [fieldError('MaxPerDay', 'Max Per Day must be no less than 0.')]],
  ];
  for (const wire of WIRES) {
    for (const [body, errors] of cases) {
      assert422(await update(ctx, demo.token, LONG, body, wire), errors, wire);
      assert422(await update(ctx, demo.token, LONG, body, wire, 'PATCH'), errors, wire);
    }
  }
  assert.deepEqual(await limitsOf(ctx, demo.account.id, LONG), { max_per_second: 2, max_per_day: 20, max_recipients_per_month: 10 });
});

storeTest(
  'numbers/update fills a limit’s counter from the log (today, this month, the service zone; this account and number only) and a limit of 0 deletes it',
  async (t) => {
    const clock = createManualClock(NOON);
    const ctx = await buildTestApp(t, { MSGSVC_TIMEZONE: 'America/New_York' }, { clock });
    const demo = await ctx.seed();
    const other = await ctx.seed('Other account'); // holds the same numbers
    const a = demo.account.id;
    // Today in New York is 2026-06-10 from 04:00 UTC; June from 2026-06-01 04:00 UTC.
    await logMessage(ctx, a, 1, LONG, '15551110001', at('2026-06-10T11:00:00Z'));
    await logMessage(ctx, a, 1, LONG, '15551110002', at('2026-06-10T10:00:00Z'));
    await logMessage(ctx, a, 1, LONG, '15551110001', at('2026-06-10T04:00:00Z')); // the day's first second
    await logMessage(ctx, a, 1, LONG, '15551110003', at('2026-06-10T03:59:59Z')); // yesterday there, this month
    await logMessage(ctx, a, 1, LONG, '15551110004', at('2026-06-01T04:00:00Z')); // the month's first second
    await logMessage(ctx, a, 1, LONG, '15551110005', at('2026-06-01T03:59:59Z')); // May there
    await logMessage(ctx, a, 2, LONG, '15551110006', at('2026-06-10T11:30:00Z')); // inbound: not sent from it
    await logMessage(ctx, a, 1, SHORT, '15551110007', at('2026-06-10T11:30:00Z')); // another number
    await logMessage(ctx, other.account.id, 1, LONG, '15551110008', at('2026-06-10T11:30:00Z')); // another account
    // And one queued through the API now, from that number.
    const sent = await call(ctx.app, {
      method: 'POST',
      path: '/v1/sms/send',
      token: demo.token,
      body: { MobilePhone: '+15551110009', Message: 'hello', Number: LONG },
    });
    assert.equal(sent.statusCode, 201, sent.body);

    // Before any limit: no counters; numbers/usage reads the log.
    assert.deepEqual(await dayCounts(ctx, a), []);
    const usage = await call(ctx.app, { path: USAGE, token: demo.token, query: 'fields=Number,MessagesToday,RecipientsThisMonth' });
    assert.deepEqual((JSON.parse(usage.body) as unknown[]).slice(0, 2), [
      { Number: SHORT, MessagesToday: 1, RecipientsThisMonth: 1 },
      { Number: LONG, MessagesToday: 4, RecipientsThisMonth: 5 },
    ]);

    // MaxPerDay set: today's count is filled; no month rows yet.
    assertBody(
      await update(ctx, demo.token, '(555) 010-0001', { MaxPerDay: 10 }),
      'json',
      200,
      limitsRecord(LONG, 0, 'Active', null, [0, 10, 0]),
    );
    assert.deepEqual(await dayCounts(ctx, a), [[LONG, '2026-06-10', 4]]);
    assert.deepEqual(await monthRecipients(ctx, a), []);
    // MaxRecipientsPerMonth set: this month's distinct recipients.
    await update(ctx, demo.token, LONG, { MaxRecipientsPerMonth: 3 });
    const june = ['15551110001', '15551110002', '15551110003', '15551110004', '15551110009'].map((p) => [LONG, '2026-06', p]);
    assert.deepEqual(await monthRecipients(ctx, a), june);
    assert.deepEqual(await dayCounts(ctx, other.account.id), [], "the other account's number keeps no counter");
    assert.deepEqual(await monthRecipients(ctx, other.account.id), []);

    // A limit changed between two values keeps its counter as it is (the queueing keeps it now).
    await ctx.store.db.updateTable('number_day_counts').set({ messages: 7 }).where('account_id', '=', a).execute();
    await update(ctx, demo.token, LONG, { MaxPerDay: 20, MaxRecipientsPerMonth: 30 });
    assert.deepEqual(await dayCounts(ctx, a), [[LONG, '2026-06-10', 7]]);
    assert.deepEqual(await monthRecipients(ctx, a), june);

    // Rows of other days and months, and the other account's, to see what a limit taken off deletes.
    await ctx.store.db.insertInto('number_day_counts').values({ account_id: a, number: LONG, day: '2026-06-09', messages: 3 }).execute();
    await ctx.store.db.insertInto('number_day_counts').values({ account_id: a, number: SHORT, day: '2026-06-10', messages: 1 }).execute();
    await ctx.store.db
      .insertInto('number_day_counts')
      .values({ account_id: other.account.id, number: LONG, day: '2026-06-10', messages: 2 })
      .execute();
    await ctx.store.db
      .insertInto('number_month_recipients')
      .values({ account_id: a, number: LONG, month: '2026-05', mobile_phone: '15551110005' })
      .execute();
    await ctx.store.db
      .insertInto('number_month_recipients')
      .values({ account_id: other.account.id, number: LONG, month: '2026-06', mobile_phone: '15551110008' })
      .execute();
    // MaxPerDay back to 0: that number's day counts go, every day; its month rows stay.
    await update(ctx, demo.token, LONG, { MaxPerDay: 0 });
    assert.deepEqual(await dayCounts(ctx, a), [[SHORT, '2026-06-10', 1]]);
    assert.equal((await monthRecipients(ctx, a)).length, 6);
    // MaxRecipientsPerMonth back to 0: its recipients go, every month.
    await update(ctx, demo.token, LONG, { MaxRecipientsPerMonth: '0' });
    assert.deepEqual(await monthRecipients(ctx, a), []);
    assert.deepEqual(await dayCounts(ctx, other.account.id), [[LONG, '2026-06-10', 2]]);
    assert.deepEqual(await monthRecipients(ctx, other.account.id), [[LONG, '2026-06', '15551110008']]);

    // The next day (in New York), a limit set counts that day only: the API's message was yesterday.
    clock.set(Date.UTC(2026, 5, 11, 5, 0, 0));
    await logMessage(ctx, a, 1, LONG, '15551110010', at('2026-06-11T04:30:00Z'));
    await update(ctx, demo.token, LONG, { MaxPerDay: 1, MaxRecipientsPerMonth: 1 });
    assert.deepEqual(await dayCounts(ctx, a), [
      [LONG, '2026-06-11', 1],
      [SHORT, '2026-06-10', 1],
    ]);
    assert.equal((await monthRecipients(ctx, a)).length, 6, 'June holds the five recipients and the new one');
  },
);

storeTest(
  'numbers/usage: each number in numbers/index order, from the log without a limit, from its counter with one; paged; XML',
  async (t) => {
    const clock = createManualClock(NOON);
    const ctx = await buildTestApp(t, {}, { clock });
    const demo = await ctx.seed();
    const other = await ctx.seed('Other account');
    const a = demo.account.id;
    await logMessage(ctx, a, 1, LONG, '15551110001', at('2026-06-10T01:00:00Z'));
    await logMessage(ctx, a, 1, LONG, '15551110001', at('2026-06-10T02:00:00Z'));
    await logMessage(ctx, a, 1, LONG, '15551110002', at('2026-06-09T23:59:59Z')); // yesterday (UTC), this month
    await logMessage(ctx, a, 1, LONG, '15551110003', at('2026-05-31T23:59:59Z')); // last month
    await logMessage(ctx, a, 2, LONG, '15551110004', at('2026-06-10T01:00:00Z')); // inbound
    await logMessage(ctx, a, 1, SHORT, '15551110005', at('2026-06-10T03:00:00Z'));
    await logMessage(ctx, other.account.id, 1, LONG, '15551110006', at('2026-06-10T03:00:00Z'));
    const row = (number: string, limits: [number, number, number], today: number, month: number) => ({
      Number: number,
      MaxPerSecond: limits[0],
      MaxPerDay: limits[1],
      MaxRecipientsPerMonth: limits[2],
      MessagesToday: today,
      RecipientsThisMonth: month,
    });
    const zero: [number, number, number] = [0, 0, 0];
    const expected = [
      row(SHORT, zero, 1, 1),
      row(LONG, zero, 2, 2),
      row('15550100002', zero, 0, 0),
      row('15550100003', zero, 0, 0),
      row('15550100004', zero, 0, 0),
    ];
    for (const wire of WIRES) {
      const res = await call(ctx.app, { path: USAGE, token: demo.token, wire });
      assertBody(res, wire, 200, expected);
      assert.equal(res.headers['x-pagination-total-count'], '5');
    }
    const json = await call(ctx.app, { path: USAGE, token: demo.token });
    assert.ok(
      json.body.startsWith(
        '[{"Number":"55155","MaxPerSecond":0,"MaxPerDay":0,"MaxRecipientsPerMonth":0,"MessagesToday":1,"RecipientsThisMonth":1},',
      ),
    );
    // The other account's use of the same numbers is its own.
    const theirs = JSON.parse((await call(ctx.app, { path: USAGE, token: other.token, query: 'per-page=2' })).body) as unknown[];
    assert.deepEqual(theirs, [row(SHORT, zero, 0, 0), row(LONG, zero, 1, 1)]);

    // With the limits the counters answer: changed behind the API's back, usage follows them.
    await update(ctx, demo.token, LONG, { MaxPerSecond: 3, MaxPerDay: 100, MaxRecipientsPerMonth: 50 });
    expected[1] = row(LONG, [3, 100, 50], 2, 2);
    assertBody(await call(ctx.app, { path: USAGE, token: demo.token }), 'json', 200, expected);
    await ctx.store.db.updateTable('number_day_counts').set({ messages: 40 }).where('account_id', '=', a).execute();
    await ctx.store.db
      .insertInto('number_month_recipients')
      .values({ account_id: a, number: LONG, month: '2026-06', mobile_phone: '15559990000' })
      .execute();
    // Counter rows of another day and month are not today's or this month's.
    await ctx.store.db.insertInto('number_day_counts').values({ account_id: a, number: LONG, day: '2026-06-09', messages: 9 }).execute();
    await ctx.store.db
      .insertInto('number_month_recipients')
      .values({ account_id: a, number: LONG, month: '2026-05', mobile_phone: '15559990001' })
      .execute();
    expected[1] = row(LONG, [3, 100, 50], 40, 3);
    // A number without the limit reads the log even when rows were left (a counter is only a limit's).
    await ctx.store.db.insertInto('number_day_counts').values({ account_id: a, number: SHORT, day: '2026-06-10', messages: 99 }).execute();
    assertBody(await call(ctx.app, { path: USAGE, token: demo.token }), 'json', 200, expected);

    // Paginated as every list.
    const page = await call(ctx.app, { path: USAGE, token: demo.token, query: 'per-page=2&page=2', wire: 'xml' });
    assertBody(page, 'xml', 200, expected.slice(2, 4));
    assert.equal(page.headers['x-pagination-total-count'], '5');
    assert.equal(page.headers['x-pagination-page-count'], '3');
    assert.equal(page.headers['x-pagination-current-page'], '2');
    const head = await call(ctx.app, { method: 'HEAD', path: USAGE, token: demo.token });
    assert.equal(head.statusCode, 200);
    assert.equal(head.headers['x-pagination-total-count'], '5');
    // An account without numbers: an empty list.
    const empty = await ctx.seed('Third');
    await ctx.store.db.deleteFrom('account_numbers').where('account_id', '=', empty.account.id).execute();
    assertBody(await call(ctx.app, { path: USAGE, token: empty.token, wire: 'xml' }), 'xml', 200, []);
  },
);
