/**
 * API.md §10.5, keywords beyond reserve: index (by Id, `Number` filter, pagination), view,
 * update (reserve's rules, only the fields sent change, one record), delete (204, groups released),
 * check (availability across every account), and the global uniqueness of a keyword on a number
 * shared by several accounts (reserve, update, check). JSON and XML, exact messages, owner scoping.
 * The expected records are built from the database rows and API.md, never from the server's mappers.
 */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { DemoAccount } from '../../../src/domain/demo.ts';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import {
  assert422,
  assertBody,
  assertError,
  call,
  fieldError,
  keywordsFromDb,
  snapshotAccount,
  UNUSED_ID,
  WIRES,
  isXml,
  type CallOptions,
  type Wire,
} from '../../helpers/operations.ts';
import { onePerStore, storeTest } from '../../helpers/stores.ts';

const HOST = 'api.example.test';

interface Fixture {
  ctx: TestApp;
  /** Two demo accounts: both hold 55155 and the other seeded numbers, as accounts sharing a short code do. */
  demo: DemoAccount;
  other: DemoAccount;
}

const shared = onePerStore(
  async (): Promise<Fixture> => {
    const ctx = await buildTestApp();
    return { ctx, demo: await ctx.seed(), other: await ctx.seed('Other') };
  },
  (fixture) => fixture.ctx.close(),
);

/**
 * The file's one app and two accounts per store (on PostgreSQL a database per app and the seeds are
 * the slow part). Every test starts with no keyword reservation in any account, since a keyword is
 * unique on its number across all accounts. Tests that add a number give it digits no other test uses.
 */
async function fresh(): Promise<Fixture> {
  const fixture = await shared();
  await fixture.ctx.store.db.deleteFrom('keyword_reservations').execute();
  return fixture;
}

type Req = Omit<CallOptions, 'token'>;

function as(ctx: TestApp, demo: DemoAccount, o: Req): Promise<LightMyRequestResponse> {
  return call(ctx.app, { ...o, token: demo.token });
}

async function reserve(
  ctx: TestApp,
  demo: DemoAccount,
  Keyword: string,
  Number: string | number,
  AutoreplyMessage?: string,
): Promise<number> {
  const res = await as(ctx, demo, {
    method: 'POST',
    path: '/v1/keyword/reserve',
    body: { Keyword, Number, ...(AutoreplyMessage === undefined ? {} : { AutoreplyMessage }) },
  });
  assert.equal(res.statusCode, 201, res.body);
  return (JSON.parse(res.body) as { Id: number }[])[0]!.Id;
}

/** API.md §9.8: the JSON form, or (XML) Id, Number = keyword, ShortCode = number, AutoreplyMessage. */
function record(r: { id: number; keyword: string; number: string; autoreply_message: string }, wire: Wire) {
  return isXml(wire)
    ? { Id: r.id, Number: r.keyword, ShortCode: Number(r.number), AutoreplyMessage: r.autoreply_message }
    : { Id: r.id, Keyword: r.keyword, Number: Number(r.number), AutoreplyMessage: r.autoreply_message };
}

async function rowOf(ctx: TestApp, demo: DemoAccount, id: number) {
  return (await keywordsFromDb(ctx, demo.account.id)).find((r) => r.id === id);
}

/** The account's reservations straight from the table, with the stored digits and case-folded key. */
async function storedRows(ctx: TestApp, accountId: number) {
  return ctx.store.db
    .selectFrom('keyword_reservations')
    .select(['id', 'keyword', 'keyword_key', 'number', 'account_number_id', 'autoreply_message'])
    .where('account_id', '=', accountId)
    .orderBy('id')
    .execute();
}

function withCase<T>(name: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    (err as Error).message = `${name}: ${(err as Error).message}`;
    throw err;
  }
}

const NOT_FOUND = (id: number | string) => `Object not found: ${id}`;
const taken = (kw: string) => fieldError('Keyword', `Keyword "${kw}" has already been taken.`);
const kwBlank = fieldError('Keyword', 'Keyword cannot be blank.');
const numBlank = fieldError('Number', 'Number cannot be blank.');
const kwShort = fieldError('Keyword', 'Keyword should contain at least 4 characters.');
const kwLong = fieldError('Keyword', 'Keyword should contain at most 255 characters.');
const kwNotString = fieldError('Keyword', 'Keyword must be a string.');
const kwInvalid = fieldError('Keyword', 'Keyword is invalid.');
const numNotInt = fieldError('Number', 'Number must be an integer.');
const numInvalid = fieldError('Number', 'Number is invalid.');
const autoLong = fieldError('AutoreplyMessage', 'Autoreply Message should contain at most 1,600 characters.');
const autoNotString = fieldError('AutoreplyMessage', 'Autoreply Message must be a string.');

// ---------------------------------------------------------------- index

storeTest("keyword/index: records by Id in JSON and XML (reserve element names), only the caller's, HEAD without a body", async () => {
  const { ctx, demo, other } = await fresh();
  for (const wire of WIRES) assertBody(await as(ctx, demo, { path: '/v1/keyword/index', wire }), wire, 200, []);
  const xmlEmpty = await as(ctx, demo, { path: '/v1/keyword/index', wire: 'xml' });
  assert.match(xmlEmpty.body, /<response\/>/);

  await reserve(ctx, demo, 'Pizza', '55155', 'Hot & <fresh>');
  await reserve(ctx, other, 'OTHERS', '55155');
  await reserve(ctx, demo, 'JOIN', 15550100001);
  await reserve(ctx, demo, 'deals', '+55155', 'Deals!');
  const rows = await keywordsFromDb(ctx, demo.account.id);
  assert.equal(rows.length, 3);
  for (const wire of WIRES) {
    const res = await as(ctx, demo, { path: '/v1/keyword/index', wire });
    assertBody(
      res,
      wire,
      200,
      rows.map((r) => record(r, wire)),
    );
    assert.equal(res.headers['x-pagination-total-count'], '3');
  }
  assert.ok(!(await as(ctx, demo, { path: '/v1/keyword/index' })).body.includes('OTHERS'), "another account's keyword is not listed");

  const head = await as(ctx, demo, { method: 'HEAD', path: '/v1/keyword/index' });
  assert.equal(head.statusCode, 200);
  assert.equal(head.body, '');
  assert.equal(head.headers['x-pagination-total-count'], '3');
});

storeTest("keyword/index: the Number filter (read like reserve's Number), 422 when not an integer", async () => {
  const { ctx, demo, other } = await fresh();
  const a = await reserve(ctx, demo, 'AAAA', '55155');
  const b = await reserve(ctx, demo, 'BBBB', '15550100001');
  const c = await reserve(ctx, demo, 'CCCC', '55155');
  await reserve(ctx, other, 'DDDD', '55155');
  const rows = await keywordsFromDb(ctx, demo.account.id);
  const pick = (...ids: number[]) => rows.filter((r) => ids.includes(r.id));
  const cases: [string, number[]][] = [
    ['Number=55155', [a, c]],
    ['Number=%2B55155', [a, c]],
    ['Number=055155', [a, c]],
    ['Number=15550100001', [b]],
    ['Number=15550100002', []], // the account's Inactive number: no reservations on it
    ['Number=99999', []], // not a number of the account
    ['Number=-55155', []],
    ['Number=9223372036854775807', []], // 64 bits, beyond a safe integer: no number has it
    ['Number=', [a, b, c]], // empty: no filter
  ];
  for (const [query, ids] of cases) {
    for (const wire of WIRES) {
      const res = await as(ctx, demo, { path: '/v1/keyword/index', query, wire });
      withCase(`${query} (${wire})`, () => {
        assertBody(
          res,
          wire,
          200,
          pick(...ids).map((r) => record(r, wire)),
        );
        assert.equal(res.headers['x-pagination-total-count'], String(ids.length));
      });
    }
  }
  // The other account sees only its own reservation on the shared short code.
  const theirs = await as(ctx, other, { path: '/v1/keyword/index', query: 'Number=55155' });
  assert.deepEqual(
    (JSON.parse(theirs.body) as { Keyword: string }[]).map((r) => r.Keyword),
    ['DDDD'],
  );

  for (const query of ['Number=abc', 'Number=55155a', 'Number=1.5', 'Number=%2055155', 'Number[]=55155', 'Number=99999999999999999999']) {
    for (const wire of WIRES) {
      const res = await as(ctx, demo, { path: '/v1/keyword/index', query, wire });
      withCase(`${query} (${wire})`, () => assert422(res, [numNotInt], wire));
      assert.equal(res.headers['x-pagination-total-count'], undefined, 'no pagination headers on an error');
      assert.equal(res.headers.link, undefined);
    }
  }
});

storeTest('keyword/index: pagination headers and Link (API.md §5), with and without the filter', async () => {
  const { ctx, demo } = await fresh();
  for (let i = 0; i < 5; i++) await reserve(ctx, demo, `WORD${i}`, i % 2 ? '15550100001' : '55155');
  const rows = await keywordsFromDb(ctx, demo.account.id);
  const token = encodeURIComponent(demo.token);
  const get = (query: string) => ctx.app.inject({ url: `/v1/keyword/index?access_token=${token}${query}`, headers: { host: HOST } });
  const page = (res: LightMyRequestResponse) => [
    res.headers['x-pagination-total-count'],
    res.headers['x-pagination-page-count'],
    res.headers['x-pagination-current-page'],
    res.headers['x-pagination-per-page'],
  ];

  const all = await get('');
  assert.deepEqual(page(all), ['5', '1', '1', '100']);
  assert.equal(all.headers.link, `<http://${HOST}/v1/keyword/index?access_token=${token}&page=1>; rel=self`);

  const second = await get('&per-page=2&page=2');
  assert.deepEqual(page(second), ['5', '3', '2', '2']);
  assert.deepEqual(
    (JSON.parse(second.body) as { Id: number }[]).map((r) => r.Id),
    [rows[2]!.id, rows[3]!.id],
  );
  const q = (n: number) => `<http://${HOST}/v1/keyword/index?access_token=${token}&per-page=2&page=${n}>`;
  assert.equal(second.headers.link, `${q(2)}; rel=self, ${q(1)}; rel=first, ${q(1)}; rel=prev, ${q(3)}; rel=next, ${q(3)}; rel=last`);

  const past = await get('&per-page=2&page=9');
  assert.deepEqual(page(past), ['5', '3', '3', '2']);
  assert.deepEqual(
    (JSON.parse(past.body) as { Id: number }[]).map((r) => r.Id),
    [rows[4]!.id],
  );

  // The filter counts only its own rows, and the Link keeps it.
  const filtered = await get('&Number=55155&per-page=2');
  assert.deepEqual(page(filtered), ['3', '2', '1', '2']);
  assert.deepEqual(
    (JSON.parse(filtered.body) as { Keyword: string }[]).map((r) => r.Keyword),
    ['WORD0', 'WORD2'],
  );
  const f = (n: number) => `<http://${HOST}/v1/keyword/index?access_token=${token}&Number=55155&per-page=2&page=${n}>`;
  assert.equal(filtered.headers.link, `${f(1)}; rel=self, ${f(2)}; rel=next, ${f(2)}; rel=last`);

  const none = await get('&Number=99999');
  assert.deepEqual(page(none), ['0', '0', '1', '100']);
  assert.equal(none.body, '[]');
});

// ---------------------------------------------------------------- view

storeTest("keyword/view: one record (XML: reserve element names); 404 for another account's id; 400 for a bad id", async () => {
  const { ctx, demo, other } = await fresh();
  const id = await reserve(ctx, demo, 'Coffee', 15550100001, 'Free refill & <more>');
  const theirs = await reserve(ctx, other, 'TEAS', '55155');
  const row = (await rowOf(ctx, demo, id))!;
  for (const wire of WIRES) {
    assertBody(await as(ctx, demo, { path: '/v1/keyword/view', query: `id=${id}`, wire }), wire, 200, record(row, wire));
    assertError(await as(ctx, demo, { path: '/v1/keyword/view', query: `id=${theirs}`, wire }), 404, NOT_FOUND(theirs), wire);
    assertError(await as(ctx, demo, { path: '/v1/keyword/view', query: `id=${UNUSED_ID}`, wire }), 404, NOT_FOUND(UNUSED_ID), wire);
  }
  assert.equal((await as(ctx, demo, { path: '/v1/keyword/view', query: `id=+${id}` })).statusCode, 200);
  assertError(await as(ctx, demo, { path: '/v1/keyword/view', query: 'id=0' }), 404, NOT_FOUND(0));
  assertError(await as(ctx, demo, { path: '/v1/keyword/view' }), 400, 'Missing required parameters: id');
  assertError(await as(ctx, demo, { path: '/v1/keyword/view', query: 'id=abc' }), 400, 'Invalid data received for parameter "id".');
  const head = await as(ctx, demo, { method: 'HEAD', path: '/v1/keyword/view', query: `id=${id}` });
  assert.equal(head.statusCode, 200);
  assert.equal(head.body, '');
});

// ---------------------------------------------------------------- update

storeTest('keyword/update: only the fields sent change; 200 with one record (not a list) in JSON and XML; PUT and PATCH', async () => {
  const { ctx, demo } = await fresh();
  const id = await reserve(ctx, demo, 'Pizza', '55155', 'Hot pizza');
  const update = (body: unknown, wire: Wire = 'json', method: 'PUT' | 'PATCH' = 'PUT') =>
    as(ctx, demo, { method, path: '/v1/keyword/update', query: `id=${id}`, body, wire });
  const expect = async (res: LightMyRequestResponse, wire: Wire, keyword: string, number: string, autoreply: string) => {
    const row = (await rowOf(ctx, demo, id))!;
    assert.deepEqual([row.keyword, row.number, row.autoreply_message], [keyword, number, autoreply], 'stored');
    assertBody(res, wire, 200, record(row, wire));
  };

  // Only AutoreplyMessage: the keyword stays (uniqueness excludes the record itself).
  await expect(await update({ AutoreplyMessage: 'Cheese & <more>' }), 'json', 'Pizza', '55155', 'Cheese & <more>');
  // Only Keyword (a case change of its own keyword is no clash), in XML.
  await expect(await update({ Keyword: 'PIZZA' }, 'xml'), 'xml', 'PIZZA', '55155', 'Cheese & <more>');
  // Only Number, quoted with a sign, by PATCH, with _format=xml.
  await expect(await update({ Number: '+15550100001' }, 'xml-param', 'PATCH'), 'xml-param', 'PIZZA', '15550100001', 'Cheese & <more>');
  const stored = (await storedRows(ctx, demo.account.id))[0]!;
  const numberRow = await ctx.store.db
    .selectFrom('account_numbers')
    .select('id')
    .where('account_id', '=', demo.account.id)
    .where('number', '=', '15550100001')
    .executeTakeFirstOrThrow();
  assert.equal(stored.account_number_id, numberRow.id, 'the reservation moved to the number row');
  assert.equal(stored.keyword_key, 'pizza');
  // All three; then the same values again (itself is no clash).
  await expect(
    await update({ Keyword: 'Burger', Number: 55155, AutoreplyMessage: 'Yum' }, 'json', 'PATCH'),
    'json',
    'Burger',
    '55155',
    'Yum',
  );
  await expect(await update({ Keyword: 'Burger', Number: 55155, AutoreplyMessage: 'Yum' }), 'json', 'Burger', '55155', 'Yum');
  // AutoreplyMessage sent empty or null clears it; an empty body and unknown keys change nothing.
  await expect(await update({ AutoreplyMessage: '' }), 'json', 'Burger', '55155', '');
  await update({ AutoreplyMessage: 'Back' });
  await expect(await update({ AutoreplyMessage: null }), 'json', 'Burger', '55155', '');
  await expect(await update({}), 'json', 'Burger', '55155', '');
  await expect(await update({ keyword: 'other', ShortCode: 1, Id: 99 }), 'json', 'Burger', '55155', '');
  const empty = await call(ctx.app, { method: 'PUT', path: '/v1/keyword/update', token: demo.token, query: `id=${id}`, rawBody: '' });
  await expect(empty, 'json', 'Burger', '55155', '');
  // The boundaries: 4 and 255 characters, 1,600 characters of autoreply.
  await expect(await update({ Keyword: 'ABCD' }), 'json', 'ABCD', '55155', '');
  const long = 'K'.repeat(255);
  const autoreply = 'é'.repeat(1600);
  await expect(await update({ Keyword: long, AutoreplyMessage: autoreply }), 'json', long, '55155', autoreply);
  // The record is now found under its new keyword by the filter and by check.
  const check = await as(ctx, demo, { path: '/v1/keyword/check', query: `Keyword=${long.toLowerCase()}&Number=55155` });
  assert.equal(check.body, `{"Keyword":"${long.toLowerCase()}","Number":55155,"Available":false}`);
});

storeTest("keyword/update: reserve's rules with exact messages; blank is refused when sent; a failed update changes nothing", async () => {
  const { ctx, demo, other } = await fresh();
  const id = await reserve(ctx, demo, 'Pizza', '55155', 'Hot');
  const cases: [string, unknown, { field: string; message: string }[]][] = [
    ['Keyword empty', { Keyword: '' }, [kwBlank]],
    ['Keyword null', { Keyword: null }, [kwBlank]],
    ['Keyword whitespace', { Keyword: '  \t ' }, [kwBlank]],
    ['Keyword []', { Keyword: [] }, [kwBlank]],
    ['Number empty', { Number: '' }, [numBlank]],
    ['Number null', { Number: null }, [numBlank]],
    ['both blank', { Keyword: '', Number: ' ' }, [kwBlank, numBlank]],
    ['Number blank before a short Keyword (required rules first)', { Keyword: 'ab', Number: '' }, [numBlank, kwShort]],
    ['Keyword 3 characters', { Keyword: 'ABC' }, [kwShort]],
    ['Keyword 3 characters, 9 bytes', { Keyword: '日本語' }, [kwShort]],
    ['Keyword 256 characters', { Keyword: 'K'.repeat(256) }, [kwLong]],
    ['Keyword integer', { Keyword: 12345 }, [kwNotString]],
    ['Keyword array', { Keyword: ['SALE'] }, [kwNotString]],
    ['carrier word', { Keyword: 'stop' }, [kwInvalid]],
    ['carrier word, mixed case and spaces', { Keyword: ' UnSubscribe ' }, [kwInvalid]],
    ['Number not an integer', { Number: '55155a' }, [numNotInt]],
    ['Number 1.5', { Number: 1.5 }, [numNotInt]],
    ['Number true', { Number: true }, [numNotInt]],
    ['Inactive number', { Number: '15550100002' }, [numInvalid]],
    ['Temporarily blocked number', { Number: 15550100003 }, [numInvalid]],
    ['Permanently blocked number', { Number: '15550100004' }, [numInvalid]],
    ['unknown number', { Number: '99999' }, [numInvalid]],
    ['negative number', { Number: '-55155' }, [numInvalid]],
    ['AutoreplyMessage 1,601 characters', { AutoreplyMessage: 'x'.repeat(1601) }, [autoLong]],
    ['AutoreplyMessage integer', { AutoreplyMessage: 5 }, [autoNotString]],
    ['all three bad, in rule order', { AutoreplyMessage: false, Number: 'n', Keyword: 7 }, [kwNotString, numNotInt, autoNotString]],
    ['carrier word and bad number', { Keyword: 'HELP', Number: '15550100002' }, [kwInvalid, numInvalid]],
  ];
  const before = await snapshotAccount(ctx, demo.account.id);
  for (const [name, body, errors] of cases) {
    for (const wire of WIRES) {
      const res = await as(ctx, demo, { method: 'PATCH', path: '/v1/keyword/update', query: `id=${id}`, body, wire });
      withCase(`${name} (${wire})`, () => assert422(res, errors, wire));
    }
  }
  // A number that only another account holds is not ours.
  await ctx.store.db
    .insertInto('account_numbers')
    .values({ account_id: other.account.id, number: '15559990001', status_id: 0, blocked_at: null, created_at: 1 })
    .execute();
  assert422(await as(ctx, demo, { method: 'PUT', path: '/v1/keyword/update', query: `id=${id}`, body: { Number: '15559990001' } }), [
    numInvalid,
  ]);
  assert.deepEqual(await snapshotAccount(ctx, demo.account.id), before, 'nothing changed');
});

storeTest('keyword/update: unique on the (new) number across all accounts, itself excepted', async () => {
  const { ctx, demo, other } = await fresh();
  const pizza = await reserve(ctx, demo, 'Pizza', '55155');
  const burger = await reserve(ctx, demo, 'Burger', '15550100001');
  await reserve(ctx, demo, 'Pizza', '15550100001');
  await reserve(ctx, other, 'Tacos', '55155'); // the shared short code, in another account
  const update = (id: number, body: unknown, wire: Wire = 'json') =>
    as(ctx, demo, { method: 'PUT', path: '/v1/keyword/update', query: `id=${id}`, body, wire });
  const before = await snapshotAccount(ctx, demo.account.id);
  const theirsBefore = await snapshotAccount(ctx, other.account.id);
  for (const wire of WIRES) {
    // Renamed onto another of the account's keywords on the same number.
    assert422(await update(burger, { Keyword: 'pIzZa' }, wire), [taken('pIzZa')], wire);
    // Renamed onto another account's keyword on the shared short code, as sent.
    assert422(await update(pizza, { Keyword: 'TACOS' }, wire), [taken('TACOS')], wire);
    // Moved (Number only) onto a number that already has this keyword: the stored keyword is named.
    assert422(await update(pizza, { Number: '15550100001' }, wire), [taken('Pizza')], wire);
    // Both at once.
    assert422(await update(burger, { Keyword: 'tacos', Number: 55155 }, wire), [taken('tacos')], wire);
    // A taken keyword is reported with another field's error (first error of each field).
    assert422(await update(burger, { Keyword: 'PIZZA', AutoreplyMessage: 12 }, wire), [autoNotString, taken('PIZZA')], wire);
  }
  assert.deepEqual(await snapshotAccount(ctx, demo.account.id), before, 'nothing changed');
  assert.deepEqual(await snapshotAccount(ctx, other.account.id), theirsBefore);
  // The same keyword on a number where nobody has it is fine; so is re-sending its own keyword and number.
  assert.equal((await update(burger, { Keyword: 'burger', Number: '55155' })).statusCode, 200);
  assert.equal((await update(burger, { Keyword: 'BURGER', Number: '55155', AutoreplyMessage: 'ok' })).statusCode, 200);
  assert.equal((await update(pizza, { AutoreplyMessage: 'only this' })).statusCode, 200);
  // The other account is held to the same rule against us.
  const tacos = (await keywordsFromDb(ctx, other.account.id))[0]!.id;
  assert422(await as(ctx, other, { method: 'PUT', path: '/v1/keyword/update', query: `id=${tacos}`, body: { Keyword: 'BURGER' } }), [
    taken('BURGER'),
  ]);
});

storeTest("keyword/update: 404 for another account's id or an unknown id, before any 422; 400 for a bad id", async () => {
  const { ctx, demo, other } = await fresh();
  await reserve(ctx, demo, 'MINE', '55155');
  const theirs = await reserve(ctx, other, 'THEIRS', '55155');
  const theirsBefore = await snapshotAccount(ctx, other.account.id);
  for (const wire of WIRES) {
    for (const body of [{ Keyword: 'CHANGED' }, { Keyword: '' }, { Keyword: 'stop', Number: 'x' }]) {
      for (const id of [theirs, UNUSED_ID]) {
        const res = await as(ctx, demo, { method: 'PATCH', path: '/v1/keyword/update', query: `id=${id}`, body, wire });
        assertError(res, 404, NOT_FOUND(id), wire);
      }
    }
  }
  assert.deepEqual(await snapshotAccount(ctx, other.account.id), theirsBefore);
  assertError(
    await as(ctx, demo, { method: 'PUT', path: '/v1/keyword/update', body: { Keyword: 'X' } }),
    400,
    'Missing required parameters: id',
  );
  assertError(
    await as(ctx, demo, { method: 'PUT', path: '/v1/keyword/update', query: 'id=1.5', body: {} }),
    400,
    'Invalid data received for parameter "id".',
  );
});

// ---------------------------------------------------------------- delete

storeTest(
  "keyword/delete: 204 with an empty body; the keyword is released; the account's groups that pointed to it get KeywordId 0",
  async () => {
    const { ctx, demo, other } = await fresh();
    const id = await reserve(ctx, demo, 'JOIN', '55155');
    const keep = await reserve(ctx, demo, 'KEEP', '55155');
    const [g1, g2, g3] = demo.groups.map((g) => g.Id);
    const db = ctx.store.db;
    await db.updateTable('groups').set({ keyword_id: id }).where('id', 'in', [g1!, g2!]).execute();
    await db.updateTable('groups').set({ keyword_id: keep }).where('id', '=', g3!).execute();
    // Another account's group holding the same number (not a legitimate link): owner-scoped, it stays.
    const theirGroup = other.groups[0]!.Id;
    await db.updateTable('groups').set({ keyword_id: id }).where('id', '=', theirGroup).execute();
    const groupsBefore = await db
      .selectFrom('groups')
      .select(['id', 'updated_at'])
      .where('account_id', '=', demo.account.id)
      .orderBy('id')
      .execute();

    for (const wire of ['xml', 'json'] as const) {
      const res = await as(ctx, demo, { method: 'DELETE', path: '/v1/keyword/delete', query: `id=${id}`, wire });
      if (wire === 'xml') {
        assert.equal(res.statusCode, 204, res.body);
        assert.equal(res.body, '');
      } else {
        assertError(res, 404, NOT_FOUND(id), wire); // already gone
      }
    }
    assert.deepEqual(
      (await keywordsFromDb(ctx, demo.account.id)).map((r) => r.keyword),
      ['KEEP'],
    );
    const keywordIds = async (ids: number[]) =>
      (await db.selectFrom('groups').select(['id', 'keyword_id']).where('id', 'in', ids).orderBy('id').execute()).map((g) => g.keyword_id);
    assert.deepEqual(await keywordIds([g1!, g2!, g3!]), [0, 0, keep]);
    assert.deepEqual(await keywordIds([theirGroup]), [id], "another account's group is not touched");
    const groupsAfter = await db
      .selectFrom('groups')
      .select(['id', 'updated_at'])
      .where('account_id', '=', demo.account.id)
      .orderBy('id')
      .execute();
    assert.deepEqual(groupsAfter, groupsBefore, 'DateUpdated of the groups stays');
    // The groups' records show it (groups/update replies the Group record).
    const view = await as(ctx, demo, { method: 'PUT', path: '/v1/groups/update', query: `id=${g1}`, body: { fname: 'Renamed group' } });
    assert.equal((JSON.parse(view.body) as { KeywordId: number }).KeywordId, 0);
    // Released: the other account may now reserve it on the shared short code, and view/update 404.
    assert.equal(
      (await as(ctx, other, { path: '/v1/keyword/check', query: 'Keyword=join&Number=55155' })).body,
      '{"Keyword":"join","Number":55155,"Available":true}',
    );
    await reserve(ctx, other, 'join', '55155');
    assertError(await as(ctx, demo, { path: '/v1/keyword/view', query: `id=${id}` }), 404, NOT_FOUND(id));
  },
);

storeTest("keyword/delete: 404 for another account's id (nothing deleted), 400 for a missing id; only DELETE", async () => {
  const { ctx, demo, other } = await fresh();
  const theirs = await reserve(ctx, other, 'THEIRS', '55155');
  await ctx.store.db.updateTable('groups').set({ keyword_id: theirs }).where('id', '=', other.groups[0]!.Id).execute();
  const before = await snapshotAccount(ctx, other.account.id);
  for (const wire of WIRES) {
    assertError(
      await as(ctx, demo, { method: 'DELETE', path: '/v1/keyword/delete', query: `id=${theirs}`, wire }),
      404,
      NOT_FOUND(theirs),
      wire,
    );
  }
  assert.deepEqual(await snapshotAccount(ctx, other.account.id), before);
  assertError(await as(ctx, demo, { method: 'DELETE', path: '/v1/keyword/delete' }), 400, 'Missing required parameters: id');
  for (const method of ['GET', 'POST', 'PUT'] as const) {
    const res = await as(ctx, other, { method, path: '/v1/keyword/delete', query: `id=${theirs}` });
    assert.equal(res.statusCode, 405, method);
    assert.equal(res.headers.allow, 'DELETE');
  }
  assert.equal((await keywordsFromDb(ctx, other.account.id)).length, 1);
});

// ---------------------------------------------------------------- check

storeTest(
  'keyword/check: Available across every account sharing the number, case-insensitively; Keyword as sent, Number an integer',
  async () => {
    const { ctx, demo, other } = await fresh();
    const check = (who: DemoAccount, query: string, wire: Wire = 'json') => as(ctx, who, { path: '/v1/keyword/check', query, wire });
    const expect = async (who: DemoAccount, Keyword: string, Number: string, number: number, available: boolean) => {
      for (const wire of WIRES) {
        const res = await check(who, `Keyword=${encodeURIComponent(Keyword)}&Number=${encodeURIComponent(Number)}`, wire);
        withCase(`${Keyword} on ${Number} (${wire})`, () => assertBody(res, wire, 200, { Keyword, Number: number, Available: available }));
      }
    };
    await expect(demo, 'JOIN', '55155', 55155, true);
    await expect(other, 'JOIN', '55155', 55155, true);
    const xml = await check(demo, 'Keyword=JOIN&Number=55155', 'xml');
    assert.equal(
      xml.body,
      '<?xml version="1.0" encoding="UTF-8"?>\n<response><Keyword>JOIN</Keyword><Number>55155</Number><Available>true</Available></response>\n',
    );

    await reserve(ctx, demo, 'Join', '55155');
    for (const who of [demo, other]) {
      await expect(who, 'JOIN', '55155', 55155, false);
      await expect(who, 'join', '+55155', 55155, false);
      await expect(who, ' jOiN ', '055155', 55155, false);
      await expect(who, 'JOINED', '55155', 55155, true);
    }
    // On another number it is free (both seeds hold 15550100001 too).
    await expect(demo, 'JOIN', '15550100001', 15550100001, true);
    await expect(other, 'JOIN', '15550100001', 15550100001, true);
    // A number only the first account holds is not the other's: 422, not an answer.
    await ctx.store.db
      .insertInto('account_numbers')
      .values({ account_id: demo.account.id, number: '15559990002', status_id: 0, blocked_at: null, created_at: 1 })
      .execute();
    await expect(demo, 'JOIN', '15559990002', 15559990002, true);
    assert422(await check(other, 'Keyword=JOIN&Number=15559990002'), [numInvalid]);
    // Taken by the other account only: still not available to either, and no error.
    await reserve(ctx, other, 'Pizza', '55155');
    await expect(demo, 'PIZZA', '55155', 55155, false);
    await expect(other, 'pizza', '55155', 55155, false);
    // check never writes.
    assert.equal((await keywordsFromDb(ctx, demo.account.id)).length, 1);
  },
);

storeTest("keyword/check: invalid input gives reserve's 422 (rules, messages, order); GET only", async () => {
  const { ctx, demo } = await fresh();
  const cases: [string, { field: string; message: string }[]][] = [
    ['', [kwBlank, numBlank]],
    ['Keyword=&Number=', [kwBlank, numBlank]],
    ['Keyword=%20%20&Number=55155', [kwBlank]],
    ['Number=55155', [kwBlank]],
    ['Keyword=JOIN', [numBlank]],
    ['Keyword=ABC&Number=55155', [kwShort]],
    [`Keyword=${'K'.repeat(256)}&Number=55155`, [kwLong]],
    ['Keyword[]=JOIN&Number=55155', [kwNotString]],
    ['Keyword=STOP&Number=55155', [kwInvalid]],
    ['Keyword=stopall&Number=55155', [kwInvalid]],
    ['Keyword=JOIN&Number=55155a', [numNotInt]],
    ['Keyword=JOIN&Number=1.5', [numNotInt]],
    ['Keyword=JOIN&Number[]=55155', [numNotInt]],
    ['Keyword=JOIN&Number=15550100002', [numInvalid]],
    ['Keyword=JOIN&Number=15550100003', [numInvalid]],
    ['Keyword=JOIN&Number=15550100004', [numInvalid]],
    ['Keyword=JOIN&Number=99999', [numInvalid]],
    ['Keyword=JOIN&Number=-55155', [numInvalid]],
    ['Number=x&Keyword=ab', [kwShort, numNotInt]],
    ['Keyword=help&Number=15550100002', [kwInvalid, numInvalid]],
  ];
  for (const [query, errors] of cases) {
    for (const wire of WIRES) {
      const res = await as(ctx, demo, { path: '/v1/keyword/check', query, wire });
      withCase(`${query} (${wire})`, () => assert422(res, errors, wire));
    }
  }
  for (const method of ['POST', 'PUT', 'DELETE'] as const) {
    const res = await as(ctx, demo, { method, path: '/v1/keyword/check', query: 'Keyword=JOIN&Number=55155' });
    assert.equal(res.statusCode, 405, method);
    assert.equal(res.headers.allow, 'GET, HEAD');
  }
});

// ---------------------------------------------------------------- reserve on a shared short code

storeTest('keyword/reserve: a keyword taken by another account on a shared short code gives 422, in any case', async () => {
  const { ctx, demo, other } = await fresh();
  await reserve(ctx, other, 'Pizza', '55155');
  const before = await snapshotAccount(ctx, demo.account.id);
  for (const Keyword of ['Pizza', 'PIZZA', ' pizza ']) {
    for (const wire of WIRES) {
      const res = await as(ctx, demo, { method: 'POST', path: '/v1/keyword/reserve', body: { Keyword, Number: '55155' }, wire });
      withCase(`${Keyword} (${wire})`, () => assert422(res, [taken(Keyword)], wire));
    }
  }
  // With another field failing too, the taken keyword is still reported.
  assert422(
    await as(ctx, demo, {
      method: 'POST',
      path: '/v1/keyword/reserve',
      body: { Keyword: 'PIZZA', Number: 55155, AutoreplyMessage: 'x'.repeat(1601) },
    }),
    [autoLong, taken('PIZZA')],
  );
  assert.deepEqual(await snapshotAccount(ctx, demo.account.id), before, 'nothing stored');
  // On a number where nobody holds it, the same keyword is fine.
  await reserve(ctx, demo, 'PIZZA', '15550100001');
});

storeTest('keyword/*: the Allow header of each new path', async () => {
  const { ctx, demo } = await fresh();
  const allow: Record<string, string> = {
    '/v1/keyword/index': 'GET, HEAD',
    '/v1/keyword/view': 'GET, HEAD',
    '/v1/keyword/update': 'PUT, PATCH',
    '/v1/keyword/delete': 'DELETE',
    '/v1/keyword/check': 'GET, HEAD',
  };
  for (const [path, methods] of Object.entries(allow)) {
    const wrong = methods.startsWith('GET') ? 'DELETE' : 'GET';
    const res = await as(ctx, demo, { method: wrong, path, query: 'id=1' });
    assert.equal(res.statusCode, 405, path);
    assert.equal(res.headers.allow, methods, path);
  }
});
