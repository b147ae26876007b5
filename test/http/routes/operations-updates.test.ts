/**
 * groups/update, custom-contact-fields/update and custom-contact-fields-entry/update: responses in
 * JSON and XML, every validation rule with its exact API.md §4.4 message and order, derived
 * arrays, persistence, and "a failed write changes nothing".
 */
import assert from 'node:assert/strict';
import type { DemoAccount } from '../../../src/domain/demo.ts';
import { buildTestApp } from '../../helpers/app.ts';
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
  groupFromDb,
  nowSeconds,
  type RejectCase,
  snapshotAccount,
  TIMESTAMP,
  UNUSED_ID,
  type Wire,
  WIRES,
  XML_DECL,
} from '../../helpers/operations.ts';
import { storeTest } from '../../helpers/stores.ts';

const long = (n: number, ch = 'a') => ch.repeat(n);

// ------------------------------------------------------------------ groups/update

storeTest('groups/update renames a group and changes its note (PUT and PATCH, JSON and XML)', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const group = demo.groups[0]!; // Newsletter: 25 members
  assert.equal(group.PhoneNumberIds.length, 25);
  let n = 0;
  for (const method of ['PUT', 'PATCH'] as const) {
    for (const wire of WIRES) {
      n++;
      const before = nowSeconds();
      const res = await call(ctx.app, {
        method,
        path: '/v1/groups/update',
        token: demo.token,
        query: `id=${group.Id}`,
        wire,
        body: { fname: `Renamed ${n}`, fnote: `Note number ${n}` },
      });
      const after = nowSeconds();
      const stored = await groupFromDb(ctx, group.Id);
      assert.equal(stored.Name, `Renamed ${n}`, 'the write is persisted');
      assert.equal(stored.Note, `Note number ${n}`);
      assert.equal(stored.DateCreated, group.DateCreated, 'DateCreated does not change');
      const row = await ctx.store.db.selectFrom('groups').select('updated_at').where('id', '=', group.Id).executeTakeFirstOrThrow();
      assert.ok(Number(row.updated_at) >= before && Number(row.updated_at) <= after, 'DateUpdated is the time of the write');
      assert.deepEqual(stored.PhoneNumberIds, group.PhoneNumberIds, 'members are untouched');
      assertBody(res, wire, 200, stored);
    }
  }
  // Literal wire text of the last one (XML via _format) and a JSON one.
  const json = await call(ctx.app, {
    method: 'PUT',
    path: '/v1/groups/update',
    token: demo.token,
    query: `id=${group.Id}`,
    body: { fname: 'News & <Offers>', fnote: 'Ünïcödé nöte' },
  });
  const g = await groupFromDb(ctx, group.Id);
  assert.equal(
    json.body,
    `{"Id":${group.Id},"Name":"News & <Offers>","Note":"Ünïcödé nöte","KeywordId":0,"ParentId":0,"DateCreated":"${group.DateCreated}","DateUpdated":"${g.DateUpdated}",` +
      `"PhoneNumberIds":[${group.PhoneNumberIds.join(',')}]}`,
  );
  assert.match(g.DateUpdated, TIMESTAMP);
  const xml = await call(ctx.app, {
    method: 'PATCH',
    path: '/v1/groups/update',
    token: demo.token,
    query: `id=${group.Id}`,
    wire: 'xml',
    body: { fname: 'News & <Offers>' },
  });
  const g2 = await groupFromDb(ctx, group.Id);
  assert.equal(
    xml.body,
    `${XML_DECL}\n<response><Id>${group.Id}</Id><Name>News &amp; &lt;Offers&gt;</Name><Note>Ünïcödé nöte</Note><KeywordId>0</KeywordId><ParentId>0</ParentId>` +
      `<DateCreated>${group.DateCreated}</DateCreated><DateUpdated>${g2.DateUpdated}</DateUpdated>` +
      `<PhoneNumberIds>${group.PhoneNumberIds.map((id) => `<item>${id}</item>`).join('')}</PhoneNumberIds></response>\n`,
  );
});

storeTest('groups/update: PhoneNumberIds and ParentId come from the data; an empty group shows <PhoneNumberIds/>', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  for (const group of demo.groups) {
    const res = await call(ctx.app, {
      method: 'PUT',
      path: '/v1/groups/update',
      token: demo.token,
      query: `id=${group.Id}`,
      body: { fname: group.Name },
    });
    assert.equal(res.statusCode, 200);
    const body = JSON.parse(res.body) as typeof group;
    const members = await ctx.store.db
      .selectFrom('group_members')
      .select('contact_id')
      .where('group_id', '=', group.Id)
      .orderBy('contact_id')
      .execute();
    assert.deepEqual(
      body.PhoneNumberIds,
      members.map((m) => m.contact_id),
      group.Name,
    );
    assert.equal(body.ParentId, group.ParentId);
  }
  // Membership rule of the demo (contact i is in Newsletter when i is even): independent of the server.
  assert.deepEqual(
    demo.groups[0]!.PhoneNumberIds,
    demo.contacts.filter((_, i) => i % 2 === 0).map((c) => c.Id),
  );
  assert.equal(demo.groups[1]!.ParentId, demo.groups[0]!.Id);
  const empty = demo.groups[4]!;
  assert.equal(empty.Name, 'Empty Group');
  for (const wire of ['xml', 'xml-param'] as const) {
    const res = await call(ctx.app, {
      method: 'PUT',
      path: '/v1/groups/update',
      token: demo.token,
      query: `id=${empty.Id}`,
      wire,
      body: { fname: 'Still empty', fnote: 'nobody' },
    });
    const g = await groupFromDb(ctx, empty.Id);
    assertBody(res, wire, 200, g);
    assert.ok(res.body.endsWith(`<DateUpdated>${g.DateUpdated}</DateUpdated><PhoneNumberIds/></response>\n`), res.body);
  }
  const json = await call(ctx.app, {
    method: 'PUT',
    path: '/v1/groups/update',
    token: demo.token,
    query: `id=${empty.Id}`,
    body: { fname: 'Still empty' },
  });
  assert.ok(json.body.endsWith('"PhoneNumberIds":[]}'), json.body);
});

storeTest('groups/update: fnote is optional and its absence keeps the old note; unknown keys are ignored', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const group = demo.groups[2]!;
  const res = await call(ctx.app, {
    method: 'PUT',
    path: '/v1/groups/update',
    token: demo.token,
    query: `id=${group.Id}`,
    body: { fname: 'Only the name', Name: 'ignored', note: 'ignored', id: 1, Keyword: 9 },
  });
  // KeywordId and ParentId are fields of update since API.md §10.3; `Keyword` is not a field.
  assert.equal(res.statusCode, 200, res.body);
  const stored = await groupFromDb(ctx, group.Id);
  assert.equal(stored.Name, 'Only the name');
  assert.equal(stored.Note, 'In-store events & workshops', 'absent fnote keeps the old note');
  assert.equal(stored.KeywordId, 0);
  assert.equal(stored.Id, group.Id);
  assert.equal(res.body, JSON.stringify(stored));
  // XML escapes the kept note's ampersand.
  const xml = await call(ctx.app, {
    method: 'PUT',
    path: '/v1/groups/update',
    token: demo.token,
    query: `id=${group.Id}`,
    wire: 'xml',
    body: { fname: 'Only the name' },
  });
  assert.ok(xml.body.includes('<Note>In-store events &amp; workshops</Note>'), xml.body);
});

storeTest('groups/update: fnote sent "" or null is stored "" (JSON and form, JSON and XML answers)', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const group = demo.groups[2]!;
  const cases: { body?: Record<string, unknown>; rawBody?: string }[] = [
    { body: { fname: 'Blank note', fnote: '' } },
    { body: { fname: 'Blank note', fnote: null } },
    { rawBody: 'fname=Blank+note&fnote=' },
  ];
  for (const wire of WIRES) {
    for (const c of cases) {
      await ctx.store.db.updateTable('groups').set({ note: 'In-store events & workshops' }).where('id', '=', group.Id).execute();
      const res = await call(ctx.app, {
        method: 'PUT',
        path: '/v1/groups/update',
        token: demo.token,
        query: `id=${group.Id}`,
        wire,
        ...(c.rawBody ? { rawBody: c.rawBody, contentType: 'application/x-www-form-urlencoded' } : { body: c.body }),
      });
      const stored = await groupFromDb(ctx, group.Id);
      assert.equal(stored.Note, '', `${JSON.stringify(c)} clears the note`);
      assert.equal(stored.Name, 'Blank note');
      assertBody(res, wire, 200, stored);
    }
  }
});

storeTest('groups/update: a form-urlencoded body is accepted (API.md §3.2)', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const group = demo.groups[3]!;
  const res = await call(ctx.app, {
    method: 'PUT',
    path: '/v1/groups/update',
    token: demo.token,
    query: `id=${group.Id}`,
    rawBody: 'fname=Form+name&fnote=Form%20note',
    contentType: 'application/x-www-form-urlencoded',
  });
  assert.equal(res.statusCode, 200, res.body);
  const stored = await groupFromDb(ctx, group.Id);
  assert.equal(stored.Name, 'Form name');
  assert.equal(stored.Note, 'Form note');
});

storeTest('groups/update: every validation rule, exact messages and field order; nothing changes', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const id = demo.groups[1]!.Id;
  const blank = fieldError('fname', 'Fname cannot be blank.');
  const tooShort = fieldError('fname', 'Fname should contain at least 3 characters.');
  const tooLong = fieldError('fname', 'Fname should contain at most 255 characters.');
  const notString = fieldError('fname', 'Fname must be a string.');
  const noteShort = fieldError('fnote', 'Fnote should contain at least 3 characters.');
  const noteLong = fieldError('fnote', 'Fnote should contain at most 255 characters.');
  const noteNotString = fieldError('fnote', 'Fnote must be a string.');
  const cases: RejectCase[] = [
    { name: 'empty object', body: {}, errors: [blank] },
    { name: 'empty body', rawBody: '', errors: [blank] },
    { name: 'JSON null', rawBody: 'null', errors: [blank] },
    { name: 'JSON array', body: ['fname'], errors: [blank] },
    { name: 'null', body: { fname: null }, errors: [blank] },
    { name: 'empty string', body: { fname: '' }, errors: [blank] },
    { name: 'spaces', body: { fname: '   ' }, errors: [blank] },
    { name: 'tabs and newlines', body: { fname: '\t\n \r' }, errors: [blank] },
    { name: 'empty array', body: { fname: [] }, errors: [blank] },
    { name: 'unknown keys only', body: { name: 'Proper name', Name: 'Proper name' }, errors: [blank] },
    { name: '2 chars', body: { fname: 'ab' }, errors: [tooShort] },
    { name: '1 char', body: { fname: 'x' }, errors: [tooShort] },
    { name: '2 characters, 6 bytes', body: { fname: '日本' }, errors: [tooShort] },
    { name: '2 emoji (4 UTF-16 units)', body: { fname: '😀😀' }, errors: [tooShort] },
    { name: '256 chars', body: { fname: long(256) }, errors: [tooLong] },
    { name: '256 two-byte chars', body: { fname: long(256, 'é') }, errors: [tooLong] },
    { name: 'integer', body: { fname: 12345 }, errors: [notString] },
    { name: 'float', body: { fname: 1.5 }, errors: [notString] },
    { name: 'boolean', body: { fname: true }, errors: [notString] },
    { name: 'array of strings', body: { fname: ['abc'] }, errors: [notString] },
    { name: 'object', body: { fname: { a: 'abc' } }, errors: [notString] },
    { name: 'note too short', body: { fname: 'Good name', fnote: 'ab' }, errors: [noteShort] },
    { name: 'note too long', body: { fname: 'Good name', fnote: long(256) }, errors: [noteLong] },
    { name: 'note too long in characters', body: { fname: 'Good name', fnote: long(256, '€') }, errors: [noteLong] },
    { name: 'note integer', body: { fname: 'Good name', fnote: 123 }, errors: [noteNotString] },
    { name: 'both bad: fname first', body: { fname: 'ab', fnote: 'x' }, errors: [tooShort, noteShort] },
    { name: 'both bad, keys reversed in body: still fname first', body: { fnote: 'x', fname: 'ab' }, errors: [tooShort, noteShort] },
    { name: 'missing fname, bad note', body: { fnote: 'x' }, errors: [blank, noteShort] },
    { name: 'blank fname, long note', body: { fname: ' ', fnote: long(300) }, errors: [blank, noteLong] },
  ];
  // Every format on PUT; PATCH runs the same rules (JSON is enough to show it).
  await expectRejected(ctx, demo, { path: '/v1/groups/update', query: `id=${id}`, method: 'PUT' }, cases);
  await expectRejected(ctx, demo, { path: '/v1/groups/update', query: `id=${id}`, method: 'PATCH' }, cases, ['json']);
});

storeTest('groups/update: lengths count characters, not bytes (boundaries accepted)', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const id = demo.groups[0]!.Id;
  for (const [fname, fnote] of [
    ['abc', 'xyz'],
    ['日本語', '日本語'],
    ['😀😀😀', '😀😀😀'],
    [long(255), long(255)],
    [long(255, 'é'), long(255, '€')],
    [long(255, '😀'), long(3, '😀')],
  ] as [string, string][]) {
    const res = await call(ctx.app, {
      method: 'PUT',
      path: '/v1/groups/update',
      token: demo.token,
      query: `id=${id}`,
      body: { fname, fnote },
    });
    assert.equal(res.statusCode, 200, `${fname.slice(0, 10)}: ${res.body}`);
    const stored = await groupFromDb(ctx, id);
    assert.equal(stored.Name, fname);
    assert.equal(stored.Note, fnote);
    assert.equal(res.body, JSON.stringify(stored));
  }
});

storeTest('groups/update: unknown id 404 (before body validation), missing or bad id 400', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  for (const wire of WIRES) {
    for (const body of [{ fname: 'Valid name' }, { fname: 'x' }, {}]) {
      const res = await call(ctx.app, {
        method: 'PUT',
        path: '/v1/groups/update',
        token: demo.token,
        query: `id=${UNUSED_ID}`,
        wire,
        body,
      });
      assertError(res, 404, `Object not found: ${UNUSED_ID}`, wire);
    }
    assertError(
      await call(ctx.app, { method: 'PUT', path: '/v1/groups/update', token: demo.token, wire, body: { fname: 'Valid name' } }),
      400,
      'Missing required parameters: id',
      wire,
    );
    assertError(
      await call(ctx.app, {
        method: 'PUT',
        path: '/v1/groups/update',
        token: demo.token,
        query: 'id=abc',
        wire,
        body: { fname: 'Valid name' },
      }),
      400,
      'Invalid data received for parameter "id".',
      wire,
    );
  }
});

storeTest('groups/update: an update that changes nothing leaves DateUpdated; each changed field moves it', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const PAST = 1_000_000_000;
  const db = ctx.store.db;
  const [parent, group] = [demo.groups[0]!, demo.groups[2]!];
  const reserved = await call(ctx.app, {
    method: 'POST',
    path: '/v1/keyword/reserve',
    token: demo.token,
    body: { Keyword: 'SAMEWORD', Number: '55155' },
  });
  assert.equal(reserved.statusCode, 201, reserved.body);
  const keywordId = (JSON.parse(reserved.body) as { Id: number }[])[0]!.Id;
  await call(ctx.app, {
    method: 'PUT',
    path: '/v1/groups/update',
    token: demo.token,
    query: `id=${group.Id}`,
    body: { fname: 'Same name', fnote: 'Same note', KeywordId: keywordId, ParentId: parent.Id },
  });
  const put = (body: Record<string, unknown>, wire: Wire = 'json') =>
    call(ctx.app, { method: 'PUT', path: '/v1/groups/update', token: demo.token, query: `id=${group.Id}`, wire, body });
  // The stored values again (integers quoted or not, fnote left out): nothing is saved.
  for (const [i, body] of [
    { fname: 'Same name', fnote: 'Same note', KeywordId: keywordId, ParentId: parent.Id },
    { fname: 'Same name', KeywordId: String(keywordId), ParentId: `+${parent.Id}` },
    { fname: 'Same name' },
  ].entries()) {
    await db.updateTable('groups').set({ updated_at: PAST }).where('id', '=', group.Id).execute();
    const wire = WIRES[i % WIRES.length]!;
    const res = await put(body, wire);
    const stored = await groupFromDb(ctx, group.Id);
    assert.equal(stored.DateUpdated, fmtTime(PAST), `${JSON.stringify(body)}: DateUpdated stays`);
    assertBody(res, wire, 200, stored);
  }
  // Any one value that differs is a change: DateUpdated is the time of the write.
  for (const body of [
    { fname: 'Same Name' },
    { fname: 'Same name', fnote: 'Same note.' },
    { fname: 'Same name', fnote: '' },
    { fname: 'Same name', KeywordId: 0 },
    { fname: 'Same name', ParentId: 0 },
  ]) {
    await put({ fname: 'Same name', fnote: 'Same note', KeywordId: keywordId, ParentId: parent.Id });
    await db.updateTable('groups').set({ updated_at: PAST }).where('id', '=', group.Id).execute();
    const before = nowSeconds();
    const res = await put(body);
    assert.equal(res.statusCode, 200, res.body);
    const row = await db.selectFrom('groups').select('updated_at').where('id', '=', group.Id).executeTakeFirstOrThrow();
    assert.ok(Number(row.updated_at) >= before, `${JSON.stringify(body)}: DateUpdated moves`);
    assert.equal(JSON.parse(res.body).DateUpdated, fmtTime(Number(row.updated_at)));
  }
});

// ------------------------------------------------------------------ custom-contact-fields/update

storeTest('custom-contact-fields/update renames a field; Value lists its entries (PUT and PATCH, JSON and XML)', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const field = demo.customFields[0]!; // Favorite Color: an entry for every third contact
  assert.deepEqual(
    field.Value.map((v) => v.PhoneNumberId),
    demo.contacts.filter((_, i) => i % 3 === 0).map((c) => c.Id),
  );
  let n = 0;
  for (const method of ['PUT', 'PATCH'] as const) {
    for (const wire of WIRES) {
      n++;
      const before = nowSeconds();
      const res = await call(ctx.app, {
        method,
        path: '/v1/custom-contact-fields/update',
        token: demo.token,
        query: `id=${field.Id}`,
        wire,
        body: { fname: `Colour ${n}` },
      });
      const stored = await customFieldFromDb(ctx, field.Id);
      assert.equal(stored.Name, `Colour ${n}`);
      assert.equal(stored.DateCreated, field.DateCreated);
      assert.ok(stored.DateUpdated >= fmtTime(before));
      assert.deepEqual(stored.Value, field.Value, 'entries untouched');
      assertBody(res, wire, 200, stored);
    }
  }
  // Literal XML of the nested Value list, and the empty Value of a field without entries.
  const xml = await call(ctx.app, {
    method: 'PUT',
    path: '/v1/custom-contact-fields/update',
    token: demo.token,
    query: `id=${field.Id}`,
    wire: 'xml',
    body: { fname: 'Favorite Color' },
  });
  const first = field.Value[0]!;
  assert.ok(
    xml.body.includes(
      `<Value><item><Id>${first.Id}</Id><CustomFieldId>${field.Id}</CustomFieldId><PhoneNumberId>${first.PhoneNumberId}</PhoneNumberId><Entry>${first.Entry}</Entry>` +
        `<DateCreated>${first.DateCreated}</DateCreated><DateUpdated>${first.DateUpdated}</DateUpdated></item><item>`,
    ),
    xml.body,
  );
  const shoe = demo.customFields[2]!;
  assert.deepEqual(shoe.Value, []);
  const empty = await call(ctx.app, {
    method: 'PUT',
    path: '/v1/custom-contact-fields/update',
    token: demo.token,
    query: `id=${shoe.Id}`,
    wire: 'xml-param',
    body: { fname: 'Shoe size (EU)' },
  });
  const s = await customFieldFromDb(ctx, shoe.Id);
  assert.equal(
    empty.body,
    `${XML_DECL}\n<response><Id>${shoe.Id}</Id><Name>Shoe size (EU)</Name><DateCreated>${shoe.DateCreated}</DateCreated><DateUpdated>${s.DateUpdated}</DateUpdated><Value/></response>\n`,
  );
  const json = await call(ctx.app, {
    method: 'PUT',
    path: '/v1/custom-contact-fields/update',
    token: demo.token,
    query: `id=${shoe.Id}`,
    body: { fname: 'Shoe/size' },
  });
  const s2 = await customFieldFromDb(ctx, shoe.Id);
  assert.equal(
    json.body,
    `{"Id":${shoe.Id},"Name":"Shoe/size","DateCreated":"${shoe.DateCreated}","DateUpdated":"${s2.DateUpdated}","Value":[]}`,
  );
});

storeTest('custom-contact-fields/update: every validation rule (3 to 64 characters); nothing changes', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const id = demo.customFields[1]!.Id;
  const blank = fieldError('fname', 'Fname cannot be blank.');
  const tooShort = fieldError('fname', 'Fname should contain at least 3 characters.');
  const tooLong = fieldError('fname', 'Fname should contain at most 64 characters.');
  const notString = fieldError('fname', 'Fname must be a string.');
  const cases: RejectCase[] = [
    { name: 'empty object', body: {}, errors: [blank] },
    { name: 'empty body', rawBody: '', errors: [blank] },
    { name: 'JSON null', rawBody: 'null', errors: [blank] },
    { name: 'null', body: { fname: null }, errors: [blank] },
    { name: 'empty string', body: { fname: '' }, errors: [blank] },
    { name: 'whitespace', body: { fname: ' \t ' }, errors: [blank] },
    { name: 'empty array', body: { fname: [] }, errors: [blank] },
    { name: 'other keys only', body: { Name: 'Loyalty', fnote: 'abc' }, errors: [blank] },
    { name: '2 chars', body: { fname: 'ab' }, errors: [tooShort] },
    { name: '2 characters, 6 bytes', body: { fname: '日本' }, errors: [tooShort] },
    { name: '65 chars', body: { fname: long(65) }, errors: [tooLong] },
    { name: '65 multibyte chars', body: { fname: long(65, 'ß') }, errors: [tooLong] },
    { name: '256 chars (the group limit does not apply)', body: { fname: long(256) }, errors: [tooLong] },
    { name: 'integer', body: { fname: 123 }, errors: [notString] },
    { name: 'boolean', body: { fname: false }, errors: [notString] },
    { name: 'array', body: { fname: ['Loyalty'] }, errors: [notString] },
  ];
  await expectRejected(ctx, demo, { path: '/v1/custom-contact-fields/update', query: `id=${id}`, method: 'PUT' }, cases);
  await expectRejected(ctx, demo, { path: '/v1/custom-contact-fields/update', query: `id=${id}`, method: 'PATCH' }, cases, ['json']);
  // Boundaries accepted: 3 and 64 characters, counted as characters.
  for (const fname of ['abc', '日本語', long(64), long(64, 'ß'), long(64, '😀')]) {
    const res = await call(ctx.app, {
      method: 'PUT',
      path: '/v1/custom-contact-fields/update',
      token: demo.token,
      query: `id=${id}`,
      body: { fname, unknown: 'ignored' },
    });
    assert.equal(res.statusCode, 200, res.body);
    const stored = await customFieldFromDb(ctx, id);
    assert.equal(stored.Name, fname);
    assert.equal(res.body, JSON.stringify(stored));
  }
});

storeTest('custom-contact-fields/update: unknown id 404 before validation; bad id 400', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  for (const wire of WIRES) {
    assertError(
      await call(ctx.app, {
        method: 'PUT',
        path: '/v1/custom-contact-fields/update',
        token: demo.token,
        query: `id=${UNUSED_ID}`,
        wire,
        body: { fname: '' },
      }),
      404,
      `Object not found: ${UNUSED_ID}`,
      wire,
    );
    assertError(
      await call(ctx.app, {
        method: 'PATCH',
        path: '/v1/custom-contact-fields/update',
        token: demo.token,
        query: 'id=1.5',
        wire,
        body: { fname: 'Valid' },
      }),
      400,
      'Invalid data received for parameter "id".',
      wire,
    );
  }
});

storeTest('custom-contact-fields/update: the same name leaves DateUpdated; another name (case included) moves it', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const PAST = 1_000_000_000;
  const field = demo.customFields[1]!;
  const put = (fname: string, wire: Wire = 'json') =>
    call(ctx.app, {
      method: 'PUT',
      path: '/v1/custom-contact-fields/update',
      token: demo.token,
      query: `id=${field.Id}`,
      wire,
      body: { fname },
    });
  for (const wire of WIRES) {
    await ctx.store.db.updateTable('custom_fields').set({ updated_at: PAST }).where('id', '=', field.Id).execute();
    const res = await put(field.Name, wire);
    const stored = await customFieldFromDb(ctx, field.Id);
    assert.equal(stored.DateUpdated, fmtTime(PAST), 'nothing saved');
    assertBody(res, wire, 200, stored);
  }
  const before = nowSeconds();
  const res = await put(field.Name.toUpperCase());
  assert.equal(res.statusCode, 200, res.body);
  const stored = await customFieldFromDb(ctx, field.Id);
  assert.equal(stored.Name, field.Name.toUpperCase());
  assert.ok(stored.DateUpdated >= fmtTime(before), 'a new case is a change');
});

// ------------------------------------------------------------------ custom-contact-fields-entry/update

/** The demo's entries by (field index, contact index): color on every third contact, tier on every fourth. */
function entryOf(demo: DemoAccount, fieldIndex: number, contactIndex: number) {
  const e = demo.customFieldEntries.find(
    (x) => x.CustomFieldId === demo.customFields[fieldIndex]!.Id && x.PhoneNumberId === demo.contacts[contactIndex]!.Id,
  );
  assert.ok(e, `demo entry field ${fieldIndex} × contact ${contactIndex}`);
  return e;
}

storeTest('custom-contact-fields-entry/update sets value, field and contact (POST, PUT and PATCH, JSON and XML)', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const entry = entryOf(demo, 0, 3); // Favorite Color of contact 3
  const field = demo.customFields[0]!.Id;
  const contact = demo.contacts[3]!.Id;
  let n = 0;
  for (const method of ['POST', 'PUT', 'PATCH'] as const) {
    for (const wire of WIRES) {
      n++;
      const res = await call(ctx.app, {
        method,
        path: '/v1/custom-contact-fields-entry/update',
        token: demo.token,
        query: `id=${entry.Id}`,
        wire,
        body: { frfield: field, frcontact: contact, fvalue: `Teal ${n}` },
      });
      const stored = await entryFromDb(ctx, entry.Id);
      assert.equal(stored.Entry, `Teal ${n}`, `${method} ${wire}: persisted`);
      assert.equal(stored.CustomFieldId, field);
      assert.equal(stored.PhoneNumberId, contact);
      assert.equal(stored.DateCreated, entry.DateCreated);
      assertBody(res, wire, 200, stored);
    }
  }
  const json = await call(ctx.app, {
    method: 'POST',
    path: '/v1/custom-contact-fields-entry/update',
    token: demo.token,
    query: `id=${entry.Id}`,
    body: { frfield: field, frcontact: String(contact), fvalue: 'Blue & <b>' },
  });
  const s = await entryFromDb(ctx, entry.Id);
  assert.equal(
    json.body,
    `{"Id":${entry.Id},"CustomFieldId":${field},"PhoneNumberId":${contact},"Entry":"Blue & <b>","DateCreated":"${entry.DateCreated}","DateUpdated":"${s.DateUpdated}"}`,
  );
  const xml = await call(ctx.app, {
    method: 'PUT',
    path: '/v1/custom-contact-fields-entry/update',
    token: demo.token,
    query: `id=${entry.Id}`,
    wire: 'xml',
    body: { frfield: field, frcontact: contact, fvalue: 'Blue & <b>' },
  });
  const s2 = await entryFromDb(ctx, entry.Id);
  assert.equal(
    xml.body,
    `${XML_DECL}\n<response><Id>${entry.Id}</Id><CustomFieldId>${field}</CustomFieldId><PhoneNumberId>${contact}</PhoneNumberId><Entry>Blue &amp; &lt;b&gt;</Entry>` +
      `<DateCreated>${entry.DateCreated}</DateCreated><DateUpdated>${s2.DateUpdated}</DateUpdated></response>\n`,
  );
});

storeTest('custom-contact-fields-entry/update: the stored values again leave DateUpdated; any one changed moves it', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const PAST = 1_000_000_000;
  const entry = entryOf(demo, 0, 3);
  const other = demo.contacts.find(
    (c) => !demo.customFieldEntries.some((e) => e.CustomFieldId === entry.CustomFieldId && e.PhoneNumberId === c.Id),
  )!;
  const path = '/v1/custom-contact-fields-entry/update';
  const same = { frfield: entry.CustomFieldId, frcontact: entry.PhoneNumberId, fvalue: entry.Entry };
  for (const [i, body] of [
    same,
    { frfield: `+${entry.CustomFieldId}`, frcontact: `0${entry.PhoneNumberId}`, fvalue: entry.Entry },
  ].entries()) {
    await ctx.store.db.updateTable('custom_field_entries').set({ updated_at: PAST }).where('id', '=', entry.Id).execute();
    const wire = WIRES[i]!;
    const res = await call(ctx.app, { method: 'PUT', path, token: demo.token, query: `id=${entry.Id}`, wire, body });
    const stored = await entryFromDb(ctx, entry.Id);
    assert.equal(stored.DateUpdated, fmtTime(PAST), `${JSON.stringify(body)}: nothing saved`);
    assertBody(res, wire, 200, stored);
  }
  for (const change of [{ fvalue: `${entry.Entry}.` }, { frcontact: other.Id }]) {
    await call(ctx.app, { method: 'PUT', path, token: demo.token, query: `id=${entry.Id}`, body: same });
    await ctx.store.db.updateTable('custom_field_entries').set({ updated_at: PAST }).where('id', '=', entry.Id).execute();
    const before = nowSeconds();
    const res = await call(ctx.app, { method: 'PUT', path, token: demo.token, query: `id=${entry.Id}`, body: { ...same, ...change } });
    assert.equal(res.statusCode, 200, res.body);
    const stored = await entryFromDb(ctx, entry.Id);
    assert.ok(stored.DateUpdated >= fmtTime(before), `${JSON.stringify(change)}: DateUpdated moves`);
    assert.equal(res.body, JSON.stringify(stored));
  }
});

storeTest('custom-contact-fields-entry/update: quoted integers are accepted ("7", "+7", "07")', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const entry = entryOf(demo, 1, 4); // Loyalty Tier of contact 4
  const field = demo.customFields[1]!.Id;
  const contact = demo.contacts[4]!.Id;
  for (const [frfield, frcontact] of [
    [String(field), String(contact)],
    [`+${field}`, `+${contact}`],
    [`0${field}`, `00${contact}`],
    [field, `+${contact}`],
    [`${field}`, contact],
  ] as const) {
    const res = await call(ctx.app, {
      method: 'POST',
      path: '/v1/custom-contact-fields-entry/update',
      token: demo.token,
      query: `id=${entry.Id}`,
      body: { frfield, frcontact, fvalue: `v ${String(frfield)}` },
    });
    assert.equal(res.statusCode, 200, `${String(frfield)} / ${String(frcontact)}: ${res.body}`);
    const stored = await entryFromDb(ctx, entry.Id);
    assert.equal(stored.Entry, `v ${String(frfield)}`);
    assert.equal(res.body, JSON.stringify(stored));
    // Integers in the response, whatever the request sent.
    const body = JSON.parse(res.body) as { CustomFieldId: unknown; PhoneNumberId: unknown };
    assert.equal(body.CustomFieldId, field);
    assert.equal(body.PhoneNumberId, contact);
  }
});

storeTest('custom-contact-fields-entry/update: every validation rule, exact messages and order; nothing changes', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const entry = entryOf(demo, 0, 6);
  const field = demo.customFields[0]!.Id;
  const contact = demo.contacts[6]!.Id;
  const ok = { frfield: field, frcontact: contact, fvalue: 'Green' };
  const blank = (f: string, label: string) => fieldError(f, `${label} cannot be blank.`);
  const notInt = (f: string, label: string) => fieldError(f, `${label} must be an integer.`);
  const fieldInvalid = fieldError('frfield', 'Frfield is invalid.');
  const contactInvalid = fieldError('frcontact', 'Frcontact is invalid.');
  const cases: RejectCase[] = [
    { name: 'empty object', body: {}, errors: [blank('frfield', 'Frfield'), blank('frcontact', 'Frcontact'), blank('fvalue', 'Fvalue')] },
    { name: 'empty body', rawBody: '', errors: [blank('frfield', 'Frfield'), blank('frcontact', 'Frcontact'), blank('fvalue', 'Fvalue')] },
    {
      name: 'JSON null',
      rawBody: 'null',
      errors: [blank('frfield', 'Frfield'), blank('frcontact', 'Frcontact'), blank('fvalue', 'Fvalue')],
    },
    { name: 'missing frfield', body: { frcontact: contact, fvalue: 'x' }, errors: [blank('frfield', 'Frfield')] },
    { name: 'missing frcontact', body: { frfield: field, fvalue: 'x' }, errors: [blank('frcontact', 'Frcontact')] },
    { name: 'missing fvalue', body: { frfield: field, frcontact: contact }, errors: [blank('fvalue', 'Fvalue')] },
    { name: 'null fvalue', body: { ...ok, fvalue: null }, errors: [blank('fvalue', 'Fvalue')] },
    { name: 'empty fvalue', body: { ...ok, fvalue: '' }, errors: [blank('fvalue', 'Fvalue')] },
    { name: 'whitespace fvalue', body: { ...ok, fvalue: '  \n' }, errors: [blank('fvalue', 'Fvalue')] },
    { name: 'empty-string frfield', body: { ...ok, frfield: '' }, errors: [blank('frfield', 'Frfield')] },
    { name: 'whitespace frcontact', body: { ...ok, frcontact: ' ' }, errors: [blank('frcontact', 'Frcontact')] },
    { name: 'frfield "12a"', body: { ...ok, frfield: '12a' }, errors: [notInt('frfield', 'Frfield')] },
    { name: 'frfield 1.5', body: { ...ok, frfield: 1.5 }, errors: [notInt('frfield', 'Frfield')] },
    { name: 'frfield "1.0"', body: { ...ok, frfield: '1.0' }, errors: [notInt('frfield', 'Frfield')] },
    { name: 'frfield true', body: { ...ok, frfield: true }, errors: [notInt('frfield', 'Frfield')] },
    { name: 'frfield [1]', body: { ...ok, frfield: [field] }, errors: [notInt('frfield', 'Frfield')] },
    { name: 'frcontact "7x"', body: { ...ok, frcontact: `${contact}x` }, errors: [notInt('frcontact', 'Frcontact')] },
    { name: 'frcontact 2.5', body: { ...ok, frcontact: 2.5 }, errors: [notInt('frcontact', 'Frcontact')] },
    { name: 'frcontact false', body: { ...ok, frcontact: false }, errors: [notInt('frcontact', 'Frcontact')] },
    { name: 'frcontact ["7"]', body: { ...ok, frcontact: [String(contact)] }, errors: [notInt('frcontact', 'Frcontact')] },
    {
      name: 'both not integers',
      body: { ...ok, frfield: '1a', frcontact: 'b2' },
      errors: [notInt('frfield', 'Frfield'), notInt('frcontact', 'Frcontact')],
    },
    {
      name: 'fvalue 256 chars',
      body: { ...ok, fvalue: long(256) },
      errors: [fieldError('fvalue', 'Fvalue should contain at most 255 characters.')],
    },
    {
      name: 'fvalue 256 multibyte chars',
      body: { ...ok, fvalue: long(256, 'ж') },
      errors: [fieldError('fvalue', 'Fvalue should contain at most 255 characters.')],
    },
    { name: 'fvalue integer', body: { ...ok, fvalue: 42 }, errors: [fieldError('fvalue', 'Fvalue must be a string.')] },
    { name: 'fvalue array', body: { ...ok, fvalue: ['Green'] }, errors: [fieldError('fvalue', 'Fvalue must be a string.')] },
    { name: 'unknown frfield', body: { ...ok, frfield: UNUSED_ID }, errors: [fieldInvalid] },
    { name: 'unknown frfield, quoted', body: { ...ok, frfield: String(UNUSED_ID) }, errors: [fieldInvalid] },
    { name: 'frfield 0', body: { ...ok, frfield: 0 }, errors: [fieldInvalid] },
    { name: 'frfield -1', body: { ...ok, frfield: '-1' }, errors: [fieldInvalid] },
    { name: 'unknown frcontact', body: { ...ok, frcontact: UNUSED_ID }, errors: [contactInvalid] },
    { name: 'frcontact 0', body: { ...ok, frcontact: '0' }, errors: [contactInvalid] },
    // Beyond 64 bits is not an integer (API.md §4.5); within 64 bits it is, and no contact has it.
    { name: 'huge frcontact', body: { ...ok, frcontact: '99999999999999999999999' }, errors: [notInt('frcontact', 'Frcontact')] },
    { name: 'int64 max frcontact', body: { ...ok, frcontact: '9223372036854775807' }, errors: [contactInvalid] },
    { name: 'both unknown', body: { ...ok, frfield: UNUSED_ID, frcontact: UNUSED_ID }, errors: [fieldInvalid, contactInvalid] },
    {
      name: 'unknown frfield, frcontact not integer',
      body: { ...ok, frfield: UNUSED_ID, frcontact: 'x' },
      errors: [notInt('frcontact', 'Frcontact'), fieldInvalid],
    },
  ];
  await expectRejected(ctx, demo, { path: '/v1/custom-contact-fields-entry/update', query: `id=${entry.Id}`, method: 'POST' }, cases);
  await expectRejected(ctx, demo, { path: '/v1/custom-contact-fields-entry/update', query: `id=${entry.Id}`, method: 'PUT' }, cases, [
    'json',
  ]);
  await expectRejected(ctx, demo, { path: '/v1/custom-contact-fields-entry/update', query: `id=${entry.Id}`, method: 'PATCH' }, cases, [
    'json',
  ]);
  // Boundaries accepted.
  for (const fvalue of ['x', long(255), long(255, 'ж'), long(255, '😀')]) {
    const res = await call(ctx.app, {
      method: 'PUT',
      path: '/v1/custom-contact-fields-entry/update',
      token: demo.token,
      query: `id=${entry.Id}`,
      body: { ...ok, fvalue, other: 1 },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await entryFromDb(ctx, entry.Id)).Entry, fvalue);
  }
});

storeTest('custom-contact-fields-entry/update: moving an entry updates the derived arrays; an occupied pair is 422', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const [color, tier, shoe] = demo.customFields.map((f) => f.Id) as [number, number, number];
  const c0 = demo.contacts[0]!;
  const c1 = demo.contacts[1]!;
  assert.deepEqual(c0.CustomFieldIds, [color, tier]);
  assert.deepEqual(c1.CustomFieldIds, []);
  const tierOfC0 = entryOf(demo, 1, 0);
  const colorOfC0 = entryOf(demo, 0, 0);

  // Onto a pair that already has another entry: 422 on frfield, nothing changes.
  const before = await snapshotAccount(ctx, demo.account.id);
  for (const method of ['POST', 'PUT', 'PATCH'] as const) {
    for (const wire of WIRES) {
      const res = await call(ctx.app, {
        method,
        path: '/v1/custom-contact-fields-entry/update',
        token: demo.token,
        query: `id=${tierOfC0.Id}`,
        wire,
        body: { frfield: color, frcontact: String(c0.Id), fvalue: 'Gold' },
      });
      assert422(
        res,
        [fieldError('frfield', `The combination "${color}"-"${c0.Id}" of Frfield and Frcontact has already been taken.`)],
        wire,
      );
    }
  }
  assert.deepEqual(await snapshotAccount(ctx, demo.account.id), before);

  // Keeping its own pair is not a conflict.
  const same = await call(ctx.app, {
    method: 'PUT',
    path: '/v1/custom-contact-fields-entry/update',
    token: demo.token,
    query: `id=${colorOfC0.Id}`,
    body: { frfield: color, frcontact: c0.Id, fvalue: 'Navy' },
  });
  assert.equal(same.statusCode, 200, same.body);

  // Onto a free pair: the entry moves to Shoe Size × contact 1.
  const moved = await call(ctx.app, {
    method: 'POST',
    path: '/v1/custom-contact-fields-entry/update',
    token: demo.token,
    query: `id=${tierOfC0.Id}`,
    body: { frfield: `${shoe}`, frcontact: `+${c1.Id}`, fvalue: '42' },
  });
  assert.equal(moved.statusCode, 200, moved.body);
  assert.equal(moved.body, JSON.stringify(await entryFromDb(ctx, tierOfC0.Id)));
  const m = JSON.parse(moved.body) as { CustomFieldId: number; PhoneNumberId: number; Entry: string };
  assert.deepEqual([m.CustomFieldId, m.PhoneNumberId, m.Entry], [shoe, c1.Id, '42']);

  // Contact.CustomFieldIds follow the data.
  const f0 = JSON.parse((await call(ctx.app, { path: '/v1/contacts/find', token: demo.token, query: `number=${c0.Number}` })).body) as {
    CustomFieldIds: number[];
  };
  const f1 = JSON.parse((await call(ctx.app, { path: '/v1/contacts/find', token: demo.token, query: `number=${c1.Number}` })).body) as {
    CustomFieldIds: number[];
  };
  assert.deepEqual(f0.CustomFieldIds, [color]);
  assert.deepEqual(f1.CustomFieldIds, [shoe]);
  assert.deepEqual(f0, await contactFromDb(ctx, c0.Id));

  // CustomField.Value follows the data: Shoe Size now holds the entry, Loyalty Tier no longer does.
  const shoeRes = await call(ctx.app, {
    method: 'PUT',
    path: '/v1/custom-contact-fields/update',
    token: demo.token,
    query: `id=${shoe}`,
    body: { fname: 'Shoe Size' },
  });
  const shoeBody = JSON.parse(shoeRes.body) as { Value: { Id: number; Entry: string }[] };
  assert.deepEqual(
    shoeBody.Value.map((v) => [v.Id, v.Entry]),
    [[tierOfC0.Id, '42']],
  );
  const tierRes = await call(ctx.app, {
    method: 'PUT',
    path: '/v1/custom-contact-fields/update',
    token: demo.token,
    query: `id=${tier}`,
    body: { fname: 'Loyalty Tier' },
  });
  const tierBody = JSON.parse(tierRes.body) as { Value: { Id: number }[] };
  assert.ok(!tierBody.Value.some((v) => v.Id === tierOfC0.Id));
  assert.equal(tierBody.Value.length, demo.customFields[1]!.Value.length - 1);
  assert.equal(tierRes.body, JSON.stringify(await customFieldFromDb(ctx, tier)));
});

storeTest('custom-contact-fields-entry/update: unknown id 404 before validation, missing id 400', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  for (const method of ['POST', 'PUT', 'PATCH'] as const) {
    for (const wire of WIRES) {
      assertError(
        await call(ctx.app, {
          method,
          path: '/v1/custom-contact-fields-entry/update',
          token: demo.token,
          query: `id=${UNUSED_ID}`,
          wire,
          body: {},
        }),
        404,
        `Object not found: ${UNUSED_ID}`,
        wire,
      );
      assertError(
        await call(ctx.app, {
          method,
          path: '/v1/custom-contact-fields-entry/update',
          token: demo.token,
          wire,
          body: { frfield: 1, frcontact: 1, fvalue: 'x' },
        }),
        400,
        'Missing required parameters: id',
        wire,
      );
    }
  }
});

storeTest(
  'custom-contact-fields-entry/update: an occupied pair is reported even when fvalue also fails (first error of each field)',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const color = demo.customFields[0]!.Id;
    const c0 = demo.contacts[0]!;
    const tierOfC0 = entryOf(demo, 1, 0);
    const before = await snapshotAccount(ctx, demo.account.id);
    const res = await call(ctx.app, {
      method: 'PUT',
      path: '/v1/custom-contact-fields-entry/update',
      token: demo.token,
      query: `id=${tierOfC0.Id}`,
      body: { frfield: color, frcontact: c0.Id, fvalue: long(256) },
    });
    assert.equal(res.statusCode, 422, res.body);
    const errors = JSON.parse(res.body) as { field: string; message: string }[];
    const byField = Object.fromEntries(errors.map((e) => [e.field, e.message]));
    assert.deepEqual(byField, {
      fvalue: 'Fvalue should contain at most 255 characters.',
      frfield: `The combination "${color}"-"${c0.Id}" of Frfield and Frcontact has already been taken.`,
    });
    assert.equal(errors.length, 2);
    assert.deepEqual(await snapshotAccount(ctx, demo.account.id), before);
  },
);
