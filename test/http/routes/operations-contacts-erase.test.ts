/**
 * `DELETE /v1/contacts/erase?number=` (docs/API.md §10.2.1), on each store. A person's rich history
 * is made through the API first (a contact with custom field values and groups, sends with tracked
 * links and a click, inbound texts, STOP and START, a keyword, a send-group, a scheduled message,
 * webhook deliveries, kept Idempotency-Key responses among them a 422 quoting the number, an
 * audit entry naming it, a sender pool's monthly recipients), and the same number's history in
 * another account. After the erasure:
 * - a search of the WHOLE database (every table, every column, bytes included, read from the
 *   database's own catalogue) for the number (its E.164 digits with and without `+`, its national
 *   number, any writing of it) and for the person's texts and contact data finds nothing but the
 *   consent ledger's hash, in `erased_consent.number_sha256`;
 * - the other account's rows are exactly as they were, and the caller's other data too;
 * - what stays says so: the log's `erased` messages, the one `erased` conversation, the refunded
 *   Rejected message, the links' 404, the replayed response, the audit entry without the number.
 * Then: idempotent (again, a number never seen: 204), the 400/422 of a bad number in JSON and XML,
 * the scope, and all or nothing (a failure midway changes nothing).
 */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { numberSha256 } from '../../../src/domain/erasure.ts';
import { insertNumber } from '../../../src/store/repositories/numbers.ts';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import { assert422, assertError, XML_TYPE } from '../../helpers/operations.ts';
import { schemaColumns, tableRows } from '../../helpers/schema.ts';
import { testDispatcher } from '../../helpers/sms.ts';
import { storeTest } from '../../helpers/stores.ts';

/** The person: one number, written as people write it. */
const E164 = '+13125550178';
const DIGITS = '13125550178';
const NATIONAL = '3125550178';
const WRITTEN = '+1 (312) 555-0178';

/** The person's texts and contact data: none may survive the erasure anywhere. */
const FIRST = 'Zebedee';
const CONTACT = {
  FirstName: FIRST,
  LastName: 'Quillfeather',
  Email: 'zebedee@quill.example',
  City: 'Quillton',
  Zip: 'QZ 7788',
  BirthDay: '1987-06-05',
};
const ENTRY = 'prefers the side door after six';
const URL = 'https://example.com/zeb-parcel-4471';
const SENT = `Zeb, your parcel 4471 waits at the depot: ${URL}`;
const QUEUED = 'Zeb, last call for parcel 4471 before it goes back';
const INBOUND = 'Thanks, I will pick the parcel up tomorrow morning';
const KEYWORD_TEXT = 'PARCEL track the blue box please';
const SCHEDULED = 'Zeb, reminder: the dentist on Friday at nine';
const GROUP_TEMPLATE = 'Hi {FirstName}, spring news for the whole group';
const GROUP_TEXT = `Hi ${FIRST}, spring news for the whole group`;
const PREVIEW = 'Dear {FirstName} {LastName} of {City}, a preview';
const NEEDLES = [
  ...Object.values(CONTACT),
  ENTRY,
  URL,
  'your parcel 4471 waits at the depot',
  QUEUED,
  INBOUND,
  KEYWORD_TEXT,
  SCHEDULED,
  GROUP_TEXT,
  'ZebPhone/7.1',
  `Dear ${FIRST} ${CONTACT.LastName} of ${CONTACT.City}, a preview`,
];

/** A request with the headers a test needs (Idempotency-Key, X-Request-Id, Accept). */
async function send(
  ctx: TestApp,
  token: string,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  o: { query?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<LightMyRequestResponse> {
  return ctx.app.inject({
    method,
    url: `${path}?access_token=${encodeURIComponent(token)}${o.query ? `&${o.query}` : ''}`,
    headers: { accept: 'application/json', ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}), ...o.headers },
    ...(o.body !== undefined ? { payload: JSON.stringify(o.body) } : {}),
  });
}

async function ok(res: Promise<LightMyRequestResponse>, status: number): Promise<unknown> {
  const r = await res;
  assert.equal(r.statusCode, status, `${r.statusCode} ${r.body}`);
  return r.body === '' ? undefined : JSON.parse(r.body);
}

interface World {
  ctx: TestApp;
  a: { id: number; token: string; number: string };
  b: { id: number; token: string; number: string };
  contactId: number;
  /** The message sent with a tracked link, its code, the Queued one, the kept send's body. */
  sentId: number;
  code: string;
  queuedId: number;
  sendBody: unknown;
}

/** Both accounts, and the person's history in each, made through the API. */
async function world(t: { after(fn: () => unknown): void }): Promise<World> {
  const ctx = await buildTestApp(t, { MSGSVC_WEBHOOK_ALLOW_PRIVATE: '1', MSGSVC_LINK_DOMAIN: 'https://go.example.test' });
  const demoA = await ctx.seed('Erasing');
  const demoB = await ctx.seed('Other');
  const now = Math.floor(Date.now() / 1000);
  // Each account sends and receives on a long number of its own (the demo's are shared by every demo account).
  const a = { id: demoA.account.id, token: demoA.token, number: '15550190001' };
  const b = { id: demoB.account.id, token: demoB.token, number: '15550190002' };
  await insertNumber(ctx.store.db, a.id, a.number, 0, null, now);
  await insertNumber(ctx.store.db, b.id, b.number, 0, null, now);
  const A = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, o: Parameters<typeof send>[4] = {}) =>
    send(ctx, a.token, method, path, o);
  const key = (k: string) => ({ 'idempotency-key': k });

  // Webhooks of every event, never delivered here: their deliveries stay in the outbox.
  await ok(
    A('POST', '/v1/webhooks/create', {
      body: {
        Url: 'http://127.0.0.1:9/hook',
        Events: [
          'message.sent',
          'message.delivered',
          'message.undelivered',
          'message.failed',
          'message.rejected',
          'message.received',
          'contact.opted_out',
          'contact.opted_in',
          'scheduled.action_required',
          'link.clicked',
        ],
      },
    }),
    201,
  );
  // The number's monthly recipients are counted while it has a limit (API.md §17).
  await ok(A('PUT', '/v1/numbers/update', { query: `number=${a.number}`, body: { MaxRecipientsPerMonth: 1000 } }), 200);
  // An audit entry whose ObjectId is the person's number as sent (not a number of the account: 404).
  await ok(A('PUT', '/v1/numbers/update', { query: `number=${encodeURIComponent(WRITTEN)}`, body: { MaxPerDay: 5 } }), 404);

  const field = (await ok(A('POST', '/v1/custom-contact-fields/create', { body: { fname: 'Delivery notes' } }), 201)) as { Id: number };
  const group = (await ok(A('POST', '/v1/groups/create', { body: { fname: 'Parcel customers' } }), 201)) as { Id: number };
  const keyword = (await ok(
    A('POST', '/v1/keyword/reserve', { body: { Keyword: 'PARCEL', Number: a.number, AutoreplyMessage: 'Parcel desk here' } }),
    201,
  )) as { Id: number }[];
  const keywordGroup = (await ok(
    A('POST', '/v1/groups/create', { body: { fname: 'Parcel keyword', KeywordId: keyword[0]!.Id } }),
    201,
  )) as {
    Id: number;
  };
  const contact = (await ok(
    A('POST', '/v1/contacts/create', { body: { Number: WRITTEN, ...CONTACT, GroupIds: [group.Id] }, headers: key('contact-1') }),
    201,
  )) as { Id: number };
  // A kept 422 that quotes the number as sent.
  await ok(A('POST', '/v1/contacts/create', { body: { Number: WRITTEN }, headers: key('contact-2') }), 422);
  await ok(
    A('POST', '/v1/custom-contact-fields-entry/create', {
      body: { frfield: field.Id, frcontact: contact.Id, fvalue: ENTRY },
      headers: key('entry-1'),
    }),
    201,
  );

  // A send with a tracked link, kept under a key; one under a key built from the number; a request id naming it.
  const sendBody = { MobilePhone: WRITTEN, Message: SENT, Number: a.number, ShortenLinks: 1 };
  const sent = (await ok(
    A('POST', '/v1/sms/send', { body: sendBody, headers: { ...key('send-1'), 'x-request-id': `zeb-${DIGITS}` } }),
    201,
  )) as {
    Id: number;
    Message: string;
  }[];
  const code = /\/l\/([A-Za-z0-9_-]{7})/.exec(sent[0]!.Message)![1]!;
  await ok(
    A('POST', '/v1/sms/send', {
      body: { MobilePhone: DIGITS, Message: 'Second notice', Number: a.number },
      headers: key(`send-${DIGITS}`),
    }),
    201,
  );
  await ok(A('POST', '/v1/sms/send-group', { body: { GroupId: group.Id, Message: GROUP_TEMPLATE, Number: a.number } }), 201);
  // A kept preview of a personalised text: it names no number, only the contact's words.
  await ok(
    A('POST', '/v1/sms/preview', { body: { MobilePhone: E164, Message: PREVIEW, Number: a.number }, headers: key('preview-1') }),
    200,
  );
  // The person texts in: a text, a keyword (joins its group, gets the autoreply), STOP and START.
  for (const [i, text] of [INBOUND, KEYWORD_TEXT, 'STOP', 'START'].entries())
    await ok(A('POST', '/v1/sandbox/inbound', { body: { From: E164, To: a.number, Message: text }, headers: key(`in-${i}`) }), 201);
  await ok(A('POST', '/v1/sms/mark-read', { query: `MobilePhone=${encodeURIComponent(WRITTEN)}`, headers: key('read-1') }), 204);
  await ok(
    A('POST', '/v1/sms/schedule', {
      body: {
        MobilePhone: E164,
        Message: SCHEDULED,
        DateTime: new Date(Date.now() + 200 * 86_400_000).toISOString().slice(0, 19).replace('T', ' '),
        Number: a.number,
      },
      headers: key('schedule-1'),
    }),
    201,
  );
  // To the carrier and back (Sent, then Delivered), then the person follows the link.
  const { dispatcher, clock } = testDispatcher(ctx, { receiptMs: 1000 });
  await dispatcher.drain();
  clock.advance(1000);
  await dispatcher.drain();
  const click = await ctx.app.inject({
    method: 'GET',
    url: `/l/${code}`,
    headers: { 'user-agent': 'ZebPhone/7.1' },
    remoteAddress: '203.0.113.77',
  });
  assert.equal(click.statusCode, 302);
  assert.equal(click.headers.location, URL);
  // One more, left Queued: the erasure rejects it.
  const queued = (await ok(A('POST', '/v1/sms/send', { body: { MobilePhone: E164, Message: QUEUED, Number: a.number } }), 201)) as {
    Id: number;
  }[];

  // The same person in the other account.
  const B = (method: 'POST', path: string, body: unknown) => send(ctx, b.token, method, path, { body });
  await ok(B('POST', '/v1/contacts/create', { Number: E164, FirstName: FIRST, LastName: 'Quillfeather' }), 201);
  await ok(B('POST', '/v1/sms/send', { MobilePhone: E164, Message: 'Account B writes to Zebedee', Number: b.number }), 201);
  await ok(B('POST', '/v1/sandbox/inbound', { From: E164, To: b.number, Message: 'Zebedee answers account B' }), 201);

  const w: World = { ctx, a, b, contactId: contact.Id, sentId: sent[0]!.Id, code, queuedId: queued[0]!.Id, sendBody };
  // The history is there to erase.
  const db = ctx.store.db;
  const count = async (
    table: 'messages' | 'contact_consent' | 'group_members' | 'custom_field_entries',
    where: 'mobile_phone' | 'contact_id',
    v: string | number,
  ) =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('account_id', '=', a.id)
          .where(where, '=', v as never)
          .executeTakeFirstOrThrow()
      ).n,
    );
  assert.ok((await count('messages', 'mobile_phone', DIGITS)) >= 10);
  assert.equal(await count('contact_consent', 'contact_id', contact.Id), 2);
  assert.equal(await count('group_members', 'contact_id', contact.Id), 2, 'its group and the keyword group');
  assert.equal(await count('custom_field_entries', 'contact_id', contact.Id), 1);
  assert.ok(keywordGroup.Id > 0);
  return w;
}

/** Every row of every table that has `account_id`, of one account, in a stable order. */
async function accountRows(ctx: TestApp, accountId: number): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const [table, columns] of await schemaColumns(ctx.store)) {
    if (!columns.includes('account_id')) continue;
    const rows = await tableRows(ctx.store, table);
    out[table] = rows
      .filter((r) => Number(r.account_id) === accountId)
      .map((r) => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)))
      .sort();
  }
  out.accounts = (await tableRows(ctx.store, 'accounts')).filter((r) => Number(r.id) === accountId).map((r) => JSON.stringify(r));
  return out;
}

/** The texts a stored value can be read as: text, or bytes as UTF-8 and Latin-1. */
function textsOf(value: unknown): string[] {
  if (value === null || value === undefined) return [];
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) {
    const bytes = Buffer.from(value);
    return [bytes.toString('utf8'), bytes.toString('latin1'), bytes.toString('utf16le')];
  }
  if (typeof value === 'string') return [value];
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return [String(value)];
  return [JSON.stringify(value)];
}

/** A run of digits and the separators of a phone number: any writing of one. */
const RUN = /[+(]*\d(?:[\d\s().\-/]*\d)?/g;

/**
 * Every place in the whole database that still holds the person, but the other account's rows:
 * `table.column` and what was found (the number in any writing, a text, the hash).
 */
async function search(ctx: TestApp, otherAccount: number, hash: string): Promise<string[]> {
  const found: string[] = [];
  for (const [table, columns] of await schemaColumns(ctx.store)) {
    for (const row of await tableRows(ctx.store, table)) {
      if (columns.includes('account_id') && Number(row.account_id) === otherAccount) continue;
      if (table === 'accounts' && Number(row.id) === otherAccount) continue;
      for (const column of columns) {
        for (const text of textsOf(row[column])) {
          const what: string[] = [];
          if (text.includes(NATIONAL)) what.push('the number');
          else if ([...text.matchAll(RUN)].some((m) => m[0].replace(/\D/g, '').includes(NATIONAL))) what.push('a writing of the number');
          for (const needle of NEEDLES) if (text.includes(needle)) what.push(JSON.stringify(needle));
          if (text.includes(hash)) what.push('the hash');
          if (what.length > 0) found.push(`${table}.${column}: ${what.join(', ')}`);
        }
      }
    }
  }
  return [...new Set(found)].sort();
}

storeTest("contacts/erase: after it, the whole database holds nothing of the person but the consent ledger's hash", async (t) => {
  const w = await world(t);
  const { ctx, a, b } = w;
  const db = ctx.store.db;
  const hash = numberSha256(DIGITS);
  const ledger = await db
    .selectFrom('contact_consent')
    .selectAll()
    .where('account_id', '=', a.id)
    .where('contact_id', '=', w.contactId)
    .orderBy('id')
    .execute();
  const balance = async () =>
    Number(
      (await db.selectFrom('credit_balances').select('available_credits').where('account_id', '=', a.id).executeTakeFirstOrThrow())
        .available_credits,
    );
  const before = { b: await accountRows(ctx, b.id), balance: await balance() };
  const queuedCredits = Number(
    (await db.selectFrom('messages').select('credits').where('id', '=', w.queuedId).executeTakeFirstOrThrow()).credits,
  );
  const scheduled = await db
    .selectFrom('scheduled_messages')
    .select(['id', 'reserved_credits'])
    .where('account_id', '=', a.id)
    .where('mobile_phone', '=', DIGITS)
    .executeTakeFirstOrThrow();
  const scheduledReserved = Number(scheduled.reserved_credits ?? 0);
  // The caller's other data: its messages with anyone else.
  const othersBefore = await db
    .selectFrom('messages')
    .selectAll()
    .where('account_id', '=', a.id)
    .where('mobile_phone', '<>', DIGITS)
    .orderBy('id')
    .execute();
  const contactsBefore = await db.selectFrom('contacts').select('id').where('account_id', '=', a.id).execute();

  const res = await send(ctx, a.token, 'DELETE', '/v1/contacts/erase', { query: `number=${encodeURIComponent(WRITTEN)}` });
  assert.equal(res.statusCode, 204, res.body);
  assert.equal(res.body, '');

  // 1. The whole database: nothing of the person but the hash in the consent ledger of erased contacts.
  assert.deepEqual(await search(ctx, b.id, hash), ['erased_consent.number_sha256: the hash']);

  // 2. The other account: every row exactly as it was (the same number, texts and names included).
  assert.deepEqual(await accountRows(ctx, b.id), before.b);
  assert.equal((await send(ctx, b.token, 'GET', '/v1/contacts/find', { query: `number=${DIGITS}` })).statusCode, 200);

  // 3. The caller's: the contact gone, its ledger kept with the hash, the rest of its data unchanged.
  assert.equal((await send(ctx, a.token, 'GET', '/v1/contacts/find', { query: `number=${DIGITS}` })).statusCode, 404);
  assert.deepEqual(
    (await db.selectFrom('contacts').select('id').where('account_id', '=', a.id).execute()).map((r) => r.id).sort(),
    contactsBefore
      .map((r) => r.id)
      .filter((id) => id !== w.contactId)
      .sort(),
  );
  const kept = await db.selectFrom('erased_consent').selectAll().where('account_id', '=', a.id).orderBy('id').execute();
  assert.deepEqual(
    kept.map(({ erased_at: _e, number_sha256, ...entry }) => ({ ...entry, number_sha256 })),
    ledger.map(({ contact_id: _c, ...entry }) => ({ ...entry, number_sha256: hash })),
    'the consent ledger, entry by entry, with the hash for the number',
  );
  assert.deepEqual(
    kept.map((e) => [e.opted_out, e.source, e.detail]),
    [
      [1, 'keyword', 'STOP'],
      [0, 'keyword', 'START'],
    ],
  );
  assert.deepEqual(
    await db
      .selectFrom('messages')
      .selectAll()
      .where('account_id', '=', a.id)
      .where('mobile_phone', '<>', 'erased')
      .orderBy('id')
      .execute(),
    othersBefore,
  );

  // 4. The log keeps the messages, `erased` and without text; the Queued one Rejected and refunded.
  const log = await db
    .selectFrom('messages')
    .select(['id', 'mobile_phone', 'message', 'status_id', 'error_code'])
    .where('account_id', '=', a.id)
    .where('mobile_phone', '=', 'erased')
    .execute();
  assert.ok(log.length >= 10);
  assert.ok(log.every((m) => m.message === ''));
  assert.deepEqual(
    log.filter((m) => m.id === w.queuedId).map((m) => [m.status_id, m.error_code]),
    [[6, 'ERASED']],
  );
  assert.equal(await balance(), before.balance + queuedCredits + scheduledReserved);
  const refunds = await db
    .selectFrom('credit_ledger')
    .select(['type', 'amount', 'reference', 'note'])
    .where('account_id', '=', a.id)
    .where('note', '=', 'Recipient erased')
    .orderBy('id')
    .execute();
  assert.deepEqual(
    refunds.map((r) => [r.type, r.reference]),
    [['refund', `message:${w.queuedId}`], ...(scheduledReserved > 0 ? [['refund', `scheduled:${scheduled.id}`]] : [])],
  );
  assert.equal(
    (await send(ctx, a.token, 'GET', '/v1/sms/view', { query: `id=${w.queuedId}` })).json<{ ErrorCode: string }>().ErrorCode,
    'ERASED',
  );
  // Its webhook event names no one.
  const rejected = await db
    .selectFrom('webhook_deliveries')
    .select('payload')
    .where('account_id', '=', a.id)
    .where('event', '=', 'message.rejected')
    .execute();
  assert.equal(rejected.length, 1);
  assert.equal((JSON.parse(rejected[0]!.payload) as { data: { mobile_phone: string } }).data.mobile_phone, 'erased');

  // 5. One conversation `erased`; the scheduled message cancelled; the link answers 404 and keeps its count.
  const threads = (await send(ctx, a.token, 'GET', '/v1/sms/conversations', { query: 'per-page=100' })).json<
    { MobilePhone: string; ContactId: unknown }[]
  >();
  assert.deepEqual(
    threads.filter((c) => c.MobilePhone === 'erased').map((c) => c.ContactId),
    [''],
  );
  assert.equal(
    (await db.selectFrom('scheduled_messages').select('id').where('account_id', '=', a.id).where('mobile_phone', '=', DIGITS).execute())
      .length,
    0,
  );
  assert.equal((await ctx.app.inject({ method: 'GET', url: `/l/${w.code}` })).statusCode, 404);
  assert.equal((await ctx.app.inject({ method: 'HEAD', url: `/l/${w.code}` })).statusCode, 404);
  const links = (await send(ctx, a.token, 'GET', '/v1/sms/links', { query: `id=${w.sentId}` })).json<
    { Url: string; Code: string; Clicks: number }[]
  >();
  assert.deepEqual(
    links.map((l) => [l.Url, l.Code, l.Clicks]),
    [['', w.code, 1]],
  );
  // The monthly recipient stays counted, as a token.
  const recipients = await db
    .selectFrom('number_month_recipients')
    .select('mobile_phone')
    .where('account_id', '=', a.id)
    .where('number', '=', a.number)
    .execute();
  assert.ok(
    recipients.some((r) => /^erased:[0-9a-f]{16}$/.test(r.mobile_phone)),
    JSON.stringify(recipients),
  );

  // 6. A kept response replays as the log now is; a key built from the number is forgotten.
  const replay = await send(ctx, a.token, 'POST', '/v1/sms/send', { body: w.sendBody, headers: { 'idempotency-key': 'send-1' } });
  assert.equal(replay.statusCode, 201, replay.body);
  assert.equal(replay.headers['idempotent-replayed'], 'true');
  assert.deepEqual(
    replay.json<{ MobilePhone: string; Message: string }[]>().map((m) => [m.MobilePhone, m.Message]),
    [['erased', '']],
  );
  assert.equal(
    (await db.selectFrom('idempotency_keys').select('key').where('account_id', '=', a.id).where('key', 'like', '%0178%').execute()).length,
    0,
  );

  // 7. The audit entry: who erased, the contact's id, never the number; the old entry's number is gone.
  const audit = (await send(ctx, a.token, 'GET', '/v1/audit/index', { query: 'Operation=contacts.erase' })).json<
    { ObjectId: string; Status: number }[]
  >();
  assert.deepEqual(
    audit.map((e) => [e.ObjectId, e.Status]),
    [[String(w.contactId), 204]],
  );
  const named = (await send(ctx, a.token, 'GET', '/v1/audit/index', { query: 'Operation=numbers.update&per-page=100' })).json<
    { ObjectId: string; Status: number }[]
  >();
  assert.deepEqual(named.map((e) => e.ObjectId).sort(), [a.number, 'erased'].sort());

  // 8. Idempotent: again, and for a number never seen, 204 and nothing changes but the audit log.
  const rowsAfter = await accountRows(ctx, a.id);
  for (const number of [DIGITS, '+1 312 555 0100']) {
    const again = await send(ctx, a.token, 'DELETE', '/v1/contacts/erase', { query: `number=${encodeURIComponent(number)}` });
    assert.equal(again.statusCode, 204, again.body);
  }
  const { audit_log: auditAfter, ...restAfter } = await accountRows(ctx, a.id);
  const { audit_log: auditBefore, ...restBefore } = rowsAfter;
  assert.deepEqual(restAfter, restBefore);
  assert.equal(auditAfter!.length, auditBefore!.length + 2);
  const last = (await send(ctx, a.token, 'GET', '/v1/audit/index', { query: 'Operation=contacts.erase' })).json<
    { ObjectId: string; Status: number }[]
  >();
  assert.deepEqual(
    last.map((e) => [e.ObjectId, e.Status]),
    [
      ['', 204],
      ['', 204],
      [String(w.contactId), 204],
    ],
  );
});

storeTest(
  'contacts/erase: the number is read like contacts/find; a bad one is a 400 or 422 in the negotiated format; the scope is contacts:write',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const erase = (query: string, accept = 'application/json', token = demo.token) =>
      ctx.app.inject({ method: 'DELETE', url: `/v1/contacts/erase?access_token=${token}${query}`, headers: { accept } });
    assertError(await erase(''), 400, 'Missing required parameters: number');
    assert422(await erase('&number='), [{ field: 'number', message: 'Number cannot be blank.' }]);
    assert422(await erase('&number=%20%20'), [{ field: 'number', message: 'Number cannot be blank.' }]);
    assert422(await erase('&number=abc'), [{ field: 'number', message: 'Number is invalid.' }]);
    assert422(await erase('&number=12'), [{ field: 'number', message: 'Number is invalid.' }]);
    const xml = await erase('&number=abc', 'application/xml');
    assert.equal(xml.statusCode, 422);
    assert.equal(xml.headers['content-type'], XML_TYPE);
    assert.equal(
      xml.body,
      '<?xml version="1.0" encoding="UTF-8"?>\n<response><item><field>number</field><message>Number is invalid.</message></item></response>\n',
    );
    assertError(await erase('&number[]=13125550178'), 400, 'Invalid data received for parameter "number".');
    for (const method of ['GET', 'POST', 'PUT'] as const) {
      const res = await ctx.app.inject({ method, url: `/v1/contacts/erase?access_token=${demo.token}&number=13125550178` });
      assert.equal(res.statusCode, 405, method);
      assert.equal(res.headers.allow, 'DELETE');
    }
    // A demo contact, erased by its national writing (the default region).
    const contact = demo.contacts[0]!;
    assert.equal(
      (
        await erase(
          `&number=${encodeURIComponent(`(${contact.Number.slice(1, 4)}) ${contact.Number.slice(4, 7)}-${contact.Number.slice(7)}`)}`,
        )
      ).statusCode,
      204,
    );
    assert.equal((await ctx.app.inject({ url: `/v1/contacts/view?id=${contact.Id}&access_token=${demo.token}` })).statusCode, 404);
    // contacts:read is not enough (403, and nothing erased).
    const created = await ctx.app.inject({
      method: 'POST',
      url: `/v1/keys/create?access_token=${demo.token}`,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ Name: 'reader', Scopes: ['contacts:read'] }),
    });
    assert.equal(created.statusCode, 201, created.body);
    const reader = created.json<{ Secret: string }>().Secret;
    const other = demo.contacts[1]!;
    assertError(await erase(`&number=${other.Number}`, 'application/json', reader), 403, 'You are not allowed to perform this action.');
    assert.equal((await ctx.app.inject({ url: `/v1/contacts/view?id=${other.Id}&access_token=${demo.token}` })).statusCode, 200);
  },
);

storeTest('contacts/erase: all or nothing: a failure midway leaves every row as it was', async (t, kind) => {
  const w = await world(t);
  const { ctx, a } = w;
  const db = ctx.store.db;
  const before = await accountRows(ctx, a.id);
  // The messages refuse to change, after the contact's rows were already written in the transaction.
  if (kind === 'sqlite')
    await sql`CREATE TRIGGER erase_fails BEFORE UPDATE OF message ON messages BEGIN SELECT RAISE(ABORT, 'erase_fails'); END`.execute(db);
  else {
    await sql`CREATE FUNCTION erase_fails() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'erase_fails'; END $$`.execute(db);
    await sql`CREATE TRIGGER erase_fails BEFORE UPDATE OF message ON messages FOR EACH ROW EXECUTE FUNCTION erase_fails()`.execute(db);
  }
  const failed = await send(ctx, a.token, 'DELETE', '/v1/contacts/erase', { query: `number=${DIGITS}` });
  assertError(failed, 500, 'An internal server error occurred.');
  const { audit_log: auditAfter, ...after } = await accountRows(ctx, a.id);
  const { audit_log: auditBefore, ...rest } = before;
  assert.deepEqual(after, rest, 'nothing changed');
  // Only the refusal's own audit entry, with its 500.
  assert.equal(auditAfter!.length, auditBefore!.length + 1);
  assert.match(
    auditAfter!.find((e) => !auditBefore!.includes(e))!,
    /"operation":"contacts\.erase".*"status":500/,
  );
  await sql`DROP TRIGGER erase_fails ${sql.raw(kind === 'sqlite' ? '' : 'ON messages')}`.execute(db);
  assert.equal((await send(ctx, a.token, 'DELETE', '/v1/contacts/erase', { query: `number=${DIGITS}` })).statusCode, 204);
  assert.equal((await db.selectFrom('contacts').select('id').where('id', '=', w.contactId).execute()).length, 0);
});

storeTest('contacts/erase: two erased numbers make one `erased` conversation, and the count of conversations follows', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const A = (method: 'GET' | 'POST' | 'DELETE', path: string, o: Parameters<typeof send>[4] = {}) => send(ctx, demo.token, method, path, o);
  for (const n of ['+13125550101', '+13125550102']) {
    await ok(A('POST', '/v1/sms/send', { body: { MobilePhone: n, Message: `to ${n}` } }), 201);
    await ok(A('POST', '/v1/sandbox/inbound', { body: { From: n, To: demo.numbers[0]!.Number, Message: `from ${n}` } }), 201);
  }
  const total = async () => Number((await A('GET', '/v1/sms/conversations')).headers['x-pagination-total-count']);
  const start = await total();
  await ok(A('DELETE', '/v1/contacts/erase', { query: 'number=13125550101' }), 204);
  assert.equal(await total(), start);
  await ok(A('DELETE', '/v1/contacts/erase', { query: 'number=13125550102' }), 204);
  assert.equal(await total(), start - 1);
  const threads = (await A('GET', '/v1/sms/conversations', { query: 'per-page=100' })).json<
    { MobilePhone: string; Unread: number; LastMessage: { Id: number } }[]
  >();
  const erased = threads.filter((c) => c.MobilePhone === 'erased');
  assert.equal(erased.length, 1);
  assert.equal(erased[0]!.Unread, 2, 'the unread inbound texts of both');
  const newest = await ctx.store.db
    .selectFrom('messages')
    .select((eb) => eb.fn.max('id').as('id'))
    .where('account_id', '=', demo.account.id)
    .where('mobile_phone', '=', 'erased')
    .executeTakeFirstOrThrow();
  assert.equal(erased[0]!.LastMessage.Id, Number(newest.id));
  assert.equal(threads.length, Math.min(100, start - 1));
});

storeTest(
  'contacts/erase: a number erased while opted out stays opted out for sms/send and sms/preview, until it is a contact again',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const number = '15550190001';
    await insertNumber(ctx.store.db, demo.account.id, number, 0, null, Math.floor(Date.now() / 1000));
    const A = (method: 'POST' | 'DELETE', path: string, o: Parameters<typeof send>[4] = {}) => send(ctx, demo.token, method, path, o);
    const stopped = '+13125550111';
    const willing = '+13125550122';
    // One texts STOP, the other START (a contact with a consent entry saying opted in).
    await ok(A('POST', '/v1/sandbox/inbound', { body: { From: stopped, To: number, Message: 'STOP' } }), 201);
    await ok(A('POST', '/v1/sandbox/inbound', { body: { From: willing, To: number, Message: 'STOP' } }), 201);
    await ok(A('POST', '/v1/sandbox/inbound', { body: { From: willing, To: number, Message: 'START' } }), 201);
    for (const n of [stopped, willing]) await ok(A('DELETE', '/v1/contacts/erase', { query: `number=${encodeURIComponent(n)}` }), 204);
    const opted = [{ field: 'MobilePhone', message: 'Mobile Phone has opted out.' }];
    for (const path of ['/v1/sms/send', '/v1/sms/preview'])
      assert422(await A('POST', path, { body: { MobilePhone: stopped, Message: 'hello again' } }), opted);
    await ok(A('POST', '/v1/sms/send', { body: { MobilePhone: willing, Message: 'hello again' } }), 201);
    // A contact made again with the number is a new relationship: its own consent (none) counts.
    await ok(A('POST', '/v1/contacts/create', { body: { Number: stopped } }), 201);
    await ok(A('POST', '/v1/sms/send', { body: { MobilePhone: stopped, Message: 'hello again' } }), 201);
  },
);
