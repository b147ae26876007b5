/**
 * Inbound texts, opt-out and keywords at work (API.md §11.5), on each store, driven through `POST /v1/sandbox/inbound` (API.md §11.3) in JSON and XML and through
 * the dispatcher's carrier sink: the Received record; the six STOP words, START/UNSTOP, HELP/INFO
 * (trimmed, case-insensitive, whole text only) with their free, opt-out-exempt replies whose texts
 * are settings; a keyword as first word joining its groups with a paid autoreply (and the autoreply
 * Rejected at once when it cannot go out); the shared short code rules with two and three
 * accounts; and, from then on, sends to an opted-out number refused (422) or Rejected with a refund.
 * Expected records are built from the database rows and the API.md §10.6/API.md §11.5 tables, never from src's mappers.
 */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { DemoAccount } from '../../../src/domain/demo.ts';
import { ConfigError, loadConfig } from '../../../src/config.ts';
import { createDispatcher } from '../../../src/dispatch/index.ts';
import { createSandboxCarrier } from '../../../src/dispatch/sandbox.ts';
import { createManualClock } from '../../../src/lib/time.ts';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import {
  assert422,
  assertBody,
  call,
  contactFromDb,
  fieldError,
  fmtTime,
  groupFromDb,
  isXml,
  WIRES,
  type Wire,
} from '../../helpers/operations.ts';
import { balanceOf, messageFromDb, setBalance, setNumberStatus, testDispatcher } from '../../helpers/sms.ts';
import { storeTest } from '../../helpers/stores.ts';

const INBOUND = '/v1/sandbox/inbound';
const SHORT = '55155'; // every demo account holds it: two seeded accounts share a short code
const SENDER = '+15551234567';
const SENDER_DIGITS = '15551234567';
// API.md §11.5, word for word (the defaults of the three settings).
const STOP_REPLY = 'You have been unsubscribed and will receive no more messages. Reply START to resubscribe.';
const START_REPLY = 'You have been resubscribed. Reply STOP to unsubscribe.';
const HELP_REPLY = 'Reply STOP to unsubscribe.';

type Row = Awaited<ReturnType<typeof messageFromDb>>;

/**
 * POST sandbox/inbound as `demo` and check the 201 byte for byte: the list of the inbound records
 * the call stored for the caller's account, as the database holds them, `Location` to sms/view for one.
 */
async function inbound(ctx: TestApp, demo: DemoAccount, body: Record<string, unknown>, wire: Wire = 'json'): Promise<Row[]> {
  const res = await call(ctx.app, { method: 'POST', path: INBOUND, token: demo.token, wire, body: { From: SENDER, To: SHORT, ...body } });
  assert.equal(res.statusCode, 201, res.body);
  const ids = idsOf(res, wire);
  const records: Row[] = [];
  for (const id of ids) records.push(await messageFromDb(ctx, id));
  assertBody(res, wire, 201, records);
  assert.equal(res.headers.location, records.length === 1 ? `http://localhost:80/v1/sms/view?id=${records[0]!.Id}` : undefined);
  for (const r of records) {
    assert.deepEqual(
      { Direction: r.Direction, Type_Id: r.Type_Id, Status_Id: r.Status_Id, Status_Description: r.Status_Description, Credits: r.Credits },
      { Direction: 'Inbound', Type_Id: 1, Status_Id: 7, Status_Description: 'Received', Credits: 0 },
    );
  }
  return records;
}

function idsOf(res: LightMyRequestResponse, wire: Wire): number[] {
  if (!isXml(wire)) return (JSON.parse(res.body) as { Id: number }[]).map((r) => r.Id);
  return [...res.body.matchAll(/<item><Id>(\d+)<\/Id>/g)].map((m) => Number(m[1]));
}

/** Every message of the account, oldest first, as Message records from the database. */
async function log(ctx: TestApp, accountId: number): Promise<Row[]> {
  const rows = await ctx.store.db.selectFrom('messages').select('id').where('account_id', '=', accountId).orderBy('id').execute();
  const out: Row[] = [];
  for (const r of rows) out.push(await messageFromDb(ctx, r.id));
  return out;
}

/** The account's messages written after `afterId`, as compact strings: `Direction Status Number→MobilePhone Credits "text"`. */
async function newMessages(ctx: TestApp, accountId: number, afterId: number): Promise<string[]> {
  return (await log(ctx, accountId))
    .filter((m) => m.Id > afterId)
    .map(
      (m) =>
        `${m.Direction} ${m.Status_Description}${m.ErrorCode ? ` ${m.ErrorCode}` : ''} ${m.Number}→${m.MobilePhone} ${m.Credits} "${m.Message}"`,
    );
}

async function lastId(ctx: TestApp): Promise<number> {
  const r = await ctx.store.db
    .selectFrom('messages')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirst();
  return Number(r?.id ?? 0);
}

async function contactOf(ctx: TestApp, accountId: number, digits: string) {
  const r = await ctx.store.db
    .selectFrom('contacts')
    .select('id')
    .where('account_id', '=', accountId)
    .where('number', '=', digits)
    .executeTakeFirst();
  return r ? contactFromDb(ctx, r.id) : undefined;
}

/** Runs a dispatcher over everything due, then again once the sandbox's receipts are due. */
async function deliverAll(ctx: TestApp): Promise<void> {
  const { dispatcher, clock } = testDispatcher(ctx, { receiptMs: 1000 });
  await dispatcher.drain();
  clock.advance(1000);
  await dispatcher.drain();
}

async function reserve(ctx: TestApp, demo: DemoAccount, Keyword: string, AutoreplyMessage?: string, Number = SHORT): Promise<number> {
  const res = await call(ctx.app, {
    method: 'POST',
    path: '/v1/keyword/reserve',
    token: demo.token,
    body: { Keyword, Number, ...(AutoreplyMessage !== undefined ? { AutoreplyMessage } : {}) },
  });
  assert.equal(res.statusCode, 201, res.body);
  return (JSON.parse(res.body) as { Id: number }[])[0]!.Id;
}

async function createGroup(ctx: TestApp, demo: DemoAccount, fname: string, KeywordId: number): Promise<number> {
  const res = await call(ctx.app, { method: 'POST', path: '/v1/groups/create', token: demo.token, body: { fname, KeywordId } });
  assert.equal(res.statusCode, 201, res.body);
  return (JSON.parse(res.body) as { Id: number }).Id;
}

/** Sets a contact's DateUpdated into the past, so that a change shows. */
async function age(ctx: TestApp, accountId: number, digits: string): Promise<void> {
  await ctx.store.db
    .updateTable('contacts')
    .set({ updated_at: 1_000_000_000 })
    .where('account_id', '=', accountId)
    .where('number', '=', digits)
    .execute();
}

// ------------------------------------------------------------------ the Received record

storeTest(
  'API.md §11.5: an inbound text is stored as a Message (Inbound, 7 Received, 0 credits, SMS) for the account holding the number; any other text does nothing more (JSON, XML)',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const balance = await balanceOf(ctx, demo.account.id);
    const contacts = (await ctx.store.db.selectFrom('contacts').select('id').where('account_id', '=', demo.account.id).execute()).length;
    for (const wire of WIRES) {
      const before = await lastId(ctx);
      const text = `Hello ${wire} < & > ${'ж'.repeat(70)}`;
      const [r] = await inbound(ctx, demo, { Message: text, To: '+1 555 010 0001' }, wire);
      assert.deepEqual(
        { ...r!, Id: 0, DateCreated: '' },
        {
          Id: 0,
          Direction: 'Inbound',
          Number: '15550100001',
          MobilePhone: SENDER_DIGITS,
          Message: text,
          Type_Id: 1,
          Type_Description: 'SMS',
          Status_Id: 7,
          Status_Description: 'Received',
          Segments: 2,
          Credits: 0,
          BatchId: '',
          ScheduledMessageId: '',
          ErrorCode: '',
          DateCreated: '',
          DateSent: null,
          DateDelivered: null,
        },
      );
      assert.deepEqual(
        await newMessages(ctx, demo.account.id, before),
        [`Inbound Received 15550100001→${SENDER_DIGITS} 0 "${text}"`],
        'stored, and nothing sent',
      );
    }
    // Not a carrier word as a whole text, nor a reserved keyword: stored only.
    for (const text of [
      'STOP please',
      'please STOP',
      'STOP.',
      'S T O P',
      'ſtop',
      'ＳＴＯＰ',
      'HELP me',
      'startup',
      'information',
      'join',
    ]) {
      const before = await lastId(ctx);
      await inbound(ctx, demo, { Message: text });
      assert.equal((await newMessages(ctx, demo.account.id, before)).length, 1, JSON.stringify(text));
    }
    assert.equal(
      (await ctx.store.db.selectFrom('contacts').select('id').where('account_id', '=', demo.account.id).execute()).length,
      contacts,
      'no contact created',
    );
    assert.equal(await balanceOf(ctx, demo.account.id), balance, 'receiving is free');
    // sms/index shows them with Direction=Inbound.
    const listed = await call(ctx.app, { path: '/v1/sms/index', token: demo.token, query: 'Direction=Inbound' });
    assert.equal((JSON.parse(listed.body) as unknown[]).length, WIRES.length + 10);
  },
);

// ------------------------------------------------------------------ STOP, START, HELP

storeTest(
  'API.md §11.5 rule 1: each STOP word (trimmed, any case) opts the sender out, creating the contact if unknown, with ONE free confirmation',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const balance = await balanceOf(ctx, demo.account.id);
    const words = ['STOP', 'stopall', ' UnSubscribe ', '\tcancel\n', 'End', 'qUIT', 'Stop'];
    for (const [i, word] of words.entries()) {
      const from = `+1555300${String(1000 + i)}`;
      const digits = from.slice(1);
      const before = await lastId(ctx);
      const [r] = await inbound(ctx, demo, { From: from, Message: word }, WIRES[i % WIRES.length]);
      assert.equal(r!.Message, word, 'the text is stored as sent');
      const contact = await contactOf(ctx, demo.account.id, digits);
      assert.ok(contact, `${JSON.stringify(word)}: the unknown sender becomes a contact`);
      assert.deepEqual(
        { ...contact, Id: 0, DateCreated: '', DateUpdated: '' },
        {
          Id: 0,
          Number: digits,
          OptedOut: 1,
          FirstName: '',
          LastName: '',
          BirthDay: '0000-00-00',
          Email: '',
          Zip: '',
          City: '',
          DateCreated: '',
          DateUpdated: '',
          GroupIds: [],
          CustomFieldIds: [],
        },
      );
      assert.deepEqual(await newMessages(ctx, demo.account.id, before), [
        `Inbound Received ${SHORT}→${digits} 0 "${word}"`,
        `Outbound Queued ${SHORT}→${digits} 0 "${STOP_REPLY}"`,
      ]);
    }
    // A known contact who had not opted out: OptedOut 1, DateUpdated now.
    const known = demo.contacts.find((c) => c.OptedOut === 0)!;
    await age(ctx, demo.account.id, known.Number);
    await inbound(ctx, demo, { From: `+${known.Number}`, Message: 'stop' });
    const after = (await contactOf(ctx, demo.account.id, known.Number))!;
    assert.equal(after.OptedOut, 1);
    assert.notEqual(after.DateUpdated, fmtTime(1_000_000_000), 'DateUpdated changed');
    assert.deepEqual({ ...after, OptedOut: 0, DateUpdated: '' }, { ...known, DateUpdated: '' }, 'nothing else changed');
    // Already opted out: no change to the contact, the confirmation all the same.
    await age(ctx, demo.account.id, known.Number);
    const before = await lastId(ctx);
    await inbound(ctx, demo, { From: `+${known.Number}`, Message: 'QUIT' });
    assert.equal((await contactOf(ctx, demo.account.id, known.Number))!.DateUpdated, fmtTime(1_000_000_000));
    assert.equal((await newMessages(ctx, demo.account.id, before))[1], `Outbound Queued ${SHORT}→${known.Number} 0 "${STOP_REPLY}"`);
    assert.equal(await balanceOf(ctx, demo.account.id), balance, 'confirmations are free');
  },
);

storeTest(
  'API.md §11.5 rules 2 and 3: START/UNSTOP clear OptedOut with a free confirmation; HELP/INFO get a free reply and change no contact',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const balance = await balanceOf(ctx, demo.account.id);
    const out = demo.contacts.filter((c) => c.OptedOut === 1);
    assert.ok(out.length >= 2);
    for (const [i, word] of ['START', ' unstop '].entries()) {
      const c = out[i]!;
      await age(ctx, demo.account.id, c.Number);
      const before = await lastId(ctx);
      await inbound(ctx, demo, { From: `+${c.Number}`, Message: word }, WIRES[i + 1]);
      const after = (await contactOf(ctx, demo.account.id, c.Number))!;
      assert.equal(after.OptedOut, 0, word);
      assert.notEqual(after.DateUpdated, fmtTime(1_000_000_000));
      assert.deepEqual(await newMessages(ctx, demo.account.id, before), [
        `Inbound Received ${SHORT}→${c.Number} 0 "${word}"`,
        `Outbound Queued ${SHORT}→${c.Number} 0 "${START_REPLY}"`,
      ]);
    }
    // START from an unknown sender: no contact is created; the confirmation goes all the same.
    let before = await lastId(ctx);
    await inbound(ctx, demo, { From: '+15553009999', Message: 'Start' });
    assert.equal(await contactOf(ctx, demo.account.id, '15553009999'), undefined);
    assert.deepEqual(await newMessages(ctx, demo.account.id, before), [
      `Inbound Received ${SHORT}→15553009999 0 "Start"`,
      `Outbound Queued ${SHORT}→15553009999 0 "${START_REPLY}"`,
    ]);

    for (const [i, word] of ['HELP', 'info', ' Help\t'].entries()) {
      const snapshot = await ctx.store.db
        .selectFrom('contacts')
        .selectAll()
        .where('account_id', '=', demo.account.id)
        .orderBy('id')
        .execute();
      before = await lastId(ctx);
      await inbound(ctx, demo, { From: i === 0 ? `+${out[2]!.Number}` : '+15553008888', Message: word }, WIRES[i]);
      const to = i === 0 ? out[2]!.Number : '15553008888';
      assert.deepEqual(await newMessages(ctx, demo.account.id, before), [
        `Inbound Received ${SHORT}→${to} 0 "${word}"`,
        `Outbound Queued ${SHORT}→${to} 0 "${HELP_REPLY}"`,
      ]);
      assert.deepEqual(
        await ctx.store.db.selectFrom('contacts').selectAll().where('account_id', '=', demo.account.id).orderBy('id').execute(),
        snapshot,
        'HELP changes no contact',
      );
    }
    assert.equal(await balanceOf(ctx, demo.account.id), balance);
  },
);

storeTest('API.md §11.5: the three reply texts are settings (MSGSVC_STOP_REPLY, MSGSVC_START_REPLY, MSGSVC_HELP_REPLY)', async (t) => {
  const defaults = loadConfig({});
  assert.deepEqual([defaults.stopReply, defaults.startReply, defaults.helpReply], [STOP_REPLY, START_REPLY, HELP_REPLY]);
  assert.deepEqual(loadConfig({ MSGSVC_STOP_REPLY: '  ', MSGSVC_HELP_REPLY: '' }).stopReply, STOP_REPLY, 'blank: the default');
  assert.throws(
    () => loadConfig({ MSGSVC_HELP_REPLY: 'x'.repeat(1601) }),
    (err: unknown) => err instanceof ConfigError && /MSGSVC_HELP_REPLY/.test(err.message),
  );
  const ctx = await buildTestApp(t, {
    MSGSVC_STOP_REPLY: 'Bye from Acme.',
    MSGSVC_START_REPLY: 'Welcome back to Acme!',
    MSGSVC_HELP_REPLY: 'Acme: call 555-0100. Reply STOP to opt out.',
  });
  const demo = await ctx.seed();
  const before = await lastId(ctx);
  for (const word of ['STOP', 'START', 'HELP']) await inbound(ctx, demo, { Message: word });
  const replies = (await newMessages(ctx, demo.account.id, before)).filter((m) => m.startsWith('Outbound'));
  assert.deepEqual(replies, [
    `Outbound Queued ${SHORT}→${SENDER_DIGITS} 0 "Bye from Acme."`,
    `Outbound Queued ${SHORT}→${SENDER_DIGITS} 0 "Welcome back to Acme!"`,
    `Outbound Queued ${SHORT}→${SENDER_DIGITS} 0 "Acme: call 555-0100. Reply STOP to opt out."`,
  ]);
});

storeTest(
  'API.md §11.6: after STOP, sends are refused (422), a message queued before is Rejected with a refund, and the confirmations still go (exempt); START lifts it',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const start = await balanceOf(ctx, demo.account.id);
    const send = (body: Record<string, unknown>, wire: Wire = 'json') =>
      call(ctx.app, {
        method: 'POST',
        path: '/v1/sms/send',
        token: demo.token,
        wire,
        body: { Message: 'Our sale starts today!', ...body },
      });
    const queued = await send({ MobilePhone: SENDER, Message: 'x'.repeat(200) });
    assert.equal(queued.statusCode, 201);
    const queuedId = (JSON.parse(queued.body) as { Id: number }[])[0]!.Id;
    assert.equal(await balanceOf(ctx, demo.account.id), start - 2);

    const before = await lastId(ctx);
    await inbound(ctx, demo, { Message: 'STOP' });
    for (const wire of WIRES)
      assert422(await send({ MobilePhone: SENDER }, wire), [fieldError('MobilePhone', 'Mobile Phone has opted out.')], wire);
    assert422(await send({ MobilePhone: '(555) 123-4567' }), [fieldError('MobilePhone', 'Mobile Phone has opted out.')]);
    const contact = (await contactOf(ctx, demo.account.id, SENDER_DIGITS))!;
    assert422(await send({ PhoneNumberId: contact.Id }), [fieldError('PhoneNumberId', 'Phone Number Id has opted out.')]);
    // HELP while opted out: the reply is the other exempt message.
    await inbound(ctx, demo, { Message: 'help' });

    await deliverAll(ctx);
    const queuedNow = await messageFromDb(ctx, queuedId);
    assert.deepEqual([queuedNow.Status_Description, queuedNow.ErrorCode], ['Rejected', 'OPTED_OUT']);
    assert.equal(await balanceOf(ctx, demo.account.id), start, 'the Rejected message is refunded; the confirmations cost nothing');
    assert.deepEqual(await newMessages(ctx, demo.account.id, before), [
      `Inbound Received ${SHORT}→${SENDER_DIGITS} 0 "STOP"`,
      `Outbound Delivered ${SHORT}→${SENDER_DIGITS} 0 "${STOP_REPLY}"`,
      `Inbound Received ${SHORT}→${SENDER_DIGITS} 0 "help"`,
      `Outbound Delivered ${SHORT}→${SENDER_DIGITS} 0 "${HELP_REPLY}"`,
    ]);

    // START: OptedOut 0 and sends go again.
    await inbound(ctx, demo, { Message: 'START' });
    assert.equal((await contactOf(ctx, demo.account.id, SENDER_DIGITS))!.OptedOut, 0);
    const again = await send({ MobilePhone: SENDER });
    assert.equal(again.statusCode, 201, again.body);
    await deliverAll(ctx);
    assert.equal((await messageFromDb(ctx, (JSON.parse(again.body) as { Id: number }[])[0]!.Id)).Status_Description, 'Delivered');
  },
);

// ------------------------------------------------------------------ keywords

storeTest(
  'API.md §11.5 rule 4: a keyword as first word joins the sender (a contact created if unknown) to its groups and sends the autoreply, paid',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const join = await reserve(ctx, demo, 'Join', 'Welcome to the club! Reply STOP to opt out.');
    const quiz = await reserve(ctx, demo, 'QUIZ'); // no autoreply
    const onLong = await reserve(ctx, demo, 'LONGWORD', 'only on the long number', '15550100001');
    const club = await createGroup(ctx, demo, 'Club', join);
    const vip = await createGroup(ctx, demo, 'Club VIP', join);
    const quizGroup = await createGroup(ctx, demo, 'Quiz players', quiz);
    await createGroup(ctx, demo, 'Long number', onLong);
    const other = demo.groups[0]!.Id;
    await ctx.store.db.updateTable('groups').set({ updated_at: 1_000_000_000 }).where('account_id', '=', demo.account.id).execute();
    let balance = await balanceOf(ctx, demo.account.id);

    for (const [i, text] of ['join', '  JOIN me please', 'JoIn\tnow'].entries()) {
      const before = await lastId(ctx);
      await inbound(ctx, demo, { Message: text }, WIRES[i]);
      balance -= 1;
      assert.deepEqual(await newMessages(ctx, demo.account.id, before), [
        `Inbound Received ${SHORT}→${SENDER_DIGITS} 0 "${text}"`,
        `Outbound Queued ${SHORT}→${SENDER_DIGITS} 1 "Welcome to the club! Reply STOP to opt out."`,
      ]);
      assert.equal(await balanceOf(ctx, demo.account.id), balance, 'the autoreply is an ordinary paid message');
    }
    const contact = (await contactOf(ctx, demo.account.id, SENDER_DIGITS))!;
    assert.deepEqual([contact.OptedOut, contact.GroupIds], [0, [club, vip]], 'created once, in both groups of the keyword, each once');
    for (const g of [club, vip]) {
      const group = await groupFromDb(ctx, g);
      assert.deepEqual(group.PhoneNumberIds, [contact.Id]);
      assert.notEqual(group.DateUpdated, fmtTime(1_000_000_000), 'a group joined has its DateUpdated touched');
    }
    for (const g of [quizGroup, other])
      assert.equal((await groupFromDb(ctx, g)).DateUpdated, fmtTime(1_000_000_000), 'other groups untouched');

    // A known contact joins; a keyword without autoreply sends nothing.
    const known = demo.contacts.find((c) => c.OptedOut === 0 && c.GroupIds.length === 0) ?? demo.contacts.find((c) => c.OptedOut === 0)!;
    let before = await lastId(ctx);
    await inbound(ctx, demo, { From: `+${known.Number}`, Message: 'Quiz' });
    assert.deepEqual(await newMessages(ctx, demo.account.id, before), [`Inbound Received ${SHORT}→${known.Number} 0 "Quiz"`]);
    assert.ok((await contactOf(ctx, demo.account.id, known.Number))!.GroupIds.includes(quizGroup));
    assert.equal(await balanceOf(ctx, demo.account.id), balance);

    // Not the first word, a longer word, or a keyword of another number: stored only.
    for (const [text, to] of [
      ['please join', SHORT],
      ['joinme', SHORT],
      ['LONGWORD', SHORT],
      ['quiz', '15550100001'],
    ] as const) {
      before = await lastId(ctx);
      await inbound(ctx, demo, { From: '+15553007777', Message: text, To: to });
      assert.equal((await newMessages(ctx, demo.account.id, before)).length, 1, text);
    }
    assert.equal(await contactOf(ctx, demo.account.id, '15553007777'), undefined);
    // The keyword of the long number, texted to it.
    before = await lastId(ctx);
    await inbound(ctx, demo, { From: '+15553007777', Message: 'longword', To: 15550100001 });
    assert.equal(
      (await newMessages(ctx, demo.account.id, before))[1],
      `Outbound Queued 15550100001→15553007777 1 "only on the long number"`,
    );

    // The autoreply goes out through the dispatcher like any message.
    await deliverAll(ctx);
    assert.ok(
      (await log(ctx, demo.account.id)).filter((m) => m.Direction === 'Outbound').every((m) => m.Status_Description === 'Delivered'),
    );
  },
);

storeTest(
  'API.md §11.6 rule 4: an autoreply that cannot go out is logged Rejected at once, nothing debited (NO_CREDITS, OPTED_OUT, NUMBER_INACTIVE); the sender still joins',
  async (t) => {
    const ctx = await buildTestApp(t, { MSGSVC_SMS_SEGMENT_CREDITS: '5' });
    const demo = await ctx.seed();
    const join = await reserve(ctx, demo, 'JOIN', 'y'.repeat(200)); // two segments: 10 credits
    const club = await createGroup(ctx, demo, 'Club', join);

    await setBalance(ctx, demo.account.id, 9);
    let before = await lastId(ctx);
    await inbound(ctx, demo, { From: '+15553000001', Message: 'JOIN' });
    assert.deepEqual(await newMessages(ctx, demo.account.id, before), [
      `Inbound Received ${SHORT}→15553000001 0 "JOIN"`,
      `Outbound Rejected NO_CREDITS ${SHORT}→15553000001 10 "${'y'.repeat(200)}"`,
    ]);
    assert.equal(await balanceOf(ctx, demo.account.id), 9, 'nothing debited');
    assert.deepEqual((await contactOf(ctx, demo.account.id, '15553000001'))!.GroupIds, [club]);

    await setBalance(ctx, demo.account.id, 10);
    before = await lastId(ctx);
    await inbound(ctx, demo, { From: '+15553000002', Message: 'JOIN' });
    assert.equal((await newMessages(ctx, demo.account.id, before))[1], `Outbound Queued ${SHORT}→15553000002 10 "${'y'.repeat(200)}"`);
    assert.equal(await balanceOf(ctx, demo.account.id), 0, 'exactly the balance');

    await setBalance(ctx, demo.account.id, 100);
    const out = demo.contacts.find((c) => c.OptedOut === 1)!;
    before = await lastId(ctx);
    await inbound(ctx, demo, { From: `+${out.Number}`, Message: 'join' });
    assert.equal(
      (await newMessages(ctx, demo.account.id, before))[1],
      `Outbound Rejected OPTED_OUT ${SHORT}→${out.Number} 10 "${'y'.repeat(200)}"`,
    );
    const joined = (await contactOf(ctx, demo.account.id, out.Number))!;
    assert.deepEqual([joined.OptedOut, joined.GroupIds.includes(club)], [1, true], 'a keyword does not opt back in; the sender joins');

    await setNumberStatus(ctx, demo.account.id, SHORT, 301);
    before = await lastId(ctx);
    await inbound(ctx, demo, { From: '+15553000003', Message: 'join' });
    assert.equal(
      (await newMessages(ctx, demo.account.id, before))[1],
      `Outbound Rejected NUMBER_INACTIVE ${SHORT}→15553000003 10 "${'y'.repeat(200)}"`,
    );
    assert.equal(await balanceOf(ctx, demo.account.id), 100);

    // Rejected at once: the dispatcher never takes them and refunds nothing for them. The one that
    // was queued (10 credits) now goes from a number no longer Active: Rejected there, refunded.
    const { dispatcher } = testDispatcher(ctx);
    assert.equal((await dispatcher.drain()).rejected, 1);
    assert.equal(await balanceOf(ctx, demo.account.id), 110);
  },
);

// ------------------------------------------------------------------ shared short codes

storeTest(
  'API.md §11.5 shared short code, two accounts: a keyword text goes to its account only; STOP/START/HELP apply to both with one reply, logged in the lowest id; other texts are stored in each',
  async (t) => {
    const ctx = await buildTestApp(t);
    const a = await ctx.seed('Lower');
    const b = await ctx.seed('Higher');
    assert.ok(a.account.id < b.account.id);
    const deal = await reserve(ctx, b, 'DEAL', 'Your coupon: B-42');
    const bGroup = await createGroup(ctx, b, 'Deal hunters', deal);
    const [balanceA, balanceB] = [await balanceOf(ctx, a.account.id), await balanceOf(ctx, b.account.id)];

    // The keyword of B, texted through A's sandbox: an empty list for A; everything in B.
    for (const wire of WIRES) {
      const before = await lastId(ctx);
      const res = await call(ctx.app, {
        method: 'POST',
        path: INBOUND,
        token: a.token,
        wire,
        body: { From: SENDER, To: SHORT, Message: 'deal today' },
      });
      assertBody(res, wire, 201, []);
      assert.equal(res.body, isXml(wire) ? '<?xml version="1.0" encoding="UTF-8"?>\n<response/>\n' : '[]');
      assert.equal(res.headers.location, undefined);
      assert.deepEqual(await newMessages(ctx, a.account.id, before), []);
      assert.deepEqual(await newMessages(ctx, b.account.id, before), [
        `Inbound Received ${SHORT}→${SENDER_DIGITS} 0 "deal today"`,
        `Outbound Queued ${SHORT}→${SENDER_DIGITS} 1 "Your coupon: B-42"`,
      ]);
    }
    assert.equal((await inbound(ctx, b, { Message: 'DEAL' })).length, 1, "B's own call gets its record");
    assert.equal(await contactOf(ctx, a.account.id, SENDER_DIGITS), undefined, 'A never heard of the sender');
    assert.deepEqual((await contactOf(ctx, b.account.id, SENDER_DIGITS))!.GroupIds, [bGroup]);
    assert.equal(await balanceOf(ctx, a.account.id), balanceA);
    assert.equal(await balanceOf(ctx, b.account.id), balanceB - 4, "B pays B's autoreplies");

    // STOP through B: stored in both, opted out in both (created in A), one confirmation, in A.
    let before = await lastId(ctx);
    const [stored] = await inbound(ctx, b, { Message: 'stop' }, 'xml');
    assert.equal(
      stored!.Id,
      (await log(ctx, b.account.id)).find((m) => m.Id > before && m.Direction === 'Inbound')!.Id,
      "the caller's record",
    );
    assert.deepEqual(await newMessages(ctx, a.account.id, before), [
      `Inbound Received ${SHORT}→${SENDER_DIGITS} 0 "stop"`,
      `Outbound Queued ${SHORT}→${SENDER_DIGITS} 0 "${STOP_REPLY}"`,
    ]);
    assert.deepEqual(await newMessages(ctx, b.account.id, before), [`Inbound Received ${SHORT}→${SENDER_DIGITS} 0 "stop"`]);
    for (const acc of [a, b]) assert.equal((await contactOf(ctx, acc.account.id, SENDER_DIGITS))!.OptedOut, 1);
    for (const acc of [a, b]) {
      assert422(
        await call(ctx.app, { method: 'POST', path: '/v1/sms/send', token: acc.token, body: { Message: 'hi', MobilePhone: SENDER } }),
        [fieldError('MobilePhone', 'Mobile Phone has opted out.')],
      );
    }

    // START through A: both back in; one confirmation, in A.
    before = await lastId(ctx);
    await inbound(ctx, a, { Message: 'UNSTOP' });
    for (const acc of [a, b]) assert.equal((await contactOf(ctx, acc.account.id, SENDER_DIGITS))!.OptedOut, 0);
    assert.deepEqual(await newMessages(ctx, a.account.id, before), [
      `Inbound Received ${SHORT}→${SENDER_DIGITS} 0 "UNSTOP"`,
      `Outbound Queued ${SHORT}→${SENDER_DIGITS} 0 "${START_REPLY}"`,
    ]);
    assert.deepEqual(await newMessages(ctx, b.account.id, before), [`Inbound Received ${SHORT}→${SENDER_DIGITS} 0 "UNSTOP"`]);

    // HELP through B, and any other text through B: stored in each.
    before = await lastId(ctx);
    await inbound(ctx, b, { Message: 'INFO' }, 'xml-param');
    await inbound(ctx, b, { Message: 'What time do you open?' });
    assert.deepEqual(await newMessages(ctx, a.account.id, before), [
      `Inbound Received ${SHORT}→${SENDER_DIGITS} 0 "INFO"`,
      `Outbound Queued ${SHORT}→${SENDER_DIGITS} 0 "${HELP_REPLY}"`,
      `Inbound Received ${SHORT}→${SENDER_DIGITS} 0 "What time do you open?"`,
    ]);
    assert.deepEqual(await newMessages(ctx, b.account.id, before), [
      `Inbound Received ${SHORT}→${SENDER_DIGITS} 0 "INFO"`,
      `Inbound Received ${SHORT}→${SENDER_DIGITS} 0 "What time do you open?"`,
    ]);
    assert.equal(await balanceOf(ctx, a.account.id), balanceA, 'replies are free for the account that logs them');
  },
);

storeTest(
  'API.md §11.5 shared short code, three accounts: the reply is logged in the lowest id among the holders; a text never reaches an account without the number',
  async (t) => {
    const ctx = await buildTestApp(t);
    const a = await ctx.seed('A');
    const b = await ctx.seed('B');
    const c = await ctx.seed('C');
    // A gives the short code up: the holders of 55155 are B and C; all three hold 15550100001.
    await ctx.store.db.deleteFrom('account_numbers').where('account_id', '=', a.account.id).where('number', '=', SHORT).execute();
    const win = await reserve(ctx, c, 'WINNER', 'You won!');
    const cGroup = await createGroup(ctx, c, 'Winners', win);

    let before = await lastId(ctx);
    const [stored] = await inbound(ctx, c, { Message: 'Stop' });
    assert.deepEqual(await newMessages(ctx, a.account.id, before), [], 'A does not hold the number');
    assert.deepEqual(await newMessages(ctx, b.account.id, before), [
      `Inbound Received ${SHORT}→${SENDER_DIGITS} 0 "Stop"`,
      `Outbound Queued ${SHORT}→${SENDER_DIGITS} 0 "${STOP_REPLY}"`,
    ]);
    assert.deepEqual(await newMessages(ctx, c.account.id, before), [`Inbound Received ${SHORT}→${SENDER_DIGITS} 0 "Stop"`]);
    assert.equal(stored!.Id, (await log(ctx, c.account.id)).at(-1)!.Id);
    assert.equal(await contactOf(ctx, a.account.id, SENDER_DIGITS), undefined);
    for (const acc of [b, c]) assert.equal((await contactOf(ctx, acc.account.id, SENDER_DIGITS))!.OptedOut, 1);

    // "winner!" is not the keyword WINNER (the first word is the whole run of non-space characters):
    // any other text, stored for each holder.
    before = await lastId(ctx);
    assert.equal((await inbound(ctx, b, { Message: 'winner!' })).length, 1);
    for (const acc of [b, c])
      assert.deepEqual(await newMessages(ctx, acc.account.id, before), [`Inbound Received ${SHORT}→${SENDER_DIGITS} 0 "winner!"`]);
    // The keyword of C through B: B gets an empty list; C stores it, answers, and the sender joins.
    before = await lastId(ctx);
    assert.equal(
      (await call(ctx.app, { method: 'POST', path: INBOUND, token: b.token, body: { From: '+15553006666', To: SHORT, Message: 'winner' } }))
        .body,
      '[]',
    );
    assert.deepEqual(await newMessages(ctx, c.account.id, before), [
      `Inbound Received ${SHORT}→15553006666 0 "winner"`,
      `Outbound Queued ${SHORT}→15553006666 1 "You won!"`,
    ]);
    assert.deepEqual(await newMessages(ctx, b.account.id, before), []);
    assert.deepEqual((await contactOf(ctx, c.account.id, '15553006666'))!.GroupIds, [cGroup]);

    // The long number all three hold: HELP through C is stored in all three, one reply, in A.
    before = await lastId(ctx);
    const [mine] = await inbound(ctx, c, { To: '15550100001', Message: 'help' });
    assert.deepEqual(await newMessages(ctx, a.account.id, before), [
      `Inbound Received 15550100001→${SENDER_DIGITS} 0 "help"`,
      `Outbound Queued 15550100001→${SENDER_DIGITS} 0 "${HELP_REPLY}"`,
    ]);
    for (const acc of [b, c])
      assert.deepEqual(await newMessages(ctx, acc.account.id, before), [`Inbound Received 15550100001→${SENDER_DIGITS} 0 "help"`]);
    assert.equal(mine!.Id, (await log(ctx, c.account.id)).at(-1)!.Id);
    // A STOP on it opts out in all three; a send from any of them is refused.
    await inbound(ctx, b, { To: '15550100001', Message: 'END' });
    for (const acc of [a, b, c]) {
      assert.equal((await contactOf(ctx, acc.account.id, SENDER_DIGITS))!.OptedOut, 1);
      assert422(
        await call(ctx.app, {
          method: 'POST',
          path: '/v1/sms/send',
          token: acc.token,
          body: { Message: 'hi', MobilePhone: SENDER, Number: '15550100001' },
        }),
        [fieldError('MobilePhone', 'Mobile Phone has opted out.')],
      );
    }
  },
);

storeTest(
  'API.md §11.5: concurrent STOPs from one new sender on a shared short code create one contact per account and lose nothing',
  async (t) => {
    const ctx = await buildTestApp(t);
    const twin = await buildTestApp(t, {}, { dir: ctx.dir });
    const a = await ctx.seed('A');
    const b = await ctx.seed('B');
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        call((i % 2 ? twin : ctx).app, {
          method: 'POST',
          path: INBOUND,
          token: (i % 3 ? a : b).token,
          body: { From: '+15553005555', To: SHORT, Message: 'STOP' },
        }),
      ),
    );
    assert.deepEqual(
      results.map((r) => r.statusCode),
      Array(8).fill(201),
      results.map((r) => r.body).join('\n'),
    );
    for (const acc of [a, b]) {
      const rows = await ctx.store.db
        .selectFrom('contacts')
        .select(['opted_out'])
        .where('account_id', '=', acc.account.id)
        .where('number', '=', '15553005555')
        .execute();
      assert.deepEqual(rows, [{ opted_out: 1 }]);
      assert.equal((await log(ctx, acc.account.id)).filter((m) => m.Direction === 'Inbound').length, 8);
    }
    assert.equal(
      (await log(ctx, a.account.id)).filter((m) => m.Direction === 'Outbound').length,
      8,
      'one confirmation per STOP, all in the lowest id',
    );
    assert.equal((await log(ctx, b.account.id)).filter((m) => m.Direction === 'Outbound').length, 0);
  },
);

// ------------------------------------------------------------------ the carrier path

storeTest(
  `API.md §11.5 through the carrier boundary: the dispatcher's inbound sink runs the same rules; a text to a number nobody holds is dropped and logged; a non-phone sender is stored only`,
  async (t) => {
    const ctx = await buildTestApp(t);
    const a = await ctx.seed('A');
    const b = await ctx.seed('B');
    await reserve(ctx, b, 'JOIN', 'Hi from B');
    const clock = createManualClock((Math.floor(Date.now() / 1000) + 1) * 1000);
    const warnings: object[] = [];
    const dispatcher = createDispatcher(ctx.config, ctx.store, {
      clock,
      carrier: createSandboxCarrier({ receiptMs: 500 }),
      log: { info() {}, warn: (obj) => void warnings.push(obj), error() {} },
    });
    let before = await lastId(ctx);
    await dispatcher.sink.inbound({ from: SENDER_DIGITS, to: SHORT, text: ' stop ' });
    assert.deepEqual(await newMessages(ctx, a.account.id, before), [
      `Inbound Received ${SHORT}→${SENDER_DIGITS} 0 " stop "`,
      `Outbound Queued ${SHORT}→${SENDER_DIGITS} 0 "${STOP_REPLY}"`,
    ]);
    assert.deepEqual(await newMessages(ctx, b.account.id, before), [`Inbound Received ${SHORT}→${SENDER_DIGITS} 0 " stop "`]);
    // The carrier's clock dates them.
    assert.equal((await log(ctx, a.account.id)).at(-1)!.DateCreated, fmtTime(clock.nowSeconds()));

    before = await lastId(ctx);
    await dispatcher.sink.inbound({ from: '+15553004444', to: `+${SHORT}`, text: 'join' });
    assert.deepEqual(await newMessages(ctx, b.account.id, before), [
      `Inbound Received ${SHORT}→15553004444 0 "join"`,
      `Outbound Queued ${SHORT}→15553004444 1 "Hi from B"`,
    ]);
    assert.deepEqual(await newMessages(ctx, a.account.id, before), []);
    assert.equal((await contactOf(ctx, b.account.id, '15553004444'))!.GroupIds.length, 0, 'B has no group on the keyword yet');

    before = await lastId(ctx);
    await dispatcher.sink.inbound({ from: SENDER_DIGITS, to: '99999', text: 'STOP' });
    assert.equal(await lastId(ctx), before, 'nothing stored');
    assert.deepEqual(warnings, [{ to: '99999' }]);

    await dispatcher.sink.inbound({ from: 'ACME', to: SHORT, text: 'STOP' });
    assert.deepEqual(await newMessages(ctx, a.account.id, before), [`Inbound Received ${SHORT}→ACME 0 "STOP"`]);
    assert.deepEqual(await newMessages(ctx, b.account.id, before), [`Inbound Received ${SHORT}→ACME 0 "STOP"`]);

    // The same dispatcher then delivers the replies (the confirmation to an opted-out number included).
    await dispatcher.drain();
    clock.advance(500);
    await dispatcher.drain();
    for (const acc of [a, b])
      assert.ok(
        (await log(ctx, acc.account.id)).filter((m) => m.Direction === 'Outbound').every((m) => m.Status_Description === 'Delivered'),
      );
  },
);
