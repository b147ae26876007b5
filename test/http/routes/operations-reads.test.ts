/**
 * The four read operations (numbers/index, credits/balance, sms/single-schedule-messages,
 * contacts/find) in JSON and XML: status, content type, exact body text with API.md's field
 * order, the API.md §2.3 XML layout and the API.md §9 record details.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { buildTestApp } from '../../helpers/app.ts';
import { createManualClock } from '../../../src/lib/time.ts';
import { testScheduler } from '../../helpers/scheduled.ts';
import * as accounts from '../../../src/store/repositories/accounts.ts';
import * as contactsRepo from '../../../src/store/repositories/contacts.ts';
import * as numbersRepo from '../../../src/store/repositories/numbers.ts';
import {
  assert422,
  assertBody,
  assertError,
  assertXmlLayout,
  call,
  contactFromDb,
  fmtSchedule,
  fmtTime,
  isXml,
  messagesFromDb,
  numbersFromDb,
  nowSeconds,
  SCHEDULE_TIME,
  TIMESTAMP,
  WIRES,
  XML_TYPE,
  XML_DECL,
  fieldError,
  xmlDocument,
} from '../../helpers/operations.ts';
import { storeTest } from '../../helpers/stores.ts';

storeTest('numbers/index lists the account numbers in API.md field order, JSON and XML', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const expected = await numbersFromDb(ctx, demo.account.id);
  assert.equal(expected.length, 5);
  for (const wire of WIRES) {
    const res = await call(ctx.app, { path: '/v1/numbers/index', token: demo.token, wire });
    assertBody(res, wire, 200, expected);
  }
  // Literal spot checks of the wire text: integer Status_Id, string Number, null Blocked_Date.
  const json = await call(ctx.app, { path: '/v1/numbers/index', token: demo.token });
  assert.ok(json.body.startsWith('[{"Number":"55155","Status_Id":0,"Status_Description":"Active","Blocked_Date":null},'), json.body);
  const xml = await call(ctx.app, { path: '/v1/numbers/index', token: demo.token, wire: 'xml' });
  assert.ok(
    xml.body.startsWith(
      `${XML_DECL}\n<response><item><Number>55155</Number><Status_Id>0</Status_Id><Status_Description>Active</Status_Description><Blocked_Date></Blocked_Date></item><item>`,
    ),
    xml.body,
  );
  assert.match(
    xml.body,
    /<item><Number>15550100004<\/Number><Status_Id>302<\/Status_Id><Status_Description>Permanently blocked\.<\/Status_Description><Blocked_Date>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d<\/Blocked_Date><\/item><\/response>\n$/,
  );
});

storeTest(
  'numbers/index: Blocked_Date is a timestamp only for 301/302, null for Active/Inactive even with a stored block time',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const blockedAt = nowSeconds() - 7200;
    // An Inactive and an Active number that still carry a block time from the past must show null.
    await numbersRepo.insertNumber(ctx.store.db, demo.account.id, '15550100008', 1, blockedAt, nowSeconds());
    await numbersRepo.insertNumber(ctx.store.db, demo.account.id, '15550100009', 0, blockedAt, nowSeconds());
    const res = await call(ctx.app, { path: '/v1/numbers/index', token: demo.token });
    assert.equal(res.statusCode, 200);
    const list = JSON.parse(res.body) as { Number: string; Status_Id: number; Blocked_Date: string | null }[];
    assert.equal(list.length, 7);
    for (const n of list) {
      if (n.Status_Id === 301 || n.Status_Id === 302) assert.match(n.Blocked_Date ?? '', TIMESTAMP, n.Number);
      else assert.equal(n.Blocked_Date, null, n.Number);
    }
    const rows = await ctx.store.db
      .selectFrom('account_numbers')
      .select(['number', 'blocked_at'])
      .where('account_id', '=', demo.account.id)
      .execute();
    const blocked = list.find((n) => n.Status_Id === 301)!;
    assert.equal(blocked.Blocked_Date, fmtTime(Number(rows.find((r) => r.number === blocked.Number)!.blocked_at)));
    assert.deepEqual(list, await numbersFromDb(ctx, demo.account.id));
  },
);

storeTest('credits/balance answers one object, JSON and XML', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  for (const wire of WIRES) {
    const res = await call(ctx.app, { path: '/v1/credits/balance', token: demo.token, wire });
    assert.equal(res.statusCode, 200);
    if (isXml(wire)) {
      assert.equal(res.headers['content-type'], XML_TYPE);
      assertXmlLayout(res.body);
      assert.equal(res.body, `${XML_DECL}\n<response><AvailableCredits>2500</AvailableCredits></response>\n`);
    } else {
      assertBody(res, wire, 200, { AvailableCredits: 2500 });
    }
  }
  // The balance is read from the store, not a constant.
  await accounts.changeCredits(ctx.store.db, demo.account.id, 17, 'add', nowSeconds());
  const res = await call(ctx.app, { path: '/v1/credits/balance', token: demo.token });
  assert.equal(res.body, '{"AvailableCredits":2517}');
});

storeTest('sms/single-schedule-messages lists every scheduled message, JSON and XML', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const expected = await messagesFromDb(ctx, demo.account.id);
  assert.equal(expected.length, 12);
  for (const wire of WIRES) {
    const res = await call(ctx.app, { path: '/v1/sms/single-schedule-messages', token: demo.token, wire });
    assertBody(res, wire, 200, expected);
  }
  const res = await call(ctx.app, { path: '/v1/sms/single-schedule-messages', token: demo.token });
  const list = JSON.parse(res.body) as Record<string, unknown>[];
  assert.deepEqual(Object.keys(list[0]!), [
    'Id',
    'MobilePhone',
    'Message',
    'DateTime',
    'Status_Id',
    'Status_Description',
    'Type_Id',
    'Type_Description',
    'MmsTemplateId',
    'Subject',
  ]);
  const sms = list.filter((m) => m.Type_Id === 1);
  const mms = list.filter((m) => m.Type_Id === 2);
  assert.equal(sms.length, 6);
  assert.equal(mms.length, 6);
  for (const m of sms) {
    assert.equal(m.MmsTemplateId, '', 'MmsTemplateId is "" for SMS');
    assert.equal(m.Type_Description, 'SMS');
    assert.equal(m.Subject, '');
  }
  for (const m of mms) {
    assert.ok(Number.isInteger(m.MmsTemplateId), `MmsTemplateId is an integer for MMS: ${String(m.MmsTemplateId)}`);
    assert.equal(m.Type_Description, 'MMS');
  }
  for (const m of list) assert.match(String(m.DateTime), SCHEDULE_TIME);
  // The demo's are made as sms/schedule makes them: Pending until the scheduler's check, which
  // makes them Approved and Scheduled or Action Required; the list shows each status.
  assert.deepEqual(new Set(list.map((m) => m.Status_Description)), new Set(['Pending']));
  await testScheduler(ctx, createManualClock()).runOnce();
  const checked = await messagesFromDb(ctx, demo.account.id);
  for (const wire of WIRES)
    assertBody(await call(ctx.app, { path: '/v1/sms/single-schedule-messages', token: demo.token, wire }), wire, 200, checked);
  assert.deepEqual(new Set(checked.map((m) => m.Status_Description)), new Set(['Action Required', 'Approved and Scheduled']));
  // XML: "" is an empty element, an integer is its digits.
  const xml = await call(ctx.app, { path: '/v1/sms/single-schedule-messages', token: demo.token, wire: 'xml' });
  assert.match(
    xml.body,
    /<Type_Id>1<\/Type_Id><Type_Description>SMS<\/Type_Description><MmsTemplateId><\/MmsTemplateId><Subject><\/Subject><\/item>/,
  );
  assert.match(
    xml.body,
    /<Type_Id>2<\/Type_Id><Type_Description>MMS<\/Type_Description><MmsTemplateId>\d+<\/MmsTemplateId><Subject>New collection<\/Subject><\/item>/,
  );
  assert.match(xml.body, /<DateTime>\d{4}:\d\d:\d\d \d\d:\d\d:\d\d<\/DateTime>/);
});

storeTest('sms/single-schedule-messages: DateTime is the stored time with colons in the date part', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const rows = await ctx.store.db
    .selectFrom('scheduled_messages')
    .select(['id', 'scheduled_at'])
    .where('account_id', '=', demo.account.id)
    .orderBy('id')
    .execute();
  const res = await call(ctx.app, { path: '/v1/sms/single-schedule-messages', token: demo.token });
  const list = JSON.parse(res.body) as { Id: number; DateTime: string }[];
  assert.deepEqual(
    list.map((m) => m.Id),
    rows.map((r) => r.id),
  );
  for (const [i, m] of list.entries()) {
    const epoch = Number(rows[i]!.scheduled_at);
    const d = new Date(epoch * 1000);
    const p = (n: number) => String(n).padStart(2, '0');
    assert.equal(
      m.DateTime,
      `${d.getUTCFullYear()}:${p(d.getUTCMonth() + 1)}:${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}`,
    );
  }
});

storeTest('contacts/find returns the full Contact record, JSON and XML', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  for (const contact of [demo.contacts[0]!, demo.contacts[1]!, demo.contacts[3]!, demo.contacts[4]!, demo.contacts[5]!]) {
    const expected = await contactFromDb(ctx, contact.Id);
    assert.deepEqual(contact, expected, 'seed() shows what the database holds');
    for (const wire of WIRES) {
      const res = await call(ctx.app, { path: '/v1/contacts/find', token: demo.token, query: `number=${contact.Number}`, wire });
      assertBody(res, wire, 200, expected);
    }
  }
  // Literal layout checks: contact 0 is in groups and has fields, contact 1 has neither (empty arrays).
  const c0 = demo.contacts[0]!;
  const r0 = await call(ctx.app, { path: '/v1/contacts/find', token: demo.token, query: `number=${c0.Number}` });
  assert.equal(
    r0.body,
    `{"Id":${c0.Id},"Number":"${c0.Number}","OptedOut":0,"FirstName":"Olivia","LastName":"Smith","BirthDay":"1960-01-01",` +
      `"Email":"olivia.smith0@example.com","Zip":"78701","City":"Austin","DateCreated":"${c0.DateCreated}","DateUpdated":"${c0.DateUpdated}",` +
      `"GroupIds":[${demo.groups[0]!.Id},${demo.groups[1]!.Id},${demo.groups[2]!.Id}],"CustomFieldIds":[${demo.customFields[0]!.Id},${demo.customFields[1]!.Id}]}`,
  );
  const x0 = await call(ctx.app, { path: '/v1/contacts/find', token: demo.token, query: `number=${c0.Number}`, wire: 'xml' });
  assert.ok(
    x0.body.includes(
      `<GroupIds><item>${demo.groups[0]!.Id}</item><item>${demo.groups[1]!.Id}</item><item>${demo.groups[2]!.Id}</item></GroupIds>` +
        `<CustomFieldIds><item>${demo.customFields[0]!.Id}</item><item>${demo.customFields[1]!.Id}</item></CustomFieldIds></response>\n`,
    ),
    x0.body,
  );
  const c1 = demo.contacts[1]!;
  const x1 = await call(ctx.app, { path: '/v1/contacts/find', token: demo.token, query: `number=${c1.Number}`, wire: 'xml' });
  assert.ok(x1.body.endsWith(`<GroupIds/><CustomFieldIds/></response>\n`), x1.body);
  assert.ok(
    x1.body.startsWith(
      `${XML_DECL}\n<response><Id>${c1.Id}</Id><Number>${c1.Number}</Number><OptedOut>0</OptedOut><FirstName>Liam</FirstName>`,
    ),
    x1.body,
  );
});

storeTest('contacts/find: unset BirthDay is 0000-00-00, unset Email/Zip/City are ""', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const now = nowSeconds();
  const id = await contactsRepo.insertContact(
    ctx.store.db,
    demo.account.id,
    {
      number: '15557654321',
      e164: '+15557654321',
      optedOut: 1,
      firstName: 'Una',
      lastName: 'Set',
      birthday: null,
      email: '',
      zip: '',
      city: '',
    },
    now,
  );
  const json = await call(ctx.app, { path: '/v1/contacts/find', token: demo.token, query: 'number=15557654321' });
  const ts = fmtTime(now);
  assert.equal(json.statusCode, 200);
  assert.equal(
    json.body,
    `{"Id":${id},"Number":"15557654321","OptedOut":1,"FirstName":"Una","LastName":"Set","BirthDay":"0000-00-00","Email":"","Zip":"","City":"",` +
      `"DateCreated":"${ts}","DateUpdated":"${ts}","GroupIds":[],"CustomFieldIds":[]}`,
  );
  const xml = await call(ctx.app, { path: '/v1/contacts/find', token: demo.token, query: 'number=15557654321', wire: 'xml-param' });
  assert.equal(
    xml.body,
    `${XML_DECL}\n<response><Id>${id}</Id><Number>15557654321</Number><OptedOut>1</OptedOut><FirstName>Una</FirstName><LastName>Set</LastName>` +
      `<BirthDay>0000-00-00</BirthDay><Email></Email><Zip></Zip><City></City><DateCreated>${ts}</DateCreated><DateUpdated>${ts}</DateUpdated>` +
      `<GroupIds/><CustomFieldIds/></response>\n`,
  );
  assertXmlLayout(xml.body);
});

storeTest(
  'contacts/find: special characters are escaped in XML, non-ASCII is not escaped in JSON, control characters dropped in XML',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    await contactsRepo.insertContact(
      ctx.store.db,
      demo.account.id,
      {
        number: '15557650000',
        e164: '+15557650000',
        optedOut: 0,
        firstName: 'Zoë & <Ann>',
        lastName: "O'Brien/\u0007x",
        birthday: '1990-02-03',
        email: 'z@example.com',
        zip: '12345',
        city: 'São Paulo',
      },
      nowSeconds(),
    );
    const json = await call(ctx.app, { path: '/v1/contacts/find', token: demo.token, query: 'number=15557650000' });
    assert.ok(json.body.includes('"FirstName":"Zoë & <Ann>","LastName":"O\'Brien/\\u0007x"'), json.body);
    assert.ok(json.body.includes('"City":"São Paulo"'), json.body);
    const xml = await call(ctx.app, { path: '/v1/contacts/find', token: demo.token, query: 'number=15557650000', wire: 'xml' });
    assertXmlLayout(xml.body);
    assert.ok(xml.body.includes("<FirstName>Zoë &amp; &lt;Ann&gt;</FirstName><LastName>O'Brien/x</LastName>"), xml.body);
    assert.ok(xml.body.includes('<City>São Paulo</City>'));
  },
);

storeTest('contacts/find: every common writing of the number finds the same contact', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const id = await contactsRepo.insertContact(
    ctx.store.db,
    demo.account.id,
    {
      number: '15551234567',
      e164: '+15551234567',
      optedOut: 0,
      firstName: 'Pat',
      lastName: 'Lee',
      birthday: null,
      email: '',
      zip: '',
      city: '',
    },
    nowSeconds(),
  );
  const expected = JSON.stringify(await contactFromDb(ctx, id));
  for (const written of ['+15551234567', '15551234567', '5551234567', '(555) 123-4567', '+1 555 123 4567', '555-123-4567']) {
    const res = await call(ctx.app, { path: '/v1/contacts/find', token: demo.token, query: `number=${encodeURIComponent(written)}` });
    assert.equal(res.statusCode, 200, `${written}: ${res.body}`);
    assert.equal(res.body, expected, written);
  }
  // A demo contact too, in the same writings.
  const c = demo.contacts[7]!;
  const national = c.Number.slice(1);
  for (const written of [`+${c.Number}`, c.Number, national, `(${national.slice(0, 3)}) ${national.slice(3, 6)}-${national.slice(6)}`]) {
    const res = await call(ctx.app, { path: '/v1/contacts/find', token: demo.token, query: `number=${encodeURIComponent(written)}` });
    assert.equal(res.statusCode, 200, written);
    assert.equal((JSON.parse(res.body) as { Id: number }).Id, c.Id, written);
  }
});

storeTest('contacts/find: missing number 400, blank or invalid number 422, unknown number 404', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  for (const wire of WIRES) {
    const missing = await call(ctx.app, { path: '/v1/contacts/find', token: demo.token, wire });
    assertError(missing, 400, 'Missing required parameters: number', wire);
    for (const bad of ['abc', '123', '+1555123456789012']) {
      const res = await call(ctx.app, { path: '/v1/contacts/find', token: demo.token, query: `number=${encodeURIComponent(bad)}`, wire });
      assert422(res, [fieldError('number', 'Number is invalid.')], wire);
    }
    const unknown = await call(ctx.app, {
      path: '/v1/contacts/find',
      token: demo.token,
      query: `number=${encodeURIComponent('+15559999999')}`,
      wire,
    });
    assertError(unknown, 404, 'Object not found: +15559999999', wire);
  }
  const blank = await call(ctx.app, { path: '/v1/contacts/find', token: demo.token, query: 'number=' });
  assert.equal(blank.statusCode, 422);
  assert.equal((JSON.parse(blank.body) as { field: string }[])[0]!.field, 'number');
});

storeTest('MSGSVC_TIMEZONE renders every timestamp in the configured zone', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'msgsvc-ops-tz-'));
  const utc = await buildTestApp(undefined, {}, { dir });
  const tz = 'America/New_York';
  const ny = await buildTestApp(undefined, { MSGSVC_TIMEZONE: tz }, { dir });
  t.after(async () => {
    await ny.close();
    await utc.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const demo = await utc.seed();
  // Numbers: Blocked_Date.
  const numbers = JSON.parse((await call(ny.app, { path: '/v1/numbers/index', token: demo.token })).body) as {
    Blocked_Date: string | null;
  }[];
  assert.deepEqual(numbers, await numbersFromDb(ny, demo.account.id, tz));
  const utcNumbers = JSON.parse((await call(utc.app, { path: '/v1/numbers/index', token: demo.token })).body) as {
    Blocked_Date: string | null;
  }[];
  assert.notEqual(numbers[3]!.Blocked_Date, utcNumbers[3]!.Blocked_Date, 'the zone changes the rendering');
  // Messages: DateTime.
  const messages = JSON.parse((await call(ny.app, { path: '/v1/sms/single-schedule-messages', token: demo.token })).body) as {
    DateTime: string;
  }[];
  assert.deepEqual(messages, await messagesFromDb(ny, demo.account.id, tz));
  const utcMessages = JSON.parse((await call(utc.app, { path: '/v1/sms/single-schedule-messages', token: demo.token })).body) as {
    DateTime: string;
  }[];
  assert.notEqual(messages[0]!.DateTime, utcMessages[0]!.DateTime);
  // Contacts: DateCreated/DateUpdated, across the daylight-saving change (contacts span 50 days).
  for (const c of [demo.contacts[0]!, demo.contacts[49]!]) {
    const res = await call(ny.app, { path: '/v1/contacts/find', token: demo.token, query: `number=${c.Number}`, wire: 'xml' });
    assert.equal(res.body, xmlDocument(await contactFromDb(ny, c.Id, tz)));
    const row = await ny.store.db.selectFrom('contacts').select('created_at').where('id', '=', c.Id).executeTakeFirstOrThrow();
    const expected = fmtTime(Number(row.created_at), tz);
    assert.ok(res.body.includes(`<DateCreated>${expected}</DateCreated>`));
    assert.notEqual(expected, c.DateCreated, 'New York differs from UTC');
  }
  // And a fixed instant, computed by hand: 2024-01-15 12:00:00 UTC is 07:00:00 EST; 2024-07-15 12:00:00 UTC is 08:00:00 EDT.
  const winter = Date.UTC(2024, 0, 15, 12) / 1000;
  const summer = Date.UTC(2024, 6, 15, 12) / 1000;
  await ny.store.db
    .updateTable('scheduled_messages')
    .set({ scheduled_at: winter })
    .where('id', '=', demo.scheduledMessages[0]!.Id)
    .execute();
  await ny.store.db
    .updateTable('scheduled_messages')
    .set({ scheduled_at: summer })
    .where('id', '=', demo.scheduledMessages[1]!.Id)
    .execute();
  const fixed = JSON.parse((await call(ny.app, { path: '/v1/sms/single-schedule-messages', token: demo.token })).body) as {
    DateTime: string;
  }[];
  assert.equal(fixed[0]!.DateTime, '2024:01:15 07:00:00');
  assert.equal(fixed[1]!.DateTime, '2024:07:15 08:00:00');
  const fixedUtc = JSON.parse((await call(utc.app, { path: '/v1/sms/single-schedule-messages', token: demo.token })).body) as {
    DateTime: string;
  }[];
  assert.equal(fixedUtc[0]!.DateTime, '2024:01:15 12:00:00');
  assert.equal(fmtSchedule(winter, tz), '2024:01:15 07:00:00', 'the oracle agrees');
});
