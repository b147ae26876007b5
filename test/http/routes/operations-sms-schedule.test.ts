/**
 * sms/schedule, view-scheduled, update-scheduled and cancel-scheduled (API.md §10.6, from
 * `schedule` to the end of API.md §10.6), in JSON and XML, on each store, with
 * a manual clock: the record (API.md §9) from the database, Location, every validation rule with its
 * exact message and API.md §10.6 field order, the three DateTime forms and the time zone (daylight saving
 * included), "only the fields sent change", 404 before 422, cancel's 204, and Idempotency-Key
 * replays that create and reserve nothing twice. The status life is test/dispatch/store-scheduler.test.ts.
 */
import assert from 'node:assert/strict';
import type { DemoAccount } from '../../../src/domain/demo.ts';
import { createManualClock, type ManualClock } from '../../../src/lib/time.ts';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import {
  assert422,
  assertBody,
  assertError,
  call,
  expectRejected,
  fieldError,
  messagesFromDb,
  UNUSED_ID,
  WIRES,
  XML_DECL,
  type RejectCase,
} from '../../helpers/operations.ts';
import { balanceOf } from '../../helpers/sms.ts';
import { insertNumber } from '../../../src/store/repositories/numbers.ts';
import {
  CANCEL,
  cancelDemoScheduled,
  dateTimeForms,
  LIST,
  SCHEDULE,
  UPDATE,
  VIEW,
  lastScheduledId,
  schedule,
  stateOf,
  testScheduler,
} from '../../helpers/scheduled.ts';
import { storeTest } from '../../helpers/stores.ts';
import { recordFromDb } from '../../helpers/recurring.ts';

const RECIPIENT = '+15551234567';
const DAY = 86_400;

async function setup(
  t: { after(fn: () => unknown): void },
  overrides: Record<string, string> = {},
  clock: ManualClock = createManualClock(),
) {
  const ctx = await buildTestApp(t, overrides, { clock });
  const demo = await ctx.seed();
  return { ctx, demo, clock, now: () => clock.nowSeconds() };
}

const optedOut = (demo: DemoAccount) => demo.contacts.find((c) => c.OptedOut === 1)!;

// ------------------------------------------------------------------ schedule

storeTest(
  'sms/schedule: 201, the Pending record, Location to view-scheduled; view-scheduled and the list show it; nothing debited yet (JSON, XML)',
  async (t) => {
    const { ctx, demo, now } = await setup(t);
    const balance = await balanceOf(ctx, demo.account.id);
    const at = now() + 3600;
    for (const wire of WIRES) {
      const res = await call(ctx.app, {
        method: 'POST',
        path: SCHEDULE,
        token: demo.token,
        wire,
        body: { MobilePhone: '(555) 123-4567', Message: `Hi ${wire}`, DateTime: dateTimeForms(at).colons },
      });
      const id = await lastScheduledId(ctx, demo.account.id);
      const record = await recordFromDb(ctx, id);
      assertBody(res, wire, 201, record);
      assert.equal(res.headers.location, `http://localhost:80/v1/sms/view-scheduled?id=${id}`);
      assert.deepEqual(record, {
        Id: id,
        MobilePhone: '15551234567',
        Message: `Hi ${wire}`,
        DateTime: dateTimeForms(at).colons,
        Status_Id: 1,
        Status_Description: 'Pending',
        Type_Id: 1,
        Type_Description: 'SMS',
        MmsTemplateId: '',
        Subject: '',
        RRule: '',
      });
      assertBody(await call(ctx.app, { path: VIEW, token: demo.token, wire, query: `id=${id}` }), wire, 200, record);
      assert.deepEqual((await stateOf(ctx, id))!.number, '55155', 'the default Number: the first Active one');
    }
    assert.equal(await balanceOf(ctx, demo.account.id), balance, 'a Pending message reserves nothing');
    const list = await call(ctx.app, { path: LIST, token: demo.token, query: 'per-page=100' });
    assert.equal(list.body, JSON.stringify(await messagesFromDb(ctx, demo.account.id)), 'API.md list shows them, unchanged in shape');

    const xml = await call(ctx.app, {
      method: 'POST',
      path: SCHEDULE,
      token: demo.token,
      wire: 'xml',
      body: { MobilePhone: RECIPIENT, Message: 'a < b & c', DateTime: dateTimeForms(at).iso, Subject: 'S' },
    });
    const id = await lastScheduledId(ctx, demo.account.id);
    assert.equal(
      xml.body,
      `${XML_DECL}\n<response><Id>${id}</Id><MobilePhone>15551234567</MobilePhone><Message>a &lt; b &amp; c</Message>` +
        `<DateTime>${dateTimeForms(at).colons}</DateTime><Status_Id>1</Status_Id><Status_Description>Pending</Status_Description>` +
        `<Type_Id>1</Type_Id><Type_Description>SMS</Type_Description><MmsTemplateId></MmsTemplateId><Subject>S</Subject><RRule></RRule></response>\n`,
    );
  },
);

storeTest('sms/schedule: every rule with its exact message, in API.md §10.6 field order; nothing is written (JSON, XML)', async (t) => {
  const { ctx, demo, now } = await setup(t);
  const other = await ctx.seed('Other');
  // A number only the other account holds (the demo accounts share theirs).
  await insertNumber(ctx.store.db, other.account.id, '15550199999', 0, null, now());
  const ok = { MobilePhone: RECIPIENT, DateTime: dateTimeForms(now() + 3600).colons };
  const future = new Date().getUTCFullYear() + 0; // formats below are refused before any time rule
  const badFormats: unknown[] = [
    `${future}-12-01`,
    `${future}-12-01T09:00:00`,
    `${future}/12/01 09:00:00`,
    `01.12.${future} 09:00:00`,
    `${future}-12-01 9:00:00`,
    `${future}:12-01 09:00:00`,
    `${future}-02-30 10:00:00`,
    `${future}:13:01 10:00:00`,
    `${future}-12-01 24:00:00`,
    `${future}-12-01 10:60:00`,
    `${future}-12-01T09:00:00+25:00`,
    `${future}-12-01T09:00:00 Z`,
    ` ${future}-12-01 09:00:00`,
    `${future}-12-01 09:00:00\n`,
    'tomorrow',
    'now',
    1_900_000_000,
    true,
    ['2030-01-01 00:00:00'],
    { a: 1 },
  ];
  const cases: RejectCase[] = [
    {
      name: 'empty body',
      body: {},
      errors: [fieldError('MobilePhone', 'Mobile Phone cannot be blank.'), fieldError('DateTime', 'Date Time cannot be blank.')],
    },
    {
      name: 'JSON null',
      rawBody: 'null',
      errors: [fieldError('MobilePhone', 'Mobile Phone cannot be blank.'), fieldError('DateTime', 'Date Time cannot be blank.')],
    },
    {
      name: 'blank (PHP trim characters)',
      body: { MobilePhone: ' \t', DateTime: '\n', Message: 'x' },
      errors: [fieldError('MobilePhone', 'Mobile Phone cannot be blank.'), fieldError('DateTime', 'Date Time cannot be blank.')],
    },
    {
      name: 'every field wrong, reported in API.md §10.6 order',
      body: { Number: 'abc', Subject: 's'.repeat(256), Type_Id: 3, DateTime: 'tomorrow', Message: 'm'.repeat(1601), MobilePhone: 'abc' },
      errors: [
        fieldError('MobilePhone', 'Mobile Phone is invalid.'),
        fieldError('Message', 'Message should contain at most 1,600 characters.'),
        fieldError('DateTime', 'The format of Date Time is invalid.'),
        fieldError('Type_Id', 'Type Id is invalid.'),
        fieldError('Subject', 'Subject should contain at most 255 characters.'),
        fieldError('Number', 'Number must be an integer.'),
      ],
    },
    { name: 'Message not a string', body: { ...ok, Message: 12 }, errors: [fieldError('Message', 'Message must be a string.')] },
    { name: 'Subject not a string', body: { ...ok, Subject: ['x'] }, errors: [fieldError('Subject', 'Subject must be a string.')] },
    ...badFormats.map((DateTime) => ({
      name: `DateTime ${JSON.stringify(DateTime)}`,
      body: { ...ok, DateTime },
      errors: [fieldError('DateTime', 'The format of Date Time is invalid.')],
    })),
    {
      name: 'DateTime now',
      body: { ...ok, DateTime: dateTimeForms(now()).colons },
      errors: [fieldError('DateTime', 'Date Time is invalid.')],
    },
    {
      name: 'DateTime a minute ago',
      body: { ...ok, DateTime: dateTimeForms(now() - 60).dashes },
      errors: [fieldError('DateTime', 'Date Time is invalid.')],
    },
    {
      name: 'DateTime last year (ISO)',
      body: { ...ok, DateTime: dateTimeForms(now() - 365 * DAY).iso },
      errors: [fieldError('DateTime', 'Date Time is invalid.')],
    },
    {
      name: 'DateTime 366 days and 1 s ahead',
      body: { ...ok, DateTime: dateTimeForms(now() + 366 * DAY + 1).colons },
      errors: [fieldError('DateTime', 'Date Time is invalid.')],
    },
    {
      name: 'DateTime 400 days ahead (ISO)',
      body: { ...ok, DateTime: dateTimeForms(now() + 400 * DAY).iso },
      errors: [fieldError('DateTime', 'Date Time is invalid.')],
    },
    { name: 'Type_Id not an integer', body: { ...ok, Type_Id: 'sms' }, errors: [fieldError('Type_Id', 'Type Id must be an integer.')] },
    { name: 'Type_Id 1.5', body: { ...ok, Type_Id: 1.5 }, errors: [fieldError('Type_Id', 'Type Id must be an integer.')] },
    { name: 'Type_Id 0', body: { ...ok, Type_Id: 0 }, errors: [fieldError('Type_Id', 'Type Id is invalid.')] },
    {
      name: 'MMS without a template',
      body: { ...ok, Type_Id: 2 },
      errors: [fieldError('MmsTemplateId', 'Mms Template Id cannot be blank.')],
    },
    {
      name: 'MMS with a template the account does not own',
      body: { ...ok, Type_Id: '2', MmsTemplateId: 7 },
      errors: [fieldError('MmsTemplateId', 'Mms Template Id is invalid.')],
    },
    {
      name: 'MMS with a template id that is no integer',
      body: { ...ok, Type_Id: 2, MmsTemplateId: 'abc' },
      errors: [fieldError('MmsTemplateId', 'Mms Template Id must be an integer.')],
    },
    { name: 'Number not the account’s', body: { ...ok, Number: 99999 }, errors: [fieldError('Number', 'Number is invalid.')] },
    { name: 'Number Inactive', body: { ...ok, Number: '15550100002' }, errors: [fieldError('Number', 'Number is invalid.')] },
    { name: 'Number Temporarily blocked', body: { ...ok, Number: 15550100003 }, errors: [fieldError('Number', 'Number is invalid.')] },
    { name: 'Number Permanently blocked', body: { ...ok, Number: '+15550100004' }, errors: [fieldError('Number', 'Number is invalid.')] },
    {
      name: 'another account’s Active number',
      body: { ...ok, Number: '15550199999' },
      errors: [fieldError('Number', 'Number is invalid.')],
    },
    { name: 'Number 1.5', body: { ...ok, Number: 1.5 }, errors: [fieldError('Number', 'Number must be an integer.')] },
    {
      name: 'MobilePhone and DateTime missing, the rest fine but MMS',
      body: { Message: 'x', Type_Id: 2, Number: 55155 },
      errors: [
        fieldError('MobilePhone', 'Mobile Phone cannot be blank.'),
        fieldError('DateTime', 'Date Time cannot be blank.'),
        fieldError('MmsTemplateId', 'Mms Template Id cannot be blank.'),
      ],
    },
  ];
  await expectRejected(ctx, demo, { method: 'POST', path: SCHEDULE }, cases);
  // Form bodies follow the same rules.
  const form = await call(ctx.app, {
    method: 'POST',
    path: SCHEDULE,
    token: demo.token,
    rawBody: 'MobilePhone=&Message=x',
    contentType: 'application/x-www-form-urlencoded',
  });
  assert422(form, [fieldError('MobilePhone', 'Mobile Phone cannot be blank.'), fieldError('DateTime', 'Date Time cannot be blank.')]);
});

storeTest(
  'sms/schedule: what is accepted — the bounds of DateTime, optional Message, an SMS ignores MmsTemplateId, Number given, an opted-out recipient (Pending)',
  async (t) => {
    const { ctx, demo, now } = await setup(t);
    const accepted = async (body: Record<string, unknown>) =>
      recordFromDb(ctx, await schedule(ctx, demo.token, { MobilePhone: RECIPIENT, ...body }));
    assert.equal(
      (await accepted({ DateTime: dateTimeForms(now() + 1).colons })).DateTime,
      dateTimeForms(now() + 1).colons,
      'one second ahead',
    );
    assert.equal(
      (await accepted({ DateTime: dateTimeForms(now() + 366 * DAY).iso })).DateTime,
      dateTimeForms(now() + 366 * DAY).colons,
      'exactly 366 days ahead',
    );
    const bare = await accepted({ DateTime: dateTimeForms(now() + 60).dashes });
    assert.deepEqual(
      [bare.Message, bare.Subject, bare.Type_Id, bare.MmsTemplateId],
      ['', '', 1, ''],
      'Message, Subject and Type_Id are optional',
    );
    const sms = await accepted({ DateTime: dateTimeForms(now() + 60).dashes, MmsTemplateId: 'abc', Type_Id: '1' });
    assert.equal(sms.MmsTemplateId, '', 'an SMS ignores MmsTemplateId, as send does');
    const subject = '😀'.repeat(255);
    assert.equal(
      (await accepted({ DateTime: dateTimeForms(now() + 60).dashes, Subject: subject, Message: 'é'.repeat(1600) })).Subject,
      subject,
      'lengths count characters',
    );
    const numbered = await schedule(ctx, demo.token, {
      MobilePhone: RECIPIENT,
      DateTime: dateTimeForms(now() + 60).colons,
      Number: '+15550100001',
    });
    assert.equal((await stateOf(ctx, numbered))!.number, '15550100001');
    const contact = optedOut(demo);
    const toOptedOut = await accepted({ MobilePhone: `+${contact.Number}`, DateTime: dateTimeForms(now() + 60).colons });
    assert.deepEqual(
      [toOptedOut.Status_Id, toOptedOut.MobilePhone],
      [1, contact.Number],
      'an opted-out recipient is accepted; the check decides',
    );
    // PHP integers: quoted, signed, with a final newline.
    const quoted = await recordFromDb(
      ctx,
      await schedule(ctx, demo.token, {
        MobilePhone: 15551234567,
        DateTime: dateTimeForms(now() + 60).colons,
        Type_Id: '+1\n',
        Number: '55155',
      }),
    );
    assert.equal(quoted.Type_Id, 1);
  },
);

storeTest(
  'sms/schedule: the three DateTime forms, in the service time zone (MSGSVC_TIMEZONE) or with an offset; daylight saving gaps and overlaps as PHP reads them',
  async (t) => {
    const clock = createManualClock(Date.UTC(2026, 2, 1, 12, 0, 0)); // 07:00 in New York (EST)
    const { ctx, demo } = await setup(t, { MSGSVC_TIMEZONE: 'America/New_York' }, clock);
    const utcApp = await buildTestApp(t, {}, { clock });
    const utcDemo = await utcApp.seed();
    const at = (app: TestApp, token: string, DateTime: string) =>
      schedule(app, token, { MobilePhone: RECIPIENT, DateTime }).then((id) => stateOf(app, id));
    const epoch = (...a: [number, number, number, number, number, number]) => Date.UTC(...a) / 1000;
    const cases: [string, number, string][] = [
      ['2026:03:02 09:00:00', epoch(2026, 2, 2, 14, 0, 0), '2026:03:02 09:00:00'],
      ['2026-03-02 09:00:00', epoch(2026, 2, 2, 14, 0, 0), '2026:03:02 09:00:00'],
      ['2026-07-01 09:00:00', epoch(2026, 6, 1, 13, 0, 0), '2026:07:01 09:00:00'], // EDT
      ['2026-03-02T09:00:00+01:00', epoch(2026, 2, 2, 8, 0, 0), '2026:03:02 03:00:00'],
      ['2026-03-02T09:00:00Z', epoch(2026, 2, 2, 9, 0, 0), '2026:03:02 04:00:00'],
      ['2026-03-02T09:00:00.750Z', epoch(2026, 2, 2, 9, 0, 0), '2026:03:02 04:00:00'],
      ['2026-03-02T09:00:00-0330', epoch(2026, 2, 2, 12, 30, 0), '2026:03:02 07:30:00'],
      ['2026-03-02T09:00:00+05', epoch(2026, 2, 2, 4, 0, 0), '2026:03:01 23:00:00'],
      // 02:30 does not exist on 8 March in New York: it is read as 03:30 EDT.
      ['2026:03:08 02:30:00', epoch(2026, 2, 8, 7, 30, 0), '2026:03:08 03:30:00'],
      // 01:30 happens twice on 1 November: the first (EDT).
      ['2026-11-01 01:30:00', epoch(2026, 10, 1, 5, 30, 0), '2026:11:01 01:30:00'],
    ];
    for (const [sent, expected, shown] of cases) {
      const id = await schedule(ctx, demo.token, { MobilePhone: RECIPIENT, DateTime: sent });
      assert.equal((await stateOf(ctx, id))!.scheduledAt, expected, sent);
      const view = await call(ctx.app, { path: VIEW, token: demo.token, query: `id=${id}` });
      assert.equal((JSON.parse(view.body) as { DateTime: string }).DateTime, shown, `${sent} is shown in New York time`);
      assert.deepEqual(JSON.parse(view.body), await recordFromDb(ctx, id, 'America/New_York'));
    }
    // The same wall-clock text is a different instant in another zone: 11:00 today is past in UTC
    // (now 12:00Z) and ahead in New York (now 07:00).
    assert.equal((await at(ctx, demo.token, '2026-03-01 11:00:00'))!.scheduledAt, epoch(2026, 2, 1, 16, 0, 0));
    assert422(
      await call(utcApp.app, {
        method: 'POST',
        path: SCHEDULE,
        token: utcDemo.token,
        body: { MobilePhone: RECIPIENT, DateTime: '2026-03-01 11:00:00' },
      }),
      [fieldError('DateTime', 'Date Time is invalid.')],
    );
    assert.equal((await at(utcApp, utcDemo.token, '2026:03:02 09:00:00'))!.scheduledAt, epoch(2026, 2, 2, 9, 0, 0));
    assert422(
      await call(ctx.app, {
        method: 'POST',
        path: SCHEDULE,
        token: demo.token,
        body: { MobilePhone: RECIPIENT, DateTime: '2026-03-01 06:59:59' },
      }),
      [fieldError('DateTime', 'Date Time is invalid.')],
    );
    // 366 days in either form, counted from now.
    assert.equal((await at(ctx, demo.token, '2027-03-02T12:00:00Z'))!.scheduledAt, epoch(2027, 2, 2, 12, 0, 0));
    assert422(
      await call(ctx.app, {
        method: 'POST',
        path: SCHEDULE,
        token: demo.token,
        body: { MobilePhone: RECIPIENT, DateTime: '2027-03-02T12:00:01Z' },
      }),
      [fieldError('DateTime', 'Date Time is invalid.')],
    );
  },
);

storeTest(
  'sms/schedule: an Idempotency-Key replay creates nothing and reserves nothing twice; the same key with another body is a 409',
  async (t) => {
    const { ctx, demo, clock, now } = await setup(t);
    await cancelDemoScheduled(ctx, demo); // only this test's message is checked and counted below
    const before = await balanceOf(ctx, demo.account.id);
    const body = JSON.stringify({ MobilePhone: RECIPIENT, Message: 'b'.repeat(200), DateTime: dateTimeForms(now() + 3600).colons });
    const post = (payload: string, accept = 'application/json') =>
      ctx.app.inject({
        method: 'POST',
        url: `${SCHEDULE}?access_token=${demo.token}`,
        headers: { 'content-type': 'application/json', 'idempotency-key': 'sched-1', accept },
        payload,
      });
    const first = await post(body);
    assert.equal(first.statusCode, 201, first.body);
    const again = await post(body);
    assert.equal(again.statusCode, 201);
    assert.equal(again.body, first.body);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.headers.location, first.headers.location);
    assert.equal((await post(body, 'application/xml')).statusCode, 201);
    const conflict = await post(body.replace('bbb', 'ccc'));
    assertError(conflict, 409, 'Idempotency-Key was used with a different request.');
    const rows = await ctx.store.db
      .selectFrom('scheduled_messages')
      .select('id')
      .where('account_id', '=', demo.account.id)
      .where('reserved_credits', 'is not', null)
      .execute();
    assert.equal(rows.length, 1, 'one scheduled message');
    await testScheduler(ctx, clock).drain();
    assert.equal(await balanceOf(ctx, demo.account.id), before - 2, 'its 2 credits reserved once');
    assert.equal((await post(body)).body, first.body, 'the replay is the first response (Pending), as kept');
    await testScheduler(ctx, clock).drain();
    assert.equal(await balanceOf(ctx, demo.account.id), before - 2, 'a replay after the check reserves nothing');
  },
);

// ------------------------------------------------------------------ view, update, cancel

storeTest('view-scheduled: 404 for an unknown id, another account’s, and one cancelled; 400 for a missing or bad id', async (t) => {
  const { ctx, demo, now } = await setup(t);
  const other = await ctx.seed('Other');
  const theirs = await schedule(ctx, other.token, { MobilePhone: RECIPIENT, DateTime: dateTimeForms(now() + 60).colons });
  for (const wire of WIRES) {
    assertError(
      await call(ctx.app, { path: VIEW, token: demo.token, wire, query: `id=${UNUSED_ID}` }),
      404,
      `Object not found: ${UNUSED_ID}`,
      wire,
    );
    assertError(
      await call(ctx.app, { path: VIEW, token: demo.token, wire, query: `id=${theirs}` }),
      404,
      `Object not found: ${theirs}`,
      wire,
    );
    assertError(await call(ctx.app, { path: VIEW, token: demo.token, wire }), 400, 'Missing required parameters: id', wire);
    assertError(
      await call(ctx.app, { path: VIEW, token: demo.token, wire, query: 'id=abc' }),
      400,
      'Invalid data received for parameter "id".',
      wire,
    );
  }
  // The demo's own scheduled messages (made as schedule makes them, not yet checked) are shown too.
  const demoRow = demo.scheduledMessages[0]!;
  assert.deepEqual(JSON.parse((await call(ctx.app, { path: VIEW, token: demo.token, query: `id=${demoRow.Id}` })).body), {
    ...demoRow,
    RRule: '',
  });
});

storeTest(
  'update-scheduled: PUT and PATCH; only the fields sent change; it is Pending again; every rule as schedule; required fields may be left out, not sent blank (JSON, XML)',
  async (t) => {
    const { ctx, demo, clock, now } = await setup(t);
    const at = now() + 3600;
    const id = await schedule(ctx, demo.token, {
      MobilePhone: RECIPIENT,
      Message: 'first',
      DateTime: dateTimeForms(at).colons,
      Subject: 'Sub',
    });
    await testScheduler(ctx, clock).drain();
    assert.equal((await recordFromDb(ctx, id)).Status_Id, 3);
    let expected = await recordFromDb(ctx, id);
    const steps: [string, Record<string, unknown>, Partial<typeof expected>][] = [
      ['Message', { Message: 'second' }, { Message: 'second' }],
      ['MobilePhone', { MobilePhone: '+1 (555) 765-4321' }, { MobilePhone: '15557654321' }],
      ['DateTime (ISO)', { DateTime: dateTimeForms(at + 60).iso }, { DateTime: dateTimeForms(at + 60).colons }],
      ['Subject cleared', { Subject: null }, { Subject: '' }],
      [
        'several',
        { Message: 'third', Subject: 'New', DateTime: dateTimeForms(at + 120).dashes },
        { Message: 'third', Subject: 'New', DateTime: dateTimeForms(at + 120).colons },
      ],
      ['nothing', {}, {}],
      ['unknown keys are ignored', { Foo: 'bar' }, {}],
    ];
    let n = 0;
    for (const [name, body, changes] of steps) {
      for (const wire of WIRES) {
        const method = n++ % 2 === 0 ? 'PATCH' : 'PUT';
        const res = await call(ctx.app, { method, path: UPDATE, token: demo.token, wire, query: `id=${id}`, body });
        expected = { ...expected, ...changes, Status_Id: 1, Status_Description: 'Pending' };
        assert.deepEqual(await recordFromDb(ctx, id), expected, `${name} (${method}, ${wire})`);
        assertBody(res, wire, 200, expected);
      }
    }
    assert.equal((await stateOf(ctx, id))!.number, '55155');
    await call(ctx.app, { method: 'PATCH', path: UPDATE, token: demo.token, query: `id=${id}`, body: { Number: 15550100001 } });
    assert.equal((await stateOf(ctx, id))!.number, '15550100001', 'Number changes when sent');
    await call(ctx.app, { method: 'PATCH', path: UPDATE, token: demo.token, query: `id=${id}`, body: { Number: '' } });
    assert.equal((await stateOf(ctx, id))!.number, '55155', 'a blank Number is the default, the first Active one');

    await expectRejected(ctx, demo, { method: 'PUT', path: UPDATE, query: `id=${id}` }, [
      { name: 'MobilePhone blank', body: { MobilePhone: '' }, errors: [fieldError('MobilePhone', 'Mobile Phone cannot be blank.')] },
      { name: 'DateTime null', body: { DateTime: null }, errors: [fieldError('DateTime', 'Date Time cannot be blank.')] },
      {
        name: 'every field wrong, API.md §10.6 order',
        body: {
          Number: 99999,
          Subject: 's'.repeat(256),
          Type_Id: 'x',
          DateTime: dateTimeForms(now() - 1).colons,
          Message: ['m'],
          MobilePhone: '12',
        },
        errors: [
          fieldError('MobilePhone', 'Mobile Phone is invalid.'),
          fieldError('Message', 'Message must be a string.'),
          fieldError('DateTime', 'Date Time is invalid.'),
          fieldError('Type_Id', 'Type Id must be an integer.'),
          fieldError('Subject', 'Subject should contain at most 255 characters.'),
          fieldError('Number', 'Number is invalid.'),
        ],
      },
      {
        name: 'DateTime format',
        body: { DateTime: '2030-01-01T00:00:00' },
        errors: [fieldError('DateTime', 'The format of Date Time is invalid.')],
      },
      {
        name: 'to MMS without a template',
        body: { Type_Id: 2 },
        errors: [fieldError('MmsTemplateId', 'Mms Template Id cannot be blank.')],
      },
      {
        name: 'to MMS with a template not owned',
        body: { Type_Id: 2, MmsTemplateId: '12' },
        errors: [fieldError('MmsTemplateId', 'Mms Template Id is invalid.')],
      },
      { name: 'Number no longer Active', body: { Number: '15550100002' }, errors: [fieldError('Number', 'Number is invalid.')] },
    ]);
  },
);

storeTest(
  'update-scheduled: the record is looked up after the body is read and before the database rules (404 before 422); another account’s is a 404; an MMS keeps its template',
  async (t) => {
    const { ctx, demo, now } = await setup(t);
    const other = await ctx.seed('Other');
    const theirs = await schedule(ctx, other.token, { MobilePhone: RECIPIENT, DateTime: dateTimeForms(now() + 60).colons });
    for (const wire of WIRES) {
      for (const target of [UNUSED_ID, theirs]) {
        const res = await call(ctx.app, {
          method: 'PATCH',
          path: UPDATE,
          token: demo.token,
          wire,
          query: `id=${target}`,
          body: { MobilePhone: '', Number: 1 },
        });
        assertError(res, 404, `Object not found: ${target}`, wire);
      }
      assertError(
        await call(ctx.app, { method: 'PATCH', path: UPDATE, token: demo.token, wire, body: {} }),
        400,
        'Missing required parameters: id',
        wire,
      );
      assertError(
        await call(ctx.app, { method: 'PATCH', path: UPDATE, token: demo.token, wire, query: `id=${theirs}`, rawBody: '{"a":' }),
        400,
        'Invalid JSON data in request body: Syntax error',
        wire,
      );
    }
    assert.equal((await recordFromDb(ctx, theirs)).Status_Id, 1, 'untouched');
    // The demo's MMS rows name a template: an update that leaves Type_Id alone keeps it; Type_Id 1 drops it.
    const mms = demo.scheduledMessages.find((m) => m.Type_Id === 2)!;
    const kept = await call(ctx.app, {
      method: 'PATCH',
      path: UPDATE,
      token: demo.token,
      query: `id=${mms.Id}`,
      body: { Subject: 'Spring' },
    });
    assert.equal(kept.statusCode, 200, kept.body);
    assert.deepEqual(JSON.parse(kept.body), { ...mms, Subject: 'Spring', Status_Id: 1, Status_Description: 'Pending', RRule: '' });
    assert.equal((await stateOf(ctx, mms.Id))!.reserved, 0, 'Pending again, nothing reserved');
    const sms = await call(ctx.app, { method: 'PATCH', path: UPDATE, token: demo.token, query: `id=${mms.Id}`, body: { Type_Id: 1 } });
    assert.deepEqual(JSON.parse(sms.body), {
      ...mms,
      Subject: 'Spring',
      Status_Id: 1,
      Status_Description: 'Pending',
      Type_Id: 1,
      Type_Description: 'SMS',
      MmsTemplateId: '',
      RRule: '',
    });
    assert422(await call(ctx.app, { method: 'PATCH', path: UPDATE, token: demo.token, query: `id=${mms.Id}`, body: { Type_Id: 2 } }), [
      fieldError('MmsTemplateId', 'Mms Template Id cannot be blank.'),
    ]);
  },
);

storeTest(
  'cancel-scheduled: 204 with no body, then gone (view 404, not listed); another account’s or a cancelled one is a 404; DELETE only',
  async (t) => {
    const { ctx, demo, now } = await setup(t);
    const other = await ctx.seed('Other');
    const theirs = await schedule(ctx, other.token, { MobilePhone: RECIPIENT, DateTime: dateTimeForms(now() + 60).colons });
    for (const wire of WIRES) {
      const id = await schedule(ctx, demo.token, { MobilePhone: RECIPIENT, DateTime: dateTimeForms(now() + 60).colons });
      const res = await call(ctx.app, { method: 'DELETE', path: CANCEL, token: demo.token, wire, query: `id=${id}` });
      assert.equal(res.statusCode, 204, res.body);
      assert.equal(res.body, '');
      assert.equal(await stateOf(ctx, id), undefined);
      assertError(await call(ctx.app, { path: VIEW, token: demo.token, wire, query: `id=${id}` }), 404, `Object not found: ${id}`, wire);
      assertError(
        await call(ctx.app, { method: 'DELETE', path: CANCEL, token: demo.token, wire, query: `id=${id}` }),
        404,
        `Object not found: ${id}`,
        wire,
      );
      assertError(
        await call(ctx.app, { method: 'DELETE', path: CANCEL, token: demo.token, wire, query: `id=${theirs}` }),
        404,
        `Object not found: ${theirs}`,
        wire,
      );
      assertError(
        await call(ctx.app, { method: 'DELETE', path: CANCEL, token: demo.token, wire }),
        400,
        'Missing required parameters: id',
        wire,
      );
    }
    assert.ok(await stateOf(ctx, theirs), 'another account’s message stays');
    const list = JSON.parse((await call(ctx.app, { path: LIST, token: demo.token })).body) as unknown[];
    assert.deepEqual(list, await messagesFromDb(ctx, demo.account.id));
    assert.equal(list.length, demo.scheduledMessages.length);
    const get = await call(ctx.app, { path: CANCEL, token: demo.token, query: `id=${theirs}` });
    assert.equal(get.statusCode, 405);
    assert.equal(get.headers.allow, 'DELETE');
    for (const [path, allow] of [
      [SCHEDULE, 'POST'],
      [UPDATE, 'PUT, PATCH'],
      [VIEW, 'GET, HEAD'],
    ] as const) {
      const res = await call(ctx.app, { method: 'DELETE', path, token: demo.token, query: 'id=1' });
      assert.deepEqual([res.statusCode, res.headers.allow], [405, allow], path);
    }
  },
);
