/**
 * sms/send and sms/send-group (API.md §10.6), in JSON and XML, on each store: the
 * records from the database, Location, the default and explicit
 * `Number`, both recipient fields, the cost in segments and credits (prices are settings), every
 * validation rule with its exact message and order, opted-out recipients, "not enough credits"
 * with nothing queued, send-group all or nothing, Idempotency-Key replays spending no credit
 * twice, and concurrent sends that together exceed the balance.
 */
import assert from 'node:assert/strict';
import type { DemoAccount } from '../../../src/domain/demo.ts';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import { assertLedgerAddsUp } from '../../helpers/ledger.ts';
import {
  assert422,
  assertBody,
  call,
  fieldError,
  snapshotAccount,
  UNUSED_ID,
  WIRES,
  XML_DECL,
  type Wire,
} from '../../helpers/operations.ts';
import { balanceOf, batchFromDb, countMessages, messageFromDb, setBalance, setNumberStatus } from '../../helpers/sms.ts';
import { storeTest } from '../../helpers/stores.ts';

const SEND = '/v1/sms/send';
const GROUP = '/v1/sms/send-group';
const FIRST_ACTIVE = '55155'; // the demo account's first Active number in numbers/index order
const RECIPIENT = '+15551234567';

async function lastMessageId(ctx: TestApp, accountId: number): Promise<number> {
  const r = await ctx.store.db
    .selectFrom('messages')
    .select('id')
    .where('account_id', '=', accountId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirstOrThrow();
  return r.id;
}

/** Everything of the account a failed send must leave alone: its records, messages and batches. */
async function snapshot(ctx: TestApp, accountId: number) {
  const base = await snapshotAccount(ctx, accountId);
  base.messages = await ctx.store.db.selectFrom('messages').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
  base.batches = await ctx.store.db.selectFrom('batches').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
  return base;
}

async function expectRejected(
  ctx: TestApp,
  demo: DemoAccount,
  path: string,
  cases: { name: string; body: unknown; errors: { field: string; message: string }[] }[],
) {
  const before = await snapshot(ctx, demo.account.id);
  for (const c of cases) {
    for (const wire of WIRES) {
      const res = await call(ctx.app, { method: 'POST', path, token: demo.token, wire, body: c.body });
      try {
        assert422(res, c.errors, wire);
      } catch (err) {
        (err as Error).message = `${path} case "${c.name}" (${wire}): ${(err as Error).message}`;
        throw err;
      }
    }
  }
  assert.deepEqual(await snapshot(ctx, demo.account.id), before, 'a refused send changes nothing: no message, no batch, no debit');
}

const optedOutContact = (demo: DemoAccount) => demo.contacts.find((c) => c.OptedOut === 1)!;
const optedInContact = (demo: DemoAccount) => demo.contacts.find((c) => c.OptedOut === 0)!;

// ------------------------------------------------------------------ send

storeTest('sms/send: 201, a list of the one new Message (Queued), Location to sms/view, its cost debited (JSON, XML)', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  let balance = await balanceOf(ctx, demo.account.id);
  for (const wire of WIRES) {
    const res = await call(ctx.app, {
      method: 'POST',
      path: SEND,
      token: demo.token,
      wire,
      body: { Message: `Hello ${wire}`, MobilePhone: RECIPIENT },
    });
    const id = await lastMessageId(ctx, demo.account.id);
    const record = await messageFromDb(ctx, id);
    assertBody(res, wire, 201, [record]);
    assert.equal(res.headers.location, `http://localhost:80/v1/sms/view?id=${id}`);
    assert.deepEqual(
      { ...record, DateCreated: 'x' },
      {
        Id: id,
        Direction: 'Outbound',
        Number: FIRST_ACTIVE,
        MobilePhone: '15551234567',
        Message: `Hello ${wire}`,
        Type_Id: 1,
        Type_Description: 'SMS',
        Status_Id: 1,
        Status_Description: 'Queued',
        Segments: 1,
        Credits: 1,
        BatchId: '',
        ScheduledMessageId: '',
        ErrorCode: '',
        DateCreated: 'x',
        DateSent: null,
        DateDelivered: null,
      },
    );
    balance -= 1;
    assert.equal(await balanceOf(ctx, demo.account.id), balance, 'one credit per segment, debited with the queueing');
  }
  const xml = await call(ctx.app, {
    method: 'POST',
    path: SEND,
    token: demo.token,
    wire: 'xml',
    body: { Message: 'a < b & c', MobilePhone: RECIPIENT },
  });
  const r = await messageFromDb(ctx, await lastMessageId(ctx, demo.account.id));
  assert.equal(
    xml.body,
    `${XML_DECL}\n<response><item><Id>${r.Id}</Id><Direction>Outbound</Direction><Number>55155</Number><MobilePhone>15551234567</MobilePhone>` +
      `<Message>a &lt; b &amp; c</Message><Type_Id>1</Type_Id><Type_Description>SMS</Type_Description><Status_Id>1</Status_Id>` +
      `<Status_Description>Queued</Status_Description><Segments>1</Segments><Credits>1</Credits><BatchId></BatchId>` +
      `<ScheduledMessageId></ScheduledMessageId><ErrorCode></ErrorCode><DateCreated>${r.DateCreated}</DateCreated><DateSent></DateSent>` +
      `<DateDelivered></DateDelivered></item></response>\n`,
  );
});

storeTest('sms/send: the recipient as MobilePhone (any format) or PhoneNumberId; Number given or the first Active one', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const contact = optedInContact(demo);
  const send = async (body: Record<string, unknown>) => {
    const res = await call(ctx.app, { method: 'POST', path: SEND, token: demo.token, body: { Message: 'hi', ...body } });
    assert.equal(res.statusCode, 201, `${JSON.stringify(body)}: ${res.body}`);
    return (JSON.parse(res.body) as { Number: string; MobilePhone: string }[])[0]!;
  };
  for (const phone of ['+1 555 123 4567', '(555) 123-4567', '5551234567', '15551234567', 15551234567, '+1-555-123-4567']) {
    assert.equal((await send({ MobilePhone: phone })).MobilePhone, '15551234567', String(phone));
  }
  for (const id of [contact.Id, String(contact.Id), `+${contact.Id}`])
    assert.equal((await send({ PhoneNumberId: id })).MobilePhone, contact.Number);
  // Both given: MobilePhone is the recipient and PhoneNumberId is ignored (even a bad one).
  assert.equal((await send({ MobilePhone: RECIPIENT, PhoneNumberId: contact.Id })).MobilePhone, '15551234567');
  assert.equal((await send({ MobilePhone: RECIPIENT, PhoneNumberId: 'abc' })).MobilePhone, '15551234567');
  // A blank MobilePhone leaves the recipient to PhoneNumberId.
  assert.equal((await send({ MobilePhone: '', PhoneNumberId: contact.Id })).MobilePhone, contact.Number);
  assert.equal((await send({ MobilePhone: RECIPIENT })).Number, FIRST_ACTIVE);
  for (const n of ['15550100001', 15550100001, '+15550100001'])
    assert.equal((await send({ MobilePhone: RECIPIENT, Number: n })).Number, '15550100001');
  assert.equal((await send({ MobilePhone: RECIPIENT, Number: 55155 })).Number, '55155');
  // The default follows numbers/index order among the Active ones.
  await setNumberStatus(ctx, demo.account.id, FIRST_ACTIVE, 1);
  assert.equal((await send({ MobilePhone: RECIPIENT })).Number, '15550100001');
  // A form body works as JSON does.
  const form = await call(ctx.app, {
    method: 'POST',
    path: SEND,
    token: demo.token,
    rawBody: 'Message=form+body&MobilePhone=%2B15551234567',
    contentType: 'application/x-www-form-urlencoded',
  });
  assert.equal(form.statusCode, 201, form.body);
});

storeTest('sms/send: Segments and Credits count GSM-7 (extension characters two) and UCS-2; the segment price is a setting', async (t) => {
  const ctx = await buildTestApp(t, { MSGSVC_SMS_SEGMENT_CREDITS: '3' });
  const demo = await ctx.seed();
  const cases: [string, number][] = [
    ['a'.repeat(160), 1],
    ['a'.repeat(161), 2],
    ['€'.repeat(80), 1],
    ['€'.repeat(81), 2],
    ['a'.repeat(70) + 'ж', 2],
    ['ж'.repeat(70), 1],
    ['😀'.repeat(36), 2],
    ['x'.repeat(1600), 11],
  ];
  for (const [text, segments] of cases) {
    const before = await balanceOf(ctx, demo.account.id);
    const res = await call(ctx.app, { method: 'POST', path: SEND, token: demo.token, body: { Message: text, MobilePhone: RECIPIENT } });
    assert.equal(res.statusCode, 201, res.body);
    const [m] = JSON.parse(res.body) as { Segments: number; Credits: number }[];
    assert.equal(m!.Segments, segments, `${text.slice(0, 5)}… (${text.length})`);
    assert.equal(m!.Credits, segments * 3);
    assert.equal(await balanceOf(ctx, demo.account.id), before - segments * 3);
  }
});

storeTest('sms/send: every rule with its exact message, in API.md §10.6 field order; nothing changes', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const other = await ctx.seed('Other account');
  const ok = { Message: 'hi', MobilePhone: RECIPIENT };
  await expectRejected(ctx, demo, SEND, [
    {
      name: 'empty body',
      body: {},
      errors: [fieldError('Message', 'Message cannot be blank.'), fieldError('MobilePhone', 'Mobile Phone cannot be blank.')],
    },
    {
      name: 'null body',
      body: null,
      errors: [fieldError('Message', 'Message cannot be blank.'), fieldError('MobilePhone', 'Mobile Phone cannot be blank.')],
    },
    { name: 'no recipient', body: { Message: 'hi' }, errors: [fieldError('MobilePhone', 'Mobile Phone cannot be blank.')] },
    {
      name: 'blank recipients',
      body: { Message: 'hi', MobilePhone: ' \t', PhoneNumberId: '' },
      errors: [fieldError('MobilePhone', 'Mobile Phone cannot be blank.')],
    },
    { name: 'no message', body: { MobilePhone: RECIPIENT }, errors: [fieldError('Message', 'Message cannot be blank.')] },
    {
      name: 'blank message',
      body: { Message: '  \n', MobilePhone: RECIPIENT },
      errors: [fieldError('Message', 'Message cannot be blank.')],
    },
    {
      name: 'message too long',
      body: { ...ok, Message: 'x'.repeat(1601) },
      errors: [fieldError('Message', 'Message should contain at most 1,600 characters.')],
    },
    { name: 'message not a string', body: { ...ok, Message: 5 }, errors: [fieldError('Message', 'Message must be a string.')] },
    { name: 'message an array', body: { ...ok, Message: ['a'] }, errors: [fieldError('Message', 'Message must be a string.')] },
    { name: 'bad phone', body: { ...ok, MobilePhone: 'abc' }, errors: [fieldError('MobilePhone', 'Mobile Phone is invalid.')] },
    { name: 'short phone', body: { ...ok, MobilePhone: '123' }, errors: [fieldError('MobilePhone', 'Mobile Phone is invalid.')] },
    {
      name: 'contact id not an integer',
      body: { Message: 'hi', PhoneNumberId: '1.5' },
      errors: [fieldError('PhoneNumberId', 'Phone Number Id must be an integer.')],
    },
    {
      name: 'unknown contact',
      body: { Message: 'hi', PhoneNumberId: UNUSED_ID },
      errors: [fieldError('PhoneNumberId', 'Phone Number Id is invalid.')],
    },
    {
      name: "another account's contact",
      body: { Message: 'hi', PhoneNumberId: other.contacts[0]!.Id },
      errors: [fieldError('PhoneNumberId', 'Phone Number Id is invalid.')],
    },
    {
      name: 'contact id 0',
      body: { Message: 'hi', PhoneNumberId: 0 },
      errors: [fieldError('PhoneNumberId', 'Phone Number Id is invalid.')],
    },
    { name: 'number not an integer', body: { ...ok, Number: 'abc' }, errors: [fieldError('Number', 'Number must be an integer.')] },
    { name: 'number Inactive', body: { ...ok, Number: '15550100002' }, errors: [fieldError('Number', 'Number is invalid.')] },
    { name: 'number Temporarily blocked', body: { ...ok, Number: '15550100003' }, errors: [fieldError('Number', 'Number is invalid.')] },
    { name: 'number Permanently blocked', body: { ...ok, Number: '15550100004' }, errors: [fieldError('Number', 'Number is invalid.')] },
    { name: 'not a number of the account', body: { ...ok, Number: '99999' }, errors: [fieldError('Number', 'Number is invalid.')] },
    { name: 'negative number', body: { ...ok, Number: -55155 }, errors: [fieldError('Number', 'Number is invalid.')] },
    { name: 'type 3', body: { ...ok, Type_Id: 3 }, errors: [fieldError('Type_Id', 'Type Id is invalid.')] },
    { name: 'type 0', body: { ...ok, Type_Id: '0' }, errors: [fieldError('Type_Id', 'Type Id is invalid.')] },
    { name: 'type text', body: { ...ok, Type_Id: 'sms' }, errors: [fieldError('Type_Id', 'Type Id must be an integer.')] },
    {
      name: 'MMS without template',
      body: { ...ok, Type_Id: 2 },
      errors: [fieldError('MmsTemplateId', 'Mms Template Id cannot be blank.')],
    },
    {
      name: 'MMS with a template the account does not own',
      body: { ...ok, Type_Id: 2, MmsTemplateId: UNUSED_ID },
      errors: [fieldError('MmsTemplateId', 'Mms Template Id is invalid.')],
    },
    {
      name: 'MMS template not an integer',
      body: { ...ok, Type_Id: '2', MmsTemplateId: 'abc' },
      errors: [fieldError('MmsTemplateId', 'Mms Template Id must be an integer.')],
    },
    {
      name: 'MMS needs no Message',
      body: { MobilePhone: RECIPIENT, Type_Id: 2, MmsTemplateId: 3 },
      errors: [fieldError('MmsTemplateId', 'Mms Template Id is invalid.')],
    },
    {
      name: 'every field wrong, in API.md §10.6 order',
      body: { Message: 7, MobilePhone: 'abc', Number: 'x', Type_Id: 9, MmsTemplateId: 'y' },
      errors: [
        fieldError('Message', 'Message must be a string.'),
        fieldError('MobilePhone', 'Mobile Phone is invalid.'),
        fieldError('Number', 'Number must be an integer.'),
        fieldError('Type_Id', 'Type Id is invalid.'),
      ],
    },
    {
      name: 'database rules in API.md §10.6 order',
      body: { MobilePhone: RECIPIENT, Number: '99999', Type_Id: 2, MmsTemplateId: 5 },
      errors: [fieldError('Number', 'Number is invalid.'), fieldError('MmsTemplateId', 'Mms Template Id is invalid.')],
    },
  ]);
  // An SMS ignores MmsTemplateId.
  const sms = await call(ctx.app, { method: 'POST', path: SEND, token: demo.token, body: { ...ok, MmsTemplateId: 'whatever' } });
  assert.equal(sms.statusCode, 201, sms.body);
});

storeTest(
  'U+0000 in a text field is "{Label} is invalid." on every store (PostgreSQL cannot store it), never a 500; nothing changes',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    await expectRejected(ctx, demo, SEND, [
      {
        name: 'NUL in Message',
        body: { Message: 'a\u0000b', MobilePhone: RECIPIENT },
        errors: [fieldError('Message', 'Message is invalid.')],
      },
    ]);
    assert422(
      await call(ctx.app, {
        method: 'POST',
        path: '/v1/contacts/create',
        token: demo.token,
        body: { Number: '+1 202 555 0177', FirstName: '\u0000' },
      }),
      [fieldError('FirstName', 'First Name is invalid.')],
    );
  },
);

storeTest('sms/send: an opted-out recipient is refused on its field, in any writing of the number', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const out = optedOutContact(demo);
  const national = out.Number.slice(1);
  await expectRejected(ctx, demo, SEND, [
    {
      name: 'MobilePhone',
      body: { Message: 'hi', MobilePhone: `+${out.Number}` },
      errors: [fieldError('MobilePhone', 'Mobile Phone has opted out.')],
    },
    {
      name: 'national',
      body: { Message: 'hi', MobilePhone: `(${national.slice(0, 3)}) ${national.slice(3, 6)}-${national.slice(6)}` },
      errors: [fieldError('MobilePhone', 'Mobile Phone has opted out.')],
    },
    {
      name: 'PhoneNumberId',
      body: { Message: 'hi', PhoneNumberId: out.Id },
      errors: [fieldError('PhoneNumberId', 'Phone Number Id has opted out.')],
    },
    {
      name: 'with other errors',
      body: { Message: 'hi', PhoneNumberId: String(out.Id), Number: 'z' },
      errors: [fieldError('PhoneNumberId', 'Phone Number Id has opted out.'), fieldError('Number', 'Number must be an integer.')],
    },
  ]);
});

storeTest('sms/send: an account with no Active number gets "Number is invalid." when Number is left out', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  for (const n of demo.numbers) await setNumberStatus(ctx, demo.account.id, n.Number, 1);
  await expectRejected(ctx, demo, SEND, [
    { name: 'no Active number', body: { Message: 'hi', MobilePhone: RECIPIENT }, errors: [fieldError('Number', 'Number is invalid.')] },
  ]);
});

storeTest('sms/send: not enough credits gives the exact 422 on Message (thousands with commas) and queues nothing', async (t) => {
  const ctx = await buildTestApp(t, { MSGSVC_SMS_SEGMENT_CREDITS: '1000' });
  const demo = await ctx.seed();
  await setBalance(ctx, demo.account.id, 1500);
  await expectRejected(ctx, demo, SEND, [
    {
      name: 'two segments',
      body: { Message: 'a'.repeat(161), MobilePhone: RECIPIENT },
      errors: [fieldError('Message', 'Not enough credits: 2,000 needed, 1,500 available.')],
    },
  ]);
  // Validation errors come first: the credit check runs only on an otherwise valid send.
  await expectRejected(ctx, demo, SEND, [
    {
      name: 'invalid and too dear',
      body: { Message: 'a'.repeat(161), MobilePhone: 'abc' },
      errors: [fieldError('MobilePhone', 'Mobile Phone is invalid.')],
    },
  ]);
  const one = await call(ctx.app, { method: 'POST', path: SEND, token: demo.token, body: { Message: 'a', MobilePhone: RECIPIENT } });
  assert.equal(one.statusCode, 201);
  assert.equal(await balanceOf(ctx, demo.account.id), 500);
  await setBalance(ctx, demo.account.id, 0);
  assert422(await call(ctx.app, { method: 'POST', path: SEND, token: demo.token, body: { Message: 'a', MobilePhone: RECIPIENT } }), [
    fieldError('Message', 'Not enough credits: 1,000 needed, 0 available.'),
  ]);
});

storeTest('sms/send and send-group: an Idempotency-Key replay sends nothing twice and spends no credit twice', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const before = await balanceOf(ctx, demo.account.id);
  const send = (wire: Wire) =>
    ctx.app.inject({
      method: 'POST',
      url: `${SEND}?access_token=${demo.token}${wire === 'xml-param' ? '&_format=xml' : ''}`,
      headers: {
        'content-type': 'application/json',
        'idempotency-key': 'send-1',
        accept: wire === 'xml' ? 'application/xml' : 'application/json',
      },
      payload: JSON.stringify({ Message: 'once', MobilePhone: RECIPIENT }),
    });
  const first = await send('json');
  assert.equal(first.statusCode, 201);
  const again = await send('json');
  assert.equal(again.statusCode, 201);
  assert.equal(again.body, first.body);
  assert.equal(again.headers['idempotent-replayed'], 'true');
  assert.equal(again.headers.location, first.headers.location);
  assert.equal((await send('xml')).statusCode, 201);
  assert.equal(await countMessages(ctx, demo.account.id), 1);
  assert.equal(await balanceOf(ctx, demo.account.id), before - 1);

  const group = demo.groups.find((g) => g.PhoneNumberIds.length > 0)!;
  const sendGroup = () =>
    ctx.app.inject({
      method: 'POST',
      url: `${GROUP}?access_token=${demo.token}`,
      headers: { 'content-type': 'application/json', 'idempotency-key': 'group-1' },
      payload: JSON.stringify({ Message: 'once to all', GroupId: group.Id }),
    });
  const g1 = await sendGroup();
  assert.equal(g1.statusCode, 201, g1.body);
  const g2 = await sendGroup();
  assert.equal(g2.body, g1.body);
  assert.equal(g2.headers['idempotent-replayed'], 'true');
  const batch = JSON.parse(g1.body) as { Recipients: number; Credits: number };
  assert.equal(await countMessages(ctx, demo.account.id), 1 + batch.Recipients);
  assert.equal(await balanceOf(ctx, demo.account.id), before - 1 - batch.Credits);
});

storeTest(
  'sms/send: concurrent sends that together exceed the balance never take it below zero; the refused get the exact 422',
  async (t) => {
    const ctx = await buildTestApp(t);
    // A second app over the same database: two connections (SQLite) or two pools (PostgreSQL) race.
    const twin = await buildTestApp(t, {}, { dir: ctx.dir });
    const demo = await ctx.seed();
    for (const [balance, text, cost] of [
      [10, 'one segment', 1],
      [11, 'b'.repeat(200), 2],
    ] as const) {
      await setBalance(ctx, demo.account.id, balance);
      const before = await countMessages(ctx, demo.account.id);
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          call((i % 2 === 0 ? ctx : twin).app, {
            method: 'POST',
            path: SEND,
            token: demo.token,
            body: { Message: text, MobilePhone: RECIPIENT },
          }),
        ),
      );
      const accepted = results.filter((r) => r.statusCode === 201).length;
      const refused = results.filter((r) => r.statusCode === 422);
      assert.equal(accepted + refused.length, 30, results.map((r) => r.statusCode).join(','));
      assert.equal(accepted, Math.floor(balance / cost), 'as many as the balance pays for');
      const left = balance - accepted * cost;
      for (const r of refused) assert422(r, [fieldError('Message', `Not enough credits: ${cost} needed, ${left} available.`)]);
      assert.equal(await balanceOf(ctx, demo.account.id), left);
      assert.ok(left >= 0 && left < cost);
      assert.equal(await countMessages(ctx, demo.account.id), before + accepted, 'one message per accepted send');
      // Racing debits: one ledger entry per accepted send, and the ledger adds up (API.md §10.1.1).
      await assertLedgerAddsUp(ctx.store, `balance ${balance}`);
    }
  },
);

// ------------------------------------------------------------------ send-group

storeTest(
  'sms/send-group: 201 Batch record; one Queued message per member who has not opted out, with its BatchId; the total debited',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const group = demo.groups.find((g) => g.PhoneNumberIds.some((id) => demo.contacts.find((c) => c.Id === id)!.OptedOut === 1))!;
    const members = demo.contacts.filter((c) => group.PhoneNumberIds.includes(c.Id));
    const eligible = members.filter((c) => c.OptedOut === 0);
    assert.ok(eligible.length > 0 && eligible.length < members.length, 'the group has opted-out members');
    for (const wire of WIRES) {
      const before = await balanceOf(ctx, demo.account.id);
      const res = await call(ctx.app, {
        method: 'POST',
        path: GROUP,
        token: demo.token,
        wire,
        body: { GroupId: group.Id, Message: 'a'.repeat(161) },
      });
      assert.equal(res.statusCode, 201, res.body);
      const batch = await ctx.store.db
        .selectFrom('batches')
        .select('id')
        .where('account_id', '=', demo.account.id)
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirstOrThrow();
      const record = await batchFromDb(ctx, batch.id);
      assertBody(res, wire, 201, record);
      assert.equal(res.headers.location, undefined, 'no view action for batches');
      assert.deepEqual(
        { ...record, Id: 0, DateCreated: '' },
        {
          Id: 0,
          GroupId: group.Id,
          Number: FIRST_ACTIVE,
          Message: 'a'.repeat(161),
          Type_Id: 1,
          Recipients: eligible.length,
          Skipped: members.length - eligible.length,
          Credits: eligible.length * 2,
          DateCreated: '',
        },
      );
      const rows = await ctx.store.db.selectFrom('messages').select('id').where('batch_id', '=', batch.id).orderBy('id').execute();
      const messages = await Promise.all(rows.map((r) => messageFromDb(ctx, r.id)));
      assert.deepEqual(
        messages.map((m) => m.MobilePhone),
        eligible.map((c) => c.Number),
        'one message per eligible member, in contact order',
      );
      for (const m of messages) {
        assert.deepEqual(
          [m.BatchId, m.Status_Id, m.Segments, m.Credits, m.Number, m.Direction],
          [batch.id, 1, 2, 2, FIRST_ACTIVE, 'Outbound'],
        );
      }
      assert.equal(await balanceOf(ctx, demo.account.id), before - record.Credits);
    }
    // Explicit Number; a group with no members: a batch of none, nothing debited.
    const explicit = await call(ctx.app, {
      method: 'POST',
      path: GROUP,
      token: demo.token,
      body: { GroupId: String(group.Id), Message: 'hi', Number: '15550100001' },
    });
    assert.equal((JSON.parse(explicit.body) as { Number: string }).Number, '15550100001');
    const empty = demo.groups.find((g) => g.PhoneNumberIds.length === 0)!;
    const before = await balanceOf(ctx, demo.account.id);
    const none = await call(ctx.app, { method: 'POST', path: GROUP, token: demo.token, body: { GroupId: empty.Id, Message: 'hi' } });
    assert.equal(none.statusCode, 201);
    assert.deepEqual(
      (({ Recipients, Skipped, Credits }) => ({ Recipients, Skipped, Credits }))(
        JSON.parse(none.body) as { Recipients: number; Skipped: number; Credits: number },
      ),
      { Recipients: 0, Skipped: 0, Credits: 0 },
    );
    assert.equal(await balanceOf(ctx, demo.account.id), before);
  },
);

storeTest('sms/send-group: every rule with its exact message; not enough credits for every recipient queues none', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const other = await ctx.seed('Other account');
  const group = demo.groups.find((g) => g.PhoneNumberIds.length > 2)!;
  await expectRejected(ctx, demo, GROUP, [
    {
      name: 'empty body',
      body: {},
      errors: [fieldError('Message', 'Message cannot be blank.'), fieldError('GroupId', 'Group Id cannot be blank.')],
    },
    { name: 'no group', body: { Message: 'hi' }, errors: [fieldError('GroupId', 'Group Id cannot be blank.')] },
    {
      name: 'group not an integer',
      body: { Message: 'hi', GroupId: 'x' },
      errors: [fieldError('GroupId', 'Group Id must be an integer.')],
    },
    { name: 'unknown group', body: { Message: 'hi', GroupId: UNUSED_ID }, errors: [fieldError('GroupId', 'Group Id is invalid.')] },
    {
      name: "another account's group",
      body: { Message: 'hi', GroupId: other.groups[0]!.Id },
      errors: [fieldError('GroupId', 'Group Id is invalid.')],
    },
    {
      name: 'message too long',
      body: { GroupId: group.Id, Message: 'é'.repeat(1601) },
      errors: [fieldError('Message', 'Message should contain at most 1,600 characters.')],
    },
    {
      name: 'number',
      body: { GroupId: group.Id, Message: 'hi', Number: '15550100002' },
      errors: [fieldError('Number', 'Number is invalid.')],
    },
    {
      name: 'MMS',
      body: { GroupId: group.Id, Type_Id: 2, MmsTemplateId: 4 },
      errors: [fieldError('MmsTemplateId', 'Mms Template Id is invalid.')],
    },
    {
      name: 'all in order',
      body: { Message: [], GroupId: -1, Number: 'n', Type_Id: 9 },
      errors: [
        fieldError('Message', 'Message cannot be blank.'),
        fieldError('GroupId', 'Group Id is invalid.'),
        fieldError('Number', 'Number must be an integer.'),
        fieldError('Type_Id', 'Type Id is invalid.'),
      ],
    },
    {
      name: 'an MMS needs no Message, but its template',
      body: { Message: [], GroupId: group.Id, Type_Id: 2 },
      errors: [fieldError('MmsTemplateId', 'Mms Template Id cannot be blank.')],
    },
  ]);
  const eligible = group.PhoneNumberIds.filter((id) => demo.contacts.find((c) => c.Id === id)!.OptedOut === 0).length;
  await setBalance(ctx, demo.account.id, eligible * 2 - 1);
  await expectRejected(ctx, demo, GROUP, [
    {
      name: 'one credit short',
      body: { GroupId: group.Id, Message: 'ж'.repeat(71) },
      errors: [fieldError('Message', `Not enough credits: ${eligible * 2} needed, ${eligible * 2 - 1} available.`)],
    },
  ]);
  await setBalance(ctx, demo.account.id, eligible * 2);
  const res = await call(ctx.app, { method: 'POST', path: GROUP, token: demo.token, body: { GroupId: group.Id, Message: 'ж'.repeat(71) } });
  assert.equal(res.statusCode, 201, res.body);
  assert.equal(await balanceOf(ctx, demo.account.id), 0);
});
