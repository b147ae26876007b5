/**
 * sms/conversations and sms/mark-read (API.md §14.4.1), on each store: one thread per number the
 * account has sent to or received from (whichever of its numbers), newest thread first across
 * inbound and outbound, LastMessage exactly as sms/view shows it, ContactId `""` or the contact's
 * id, Unread and mark-read (any number format, 204, the 422s in JSON and XML, Idempotency-Key,
 * a number with no conversation), `Number` (API.md §17: the account number of the thread's newest
 * message, last in the record), pagination, isolation between accounts, no `id` rules, the
 * threads of messages that existed before migration 017 (its backfill), and a property test
 * against an oracle computed from the message list.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { Migrator, type Migration } from 'kysely';
import type { DemoAccount } from '../../../src/domain/demo.ts';
import { insertMessage } from '../../../src/store/repositories/message-log.ts';
import { migrateToLatest, openStore } from '../../../src/store/db.ts';
import { createAccount, issueToken } from '../../../src/domain/accounts.ts';
import { createDemoAccount } from '../../../src/domain/demo.ts';
import { generateAccount } from '../../../src/domain/generate.ts';
import { createTimeFormat } from '../../../src/lib/time.ts';
import { recordMappers } from '../../../src/records/index.ts';
import { buildTestApp, testConfig, testDatabaseUrl, type TestApp } from '../../helpers/app.ts';
import { assert422, assertBody, call, fieldError, WIRES, XML_DECL, type Wire } from '../../helpers/operations.ts';
import { messageFromDb } from '../../helpers/sms.ts';
import { storeTest } from '../../helpers/stores.ts';

const LIST = '/v1/sms/conversations';
const MARK = '/v1/sms/mark-read';

async function send(ctx: TestApp, token: string, body: Record<string, unknown>): Promise<number> {
  const res = await call(ctx.app, { method: 'POST', path: '/v1/sms/send', token, body: { Message: 'hello', ...body } });
  assert.equal(res.statusCode, 201, res.body);
  return (JSON.parse(res.body) as { Id: number }[])[0]!.Id;
}

/** An inbound text through the sandbox carrier (API.md §11.3), the way a carrier's text arrives. */
async function receive(ctx: TestApp, token: string, from: string, to = '55155', text = 'hi there'): Promise<number> {
  const res = await call(ctx.app, { method: 'POST', path: '/v1/sandbox/inbound', token, body: { From: from, To: to, Message: text } });
  assert.equal(res.statusCode, 201, res.body);
  return (JSON.parse(res.body) as { Id: number }[])[0]!.Id;
}

/** An inbound or outbound message written straight to the log (the store's triggers keep the threads). */
async function logMessage(ctx: TestApp, accountId: number, direction: 1 | 2, phone: string): Promise<number> {
  const row = await insertMessage(
    ctx.store.db,
    accountId,
    {
      direction,
      number: '55155',
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
    Math.floor(Date.now() / 1000),
  );
  return row.id;
}

async function markRead(ctx: TestApp, token: string, phone: string, wire: Wire = 'json', headers: Record<string, string> = {}) {
  return ctx.app.inject({
    method: 'POST',
    url: `${MARK}?access_token=${encodeURIComponent(token)}&MobilePhone=${encodeURIComponent(phone)}${wire === 'xml-param' ? '&_format=xml' : ''}`,
    headers: { accept: wire === 'xml' ? 'application/xml' : 'application/json', ...headers },
  });
}

/**
 * The oracle: the account's Conversation records from the raw log (API.md §14.4.1), built without the
 * server's mappers. `marks`: per number, the id of the newest message of the log when it was
 * last marked read (inbound messages with a greater id are unread).
 */
async function expected(ctx: TestApp, accountId: number, marks: ReadonlyMap<string, number> = new Map()) {
  const rows = await ctx.store.db
    .selectFrom('messages')
    .select(['id', 'direction', 'mobile_phone', 'number'])
    .where('account_id', '=', accountId)
    .orderBy('id')
    .execute();
  const threads = new Map<string, { last: number; unread: number; number: string }>();
  for (const r of rows) {
    const t = threads.get(r.mobile_phone) ?? { last: 0, unread: 0, number: '' };
    t.last = r.id;
    t.number = r.number;
    if (r.direction === 2 && r.id > (marks.get(r.mobile_phone) ?? 0)) t.unread++;
    threads.set(r.mobile_phone, t);
  }
  const out = [];
  for (const [phone, t] of [...threads].sort((a, b) => b[1].last - a[1].last)) {
    const contact = await ctx.store.db
      .selectFrom('contacts')
      .select('id')
      .where('account_id', '=', accountId)
      .where('number', '=', phone)
      .executeTakeFirst();
    out.push({
      MobilePhone: phone,
      ContactId: contact?.id ?? '',
      LastMessage: await messageFromDb(ctx, t.last),
      Unread: t.unread,
      Number: t.number,
    });
  }
  return out;
}

/** The id of the account's newest message. */
async function newestId(ctx: TestApp, accountId: number): Promise<number> {
  const row = await ctx.store.db
    .selectFrom('messages')
    .select('id')
    .where('account_id', '=', accountId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirstOrThrow();
  return row.id;
}

async function listAll(ctx: TestApp, token: string, wire: Wire = 'json', query = '') {
  return call(ctx.app, { path: LIST, token, wire, ...(query ? { query } : {}) });
}

storeTest(
  'sms/conversations: one thread per number (both account numbers), newest first across inbound and outbound, ContactId, Unread (JSON, XML, HEAD)',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    for (const wire of WIRES) assertBody(await listAll(ctx, demo.token, wire), wire, 200, []);
    const empty = await listAll(ctx, demo.token, 'xml');
    assert.equal(empty.body, `${XML_DECL}\n<response/>\n`);
    assert.equal(empty.headers['x-pagination-total-count'], '0');

    const contact = demo.contacts.find((c) => c.OptedOut === 0)!;
    await send(ctx, demo.token, { MobilePhone: '+1 555 123 0001', Message: 'first' });
    await send(ctx, demo.token, { PhoneNumberId: contact.Id, Message: 'to a contact' });
    await receive(ctx, demo.token, '+15551230001');
    await send(ctx, demo.token, { MobilePhone: '(555) 123-0002', Message: 'from the other number', Number: 15550100001 });
    await receive(ctx, demo.token, '15551230002', '15550100001');
    await receive(ctx, demo.token, '+15551230002', '55155', 'a second <inbound> & more');
    await send(ctx, demo.token, { MobilePhone: '+15551230001', Message: 'newest outbound' });

    const all = await expected(ctx, demo.account.id);
    assert.deepEqual(
      all.map((c) => [c.MobilePhone, c.Unread]),
      [
        ['15551230001', 1],
        ['15551230002', 2],
        [contact.Number, 0],
      ],
    );
    assert.equal(all.find((c) => c.MobilePhone === contact.Number)!.ContactId, contact.Id);
    assert.equal(all[0]!.ContactId, '');
    assert.equal(all[0]!.LastMessage.Message, 'newest outbound');
    assert.equal(all[1]!.LastMessage.Direction, 'Inbound');
    for (const wire of WIRES) {
      const res = await listAll(ctx, demo.token, wire);
      assertBody(res, wire, 200, all);
      assert.equal(res.headers['x-pagination-total-count'], '3');
      assert.equal(res.headers['x-pagination-current-page'], '1');
    }
    // LastMessage is exactly sms/view's record of that message.
    for (const c of all) {
      const view = await call(ctx.app, { path: '/v1/sms/view', token: demo.token, query: `id=${c.LastMessage.Id}` });
      assert.equal(JSON.stringify(JSON.parse(view.body)), JSON.stringify(c.LastMessage));
    }
    // The XML of the nested record: <LastMessage> holding the Message record's elements.
    const xml = await listAll(ctx, demo.token, 'xml');
    assert.match(
      xml.body,
      /<item><MobilePhone>15551230001<\/MobilePhone><ContactId><\/ContactId><LastMessage><Id>\d+<\/Id><Direction>Outbound<\/Direction>/,
    );
    assert.ok(xml.body.includes('a second &lt;inbound&gt; &amp; more'));
    const head = await ctx.app.inject({ method: 'HEAD', url: `${LIST}?access_token=${demo.token}` });
    assert.equal(head.statusCode, 200);
    assert.equal(head.body, '');
    assert.equal(head.headers['x-pagination-total-count'], '3');
  },
);

storeTest(
  'sms/conversations: Number is the account number of the thread’s newest message, last in the record (JSON and XML)',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const numbers = (list: { MobilePhone: string; Number: string }[]) => list.map((c) => [c.MobilePhone, c.Number]);
    const listed = async () => JSON.parse((await listAll(ctx, demo.token)).body) as { MobilePhone: string; Number: string }[];
    await send(ctx, demo.token, { MobilePhone: '+15551230001', Number: '55155' });
    await send(ctx, demo.token, { MobilePhone: '+15551230002', Number: '15550100001' });
    assert.deepEqual(numbers(await listed()), [
      ['15551230002', '15550100001'],
      ['15551230001', '55155'],
    ]);
    // An inbound text to the other number moves the thread to it; a reply from the first moves it back.
    await receive(ctx, demo.token, '+15551230001', '15550100001');
    assert.deepEqual(numbers(await listed()), [
      ['15551230001', '15550100001'],
      ['15551230002', '15550100001'],
    ]);
    await send(ctx, demo.token, { MobilePhone: '+15551230001', Number: '55155' });
    const all = await listed();
    assert.deepEqual(numbers(all), [
      ['15551230001', '55155'],
      ['15551230002', '15550100001'],
    ]);
    assert.deepEqual(Object.keys(all[0]!), ['MobilePhone', 'ContactId', 'LastMessage', 'Unread', 'Number']);
    assert.deepEqual(all, await expected(ctx, demo.account.id));
    const xml = await listAll(ctx, demo.token, 'xml');
    assert.match(
      xml.body,
      /<\/LastMessage><Unread>1<\/Unread><Number>55155<\/Number><\/item><item><MobilePhone>15551230002<\/MobilePhone>/,
    );
    const picked = await listAll(ctx, demo.token, 'json', 'fields=Number,MobilePhone&per-page=1');
    assert.equal(picked.body, '[{"MobilePhone":"15551230001","Number":"55155"}]');
  },
);

storeTest('sms/conversations: paginated as every list (headers, Link, page, per-page), fields=', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  for (let i = 0; i < 7; i++) await logMessage(ctx, demo.account.id, i % 2 === 0 ? 1 : 2, `1555123100${i}`);
  await logMessage(ctx, demo.account.id, 2, '15551231002'); // moves 1002 to the front
  const all = await expected(ctx, demo.account.id);
  assert.equal(all.length, 7);
  assert.equal(all[0]!.MobilePhone, '15551231002');
  const page = await listAll(ctx, demo.token, 'json', 'per-page=3&page=2');
  assertBody(page, 'json', 200, all.slice(3, 6));
  assert.equal(page.headers['x-pagination-total-count'], '7');
  assert.equal(page.headers['x-pagination-page-count'], '3');
  assert.equal(page.headers['x-pagination-current-page'], '2');
  assert.equal(page.headers['x-pagination-per-page'], '3');
  const base = `http://localhost:80${LIST}?access_token=${demo.token}`;
  assert.equal(
    page.headers.link,
    `<${base}&per-page=3&page=2>; rel=self, <${base}&per-page=3&page=1>; rel=first, <${base}&per-page=3&page=1>; rel=prev, <${base}&per-page=3&page=3>; rel=next, <${base}&per-page=3&page=3>; rel=last`,
  );
  const last = await listAll(ctx, demo.token, 'xml', 'per-page=3&page=99');
  assertBody(last, 'xml', 200, all.slice(6));
  const picked = await listAll(ctx, demo.token, 'json', 'fields=MobilePhone,Unread&per-page=2');
  assertBody(
    picked,
    'json',
    200,
    all.slice(0, 2).map((c) => ({ MobilePhone: c.MobilePhone, Unread: c.Unread })),
  );
});

storeTest('sms/mark-read: 204 with an empty body, Unread 0 until the next inbound, any number format, outbound never counts', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  await receive(ctx, demo.token, '+15551234567');
  await receive(ctx, demo.token, '+15551234567');
  await receive(ctx, demo.token, '+15557654321');
  const unread = async () =>
    Object.fromEntries(
      (JSON.parse((await listAll(ctx, demo.token)).body) as { MobilePhone: string; Unread: number }[]).map((c) => [
        c.MobilePhone,
        c.Unread,
      ]),
    );
  assert.deepEqual(await unread(), { '15551234567': 2, '15557654321': 1 });
  for (const wire of WIRES) {
    const res = await markRead(ctx, demo.token, '(555) 123-4567', wire);
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
  }
  const marks = new Map([['15551234567', await newestId(ctx, demo.account.id)]]);
  assert.deepEqual(await unread(), { '15551234567': 0, '15557654321': 1 });
  await send(ctx, demo.token, { MobilePhone: '+15551234567', Message: 'a reply' });
  assert.deepEqual(await unread(), { '15551234567': 0, '15557654321': 1 });
  await receive(ctx, demo.token, '15551234567');
  assert.deepEqual(await unread(), { '15551234567': 1, '15557654321': 1 });
  for (const phone of ['+1 555 765 4321', '15557654321', '5557654321', '+1-555-765-4321']) {
    assert.equal((await markRead(ctx, demo.token, phone)).statusCode, 204);
  }
  marks.set('15557654321', await newestId(ctx, demo.account.id));
  assert.deepEqual(await unread(), { '15551234567': 1, '15557654321': 0 });
  assertBody(await listAll(ctx, demo.token), 'json', 200, await expected(ctx, demo.account.id, marks));
});

storeTest('sms/mark-read: a number with no conversation answers 204 and changes nothing', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  await receive(ctx, demo.token, '+15551234567');
  const rows = () => ctx.store.db.selectFrom('conversations').selectAll().orderBy('account_id').orderBy('mobile_phone').execute();
  const before = await rows();
  const res = await markRead(ctx, demo.token, '+15550009999');
  assert.equal(res.statusCode, 204);
  assert.equal(res.body, '');
  assert.deepEqual(await rows(), before);
  assert.equal((JSON.parse((await listAll(ctx, demo.token)).body) as unknown[]).length, 1);
});

storeTest('sms/mark-read: MobilePhone missing, blank or not a phone number is a 422 (JSON and XML); nothing changes', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  await receive(ctx, demo.token, '+15551234567');
  const blank = [fieldError('MobilePhone', 'Mobile Phone cannot be blank.')];
  const invalid = [fieldError('MobilePhone', 'Mobile Phone is invalid.')];
  for (const wire of WIRES) {
    const accept = wire === 'xml' ? 'application/xml' : 'application/json';
    const fmt = wire === 'xml-param' ? '&_format=xml' : '';
    const url = (q: string) => `${MARK}?access_token=${demo.token}${q}${fmt}`;
    assert422(await ctx.app.inject({ method: 'POST', url: url(''), headers: { accept } }), blank, wire);
    assert422(await ctx.app.inject({ method: 'POST', url: url('&MobilePhone='), headers: { accept } }), blank, wire);
    assert422(await ctx.app.inject({ method: 'POST', url: url('&MobilePhone=%20%20'), headers: { accept } }), blank, wire);
    for (const bad of ['abc', '12', '%2B999999999999999999', '%2B%2B'])
      assert422(await ctx.app.inject({ method: 'POST', url: url(`&MobilePhone=${bad}`), headers: { accept } }), invalid, wire);
    assert422(await ctx.app.inject({ method: 'POST', url: url('&MobilePhone[]=15551234567'), headers: { accept } }), invalid, wire);
  }
  const list = JSON.parse((await listAll(ctx, demo.token)).body) as { Unread: number }[];
  assert.equal(list[0]!.Unread, 1);
});

storeTest('sms/mark-read honours Idempotency-Key: a replay is 204 with Idempotent-Replayed and does not run again', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  await receive(ctx, demo.token, '+15551234567');
  const first = await markRead(ctx, demo.token, '+15551234567', 'json', { 'idempotency-key': 'mark-1' });
  assert.equal(first.statusCode, 204);
  assert.equal(first.headers['idempotent-replayed'], undefined);
  await receive(ctx, demo.token, '+15551234567');
  const replay = await markRead(ctx, demo.token, '+15551234567', 'json', { 'idempotency-key': 'mark-1' });
  assert.equal(replay.statusCode, 204);
  assert.equal(replay.body, '');
  assert.equal(replay.headers['idempotent-replayed'], 'true');
  const list = JSON.parse((await listAll(ctx, demo.token)).body) as { Unread: number }[];
  assert.equal(list[0]!.Unread, 1, 'the replay did not mark the new message read');
  const other = await markRead(ctx, demo.token, '+15557654321', 'json', { 'idempotency-key': 'mark-1' });
  assert.equal(other.statusCode, 409);
});

storeTest("isolation: another account's messages never appear, and its mark-read never touches this account's threads", async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const other = await ctx.seed('Other account');
  // Both demo accounts hold the same numbers, so a sandbox text would reach both: written to one log each instead.
  await logMessage(ctx, demo.account.id, 2, '15551234567');
  await send(ctx, other.token, { MobilePhone: '+15551234567', Message: 'not yours' });
  await logMessage(ctx, other.account.id, 2, '15551234567');
  await logMessage(ctx, other.account.id, 2, '15559990000');
  assert.equal((await markRead(ctx, other.token, '+15551234567')).statusCode, 204);
  const mine = await expected(ctx, demo.account.id);
  assert.equal(mine.length, 1);
  assert.equal(mine[0]!.Unread, 1);
  assertBody(await listAll(ctx, demo.token), 'json', 200, mine);
  assert.equal((await listAll(ctx, demo.token)).headers['x-pagination-total-count'], '1');
  const theirs = await expected(ctx, other.account.id, new Map([['15551234567', Number.MAX_SAFE_INTEGER]]));
  assertBody(await listAll(ctx, other.token), 'json', 200, theirs);
  assert.equal(theirs.length, 2);
});

storeTest('no id rules: sms/conversations and sms/mark-read ignore an id parameter (no 400, no 404)', async (t) => {
  const ctx = await buildTestApp(t);
  const demo: DemoAccount = await ctx.seed();
  await receive(ctx, demo.token, '+15551234567');
  for (const id of ['abc', '987654321', '']) {
    const list = await listAll(ctx, demo.token, 'json', `id=${id}`);
    assert.equal(list.statusCode, 200, list.body);
    const res = await ctx.app.inject({ method: 'POST', url: `${MARK}?access_token=${demo.token}&MobilePhone=15551234567&id=${id}` });
    assert.equal(res.statusCode, 204, res.body);
  }
});

storeTest('migration 017 gives the messages that existed before it their threads (never read: every inbound one unread)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'msgsvc-conv-'));
  const config = testConfig(await testDatabaseUrl(dir));
  const store = openStore(config.database);
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  // The migrations before 017, applied by a Migrator over the same files.
  const folder = new URL('../../../src/store/migrations/', import.meta.url);
  const names = readdirSync(folder)
    .filter((f) => /^\d{3}_[a-z0-9_]+\.ts$/.test(f))
    .map((f) => f.slice(0, -3))
    .sort();
  const migrations: Record<string, Migration> = {};
  for (const name of names) {
    const mod = (await import(new URL(`${name}.ts`, folder).href)) as Record<string, (d: string) => Migration>;
    migrations[name] = Object.values(mod)[0]!(store.dialect);
  }
  const before = names.filter((n) => n < '017').at(-1)!;
  const result = await new Migrator({ db: store.db, provider: { getMigrations: () => Promise.resolve(migrations) } }).migrateTo(before);
  assert.equal(result.error, undefined);
  const a = await createAccount(store, 'Before');
  const b = await createAccount(store, 'Other');
  const raw = async (account: number, direction: number, phone: string) =>
    store.db
      .insertInto('messages')
      .values({
        account_id: account,
        direction,
        number: '55155',
        mobile_phone: phone,
        message: 'm',
        type_id: 1,
        status_id: direction === 2 ? 7 : 3,
        segments: 1,
        credits: 0,
        batch_id: null,
        scheduled_message_id: null,
        created_at: 1_700_000_000,
        sent_at: null,
        delivered_at: null,
        due_at: null,
        lease_token: null,
      } as never)
      .returning('id')
      .executeTakeFirstOrThrow();
  await raw(a, 2, '15551230001');
  await raw(a, 1, '15551230002');
  await raw(a, 2, '15551230001');
  const lastA1 = await raw(a, 1, '15551230001');
  await raw(b, 2, '15551230001');
  await migrateToLatest(store);
  const rows = await store.db
    .selectFrom('conversations')
    .select(['account_id', 'mobile_phone', 'last_message_id', 'unread', 'read_up_to_id'])
    .orderBy('account_id')
    .orderBy('mobile_phone')
    .execute();
  assert.deepEqual(
    rows.map((r) => [r.account_id, r.mobile_phone, r.last_message_id, r.unread, r.read_up_to_id]),
    [
      [a, '15551230001', lastA1.id, 2, 0],
      [a, '15551230002', lastA1.id - 2, 0, 0],
      [b, '15551230001', lastA1.id + 1, 1, 0],
    ],
  );
  const totals = await store.db.selectFrom('list_totals').select(['account_id', 'conversations']).orderBy('account_id').execute();
  assert.deepEqual(
    totals.filter((r) => r.account_id === a || r.account_id === b).map((r) => [r.account_id, Number(r.conversations)]),
    [
      [a, 2],
      [b, 1],
    ],
  );
  // And the triggers keep them from then on.
  await raw(a, 2, '15551230002');
  const token = (await issueToken(store, a, 't')).token;
  assert.ok(token.length > 0);
  const after = await store.db
    .selectFrom('conversations')
    .select('unread')
    .where('account_id', '=', a)
    .where('mobile_phone', '=', '15551230002')
    .executeTakeFirstOrThrow();
  assert.equal(after.unread, 1);
});

type Step = { kind: 'out' | 'in' | 'read'; phone: number };
const stepArb: fc.Arbitrary<Step> = fc.record({ kind: fc.constantFrom('out', 'in', 'in', 'read'), phone: fc.nat({ max: 3 }) });
const PHONES = ['15551230001', '15551230002', '447700900123', '33612345678'];
/** How each number is written to mark-read: any common format (API.md §14.4.1, as contacts/find). */
const WRITTEN = ['(555) 123-0001', '+1 555 123 0002', '+44 7700 900123', '+33 6 12 34 56 78'];

storeTest('property: sms/conversations equals an oracle over random outbound, inbound and mark-read sequences', async (t) => {
  const ctx = await buildTestApp(t);
  let run = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(stepArb, { maxLength: 25 }), async (steps) => {
      const id = await createAccount(ctx.store, `Property ${++run}`);
      const { token } = await issueToken(ctx.store, id, 'test');
      // The oracle: the log in order, and per number the newest id of the log when it was marked read.
      const log: { id: number; direction: 1 | 2; phone: string }[] = [];
      const marks = new Map<string, number>();
      for (const step of steps) {
        const phone = PHONES[step.phone]!;
        if (step.kind === 'read') {
          const res = await markRead(ctx, token, WRITTEN[step.phone]!);
          assert.equal(res.statusCode, 204, res.body);
          marks.set(phone, log.at(-1)?.id ?? 0);
        } else {
          const direction = step.kind === 'in' ? 2 : 1;
          log.push({ id: await logMessage(ctx, id, direction, phone), direction, phone });
        }
      }
      const threads = new Map<string, { last: number; unread: number }>();
      for (const m of log) {
        const th = threads.get(m.phone) ?? { last: 0, unread: 0 };
        th.last = m.id;
        if (m.direction === 2 && m.id > (marks.get(m.phone) ?? 0)) th.unread++;
        threads.set(m.phone, th);
      }
      const oracle = [...threads].sort((x, y) => y[1].last - x[1].last).map(([phone, th]) => [phone, th.last, th.unread]);
      const res = await listAll(ctx, token, 'json', 'per-page=100');
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['x-pagination-total-count'], String(oracle.length));
      const got = (
        JSON.parse(res.body) as {
          MobilePhone: string;
          ContactId: unknown;
          LastMessage: { Id: number; MobilePhone: string };
          Unread: number;
        }[]
      ).map((c) => {
        assert.equal(c.LastMessage.MobilePhone, c.MobilePhone);
        assert.equal(c.ContactId, '');
        return [c.MobilePhone, c.LastMessage.Id, c.Unread];
      });
      assert.deepEqual(got, oracle);
    }),
    { numRuns: 30 },
  );
});

storeTest("every writer keeps the threads: send-group's INSERT … SELECT, msgsvc generate's bulk inserts, the demo's history", async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const group = demo.groups.find((g) => g.PhoneNumberIds.length > 1)!;
  const res = await call(ctx.app, {
    method: 'POST',
    path: '/v1/sms/send-group',
    token: demo.token,
    body: { Message: 'all', GroupId: group.Id },
  });
  assert.equal(res.statusCode, 201, res.body);
  const afterGroup = await expected(ctx, demo.account.id);
  assert.equal(afterGroup.length, (JSON.parse(res.body) as { Recipients: number }).Recipients);
  assert.ok(afterGroup.every((c) => c.ContactId !== ''));
  assertBody(await listAll(ctx, demo.token), 'json', 200, afterGroup);

  // msgsvc generate: 75 log messages over 30 contacts (contact m mod 30), through the bulk writer.
  const generated = await generateAccount(ctx.store, { contacts: 30, messages: 0, logMessages: 75 });
  const threads = await expected(ctx, generated.accountId);
  assert.equal(threads.length, 30);
  assert.ok(threads.every((c) => c.ContactId !== '' && c.Unread === 0));
  const page = await listAll(ctx, generated.token);
  assertBody(page, 'json', 200, threads);
  assert.equal(page.headers['x-pagination-total-count'], '30');

  // The demo account's week of history (src/domain/demo.ts), inbound texts included.
  const history = await createDemoAccount(ctx.store, recordMappers(createTimeFormat('UTC')), 'US', 'History', { history: true });
  const withHistory = await expected(ctx, history.account.id);
  assert.ok(withHistory.length > 0 && withHistory.some((c) => c.Unread > 0));
  const all = await listAll(ctx, history.token, 'json', 'per-page=100');
  assertBody(all, 'json', 200, withHistory.slice(0, 100));
  assert.equal(all.headers['x-pagination-total-count'], String(withHistory.length));
});
