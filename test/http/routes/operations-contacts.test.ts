/**
 * contacts/index, view, create, update, delete (API.md §10.2): records in JSON and XML from
 * the database, filters and pagination, every write rule with its exact message and order,
 * Location, 204, 404 for another account's id, 404 before 422, and "a failed write changes nothing".
 */
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import {
  assert422,
  assertBody,
  assertError,
  call,
  contactFromDb,
  expectRejected,
  fieldError,
  fmtTime,
  nowSeconds,
  snapshotAccount,
  UNUSED_ID,
  WIRES,
  XML_DECL,
} from '../../helpers/operations.ts';
import { storeTest } from '../../helpers/stores.ts';

const INDEX = '/v1/contacts/index';
const VIEW = '/v1/contacts/view';
const CREATE = '/v1/contacts/create';
const UPDATE = '/v1/contacts/update';
const DELETE = '/v1/contacts/delete';

async function allContactsFromDb(ctx: TestApp, accountId: number) {
  const rows = await ctx.store.db.selectFrom('contacts').select('id').where('account_id', '=', accountId).orderBy('id').execute();
  const out = [];
  for (const r of rows) out.push(await contactFromDb(ctx, r.id));
  return out;
}

// ------------------------------------------------------------------ index

storeTest("contacts/index lists the account's contacts by Id with GroupIds and CustomFieldIds (JSON, XML, HEAD)", async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  await ctx.seed('Other account'); // its contacts never show
  const all = await allContactsFromDb(ctx, demo.account.id);
  assert.equal(all.length, 50);
  assert.deepEqual(all, demo.contacts, 'the demo records are the database rows');
  for (const wire of WIRES) {
    const res = await call(ctx.app, { path: INDEX, token: demo.token, wire });
    assertBody(res, wire, 200, all);
    assert.equal(res.headers['x-pagination-total-count'], '50');
    assert.equal(res.headers['x-pagination-page-count'], '1');
    assert.equal(res.headers['x-pagination-current-page'], '1');
    assert.equal(res.headers['x-pagination-per-page'], '100');
  }
  const head = await ctx.app.inject({ method: 'HEAD', url: `${INDEX}?access_token=${demo.token}` });
  assert.equal(head.statusCode, 200);
  assert.equal(head.body, '');
  assert.equal(head.headers['x-pagination-total-count'], '50');
  // Some contacts have groups and fields, some none: both array forms in XML.
  assert.ok(all.some((c) => c.GroupIds.length === 0) && all.some((c) => c.GroupIds.length > 1));
  assert.ok(all.some((c) => c.CustomFieldIds.length === 2));
});

storeTest('contacts/index paginates (API.md §5): page, per-page, Link, last page when past the end', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const all = await allContactsFromDb(ctx, demo.account.id);
  const res = await call(ctx.app, { path: INDEX, token: demo.token, query: 'per-page=20&page=2' });
  assertBody(res, 'json', 200, all.slice(20, 40));
  assert.equal(res.headers['x-pagination-total-count'], '50');
  assert.equal(res.headers['x-pagination-page-count'], '3');
  assert.equal(res.headers['x-pagination-current-page'], '2');
  assert.equal(res.headers['x-pagination-per-page'], '20');
  const base = `http://localhost:80${INDEX}?access_token=${demo.token}`;
  assert.equal(
    res.headers.link,
    `<${base}&per-page=20&page=2>; rel=self, <${base}&per-page=20&page=1>; rel=first, <${base}&per-page=20&page=1>; rel=prev, ` +
      `<${base}&per-page=20&page=3>; rel=next, <${base}&per-page=20&page=3>; rel=last`,
  );
  const past = await call(ctx.app, { path: INDEX, token: demo.token, query: 'per-page=20&page=99' });
  assertBody(past, 'json', 200, all.slice(40));
  assert.equal(past.headers['x-pagination-current-page'], '3');
});

storeTest("contacts/index filters: GroupId (members; another account's or unknown group: empty), OptedOut, both", async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const other = await ctx.seed('Other account');
  const all = await allContactsFromDb(ctx, demo.account.id);
  const group = demo.groups[0]!; // Newsletter, 25 members
  for (const wire of WIRES) {
    const members = await call(ctx.app, { path: INDEX, token: demo.token, query: `GroupId=${group.Id}`, wire });
    assertBody(
      members,
      wire,
      200,
      all.filter((c) => c.GroupIds.includes(group.Id)),
    );
    assert.equal(members.headers['x-pagination-total-count'], '25');
    const opted = await call(ctx.app, { path: INDEX, token: demo.token, query: 'OptedOut=1', wire });
    assertBody(
      opted,
      wire,
      200,
      all.filter((c) => c.OptedOut === 1),
    );
    const notOpted = await call(ctx.app, { path: INDEX, token: demo.token, query: 'OptedOut=0', wire });
    assertBody(
      notOpted,
      wire,
      200,
      all.filter((c) => c.OptedOut === 0),
    );
    const both = await call(ctx.app, { path: INDEX, token: demo.token, query: `GroupId=${group.Id}&OptedOut=1`, wire });
    const expected = all.filter((c) => c.OptedOut === 1 && c.GroupIds.includes(group.Id));
    assert.ok(expected.length > 0);
    assertBody(both, wire, 200, expected);
    assert.equal(both.headers['x-pagination-total-count'], String(expected.length));
  }
  assert.ok(all.some((c) => c.OptedOut === 1) && all.some((c) => c.OptedOut === 0));
  // Another account's group, an unknown one, an id no row can have: an empty list, never an error.
  for (const id of [other.groups[0]!.Id, UNUSED_ID, 0, -3, '9223372036854775807']) {
    for (const wire of WIRES) {
      const res = await call(ctx.app, { path: INDEX, token: demo.token, query: `GroupId=${id}`, wire });
      assertBody(res, wire, 200, []);
      assert.equal(res.headers['x-pagination-total-count'], '0');
      assert.equal(res.headers['x-pagination-page-count'], '0');
      assert.equal(res.headers['x-pagination-current-page'], '1');
    }
  }
  // The empty group of the account.
  const empty = demo.groups.find((g) => g.PhoneNumberIds.length === 0)!;
  assertBody(await call(ctx.app, { path: INDEX, token: demo.token, query: `GroupId=${empty.Id}` }), 'json', 200, []);
  // "+7" and " 7"-free forms: quoted integers are integers.
  assertBody(
    await call(ctx.app, { path: INDEX, token: demo.token, query: `GroupId=%2B${group.Id}` }),
    'json',
    200,
    all.filter((c) => c.GroupIds.includes(group.Id)),
  );
  // An empty value is no filter.
  assertBody(await call(ctx.app, { path: INDEX, token: demo.token, query: 'GroupId=&OptedOut=' }), 'json', 200, all);
});

storeTest('contacts/index: a bad filter value is a 422 on that field, no pagination headers', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const cases: [string, { field: string; message: string }[]][] = [
    ['GroupId=abc', [fieldError('GroupId', 'Group Id must be an integer.')]],
    ['GroupId=1.5', [fieldError('GroupId', 'Group Id must be an integer.')]],
    ['GroupId[]=1', [fieldError('GroupId', 'Group Id must be an integer.')]],
    ['OptedOut=2', [fieldError('OptedOut', 'Opted Out is invalid.')]],
    ['OptedOut=-1', [fieldError('OptedOut', 'Opted Out is invalid.')]],
    ['OptedOut=yes', [fieldError('OptedOut', 'Opted Out must be an integer.')]],
    [
      'OptedOut=abc&GroupId=x',
      [fieldError('GroupId', 'Group Id must be an integer.'), fieldError('OptedOut', 'Opted Out must be an integer.')],
    ],
  ];
  for (const [query, errors] of cases) {
    for (const wire of WIRES) {
      const res = await call(ctx.app, { path: INDEX, token: demo.token, query, wire });
      assert422(res, errors, wire);
      assert.equal(res.headers['x-pagination-total-count'], undefined, query);
      assert.equal(res.headers.link, undefined);
    }
  }
  const xml = await call(ctx.app, { path: INDEX, token: demo.token, query: 'OptedOut=2', wire: 'xml' });
  assert.equal(
    xml.body,
    `${XML_DECL}\n<response><item><field>OptedOut</field><message>Opted Out is invalid.</message></item></response>\n`,
  );
});

// ------------------------------------------------------------------ view

storeTest("contacts/view: one record (JSON, XML); 404 for an unknown id and for another account's; 400 without id", async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const other = await ctx.seed('Other account');
  for (const c of demo.contacts.slice(0, 12)) {
    for (const wire of WIRES)
      assertBody(
        await call(ctx.app, { path: VIEW, token: demo.token, query: `id=${c.Id}`, wire }),
        wire,
        200,
        await contactFromDb(ctx, c.Id),
      );
  }
  const c = demo.contacts[0]!;
  const xml = await call(ctx.app, { path: VIEW, token: demo.token, query: `id=${c.Id}`, wire: 'xml' });
  assert.equal(
    xml.body,
    `${XML_DECL}\n<response><Id>${c.Id}</Id><Number>${c.Number}</Number><OptedOut>${c.OptedOut}</OptedOut><FirstName>${c.FirstName}</FirstName>` +
      `<LastName>${c.LastName}</LastName><BirthDay>${c.BirthDay}</BirthDay><Email>${c.Email}</Email><Zip>${c.Zip}</Zip><City>${c.City}</City>` +
      `<DateCreated>${c.DateCreated}</DateCreated><DateUpdated>${c.DateUpdated}</DateUpdated>` +
      `<GroupIds>${c.GroupIds.map((g) => `<item>${g}</item>`).join('')}</GroupIds><CustomFieldIds>${c.CustomFieldIds.map((g) => `<item>${g}</item>`).join('')}</CustomFieldIds></response>\n`,
  );
  for (const wire of WIRES) {
    assertError(
      await call(ctx.app, { path: VIEW, token: demo.token, query: `id=${other.contacts[0]!.Id}`, wire }),
      404,
      `Object not found: ${other.contacts[0]!.Id}`,
      wire,
    );
    assertError(
      await call(ctx.app, { path: VIEW, token: demo.token, query: `id=${UNUSED_ID}`, wire }),
      404,
      `Object not found: ${UNUSED_ID}`,
      wire,
    );
  }
  assertError(await call(ctx.app, { path: VIEW, token: demo.token }), 400, 'Missing required parameters: id');
  assertError(await call(ctx.app, { path: VIEW, token: demo.token, query: 'id=abc' }), 400, 'Invalid data received for parameter "id".');
});

// ------------------------------------------------------------------ create

storeTest('contacts/create: 201, the record, Location to contacts/view (JSON, XML, form)', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const groups = [demo.groups[2]!.Id, demo.groups[0]!.Id];
  let n = 0;
  for (const wire of WIRES) {
    n++;
    const res = await call(ctx.app, {
      method: 'POST',
      path: CREATE,
      token: demo.token,
      wire,
      body: {
        Number: `(555) 301-000${n}`,
        FirstName: 'Zoë',
        LastName: "O'Neil & <Co>",
        City: 'Austin',
        Email: `zoe${n}@example.com`,
        Zip: '78701',
        BirthDay: '1990-02-28',
        OptedOut: '1',
        GroupIds: [groups[0], String(groups[1]), groups[0]],
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    const row = await ctx.store.db
      .selectFrom('contacts')
      .select(['id', 'number', 'number_e164'])
      .where('account_id', '=', demo.account.id)
      .where('number_e164', '=', `+1555301000${n}`)
      .executeTakeFirstOrThrow();
    assert.equal(row.number, `1555301000${n}`, 'stored as E.164 digits');
    const record = await contactFromDb(ctx, row.id);
    assertBody(res, wire, 201, record);
    assert.equal(res.headers.location, `http://localhost:80/v1/contacts/view?id=${row.id}`);
    assert.deepEqual(
      record.GroupIds,
      [...groups].sort((a, b) => a - b),
    );
    assert.equal(record.OptedOut, 1);
    assert.equal(record.BirthDay, '1990-02-28');
    assert.equal(record.DateCreated, record.DateUpdated);
    assertBody(await call(ctx.app, { path: VIEW, token: demo.token, query: `id=${row.id}`, wire }), wire, 200, record);
  }
  // Only Number: the defaults (API.md §9: unset BirthDay 0000-00-00, "" for the others).
  const min = await call(ctx.app, { method: 'POST', path: CREATE, token: demo.token, body: { Number: '+44 20 7946 0958' } });
  assert.equal(min.statusCode, 201, min.body);
  const rec = JSON.parse(min.body) as Record<string, unknown>;
  assert.deepEqual(
    { ...rec, Id: 0, DateCreated: '', DateUpdated: '' },
    {
      Id: 0,
      Number: '442079460958',
      OptedOut: 0,
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
  // A form body.
  const form = await call(ctx.app, {
    method: 'POST',
    path: CREATE,
    token: demo.token,
    rawBody: 'Number=5553020001&FirstName=Form',
    contentType: 'application/x-www-form-urlencoded',
  });
  assert.equal(form.statusCode, 201, form.body);
  assert.equal((JSON.parse(form.body) as { Number: string }).Number, '15553020001');
  // "" and null are "not set" on create.
  const blanks = await call(ctx.app, {
    method: 'POST',
    path: CREATE,
    token: demo.token,
    body: { Number: '5553020002', Email: '', BirthDay: null, GroupIds: [], OptedOut: '' },
  });
  assert.equal(blanks.statusCode, 201, blanks.body);
  const b = JSON.parse(blanks.body) as Record<string, unknown>;
  assert.equal(b.Email, '');
  assert.equal(b.BirthDay, '0000-00-00');
  assert.deepEqual(b.GroupIds, []);
  assert.equal(b.OptedOut, 0);
});

storeTest('contacts/create: every rule with its exact message, in rule order; nothing written', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const other = await ctx.seed('Other account');
  const taken = demo.contacts[0]!;
  const national = taken.Number.slice(1); // 555…: read in the default region US
  const long = (n: number) => 'a'.repeat(n);
  await expectRejected(ctx, demo, { method: 'POST', path: CREATE, query: '' }, [
    { name: 'empty', body: {}, errors: [fieldError('Number', 'Number cannot be blank.')] },
    { name: 'blank number', body: { Number: '   ' }, errors: [fieldError('Number', 'Number cannot be blank.')] },
    { name: 'null number', body: { Number: null }, errors: [fieldError('Number', 'Number cannot be blank.')] },
    { name: 'bad number', body: { Number: '12' }, errors: [fieldError('Number', 'Number is invalid.')] },
    { name: 'array number', body: { Number: ['5553010001'] }, errors: [fieldError('Number', 'Number is invalid.')] },
    {
      name: 'taken (as sent)',
      body: { Number: `+${taken.Number}` },
      errors: [fieldError('Number', `Number "+${taken.Number}" has already been taken.`)],
    },
    {
      name: 'taken, national form',
      body: { Number: national },
      errors: [fieldError('Number', `Number "${national}" has already been taken.`)],
    },
    {
      name: 'first name too long',
      body: { Number: '5553010001', FirstName: long(256) },
      errors: [fieldError('FirstName', 'First Name should contain at most 255 characters.')],
    },
    {
      name: 'first name not a string',
      body: { Number: '5553010001', FirstName: 5 },
      errors: [fieldError('FirstName', 'First Name must be a string.')],
    },
    {
      name: 'last name',
      body: { Number: '5553010001', LastName: long(256) },
      errors: [fieldError('LastName', 'Last Name should contain at most 255 characters.')],
    },
    {
      name: 'city',
      body: { Number: '5553010001', City: long(256) },
      errors: [fieldError('City', 'City should contain at most 255 characters.')],
    },
    {
      name: 'email',
      body: { Number: '5553010001', Email: 'not-an-email' },
      errors: [fieldError('Email', 'Email is not a valid email address.')],
    },
    {
      name: 'email too long',
      body: { Number: '5553010001', Email: `${long(250)}@example.com` },
      errors: [fieldError('Email', 'Email should contain at most 255 characters.')],
    },
    {
      name: 'zip',
      body: { Number: '5553010001', Zip: long(33) },
      errors: [fieldError('Zip', 'Zip should contain at most 32 characters.')],
    },
    {
      name: 'birthday format',
      body: { Number: '5553010001', BirthDay: '1990/01/01' },
      errors: [fieldError('BirthDay', 'The format of Birth Day is invalid.')],
    },
    {
      name: 'birthday not a date',
      body: { Number: '5553010001', BirthDay: '2023-02-29' },
      errors: [fieldError('BirthDay', 'The format of Birth Day is invalid.')],
    },
    { name: 'opted out 2', body: { Number: '5553010001', OptedOut: 2 }, errors: [fieldError('OptedOut', 'Opted Out is invalid.')] },
    {
      name: 'opted out text',
      body: { Number: '5553010001', OptedOut: 'yes' },
      errors: [fieldError('OptedOut', 'Opted Out must be an integer.')],
    },
    {
      name: 'opted out 1.5',
      body: { Number: '5553010001', OptedOut: 1.5 },
      errors: [fieldError('OptedOut', 'Opted Out must be an integer.')],
    },
    {
      name: 'group ids not an array',
      body: { Number: '5553010001', GroupIds: String(demo.groups[0]!.Id) },
      errors: [fieldError('GroupIds', 'Group Ids is invalid.')],
    },
    {
      name: 'group ids not integers',
      body: { Number: '5553010001', GroupIds: ['a'] },
      errors: [fieldError('GroupIds', 'Group Ids is invalid.')],
    },
    {
      name: "another account's group",
      body: { Number: '5553010001', GroupIds: [demo.groups[0]!.Id, other.groups[0]!.Id] },
      errors: [fieldError('GroupIds', 'Group Ids is invalid.')],
    },
    {
      name: 'unknown group',
      body: { Number: '5553010001', GroupIds: [UNUSED_ID] },
      errors: [fieldError('GroupIds', 'Group Ids is invalid.')],
    },
    {
      name: 'every field at once, in rule order',
      body: {
        GroupIds: [UNUSED_ID],
        OptedOut: 3,
        BirthDay: 'x',
        Zip: long(40),
        Email: 'x',
        City: long(300),
        LastName: long(300),
        FirstName: long(300),
        Number: `+${taken.Number}`,
      },
      errors: [
        fieldError('Number', `Number "+${taken.Number}" has already been taken.`),
        fieldError('FirstName', 'First Name should contain at most 255 characters.'),
        fieldError('LastName', 'Last Name should contain at most 255 characters.'),
        fieldError('City', 'City should contain at most 255 characters.'),
        fieldError('Email', 'Email is not a valid email address.'),
        fieldError('Zip', 'Zip should contain at most 32 characters.'),
        fieldError('BirthDay', 'The format of Birth Day is invalid.'),
        fieldError('OptedOut', 'Opted Out is invalid.'),
        fieldError('GroupIds', 'Group Ids is invalid.'),
      ],
    },
    {
      name: 'blank number and a bad field',
      body: { FirstName: long(256), Number: '' },
      errors: [
        fieldError('Number', 'Number cannot be blank.'),
        fieldError('FirstName', 'First Name should contain at most 255 characters.'),
      ],
    },
  ]);
  // Another account may hold the same number.
  const same = await call(ctx.app, { method: 'POST', path: CREATE, token: other.token, body: { Number: `+${taken.Number}` } });
  assert.equal(same.statusCode, 422, 'the other demo account has the same numbers');
  const fresh = await call(ctx.app, { method: 'POST', path: CREATE, token: other.token, body: { Number: '+15553019999' } });
  assert.equal(fresh.statusCode, 201);
  assert.equal(
    (await call(ctx.app, { method: 'POST', path: CREATE, token: demo.token, body: { Number: '+15553019999' } })).statusCode,
    201,
    'unique per account only',
  );
});

storeTest('contacts/create: concurrent creates of one number, exactly one wins (unique index)', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const forms = ['+15553040001', '15553040001', '5553040001', '(555) 304-0001', '555-304-0001', '+1 555 304 0001'];
  const results = await Promise.all(
    forms.map((Number) => call(ctx.app, { method: 'POST', path: CREATE, token: demo.token, body: { Number } })),
  );
  assert.equal(results.filter((r) => r.statusCode === 201).length, 1);
  for (const [i, r] of results.entries()) {
    if (r.statusCode !== 201) assert422(r, [fieldError('Number', `Number "${forms[i]}" has already been taken.`)]);
  }
  const rows = await ctx.store.db.selectFrom('contacts').select('id').where('number_e164', '=', '+15553040001').execute();
  assert.equal(rows.length, 1);
});

// ------------------------------------------------------------------ update

storeTest('contacts/update: only the fields sent change (PUT and PATCH, JSON and XML)', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const c = demo.contacts.find(
    (x) => x.OptedOut === 0 && x.GroupIds.length > 0 && x.CustomFieldIds.length > 0 && x.Email !== '' && x.BirthDay !== '0000-00-00',
  )!;
  const id = c.Id;
  let n = 0;
  for (const method of ['PUT', 'PATCH'] as const) {
    for (const wire of WIRES) {
      n++;
      const before = await contactFromDb(ctx, id);
      const res = await call(ctx.app, {
        method,
        path: UPDATE,
        token: demo.token,
        query: `id=${id}`,
        wire,
        body: { FirstName: `Name ${n}`, Unknown: 'ignored' },
      });
      const after = await contactFromDb(ctx, id);
      assertBody(res, wire, 200, after);
      assert.deepEqual({ ...after, FirstName: before.FirstName, DateUpdated: before.DateUpdated }, before, 'nothing else changed');
      assert.equal(after.FirstName, `Name ${n}`);
    }
  }
  // Every field.
  const res = await call(ctx.app, {
    method: 'PUT',
    path: UPDATE,
    token: demo.token,
    query: `id=${id}`,
    body: {
      Number: '+1 (555) 309-0001',
      LastName: 'New',
      City: 'Reno',
      Email: 'new@example.com',
      Zip: '89501',
      BirthDay: '2000-02-29',
      OptedOut: 1,
      GroupIds: [demo.groups[3]!.Id],
    },
  });
  const rec = await contactFromDb(ctx, id);
  assertBody(res, 'json', 200, rec);
  assert.deepEqual(
    {
      Number: rec.Number,
      LastName: rec.LastName,
      City: rec.City,
      Email: rec.Email,
      Zip: rec.Zip,
      BirthDay: rec.BirthDay,
      OptedOut: rec.OptedOut,
      GroupIds: rec.GroupIds,
    },
    {
      Number: '15553090001',
      LastName: 'New',
      City: 'Reno',
      Email: 'new@example.com',
      Zip: '89501',
      BirthDay: '2000-02-29',
      OptedOut: 1,
      GroupIds: [demo.groups[3]!.Id],
    },
  );
  assert.deepEqual(rec.CustomFieldIds, c.CustomFieldIds, 'entries stay');
  // Clearing: Email "", BirthDay "" and null, GroupIds [] and null, FirstName "".
  for (const body of [
    { Email: '', BirthDay: '', GroupIds: [] },
    { BirthDay: null, GroupIds: null, FirstName: '' },
  ]) {
    const r = await call(ctx.app, { method: 'PATCH', path: UPDATE, token: demo.token, query: `id=${id}`, body });
    assert.equal(r.statusCode, 200, r.body);
  }
  const cleared = await contactFromDb(ctx, id);
  assert.equal(cleared.Email, '');
  assert.equal(cleared.BirthDay, '0000-00-00');
  assert.deepEqual(cleared.GroupIds, []);
  assert.equal(cleared.FirstName, '');
  assert.equal(cleared.LastName, 'New');
  // Its own number in another writing is not "taken"; an empty body changes nothing.
  const own = await call(ctx.app, { method: 'PUT', path: UPDATE, token: demo.token, query: `id=${id}`, body: { Number: '5553090001' } });
  assert.equal(own.statusCode, 200, own.body);
  const empty = await call(ctx.app, { method: 'PUT', path: UPDATE, token: demo.token, query: `id=${id}` });
  assert.equal(empty.statusCode, 200, empty.body);
  assert.equal((JSON.parse(empty.body) as { Number: string }).Number, '15553090001');
});

storeTest('contacts/update: an update that changes nothing leaves DateUpdated; a field or a GroupIds change moves it', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const PAST = 1_000_000_000;
  const c = demo.contacts.find((x) => x.GroupIds.length >= 2 && x.Email !== '' && x.BirthDay !== '0000-00-00')!;
  const id = c.Id;
  const past = () => ctx.store.db.updateTable('contacts').set({ updated_at: PAST }).where('id', '=', id).execute();
  const every = {
    Number: c.Number,
    FirstName: c.FirstName,
    LastName: c.LastName,
    City: c.City,
    Email: c.Email,
    Zip: c.Zip,
    BirthDay: c.BirthDay,
    OptedOut: c.OptedOut,
    GroupIds: c.GroupIds,
  };
  // The stored values again: every field, the number in other writings, the groups in another
  // order or repeated, OptedOut quoted, or no field at all.
  const sames: Record<string, unknown>[] = [
    every,
    { Number: `+${c.Number}`, GroupIds: [...c.GroupIds].reverse() },
    {
      Number: `+1 (${c.Number.slice(1, 4)}) ${c.Number.slice(4, 7)}-${c.Number.slice(7)}`,
      GroupIds: [...c.GroupIds, c.GroupIds[0]!],
      OptedOut: String(c.OptedOut),
    },
    {},
  ];
  for (const [i, body] of sames.entries()) {
    await past();
    const wire = WIRES[i % WIRES.length]!;
    const res = await call(ctx.app, { method: 'PUT', path: UPDATE, token: demo.token, query: `id=${id}`, wire, body });
    const after = await contactFromDb(ctx, id);
    assert.equal(after.DateUpdated, fmtTime(PAST), `${JSON.stringify(body)}: nothing saved`);
    assert.deepEqual({ ...after, DateUpdated: '' }, { ...c, DateUpdated: '' }, 'nothing changed');
    assertBody(res, wire, 200, after);
  }
  // One value that differs is a change, a membership as much as a field.
  for (const body of [
    { FirstName: `${c.FirstName}x` },
    { BirthDay: '' },
    { GroupIds: c.GroupIds.slice(1) },
    { GroupIds: [...c.GroupIds, demo.groups.find((g) => !c.GroupIds.includes(g.Id))!.Id] },
  ]) {
    await call(ctx.app, { method: 'PUT', path: UPDATE, token: demo.token, query: `id=${id}`, body: every });
    await past();
    const before = nowSeconds();
    const res = await call(ctx.app, { method: 'PATCH', path: UPDATE, token: demo.token, query: `id=${id}`, body });
    const after = await contactFromDb(ctx, id);
    assert.ok(after.DateUpdated >= fmtTime(before), `${JSON.stringify(body)}: DateUpdated moves`);
    assertBody(res, 'json', 200, after);
  }
});

storeTest('contacts/update: OptedOut 0 → 1 allowed, 1 → 1 fine, 1 → 0 refused', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const out = demo.contacts.find((x) => x.OptedOut === 1)!;
  const inn = demo.contacts.find((x) => x.OptedOut === 0)!;
  await expectRejected(ctx, demo, { method: 'PUT', path: UPDATE, query: `id=${out.Id}` }, [
    {
      name: '1 → 0',
      body: { OptedOut: 0 },
      errors: [fieldError('OptedOut', 'Opted Out can only be cleared by the contact texting START.')],
    },
    {
      name: '1 → "0"',
      body: { OptedOut: '0', FirstName: 'x' },
      errors: [fieldError('OptedOut', 'Opted Out can only be cleared by the contact texting START.')],
    },
    {
      name: 'with other errors, in rule order',
      body: { GroupIds: [UNUSED_ID], OptedOut: 0, Zip: 'z'.repeat(33) },
      errors: [
        fieldError('Zip', 'Zip should contain at most 32 characters.'),
        fieldError('OptedOut', 'Opted Out can only be cleared by the contact texting START.'),
        fieldError('GroupIds', 'Group Ids is invalid.'),
      ],
    },
  ]);
  const same = await call(ctx.app, { method: 'PUT', path: UPDATE, token: demo.token, query: `id=${out.Id}`, body: { OptedOut: 1 } });
  assertBody(same, 'json', 200, await contactFromDb(ctx, out.Id));
  const optOut = await call(ctx.app, { method: 'PATCH', path: UPDATE, token: demo.token, query: `id=${inn.Id}`, body: { OptedOut: 1 } });
  assert.equal(optOut.statusCode, 200);
  assert.equal((await contactFromDb(ctx, inn.Id)).OptedOut, 1);
  const back = await call(ctx.app, { method: 'PATCH', path: UPDATE, token: demo.token, query: `id=${inn.Id}`, body: { OptedOut: 0 } });
  assert422(back, [fieldError('OptedOut', 'Opted Out can only be cleared by the contact texting START.')]);
});

storeTest('contacts/update: rules and messages; Number may be left out but not sent blank; taken by another contact', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const other = await ctx.seed('Other account');
  const c = demo.contacts.find((x) => x.OptedOut === 0)!;
  const neighbour = demo.contacts.find((x) => x.Id !== c.Id)!;
  await expectRejected(ctx, demo, { method: 'PATCH', path: UPDATE, query: `id=${c.Id}` }, [
    { name: 'blank number', body: { Number: '' }, errors: [fieldError('Number', 'Number cannot be blank.')] },
    { name: 'null number', body: { Number: null }, errors: [fieldError('Number', 'Number cannot be blank.')] },
    { name: 'bad number', body: { Number: 'abc' }, errors: [fieldError('Number', 'Number is invalid.')] },
    {
      name: "another contact's number",
      body: { Number: `+${neighbour.Number}` },
      errors: [fieldError('Number', `Number "+${neighbour.Number}" has already been taken.`)],
    },
    { name: 'email', body: { Email: 'a@' }, errors: [fieldError('Email', 'Email is not a valid email address.')] },
    { name: 'birthday', body: { BirthDay: '1990-13-01' }, errors: [fieldError('BirthDay', 'The format of Birth Day is invalid.')] },
    {
      name: "another account's group",
      body: { GroupIds: [other.groups[0]!.Id] },
      errors: [fieldError('GroupIds', 'Group Ids is invalid.')],
    },
    { name: 'opted out 5', body: { OptedOut: 5 }, errors: [fieldError('OptedOut', 'Opted Out is invalid.')] },
  ]);
});

storeTest("contacts/update: 400 for the id, 404 before 422, another account's id is 404", async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const other = await ctx.seed('Other account');
  const before = await snapshotAccount(ctx, other.account.id);
  for (const wire of WIRES) {
    for (const id of [UNUSED_ID, other.contacts[0]!.Id]) {
      // A body that would fail validation: the missing record wins (API.md §1.5).
      const res = await call(ctx.app, {
        method: 'PUT',
        path: UPDATE,
        token: demo.token,
        query: `id=${id}`,
        wire,
        body: { Number: '', OptedOut: 7 },
      });
      assertError(res, 404, `Object not found: ${id}`, wire);
      const ok = await call(ctx.app, {
        method: 'PUT',
        path: UPDATE,
        token: demo.token,
        query: `id=${id}`,
        wire,
        body: { FirstName: 'Mine now' },
      });
      assertError(ok, 404, `Object not found: ${id}`, wire);
    }
  }
  assert.deepEqual(await snapshotAccount(ctx, other.account.id), before);
  assertError(await call(ctx.app, { method: 'PUT', path: UPDATE, token: demo.token, body: {} }), 400, 'Missing required parameters: id');
  const badJson = await call(ctx.app, { method: 'PUT', path: UPDATE, token: demo.token, query: `id=${UNUSED_ID}`, rawBody: '{bad' });
  assertError(badJson, 400, 'Invalid JSON data in request body: Syntax error');
});

// ------------------------------------------------------------------ delete

storeTest('contacts/delete: 204 with an empty body; memberships and entries go; 404 afterwards and for another account', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const other = await ctx.seed('Other account');
  const c = demo.contacts.find((x) => x.GroupIds.length > 0 && x.CustomFieldIds.length > 0)!;
  const messagesBefore = await ctx.store.db
    .selectFrom('scheduled_messages')
    .select('id')
    .where('account_id', '=', demo.account.id)
    .execute();
  const res = await call(ctx.app, { method: 'DELETE', path: DELETE, token: demo.token, query: `id=${c.Id}` });
  assert.equal(res.statusCode, 204);
  assert.equal(res.body, '');
  assert.equal(res.headers['content-length'], undefined);
  const db = ctx.store.db;
  assert.equal((await db.selectFrom('contacts').select('id').where('id', '=', c.Id).execute()).length, 0);
  assert.equal(
    (await db.selectFrom('group_members').select('group_id').where('contact_id', '=', c.Id).execute()).length,
    0,
    'memberships go',
  );
  assert.equal((await db.selectFrom('custom_field_entries').select('id').where('contact_id', '=', c.Id).execute()).length, 0, 'entries go');
  const messagesAfter = await db.selectFrom('scheduled_messages').select('id').where('account_id', '=', demo.account.id).execute();
  assert.deepEqual(messagesAfter, messagesBefore, 'messages stay');
  for (const g of demo.groups)
    assert.equal((await db.selectFrom('groups').select('id').where('id', '=', g.Id).execute()).length, 1, 'groups stay');
  for (const wire of WIRES) {
    assertError(
      await call(ctx.app, { method: 'DELETE', path: DELETE, token: demo.token, query: `id=${c.Id}`, wire }),
      404,
      `Object not found: ${c.Id}`,
      wire,
    );
    assertError(await call(ctx.app, { path: VIEW, token: demo.token, query: `id=${c.Id}`, wire }), 404, `Object not found: ${c.Id}`, wire);
  }
  const before = await snapshotAccount(ctx, other.account.id);
  assertError(
    await call(ctx.app, { method: 'DELETE', path: DELETE, token: demo.token, query: `id=${other.contacts[0]!.Id}` }),
    404,
    `Object not found: ${other.contacts[0]!.Id}`,
  );
  assert.deepEqual(await snapshotAccount(ctx, other.account.id), before, "another account's contact stays");
  assertError(await call(ctx.app, { method: 'DELETE', path: DELETE, token: demo.token }), 400, 'Missing required parameters: id');
  // The list no longer shows it.
  const list = JSON.parse((await call(ctx.app, { path: INDEX, token: demo.token })).body) as { Id: number }[];
  assert.equal(list.length, 49);
  assert.ok(!list.some((x) => x.Id === c.Id));
});

storeTest(
  'contacts/index: X-Pagination-Total-Count is the kept total, exact after creates, deletes, an import, plain SQL and for a new account',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const other = await ctx.seed('Other account');
    const total = async (token: string) =>
      (await call(ctx.app, { method: 'HEAD', path: INDEX, token })).headers['x-pagination-total-count'];
    const counted = async (accountId: number) =>
      String(
        (
          await ctx.store.db
            .selectFrom('contacts')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('account_id', '=', accountId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    assert.equal(await total(demo.token), '50');
    for (const n of ['+1 555 010 0901', '+1 555 010 0902']) {
      assert.equal((await call(ctx.app, { method: 'POST', path: CREATE, token: demo.token, body: { Number: n } })).statusCode, 201);
    }
    assert.equal(
      (await call(ctx.app, { method: 'DELETE', path: DELETE, token: demo.token, query: `id=${demo.contacts[0]!.Id}` })).statusCode,
      204,
    );
    const imported = await ctx.app.inject({
      method: 'POST',
      url: `/v1/contacts/import?access_token=${demo.token}`,
      headers: { 'content-type': 'text/csv' },
      payload: 'Number\n+15550100903\n+15550100904\n+15550100901\n',
    });
    assert.equal(imported.statusCode, 200, imported.body);
    // A writer outside the API (the triggers keep the total whoever writes).
    await ctx.store.db.deleteFrom('contacts').where('account_id', '=', demo.account.id).where('id', '=', demo.contacts[1]!.Id).execute();
    assert.equal(await total(demo.token), await counted(demo.account.id));
    assert.equal(await total(demo.token), '52');
    assert.equal(await total(other.token), '50', "another account's total is its own");
    // An account without a contact has no total row yet: 0.
    const fresh = await ctx.seed('Fresh account');
    await ctx.store.db.deleteFrom('contacts').where('account_id', '=', fresh.account.id).execute();
    assert.equal(await total(fresh.token), '0');
    assert.equal(await counted(fresh.account.id), '0');
  },
);
