/**
 * API.md §3.2: request bodies. JSON and form-urlencoded are parsed, chosen by the exact
 * lower-case media type before any `;` (API.md §3.2); an empty body or JSON null means no fields; invalid
 * JSON is 400; other media types 415.
 */
import assert from 'node:assert/strict';
import { ids, MSG, rawRequest, REASON, sharedSetup } from '../helpers/conventions.ts';
import { assert422, assertError } from '../helpers/operations.ts';
import { withToken } from '../helpers/app.ts';
import { storeTest } from '../helpers/stores.ts';

const shared = sharedSetup();

const BLANK_FNAME = [{ field: 'fname', message: 'Fname cannot be blank.' }];

storeTest('API.md §3.2 / API.md §3.2 application/json is chosen by the exact lower-case media type; parameters are ignored', async () => {
  const { inject, url, demo } = await shared();
  const { group } = ids(demo);
  const parsed = [
    'application/json',
    'application/json; charset=utf-8',
    'application/json;charset=UTF-8',
    'application/json; charset=iso-8859-1; foo=bar',
  ];
  for (const [i, type] of parsed.entries()) {
    const res = await inject({
      method: 'PUT',
      url: url('/v1/groups/update', `id=${group}`),
      headers: { 'content-type': type },
      payload: JSON.stringify({ fname: `Name ${i}` }),
    });
    assert.equal(res.statusCode, 200, `${type}: ${res.body}`);
    assert.equal(JSON.parse(res.body).Name, `Name ${i}`);
  }
  // API.md §2.4: the media type before `;` is compared exactly, so odd casing or a space before `;` is not JSON.
  for (const type of ['application/json ; charset=utf-8', 'Application/JSON', 'APPLICATION/JSON', 'application/Json;charset=utf-8']) {
    const res = await inject({
      method: 'PUT',
      url: url('/v1/groups/update', `id=${group}`),
      headers: { 'content-type': type },
      payload: JSON.stringify({ fname: 'Never set' }),
    });
    assertError(res, 415, 'Unsupported Media Type: send the body as application/json or application/x-www-form-urlencoded.');
  }
});

storeTest('API.md §3.2 form-urlencoded bodies work on every write', async () => {
  const { inject, url, demo } = await shared();
  const { group, field, entry, entryBody, activeNumber } = ids(demo);
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  const g = await inject({
    method: 'PUT',
    url: url('/v1/groups/update', `id=${group}`),
    headers: form,
    payload: 'fname=Form+Group&fnote=caf%C3%A9+%26+more',
  });
  assert.equal(g.statusCode, 200, g.body);
  assert.equal(JSON.parse(g.body).Name, 'Form Group');
  assert.equal(JSON.parse(g.body).Note, 'café & more');
  const charset = await inject({
    method: 'PATCH',
    url: url('/v1/custom-contact-fields/update', `id=${field}`),
    headers: { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' },
    payload: 'fname=Form+Field',
  });
  assert.equal(charset.statusCode, 200, charset.body);
  assert.equal(JSON.parse(charset.body).Name, 'Form Field');
  const e = await inject({
    method: 'POST',
    url: url('/v1/custom-contact-fields-entry/update', `id=${entry}`),
    headers: form,
    payload: `frfield=${entryBody.frfield}&frcontact=${entryBody.frcontact}&fvalue=Orange`,
  });
  assert.equal(e.statusCode, 200, e.body);
  assert.equal(JSON.parse(e.body).Entry, 'Orange');
  const k = await inject({
    method: 'POST',
    url: url('/v1/keyword/reserve'),
    headers: form,
    payload: `Keyword=FORMKW&Number=${activeNumber}&AutoreplyMessage=Hi+there`,
  });
  assert.equal(k.statusCode, 201, k.body);
  assert.equal(JSON.parse(k.body)[0].Keyword, 'FORMKW');
  // Form fields are validated like JSON ones.
  assert422(await inject({ method: 'PUT', url: url('/v1/groups/update', `id=${group}`), headers: form, payload: 'fname=ab' }), [
    { field: 'fname', message: 'Fname should contain at least 3 characters.' },
  ]);
  assert422(await inject({ method: 'PUT', url: url('/v1/groups/update', `id=${group}`), headers: form, payload: 'other=1' }), BLANK_FNAME);
});

storeTest('API.md §3.2 empty body, JSON null and non-object JSON mean no fields: "cannot be blank"', async () => {
  const { inject, url, demo } = await shared();
  const { group, field, entry } = ids(demo);
  const cases: { headers: Record<string, string>; payload?: string }[] = [
    { headers: {} },
    { headers: { 'content-type': 'application/json' } },
    { headers: { 'content-type': 'application/json' }, payload: '' },
    { headers: { 'content-type': 'application/json' }, payload: 'null' },
    { headers: { 'content-type': 'application/json' }, payload: ' null \n' },
    { headers: { 'content-type': 'application/json' }, payload: '{}' },
    { headers: { 'content-type': 'application/json' }, payload: '[]' },
    { headers: { 'content-type': 'application/json' }, payload: '"fname"' },
    { headers: { 'content-type': 'application/json' }, payload: '42' },
    { headers: { 'content-type': 'application/json' }, payload: 'true' },
    { headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: '' },
    { headers: { 'content-type': 'text/plain' }, payload: '' },
  ];
  for (const c of cases) {
    const res = await inject({ method: 'PUT', url: url('/v1/groups/update', `id=${group}`), ...c });
    assert422(res, BLANK_FNAME);
    const f = await inject({ method: 'PUT', url: url('/v1/custom-contact-fields/update', `id=${field}`), ...c });
    assert422(f, BLANK_FNAME);
  }
  const entryRes = await inject({
    method: 'POST',
    url: url('/v1/custom-contact-fields-entry/update', `id=${entry}`),
    headers: { 'content-type': 'application/json' },
    payload: 'null',
  });
  assert422(entryRes, [
    { field: 'frfield', message: 'Frfield cannot be blank.' },
    { field: 'frcontact', message: 'Frcontact cannot be blank.' },
    { field: 'fvalue', message: 'Fvalue cannot be blank.' },
  ]);
  const reserve = await inject({ method: 'POST', url: url('/v1/keyword/reserve') });
  assert422(reserve, [
    { field: 'Keyword', message: 'Keyword cannot be blank.' },
    { field: 'Number', message: 'Number cannot be blank.' },
  ]);
  // Blank values: null, "", [] and whitespace only.
  for (const blank of ['null', '""', '[]', '"   "', '" \\t\\n "']) {
    assert422(
      await inject({
        method: 'PUT',
        url: url('/v1/groups/update', `id=${group}`),
        headers: { 'content-type': 'application/json' },
        payload: `{"fname":${blank}}`,
      }),
      BLANK_FNAME,
    );
  }
});

storeTest('API.md §3.2 invalid JSON is 400 "Invalid JSON data in request body: Syntax error"', async () => {
  const { inject, url, demo } = await shared();
  const { group } = ids(demo);
  for (const payload of ['{', '{"fname":"abc"', "{'fname':'abc'}", '{"fname":"abc",}', 'fname=abc', 'nul', '{"fname":"abc"} x']) {
    const res = await inject({
      method: 'PUT',
      url: url('/v1/groups/update', `id=${group}`),
      headers: { 'content-type': 'application/json' },
      payload,
    });
    assertError(res, 400, MSG.badJson);
    assert.ok(res.headers['x-rate-limit-limit'] !== undefined);
  }
  const xml = await inject({
    method: 'POST',
    url: url('/v1/keyword/reserve'),
    headers: { 'content-type': 'application/json', accept: 'application/xml' },
    payload: '{',
  });
  assertError(xml, 400, MSG.badJson, 'xml');
});

storeTest('API.md §3.2 invalid UTF-8 and lone surrogate escapes in JSON are 400', async () => {
  const { inject, url, demo } = await shared();
  const { group } = ids(demo);
  const bodies: Buffer[] = [
    Buffer.concat([Buffer.from('{"fname":"ab'), Buffer.from([0xff, 0xfe]), Buffer.from('cd"}')]),
    Buffer.concat([Buffer.from('{"fname":"ab'), Buffer.from([0xc3]), Buffer.from('"}')]),
    Buffer.concat([Buffer.from('{"fname":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('abc"}')]),
    Buffer.from('{"fname":"\\ud800abc"}'),
    Buffer.from('{"fname":"abc\\udc00"}'),
    Buffer.from('{"fname":"ok","fnote":"\\udfff\\ud800"}'),
  ];
  for (const payload of bodies) {
    const res = await inject({
      method: 'PUT',
      url: url('/v1/groups/update', `id=${group}`),
      headers: { 'content-type': 'application/json' },
      payload,
    });
    assert.equal(res.statusCode, 400, `${payload.toString('hex')}: ${res.body}`);
    const body = JSON.parse(res.body);
    assert.deepEqual(Object.keys(body), ['name', 'message', 'code', 'status']);
    assert.equal(body.name, REASON[400]);
    assert.match(body.message, /^Invalid JSON data in request body: /);
  }
  // A paired surrogate escape is fine.
  const ok = await inject({
    method: 'PUT',
    url: url('/v1/groups/update', `id=${group}`),
    headers: { 'content-type': 'application/json' },
    payload: '{"fname":"abc \\ud83d\\ude00"}',
  });
  assert.equal(ok.statusCode, 200, ok.body);
  assert.equal(JSON.parse(ok.body).Name, 'abc 😀');
});

storeTest('API.md §3.2 a body without Content-Type is 415; unknown keys are ignored', async () => {
  const { inject, url, demo, ctx, token } = await shared();
  const { group } = ids(demo);
  const res = await inject({ method: 'PUT', url: url('/v1/groups/update', `id=${group}`), payload: '{"fname":"Valid name"}' });
  assert.equal(res.statusCode, 415, res.body);
  assert.equal(JSON.parse(res.body).name, 'Unsupported Media Type');
  // The same on a real socket (no Content-Type header at all).
  const raw = await rawRequest(ctx, {
    method: 'PUT',
    path: withToken(`/v1/groups/update?id=${group}`, token),
    body: '{"fname":"Valid name"}',
  });
  assert.equal(raw.statusCode, 415, raw.body);
  const extra = await inject({
    method: 'PUT',
    url: url('/v1/groups/update', `id=${group}`),
    headers: { 'content-type': 'application/json' },
    payload: '{"fname":"Valid name","Id":1,"unknown":[1,2]}',
  });
  assert.equal(extra.statusCode, 200, extra.body);
  assert.equal(JSON.parse(extra.body).Id, group);
});
