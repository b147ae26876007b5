/**
 * API.md §10.4: `/v1/custom-contact-fields/…` (index, view, create, update, delete) and
 * `/v1/custom-contact-fields-entry/…` (index with the frfield/frcontact filters, view, create,
 * update, delete), in JSON and XML: exact bodies built from the database rows, exact 422 messages
 * in rule order, 404 for another account's ids, Location, 204, pagination headers, the
 * case-insensitive name rule, one entry per field × contact with the combination message quoting
 * the values as sent (API.md §4.4), and the cascade of a field's entries on delete.
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
  contactFromDb,
  customFieldFromDb,
  entryFromDb,
  expectRejected,
  fieldError,
  fmtTime,
  isXml,
  nowSeconds,
  type RejectCase,
  snapshotAccount,
  UNUSED_ID,
  WIRES,
} from '../../helpers/operations.ts';
import { onePerStore, storeTest } from '../../helpers/stores.ts';

const FIELDS = '/v1/custom-contact-fields';
const ENTRIES = '/v1/custom-contact-fields-entry';
/** `request.host` under app.inject (light-my-request's default Host header). */
const INJECT_ORIGIN = 'http://localhost:80';

const long = (n: number, ch = 'a') => ch.repeat(n);

// One app (and database) per store for the whole file: building one costs about half a second on
// PostgreSQL. Every test seeds accounts of its own, and every assertion is scoped to them.
const sharedApp = onePerStore(
  () => buildTestApp(),
  (ctx) => ctx.close(),
);

async function fieldIdsOf(ctx: TestApp, accountId: number): Promise<number[]> {
  const rows = await ctx.store.db.selectFrom('custom_fields').select('id').where('account_id', '=', accountId).orderBy('id').execute();
  return rows.map((r) => r.id);
}

async function fieldsFromDb(ctx: TestApp, accountId: number) {
  const out = [];
  for (const id of await fieldIdsOf(ctx, accountId)) out.push(await customFieldFromDb(ctx, id));
  return out;
}

async function entriesFromDb(ctx: TestApp, accountId: number, filter: { field?: number; contact?: number } = {}) {
  let q = ctx.store.db.selectFrom('custom_field_entries').select('id').where('account_id', '=', accountId);
  if (filter.field !== undefined) q = q.where('custom_field_id', '=', filter.field);
  if (filter.contact !== undefined) q = q.where('contact_id', '=', filter.contact);
  const out = [];
  for (const r of await q.orderBy('id').execute()) out.push(await entryFromDb(ctx, r.id));
  return out;
}

async function entryCountOfField(ctx: TestApp, fieldId: number): Promise<number> {
  const rows = await ctx.store.db.selectFrom('custom_field_entries').select('id').where('custom_field_id', '=', fieldId).execute();
  return rows.length;
}

/** Checks API.md §5 headers and the `Link` rels of one page. */
function assertPage(
  res: LightMyRequestResponse,
  p: { total: number; pages: number; page: number; perPage: number; link: [string, string][] },
): void {
  assert.equal(res.headers['x-pagination-total-count'], String(p.total));
  assert.equal(res.headers['x-pagination-page-count'], String(p.pages));
  assert.equal(res.headers['x-pagination-current-page'], String(p.page));
  assert.equal(res.headers['x-pagination-per-page'], String(p.perPage));
  assert.equal(res.headers.link, p.link.map(([url, rel]) => `<${INJECT_ORIGIN}${url}>; rel=${rel}`).join(', '));
}

/** The entry of field `fieldIndex` for contact `contactIndex` in the demo data. */
function entryOf(demo: DemoAccount, fieldIndex: number, contactIndex: number) {
  const e = demo.customFieldEntries.find(
    (x) => x.CustomFieldId === demo.customFields[fieldIndex]!.Id && x.PhoneNumberId === demo.contacts[contactIndex]!.Id,
  );
  assert.ok(e, `demo entry ${fieldIndex}/${contactIndex}`);
  return e;
}

// ================================================================== custom-contact-fields

storeTest(
  "custom-contact-fields/index: every field with its Value entries by Id, JSON and XML; HEAD; pagination; only the account's own",
  async () => {
    const ctx = await sharedApp();
    const demo = await ctx.seed('A');
    const other = await ctx.seed('B');
    const expected = await fieldsFromDb(ctx, demo.account.id);
    assert.deepEqual(
      expected.map((f) => f.Name),
      ['Favorite Color', 'Loyalty Tier', 'Shoe Size'],
    );
    assert.ok(expected[0]!.Value.length > 10 && expected[1]!.Value.length > 5 && expected[2]!.Value.length === 0);
    const token = encodeURIComponent(demo.token);
    for (const wire of WIRES) {
      const res = await call(ctx.app, { path: `${FIELDS}/index`, token: demo.token, wire });
      assertBody(res, wire, 200, expected);
      const self = `${FIELDS}/index?access_token=${token}${wire === 'xml-param' ? '&_format=xml' : ''}&page=1`;
      assertPage(res, { total: 3, pages: 1, page: 1, perPage: 100, link: [[self, 'self']] });
    }
    // HEAD: the same headers, no body.
    const head = await call(ctx.app, { method: 'HEAD', path: `${FIELDS}/index`, token: demo.token });
    assert.equal(head.statusCode, 200);
    assert.equal(head.body, '');
    assertPage(head, { total: 3, pages: 1, page: 1, perPage: 100, link: [[`${FIELDS}/index?access_token=${token}&page=1`, 'self']] });

    // Pages of 2: the second page holds the third field and only its entries.
    const p1 = await call(ctx.app, { path: `${FIELDS}/index`, token: demo.token, query: 'per-page=2' });
    assertBody(p1, 'json', 200, expected.slice(0, 2));
    const url = (page: number) => `${FIELDS}/index?access_token=${token}&per-page=2&page=${page}`;
    assertPage(p1, {
      total: 3,
      pages: 2,
      page: 1,
      perPage: 2,
      link: [
        [url(1), 'self'],
        [url(2), 'next'],
        [url(2), 'last'],
      ],
    });
    for (const wire of WIRES) {
      const p2 = await call(ctx.app, { path: `${FIELDS}/index`, token: demo.token, query: 'per-page=2&page=2', wire });
      assertBody(p2, wire, 200, expected.slice(2));
    }
    const p2 = await call(ctx.app, { path: `${FIELDS}/index`, token: demo.token, query: 'per-page=2&page=9' });
    assertBody(p2, 'json', 200, expected.slice(2));
    assertPage(p2, {
      total: 3,
      pages: 2,
      page: 2,
      perPage: 2,
      link: [
        [url(2), 'self'],
        [url(1), 'first'],
        [url(1), 'prev'],
      ],
    });
    // per-page=1, page 2: the middle field with exactly its entries.
    assertBody(
      await call(ctx.app, { path: `${FIELDS}/index`, token: demo.token, query: 'per-page=1&page=2' }),
      'json',
      200,
      expected.slice(1, 2),
    );

    // The other account sees its own three fields, none of A's ids.
    const otherRes = await call(ctx.app, { path: `${FIELDS}/index`, token: other.token });
    assertBody(otherRes, 'json', 200, await fieldsFromDb(ctx, other.account.id));
    const otherIds = (JSON.parse(otherRes.body) as { Id: number }[]).map((f) => f.Id);
    assert.ok(otherIds.every((id) => !expected.some((f) => f.Id === id)));

    // An account without fields: an empty list, total 0, page count 0, current page 1.
    for (const id of otherIds)
      assert.equal(
        (await call(ctx.app, { method: 'DELETE', path: `${FIELDS}/delete`, token: other.token, query: `id=${id}` })).statusCode,
        204,
      );
    for (const wire of WIRES) {
      const empty = await call(ctx.app, { path: `${FIELDS}/index`, token: other.token, wire });
      assertBody(empty, wire, 200, []);
      if (isXml(wire)) assert.ok(empty.body.includes('<response/>'));
      const self = `${FIELDS}/index?access_token=${encodeURIComponent(other.token)}${wire === 'xml-param' ? '&_format=xml' : ''}&page=1`;
      assertPage(empty, { total: 0, pages: 0, page: 1, perPage: 100, link: [[self, 'self']] });
    }
    // A's list did not change.
    assertBody(await call(ctx.app, { path: `${FIELDS}/index`, token: demo.token }), 'json', 200, expected);
  },
);

storeTest(
  "custom-contact-fields/view: one field with its entries; 404 for unknown or another account's id; 400 for a missing or bad id",
  async () => {
    const ctx = await sharedApp();
    const demo = await ctx.seed('A');
    const other = await ctx.seed('B');
    for (const f of demo.customFields) {
      for (const wire of WIRES)
        assertBody(
          await call(ctx.app, { path: `${FIELDS}/view`, token: demo.token, query: `id=${f.Id}`, wire }),
          wire,
          200,
          await customFieldFromDb(ctx, f.Id),
        );
    }
    const head = await call(ctx.app, {
      method: 'HEAD',
      path: `${FIELDS}/view`,
      token: demo.token,
      query: `id=${demo.customFields[0]!.Id}`,
    });
    assert.equal(head.statusCode, 200);
    assert.equal(head.body, '');
    for (const wire of WIRES) {
      for (const id of [String(other.customFields[0]!.Id), String(UNUSED_ID), '0', '-3']) {
        assertError(
          await call(ctx.app, { path: `${FIELDS}/view`, token: demo.token, query: `id=${id}`, wire }),
          404,
          `Object not found: ${id}`,
          wire,
        );
      }
      assertError(await call(ctx.app, { path: `${FIELDS}/view`, token: demo.token, wire }), 400, 'Missing required parameters: id', wire);
      assertError(
        await call(ctx.app, { path: `${FIELDS}/view`, token: demo.token, query: 'id=1.5', wire }),
        400,
        'Invalid data received for parameter "id".',
        wire,
      );
    }
  },
);

storeTest('custom-contact-fields/create: 201, the record, Location to view; JSON, XML and a form body', async () => {
  const ctx = await sharedApp();
  const demo = await ctx.seed();
  let n = 0;
  for (const wire of WIRES) {
    n++;
    const before = nowSeconds();
    const res = await call(ctx.app, {
      method: 'POST',
      path: `${FIELDS}/create`,
      token: demo.token,
      wire,
      body: { fname: `Pet name ${n}`, ignored: 'x' },
    });
    assert.equal(res.statusCode, 201, res.body);
    const rows = await ctx.store.db
      .selectFrom('custom_fields')
      .selectAll()
      .where('account_id', '=', demo.account.id)
      .where('name', '=', `Pet name ${n}`)
      .execute();
    assert.equal(rows.length, 1);
    const row = rows[0]!;
    assert.equal(row.name_key, `pet name ${n}`);
    assert.ok(Number(row.created_at) >= before && Number(row.created_at) <= nowSeconds());
    assert.equal(Number(row.updated_at), Number(row.created_at));
    const expected = await customFieldFromDb(ctx, row.id);
    assert.deepEqual(expected.Value, []);
    assert.equal(expected.DateCreated, fmtTime(Number(row.created_at)));
    assertBody(res, wire, 201, expected);
    assert.equal(res.headers.location, `${INJECT_ORIGIN}${FIELDS}/view?id=${row.id}`);
    // The new field is served by view and index.
    assertBody(await call(ctx.app, { path: `${FIELDS}/view`, token: demo.token, query: `id=${row.id}` }), 'json', 200, expected);
  }
  assertBody(await call(ctx.app, { path: `${FIELDS}/index`, token: demo.token }), 'json', 200, await fieldsFromDb(ctx, demo.account.id));
  assert.equal((await fieldIdsOf(ctx, demo.account.id)).length, 6);

  // A form-urlencoded body; boundaries 3 and 64 characters (Unicode characters, not bytes).
  const form = await call(ctx.app, {
    method: 'POST',
    path: `${FIELDS}/create`,
    token: demo.token,
    rawBody: 'fname=Allergies',
    contentType: 'application/x-www-form-urlencoded',
  });
  assert.equal(form.statusCode, 201, form.body);
  assert.equal((JSON.parse(form.body) as { Name: string }).Name, 'Allergies');
  for (const fname of ['abc', 'жжж', long(64), long(64, '😀')]) {
    const res = await call(ctx.app, { method: 'POST', path: `${FIELDS}/create`, token: demo.token, body: { fname } });
    assert.equal(res.statusCode, 201, res.body);
    const body = JSON.parse(res.body) as { Id: number; Name: string };
    assert.equal(body.Name, fname);
    assert.equal(res.body, JSON.stringify(await customFieldFromDb(ctx, body.Id)));
  }
  // Only POST.
  const get = await call(ctx.app, { path: `${FIELDS}/create`, token: demo.token });
  assert.equal(get.statusCode, 405);
  assert.equal(get.headers.allow, 'POST');
});

storeTest(
  'custom-contact-fields/create: every rule, exact messages; the name is unique per account, case-insensitively, quoted as sent',
  async () => {
    const ctx = await sharedApp();
    const demo = await ctx.seed('A');
    const other = await ctx.seed('B');
    const blank = fieldError('fname', 'Fname cannot be blank.');
    const cases: RejectCase[] = [
      { name: 'empty object', body: {}, errors: [blank] },
      { name: 'empty body', rawBody: '', errors: [blank] },
      { name: 'JSON null', rawBody: 'null', errors: [blank] },
      { name: 'null', body: { fname: null }, errors: [blank] },
      { name: 'empty string', body: { fname: '' }, errors: [blank] },
      { name: 'whitespace', body: { fname: ' \t\n ' }, errors: [blank] },
      { name: 'empty array', body: { fname: [] }, errors: [blank] },
      { name: 'too short', body: { fname: 'ab' }, errors: [fieldError('fname', 'Fname should contain at least 3 characters.')] },
      { name: 'too short multibyte', body: { fname: 'жж' }, errors: [fieldError('fname', 'Fname should contain at least 3 characters.')] },
      { name: 'too long', body: { fname: long(65) }, errors: [fieldError('fname', 'Fname should contain at most 64 characters.')] },
      {
        name: 'too long emoji',
        body: { fname: long(65, '😀') },
        errors: [fieldError('fname', 'Fname should contain at most 64 characters.')],
      },
      { name: 'integer', body: { fname: 12345 }, errors: [fieldError('fname', 'Fname must be a string.')] },
      { name: 'array', body: { fname: ['Pets'] }, errors: [fieldError('fname', 'Fname must be a string.')] },
      { name: 'object', body: { fname: { a: 'Pets' } }, errors: [fieldError('fname', 'Fname must be a string.')] },
      {
        name: 'taken, same case',
        body: { fname: 'Favorite Color' },
        errors: [fieldError('fname', 'Fname "Favorite Color" has already been taken.')],
      },
      {
        name: 'taken, other case',
        body: { fname: 'Favorite COLOR' },
        errors: [fieldError('fname', 'Fname "Favorite COLOR" has already been taken.')],
      },
      {
        name: 'taken, lower case',
        body: { fname: 'loyalty tier' },
        errors: [fieldError('fname', 'Fname "loyalty tier" has already been taken.')],
      },
      {
        name: 'taken, mixed case',
        body: { fname: 'SHOE size' },
        errors: [fieldError('fname', 'Fname "SHOE size" has already been taken.')],
      },
    ];
    await expectRejected(ctx, demo, { path: `${FIELDS}/create`, query: '', method: 'POST' }, cases);

    // The other account may use a name that A has: B first frees its own "Favorite Color".
    const bColor = other.customFields[0]!;
    assert.equal(
      (await call(ctx.app, { method: 'POST', path: `${FIELDS}/create`, token: other.token, body: { fname: 'favorite color' } })).statusCode,
      422,
    );
    assert.equal(
      (await call(ctx.app, { method: 'DELETE', path: `${FIELDS}/delete`, token: other.token, query: `id=${bColor.Id}` })).statusCode,
      204,
    );
    const reused = await call(ctx.app, { method: 'POST', path: `${FIELDS}/create`, token: other.token, body: { fname: 'Favorite COLOR' } });
    assert.equal(reused.statusCode, 201, reused.body);
    assert.equal((JSON.parse(reused.body) as { Name: string }).Name, 'Favorite COLOR');
    // A name created in A is not taken in B, and the reverse.
    assert.equal(
      (await call(ctx.app, { method: 'POST', path: `${FIELDS}/create`, token: demo.token, body: { fname: 'Pets' } })).statusCode,
      201,
    );
    assert.equal(
      (await call(ctx.app, { method: 'POST', path: `${FIELDS}/create`, token: other.token, body: { fname: 'PETS' } })).statusCode,
      201,
    );
    assert422(await call(ctx.app, { method: 'POST', path: `${FIELDS}/create`, token: demo.token, body: { fname: 'pEtS' } }), [
      fieldError('fname', 'Fname "pEtS" has already been taken.'),
    ]);
  },
);

storeTest(
  'custom-contact-fields/create: concurrent creates of one name in different cases, exactly one wins (the unique index decides)',
  async () => {
    const ctx = await sharedApp();
    const demo = await ctx.seed();
    const names = ['Hobby', 'HOBBY', 'hobby', 'HoBbY', 'hobbY', 'Hobby'];
    const results = await Promise.all(
      names.map((fname) => call(ctx.app, { method: 'POST', path: `${FIELDS}/create`, token: demo.token, body: { fname } })),
    );
    const won = results.filter((r) => r.statusCode === 201);
    assert.equal(won.length, 1, results.map((r) => `${r.statusCode} ${r.body}`).join('\n'));
    for (const [i, r] of results.entries()) {
      if (r.statusCode === 201) continue;
      assert422(r, [fieldError('fname', `Fname "${names[i]}" has already been taken.`)]);
    }
    const rows = await ctx.store.db
      .selectFrom('custom_fields')
      .select('name')
      .where('account_id', '=', demo.account.id)
      .where('name_key', '=', 'hobby')
      .execute();
    assert.equal(rows.length, 1);
  },
);

storeTest(
  'custom-contact-fields/update: the name rule is case-insensitive and quotes the value as sent; keeping its own name in another case is fine',
  async () => {
    const ctx = await sharedApp();
    const demo = await ctx.seed('A');
    const other = await ctx.seed('B');
    const [color, tier] = demo.customFields.map((f) => f.Id) as [number, number];
    const cases: RejectCase[] = [
      {
        name: 'another field, other case',
        body: { fname: 'favorite COLOR' },
        errors: [fieldError('fname', 'Fname "favorite COLOR" has already been taken.')],
      },
      {
        name: 'another field, same case',
        body: { fname: 'Shoe Size' },
        errors: [fieldError('fname', 'Fname "Shoe Size" has already been taken.')],
      },
    ];
    await expectRejected(ctx, demo, { path: `${FIELDS}/update`, query: `id=${tier}`, method: 'PUT' }, cases);
    await expectRejected(ctx, demo, { path: `${FIELDS}/update`, query: `id=${tier}`, method: 'PATCH' }, cases, ['json']);
    // Its own name in another case: 200, the name changes, the key stays.
    for (const wire of WIRES) {
      const res = await call(ctx.app, {
        method: 'PUT',
        path: `${FIELDS}/update`,
        token: demo.token,
        query: `id=${color}`,
        wire,
        body: { fname: 'FAVORITE color' },
      });
      assertBody(res, wire, 200, await customFieldFromDb(ctx, color));
    }
    assert.equal((await customFieldFromDb(ctx, color)).Name, 'FAVORITE color');
    // Another account's names do not count.
    const renamed = await call(ctx.app, {
      method: 'PUT',
      path: `${FIELDS}/update`,
      token: other.token,
      query: `id=${other.customFields[1]!.Id}`,
      body: { fname: 'Pets' },
    });
    assert.equal(renamed.statusCode, 200, renamed.body);
    const a = await call(ctx.app, {
      method: 'PATCH',
      path: `${FIELDS}/update`,
      token: demo.token,
      query: `id=${tier}`,
      body: { fname: 'PETS' },
    });
    assert.equal(a.statusCode, 200, a.body);
    // Another account's field is a 404, before any 422.
    assertError(
      await call(ctx.app, {
        method: 'PUT',
        path: `${FIELDS}/update`,
        token: demo.token,
        query: `id=${other.customFields[0]!.Id}`,
        body: { fname: '' },
      }),
      404,
      `Object not found: ${other.customFields[0]!.Id}`,
    );
  },
);

storeTest(
  "custom-contact-fields/delete: 204 with an empty body; its entries go; 404 for unknown, already deleted or another account's id",
  async () => {
    const ctx = await sharedApp();
    const demo = await ctx.seed('A');
    const other = await ctx.seed('B');
    const [color, tier, shoe] = demo.customFields.map((f) => f.Id) as [number, number, number];
    const c0 = demo.contacts[0]!;
    assert.deepEqual(c0.CustomFieldIds, [color, tier]);
    const colorEntries = demo.customFields[0]!.Value.map((e) => e.Id);
    assert.ok(colorEntries.length > 10);
    const otherBefore = await snapshotAccount(ctx, other.account.id);

    for (const wire of WIRES) {
      const res = await call(ctx.app, {
        method: 'DELETE',
        path: `${FIELDS}/delete`,
        token: demo.token,
        query: `id=${wire === 'json' ? color : wire === 'xml' ? shoe : UNUSED_ID}`,
        wire,
      });
      if (wire === 'xml-param') {
        assertError(res, 404, `Object not found: ${UNUSED_ID}`, wire);
        continue;
      }
      assert.equal(res.statusCode, 204, res.body);
      assert.equal(res.body, '');
      assert.equal(res.headers['content-length'] ?? '0', '0');
      assert.equal(res.headers.location, undefined);
    }
    // The rows are gone, the entries of Favorite Color with them (foreign key cascade).
    assert.deepEqual(await fieldIdsOf(ctx, demo.account.id), [tier]);
    assert.equal(await entryCountOfField(ctx, color), 0);
    for (const id of colorEntries) {
      assertError(await call(ctx.app, { path: `${ENTRIES}/view`, token: demo.token, query: `id=${id}` }), 404, `Object not found: ${id}`);
    }
    assert.deepEqual((await contactFromDb(ctx, c0.Id)).CustomFieldIds, [tier]);
    const found = await call(ctx.app, { path: '/v1/contacts/find', token: demo.token, query: `number=${c0.Number}` });
    assert.deepEqual((JSON.parse(found.body) as { CustomFieldIds: number[] }).CustomFieldIds, [tier]);
    // The contacts stay.
    assert.equal((await ctx.store.db.selectFrom('contacts').select('id').where('account_id', '=', demo.account.id).execute()).length, 50);
    // Loyalty Tier's entries are untouched.
    assert.equal(await entryCountOfField(ctx, tier), demo.customFields[1]!.Value.length);

    for (const wire of WIRES) {
      // Already deleted, another account's, unknown: 404; view of a deleted field: 404.
      for (const id of [color, shoe, other.customFields[0]!.Id, UNUSED_ID]) {
        assertError(
          await call(ctx.app, { method: 'DELETE', path: `${FIELDS}/delete`, token: demo.token, query: `id=${id}`, wire }),
          404,
          `Object not found: ${id}`,
          wire,
        );
      }
      assertError(
        await call(ctx.app, { path: `${FIELDS}/view`, token: demo.token, query: `id=${color}`, wire }),
        404,
        `Object not found: ${color}`,
        wire,
      );
      assertError(
        await call(ctx.app, { method: 'DELETE', path: `${FIELDS}/delete`, token: demo.token, wire }),
        400,
        'Missing required parameters: id',
        wire,
      );
      assertError(
        await call(ctx.app, { method: 'DELETE', path: `${FIELDS}/delete`, token: demo.token, query: 'id=abc', wire }),
        400,
        'Invalid data received for parameter "id".',
        wire,
      );
    }
    assert.deepEqual(await snapshotAccount(ctx, other.account.id), otherBefore, "another account's data is untouched");
    const get = await call(ctx.app, { path: `${FIELDS}/delete`, token: demo.token, query: `id=${tier}` });
    assert.equal(get.statusCode, 405);
    assert.equal(get.headers.allow, 'DELETE');
    assert.deepEqual(await fieldIdsOf(ctx, demo.account.id), [tier]);
  },
);

// ================================================================== custom-contact-fields-entry

storeTest(
  'custom-contact-fields-entry/index: every entry by Id, JSON and XML; HEAD; pagination; filters frfield and frcontact',
  async () => {
    const ctx = await sharedApp();
    const demo = await ctx.seed('A');
    const other = await ctx.seed('B');
    const all = await entriesFromDb(ctx, demo.account.id);
    assert.equal(all.length, demo.customFieldEntries.length);
    assert.deepEqual(all, demo.customFieldEntries);
    const token = encodeURIComponent(demo.token);
    for (const wire of WIRES) assertBody(await call(ctx.app, { path: `${ENTRIES}/index`, token: demo.token, wire }), wire, 200, all);
    const head = await call(ctx.app, { method: 'HEAD', path: `${ENTRIES}/index`, token: demo.token });
    assert.equal(head.statusCode, 200);
    assert.equal(head.body, '');
    assertPage(head, {
      total: all.length,
      pages: 1,
      page: 1,
      perPage: 100,
      link: [[`${ENTRIES}/index?access_token=${token}&page=1`, 'self']],
    });

    // Pages of 7.
    const pages = Math.ceil(all.length / 7);
    const url = (q: string, page: number) => `${ENTRIES}/index?access_token=${token}&${q}page=${page}`;
    const p2 = await call(ctx.app, { path: `${ENTRIES}/index`, token: demo.token, query: 'per-page=7&page=2' });
    assertBody(p2, 'json', 200, all.slice(7, 14));
    assertPage(p2, {
      total: all.length,
      pages,
      page: 2,
      perPage: 7,
      link: [
        [url('per-page=7&', 2), 'self'],
        [url('per-page=7&', 1), 'first'],
        [url('per-page=7&', 1), 'prev'],
        [url('per-page=7&', 3), 'next'],
        [url('per-page=7&', pages), 'last'],
      ],
    });

    const [color, tier, shoe] = demo.customFields.map((f) => f.Id) as [number, number, number];
    const c0 = demo.contacts[0]!.Id;
    const c3 = demo.contacts[3]!.Id;
    const byColor = await entriesFromDb(ctx, demo.account.id, { field: color });
    assert.ok(byColor.length > 10);
    for (const wire of WIRES) {
      assertBody(await call(ctx.app, { path: `${ENTRIES}/index`, token: demo.token, query: `frfield=${color}`, wire }), wire, 200, byColor);
      assertBody(
        await call(ctx.app, { path: `${ENTRIES}/index`, token: demo.token, query: `frcontact=${c0}`, wire }),
        wire,
        200,
        await entriesFromDb(ctx, demo.account.id, { contact: c0 }),
      );
    }
    assert.equal((await entriesFromDb(ctx, demo.account.id, { contact: c0 })).length, 2);
    assertBody(
      await call(ctx.app, { path: `${ENTRIES}/index`, token: demo.token, query: `frfield=${tier}&frcontact=${c0}` }),
      'json',
      200,
      [entryOf(demo, 1, 0)],
    );
    assertBody(
      await call(ctx.app, { path: `${ENTRIES}/index`, token: demo.token, query: `frfield=%2B${color}&frcontact=${c3}` }),
      'json',
      200,
      [entryOf(demo, 0, 3)],
    );
    assertBody(
      await call(ctx.app, { path: `${ENTRIES}/index`, token: demo.token, query: `frfield=${tier}&frcontact=${c3}` }),
      'json',
      200,
      [],
    );
    assertBody(await call(ctx.app, { path: `${ENTRIES}/index`, token: demo.token, query: `frfield=${shoe}` }), 'json', 200, []);
    // A filtered page: the headers count the filtered rows, Link keeps the filter.
    const fp = await call(ctx.app, { path: `${ENTRIES}/index`, token: demo.token, query: `frfield=${color}&per-page=5&page=2` });
    assertBody(fp, 'json', 200, byColor.slice(5, 10));
    const fpages = Math.ceil(byColor.length / 5);
    const furl = (page: number) => url(`frfield=${color}&per-page=5&`, page);
    assertPage(fp, {
      total: byColor.length,
      pages: fpages,
      page: 2,
      perPage: 5,
      link: [
        [furl(2), 'self'],
        [furl(1), 'first'],
        [furl(1), 'prev'],
        [furl(3), 'next'],
        [furl(fpages), 'last'],
      ],
    });
    // An empty filter value is no filter.
    assertBody(await call(ctx.app, { path: `${ENTRIES}/index`, token: demo.token, query: 'frfield=&frcontact=' }), 'json', 200, all);

    // Another account's ids, or ids no row can have: an empty list.
    for (const q of [
      `frfield=${other.customFields[0]!.Id}`,
      `frcontact=${other.contacts[0]!.Id}`,
      `frfield=${UNUSED_ID}`,
      'frfield=0',
      'frcontact=-4',
      'frfield=9223372036854775807',
    ]) {
      for (const wire of WIRES) {
        const res = await call(ctx.app, { path: `${ENTRIES}/index`, token: demo.token, query: q, wire });
        assertBody(res, wire, 200, []);
        if (wire === 'json') assert.equal(res.headers['x-pagination-total-count'], '0');
      }
    }
    // Not integers: 422 on the field, in the negotiated format.
    const notInt = (f: string, label: string) => fieldError(f, `${label} must be an integer.`);
    for (const wire of WIRES) {
      assert422(
        await call(ctx.app, { path: `${ENTRIES}/index`, token: demo.token, query: 'frfield=abc', wire }),
        [notInt('frfield', 'Frfield')],
        wire,
      );
      assert422(
        await call(ctx.app, { path: `${ENTRIES}/index`, token: demo.token, query: 'frcontact=1.5', wire }),
        [notInt('frcontact', 'Frcontact')],
        wire,
      );
      assert422(
        await call(ctx.app, { path: `${ENTRIES}/index`, token: demo.token, query: 'frfield=1x&frcontact=%201', wire }),
        [notInt('frfield', 'Frfield'), notInt('frcontact', 'Frcontact')],
        wire,
      );
      assert422(
        await call(ctx.app, { path: `${ENTRIES}/index`, token: demo.token, query: `frfield[]=${color}`, wire }),
        [notInt('frfield', 'Frfield')],
        wire,
      );
      // Beyond 64 bits (API.md §4.5).
      assert422(
        await call(ctx.app, { path: `${ENTRIES}/index`, token: demo.token, query: 'frcontact=9223372036854775808', wire }),
        [notInt('frcontact', 'Frcontact')],
        wire,
      );
    }
    const bad = await call(ctx.app, { path: `${ENTRIES}/index`, token: demo.token, query: 'frfield=abc' });
    assert.equal(bad.headers['x-pagination-total-count'], undefined);
    assert.equal(bad.headers.link, undefined);
    // Only the account's own entries, never B's.
    assertBody(
      await call(ctx.app, { path: `${ENTRIES}/index`, token: other.token }),
      'json',
      200,
      await entriesFromDb(ctx, other.account.id),
    );
  },
);

storeTest("custom-contact-fields-entry/view: one entry; 404 for unknown or another account's id; 400 for a missing or bad id", async () => {
  const ctx = await sharedApp();
  const demo = await ctx.seed('A');
  const other = await ctx.seed('B');
  const e = demo.customFieldEntries[4]!;
  for (const wire of WIRES) {
    assertBody(
      await call(ctx.app, { path: `${ENTRIES}/view`, token: demo.token, query: `id=${e.Id}`, wire }),
      wire,
      200,
      await entryFromDb(ctx, e.Id),
    );
    for (const id of [String(other.customFieldEntries[0]!.Id), String(UNUSED_ID), '0']) {
      assertError(
        await call(ctx.app, { path: `${ENTRIES}/view`, token: demo.token, query: `id=${id}`, wire }),
        404,
        `Object not found: ${id}`,
        wire,
      );
    }
    assertError(await call(ctx.app, { path: `${ENTRIES}/view`, token: demo.token, wire }), 400, 'Missing required parameters: id', wire);
    assertError(
      await call(ctx.app, { path: `${ENTRIES}/view`, token: demo.token, query: 'id=x', wire }),
      400,
      'Invalid data received for parameter "id".',
      wire,
    );
  }
  assert.deepEqual(await entryFromDb(ctx, e.Id), e);
});

storeTest(
  'custom-contact-fields-entry/create: 201, the record, Location to view; quoted integers; the contact and field show it',
  async () => {
    const ctx = await sharedApp();
    const demo = await ctx.seed();
    const shoe = demo.customFields[2]!.Id;
    const tier = demo.customFields[1]!.Id;
    let i = 0;
    for (const wire of WIRES) {
      const contact = demo.contacts[++i]!.Id; // contacts 1..3: no Shoe Size entry yet
      const had = demo.contacts[i]!.CustomFieldIds;
      const res = await call(ctx.app, {
        method: 'POST',
        path: `${ENTRIES}/create`,
        token: demo.token,
        wire,
        body: { frfield: shoe, frcontact: String(contact), fvalue: `4${i} & <b>`, other: 1 },
      });
      assert.equal(res.statusCode, 201, res.body);
      const row = await ctx.store.db
        .selectFrom('custom_field_entries')
        .selectAll()
        .where('custom_field_id', '=', shoe)
        .where('contact_id', '=', contact)
        .executeTakeFirstOrThrow();
      assert.equal(row.account_id, demo.account.id);
      assert.equal(row.entry, `4${i} & <b>`);
      assert.equal(Number(row.updated_at), Number(row.created_at));
      assertBody(res, wire, 201, await entryFromDb(ctx, row.id));
      assert.equal(res.headers.location, `${INJECT_ORIGIN}${ENTRIES}/view?id=${row.id}`);
      assertBody(
        await call(ctx.app, { path: `${ENTRIES}/view`, token: demo.token, query: `id=${row.id}` }),
        'json',
        200,
        await entryFromDb(ctx, row.id),
      );
      assert.deepEqual((await contactFromDb(ctx, contact)).CustomFieldIds, [...had, shoe]);
    }
    // Quoted integers with a sign or leading zeros; a form body.
    const c5 = demo.contacts[5]!.Id;
    const quoted = await call(ctx.app, {
      method: 'POST',
      path: `${ENTRIES}/create`,
      token: demo.token,
      body: { frfield: `+${tier}`, frcontact: `00${c5}`, fvalue: 'Gold' },
    });
    assert.equal(quoted.statusCode, 201, quoted.body);
    const q = JSON.parse(quoted.body) as { Id: number; CustomFieldId: number; PhoneNumberId: number; Entry: string };
    assert.deepEqual([q.CustomFieldId, q.PhoneNumberId, q.Entry], [tier, c5, 'Gold']);
    const c6 = demo.contacts[6]!.Id;
    const form = await call(ctx.app, {
      method: 'POST',
      path: `${ENTRIES}/create`,
      token: demo.token,
      rawBody: `frfield=${tier}&frcontact=${c6}&fvalue=Silver+%26+more`,
      contentType: 'application/x-www-form-urlencoded',
    });
    assert.equal(form.statusCode, 201, form.body);
    assert.equal((JSON.parse(form.body) as { Entry: string }).Entry, 'Silver & more');
    // Boundaries: 255 characters, multibyte.
    for (const [k, fvalue] of [long(255), long(255, 'ж'), long(255, '😀')].entries()) {
      const res = await call(ctx.app, {
        method: 'POST',
        path: `${ENTRIES}/create`,
        token: demo.token,
        body: { frfield: shoe, frcontact: demo.contacts[10 + k]!.Id, fvalue },
      });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal((JSON.parse(res.body) as { Entry: string }).Entry, fvalue);
    }
    // The field's Value lists the new entries.
    const field = await call(ctx.app, { path: `${FIELDS}/view`, token: demo.token, query: `id=${shoe}` });
    assert.equal(field.body, JSON.stringify(await customFieldFromDb(ctx, shoe)));
    assert.equal((JSON.parse(field.body) as { Value: unknown[] }).Value.length, 6);
    const get = await call(ctx.app, { path: `${ENTRIES}/create`, token: demo.token });
    assert.equal(get.statusCode, 405);
    assert.equal(get.headers.allow, 'POST');
  },
);

storeTest(
  "custom-contact-fields-entry/create: every rule, exact messages and order; another account's field or contact is invalid; nothing changes",
  async () => {
    const ctx = await sharedApp();
    const demo = await ctx.seed('A');
    const other = await ctx.seed('B');
    const field = demo.customFields[2]!.Id; // Shoe Size: no entries
    const contact = demo.contacts[6]!.Id;
    const ok = { frfield: field, frcontact: contact, fvalue: 'Green' };
    const blank = (f: string, label: string) => fieldError(f, `${label} cannot be blank.`);
    const notInt = (f: string, label: string) => fieldError(f, `${label} must be an integer.`);
    const fieldInvalid = fieldError('frfield', 'Frfield is invalid.');
    const contactInvalid = fieldError('frcontact', 'Frcontact is invalid.');
    const allBlank = [blank('frfield', 'Frfield'), blank('frcontact', 'Frcontact'), blank('fvalue', 'Fvalue')];
    const cases: RejectCase[] = [
      { name: 'empty object', body: {}, errors: allBlank },
      { name: 'empty body', rawBody: '', errors: allBlank },
      { name: 'JSON null', rawBody: 'null', errors: allBlank },
      { name: 'missing frfield', body: { frcontact: contact, fvalue: 'x' }, errors: [blank('frfield', 'Frfield')] },
      { name: 'missing frcontact', body: { frfield: field, fvalue: 'x' }, errors: [blank('frcontact', 'Frcontact')] },
      { name: 'missing fvalue', body: { frfield: field, frcontact: contact }, errors: [blank('fvalue', 'Fvalue')] },
      { name: 'whitespace fvalue', body: { ...ok, fvalue: ' \t' }, errors: [blank('fvalue', 'Fvalue')] },
      { name: 'frfield "12a"', body: { ...ok, frfield: '12a' }, errors: [notInt('frfield', 'Frfield')] },
      { name: 'frfield 1.5', body: { ...ok, frfield: 1.5 }, errors: [notInt('frfield', 'Frfield')] },
      { name: 'frfield true', body: { ...ok, frfield: true }, errors: [notInt('frfield', 'Frfield')] },
      { name: 'frcontact " 7"', body: { ...ok, frcontact: ` ${contact}` }, errors: [notInt('frcontact', 'Frcontact')] },
      { name: 'frcontact [7]', body: { ...ok, frcontact: [contact] }, errors: [notInt('frcontact', 'Frcontact')] },
      {
        name: 'fvalue 256 chars',
        body: { ...ok, fvalue: long(256) },
        errors: [fieldError('fvalue', 'Fvalue should contain at most 255 characters.')],
      },
      {
        name: 'fvalue 256 emoji',
        body: { ...ok, fvalue: long(256, '😀') },
        errors: [fieldError('fvalue', 'Fvalue should contain at most 255 characters.')],
      },
      { name: 'fvalue integer', body: { ...ok, fvalue: 42 }, errors: [fieldError('fvalue', 'Fvalue must be a string.')] },
      { name: 'unknown frfield', body: { ...ok, frfield: UNUSED_ID }, errors: [fieldInvalid] },
      { name: 'frfield 0', body: { ...ok, frfield: 0 }, errors: [fieldInvalid] },
      { name: 'frfield -1', body: { ...ok, frfield: '-1' }, errors: [fieldInvalid] },
      { name: "another account's field", body: { ...ok, frfield: other.customFields[2]!.Id }, errors: [fieldInvalid] },
      { name: "another account's contact", body: { ...ok, frcontact: String(other.contacts[6]!.Id) }, errors: [contactInvalid] },
      {
        name: 'both of another account',
        body: { ...ok, frfield: other.customFields[0]!.Id, frcontact: other.contacts[0]!.Id },
        errors: [fieldInvalid, contactInvalid],
      },
      {
        name: 'unknown frfield, frcontact not integer',
        body: { ...ok, frfield: UNUSED_ID, frcontact: 'x' },
        errors: [notInt('frcontact', 'Frcontact'), fieldInvalid],
      },
      {
        name: 'fvalue too long, unknown contact',
        body: { ...ok, frcontact: UNUSED_ID, fvalue: long(300) },
        errors: [fieldError('fvalue', 'Fvalue should contain at most 255 characters.'), contactInvalid],
      },
    ];
    await expectRejected(ctx, demo, { path: `${ENTRIES}/create`, query: '', method: 'POST' }, cases);
    // B's data did not change either.
    assert.equal((await entriesFromDb(ctx, other.account.id)).length, other.customFieldEntries.length);
  },
);

storeTest(
  'custom-contact-fields-entry/create: one entry per field and contact; the combination message quotes the values as sent',
  async () => {
    const ctx = await sharedApp();
    const demo = await ctx.seed();
    const color = demo.customFields[0]!.Id;
    const c0 = demo.contacts[0]!.Id;
    const combo = (f: string, c: string) => [
      fieldError('frfield', `The combination "${f}"-"${c}" of Frfield and Frcontact has already been taken.`),
    ];
    const cases: RejectCase[] = [
      { name: 'JSON integers', body: { frfield: color, frcontact: c0, fvalue: 'Red' }, errors: combo(String(color), String(c0)) },
      { name: 'signed string', body: { frfield: `+${color}`, frcontact: c0, fvalue: 'Red' }, errors: combo(`+${color}`, String(c0)) },
      {
        name: 'leading zeros',
        body: { frfield: String(color), frcontact: `00${c0}`, fvalue: 'Red' },
        errors: combo(String(color), `00${c0}`),
      },
      {
        name: 'sign and zeros',
        body: { frfield: `+0${color}`, frcontact: `+0${c0}`, fvalue: 'Red' },
        errors: combo(`+0${color}`, `+0${c0}`),
      },
      // Every field reports its first error: the pair is reported next to a failing fvalue.
      {
        name: 'with a bad fvalue',
        body: { frfield: `+${color}`, frcontact: c0, fvalue: long(256) },
        errors: [fieldError('fvalue', 'Fvalue should contain at most 255 characters.'), ...combo(`+${color}`, String(c0))],
      },
    ];
    await expectRejected(ctx, demo, { path: `${ENTRIES}/create`, query: '', method: 'POST' }, cases);
    // "1\n" is an integer (API.md §4.5) and is quoted with its newline (JSON only: the XML
    // layout check wants the document on one line).
    const newline: RejectCase = {
      name: 'trailing newline',
      body: { frfield: `${color}\n`, frcontact: c0, fvalue: 'Red' },
      errors: combo(`${color}\n`, String(c0)),
    };
    await expectRejected(ctx, demo, { path: `${ENTRIES}/create`, query: '', method: 'POST' }, [newline], ['json']);
    // A form body sends strings: quoted as written.
    const form = await call(ctx.app, {
      method: 'POST',
      path: `${ENTRIES}/create`,
      token: demo.token,
      rawBody: `frfield=%2B${color}&frcontact=0${c0}&fvalue=x`,
      contentType: 'application/x-www-form-urlencoded',
    });
    assert422(form, combo(`+${color}`, `0${c0}`));

    // Concurrent creates of one free pair: exactly one wins, the others get the combination message.
    const shoe = demo.customFields[2]!.Id;
    const c1 = demo.contacts[1]!.Id;
    const sent = [shoe, `+${shoe}`, String(shoe), `0${shoe}`, shoe];
    const results = await Promise.all(
      sent.map((frfield, k) =>
        call(ctx.app, { method: 'POST', path: `${ENTRIES}/create`, token: demo.token, body: { frfield, frcontact: c1, fvalue: `v${k}` } }),
      ),
    );
    assert.equal(results.filter((r) => r.statusCode === 201).length, 1, results.map((r) => `${r.statusCode} ${r.body}`).join('\n'));
    for (const [k, r] of results.entries()) if (r.statusCode !== 201) assert422(r, combo(String(sent[k]), String(c1)));
    assert.equal((await entriesFromDb(ctx, demo.account.id, { field: shoe, contact: c1 })).length, 1);
  },
);

storeTest('custom-contact-fields-entry/update: the combination message quotes the values as sent', async () => {
  const ctx = await sharedApp();
  const demo = await ctx.seed();
  const color = demo.customFields[0]!.Id;
  const c0 = demo.contacts[0]!.Id;
  const tierOfC0 = entryOf(demo, 1, 0);
  const combo = (f: string, c: string) => [
    fieldError('frfield', `The combination "${f}"-"${c}" of Frfield and Frcontact has already been taken.`),
  ];
  const cases: RejectCase[] = [
    { name: 'signed frfield', body: { frfield: `+${color}`, frcontact: c0, fvalue: 'Gold' }, errors: combo(`+${color}`, String(c0)) },
    {
      name: 'zero-padded frcontact',
      body: { frfield: color, frcontact: `0${c0}`, fvalue: 'Gold' },
      errors: combo(String(color), `0${c0}`),
    },
  ];
  for (const method of ['POST', 'PUT', 'PATCH'] as const)
    await expectRejected(
      ctx,
      demo,
      { path: `${ENTRIES}/update`, query: `id=${tierOfC0.Id}`, method: method },
      cases,
      method === 'POST' ? WIRES : ['json'],
    );
});

storeTest(
  'custom-contact-fields-entry/delete: 204 with an empty body; the contact and field no longer show it; 404 otherwise',
  async () => {
    const ctx = await sharedApp();
    const demo = await ctx.seed('A');
    const other = await ctx.seed('B');
    const color = demo.customFields[0]!.Id;
    const tier = demo.customFields[1]!.Id;
    const c0 = demo.contacts[0]!;
    const colorOfC0 = entryOf(demo, 0, 0);
    const tierOfC0 = entryOf(demo, 1, 0);
    const otherBefore = await snapshotAccount(ctx, other.account.id);
    for (const [wire, e] of [
      ['json', colorOfC0],
      ['xml', tierOfC0],
    ] as const) {
      const res = await call(ctx.app, { method: 'DELETE', path: `${ENTRIES}/delete`, token: demo.token, query: `id=${e.Id}`, wire });
      assert.equal(res.statusCode, 204, res.body);
      assert.equal(res.body, '');
      assert.equal(await ctx.store.db.selectFrom('custom_field_entries').select('id').where('id', '=', e.Id).executeTakeFirst(), undefined);
    }
    assert.deepEqual((await contactFromDb(ctx, c0.Id)).CustomFieldIds, []);
    const colorField = await customFieldFromDb(ctx, color);
    assert.equal(colorField.Value.length, demo.customFields[0]!.Value.length - 1);
    assert.equal(
      (await call(ctx.app, { path: `${FIELDS}/view`, token: demo.token, query: `id=${color}` })).body,
      JSON.stringify(colorField),
    );
    assert.equal((await customFieldFromDb(ctx, tier)).Value.length, demo.customFields[1]!.Value.length - 1);
    for (const wire of WIRES) {
      for (const id of [colorOfC0.Id, other.customFieldEntries[0]!.Id, UNUSED_ID]) {
        assertError(
          await call(ctx.app, { method: 'DELETE', path: `${ENTRIES}/delete`, token: demo.token, query: `id=${id}`, wire }),
          404,
          `Object not found: ${id}`,
          wire,
        );
      }
      assertError(
        await call(ctx.app, { path: `${ENTRIES}/view`, token: demo.token, query: `id=${tierOfC0.Id}`, wire }),
        404,
        `Object not found: ${tierOfC0.Id}`,
        wire,
      );
      assertError(
        await call(ctx.app, { method: 'DELETE', path: `${ENTRIES}/delete`, token: demo.token, wire }),
        400,
        'Missing required parameters: id',
        wire,
      );
    }
    assert.deepEqual(await snapshotAccount(ctx, other.account.id), otherBefore);
    // The pair is free again: create takes it.
    const again = await call(ctx.app, {
      method: 'POST',
      path: `${ENTRIES}/create`,
      token: demo.token,
      body: { frfield: color, frcontact: c0.Id, fvalue: 'Blue' },
    });
    assert.equal(again.statusCode, 201, again.body);
    const post = await call(ctx.app, { method: 'POST', path: `${ENTRIES}/delete`, token: demo.token, query: `id=${tierOfC0.Id}` });
    assert.equal(post.statusCode, 405);
    assert.equal(post.headers.allow, 'DELETE');
  },
);

storeTest('Idempotency-Key is checked on both creates and on the entry update (a POST): an empty key is a 400', async () => {
  const ctx = await sharedApp();
  const demo = await ctx.seed();
  const entry = demo.customFieldEntries[0]!;
  const requests = [
    { url: `${FIELDS}/create`, body: { fname: 'Pets' } },
    { url: `${ENTRIES}/create`, body: { frfield: demo.customFields[2]!.Id, frcontact: demo.contacts[0]!.Id, fvalue: 'x' } },
    { url: `${ENTRIES}/update?id=${entry.Id}`, body: { frfield: entry.CustomFieldId, frcontact: entry.PhoneNumberId, fvalue: 'y' } },
  ];
  const before = await snapshotAccount(ctx, demo.account.id);
  for (const r of requests) {
    const sep = r.url.includes('?') ? '&' : '?';
    const res = await ctx.app.inject({
      method: 'POST',
      url: `${r.url}${sep}access_token=${encodeURIComponent(demo.token)}`,
      headers: { accept: 'application/json', 'content-type': 'application/json', 'idempotency-key': '' },
      payload: JSON.stringify(r.body),
    });
    assert.equal(res.statusCode, 400, `${r.url}: ${res.body}`);
  }
  assert.deepEqual(await snapshotAccount(ctx, demo.account.id), before);
});

storeTest(
  'Idempotency-Key on the creates: the same key and request replays the first 201 (body and Location), nothing is created twice',
  async () => {
    const ctx = await sharedApp();
    const demo = await ctx.seed();
    const post = (url: string, body: unknown, key: string) =>
      ctx.app.inject({
        method: 'POST',
        url: `${url}?access_token=${encodeURIComponent(demo.token)}`,
        headers: { accept: 'application/json', 'content-type': 'application/json', 'idempotency-key': key },
        payload: JSON.stringify(body),
      });
    const fieldBody = { fname: 'Newsletter topic' };
    const entryBody = { frfield: demo.customFields[2]!.Id, frcontact: demo.contacts[0]!.Id, fvalue: '44' };
    for (const [url, body] of [
      [`${FIELDS}/create`, fieldBody],
      [`${ENTRIES}/create`, entryBody],
    ] as const) {
      const first = await post(url, body, `key-${url}`);
      assert.equal(first.statusCode, 201, first.body);
      const again = await post(url, body, `key-${url}`);
      assert.equal(again.statusCode, 201, again.body);
      assert.equal(again.body, first.body);
      assert.equal(again.headers.location, first.headers.location);
      assert.equal(again.headers['idempotent-replayed'], 'true');
    }
    assert.equal(
      (
        await ctx.store.db
          .selectFrom('custom_fields')
          .select('id')
          .where('account_id', '=', demo.account.id)
          .where('name', '=', 'Newsletter topic')
          .execute()
      ).length,
      1,
    );
    assert.equal((await entriesFromDb(ctx, demo.account.id, { field: demo.customFields[2]!.Id })).length, 1);
  },
);
