/**
 * sms/index and sms/view (API.md §10.6): the message log newest first, records from the
 * database in JSON and XML, pagination, the four filters and their 422s, 404 for another account's
 * message, and records through a message's life (Sent, Delivered, Undelivered, Failed, Rejected)
 * moved by the dispatcher on a manual clock.
 */
import assert from 'node:assert/strict';
import type { DemoAccount } from '../../../src/domain/demo.ts';
import { insertMessage } from '../../../src/store/repositories/message-log.ts';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import { assert422, assertBody, assertError, call, fieldError, UNUSED_ID, WIRES, XML_DECL } from '../../helpers/operations.ts';
import { accountMessagesFromDb, messageFromDb, setOptedOut, testDispatcher } from '../../helpers/sms.ts';
import { storeTest } from '../../helpers/stores.ts';

const INDEX = '/v1/sms/index';
const VIEW = '/v1/sms/view';

async function send(ctx: TestApp, demo: DemoAccount, body: Record<string, unknown>): Promise<number> {
  const res = await call(ctx.app, { method: 'POST', path: '/v1/sms/send', token: demo.token, body: { Message: 'hello', ...body } });
  assert.equal(res.statusCode, 201, res.body);
  return (JSON.parse(res.body) as { Id: number }[])[0]!.Id;
}

async function sendGroup(ctx: TestApp, demo: DemoAccount, groupId: number): Promise<number> {
  const res = await call(ctx.app, {
    method: 'POST',
    path: '/v1/sms/send-group',
    token: demo.token,
    body: { Message: 'to the group', GroupId: groupId },
  });
  assert.equal(res.statusCode, 201, res.body);
  return (JSON.parse(res.body) as { Id: number }).Id;
}

/** An inbound text in the log (as API.md §11.5 will store it), written through the repository. */
async function inbound(ctx: TestApp, accountId: number, from: string): Promise<number> {
  const row = await insertMessage(
    ctx.store.db,
    accountId,
    {
      direction: 2,
      number: '55155',
      mobilePhone: from,
      message: 'HELLO',
      typeId: 1,
      statusId: 7,
      segments: 1,
      credits: 0,
      batchId: null,
      scheduledMessageId: null,
      optOutExempt: 0,
      dueAt: null,
    },
    Math.floor(Date.now() / 1000),
  );
  return row.id;
}

storeTest("sms/index: the account's log newest first, records from the database (JSON, XML, HEAD), paginated", async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const other = await ctx.seed('Other account');
  for (const wire of WIRES) assertBody(await call(ctx.app, { path: INDEX, token: demo.token, wire }), wire, 200, []);
  const empty = await call(ctx.app, { path: INDEX, token: demo.token, wire: 'xml' });
  assert.equal(empty.body, `${XML_DECL}\n<response/>\n`);
  assert.equal(empty.headers['x-pagination-total-count'], '0');
  for (let i = 0; i < 3; i++) await send(ctx, demo, { MobilePhone: `+1555123456${i}` });
  await sendGroup(ctx, demo, demo.groups.find((g) => g.PhoneNumberIds.length > 0)!.Id);
  await inbound(ctx, demo.account.id, '15551230000');
  await send(ctx, other, { MobilePhone: '+15551234567' }); // never shown to demo
  const all = await accountMessagesFromDb(ctx, demo.account.id);
  assert.ok(all.length > 10);
  assert.deepEqual(
    all.map((m) => m.Id),
    [...all.map((m) => m.Id)].sort((a, b) => b - a),
  );
  for (const wire of WIRES) {
    const res = await call(ctx.app, { path: INDEX, token: demo.token, wire });
    assertBody(res, wire, 200, all);
    assert.equal(res.headers['x-pagination-total-count'], String(all.length));
    assert.equal(res.headers['x-pagination-current-page'], '1');
  }
  const page = await call(ctx.app, { path: INDEX, token: demo.token, query: 'per-page=4&page=2' });
  assertBody(page, 'json', 200, all.slice(4, 8));
  assert.equal(page.headers['x-pagination-page-count'], String(Math.ceil(all.length / 4)));
  const base = `http://localhost:80${INDEX}?access_token=${demo.token}`;
  assert.ok(String(page.headers.link).startsWith(`<${base}&per-page=4&page=2>; rel=self, <${base}&per-page=4&page=1>; rel=first`));
  const head = await ctx.app.inject({ method: 'HEAD', url: `${INDEX}?access_token=${demo.token}` });
  assert.equal(head.statusCode, 200);
  assert.equal(head.body, '');
  assert.equal(head.headers['x-pagination-total-count'], String(all.length));
});

storeTest("sms/index filters: Direction, Status_Id, MobilePhone (any format), BatchId (another account's: empty), combined", async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const other = await ctx.seed('Other account');
  await send(ctx, demo, { MobilePhone: '+15005550001' });
  await send(ctx, demo, { MobilePhone: '+15005550002' });
  await send(ctx, demo, { MobilePhone: '+15551234567' });
  await send(ctx, demo, { MobilePhone: '(555) 123-4567' });
  const group = demo.groups.find((g) => g.PhoneNumberIds.length > 1)!;
  const batchId = await sendGroup(ctx, demo, group.Id);
  const otherBatch = await sendGroup(ctx, other, other.groups.find((g) => g.PhoneNumberIds.length > 0)!.Id);
  await inbound(ctx, demo.account.id, '15551234567');
  const contact = demo.contacts.find((c) => c.OptedOut === 0)!;
  await send(ctx, demo, { PhoneNumberId: contact.Id });
  await setOptedOut(ctx, demo.account.id, contact.Number, 1); // opted out while queued: Rejected
  const { dispatcher, clock } = testDispatcher(ctx);
  await dispatcher.drain();
  clock.advance(1000);
  await dispatcher.drain();
  const all = await accountMessagesFromDb(ctx, demo.account.id);
  const check = async (query: string, expected: typeof all) => {
    for (const wire of WIRES) {
      const res = await call(ctx.app, { path: INDEX, token: demo.token, query, wire });
      assertBody(res, wire, 200, expected);
      assert.equal(res.headers['x-pagination-total-count'], String(expected.length), query);
    }
  };
  await check(
    'Direction=Outbound',
    all.filter((m) => m.Direction === 'Outbound'),
  );
  await check(
    'Direction=Inbound',
    all.filter((m) => m.Direction === 'Inbound'),
  );
  for (const s of [1, 2, 3, 4, 5, 6, 7])
    await check(
      `Status_Id=${s}`,
      all.filter((m) => m.Status_Id === s),
    );
  assert.ok(
    [3, 4, 5, 6, 7].every((s) => all.some((m) => m.Status_Id === s)),
    'the log holds Delivered, Undelivered, Failed, Rejected and Received',
  );
  for (const phone of ['%2B15551234567', '15551234567', '(555)%20123-4567', '5551234567'])
    await check(
      `MobilePhone=${phone}`,
      all.filter((m) => m.MobilePhone === '15551234567'),
    );
  await check(
    `BatchId=${batchId}`,
    all.filter((m) => m.BatchId === batchId),
  );
  await check(
    `BatchId=%2B${batchId}`,
    all.filter((m) => m.BatchId === batchId),
  );
  for (const id of [otherBatch, UNUSED_ID, 0, '9223372036854775807']) await check(`BatchId=${id}`, []);
  await check(
    'Direction=Outbound&Status_Id=3&MobilePhone=15551234567',
    all.filter((m) => m.Direction === 'Outbound' && m.Status_Id === 3 && m.MobilePhone === '15551234567'),
  );
  await check(`BatchId=${batchId}&Status_Id=1`, []);
  await check('Direction=&Status_Id=&MobilePhone=&BatchId=', all);
});

storeTest('sms/index: a bad filter value is a 422 on that field, in order; no pagination headers', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const cases: [string, { field: string; message: string }[]][] = [
    ['Direction=outbound', [fieldError('Direction', 'Direction is invalid.')]],
    ['Direction=Both', [fieldError('Direction', 'Direction is invalid.')]],
    ['Direction[]=Outbound', [fieldError('Direction', 'Direction is invalid.')]],
    ['Status_Id=0', [fieldError('Status_Id', 'Status Id is invalid.')]],
    ['Status_Id=8', [fieldError('Status_Id', 'Status Id is invalid.')]],
    ['Status_Id=sent', [fieldError('Status_Id', 'Status Id must be an integer.')]],
    ['MobilePhone=abc', [fieldError('MobilePhone', 'Mobile Phone is invalid.')]],
    ['BatchId=1.5', [fieldError('BatchId', 'Batch Id must be an integer.')]],
    [
      'BatchId=x&MobilePhone=1&Status_Id=9&Direction=in',
      [
        fieldError('Direction', 'Direction is invalid.'),
        fieldError('Status_Id', 'Status Id is invalid.'),
        fieldError('MobilePhone', 'Mobile Phone is invalid.'),
        fieldError('BatchId', 'Batch Id must be an integer.'),
      ],
    ],
  ];
  for (const [query, errors] of cases) {
    for (const wire of WIRES) {
      const res = await call(ctx.app, { path: INDEX, token: demo.token, query, wire });
      assert422(res, errors, wire);
      assert.equal(res.headers['x-pagination-total-count'], undefined);
      assert.equal(res.headers.link, undefined);
    }
  }
});

storeTest('sms/view: one record through its life (Queued, Sent, Delivered/Undelivered/Failed/Rejected); 404 and 400', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const other = await ctx.seed('Other account');
  const contact = demo.contacts.find((c) => c.OptedOut === 0)!;
  const ids = {
    delivered: await send(ctx, demo, { MobilePhone: '+15551234567' }),
    undelivered: await send(ctx, demo, { MobilePhone: '+15005550001' }),
    failed: await send(ctx, demo, { MobilePhone: '+15005550002' }),
    noReceipt: await send(ctx, demo, { MobilePhone: '+15005550003' }),
    rejected: await send(ctx, demo, { PhoneNumberId: contact.Id }),
  };
  const view = async (id: number) => {
    const expected = await messageFromDb(ctx, id);
    for (const wire of WIRES)
      assertBody(await call(ctx.app, { path: VIEW, token: demo.token, query: `id=${id}`, wire }), wire, 200, expected);
    return expected;
  };
  assert.equal((await view(ids.delivered)).Status_Description, 'Queued');
  await setOptedOut(ctx, demo.account.id, contact.Number, 1); // opted out after it was queued
  const { dispatcher, clock } = testDispatcher(ctx, { receiptMs: 2000 });
  await dispatcher.drain();
  const sent = await view(ids.delivered);
  assert.deepEqual(
    [sent.Status_Id, sent.Status_Description, sent.DateSent, sent.DateDelivered],
    [2, 'Sent', new Date(clock.nowSeconds() * 1000).toISOString().slice(0, 19).replace('T', ' '), null],
  );
  clock.advance(2000);
  await dispatcher.drain();
  const delivered = await view(ids.delivered);
  assert.deepEqual([delivered.Status_Description, delivered.ErrorCode], ['Delivered', '']);
  assert.ok(delivered.DateDelivered !== null && delivered.DateDelivered > delivered.DateSent!);
  assert.deepEqual(
    (({ Status_Description, ErrorCode, DateDelivered }) => [Status_Description, ErrorCode, DateDelivered])(await view(ids.undelivered)),
    ['Undelivered', 'UNDELIV', null],
  );
  assert.deepEqual((({ Status_Description, ErrorCode, DateSent }) => [Status_Description, ErrorCode, DateSent])(await view(ids.failed)), [
    'Failed',
    'ESME_RSUBMITFAIL',
    null,
  ]);
  assert.deepEqual((({ Status_Description, DateDelivered }) => [Status_Description, DateDelivered])(await view(ids.noReceipt)), [
    'Sent',
    null,
  ]);
  assert.deepEqual((({ Status_Description, ErrorCode, DateSent }) => [Status_Description, ErrorCode, DateSent])(await view(ids.rejected)), [
    'Rejected',
    'OPTED_OUT',
    null,
  ]);
  const d = await messageFromDb(ctx, ids.delivered);
  assert.equal(
    (await call(ctx.app, { path: VIEW, token: demo.token, query: `id=${ids.delivered}`, wire: 'xml' })).body,
    `${XML_DECL}\n<response><Id>${d.Id}</Id><Direction>Outbound</Direction><Number>55155</Number><MobilePhone>15551234567</MobilePhone>` +
      `<Message>hello</Message><Type_Id>1</Type_Id><Type_Description>SMS</Type_Description><Status_Id>3</Status_Id>` +
      `<Status_Description>Delivered</Status_Description><Segments>1</Segments><Credits>1</Credits><BatchId></BatchId>` +
      `<ScheduledMessageId></ScheduledMessageId><ErrorCode></ErrorCode><DateCreated>${d.DateCreated}</DateCreated><DateSent>${d.DateSent}</DateSent>` +
      `<DateDelivered>${d.DateDelivered}</DateDelivered></response>\n`,
  );
  const theirs = await send(ctx, other, { MobilePhone: '+15551234567' });
  for (const wire of WIRES) {
    assertError(
      await call(ctx.app, { path: VIEW, token: demo.token, query: `id=${theirs}`, wire }),
      404,
      `Object not found: ${theirs}`,
      wire,
    );
    assertError(
      await call(ctx.app, { path: VIEW, token: demo.token, query: `id=${UNUSED_ID}`, wire }),
      404,
      `Object not found: ${UNUSED_ID}`,
      wire,
    );
  }
  assertError(await call(ctx.app, { path: VIEW, token: demo.token }), 400, 'Missing required parameters: id');
  assertError(await call(ctx.app, { path: VIEW, token: demo.token, query: 'id=abc' }), 400, 'Invalid data received for parameter "id".');
});
