/**
 * sms/preview (API.md §14.3.2), over inject, in JSON and XML, on each store: 200 with the text as
 * `send` would queue it (merge fields, tracked links) and its Encoding, Segments and Credits; an
 * MMS answers the template's Message merged, `Encoding` `""`, one segment, the MMS price; every
 * bad body gets exactly `send`'s 422 (same messages, same order), `Not enough credits` included;
 * nothing is stored or debited; Idempotency-Key is honoured as on `send`.
 */
import assert from 'node:assert/strict';
import type { DemoAccount } from '../../../src/domain/demo.ts';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import { assert422, assertBody, call, fieldError, snapshotAccount, UNUSED_ID, WIRES } from '../../helpers/operations.ts';
import { createMmsTemplate, setBalance } from '../../helpers/sms.ts';
import { storeTest } from '../../helpers/stores.ts';

const PREVIEW = '/v1/sms/preview';
const SEND = '/v1/sms/send';
const DOMAIN = 'https://go.example.com';

const optedIn = (demo: DemoAccount) => demo.contacts.find((c) => c.OptedOut === 0)!;
const optedOut = (demo: DemoAccount) => demo.contacts.find((c) => c.OptedOut === 1)!;

/** Every row a preview must leave alone: the account's data, messages, batches, links and idempotency keys. */
async function snapshot(ctx: TestApp, accountId: number) {
  const base = await snapshotAccount(ctx, accountId);
  const db = ctx.store.db;
  base.messages = await db.selectFrom('messages').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
  base.batches = await db.selectFrom('batches').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
  base.links = await db.selectFrom('message_links').selectAll().orderBy('id').execute();
  base.idempotency = await db.selectFrom('idempotency_keys').selectAll().where('account_id', '=', accountId).orderBy('key').execute();
  return base;
}

storeTest(
  'sms/preview: 200 {Message, Encoding, Segments, Credits} as send would queue it (JSON, XML); nothing stored or debited',
  async (t) => {
    const ctx = await buildTestApp(t, { MSGSVC_SMS_SEGMENT_CREDITS: '2', MSGSVC_LINK_DOMAIN: DOMAIN });
    const demo = await ctx.seed();
    const c = optedIn(demo);
    await ctx.store.db.updateTable('contacts').set({ first_name: 'Ann', city: 'Köln' }).where('id', '=', c.Id).execute();
    const before = await snapshot(ctx, demo.account.id);
    const cases: [Record<string, unknown>, { Message: string; Encoding: string; Segments: number; Credits: number }][] = [
      [
        { Message: 'Hi {FirstName} {{ok}}', PhoneNumberId: c.Id },
        { Message: 'Hi Ann {ok}', Encoding: 'GSM-7', Segments: 1, Credits: 2 },
      ],
      [
        { Message: 'Hi {FirstName} from {City}', MobilePhone: c.Number },
        { Message: 'Hi Ann from Köln', Encoding: 'GSM-7', Segments: 1, Credits: 2 },
      ],
      [
        { Message: '€'.repeat(81), MobilePhone: '+15551234567' },
        { Message: '€'.repeat(81), Encoding: 'GSM-7', Segments: 2, Credits: 4 },
      ],
      [
        { Message: 'Привет {FirstName} 😀', PhoneNumberId: c.Id },
        { Message: 'Привет Ann 😀', Encoding: 'UCS-2', Segments: 1, Credits: 2 },
      ],
      [
        { Message: 'x'.repeat(71) + 'ж', MobilePhone: '+15551234567' },
        { Message: 'x'.repeat(71) + 'ж', Encoding: 'UCS-2', Segments: 2, Credits: 4 },
      ],
    ];
    for (const [body, expected] of cases) {
      for (const wire of WIRES) {
        assertBody(await call(ctx.app, { method: 'POST', path: PREVIEW, token: demo.token, wire, body }), wire, 200, expected);
      }
    }
    // Tracked links: shortened with codes that are not kept.
    for (const wire of WIRES) {
      const res = await call(ctx.app, {
        method: 'POST',
        path: PREVIEW,
        token: demo.token,
        wire,
        body: { Message: 'Go https://x.io/a.', MobilePhone: '+15551234567', ShortenLinks: 1 },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.match(res.body, new RegExp(`Go ${DOMAIN}/l/[A-Za-z0-9_-]{7}\\.`));
    }
    assert.deepEqual(await snapshot(ctx, demo.account.id), before, 'no message, no link, no debit');
  },
);

storeTest(
  'sms/preview of an MMS: the template\'s Message merged for the recipient, Encoding "", Segments 1, Credits the MMS price',
  async (t) => {
    const ctx = await buildTestApp(t, { MSGSVC_MMS_CREDITS: '7' });
    const demo = await ctx.seed();
    const c = optedIn(demo);
    await ctx.store.db.updateTable('contacts').set({ first_name: 'Bo' }).where('id', '=', c.Id).execute();
    const id = await createMmsTemplate(ctx, demo, 'Sale for {FirstName} {{today}} 😀');
    for (const wire of WIRES) {
      const res = await call(ctx.app, {
        method: 'POST',
        path: PREVIEW,
        token: demo.token,
        wire,
        body: { PhoneNumberId: c.Id, Type_Id: 2, MmsTemplateId: id },
      });
      assertBody(res, wire, 200, { Message: 'Sale for Bo {today} 😀', Encoding: '', Segments: 1, Credits: 7 });
    }
    await setBalance(ctx, demo.account.id, 6);
    assert422(
      await call(ctx.app, {
        method: 'POST',
        path: PREVIEW,
        token: demo.token,
        body: { PhoneNumberId: c.Id, Type_Id: 2, MmsTemplateId: id },
      }),
      [fieldError('Message', 'Not enough credits: 7 needed, 6 available.')],
    );
  },
);

storeTest("sms/preview: every bad body gets send's exact 422 (same messages, same order), in JSON and XML", async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const other = await ctx.seed('Other');
  const ok = { Message: 'hi', MobilePhone: '+15551234567' };
  const bodies: unknown[] = [
    {},
    null,
    { Message: 'hi' },
    { MobilePhone: '+15551234567' },
    { ...ok, Message: 'x'.repeat(1601) },
    { ...ok, Message: 5 },
    { ...ok, MobilePhone: 'abc' },
    { Message: 'hi', PhoneNumberId: '1.5' },
    { Message: 'hi', PhoneNumberId: UNUSED_ID },
    { Message: 'hi', PhoneNumberId: other.contacts[0]!.Id },
    { Message: 'hi', PhoneNumberId: optedOut(demo).Id },
    { Message: 'hi', MobilePhone: optedOut(demo).Number },
    { ...ok, Number: 'abc' },
    { ...ok, Number: '99999' },
    { ...ok, Type_Id: 3 },
    { ...ok, Type_Id: 2 },
    { ...ok, Type_Id: 2, MmsTemplateId: UNUSED_ID },
    { ...ok, ShortenLinks: 1 },
    { ...ok, ShortenLinks: 'x' },
    { Message: 7, MobilePhone: 'abc', Number: 'x', Type_Id: 9, MmsTemplateId: 'y', ShortenLinks: 5 },
    { MobilePhone: '+15551234567', Number: '99999', Type_Id: 2, MmsTemplateId: 5, ShortenLinks: 2 },
  ];
  const before = await snapshot(ctx, demo.account.id);
  for (const body of bodies) {
    for (const wire of WIRES) {
      const sent = await call(ctx.app, { method: 'POST', path: SEND, token: demo.token, wire, body });
      const previewed = await call(ctx.app, { method: 'POST', path: PREVIEW, token: demo.token, wire, body });
      assert.equal(sent.statusCode, 422, `${JSON.stringify(body)}: ${sent.body}`);
      assert.equal(previewed.statusCode, 422, previewed.body);
      assert.equal(previewed.body, sent.body, `${JSON.stringify(body)} (${wire})`);
      assert.equal(previewed.headers['content-type'], sent.headers['content-type']);
    }
  }
  assert.deepEqual(await snapshot(ctx, demo.account.id), before);
});

storeTest("sms/preview: not enough credits gives send's 422 on Message; exactly enough answers 200", async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const body = { Message: 'b'.repeat(200), MobilePhone: '+15551234567' };
  await setBalance(ctx, demo.account.id, 1);
  for (const wire of WIRES) {
    const errors = [fieldError('Message', 'Not enough credits: 2 needed, 1 available.')];
    assert422(await call(ctx.app, { method: 'POST', path: PREVIEW, token: demo.token, wire, body }), errors, wire);
    assert422(await call(ctx.app, { method: 'POST', path: SEND, token: demo.token, wire, body }), errors, wire);
  }
  await setBalance(ctx, demo.account.id, 2);
  const res = await call(ctx.app, { method: 'POST', path: PREVIEW, token: demo.token, body });
  assertBody(res, 'json', 200, { Message: body.Message, Encoding: 'GSM-7', Segments: 2, Credits: 2 });
  await setBalance(ctx, demo.account.id, 0);
  assert422(
    await call(ctx.app, { method: 'POST', path: PREVIEW, token: demo.token, body: { Message: 'hi', MobilePhone: '+15551234567' } }),
    [fieldError('Message', 'Not enough credits: 1 needed, 0 available.')],
  );
});

storeTest('sms/preview honours Idempotency-Key (a replay answers the same body, replayed); only POST is allowed', async (t) => {
  const ctx = await buildTestApp(t, { MSGSVC_LINK_DOMAIN: DOMAIN });
  const demo = await ctx.seed();
  const preview = () =>
    ctx.app.inject({
      method: 'POST',
      url: `${PREVIEW}?access_token=${demo.token}`,
      headers: { 'content-type': 'application/json', 'idempotency-key': 'preview-1' },
      payload: JSON.stringify({ Message: 'https://x.io', MobilePhone: '+15551234567', ShortenLinks: 1 }),
    });
  const first = await preview();
  assert.equal(first.statusCode, 200, first.body);
  const again = await preview();
  assert.equal(again.statusCode, 200);
  assert.equal(again.body, first.body, 'the same codes: the stored answer');
  assert.equal(again.headers['idempotent-replayed'], 'true');
  const get = await ctx.app.inject({ method: 'GET', url: `${PREVIEW}?access_token=${demo.token}` });
  assert.equal(get.statusCode, 405);
  assert.match(String(get.headers.allow), /POST/);
});
