/**
 * groups/index, view, create, update (KeywordId, ParentId), delete, add-contacts, remove-contacts
 * (API.md §1.4, §10.3): records in JSON and XML built from the database rows, exact 422 messages
 * and order, 404 before 422, Location, 204, pagination, cycles, delete effects, membership
 * idempotence and the 1,000-id limit. Runs on SQLite and PostgreSQL.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { DemoAccount } from '../../../src/domain/demo.ts';
import { OPERATIONS } from '../../../src/http/routes/index.ts';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import { sqliteHandle } from '../../../src/store/db.ts';
import {
  assert422,
  assertBody,
  assertError,
  call,
  expectRejected,
  fieldError,
  groupFromDb,
  snapshotAccount,
  UNUSED_ID,
  type Wire,
  WIRES,
} from '../../helpers/operations.ts';
import { storeTest } from '../../helpers/stores.ts';

const blankName = fieldError('fname', 'Fname cannot be blank.');
const shortName = fieldError('fname', 'Fname should contain at least 3 characters.');
const longName = fieldError('fname', 'Fname should contain at most 255 characters.');
const shortNote = fieldError('fnote', 'Fnote should contain at least 3 characters.');
const keywordInt = fieldError('KeywordId', 'Keyword Id must be an integer.');
const keywordBad = fieldError('KeywordId', 'Keyword Id is invalid.');
const parentInt = fieldError('ParentId', 'Parent Id must be an integer.');
const parentBad = fieldError('ParentId', 'Parent Id is invalid.');
const idsBlank = fieldError('PhoneNumberIds', 'Phone Number Ids cannot be blank.');
const idsBad = fieldError('PhoneNumberIds', 'Phone Number Ids is invalid.');

/** Two seeded accounts on one app: `demo` (the caller) and `other`. */
async function setup(t: { after(fn: () => unknown): void }): Promise<{ ctx: TestApp; demo: DemoAccount; other: DemoAccount }> {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed('Groups Demo');
  const other = await ctx.seed('Other Account');
  return { ctx, demo, other };
}

const groupsPath = (action: string) => `/v1/groups/${action}`;

/** Every group of the account, as the Group records API.md describes, built from the rows. */
async function groupsFromDb(ctx: TestApp, accountId: number) {
  const rows = await ctx.store.db.selectFrom('groups').select('id').where('account_id', '=', accountId).orderBy('id').execute();
  const out = [];
  for (const r of rows) out.push(await groupFromDb(ctx, r.id));
  return out;
}

/** Reserves a keyword for the account through API.md's keyword/reserve and returns its id. */
async function reserveKeyword(ctx: TestApp, demo: DemoAccount, keyword: string): Promise<number> {
  const res = await call(ctx.app, {
    method: 'POST',
    path: '/v1/keyword/reserve',
    token: demo.token,
    body: { Keyword: keyword, Number: '55155' },
  });
  assert.equal(res.statusCode, 201, res.body);
  return (JSON.parse(res.body) as { Id: number }[])[0]!.Id;
}

function assert404(res: LightMyRequestResponse, id: string | number, wire: Wire = 'json') {
  assertError(res, 404, `Object not found: ${id}`, wire);
}

// ------------------------------------------------------------------ descriptors

test('groups: the seven actions, their methods, success statuses, Location and Idempotency-Key flags', () => {
  const byId = new Map(OPERATIONS.filter((o) => o.id.startsWith('groups.')).map((o) => [o.id, o]));
  const expect: [string, string, string[], number, boolean][] = [
    ['groups.index', '/v1/groups/index', ['GET'], 200, false],
    ['groups.view', '/v1/groups/view', ['GET'], 200, false],
    ['groups.create', '/v1/groups/create', ['POST'], 201, true],
    ['groups.update', '/v1/groups/update', ['PUT', 'PATCH'], 200, false],
    ['groups.delete', '/v1/groups/delete', ['DELETE'], 204, false],
    ['groups.add-contacts', '/v1/groups/add-contacts', ['POST'], 200, true],
    ['groups.remove-contacts', '/v1/groups/remove-contacts', ['POST'], 200, true],
  ];
  assert.deepEqual([...byId.keys()].sort(), expect.map((e) => e[0]).sort());
  for (const [id, path, methods, success, idempotent] of expect) {
    const op = byId.get(id)!;
    assert.equal(op.path, path, id);
    assert.deepEqual([...op.methods], methods, id);
    assert.equal(op.success, success, id);
    assert.equal(op.idempotent, idempotent, id);
  }
  assert.equal(byId.get('groups.create')!.location, '/v1/groups/view');
});

// ------------------------------------------------------------------ index and view

storeTest("groups/index: the account's groups by Id ascending, JSON and XML, pagination headers and Link; HEAD", async (t) => {
  const { ctx, demo, other } = await setup(t);
  const expected = await groupsFromDb(ctx, demo.account.id);
  assert.equal(expected.length, 5);
  assert.deepEqual(expected, demo.groups, 'the demo records match the rows');
  for (const wire of WIRES) {
    const res = await call(ctx.app, { path: groupsPath('index'), token: demo.token, wire });
    assertBody(res, wire, 200, expected);
    assert.equal(res.headers['x-pagination-total-count'], '5');
    assert.equal(res.headers['x-pagination-page-count'], '1');
    assert.equal(res.headers['x-pagination-current-page'], '1');
    assert.equal(res.headers['x-pagination-per-page'], '100');
  }
  // Page 2 of 3 at two per page: the next two groups, all rels, every query parameter kept.
  const res = await call(ctx.app, { path: groupsPath('index'), token: demo.token, query: 'per-page=2&page=2' });
  assertBody(res, 'json', 200, expected.slice(2, 4));
  assert.deepEqual(
    [
      res.headers['x-pagination-total-count'],
      res.headers['x-pagination-page-count'],
      res.headers['x-pagination-current-page'],
      res.headers['x-pagination-per-page'],
    ],
    ['5', '3', '2', '2'],
  );
  const url = (page: number) => `<http://localhost:80/v1/groups/index?access_token=${demo.token}&per-page=2&page=${page}>`;
  assert.equal(
    res.headers.link,
    `${url(2)}; rel=self, ${url(1)}; rel=first, ${url(1)}; rel=prev, ${url(3)}; rel=next, ${url(3)}; rel=last`,
  );
  // A page past the end serves the last page.
  const last = await call(ctx.app, { path: groupsPath('index'), token: demo.token, query: 'per-page=2&page=9' });
  assertBody(last, 'json', 200, expected.slice(4));
  assert.equal(last.headers['x-pagination-current-page'], '3');
  // HEAD: the same headers, no body.
  const head = await call(ctx.app, { method: 'HEAD', path: groupsPath('index'), token: demo.token });
  assert.equal(head.statusCode, 200);
  assert.equal(head.body, '');
  assert.equal(head.headers['x-pagination-total-count'], '5');
  // The other account sees only its own five.
  const theirs = await call(ctx.app, { path: groupsPath('index'), token: other.token });
  assertBody(theirs, 'json', 200, await groupsFromDb(ctx, other.account.id));
  assert.ok(JSON.parse(theirs.body).every((g: { Id: number }) => !expected.some((e) => e.Id === g.Id)));
});

storeTest('groups/index: an account without groups gets an empty list (<response/>), 0 pages, current page 1', async (t) => {
  const { ctx, demo } = await setup(t);
  await ctx.store.db.deleteFrom('groups').where('account_id', '=', demo.account.id).execute();
  const json = await call(ctx.app, { path: groupsPath('index'), token: demo.token });
  assertBody(json, 'json', 200, []);
  assert.deepEqual(
    [json.headers['x-pagination-total-count'], json.headers['x-pagination-page-count'], json.headers['x-pagination-current-page']],
    ['0', '0', '1'],
  );
  assertBody(await call(ctx.app, { path: groupsPath('index'), token: demo.token, wire: 'xml' }), 'xml', 200, []);
});

storeTest(
  "groups/view: one Group in JSON and XML; 404 for another account's id or an unknown one; 400 for a missing or bad id",
  async (t) => {
    const { ctx, demo, other } = await setup(t);
    for (const group of demo.groups) {
      for (const wire of WIRES)
        assertBody(
          await call(ctx.app, { path: groupsPath('view'), token: demo.token, query: `id=${group.Id}`, wire }),
          wire,
          200,
          await groupFromDb(ctx, group.Id),
        );
    }
    const vip = await call(ctx.app, { path: groupsPath('view'), token: demo.token, query: `id=${demo.groups[1]!.Id}` });
    assert.equal(JSON.parse(vip.body).ParentId, demo.groups[0]!.Id);
    const head = await call(ctx.app, { method: 'HEAD', path: groupsPath('view'), token: demo.token, query: `id=${demo.groups[0]!.Id}` });
    assert.equal(head.statusCode, 200);
    assert.equal(head.body, '');
    for (const wire of WIRES) {
      assert404(
        await call(ctx.app, { path: groupsPath('view'), token: demo.token, query: `id=${other.groups[0]!.Id}`, wire }),
        other.groups[0]!.Id,
        wire,
      );
      assert404(await call(ctx.app, { path: groupsPath('view'), token: demo.token, query: `id=${UNUSED_ID}`, wire }), UNUSED_ID, wire);
      assertError(await call(ctx.app, { path: groupsPath('view'), token: demo.token, wire }), 400, 'Missing required parameters: id', wire);
      assertError(
        await call(ctx.app, { path: groupsPath('view'), token: demo.token, query: 'id=1x', wire }),
        400,
        'Invalid data received for parameter "id".',
        wire,
      );
    }
    // Ids beyond the id column are simply not found (never a 500 on PostgreSQL).
    for (const id of ['0', '-3', '99999999999', '2147483648'])
      assert404(await call(ctx.app, { path: groupsPath('view'), token: demo.token, query: `id=${id}` }), id);
  },
);

// ------------------------------------------------------------------ create

storeTest('groups/create: 201, the record, Location to view; fnote absent gives "", KeywordId and ParentId 0', async (t) => {
  const { ctx, demo } = await setup(t);
  // Under inject the request's host is localhost:80 (no Host header given): Location uses it.
  const res = await call(ctx.app, { method: 'POST', path: groupsPath('create'), token: demo.token, body: { fname: 'Fresh group' } });
  assert.equal(res.statusCode, 201, res.body);
  const body = JSON.parse(res.body) as { Id: number };
  const stored = await groupFromDb(ctx, body.Id);
  assertBody(res, 'json', 201, stored);
  assert.equal(res.headers.location, `http://localhost:80/v1/groups/view?id=${body.Id}`);
  assert.deepEqual([stored.Name, stored.Note, stored.KeywordId, stored.ParentId, stored.PhoneNumberIds], ['Fresh group', '', 0, 0, []]);
  assert.equal(stored.DateCreated, stored.DateUpdated);
  const row = await ctx.store.db.selectFrom('groups').select('account_id').where('id', '=', body.Id).executeTakeFirstOrThrow();
  assert.equal(row.account_id, demo.account.id);
  // The Host header decides the Location host.
  const hosted = await ctx.app.inject({
    method: 'POST',
    url: `/v1/groups/create?access_token=${demo.token}`,
    headers: { host: 'api.example.test:8443', 'content-type': 'application/json' },
    payload: JSON.stringify({ fname: 'Hosted group' }),
  });
  assert.equal(hosted.statusCode, 201, hosted.body);
  assert.equal(hosted.headers.location, `http://api.example.test:8443/v1/groups/view?id=${JSON.parse(hosted.body).Id}`);
  // Every field, in XML, KeywordId and ParentId as quoted integers; null fnote gives "".
  const keywordId = await reserveKeyword(ctx, demo, 'GROUPJOIN');
  for (const wire of ['xml', 'xml-param'] as const) {
    const full = await call(ctx.app, {
      method: 'POST',
      path: groupsPath('create'),
      token: demo.token,
      wire,
      body: { fname: 'Child & <co>', fnote: 'With a note', KeywordId: String(keywordId), ParentId: `${demo.groups[0]!.Id}` },
    });
    assert.equal(full.statusCode, 201, full.body);
    const id = Number(/<Id>(\d+)<\/Id>/.exec(full.body)![1]);
    const g = await groupFromDb(ctx, id);
    assertBody(full, wire, 201, g);
    assert.equal(full.headers.location, `http://localhost:80/v1/groups/view?id=${id}`);
    assert.deepEqual([g.Name, g.Note, g.KeywordId, g.ParentId], ['Child & <co>', 'With a note', keywordId, demo.groups[0]!.Id]);
  }
  const nulls = await call(ctx.app, {
    method: 'POST',
    path: groupsPath('create'),
    token: demo.token,
    body: { fname: 'Nulls', fnote: null, KeywordId: null, ParentId: '', Id: 5, Name: 'ignored' },
  });
  assert.equal(nulls.statusCode, 201, nulls.body);
  const n = await groupFromDb(ctx, JSON.parse(nulls.body).Id);
  assert.deepEqual([n.Name, n.Note, n.KeywordId, n.ParentId], ['Nulls', '', 0, 0]);
  const zeros = await call(ctx.app, {
    method: 'POST',
    path: groupsPath('create'),
    token: demo.token,
    body: { fname: 'Zeros', KeywordId: 0, ParentId: '0' },
  });
  assert.equal(zeros.statusCode, 201, zeros.body);
  assert.deepEqual([JSON.parse(zeros.body).KeywordId, JSON.parse(zeros.body).ParentId], [0, 0]);
  // A form body works too.
  const form = await call(ctx.app, {
    method: 'POST',
    path: groupsPath('create'),
    token: demo.token,
    rawBody: 'fname=Form+group&fnote=Form+note',
    contentType: 'application/x-www-form-urlencoded',
  });
  assert.equal(form.statusCode, 201, form.body);
  assert.equal(JSON.parse(form.body).Note, 'Form note');
  // It shows in the list and in view.
  assert.equal((await groupsFromDb(ctx, demo.account.id)).length, 5 + 7);
  assertBody(await call(ctx.app, { path: groupsPath('view'), token: demo.token, query: `id=${body.Id}` }), 'json', 200, stored);
});

storeTest('groups/create: every rule, exact messages and order, references of another account; nothing is created', async (t) => {
  const { ctx, demo, other } = await setup(t);
  const mine = await reserveKeyword(ctx, demo, 'MINEKW');
  const theirs = await reserveKeyword(ctx, other, 'THEIRKW');
  const long = (n: number) => 'x'.repeat(n);
  await expectRejected(ctx, demo, { method: 'POST', path: groupsPath('create') }, [
    { name: 'empty object', body: {}, errors: [blankName] },
    { name: 'empty body', rawBody: '', errors: [blankName] },
    { name: 'blank name', body: { fname: '  ' }, errors: [blankName] },
    { name: 'short name', body: { fname: 'ab' }, errors: [shortName] },
    { name: 'long name', body: { fname: long(256) }, errors: [longName] },
    { name: 'name not a string', body: { fname: 123 }, errors: [fieldError('fname', 'Fname must be a string.')] },
    { name: 'short note', body: { fname: 'Good name', fnote: 'ab' }, errors: [shortNote] },
    { name: 'KeywordId not an integer', body: { fname: 'Good name', KeywordId: 'abc' }, errors: [keywordInt] },
    { name: 'KeywordId a float', body: { fname: 'Good name', KeywordId: 1.5 }, errors: [keywordInt] },
    { name: 'KeywordId an array', body: { fname: 'Good name', KeywordId: [mine] }, errors: [keywordInt] },
    { name: 'KeywordId unknown', body: { fname: 'Good name', KeywordId: UNUSED_ID }, errors: [keywordBad] },
    { name: 'KeywordId negative', body: { fname: 'Good name', KeywordId: -1 }, errors: [keywordBad] },
    { name: 'KeywordId huge', body: { fname: 'Good name', KeywordId: '99999999999' }, errors: [keywordBad] },
    { name: 'KeywordId of another account', body: { fname: 'Good name', KeywordId: theirs }, errors: [keywordBad] },
    { name: 'ParentId not an integer', body: { fname: 'Good name', ParentId: 'x1' }, errors: [parentInt] },
    { name: 'ParentId unknown', body: { fname: 'Good name', ParentId: UNUSED_ID }, errors: [parentBad] },
    { name: 'ParentId negative', body: { fname: 'Good name', ParentId: '-2' }, errors: [parentBad] },
    { name: 'ParentId huge', body: { fname: 'Good name', ParentId: 99999999999 }, errors: [parentBad] },
    { name: 'ParentId of another account', body: { fname: 'Good name', ParentId: other.groups[0]!.Id }, errors: [parentBad] },
    {
      name: 'every field bad: fname, fnote, KeywordId, ParentId',
      body: { ParentId: other.groups[0]!.Id, KeywordId: theirs, fnote: 'x', fname: 'ab' },
      errors: [shortName, shortNote, keywordBad, parentBad],
    },
    {
      name: 'type errors before reference errors (rule order: integer rules, then the references)',
      body: { fname: 'ab', KeywordId: theirs, ParentId: 'nope' },
      errors: [shortName, parentInt, keywordBad],
    },
    { name: 'valid references but no name', body: { KeywordId: mine, ParentId: demo.groups[0]!.Id }, errors: [blankName] },
  ]);
});

// ------------------------------------------------------------------ update

storeTest('groups/update: KeywordId and ParentId set and cleared; only the fields sent change', async (t) => {
  const { ctx, demo } = await setup(t);
  const keywordId = await reserveKeyword(ctx, demo, 'UPDKW');
  const [newsletter, vip, events] = demo.groups;
  const put = (id: number, body: unknown, wire: Wire = 'json') =>
    call(ctx.app, { method: 'PUT', path: groupsPath('update'), token: demo.token, query: `id=${id}`, body, wire });

  let res = await put(events!.Id, { fname: 'Store Events', KeywordId: keywordId, ParentId: newsletter!.Id });
  let g = await groupFromDb(ctx, events!.Id);
  assertBody(res, 'json', 200, g);
  assert.deepEqual([g.Note, g.KeywordId, g.ParentId], [events!.Note, keywordId, newsletter!.Id]);
  // Absent KeywordId and ParentId keep theirs; fnote changes.
  res = await call(ctx.app, {
    method: 'PATCH',
    path: groupsPath('update'),
    token: demo.token,
    query: `id=${events!.Id}`,
    body: { fname: 'Events 2', fnote: 'New note' },
    wire: 'xml',
  });
  g = await groupFromDb(ctx, events!.Id);
  assertBody(res, 'xml', 200, g);
  assert.deepEqual([g.Name, g.Note, g.KeywordId, g.ParentId], ['Events 2', 'New note', keywordId, newsletter!.Id]);
  // 0 clears each; null leaves it.
  res = await put(events!.Id, { fname: 'Events 3', KeywordId: 0, ParentId: null });
  g = await groupFromDb(ctx, events!.Id);
  assertBody(res, 'json', 200, g);
  assert.deepEqual([g.KeywordId, g.ParentId], [0, newsletter!.Id]);
  res = await put(events!.Id, { fname: 'Events 3', ParentId: '0' });
  assertBody(res, 'json', 200, await groupFromDb(ctx, events!.Id));
  assert.equal(JSON.parse(res.body).ParentId, 0);
  // Re-parenting a child elsewhere, and keeping its own parent, are fine.
  assert.equal((await put(vip!.Id, { fname: 'VIP Customers', ParentId: newsletter!.Id })).statusCode, 200);
  assert.equal((await put(vip!.Id, { fname: 'VIP Customers', ParentId: events!.Id })).statusCode, 200);
  assert.equal((await groupFromDb(ctx, vip!.Id)).ParentId, events!.Id);
  // Members never change through update.
  assert.deepEqual((await groupFromDb(ctx, newsletter!.Id)).PhoneNumberIds, newsletter!.PhoneNumberIds);
});

storeTest(
  'groups/update: a group cannot be its own ancestor (itself, a child, a grandchild); bad references; 404 before 422',
  async (t) => {
    const { ctx, demo, other } = await setup(t);
    const [newsletter, vip] = demo.groups;
    // Newsletter <- VIP <- Grandchild
    const created = await call(ctx.app, {
      method: 'POST',
      path: groupsPath('create'),
      token: demo.token,
      body: { fname: 'Grandchild', ParentId: vip!.Id },
    });
    assert.equal(created.statusCode, 201, created.body);
    const grandchild = JSON.parse(created.body).Id as number;
    const theirs = await reserveKeyword(ctx, other, 'OTHERKW');
    const q = (id: number) => ({ method: 'PUT' as const, path: groupsPath('update'), query: `id=${id}` });
    await expectRejected(ctx, demo, q(newsletter!.Id), [
      { name: 'itself', body: { fname: 'Newsletter', ParentId: newsletter!.Id }, errors: [parentBad] },
      { name: 'its child', body: { fname: 'Newsletter', ParentId: vip!.Id }, errors: [parentBad] },
      { name: 'its grandchild', body: { fname: 'Newsletter', ParentId: String(grandchild) }, errors: [parentBad] },
      { name: "another account's group", body: { fname: 'Newsletter', ParentId: other.groups[0]!.Id }, errors: [parentBad] },
      { name: "another account's keyword", body: { fname: 'Newsletter', KeywordId: theirs }, errors: [keywordBad] },
      { name: 'not integers', body: { fname: 'Newsletter', KeywordId: true, ParentId: 'one' }, errors: [keywordInt, parentInt] },
      { name: 'fname still required', body: { KeywordId: 0, ParentId: 0 }, errors: [blankName] },
      {
        name: 'all at once',
        body: { fname: 'x', fnote: 'y', KeywordId: theirs, ParentId: grandchild },
        errors: [shortName, shortNote, keywordBad, parentBad],
      },
    ]);
    await expectRejected(ctx, demo, q(vip!.Id), [
      { name: 'VIP under itself', body: { fname: 'VIP', ParentId: vip!.Id }, errors: [parentBad] },
      { name: 'VIP under its child', body: { fname: 'VIP', ParentId: grandchild }, errors: [parentBad] },
    ]);
    await expectRejected(ctx, demo, q(grandchild), [
      { name: 'grandchild under itself', body: { fname: 'Grand', ParentId: grandchild }, errors: [parentBad] },
    ]);
    // Moving the grandchild to the top, then Newsletter under it, is allowed: no cycle any more.
    const put = (id: number, body: unknown) =>
      call(ctx.app, { method: 'PUT', path: groupsPath('update'), token: demo.token, query: `id=${id}`, body });
    assert.equal((await put(grandchild, { fname: 'Grandchild', ParentId: 0 })).statusCode, 200);
    assert.equal((await put(newsletter!.Id, { fname: 'Newsletter', ParentId: grandchild })).statusCode, 200);
    // Now grandchild -> Newsletter closes a loop through Newsletter's new parent.
    assert422(await put(grandchild, { fname: 'Grandchild', ParentId: vip!.Id }), [parentBad]);
    // Another account's group: 404 whatever the body, before any 422.
    for (const wire of WIRES) {
      for (const body of [{ fname: 'Valid name' }, { fname: 'x', ParentId: 'bad' }, {}]) {
        assert404(
          await call(ctx.app, {
            method: 'PUT',
            path: groupsPath('update'),
            token: demo.token,
            query: `id=${other.groups[0]!.Id}`,
            body,
            wire,
          }),
          other.groups[0]!.Id,
          wire,
        );
      }
    }
  },
);

// ------------------------------------------------------------------ delete

storeTest('groups/delete: 204 empty body; memberships go, contacts stay, children get ParentId 0; then 404', async (t) => {
  const { ctx, demo, other } = await setup(t);
  const [newsletter, vip] = demo.groups;
  const db = ctx.store.db;
  const otherBefore = await snapshotAccount(ctx, other.account.id);
  assert.ok(newsletter!.PhoneNumberIds.length > 0);
  const res = await call(ctx.app, { method: 'DELETE', path: groupsPath('delete'), token: demo.token, query: `id=${newsletter!.Id}` });
  assert.equal(res.statusCode, 204);
  assert.equal(res.body, '');
  assert.equal(await db.selectFrom('groups').select('id').where('id', '=', newsletter!.Id).executeTakeFirst(), undefined);
  assert.deepEqual(
    await db.selectFrom('group_members').selectAll().where('group_id', '=', newsletter!.Id).execute(),
    [],
    'memberships cascade',
  );
  const contacts = await db.selectFrom('contacts').select('id').where('account_id', '=', demo.account.id).orderBy('id').execute();
  assert.deepEqual(
    contacts.map((c) => c.id),
    demo.contacts.map((c) => c.Id),
    'member contacts stay',
  );
  const child = await groupFromDb(ctx, vip!.Id);
  assert.equal(child.ParentId, 0, 'the child group gets ParentId 0');
  assert.deepEqual(child.PhoneNumberIds, vip!.PhoneNumberIds, "the child's members stay");
  assert.deepEqual(
    await db.selectFrom('group_members').select('group_id').where('contact_id', '=', demo.contacts[0]!.Id).orderBy('group_id').execute(),
    demo.contacts[0]!.GroupIds.filter((id) => id !== newsletter!.Id).map((group_id) => ({ group_id })),
    'a former member keeps its other memberships',
  );
  for (const wire of WIRES) {
    assert404(
      await call(ctx.app, { method: 'DELETE', path: groupsPath('delete'), token: demo.token, query: `id=${newsletter!.Id}`, wire }),
      newsletter!.Id,
      wire,
    );
    assert404(
      await call(ctx.app, { path: groupsPath('view'), token: demo.token, query: `id=${newsletter!.Id}`, wire }),
      newsletter!.Id,
      wire,
    );
    // Another account's group: 404, and it is untouched.
    assert404(
      await call(ctx.app, { method: 'DELETE', path: groupsPath('delete'), token: demo.token, query: `id=${other.groups[0]!.Id}`, wire }),
      other.groups[0]!.Id,
      wire,
    );
    assertError(
      await call(ctx.app, { method: 'DELETE', path: groupsPath('delete'), token: demo.token, wire }),
      400,
      'Missing required parameters: id',
      wire,
    );
  }
  assert.deepEqual(await snapshotAccount(ctx, other.account.id), otherBefore, "the other account's data is untouched");
  // The list no longer shows it.
  assertBody(await call(ctx.app, { path: groupsPath('index'), token: demo.token }), 'json', 200, await groupsFromDb(ctx, demo.account.id));
  assert.equal((await groupsFromDb(ctx, demo.account.id)).length, 4);
  // Wrong method: 405 with Allow.
  const wrong = await call(ctx.app, { path: groupsPath('delete'), token: demo.token, query: `id=${vip!.Id}` });
  assert.equal(wrong.statusCode, 405);
  assert.equal(wrong.headers.allow, 'DELETE');
});

storeTest("groups/delete: a grandparent's deletion re-roots only its direct children", async (t) => {
  const { ctx, demo } = await setup(t);
  const [newsletter, vip] = demo.groups;
  const created = await call(ctx.app, {
    method: 'POST',
    path: groupsPath('create'),
    token: demo.token,
    body: { fname: 'Grandchild', ParentId: vip!.Id },
  });
  const grandchild = JSON.parse(created.body).Id as number;
  assert.equal(
    (await call(ctx.app, { method: 'DELETE', path: groupsPath('delete'), token: demo.token, query: `id=${newsletter!.Id}` })).statusCode,
    204,
  );
  assert.equal((await groupFromDb(ctx, vip!.Id)).ParentId, 0);
  assert.equal((await groupFromDb(ctx, grandchild)).ParentId, vip!.Id);
});

// ------------------------------------------------------------------ add-contacts / remove-contacts

storeTest(
  'groups/add-contacts and remove-contacts: 200 with the Group; adding twice and removing a non-member are not errors',
  async (t) => {
    const { ctx, demo } = await setup(t);
    const empty = demo.groups[4]!;
    const ids = demo.contacts.map((c) => c.Id);
    const add = (body: unknown, wire: Wire = 'json') =>
      call(ctx.app, { method: 'POST', path: groupsPath('add-contacts'), token: demo.token, query: `id=${empty.Id}`, body, wire });
    const remove = (body: unknown, wire: Wire = 'json') =>
      call(ctx.app, { method: 'POST', path: groupsPath('remove-contacts'), token: demo.token, query: `id=${empty.Id}`, body, wire });
    // Out of order, duplicated, one quoted: members come back sorted, once each.
    for (const wire of WIRES) {
      const res = await add({ PhoneNumberIds: [ids[5], ids[1], String(ids[3]), ids[1]] }, wire);
      const g = await groupFromDb(ctx, empty.Id);
      assertBody(res, wire, 200, g);
      assert.deepEqual(g.PhoneNumberIds, [ids[1], ids[3], ids[5]]);
    }
    // DateUpdated moves only when a membership changed.
    await ctx.store.db.updateTable('groups').set({ updated_at: 1_600_000_000 }).where('id', '=', empty.Id).execute();
    let res = await add({ PhoneNumberIds: [ids[1], ids[5]] });
    assertBody(res, 'json', 200, await groupFromDb(ctx, empty.Id));
    assert.equal(JSON.parse(res.body).DateUpdated, '2020-09-13 12:26:40', 'adding members again changes nothing');
    res = await remove({ PhoneNumberIds: [ids[0], ids[2]] });
    assertBody(res, 'json', 200, await groupFromDb(ctx, empty.Id));
    assert.equal(JSON.parse(res.body).DateUpdated, '2020-09-13 12:26:40', 'removing non-members changes nothing');
    assert.deepEqual(JSON.parse(res.body).PhoneNumberIds, [ids[1], ids[3], ids[5]]);
    res = await add({ PhoneNumberIds: [ids[7]] });
    assert.notEqual(JSON.parse(res.body).DateUpdated, '2020-09-13 12:26:40');
    for (const wire of WIRES) {
      res = await remove({ PhoneNumberIds: [ids[3], ids[0]] }, wire);
      const g = await groupFromDb(ctx, empty.Id);
      assertBody(res, wire, 200, g);
      assert.deepEqual(g.PhoneNumberIds, [ids[1], ids[5], ids[7]]);
    }
    // The contacts themselves stay, and their other memberships too.
    res = await remove({ PhoneNumberIds: [ids[1], ids[5], ids[7]] });
    assert.deepEqual(JSON.parse(res.body).PhoneNumberIds, []);
    assert.equal((await ctx.store.db.selectFrom('contacts').select('id').where('account_id', '=', demo.account.id).execute()).length, 50);
    assert.deepEqual((await groupFromDb(ctx, demo.groups[0]!.Id)).PhoneNumberIds, demo.groups[0]!.PhoneNumberIds);
    // A form body with PhoneNumberIds[]= works too.
    const form = await call(ctx.app, {
      method: 'POST',
      path: groupsPath('add-contacts'),
      token: demo.token,
      query: `id=${empty.Id}`,
      rawBody: `PhoneNumberIds[]=${ids[9]}&PhoneNumberIds[]=${ids[8]}`,
      contentType: 'application/x-www-form-urlencoded',
    });
    assert.equal(form.statusCode, 200, form.body);
    assert.deepEqual(JSON.parse(form.body).PhoneNumberIds, [ids[8], ids[9]]);
  },
);

storeTest(
  'groups/add-contacts and remove-contacts: every rule; one bad id rejects the request and changes nothing; 404 before 422',
  async (t) => {
    const { ctx, demo, other } = await setup(t);
    const group = demo.groups[0]!; // members: every second contact
    const nonMember = demo.contacts[1]!.Id;
    const member = demo.contacts[0]!.Id;
    const theirs = other.contacts[0]!.Id;
    const cases = [
      { name: 'absent', body: {}, errors: [idsBlank] },
      { name: 'empty body', rawBody: '', errors: [idsBlank] },
      { name: 'null', body: { PhoneNumberIds: null }, errors: [idsBlank] },
      { name: 'empty string', body: { PhoneNumberIds: '' }, errors: [idsBlank] },
      { name: 'spaces', body: { PhoneNumberIds: '  ' }, errors: [idsBlank] },
      { name: 'empty array', body: { PhoneNumberIds: [] }, errors: [idsBlank] },
      { name: 'wrong key', body: { phoneNumberIds: [nonMember] }, errors: [idsBlank] },
      { name: 'a bare integer', body: { PhoneNumberIds: nonMember }, errors: [idsBad] },
      { name: 'a string', body: { PhoneNumberIds: String(nonMember) }, errors: [idsBad] },
      { name: 'an object', body: { PhoneNumberIds: { a: nonMember } }, errors: [idsBad] },
      { name: 'a float', body: { PhoneNumberIds: [nonMember, 1.5] }, errors: [idsBad] },
      { name: 'a word', body: { PhoneNumberIds: [nonMember, 'abc'] }, errors: [idsBad] },
      { name: 'a null', body: { PhoneNumberIds: [nonMember, null] }, errors: [idsBad] },
      { name: 'a boolean', body: { PhoneNumberIds: [true] }, errors: [idsBad] },
      { name: 'a nested array', body: { PhoneNumberIds: [[nonMember]] }, errors: [idsBad] },
      { name: 'zero', body: { PhoneNumberIds: [nonMember, 0] }, errors: [idsBad] },
      { name: 'negative', body: { PhoneNumberIds: [-nonMember] }, errors: [idsBad] },
      { name: 'huge', body: { PhoneNumberIds: [nonMember, 99999999999] }, errors: [idsBad] },
      { name: 'unknown', body: { PhoneNumberIds: [nonMember, UNUSED_ID] }, errors: [idsBad] },
      { name: "another account's contact alone", body: { PhoneNumberIds: [theirs] }, errors: [idsBad] },
      { name: "another account's contact among ours", body: { PhoneNumberIds: [nonMember, member, theirs] }, errors: [idsBad] },
      { name: '1,001 ids', body: { PhoneNumberIds: Array.from({ length: 1001 }, () => nonMember) }, errors: [idsBad] },
    ];
    for (const action of ['add-contacts', 'remove-contacts']) {
      await expectRejected(ctx, demo, { method: 'POST', path: groupsPath(action), query: `id=${group.Id}` }, cases);
      for (const wire of WIRES) {
        for (const body of [{ PhoneNumberIds: [nonMember] }, { PhoneNumberIds: [theirs] }, {}]) {
          assert404(
            await call(ctx.app, {
              method: 'POST',
              path: groupsPath(action),
              token: demo.token,
              query: `id=${other.groups[0]!.Id}`,
              body,
              wire,
            }),
            other.groups[0]!.Id,
            wire,
          );
        }
      }
      assertError(
        await call(ctx.app, { method: 'POST', path: groupsPath(action), token: demo.token, body: { PhoneNumberIds: [member] } }),
        400,
        'Missing required parameters: id',
      );
    }
    // The other account's group did not get our contact either.
    assert.deepEqual((await groupFromDb(ctx, other.groups[0]!.Id)).PhoneNumberIds, other.groups[0]!.PhoneNumberIds);
  },
);

storeTest('groups/add-contacts: 1,000 ids in one request (a duplicate list counts its entries); remove them all', async (t) => {
  const { ctx, demo } = await setup(t);
  const now = Math.floor(Date.now() / 1000);
  // 950 more contacts: 1,000 in all.
  const rows = Array.from({ length: 950 }, (_, i) => {
    const number = String(15559000000 + i);
    return {
      account_id: demo.account.id,
      number,
      number_e164: `+${number}`,
      opted_out: 0,
      first_name: '',
      last_name: '',
      birthday: null,
      email: '',
      zip: '',
      city: '',
      created_at: now,
      updated_at: now,
    };
  });
  for (let i = 0; i < rows.length; i += 200)
    await ctx.store.db
      .insertInto('contacts')
      .values(rows.slice(i, i + 200))
      .execute();
  const all = (
    await ctx.store.db.selectFrom('contacts').select('id').where('account_id', '=', demo.account.id).orderBy('id').execute()
  ).map((r) => r.id);
  assert.equal(all.length, 1000);
  const group = demo.groups[0]!;
  const res = await call(ctx.app, {
    method: 'POST',
    path: groupsPath('add-contacts'),
    token: demo.token,
    query: `id=${group.Id}`,
    body: { PhoneNumberIds: [...all].reverse() },
  });
  const g = await groupFromDb(ctx, group.Id);
  assertBody(res, 'json', 200, g);
  assert.deepEqual(g.PhoneNumberIds, all);
  // 1,001 entries are too many even when they name only 1,000 contacts.
  assert422(
    await call(ctx.app, {
      method: 'POST',
      path: groupsPath('remove-contacts'),
      token: demo.token,
      query: `id=${group.Id}`,
      body: { PhoneNumberIds: [...all, all[0]] },
    }),
    [idsBad],
  );
  const removed = await call(ctx.app, {
    method: 'POST',
    path: groupsPath('remove-contacts'),
    token: demo.token,
    query: `id=${group.Id}`,
    body: { PhoneNumberIds: all },
  });
  assertBody(removed, 'json', 200, await groupFromDb(ctx, group.Id));
  assert.deepEqual(JSON.parse(removed.body).PhoneNumberIds, []);
});

storeTest("groups: one query for a page's members, one for checking 1,000 ids, one statement for writing them", async (t) => {
  const { ctx, demo } = await setup(t);
  // Every statement run: on SQLite every one, prepared paths and Kysely alike, ends in a
  // better-sqlite3 statement (spy on their prototype, `source` is the SQL); on PostgreSQL every
  // one goes through Kysely (spy on the executors' shared prototype).
  const seen: string[] = [];
  const sqlite = sqliteHandle(ctx.store.db);
  if (sqlite) {
    const proto = Object.getPrototypeOf(sqlite.prepare('select 1')) as Record<'run' | 'get' | 'all', (...args: unknown[]) => unknown>;
    for (const method of ['run', 'get', 'all'] as const) {
      const original = proto[method];
      proto[method] = function (this: { source: string }, ...args: unknown[]) {
        seen.push(this.source);
        return original.apply(this, args);
      };
      t.after(() => {
        proto[method] = original;
      });
    }
  } else {
    const proto = Object.getPrototypeOf(ctx.store.db.getExecutor()) as {
      executeQuery: (query: { sql: string }, ...rest: unknown[]) => unknown;
    };
    const original = proto.executeQuery;
    proto.executeQuery = function (this: unknown, query, ...rest) {
      seen.push(query.sql);
      return original.call(this, query, ...rest);
    };
    t.after(() => {
      proto.executeQuery = original;
    });
  }
  const on = (table: string) => seen.filter((s) => s.includes(`"${table}"`));

  seen.length = 0;
  const res = await call(ctx.app, { path: groupsPath('index'), token: demo.token });
  assert.equal(res.statusCode, 200);
  assert.equal(on('group_members').length, 1, `members of the page in one query: ${JSON.stringify(on('group_members'))}`);

  const ids = demo.contacts.map((c) => c.Id);
  const many = Array.from({ length: 1000 }, (_, i) => ids[i % ids.length]!);
  seen.length = 0;
  const added = await call(ctx.app, {
    method: 'POST',
    path: groupsPath('add-contacts'),
    token: demo.token,
    query: `id=${demo.groups[4]!.Id}`,
    body: { PhoneNumberIds: many },
  });
  assert.equal(added.statusCode, 200, added.body);
  assert.deepEqual(JSON.parse(added.body).PhoneNumberIds, ids);
  assert.equal(on('contacts').length, 1, `the ids are checked in one query: ${JSON.stringify(on('contacts'))}`);
  // One statement shape for any number of ids: a JSON array parameter, not a placeholder per id.
  assert.ok(on('contacts')[0]!.length < 400, `the check is not built per id: ${on('contacts')[0]!.slice(0, 200)}`);
  assert.equal(seen.filter((s) => /^insert into "group_members"/i.test(s)).length, 1, 'one INSERT for all memberships');
  assert.match(
    seen.find((s) => /^insert into "group_members"/i.test(s))!,
    /on conflict \("group_id", "contact_id"\) do nothing/i,
  );
});

storeTest('groups/create, add-contacts: Idempotency-Key replays the first response and does nothing twice', async (t) => {
  const { ctx, demo } = await setup(t);
  const post = (url: string, key: string, body: unknown) =>
    ctx.app.inject({
      method: 'POST',
      url: `${url}&access_token=${demo.token}`,
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      payload: JSON.stringify(body),
    });
  const first = await post('/v1/groups/create?', 'create-1', { fname: 'Once only' });
  const again = await post('/v1/groups/create?', 'create-1', { fname: 'Once only' });
  assert.equal(first.statusCode, 201, first.body);
  assert.equal(again.statusCode, 201, again.body);
  assert.equal(again.body, first.body);
  assert.equal(again.headers.location, first.headers.location);
  assert.equal(again.headers['idempotent-replayed'], 'true');
  const named = await ctx.store.db
    .selectFrom('groups')
    .select('id')
    .where('account_id', '=', demo.account.id)
    .where('name', '=', 'Once only')
    .execute();
  assert.equal(named.length, 1, 'one group created');
  const empty = demo.groups[4]!;
  const added = await post(`/v1/groups/add-contacts?id=${empty.Id}`, 'add-1', { PhoneNumberIds: [demo.contacts[0]!.Id] });
  assert.equal(added.statusCode, 200, added.body);
  const replay = await post(`/v1/groups/add-contacts?id=${empty.Id}`, 'add-1', { PhoneNumberIds: [demo.contacts[0]!.Id] });
  assert.equal(replay.body, added.body);
  assert.equal(replay.headers['idempotent-replayed'], 'true');
  const conflict = await post(`/v1/groups/add-contacts?id=${empty.Id}`, 'add-1', { PhoneNumberIds: [demo.contacts[1]!.Id] });
  assert.equal(conflict.statusCode, 409, conflict.body);
  assert.deepEqual((await groupFromDb(ctx, empty.Id)).PhoneNumberIds, [demo.contacts[0]!.Id]);
});
