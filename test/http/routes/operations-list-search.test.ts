/**
 * msgsvc's `Search` filter of contacts/index, groups/index and mms-templates/index (docs/API.md
 * §10.2, §10.3, §10.7): "contains", case-insensitive for ASCII letters alike on both stores, `%`,
 * `_` and `\` matched literally, contacts also by the digits of a number written in any format,
 * combined with GroupId and OptedOut, the filtered total in X-Pagination-Total-Count and Link,
 * scoped to the caller's account, and the 422 over 255 characters in JSON and XML. Expected lists
 * are the database rows filtered here by the documented rule, never by the server's own code.
 * Runs on SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { DemoAccount } from '../../../src/domain/demo.ts';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import {
  assert422,
  assertBody,
  call,
  contactFromDb,
  fieldError,
  fmtTime,
  groupFromDb,
  WIRES,
  XML_DECL,
  type Wire,
} from '../../helpers/operations.ts';
import { storeTest } from '../../helpers/stores.ts';

const CONTACTS = '/v1/contacts/index';
const GROUPS = '/v1/groups/index';
const TEMPLATES = '/v1/mms-templates/index';

const tooLong = fieldError('Search', 'Search should contain at most 255 characters.');

/** `Search=…` as a query, percent-encoded. */
const q = (text: string, extra = '') => `Search=${encodeURIComponent(text)}${extra ? `&${extra}` : ''}`;

// ------------------------------------------------------------------ the rule, as docs/API.md states it

/** ASCII letters folded, every other character kept: the documented case rule. */
const fold = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
const contains = (field: string, text: string) => fold(field).includes(fold(text.trim()));
function contactMatches(c: { FirstName: string; LastName: string; Email: string; Number: string }, text: string): boolean {
  const digits = text.replace(/[^0-9]/g, '');
  return (
    contains(c.FirstName, text) ||
    contains(c.LastName, text) ||
    contains(c.Email, text) ||
    (digits.length >= 3 && c.Number.includes(digits))
  );
}

// ------------------------------------------------------------------ fixtures

async function post(ctx: TestApp, token: string, path: string, body: unknown): Promise<number> {
  const res = await call(ctx.app, { method: 'POST', path, token, body });
  assert.equal(res.statusCode, 201, res.body);
  return (JSON.parse(res.body) as { Id: number }).Id;
}

/** Contacts, groups and templates with names made to be searched, in the account of `demo`. */
async function addRecords(ctx: TestApp, demo: DemoAccount) {
  const contact = (body: Record<string, unknown>) => post(ctx, demo.token, '/v1/contacts/create', body);
  const ids = {
    quuxley: await contact({ Number: '+1 202 555 0143', FirstName: 'Ada', LastName: 'QUUXLEY', Email: 'ada.q@Example.org' }),
    quuxton: await contact({ Number: '+44 7700 900123', FirstName: 'Quuxton', LastName: 'Berry', Email: '' }),
    quuxOpted: await contact({ Number: '+1 415 555 0199', FirstName: 'Bo', LastName: 'Quux', OptedOut: 1 }),
    mailOnly: await contact({ Number: '+1 312 555 0100', FirstName: 'Cy', LastName: 'Dee', Email: 'QUUX.mail@example.net' }),
    pct: await contact({ Number: '+1 646 555 0101', FirstName: 'Fifty%Off', LastName: 'Sale' }),
    pctX: await contact({ Number: '+1 646 555 0102', FirstName: 'FiftyXOff', LastName: 'Sale' }),
    under: await contact({ Number: '+1 646 555 0103', FirstName: 'snake_case', LastName: 'Py' }),
    underX: await contact({ Number: '+1 646 555 0104', FirstName: 'snakeXcase', LastName: 'Py' }),
    slash: await contact({ Number: '+1 646 555 0105', FirstName: 'back\\slash', LastName: 'Esc' }),
    slashX: await contact({ Number: '+1 646 555 0106', FirstName: 'backslash', LastName: 'Esc' }),
    zoe: await contact({ Number: '+1 646 555 0107', FirstName: 'Zoë', LastName: 'Émile' }),
  };
  const group = (fname: string) => post(ctx, demo.token, '/v1/groups/create', { fname });
  const groups = {
    pct: await group('Fifty%Off'),
    pctX: await group('FiftyXOff'),
    under: await group('snake_case'),
    underX: await group('snakeXcase'),
    slash: await group('back\\slash'),
    slashX: await group('backslash'),
    quux: await group('The QUUX club'),
    zoe: await group('Zoë Émile'),
  };
  const media = await ctx.store.db.selectFrom('media').select('id').where('account_id', '=', demo.account.id).orderBy('id').execute();
  assert.ok(media.length > 0, 'the demo account has media');
  const template = (Name: string) => post(ctx, demo.token, '/v1/mms-templates/create', { Name, MediaIds: [media[0]!.id] });
  const templates = {
    pct: await template('Fifty%Off'),
    pctX: await template('FiftyXOff'),
    under: await template('snake_case'),
    underX: await template('snakeXcase'),
    slash: await template('back\\slash'),
    slashX: await template('backslash'),
    quux: await template('Quux Winter SALE'),
    zoe: await template('Zoë Émile'),
  };
  return { contacts: ids, groups, templates };
}

/** Two seeded accounts, `demo` (the caller) and `other`, both with the searchable records. */
async function setup(t: { after(fn: () => unknown): void }) {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed('Search Demo');
  const other = await ctx.seed('Search Other');
  const mine = await addRecords(ctx, demo);
  const theirs = await addRecords(ctx, other);
  return { ctx, demo, other, mine, theirs };
}

async function contactsOf(ctx: TestApp, accountId: number) {
  const rows = await ctx.store.db.selectFrom('contacts').select('id').where('account_id', '=', accountId).orderBy('id').execute();
  return Promise.all(rows.map((r) => contactFromDb(ctx, r.id)));
}

async function groupsOf(ctx: TestApp, accountId: number) {
  const rows = await ctx.store.db.selectFrom('groups').select('id').where('account_id', '=', accountId).orderBy('id').execute();
  return Promise.all(rows.map((r) => groupFromDb(ctx, r.id)));
}

/** The template records from the raw rows (docs/API.md §9.15 field order). */
async function templatesOf(ctx: TestApp, accountId: number) {
  const rows = await ctx.store.db.selectFrom('mms_templates').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
  const out = [];
  for (const r of rows) {
    const media = await ctx.store.db
      .selectFrom('mms_template_media')
      .select('media_id')
      .where('template_id', '=', r.id)
      .orderBy('position')
      .execute();
    out.push({
      Id: r.id,
      Name: r.name,
      Subject: r.subject,
      Message: r.message,
      MediaIds: media.map((m) => m.media_id),
      DateCreated: fmtTime(Number(r.created_at)),
      DateUpdated: fmtTime(Number(r.updated_at)),
    });
  }
  return out;
}

const idsOf = (res: LightMyRequestResponse) => (JSON.parse(res.body) as { Id: number }[]).map((r) => r.Id);

/** Asserts a list answer: exactly `expected` (all on one page), in every format, with the total. */
async function assertList(ctx: TestApp, path: string, token: string, query: string, expected: unknown[], wires: readonly Wire[] = WIRES) {
  for (const wire of wires) {
    const res = await call(ctx.app, { path, token, query, wire });
    assertBody(res, wire, 200, expected);
    assert.equal(res.headers['x-pagination-total-count'], String(expected.length), `${path}?${query}`);
  }
}

// ------------------------------------------------------------------ contacts/index

storeTest('contacts/index Search: FirstName, LastName or Email contains the text, ASCII case ignored (JSON, XML)', async (t) => {
  const { ctx, demo, mine } = await setup(t);
  const all = await contactsOf(ctx, demo.account.id);
  for (const text of ['quux', 'QUUX', 'qUuX', '  Quux  ']) {
    const expected = all.filter((c) => contactMatches(c, text));
    assert.deepEqual(
      expected.map((c) => c.Id),
      [mine.contacts.quuxley, mine.contacts.quuxton, mine.contacts.quuxOpted, mine.contacts.mailOnly],
      'last name, first name, last name, email',
    );
    await assertList(ctx, CONTACTS, demo.token, q(text), expected);
  }
  // By email alone, in another case than stored.
  const byMail = await call(ctx.app, { path: CONTACTS, token: demo.token, query: q('EXAMPLE.ORG') });
  assert.deepEqual(idsOf(byMail), [mine.contacts.quuxley]);
  // The seeded contacts are found too: a first name shared by several.
  const olivia = all.filter((c) => contactMatches(c, 'olivia'));
  assert.ok(olivia.length >= 2);
  await assertList(ctx, CONTACTS, demo.token, q('OLIVIA'), olivia, ['json']);
  // No match: an empty list, 0 pages.
  const none = await call(ctx.app, { path: CONTACTS, token: demo.token, query: q('no such contact') });
  assertBody(none, 'json', 200, []);
  assert.deepEqual([none.headers['x-pagination-total-count'], none.headers['x-pagination-page-count']], ['0', '0']);
});

storeTest('contacts/index Search: the digits of a number in any format (at least 3) find it in Number', async (t) => {
  const { ctx, demo, mine } = await setup(t);
  const all = await contactsOf(ctx, demo.account.id);
  const stored = all.find((c) => c.Id === mine.contacts.quuxley)!;
  assert.equal(stored.Number, '12025550143');
  for (const text of ['+1 202 555', '(202) 555-0143', '202.555.01', '+1-202-555-0143', '0143']) {
    const expected = all.filter((c) => contactMatches(c, text));
    assert.ok(
      expected.some((c) => c.Id === mine.contacts.quuxley),
      text,
    );
    await assertList(ctx, CONTACTS, demo.token, q(text), expected, ['json', 'xml']);
  }
  // A UK number, written nationally with spaces.
  const uk = await call(ctx.app, { path: CONTACTS, token: demo.token, query: q('7700 900 123') });
  assert.deepEqual(idsOf(uk), [mine.contacts.quuxton]);
  // Fewer than three digits: not a number search (these two digits are in many numbers).
  const two = await call(ctx.app, { path: CONTACTS, token: demo.token, query: q('+4 4') });
  assert.deepEqual(
    idsOf(two),
    all.filter((c) => contactMatches(c, '+4 4')).map((c) => c.Id),
  );
  assert.ok(!idsOf(two).includes(mine.contacts.quuxton));
});

storeTest('contacts/index Search: %, _ and \\ match themselves; non-ASCII letters are compared exactly', async (t) => {
  const { ctx, demo, mine } = await setup(t);
  const all = await contactsOf(ctx, demo.account.id);
  const cases: [string, number[]][] = [
    ['y%o', [mine.contacts.pct]],
    ['%', [mine.contacts.pct]],
    ['e_c', [mine.contacts.under]],
    ['_', [mine.contacts.under]],
    ['k\\s', [mine.contacts.slash]],
    ['\\', [mine.contacts.slash]],
    ['%%', []],
    // ASCII letters fold, ë and É do not: the same rows on SQLite and PostgreSQL.
    ['zoë', [mine.contacts.zoe]],
    ['ZOË', []],
    ['émile', []],
    ['Émile', [mine.contacts.zoe]],
  ];
  for (const [text, ids] of cases) {
    const expected = all.filter((c) => contactMatches(c, text));
    assert.deepEqual(
      expected.map((c) => c.Id),
      ids,
      text,
    );
    await assertList(ctx, CONTACTS, demo.token, q(text), expected, ['json']);
  }
});

storeTest('contacts/index Search combines with GroupId and OptedOut; the total counts the filtered rows; Link keeps Search', async (t) => {
  const { ctx, demo, other, mine } = await setup(t);
  const group = await post(ctx, demo.token, '/v1/groups/create', { fname: 'Quux members' });
  const add = await call(ctx.app, {
    method: 'POST',
    path: '/v1/groups/add-contacts',
    token: demo.token,
    query: `id=${group}`,
    body: { PhoneNumberIds: [mine.contacts.quuxley, mine.contacts.quuxOpted, mine.contacts.pct] },
  });
  assert.equal(add.statusCode, 200, add.body);
  const all = await contactsOf(ctx, demo.account.id);
  const quux = (c: (typeof all)[number]) => contactMatches(c, 'quux');
  const inGroup = all.filter((c) => quux(c) && c.GroupIds.includes(group));
  assert.deepEqual(
    inGroup.map((c) => c.Id),
    [mine.contacts.quuxley, mine.contacts.quuxOpted],
  );
  await assertList(ctx, CONTACTS, demo.token, q('quux', `GroupId=${group}`), inGroup);
  await assertList(ctx, CONTACTS, demo.token, q('quux', `GroupId=${group}&OptedOut=1`), [
    all.find((c) => c.Id === mine.contacts.quuxOpted),
  ]);
  await assertList(
    ctx,
    CONTACTS,
    demo.token,
    q('quux', 'OptedOut=0'),
    all.filter((c) => quux(c) && c.OptedOut === 0),
  );
  // A seeded group: its members that match, by number digits.
  const newsletter = demo.groups[0]!;
  const members = all.filter((c) => c.GroupIds.includes(newsletter.Id) && contactMatches(c, '555-20'));
  assert.ok(members.length > 0 && members.length < newsletter.PhoneNumberIds.length);
  await assertList(ctx, CONTACTS, demo.token, q('555-20', `GroupId=${newsletter.Id}`), members, ['json']);
  // Another account's group stays an empty list, with or without Search.
  await assertList(ctx, CONTACTS, demo.token, q('quux', `GroupId=${other.groups[0]!.Id}`), [], ['json']);

  // Pagination over the filtered rows: total, pages, Link with Search kept.
  const matching = all.filter(quux);
  assert.equal(matching.length, 4);
  const page2 = await call(ctx.app, { path: CONTACTS, token: demo.token, query: `Search=QUUX&per-page=3&page=2` });
  assertBody(page2, 'json', 200, matching.slice(3));
  assert.deepEqual(
    [
      page2.headers['x-pagination-total-count'],
      page2.headers['x-pagination-page-count'],
      page2.headers['x-pagination-current-page'],
      page2.headers['x-pagination-per-page'],
    ],
    ['4', '2', '2', '3'],
  );
  const url = (page: number) => `<http://localhost:80${CONTACTS}?access_token=${demo.token}&Search=QUUX&per-page=3&page=${page}>`;
  assert.equal(page2.headers.link, `${url(2)}; rel=self, ${url(1)}; rel=first, ${url(1)}; rel=prev`);
  const head = await ctx.app.inject({ method: 'HEAD', url: `${CONTACTS}?access_token=${demo.token}&Search=quux` });
  assert.equal(head.statusCode, 200);
  assert.equal(head.headers['x-pagination-total-count'], '4');
});

// ------------------------------------------------------------------ groups/index, mms-templates/index

storeTest('groups/index Search: fname contains the text, ASCII case ignored; %, _ and \\ literal; total and pages', async (t) => {
  const { ctx, demo, mine } = await setup(t);
  const all = await groupsOf(ctx, demo.account.id);
  const cases: [string, number[]][] = [
    ['quux', [mine.groups.quux]],
    ['The QUUX CLUB', [mine.groups.quux]],
    ['vip', [demo.groups.find((g) => g.Name === 'VIP Customers')!.Id]],
    ['y%o', [mine.groups.pct]],
    ['%', [mine.groups.pct]],
    ['e_c', [mine.groups.under]],
    ['_', [mine.groups.under]],
    ['k\\s', [mine.groups.slash]],
    ['zoë', [mine.groups.zoe]],
    ['ZOË', []],
  ];
  for (const [text, ids] of cases) {
    const expected = all.filter((g) => contains(g.Name, text));
    assert.deepEqual(
      expected.map((g) => g.Id),
      ids,
      text,
    );
    await assertList(ctx, GROUPS, demo.token, q(text), expected);
  }
  // Several matches over pages: "e" is in most names.
  const withE = all.filter((g) => contains(g.Name, 'E'));
  assert.ok(withE.length > 3 && withE.length < all.length);
  const page = await call(ctx.app, { path: GROUPS, token: demo.token, query: 'Search=E&per-page=2&page=2' });
  assertBody(page, 'json', 200, withE.slice(2, 4));
  assert.equal(page.headers['x-pagination-total-count'], String(withE.length));
  assert.equal(page.headers['x-pagination-page-count'], String(Math.ceil(withE.length / 2)));
  // Blank is no filter.
  await assertList(ctx, GROUPS, demo.token, 'Search=', all, ['json']);
  await assertList(ctx, GROUPS, demo.token, q('   '), all, ['json']);
});

storeTest('mms-templates/index Search: Name contains the text, ASCII case ignored; %, _ and \\ literal; total', async (t) => {
  const { ctx, demo, mine } = await setup(t);
  const all = await templatesOf(ctx, demo.account.id);
  const cases: [string, number[]][] = [
    ['winter sale', [mine.templates.quux]],
    ['QUUX', [mine.templates.quux]],
    ['y%o', [mine.templates.pct]],
    ['%', [mine.templates.pct]],
    ['e_c', [mine.templates.under]],
    ['_', [mine.templates.under]],
    ['k\\s', [mine.templates.slash]],
    ['\\', [mine.templates.slash]],
    ['zoë', [mine.templates.zoe]],
    ['ZOË', []],
  ];
  for (const [text, ids] of cases) {
    const expected = all.filter((m) => contains(m.Name, text));
    assert.deepEqual(
      expected.map((m) => m.Id),
      ids,
      text,
    );
    await assertList(ctx, TEMPLATES, demo.token, q(text), expected);
  }
  const withOff = all.filter((m) => contains(m.Name, 'off'));
  assert.equal(withOff.length, 2);
  const page = await call(ctx.app, { path: TEMPLATES, token: demo.token, query: 'Search=OFF&per-page=1' });
  assertBody(page, 'json', 200, withOff.slice(0, 1));
  assert.deepEqual([page.headers['x-pagination-total-count'], page.headers['x-pagination-page-count']], ['2', '2']);
  await assertList(ctx, TEMPLATES, demo.token, 'Search=', all, ['json']);
});

// ------------------------------------------------------------------ every list

storeTest("Search never finds another account's records, on any of the three lists", async (t) => {
  const { ctx, demo, other, mine, theirs } = await setup(t);
  const lists: [string, string, number[], number[]][] = [
    [CONTACTS, 'quux', Object.values(mine.contacts), Object.values(theirs.contacts)],
    [CONTACTS, '646 555', Object.values(mine.contacts), Object.values(theirs.contacts)],
    [GROUPS, 'quux', Object.values(mine.groups), Object.values(theirs.groups)],
    [TEMPLATES, 'quux', Object.values(mine.templates), Object.values(theirs.templates)],
  ];
  for (const [path, text, ours, others] of lists) {
    const mineRes = await call(ctx.app, { path, token: demo.token, query: q(text) });
    const theirsRes = await call(ctx.app, { path, token: other.token, query: q(text) });
    assert.ok(idsOf(mineRes).length > 0 && idsOf(theirsRes).length > 0, `${path} ${text}`);
    assert.ok(
      idsOf(mineRes).every((id) => ours.includes(id) && !others.includes(id)),
      path,
    );
    assert.ok(
      idsOf(theirsRes).every((id) => others.includes(id) && !ours.includes(id)),
      path,
    );
    assert.equal(mineRes.headers['x-pagination-total-count'], String(idsOf(mineRes).length));
  }
});

storeTest('Search: over 255 characters (after trimming) is a 422 on Search in JSON and XML; 255 is fine', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  for (const path of [CONTACTS, GROUPS, TEMPLATES]) {
    for (const text of ['a'.repeat(256), 'é'.repeat(256), `${'x'.repeat(300)}`]) {
      for (const wire of WIRES) {
        const res = await call(ctx.app, { path, token: demo.token, query: q(text), wire });
        assert422(res, [tooLong], wire);
        assert.equal(res.headers['x-pagination-total-count'], undefined);
      }
    }
    const xml = await call(ctx.app, { path, token: demo.token, query: q('a'.repeat(256)), wire: 'xml' });
    assert.equal(
      xml.body,
      `${XML_DECL}\n<response><item><field>Search</field><message>Search should contain at most 255 characters.</message></item></response>\n`,
    );
    assert.equal(
      (await call(ctx.app, { path, token: demo.token, query: q('a'.repeat(256)) })).body,
      '[{"field":"Search","message":"Search should contain at most 255 characters."}]',
    );
    // 255 characters, multi-byte ones too, and 255 with white space around: no error (nothing matches).
    for (const text of ['a'.repeat(255), 'é'.repeat(255), `  ${'a'.repeat(255)}\t `]) {
      assertBody(await call(ctx.app, { path, token: demo.token, query: q(text) }), 'json', 200, []);
    }
    // A list, or a NUL character: the string rule's other messages.
    assert422(await call(ctx.app, { path, token: demo.token, query: 'Search[]=a' }), [fieldError('Search', 'Search must be a string.')]);
    assert422(await call(ctx.app, { path, token: demo.token, query: 'Search=a%00b' }), [fieldError('Search', 'Search is invalid.')]);
  }
  // contacts/index: every bad filter in rule order, Search last.
  assert422(await call(ctx.app, { path: CONTACTS, token: demo.token, query: q('a'.repeat(256), 'OptedOut=2&GroupId=x') }), [
    fieldError('GroupId', 'Group Id must be an integer.'),
    fieldError('OptedOut', 'Opted Out is invalid.'),
    tooLong,
  ]);
});
