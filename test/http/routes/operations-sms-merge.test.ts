/**
 * Personalised sends (API.md §14.3.1, §14.4.3), over inject, in JSON and XML,
 * on each store: `send` and `send-group` replace merge fields with each recipient's values and
 * count each text as sent; `send-group` is all or nothing on the sum of its personalised costs;
 * the one-statement fast path still unescapes `{{`/`}}`; `ShortenLinks` replaces URLs by tracked
 * links stored with the message (one code per distinct URL), its 422s, and the setting being
 * unset; a code that clashes gets a fresh one without breaking the transaction; an MMS template's
 * Message is merged when the dispatcher hands it over. A property test checks that preview and
 * send agree with each other and with an oracle of the merged text.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { DemoAccount } from '../../../src/domain/demo.ts';
import { storeLinks } from '../../../src/domain/personalise.ts';
import { messageCost } from '../../../src/domain/segments.ts';
import { inTransaction } from '../../../src/store/db.ts';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import { assert422, assertBody, call, fieldError, snapshotAccount, WIRES, type Wire } from '../../helpers/operations.ts';
import { balanceOf, batchFromDb, createMmsTemplate, messageFromDb, setBalance, testDispatcher } from '../../helpers/sms.ts';
import { storeTest } from '../../helpers/stores.ts';

const SEND = '/v1/sms/send';
const GROUP = '/v1/sms/send-group';
const PREVIEW = '/v1/sms/preview';
const DOMAIN = 'https://go.example.com';
const PRICES = { smsSegmentCredits: 1, mmsCredits: 3 };
const CODE = '[A-Za-z0-9_-]{7}';

const optedIn = (demo: DemoAccount) => demo.contacts.find((c) => c.OptedOut === 0)!;

async function setContact(
  ctx: TestApp,
  id: number,
  values: Partial<Record<'first_name' | 'last_name' | 'city' | 'zip' | 'email', string>>,
) {
  await ctx.store.db.updateTable('contacts').set(values).where('id', '=', id).execute();
}

/** The account's entry of a custom field for a contact, created or changed. */
async function setEntry(ctx: TestApp, accountId: number, fieldId: number, contactId: number, entry: string) {
  const db = ctx.store.db;
  const found = await db
    .selectFrom('custom_field_entries')
    .select('id')
    .where('custom_field_id', '=', fieldId)
    .where('contact_id', '=', contactId)
    .executeTakeFirst();
  if (found) await db.updateTable('custom_field_entries').set({ entry }).where('id', '=', found.id).execute();
  else
    await db
      .insertInto('custom_field_entries')
      .values({ account_id: accountId, custom_field_id: fieldId, contact_id: contactId, entry, created_at: 0, updated_at: 0 })
      .execute();
}

/** Every row a send could write: the account's data, its messages, batches and links. */
async function snapshot(ctx: TestApp, accountId: number) {
  const base = await snapshotAccount(ctx, accountId);
  const db = ctx.store.db;
  base.messages = await db.selectFrom('messages').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
  base.batches = await db.selectFrom('batches').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
  base.links = await db.selectFrom('message_links').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
  return base;
}

async function linksOf(ctx: TestApp, messageId: number) {
  return ctx.store.db
    .selectFrom('message_links')
    .select(['code', 'url', 'clicks'])
    .where('message_id', '=', messageId)
    .orderBy('id')
    .execute();
}

async function send(ctx: TestApp, demo: DemoAccount, body: Record<string, unknown>, wire: Wire = 'json') {
  return call(ctx.app, { method: 'POST', path: SEND, token: demo.token, wire, body });
}

/** The id of the one message a JSON or XML send answered with. */
async function lastId(ctx: TestApp, accountId: number): Promise<number> {
  const r = await ctx.store.db
    .selectFrom('messages')
    .select('id')
    .where('account_id', '=', accountId)
    .orderBy('id', 'desc')
    .executeTakeFirstOrThrow();
  return r.id;
}

// ------------------------------------------------------------------ send

storeTest(
  'sms/send: merge fields take the recipient contact values; the log shows the text as sent with its own cost (JSON, XML)',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const c = optedIn(demo);
    const field = demo.customFields[0]!;
    await setContact(ctx, c.Id, { first_name: 'Zoë', last_name: 'O’Hara', city: 'Zürich', zip: '8001', email: 'zoe@example.com' });
    await setEntry(ctx, demo.account.id, field.Id, c.Id, 'Teal');
    const text = `Hi {FirstName} {LastName} ({Number}, {City} {Zip}, {Email}): {Field:${field.Name.toUpperCase()}}/{Field:Nope} {{FirstName}} {Foo}`;
    const expected = `Hi Zoë O’Hara (${c.Number}, Zürich 8001, zoe@example.com): Teal/ {FirstName} {Foo}`;
    for (const wire of WIRES) {
      for (const recipient of [{ PhoneNumberId: c.Id }, { MobilePhone: `+${c.Number}` }]) {
        const before = await balanceOf(ctx, demo.account.id);
        const res = await send(ctx, demo, { Message: text, ...recipient }, wire);
        const record = await messageFromDb(ctx, await lastId(ctx, demo.account.id));
        assertBody(res, wire, 201, [record]);
        const cost = messageCost(1, expected, PRICES);
        assert.equal(record.Message, expected);
        assert.equal(cost.encoding, 'UCS-2', 'ë and ’ make it UCS-2');
        assert.deepEqual([record.Segments, record.Credits], [cost.segments, cost.credits]);
        assert.equal(await balanceOf(ctx, demo.account.id), before - cost.credits);
      }
    }
    // A recipient who is no contact: every field empty.
    const res = await send(ctx, demo, { Message: '[{FirstName}][{Number}][{Field:' + field.Name + '}]', MobilePhone: '+15559990000' });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(JSON.parse(res.body)[0].Message, '[][][]');
  },
);

storeTest(
  'sms/send: ShortenLinks replaces each URL by {domain}/l/{code}, one code per distinct URL, links stored; counted shortened',
  async (t) => {
    const ctx = await buildTestApp(t, { MSGSVC_LINK_DOMAIN: `${DOMAIN}/` });
    const demo = await ctx.seed();
    const c = optedIn(demo);
    const long = `https://shop.example.org/${'p'.repeat(60)}?utm=1`;
    // 239 characters as written (2 segments); 137 once shortened (1).
    const text = `${'x'.repeat(20)} ${long}, again ${long}. And (https://b.example/x).`;
    assert.equal(messageCost(1, text, PRICES).segments, 2);
    for (const wire of WIRES) {
      const res = await send(ctx, demo, { Message: text, PhoneNumberId: c.Id, ShortenLinks: wire === 'json' ? 1 : '1' }, wire);
      const id = await lastId(ctx, demo.account.id);
      const record = await messageFromDb(ctx, id);
      assertBody(res, wire, 201, [record]);
      const m = new RegExp(`^x{20} ${DOMAIN}/l/(${CODE}), again ${DOMAIN}/l/(${CODE})\\. And \\(${DOMAIN}/l/(${CODE})\\)\\.$`).exec(
        record.Message,
      );
      assert.ok(m, record.Message);
      assert.equal(m[1], m[2], 'the same URL twice: one code');
      assert.notEqual(m[1], m[3], 'two URLs: two codes');
      assert.deepEqual(await linksOf(ctx, id), [
        { code: m[1], url: long, clicks: 0 },
        { code: m[3], url: 'https://b.example/x', clicks: 0 },
      ]);
      assert.deepEqual([record.Segments, record.Credits], [1, 1], 'segments counted on the shortened text');
    }
    // ShortenLinks 0 (or absent) leaves the text alone and stores no link.
    const plain = await send(ctx, demo, { Message: 'see https://x.io', PhoneNumberId: c.Id, ShortenLinks: 0 });
    assert.equal(JSON.parse(plain.body)[0].Message, 'see https://x.io');
    assert.deepEqual(await linksOf(ctx, await lastId(ctx, demo.account.id)), []);
    const codes = await ctx.store.db.selectFrom('message_links').select('code').execute();
    assert.equal(new Set(codes.map((r) => r.code)).size, codes.length, 'codes are unique');
  },
);

storeTest('ShortenLinks: 0 or 1, its 422s in JSON and XML in API.md §10.6 order (last), on send, send-group and preview', async (t) => {
  const ctx = await buildTestApp(t, { MSGSVC_LINK_DOMAIN: DOMAIN });
  const demo = await ctx.seed();
  const group = demo.groups.find((g) => g.PhoneNumberIds.length > 0)!;
  const before = await snapshot(ctx, demo.account.id);
  const cases: [Record<string, unknown>, { field: string; message: string }[]][] = [
    [{ ShortenLinks: 2 }, [fieldError('ShortenLinks', 'Shorten Links is invalid.')]],
    [{ ShortenLinks: '-1' }, [fieldError('ShortenLinks', 'Shorten Links is invalid.')]],
    [{ ShortenLinks: 'yes' }, [fieldError('ShortenLinks', 'Shorten Links must be an integer.')]],
    [{ ShortenLinks: 1.5 }, [fieldError('ShortenLinks', 'Shorten Links must be an integer.')]],
    [{ ShortenLinks: [1] }, [fieldError('ShortenLinks', 'Shorten Links must be an integer.')]],
    [
      { ShortenLinks: 'x', Type_Id: 2, MmsTemplateId: 'y', Number: 'z' },
      [
        fieldError('Number', 'Number must be an integer.'),
        fieldError('MmsTemplateId', 'Mms Template Id must be an integer.'),
        fieldError('ShortenLinks', 'Shorten Links must be an integer.'),
      ],
    ],
  ];
  for (const [path, base] of [
    [SEND, { Message: 'hi https://x.io', MobilePhone: '+15551234567' }],
    [PREVIEW, { Message: 'hi https://x.io', MobilePhone: '+15551234567' }],
    [GROUP, { Message: 'hi https://x.io', GroupId: group.Id }],
  ] as const) {
    for (const [extra, errors] of cases) {
      for (const wire of WIRES) {
        assert422(await call(ctx.app, { method: 'POST', path, token: demo.token, wire, body: { ...base, ...extra } }), errors, wire);
      }
    }
  }
  assert.deepEqual(await snapshot(ctx, demo.account.id), before, 'nothing queued, stored or debited');

  // MSGSVC_LINK_DOMAIN unset: 1 is invalid, 0 is accepted.
  const bare = await buildTestApp(t);
  const d2 = await bare.seed();
  for (const path of [SEND, PREVIEW]) {
    for (const wire of WIRES) {
      const body = { Message: 'hi https://x.io', MobilePhone: '+15551234567', ShortenLinks: 1 };
      assert422(
        await call(bare.app, { method: 'POST', path, token: d2.token, wire, body }),
        [fieldError('ShortenLinks', 'Shorten Links is invalid.')],
        wire,
      );
    }
    const ok = await call(bare.app, {
      method: 'POST',
      path,
      token: d2.token,
      body: { Message: 'hi https://x.io', MobilePhone: '+15551234567', ShortenLinks: 0 },
    });
    assert.ok(ok.statusCode === 200 || ok.statusCode === 201, ok.body);
  }
});

storeTest('a link code already taken gets a fresh one and the message text follows, in the same (still usable) transaction', async (t) => {
  const ctx = await buildTestApp(t, { MSGSVC_LINK_DOMAIN: DOMAIN });
  const demo = await ctx.seed();
  const c = optedIn(demo);
  const a = JSON.parse((await send(ctx, demo, { Message: 'A https://a.io/x', PhoneNumberId: c.Id, ShortenLinks: 1 })).body)[0];
  const b = JSON.parse((await send(ctx, demo, { Message: 'B https://b.io/y y', PhoneNumberId: c.Id, ShortenLinks: 1 })).body)[0];
  const [taken] = await linksOf(ctx, a.Id);
  // Make B look as if it had drawn A's code: its text names it and it has no link row yet.
  await ctx.store.db.deleteFrom('message_links').where('message_id', '=', b.Id).execute();
  await ctx.store.db
    .updateTable('messages')
    .set({ message: `B ${DOMAIN}/l/${taken!.code} y` })
    .where('id', '=', b.Id)
    .execute();
  const rewritten = await inTransaction(ctx.store, async (tx) => {
    const changed = await storeLinks(tx, demo.account.id, b.Id, [{ code: taken!.code, url: 'https://b.io/y' }], 1);
    // The transaction is still usable after the clash (PostgreSQL aborts one whose statement failed).
    await tx.updateTable('credit_balances').set({ updated_at: 2 }).where('account_id', '=', demo.account.id).execute();
    return changed;
  });
  assert.equal(rewritten, true);
  const [fresh] = await linksOf(ctx, b.Id);
  assert.ok(fresh && fresh.code !== taken!.code && /^[A-Za-z0-9_-]{7}$/.test(fresh.code));
  assert.equal(fresh.url, 'https://b.io/y');
  assert.equal((await messageFromDb(ctx, b.Id)).Message, `B ${DOMAIN}/l/${fresh.code} y`);
  assert.deepEqual(await linksOf(ctx, a.Id), [taken], "A's link is untouched");
  const row = await ctx.store.db
    .selectFrom('credit_balances')
    .select('updated_at')
    .where('account_id', '=', demo.account.id)
    .executeTakeFirstOrThrow();
  assert.equal(Number(row.updated_at), 2, 'the transaction committed');
});

// ------------------------------------------------------------------ send-group

/** The group with the most members who have not opted out. */
function biggestGroup(demo: DemoAccount) {
  const eligible = (g: DemoAccount['groups'][number]) =>
    g.PhoneNumberIds.filter((id) => demo.contacts.find((c) => c.Id === id)!.OptedOut === 0);
  return [...demo.groups].sort((x, y) => eligible(y).length - eligible(x).length)[0]!;
}

/** Gives the group's members names of varied cost: some long (two segments), some UCS-2. */
async function variedNames(ctx: TestApp, memberIds: readonly number[]) {
  for (const [i, id] of memberIds.entries()) {
    const first = i % 3 === 0 ? 'A'.repeat(158) : i % 3 === 1 ? `Zoë${i}` : `Sam${i}`;
    await setContact(ctx, id, { first_name: first, city: `City${i}` });
  }
}

storeTest('sms/send-group: each member gets its own text and cost; the Batch Credits is the sum; opted-out members skipped', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const group = biggestGroup(demo);
  const members = demo.contacts.filter((c) => group.PhoneNumberIds.includes(c.Id));
  const eligible = members.filter((c) => c.OptedOut === 0).sort((a, b) => a.Id - b.Id);
  await variedNames(
    ctx,
    eligible.map((c) => c.Id),
  );
  const field = demo.customFields[1]!;
  await setEntry(ctx, demo.account.id, field.Id, eligible[0]!.Id, 'VIP');
  const text = `Dear {FirstName} of {City} {Field:${field.Name}}{{ok}}`;
  for (const wire of WIRES) {
    const before = await balanceOf(ctx, demo.account.id);
    const res = await call(ctx.app, { method: 'POST', path: GROUP, token: demo.token, wire, body: { Message: text, GroupId: group.Id } });
    assert.equal(res.statusCode, 201, res.body);
    const batchId = (await ctx.store.db.selectFrom('batches').select('id').orderBy('id', 'desc').executeTakeFirstOrThrow()).id;
    const rows = await ctx.store.db.selectFrom('messages').selectAll().where('batch_id', '=', batchId).orderBy('id').execute();
    assert.equal(rows.length, eligible.length);
    let sum = 0;
    for (const [i, r] of rows.entries()) {
      const contact = await ctx.store.db.selectFrom('contacts').selectAll().where('id', '=', eligible[i]!.Id).executeTakeFirstOrThrow();
      const entry =
        i === 0
          ? 'VIP'
          : ((
              await ctx.store.db
                .selectFrom('custom_field_entries')
                .select('entry')
                .where('custom_field_id', '=', field.Id)
                .where('contact_id', '=', contact.id)
                .executeTakeFirst()
            )?.entry ?? '');
      const expected = `Dear ${contact.first_name} of ${contact.city} ${entry}{ok}`;
      const cost = messageCost(1, expected, PRICES);
      assert.equal(r.mobile_phone, contact.number);
      assert.equal(r.message, expected);
      assert.deepEqual([r.segments, Number(r.credits)], [cost.segments, cost.credits]);
      assert.equal(r.status_id, 1);
      sum += cost.credits;
    }
    assert.ok(new Set(rows.map((r) => r.segments)).size > 1, 'costs differ between recipients');
    const batch = await batchFromDb(ctx, batchId);
    assertBody(res, wire, 201, batch);
    assert.deepEqual(
      [batch.Recipients, batch.Skipped, batch.Credits, batch.Message],
      [eligible.length, members.length - eligible.length, sum, text],
    );
    assert.equal(await balanceOf(ctx, demo.account.id), before - sum);
  }
});

storeTest(
  'sms/send-group: all or nothing on the sum of personalised costs (one credit short: the 422 names the sum; nothing queued)',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const group = biggestGroup(demo);
    const eligible = demo.contacts.filter((c) => group.PhoneNumberIds.includes(c.Id) && c.OptedOut === 0);
    await variedNames(
      ctx,
      eligible.map((c) => c.Id),
    );
    const body = { Message: 'Hello {FirstName}', GroupId: group.Id };
    let sum = 0;
    for (const c of eligible) {
      const first = (await ctx.store.db.selectFrom('contacts').select('first_name').where('id', '=', c.Id).executeTakeFirstOrThrow())
        .first_name;
      sum += messageCost(1, `Hello ${first}`, PRICES).credits;
    }
    assert.ok(sum > eligible.length, 'some recipients cost more than one credit');
    await setBalance(ctx, demo.account.id, sum - 1);
    const before = await snapshot(ctx, demo.account.id);
    for (const wire of WIRES) {
      const res = await call(ctx.app, { method: 'POST', path: GROUP, token: demo.token, wire, body });
      assert422(res, [fieldError('Message', `Not enough credits: ${sum} needed, ${sum - 1} available.`)], wire);
    }
    assert.deepEqual(await snapshot(ctx, demo.account.id), before, 'nothing queued, no batch, balance unchanged');
    await setBalance(ctx, demo.account.id, sum);
    const ok = await call(ctx.app, { method: 'POST', path: GROUP, token: demo.token, body });
    assert.equal(ok.statusCode, 201, ok.body);
    assert.equal(JSON.parse(ok.body).Credits, sum);
    assert.equal(await balanceOf(ctx, demo.account.id), 0);
  },
);

storeTest('sms/send-group: with no merge field the one-statement path still sends {{ and }} as braces, the same text to all', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const group = biggestGroup(demo);
  const res = await call(ctx.app, {
    method: 'POST',
    path: GROUP,
    token: demo.token,
    body: { Message: 'Code {{FirstName}} {Foo} €', GroupId: group.Id },
  });
  assert.equal(res.statusCode, 201, res.body);
  const batch = JSON.parse(res.body) as { Id: number; Recipients: number; Credits: number; Message: string };
  const rows = await ctx.store.db.selectFrom('messages').select(['message', 'segments']).where('batch_id', '=', batch.Id).execute();
  assert.equal(rows.length, batch.Recipients);
  assert.ok(rows.every((r) => r.message === 'Code {FirstName} {Foo} €' && r.segments === 1));
  assert.equal(batch.Message, 'Code {{FirstName}} {Foo} €', 'the Batch keeps the Message as sent in the body');
});

storeTest('sms/send-group: ShortenLinks gives every message its own codes and link rows', async (t) => {
  const ctx = await buildTestApp(t, { MSGSVC_LINK_DOMAIN: DOMAIN });
  const demo = await ctx.seed();
  const group = biggestGroup(demo);
  const res = await call(ctx.app, {
    method: 'POST',
    path: GROUP,
    token: demo.token,
    body: { Message: 'Hi {FirstName}: https://a.io/1 https://a.io/1 https://b.io/2', GroupId: group.Id, ShortenLinks: 1 },
  });
  assert.equal(res.statusCode, 201, res.body);
  const batch = JSON.parse(res.body) as { Id: number; Recipients: number };
  const rows = await ctx.store.db
    .selectFrom('messages')
    .select(['id', 'message', 'mobile_phone'])
    .where('batch_id', '=', batch.Id)
    .orderBy('id')
    .execute();
  assert.equal(rows.length, batch.Recipients);
  const all: string[] = [];
  for (const r of rows) {
    const first = (
      await ctx.store.db
        .selectFrom('contacts')
        .select('first_name')
        .where('number', '=', r.mobile_phone)
        .where('account_id', '=', demo.account.id)
        .executeTakeFirstOrThrow()
    ).first_name;
    const m = new RegExp(`^Hi ${first}: ${DOMAIN}/l/(${CODE}) ${DOMAIN}/l/(${CODE}) ${DOMAIN}/l/(${CODE})$`).exec(r.message);
    assert.ok(m, r.message);
    assert.equal(m[1], m[2]);
    assert.deepEqual(await linksOf(ctx, r.id), [
      { code: m[1], url: 'https://a.io/1', clicks: 0 },
      { code: m[3], url: 'https://b.io/2', clicks: 0 },
    ]);
    all.push(m[1]!, m[3]!);
  }
  assert.equal(new Set(all).size, all.length, 'no code shared between messages');
});

// ------------------------------------------------------------------ MMS

storeTest(
  "MMS: the template's Message is merged for the recipient when the dispatcher hands it over; the log's own text when queued",
  async (t) => {
    const ctx = await buildTestApp(t, { MSGSVC_LINK_DOMAIN: DOMAIN });
    const demo = await ctx.seed();
    const c = optedIn(demo);
    await setContact(ctx, c.Id, { first_name: 'Ada' });
    const template = await createMmsTemplate(ctx, demo, 'Hello {FirstName} {{x}}!');
    const res = await send(ctx, demo, { Message: 'note for {FirstName}', PhoneNumberId: c.Id, Type_Id: 2, MmsTemplateId: template });
    assert.equal(res.statusCode, 201, res.body);
    const record = JSON.parse(res.body)[0];
    assert.deepEqual([record.Message, record.Segments, record.Credits], ['note for Ada', 1, 3]);
    // The template is read when the MMS goes out: a change of the contact before then is what is sent.
    await setContact(ctx, c.Id, { first_name: 'Grace' });
    const texts = new Map<number, string>();
    const { dispatcher } = testDispatcher(ctx, {
      carrier: (await import('../../../src/dispatch/sandbox.ts')).createSandboxCarrier({
        receiptMs: 1000,
        onSubmit: (m) => texts.set(m.id, m.text),
      }),
    });
    await dispatcher.drain();
    assert.equal(texts.get(record.Id), 'Hello Grace {x}!');

    // ShortenLinks is checked for an MMS but shortens nothing: the phone shows the template's text.
    const mms = await send(ctx, demo, {
      Message: 'see https://x.io',
      PhoneNumberId: c.Id,
      Type_Id: 2,
      MmsTemplateId: template,
      ShortenLinks: 1,
    });
    assert.equal(mms.statusCode, 201, mms.body);
    const m = JSON.parse(mms.body)[0];
    assert.equal(m.Message, 'see https://x.io');
    assert.deepEqual(await linksOf(ctx, m.Id), []);
  },
);

// ------------------------------------------------------------------ property: preview = send = oracle

type Token =
  | { k: 'lit'; s: string }
  | { k: 'esc'; open: boolean }
  | { k: 'field'; f: 'FirstName' | 'LastName' | 'City' }
  | { k: 'custom' }
  | { k: 'other' };
const GSM = 'abcXYZ 019.,!?@£$¥èé\n^{}\\[~]|€';
const UCS = 'ёжЩ中文😀🎉';

storeTest(
  'property: preview Segments/Credits equal the queued message and messageCost of the oracle text (GSM-7 with extension, UCS-2 with emoji)',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    await setBalance(ctx, demo.account.id, 1_000_000);
    const c = optedIn(demo);
    const field = demo.customFields[0]!;
    const chars = (alphabet: string) => fc.constantFrom(...[...alphabet]);
    const literal = fc.oneof(
      fc.string({ unit: chars(GSM.replace(/[{}]/g, '')), maxLength: 40 }),
      fc.string({ unit: chars(GSM.replace(/[{}]/g, '') + UCS), maxLength: 20 }),
    );
    const token: fc.Arbitrary<Token> = fc.oneof(
      { weight: 4, arbitrary: literal.map((s) => ({ k: 'lit' as const, s })) },
      fc.boolean().map((open) => ({ k: 'esc' as const, open })),
      fc.constantFrom('FirstName', 'LastName', 'City').map((f) => ({ k: 'field' as const, f: f as 'FirstName' })),
      fc.constant({ k: 'custom' as const }),
      fc.constant({ k: 'other' as const }),
    );
    const value = fc.oneof(fc.string({ unit: chars(GSM), maxLength: 80 }), fc.string({ unit: chars(GSM + UCS), maxLength: 30 }));
    await fc.assert(
      fc.asyncProperty(
        fc.array(token, { minLength: 1, maxLength: 25 }),
        value,
        value,
        value,
        value,
        async (tokens, first, last, city, entry) => {
          await setContact(ctx, c.Id, { first_name: first, last_name: last, city });
          await setEntry(ctx, demo.account.id, field.Id, c.Id, entry);
          const values = { FirstName: first, LastName: last, City: city };
          let text = '';
          let expected = '';
          for (const tk of tokens) {
            if (tk.k === 'lit') [text, expected] = [text + tk.s, expected + tk.s];
            else if (tk.k === 'esc') [text, expected] = [text + (tk.open ? '{{' : '}}'), expected + (tk.open ? '{' : '}')];
            else if (tk.k === 'field') [text, expected] = [text + `{${tk.f}}`, expected + values[tk.f]];
            else if (tk.k === 'custom') [text, expected] = [text + `{Field:${field.Name}}`, expected + entry];
            else [text, expected] = [text + '{Other}', expected + '{Other}'];
          }
          if (text.trim() === '' || [...text].length > 1600) return;
          const body = { Message: text, PhoneNumberId: c.Id };
          const preview = await call(ctx.app, { method: 'POST', path: PREVIEW, token: demo.token, body });
          assert.equal(preview.statusCode, 200, preview.body);
          const p = JSON.parse(preview.body) as { Message: string; Encoding: string; Segments: number; Credits: number };
          const sent = await call(ctx.app, { method: 'POST', path: SEND, token: demo.token, body });
          assert.equal(sent.statusCode, 201, sent.body);
          const m = JSON.parse(sent.body)[0] as { Message: string; Segments: number; Credits: number };
          const cost = messageCost(1, expected, PRICES);
          assert.equal(p.Message, expected);
          assert.equal(m.Message, expected);
          assert.deepEqual([p.Encoding, p.Segments, p.Credits], [cost.encoding, cost.segments, cost.credits]);
          assert.deepEqual([m.Segments, m.Credits], [p.Segments, p.Credits]);
        },
      ),
      { numRuns: 40 },
    );
  },
);
