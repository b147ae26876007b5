/**
 * API.md §4 (error body, messages, status text) and the API.md §1.2 authentication rules a client sees
 * as 401s.
 */
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { issueToken } from '../../src/domain/accounts.ts';
import { revokeToken } from '../../src/store/repositories/accounts.ts';
import { withToken } from '../helpers/app.ts';
import { ALL_METHODS, ALLOW, errorText, ids, JSON_BODY, MSG, rawRequest, REASON, setup, sharedSetup } from '../helpers/conventions.ts';
import { assert422, assertError, JSON_TYPE, XML_DECL, XML_TYPE } from '../helpers/operations.ts';
import { storeTest } from '../helpers/stores.ts';

const shared = sharedSetup();

storeTest('API.md §4 error body: keys name, message, code, status in order, in JSON and in XML', async () => {
  const { inject } = await shared();
  const json = await inject({ url: '/v1/numbers/index' });
  assert.equal(json.body, '{"name":"Unauthorized","message":"Your request was made with invalid credentials.","code":0,"status":401}');
  assert.equal(json.headers['content-type'], JSON_TYPE);
  const viaAccept = await inject({ url: '/v1/numbers/index', headers: { accept: 'application/xml' } });
  assert.equal(
    viaAccept.body,
    '<?xml version="1.0" encoding="UTF-8"?>\n<response><name>Unauthorized</name><message>Your request was made with invalid credentials.</message><code>0</code><status>401</status></response>\n',
  );
  assert.equal(viaAccept.headers['content-type'], XML_TYPE);
  const viaFormat = await inject({ url: '/v1/numbers/index?_format=xml' });
  assert.equal(viaFormat.body, viaAccept.body);
});

storeTest('API.md §4 400: missing id / number and invalid id values', async () => {
  const { inject, url } = await shared();
  for (const path of ['/v1/groups/update', '/v1/custom-contact-fields/update', '/v1/custom-contact-fields-entry/update']) {
    assertError(await inject({ method: 'PUT', url: url(path), headers: JSON_BODY, payload: '{}' }), 400, MSG.missing('id'));
    assertError(await inject({ method: 'PUT', url: url(path), headers: { accept: 'application/xml' } }), 400, MSG.missing('id'), 'xml');
    for (const bad of ['id=abc', 'id=1.5', 'id=', 'id[]=1', 'id=12abc', 'id=0x1A', 'id=1e3']) {
      const res = await inject({ method: 'PUT', url: url(path, bad), headers: JSON_BODY, payload: '{}' });
      assertError(res, 400, MSG.invalidId);
    }
  }
  assertError(await inject({ url: url('/v1/contacts/find') }), 400, MSG.missing('number'));
  assertError(await inject({ url: url('/v1/contacts/find'), headers: { accept: 'application/xml' } }), 400, MSG.missing('number'), 'xml');
});

storeTest('API.md §4 / API.md §1.2 401: missing, empty, unknown, revoked or array token; no WWW-Authenticate', async () => {
  const { inject, ctx, demo, token } = await shared();
  const second = await issueToken(ctx.store, demo.account.id, 'second');
  assert.equal((await inject({ url: withToken('/v1/credits/balance', second.token) })).statusCode, 200);
  assert.equal(await revokeToken(ctx.store.db, { id: second.id }, Math.floor(Date.now() / 1000)), 1);

  const urls = [
    '/v1/credits/balance',
    '/v1/credits/balance?access_token=',
    '/v1/credits/balance?access_token',
    '/v1/credits/balance?access_token=not-a-real-token',
    `/v1/credits/balance?access_token=${token}x`,
    `/v1/credits/balance?access_token=${token.toUpperCase() === token ? token.toLowerCase() : token.toUpperCase()}`,
    withToken('/v1/credits/balance', second.token),
    `/v1/credits/balance?access_token[]=${token}`,
    `/v1/credits/balance?access_token[0]=${token}`,
    '/v1/credits/balance?access_token[]=x',
    `/v1/credits/balance?ACCESS_TOKEN=${token}`,
    `/v1/credits/balance?token=${token}`,
  ];
  for (const u of urls) {
    const res = await inject({ url: u });
    assertError(res, 401, MSG.invalidCredentials);
    assert.equal(res.headers['www-authenticate'], undefined, u);
  }
  // The token is read from the query or from `Authorization: Bearer` (API.md §1.2, §15.3), nowhere else.
  assert.equal((await inject({ url: '/v1/credits/balance', headers: { authorization: `Bearer ${token}` } })).statusCode, 200);
  for (const headers of [{ authorization: `Bearer ${second.token}` }, { 'x-api-key': token }, { cookie: `access_token=${token}` }]) {
    const res = await inject({ url: '/v1/credits/balance', headers });
    assertError(res, 401, MSG.invalidCredentials);
    assert.equal(res.headers['www-authenticate'], undefined);
  }
  const xml = await inject({ url: '/v1/credits/balance?access_token=nope', headers: { accept: 'application/xml' } });
  assertError(xml, 401, MSG.invalidCredentials, 'xml');
  // The other live token still works: only the revoked one is refused.
  assert.equal((await inject({ url: withToken('/v1/credits/balance', token) })).statusCode, 200);
});

storeTest('API.md §1.2 repeated access_token: the last value wins', async () => {
  const { inject, token } = await shared();
  const lastGood = await inject({ url: `/v1/credits/balance?access_token=bad&access_token=${token}` });
  assert.equal(lastGood.statusCode, 200);
  assert.equal(lastGood.body, '{"AvailableCredits":2500}');
  const lastBad = await inject({ url: `/v1/credits/balance?access_token=${token}&access_token=bad` });
  assertError(lastBad, 401, MSG.invalidCredentials);
  const lastEmpty = await inject({ url: `/v1/credits/balance?access_token=${token}&access_token=` });
  assertError(lastEmpty, 401, MSG.invalidCredentials);
});

storeTest('API.md §4 404 unknown path: "Page not found." in the negotiated format, never HTML', async () => {
  const { inject, url } = await shared();
  const paths = [
    '/v1/nope',
    '/v2/numbers/index',
    '/',
    '/v1',
    '/v1/',
    // API.md §3.5: a trailing slash, leading repeated slashes and a controller alone route (see
    // test/http/conventions-fine-points.test.ts); repeated slashes inside the path and a controller
    // without an `index` action do not.
    '/v1//numbers/index',
    '/v1/credits',
    '/v1/credits/',
    '/v1/nope/',
    '/v1/numbers/index.json',
    '/v1/groups/update/1',
    '/favicon.ico',
  ];
  for (const p of paths) {
    assertError(await inject({ url: url(p) }), 404, MSG.pageNotFound);
    assertError(await inject({ url: p }), 404, MSG.pageNotFound);
    assertError(await inject({ method: 'POST', url: p, headers: JSON_BODY, payload: '{' }), 404, MSG.pageNotFound);
    assertError(await inject({ url: p, headers: { accept: 'application/xml' } }), 404, MSG.pageNotFound, 'xml');
    assertError(await inject({ url: `${p}?_format=xml` }), 404, MSG.pageNotFound, 'xml');
    assertError(await inject({ url: p, headers: { accept: 'text/html' } }), 404, MSG.pageNotFound);
  }
});

storeTest('API.md §4 404 unknown path over a real socket: dot segments are not normalised, no HTML', async () => {
  const { ctx, token } = await shared();
  // `/v1/numbers/index/` routes since API.md §3.5 (trailing slash ignored); `/v1//numbers/index` does not.
  for (const path of [
    '/v1/../v1/numbers/index',
    '/v1/./numbers/index',
    '/v1/numbers/index/..',
    '/v1//numbers/index',
    '/v1//numbers/index/',
    '/v1/credits',
  ]) {
    const res = await rawRequest(ctx, { path: withToken(path, token), headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    assert.equal(res.statusCode, 404, path);
    assert.equal(res.statusMessage, 'Not Found');
    assert.equal(res.headers['content-type'], JSON_TYPE);
    assert.equal(res.body, errorText(404, MSG.pageNotFound));
  }
});

storeTest('API.md §4 404 unknown path: a broken %-escape in the path is a 404 too, in the shape and format', async () => {
  const { ctx, token } = await shared();
  for (const path of ['/%', '/v1/%E0%A4%A', '/v1/numbers/index%', '/v1/numbers/%ZZ']) {
    const res = await rawRequest(ctx, { path: withToken(path, token) });
    assert.equal(res.statusCode, 404, `${path}: ${res.body}`);
    assert.equal(res.statusMessage, 'Not Found');
    assert.equal(res.headers['content-type'], JSON_TYPE);
    assert.equal(res.body, errorText(404, MSG.pageNotFound));
    assert.ok(!res.body.includes(token));
    const xml = await rawRequest(ctx, { path: withToken(path, token), headers: { accept: 'application/xml' } });
    assert.equal(xml.headers['content-type'], XML_TYPE);
    assert.equal(xml.body, errorText(404, MSG.pageNotFound, 'xml'));
  }
});

storeTest('API.md §4 404 record: "Object not found: {id}", also for another account\'s id', async () => {
  const { inject, url, demo, ctx } = await shared();
  const mine = ids(demo);
  const theirs = ids(await ctx.seed('Other account'));
  const bodies: Record<string, object> = {
    '/v1/groups/update': { fname: 'Valid name', fnote: 'Valid note' },
    '/v1/custom-contact-fields/update': { fname: 'Valid field' },
    '/v1/custom-contact-fields-entry/update': mine.entryBody,
  };
  const foreign: Record<string, number> = {
    '/v1/groups/update': theirs.group,
    '/v1/custom-contact-fields/update': theirs.field,
    '/v1/custom-contact-fields-entry/update': theirs.entry,
  };
  for (const [path, body] of Object.entries(bodies)) {
    const payload = JSON.stringify(body);
    assertError(await inject({ method: 'PUT', url: url(path, 'id=999999'), headers: JSON_BODY, payload }), 404, MSG.notFound(999999));
    assertError(await inject({ method: 'PUT', url: url(path, 'id=0'), headers: JSON_BODY, payload }), 404, MSG.notFound(0));
    assertError(await inject({ method: 'PUT', url: url(path, 'id=-3'), headers: JSON_BODY, payload }), 404, MSG.notFound(-3));
    assertError(
      await inject({ method: 'PUT', url: url(path, `id=${foreign[path]}`), headers: JSON_BODY, payload }),
      404,
      MSG.notFound(foreign[path]!),
    );
    assertError(
      await inject({
        method: 'PATCH',
        url: url(path, `id=${foreign[path]}`),
        headers: { ...JSON_BODY, accept: 'application/xml' },
        payload,
      }),
      404,
      MSG.notFound(foreign[path]!),
      'xml',
    );
  }
});

storeTest('API.md §4 / API.md §1.4 405: message and Allow for every path and every other method, OPTIONS and DELETE included', async () => {
  const { inject, url } = await shared();
  let checked = 0;
  for (const [path, allow] of Object.entries(ALLOW)) {
    const allowed = allow.split(', ');
    for (const method of ALL_METHODS) {
      if (allowed.includes(method)) continue;
      const res = await inject({ method, url: url(path) });
      assertError(res, 405, MSG.methodNotAllowed(allow));
      assert.equal(res.headers.allow, allow, `${method} ${path}`);
      checked++;
    }
    const xml = await inject({ method: 'OPTIONS', url: url(path), headers: { accept: 'application/xml' } });
    assertError(xml, 405, MSG.methodNotAllowed(allow), 'xml');
    assert.equal(xml.headers.allow, allow);
  }
  assert.equal(checked, 4 * 5 + 2 * 5 + 4 + 6);
});

storeTest('API.md §4 406: JSON body whatever was asked for', async () => {
  const { inject, url } = await shared();
  for (const accept of ['text/html', 'application/*', 'image/png, text/plain;q=0.5', 'application/xhtml+xml']) {
    const res = await inject({ url: url('/v1/credits/balance'), headers: { accept } });
    assertError(res, 406, MSG.notAcceptable);
    assert.equal(res.headers.vary, 'Accept');
  }
  const format = await inject({ url: url('/v1/credits/balance', '_format=yaml'), headers: { accept: 'application/xml' } });
  assertError(format, 406, MSG.formatNotSupported('yaml'));
});

storeTest('API.md §4 413: body over the configured limit', async (t) => {
  const { inject, url, demo } = await setup(t, { MSGSVC_BODY_LIMIT: '1000' });
  const { group } = ids(demo);
  const small = await inject({
    method: 'PUT',
    url: url('/v1/groups/update', `id=${group}`),
    headers: JSON_BODY,
    payload: JSON.stringify({ fname: 'Small enough', fnote: 'x'.repeat(200) }),
  });
  assert.equal(small.statusCode, 200, small.body);
  const big = JSON.stringify({ fname: 'Too big', fnote: 'x'.repeat(2000) });
  for (const format of ['json', 'xml'] as const) {
    const res = await inject({
      method: 'PUT',
      url: url('/v1/groups/update', `id=${group}`),
      headers: { ...JSON_BODY, accept: `application/${format}` },
      payload: big,
    });
    assert.equal(res.statusCode, 413, res.body);
    assert.equal(res.statusMessage, REASON[413]);
    assert.equal(res.headers['content-type'], format === 'json' ? JSON_TYPE : XML_TYPE);
    if (format === 'json') {
      const body = JSON.parse(res.body);
      assert.deepEqual(Object.keys(body), ['name', 'message', 'code', 'status']);
      assert.equal(body.name, 'Request Entity Too Large');
      assert.match(body.message, /Request Entity Too Large/);
      assert.equal(body.code, 0);
      assert.equal(body.status, 413);
    } else {
      assert.match(
        res.body,
        /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<response><name>Request Entity Too Large<\/name><message>Request Entity Too Large[^<]*<\/message><code>0<\/code><status>413<\/status><\/response>\n$/,
      );
    }
  }
  // A form body over the limit too.
  const form = await inject({
    method: 'PUT',
    url: url('/v1/groups/update', `id=${group}`),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: `fname=${'y'.repeat(1200)}`,
  });
  assert.equal(form.statusCode, 413);
});

storeTest('API.md §4 415: a non-empty body that is neither JSON nor form-urlencoded names the accepted types', async () => {
  const { inject, url, demo } = await shared();
  const { group } = ids(demo);
  for (const type of ['text/plain', 'application/xml', 'multipart/form-data; boundary=x', 'application/jsonp', 'text/json']) {
    for (const format of ['json', 'xml'] as const) {
      const res = await inject({
        method: 'PUT',
        url: url('/v1/groups/update', `id=${group}`),
        headers: { 'content-type': type, accept: `application/${format}` },
        payload: '{"fname":"Valid name"}',
      });
      assert.equal(res.statusCode, 415, `${type}: ${res.body}`);
      assert.equal(res.statusMessage, REASON[415]);
      assert.equal(res.headers['content-type'], format === 'json' ? JSON_TYPE : XML_TYPE);
      if (format === 'json') {
        const body = JSON.parse(res.body);
        assert.deepEqual(Object.keys(body), ['name', 'message', 'code', 'status']);
        assert.equal(body.name, 'Unsupported Media Type');
        assert.match(body.message, /application\/json/);
        assert.match(body.message, /application\/x-www-form-urlencoded/);
        assert.equal(body.status, 415);
      } else {
        assert.match(
          res.body,
          /<name>Unsupported Media Type<\/name><message>[^<]*application\/json[^<]*application\/x-www-form-urlencoded[^<]*<\/message><code>0<\/code><status>415<\/status>/,
        );
      }
    }
  }
});

storeTest('API.md §4 / API.md §4.4 422: status text "Data Validation Failed.", unwrapped list, JSON and XML', async () => {
  const { inject, url, demo, ctx, token } = await shared();
  const { group } = ids(demo);
  const res = await inject({
    method: 'PUT',
    url: url('/v1/groups/update', `id=${group}`),
    headers: JSON_BODY,
    payload: '{"fname":"ab","fnote":"x"}',
  });
  assert422(res, [
    { field: 'fname', message: 'Fname should contain at least 3 characters.' },
    { field: 'fnote', message: 'Fnote should contain at least 3 characters.' },
  ]);
  assert.equal(res.headers['content-type'], JSON_TYPE);
  const xml = await inject({
    method: 'PUT',
    url: url('/v1/groups/update', `id=${group}`),
    headers: { ...JSON_BODY, accept: 'application/xml' },
    payload: '{"fname":"ab"}',
  });
  assert.equal(xml.statusCode, 422);
  assert.equal(xml.statusMessage, 'Data Validation Failed.');
  assert.equal(xml.headers['content-type'], XML_TYPE);
  assert.equal(
    xml.body,
    `${XML_DECL}\n<response><item><field>fname</field><message>Fname should contain at least 3 characters.</message></item></response>\n`,
  );
  // The status line on a real socket.
  const raw = await rawRequest(ctx, {
    method: 'PUT',
    path: withToken(`/v1/groups/update?id=${group}`, token),
    headers: JSON_BODY,
    body: '{}',
  });
  assert.equal(raw.statusCode, 422);
  assert.equal(raw.statusMessage, 'Data Validation Failed.');
  assert.equal(raw.body, '[{"field":"fname","message":"Fname cannot be blank."}]');
  const reserve = await inject({
    method: 'POST',
    url: url('/v1/keyword/reserve'),
    headers: JSON_BODY,
    payload: '{"Keyword":"abc","Number":"12a","AutoreplyMessage":5}',
  });
  assert422(reserve, [
    { field: 'Keyword', message: 'Keyword should contain at least 4 characters.' },
    { field: 'Number', message: 'Number must be an integer.' },
    { field: 'AutoreplyMessage', message: 'Autoreply Message must be a string.' },
  ]);
});

storeTest('API.md §4 status text of errors is the reason phrase, also on a real socket', async (t) => {
  const { ctx, token } = await setup(t, { MSGSVC_RATE_LIMIT: '3', MSGSVC_RATE_WINDOW: '60' });
  const cases: [string, string, number][] = [
    ['GET', '/v1/nope', 404],
    ['DELETE', '/v1/numbers/index', 405],
    ['GET', '/v1/numbers/index?_format=csv', 406],
    ['GET', '/v1/numbers/index?access_token=bad', 401],
    ['PUT', withToken('/v1/groups/update', token), 400],
    ['PUT', withToken('/v1/groups/update?id=999999', token), 404],
  ];
  for (const [method, path, status] of cases) {
    const res = await rawRequest(ctx, { method, path });
    assert.equal(res.statusCode, status, path);
    assert.equal(res.statusMessage, REASON[status]);
    assert.equal(JSON.parse(res.body).name, REASON[status]);
  }
  await rawRequest(ctx, { path: withToken('/v1/credits/balance', token) });
  const limited = await rawRequest(ctx, { path: withToken('/v1/credits/balance', token) });
  assert.equal(limited.statusCode, 429);
  assert.equal(limited.statusMessage, 'Too Many Requests');
  assert.equal(limited.body, errorText(429, MSG.rateLimited));
});

storeTest('API.md §4 500: generic message, no stack trace or SQL', async () => {
  const { inject, url, ctx } = await shared();
  await sql`DROP TABLE credit_balances`.execute(ctx.store.db);
  for (const format of ['json', 'xml'] as const) {
    const res = await inject({ url: url('/v1/credits/balance'), headers: { accept: `application/${format}` } });
    assertError(res, 500, MSG.internal, format);
    assert.doesNotMatch(res.body, /credit_balances|no such table|SQLITE|at .*\.ts/i);
  }
});
