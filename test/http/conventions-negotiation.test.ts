/**
 * API.md §2.3: `_format`, Accept negotiation, Vary, content types, the JSON and XML layouts,
 * escaping, and header names exactly as written on the wire.
 */
import assert from 'node:assert/strict';
import { toXmlDocument } from '../../src/http/serializers/xml.ts';
import { withToken } from '../helpers/app.ts';
import { emptyAccount, ids, JSON_BODY, MSG, rawHeaderNames, rawRequest, sharedSetup } from '../helpers/conventions.ts';
import { assertError, JSON_TYPE, XML_DECL, XML_TYPE } from '../helpers/operations.ts';
import { storeTest } from '../helpers/stores.ts';

const shared = sharedSetup();

storeTest('API.md §2 _format=json|xml overrides Accept; any other value is 406', async () => {
  const { inject, url } = await shared();
  const xml = await inject({ url: url('/v1/credits/balance', '_format=xml'), headers: { accept: 'application/json' } });
  assert.equal(xml.statusCode, 200);
  assert.equal(xml.headers['content-type'], XML_TYPE);
  assert.equal(xml.body, `${XML_DECL}\n<response><AvailableCredits>2500</AvailableCredits></response>\n`);
  const json = await inject({ url: url('/v1/credits/balance', '_format=json'), headers: { accept: 'application/xml' } });
  assert.equal(json.headers['content-type'], JSON_TYPE);
  assert.equal(json.body, '{"AvailableCredits":2500}');
  // The override also rescues an Accept that matches nothing.
  const rescued = await inject({ url: url('/v1/credits/balance', '_format=xml'), headers: { accept: 'text/html' } });
  assert.equal(rescued.statusCode, 200);
  assert.equal(rescued.headers['content-type'], XML_TYPE);
  // _format before access_token in the query works the same.
  const first = await inject({ url: '/v1/credits/balance?_format=xml&access_token=bad' });
  assertError(first, 401, MSG.invalidCredentials, 'xml');
  for (const value of ['yaml', 'JSON', 'Xml', 'html', '', 'json ']) {
    const res = await inject({
      url: url('/v1/credits/balance', `_format=${encodeURIComponent(value)}`),
      headers: { accept: 'application/json' },
    });
    assertError(res, 406, MSG.formatNotSupported(value));
    assert.equal(res.headers.vary, 'Accept');
  }
});

storeTest('API.md §2 Accept: media ranges sorted by q, specific before wildcard, first exact match wins', async () => {
  const { inject, url } = await shared();
  const cases: [string | undefined, 'json' | 'xml' | 406][] = [
    [undefined, 'json'],
    ['', 'json'],
    ['application/json', 'json'],
    ['application/xml', 'xml'],
    ['*/*', 'json'],
    ['application/xml;q=0.5, application/json;q=0.9', 'json'],
    ['application/json;q=0.5, application/xml;q=0.9', 'xml'],
    ['application/json; q=0.1, application/xml; q=1.0', 'xml'],
    ['application/json;q=0.5, application/xml;q=0.5', 'json'],
    ['application/xml;q=0.5, application/json;q=0.5', 'xml'],
    ['text/html, */*', 'json'],
    ['text/html', 406],
    ['application/*', 406],
    ['text/*, image/*', 406],
    ['application/xml, */*', 'xml'],
    ['*/*, application/xml', 'xml'],
    ['*/*;q=0.9, application/xml;q=0.1', 'xml'],
    ['application/*, application/xml;q=0.2', 'xml'],
    ['text/html, application/xhtml+xml, application/xml;q=0.9, */*;q=0.8', 'xml'],
    ['text/html;q=0.9, */*;q=0.8', 'json'],
    ['application/xml;q=0.5, text/html', 'xml'],
    ['  application/xml  ;  q=1  ', 'xml'],
    ['application/xml;charset=UTF-8', 'xml'],
    ['application/json;version=2', 'json'],
    [',,application/xml,,', 'xml'],
    ['application/json, application/xml', 'json'],
    ['application/xml, application/json', 'xml'],
    ['text/xml', 406],
    ['application/problem+json', 406],
  ];
  for (const [accept, expected] of cases) {
    const res = await inject({ url: url('/v1/credits/balance'), headers: accept === undefined ? {} : { accept } });
    if (expected === 406) {
      assertError(res, 406, MSG.notAcceptable);
    } else {
      assert.equal(res.statusCode, 200, `Accept ${JSON.stringify(accept)}`);
      assert.equal(res.headers['content-type'], expected === 'json' ? JSON_TYPE : XML_TYPE, `Accept ${JSON.stringify(accept)}`);
    }
    assert.equal(res.headers.vary, 'Accept');
  }
});

storeTest('API.md §2 Vary: Accept on every response past routing', async () => {
  const { inject, url, demo } = await shared();
  const { group } = ids(demo);
  const responses = [
    await inject({ url: url('/v1/numbers/index') }),
    await inject({ url: url('/v1/credits/balance'), headers: { accept: 'application/xml' } }),
    await inject({ method: 'HEAD', url: url('/v1/sms/single-schedule-messages') }),
    await inject({ method: 'PUT', url: url('/v1/groups/update', `id=${group}`), headers: JSON_BODY, payload: '{"fname":"Group name"}' }),
    await inject({ method: 'PUT', url: url('/v1/groups/update', `id=${group}`), headers: JSON_BODY, payload: '{}' }),
    await inject({ method: 'PUT', url: url('/v1/groups/update'), headers: JSON_BODY, payload: '{}' }),
    await inject({ method: 'DELETE', url: url('/v1/groups/update') }),
    await inject({ url: '/v1/numbers/index' }),
    await inject({ url: url('/v1/numbers/index'), headers: { accept: 'text/html' } }),
  ];
  for (const res of responses) assert.equal(res.headers.vary, 'Accept', `${res.statusCode}`);
});

storeTest('API.md §2 JSON: content type, null, non-ASCII and slashes not escaped', async () => {
  const { inject, url, demo } = await shared();
  const { group } = ids(demo);
  const numbers = await inject({ url: url('/v1/numbers/index') });
  assert.equal(numbers.headers['content-type'], JSON_TYPE);
  assert.ok(numbers.body.includes('"Status_Id":0,"Status_Description":"Active","Blocked_Date":null'));
  const name = 'Café/Ünïcode ✓ 😀 "q" \\ </script>';
  const res = await inject({
    method: 'PUT',
    url: url('/v1/groups/update', `id=${group}`),
    headers: JSON_BODY,
    payload: JSON.stringify({ fname: name }),
  });
  assert.equal(res.statusCode, 200, res.body);
  assert.ok(res.body.includes('"Name":"Café/Ünïcode ✓ 😀 \\"q\\" \\\\ </script>"'), res.body);
  assert.ok(!res.body.includes('\\/'), 'slashes are not escaped');
  assert.ok(!/\\u[0-9a-f]{4}/i.test(res.body), 'non-ASCII is not escaped');
  assert.equal(JSON.parse(res.body).Name, name);
});

storeTest('API.md §2.3 XML: escaping of & < >, C0 controls dropped, tab and newline kept, UTF-8 as is', async () => {
  const { inject, url, demo } = await shared();
  const { group } = ids(demo);
  const name = 'A & <B> "c" \'d\' \u0001\u0008\u000B\u000C\u001F é/✓';
  const note = 'tab\there\nline';
  const res = await inject({
    method: 'PUT',
    url: url('/v1/groups/update', `id=${group}`),
    headers: { ...JSON_BODY, accept: 'application/xml' },
    payload: JSON.stringify({ fname: name, fnote: note }),
  });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers['content-type'], XML_TYPE);
  assert.ok(res.body.includes('<Name>A &amp; &lt;B&gt; "c" \'d\'  é/✓</Name>'), res.body);
  assert.ok(res.body.includes('<Note>tab\there\nline</Note>'), res.body);
  assert.doesNotMatch(res.body, /[\u0000-\u0008\u000B\u000C\u000E-\u001F]/);
  // The JSON form keeps the control characters (escaped by JSON itself).
  const json = await inject({
    url: url('/v1/groups/update', `id=${group}`),
    method: 'PATCH',
    headers: JSON_BODY,
    payload: JSON.stringify({ fname: name }),
  });
  assert.equal(JSON.parse(json.body).Name, name);
});

storeTest('API.md §2.3 XML layout: declaration line, one line, trailing newline; lists, records, empty values', async () => {
  const { inject, url, ctx, demo } = await shared();
  // A list: one <item> per record; null → <X></X>.
  const numbers = await inject({ url: url('/v1/numbers/index'), headers: { accept: 'application/xml' } });
  assert.ok(
    numbers.body.startsWith(
      `${XML_DECL}\n<response><item><Number>55155</Number><Status_Id>0</Status_Id><Status_Description>Active</Status_Description><Blocked_Date></Blocked_Date></item><item>`,
    ),
    numbers.body,
  );
  assert.ok(numbers.body.endsWith('</item></response>\n'));
  assert.equal(numbers.body.split('\n').length, 3, 'declaration, document, empty tail');
  // A single record: fields directly under <response>; "" → <X></X>; nested arrays → <item>s; [] → <X/>.
  const contact = demo.contacts.find((c) => c.Email === '' && c.GroupIds.length > 0 && c.CustomFieldIds.length === 0);
  assert.ok(contact, 'demo has a contact without email, in a group, without custom fields');
  const found = await inject({ url: url('/v1/contacts/find', `number=${contact.Number}`), headers: { accept: 'application/xml' } });
  assert.equal(found.statusCode, 200, found.body);
  assert.ok(found.body.startsWith(`${XML_DECL}\n<response><Id>${contact.Id}</Id><Number>${contact.Number}</Number>`), found.body);
  assert.ok(found.body.includes('<Email></Email>'));
  assert.ok(found.body.includes(`<GroupIds>${contact.GroupIds.map((g) => `<item>${g}</item>`).join('')}</GroupIds>`));
  assert.ok(found.body.includes('<CustomFieldIds/>'));
  // An empty list is <response/>.
  const empty = await emptyAccount(ctx);
  const none = await inject({ url: withToken('/v1/numbers/index', empty.token), headers: { accept: 'application/xml' } });
  assert.equal(none.body, `${XML_DECL}\n<response/>\n`);
  const noneJson = await inject({ url: withToken('/v1/numbers/index', empty.token) });
  assert.equal(noneJson.body, '[]');
  // Booleans (no record field is boolean today; the serializer is what decides).
  assert.equal(
    toXmlDocument({ a: true, b: false, c: null, d: '', e: [], f: [1, 2] }),
    `${XML_DECL}\n<response><a>true</a><b>false</b><c></c><d></d><e/><f><item>1</item><item>2</item></f></response>\n`,
  );
});

storeTest('API.md §2 header names go on the wire exactly as written', async () => {
  const { ctx, token } = await shared();
  const res = await rawRequest(ctx, { path: withToken('/v1/numbers/index', token, 'per-page=2&page=2') });
  assert.equal(res.statusCode, 200);
  const names = rawHeaderNames(res);
  for (const name of [
    'X-Rate-Limit-Limit',
    'X-Rate-Limit-Remaining',
    'X-Rate-Limit-Reset',
    'X-Pagination-Total-Count',
    'X-Pagination-Page-Count',
    'X-Pagination-Current-Page',
    'X-Pagination-Per-Page',
    'Link',
    'Vary',
  ]) {
    assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
  }
  const balance = await rawRequest(ctx, { path: withToken('/v1/credits/balance', token) });
  assert.ok(rawHeaderNames(balance).includes('Link'));
  assert.ok(rawHeaderNames(balance).includes('X-Pagination-Total-Count'));
  // Rate headers keep their casing on errors too; Allow on a 405.
  const notFound = await rawRequest(ctx, {
    method: 'PUT',
    path: withToken('/v1/groups/update?id=999999', token),
    headers: JSON_BODY,
    body: '{}',
  });
  assert.equal(notFound.statusCode, 404);
  assert.ok(rawHeaderNames(notFound).includes('X-Rate-Limit-Remaining'));
  const notAllowed = await rawRequest(ctx, { method: 'DELETE', path: withToken('/v1/groups/update', token) });
  assert.ok(rawHeaderNames(notAllowed).includes('Allow'));
});
