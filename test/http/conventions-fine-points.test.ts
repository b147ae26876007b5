/**
 * API.md §8.2: one test per rule, each failing if its rule broke. The rules about
 * the wire (slashes, method override, header-name case) are checked over a real socket with a raw
 * client that sends the request and reads the answer byte for byte (test/helpers/net.ts rawHttp),
 * besides `app.inject`. `_method` is read by the HTTP server before Fastify, so it is checked on the
 * socket only.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { withToken, type TestApp } from '../helpers/app.ts';
import { errorText, ids, JSON_BODY, MSG, setup, sharedSetup } from '../helpers/conventions.ts';
import { assert422, assertError, JSON_TYPE, XML_DECL, XML_TYPE } from '../helpers/operations.ts';
import { rawHttp, type RawResponse } from '../helpers/net.ts';
import { storeTest } from '../helpers/stores.ts';

const shared = sharedSetup();

const UNSUPPORTED = 'Unsupported Media Type: send the body as application/json or application/x-www-form-urlencoded.';

async function portOf(ctx: TestApp): Promise<number> {
  if (!ctx.app.server.listening) await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  return (ctx.app.server.address() as AddressInfo).port;
}

/**
 * One request written exactly as given (request line, header names, body) on a new connection,
 * with `Connection: close`; the answer as read off the socket.
 */
async function wire(
  ctx: TestApp,
  method: string,
  target: string,
  headers: Record<string, string> = {},
  body?: string | Buffer,
): Promise<RawResponse> {
  const port = await portOf(ctx);
  let head = `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  if (body === undefined) return rawHttp(port, `${head}\r\n`);
  const bytes = Buffer.from(body);
  return rawHttp(port, Buffer.concat([Buffer.from(`${head}Content-Length: ${bytes.length}\r\n\r\n`, 'latin1'), bytes]));
}

/** Asserts an API.md §4 error read off the socket: status line, Content-Type and body, exactly. */
function assertWireError(res: RawResponse, status: number, message: string, format: 'json' | 'xml' = 'json'): void {
  assert.equal(res.status, status, `${res.statusLine}: ${res.body.toString()}`);
  assert.equal(res.header('Content-Type'), format === 'json' ? JSON_TYPE : XML_TYPE);
  assert.equal(res.body.toString('utf8'), errorText(status, message, format));
}

// ─── Routing ────────────────────────────────────────────────────────────────────────────────────

storeTest('API.md §3.5 routing: a trailing slash is ignored (inject and socket, JSON and XML, reads and writes)', async () => {
  const { inject, url, ctx, token, demo } = await shared();
  const list = await inject({ url: url('/v1/numbers/index') });
  const listXml = await inject({ url: url('/v1/numbers/index', '_format=xml') });
  for (const path of ['/v1/numbers/index/', '/v1/numbers/index//']) {
    const res = await inject({ url: url(path) });
    assert.equal(res.statusCode, 200, `${path}: ${res.body}`);
    assert.equal(res.body, list.body);
    // The route is the action's: Link names `/v1/numbers/index`.
    assert.equal(res.headers.link, list.headers.link);
    const xml = await inject({ url: url(path, '_format=xml') });
    assert.equal(xml.body, listXml.body);
    const onWire = await wire(ctx, 'GET', withToken(path, token));
    assert.equal(onWire.status, 200, onWire.statusLine);
    assert.equal(onWire.body.toString(), list.body);
  }
  // A write and the 405 check see the same path.
  const { group } = ids(demo);
  const put = await inject({
    method: 'PUT',
    url: url('/v1/groups/update/', `id=${group}`),
    headers: JSON_BODY,
    payload: '{"fname":"Slash group"}',
  });
  assert.equal(put.statusCode, 200, put.body);
  assert.equal(JSON.parse(put.body).Name, 'Slash group');
  const wrong = await inject({ method: 'DELETE', url: url('/v1/groups/update/') });
  assertError(wrong, 405, MSG.methodNotAllowed('PUT, PATCH'));
  assert.equal(wrong.headers.allow, 'PUT, PATCH');
});

storeTest('API.md §3.5 routing: leading repeated slashes are one; repeated slashes inside the path give 404', async () => {
  const { inject, url, ctx, token } = await shared();
  const list = await inject({ url: url('/v1/numbers/index') });
  const balance = await inject({ url: url('/v1/credits/balance', '_format=xml') });
  // On the socket the request target goes out exactly as written.
  for (const path of ['//v1/numbers/index', '///v1/numbers/index', '//v1/numbers/index/']) {
    const res = await wire(ctx, 'GET', withToken(path, token));
    assert.equal(res.status, 200, `${path}: ${res.statusLine}`);
    assert.equal(res.body.toString(), list.body);
    // The same Link but for the host the socket reached.
    const path1 = (link: unknown) => String(link).replace(/^<http:\/\/[^/]+/, '<');
    assert.equal(path1(res.header('Link')), path1(list.headers.link));
    assert.equal((await inject({ url: url(path) })).body, list.body);
  }
  const xml = await wire(ctx, 'GET', withToken('//v1/credits/balance', token, '_format=xml'));
  assert.equal(xml.body.toString(), balance.body);
  for (const path of ['/v1//numbers/index', '/v1/numbers//index', '//v1//numbers/index', '/v1//numbers']) {
    assertWireError(await wire(ctx, 'GET', withToken(path, token)), 404, MSG.pageNotFound);
    assertWireError(await wire(ctx, 'GET', withToken(path, token), { Accept: 'application/xml' }), 404, MSG.pageNotFound, 'xml');
    assertError(await inject({ url: url(path) }), 404, MSG.pageNotFound);
  }
});

storeTest('API.md §3.5 routing: a controller path runs its index action; a controller without one is 404', async () => {
  const { inject, url, ctx, token } = await shared();
  for (const controller of ['numbers', 'groups', 'keyword']) {
    const index = await inject({ url: url(`/v1/${controller}/index`) });
    assert.equal(index.statusCode, 200, index.body);
    for (const path of [`/v1/${controller}`, `/v1/${controller}/`]) {
      const res = await inject({ url: url(path) });
      assert.equal(res.statusCode, 200, `${path}: ${res.body}`);
      assert.equal(res.body, index.body);
      assert.equal(res.headers.link, index.headers.link, 'Link names the index action');
      const xml = await inject({ url: url(path), headers: { accept: 'application/xml' } });
      assert.equal(xml.body, (await inject({ url: url(`/v1/${controller}/index`), headers: { accept: 'application/xml' } })).body);
    }
    const onWire = await wire(ctx, 'GET', withToken(`/v1/${controller}`, token));
    assert.equal(onWire.body.toString(), index.body);
  }
  // The 405 check of the index action, with its Allow.
  const post = await inject({ method: 'POST', url: url('/v1/numbers'), headers: JSON_BODY, payload: '{}' });
  assertError(post, 405, MSG.methodNotAllowed('GET, HEAD'));
  assert.equal(post.headers.allow, 'GET, HEAD');
  // credits has no index action.
  for (const path of ['/v1/credits', '/v1/credits/']) {
    assertError(await inject({ url: url(path) }), 404, MSG.pageNotFound);
    assertError(await inject({ url: url(path, '_format=xml') }), 404, MSG.pageNotFound, 'xml');
    assertWireError(await wire(ctx, 'GET', withToken(path, token)), 404, MSG.pageNotFound);
  }
});

// ─── Method override ────────────────────────────────────────────────────────────────────────────

storeTest('API.md §3.5 X-Http-Method-Override decides the method for routing and for the 405 check (inject and socket)', async () => {
  const { inject, url, ctx, token, demo } = await shared();
  const { group } = ids(demo);
  // A POST routed as PUT / PATCH (the header value upper-cased, as PHP strtoupper does).
  for (const [i, override] of ['PUT', 'patch', 'Put'].entries()) {
    const res = await inject({
      method: 'POST',
      url: url('/v1/groups/update', `id=${group}`),
      headers: { ...JSON_BODY, 'x-http-method-override': override },
      payload: JSON.stringify({ fname: `Override ${i}` }),
    });
    assert.equal(res.statusCode, 200, `${override}: ${res.body}`);
    assert.equal(JSON.parse(res.body).Name, `Override ${i}`);
  }
  const put = await wire(
    ctx,
    'POST',
    withToken(`/v1/groups/update?id=${group}`, token),
    { 'Content-Type': 'application/json', 'X-HTTP-Method-Override': 'PUT' },
    '{"fname":"Override wire"}',
  );
  assert.equal(put.status, 200, put.body.toString());
  assert.equal(JSON.parse(put.body.toString()).Name, 'Override wire');
  // A GET made a DELETE gets 405 with Allow, in the negotiated format.
  const del = await inject({ url: url('/v1/numbers/index'), headers: { 'x-http-method-override': 'DELETE' } });
  assertError(del, 405, MSG.methodNotAllowed('GET, HEAD'));
  assert.equal(del.headers.allow, 'GET, HEAD');
  assertError(
    await inject({ url: url('/v1/numbers/index', '_format=xml'), headers: { 'x-http-method-override': 'DELETE' } }),
    405,
    MSG.methodNotAllowed('GET, HEAD'),
    'xml',
  );
  const delWire = await wire(ctx, 'GET', withToken('/v1/numbers/index', token), { 'X-Http-Method-Override': 'DELETE' });
  assertWireError(delWire, 405, MSG.methodNotAllowed('GET, HEAD'));
  assert.equal(delWire.header('Allow'), 'GET, HEAD');
  // A PUT made a GET reads; a method that is no HTTP method at all is refused like any other.
  const list = await inject({ url: url('/v1/numbers/index') });
  const get = await inject({
    method: 'PUT',
    url: url('/v1/numbers/index'),
    headers: { ...JSON_BODY, 'x-http-method-override': 'GET' },
    payload: '{}',
  });
  assert.equal(get.statusCode, 200, get.body);
  assert.equal(get.body, list.body);
  for (const override of ['FOO', '', 'PUT, PATCH']) {
    const res = await wire(ctx, 'GET', withToken('/v1/groups/update', token), { 'X-Http-Method-Override': override });
    assertWireError(res, 405, MSG.methodNotAllowed('PUT, PATCH'));
    assert.equal(res.header('Allow'), 'PUT, PATCH');
  }
  // Routing: an unknown path stays 404 whatever the method.
  assertError(await inject({ url: url('/v1/nope'), headers: { 'x-http-method-override': 'PUT' } }), 404, MSG.pageNotFound);
  // HEAD on a GET: served as the GET it is, body included, so the connection stays sound.
  const head = await wire(ctx, 'GET', withToken('/v1/numbers/index', token), { 'X-Http-Method-Override': 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(head.body.toString(), list.body);
  assert.equal(head.header('Content-Length'), String(Buffer.byteLength(list.body)));
});

storeTest('API.md §3.4 _method in a POST form body decides the method, unless GET, HEAD or OPTIONS (socket)', async () => {
  const { ctx, token, demo, inject, url } = await shared();
  const { group, entry, entryBody } = ids(demo);
  const target = withToken(`/v1/groups/update?id=${group}`, token);
  const form = { 'Content-Type': 'application/x-www-form-urlencoded' };
  // POST + _method=PUT is a PUT; the other fields are the body (upper-cased like strtoupper).
  for (const [i, method] of ['PUT', 'patch', 'Put'].entries()) {
    const res = await wire(ctx, 'POST', target, form, `_method=${method}&fname=Method+form+${i}`);
    assert.equal(res.status, 200, `${method}: ${res.body.toString()}`);
    assert.equal(JSON.parse(res.body.toString()).Name, `Method form ${i}`);
  }
  // PHP reads `.method` and `%5Fmethod` as `_method` too.
  for (const key of ['.method', '%5Fmethod']) {
    const res = await wire(ctx, 'POST', target, form, `fname=Dotted+method&${key}=PUT`);
    assert.equal(res.status, 200, `${key}: ${res.body.toString()}`);
  }
  // _method=DELETE: 405 with the Allow of the path, in the negotiated format.
  const del = await wire(ctx, 'POST', target, form, '_method=DELETE');
  assertWireError(del, 405, MSG.methodNotAllowed('PUT, PATCH'));
  assert.equal(del.header('Allow'), 'PUT, PATCH');
  assertWireError(
    await wire(ctx, 'POST', target, { ...form, Accept: 'application/xml' }, '_method=DELETE'),
    405,
    MSG.methodNotAllowed('PUT, PATCH'),
    'xml',
  );
  // GET, HEAD and OPTIONS never downgrade a POST: it stays a POST (groups/update: 405) ...
  for (const method of ['GET', 'head', 'OPTIONS']) {
    const res = await wire(ctx, 'POST', target, form, `_method=${method}&fname=Never+set`);
    assertWireError(res, 405, MSG.methodNotAllowed('PUT, PATCH'));
  }
  // ... and where POST is allowed it is served as the POST it is.
  const entryTarget = withToken(`/v1/custom-contact-fields-entry/update?id=${entry}`, token);
  const stays = await wire(
    ctx,
    'POST',
    entryTarget,
    form,
    `_method=GET&frfield=${entryBody.frfield}&frcontact=${entryBody.frcontact}&fvalue=Stays+post`,
  );
  assert.equal(stays.status, 200, stays.body.toString());
  assert.equal(JSON.parse(stays.body.toString()).Entry, 'Stays post');
  // _method is read before X-Http-Method-Override; a GET/HEAD/OPTIONS _method leaves the header to decide.
  const first = await wire(ctx, 'POST', target, { ...form, 'X-Http-Method-Override': 'DELETE' }, '_method=PATCH&fname=Body+first');
  assert.equal(first.status, 200, first.body.toString());
  const header = await wire(ctx, 'POST', target, { ...form, 'X-Http-Method-Override': 'PUT' }, '_method=GET&fname=Header+second');
  assert.equal(header.status, 200, header.body.toString());
  assert.equal(JSON.parse(header.body.toString()).Name, 'Header second');
  // Only a form POST carries _method: not a JSON body, not a form PUT.
  assertWireError(
    await wire(ctx, 'POST', target, { 'Content-Type': 'application/json' }, '{"_method":"PUT","fname":"Json"}'),
    405,
    MSG.methodNotAllowed('PUT, PATCH'),
  );
  const formPut = await wire(ctx, 'PUT', target, form, '_method=DELETE&fname=Form+put');
  assert.equal(formPut.status, 200, formPut.body.toString());
  // The body read ahead for _method is the body the operation parses.
  const check = await inject({
    method: 'PATCH',
    url: url('/v1/groups/update', `id=${group}`),
    headers: JSON_BODY,
    payload: '{"fname":"Form put"}',
  });
  assert.equal(JSON.parse(check.body).Name, 'Form put');
});

// ─── Negotiation ────────────────────────────────────────────────────────────────────────────────

storeTest('API.md §2.1 Accept media types are compared exactly, case included', async () => {
  const { inject, url } = await shared();
  for (const accept of ['APPLICATION/XML', 'Application/Json', 'application/XML', 'application/json ;q=0.5, Application/xml']) {
    const res = await inject({ url: url('/v1/credits/balance'), headers: { accept } });
    if (accept.startsWith('application/json ;')) {
      // `;` with spaces around it still splits: application/json matches.
      assert.equal(res.statusCode, 200, accept);
      assert.equal(res.headers['content-type'], JSON_TYPE);
      continue;
    }
    assertError(res, 406, MSG.notAcceptable);
  }
  const cases: [string, string][] = [
    ['APPLICATION/XML, application/json', JSON_TYPE],
    ['Application/Json, application/xml', XML_TYPE],
    ['APPLICATION/XML, */*', JSON_TYPE],
  ];
  for (const [accept, type] of cases) {
    const res = await inject({ url: url('/v1/credits/balance'), headers: { accept } });
    assert.equal(res.statusCode, 200, accept);
    assert.equal(res.headers['content-type'], type, accept);
  }
});

storeTest('API.md §2.1 only a lower-case q is a weight, read as PHP reads a float', async () => {
  const { inject, url } = await shared();
  const cases: [string, 'json' | 'xml'][] = [
    // Q is no weight: both weigh 1, the first wins.
    ['application/json;Q=0.1, application/xml;q=1', 'json'],
    ['application/xml;Q=0.1, application/json', 'xml'],
    // PHP (float): no number is 0 (Infinity, NaN, abc), a leading number is read (0.5x, " 0.9"), exponents count.
    ['application/json;q=Infinity, application/xml;q=0.001', 'xml'],
    ['application/json;q=INF, application/xml;q=0.001', 'xml'],
    ['application/json;q=NaN, application/xml;q=0.001', 'xml'],
    ['application/json;q=abc, application/xml;q=0.001', 'xml'],
    ['application/json;q=0.5x, application/xml;q=0.4', 'json'],
    ['application/json;q= 0.9, application/xml;q=0.5', 'json'],
    ['application/json;q=1e-1, application/xml;q=0.2', 'xml'],
    ['application/json;q=.3, application/xml;q=0.2', 'json'],
    // A zero weight still matches (Yii2 only sorts by it).
    ['application/xml;q=0', 'xml'],
    // PHP's trim and PCRE's \s around `;` leave a no-break space in place: no weight, no match.
    ['application/json;\u00a0q=0.1, application/xml;q=0.5', 'json'],
    ['\u00a0application/xml, application/json;q=0.1', 'json'],
    ['application/xml\u00a0, application/json;q=0.1', 'json'],
  ];
  for (const [accept, format] of cases) {
    const res = await inject({ url: url('/v1/credits/balance'), headers: { accept } });
    assert.equal(res.statusCode, 200, accept);
    assert.equal(res.headers['content-type'], format === 'json' ? JSON_TYPE : XML_TYPE, accept);
  }
});

// ─── Request bodies ─────────────────────────────────────────────────────────────────────────────

storeTest('API.md §3.2 the body parser is chosen by the exact lower-case media type before any ";"', async () => {
  const { inject, url, demo } = await shared();
  const { group } = ids(demo);
  const put = (type: string, payload: string, accept = 'application/json') =>
    inject({ method: 'PUT', url: url('/v1/groups/update', `id=${group}`), headers: { 'content-type': type, accept }, payload });
  for (const type of ['Application/JSON', 'application/json ;charset=utf-8', 'application/json ; charset=utf-8']) {
    assertError(await put(type, '{"fname":"Never"}'), 415, UNSUPPORTED);
    assertError(await put(type, '{"fname":"Never"}', 'application/xml'), 415, UNSUPPORTED, 'xml');
  }
  for (const type of ['Application/x-www-form-urlencoded', 'application/x-www-form-urlencoded ;charset=utf-8']) {
    assertError(await put(type, 'fname=Never'), 415, UNSUPPORTED);
  }
  for (const type of ['application/json;charset=utf-8', 'application/json; charset=ISO-8859-1']) {
    assert.equal((await put(type, '{"fname":"Exact json"}')).statusCode, 200, type);
  }
  assert.equal((await put('application/x-www-form-urlencoded; charset=UTF-8', 'fname=Exact+form')).statusCode, 200);
});

storeTest("API.md §8.2 invalid JSON gives PHP's own reason, in JSON and XML", async () => {
  const { inject, url, demo } = await shared();
  const { group } = ids(demo);
  const reason = (r: string) => `Invalid JSON data in request body: ${r}`;
  const SYNTAX = 'Syntax error';
  const CTRL = 'Control character error, possibly incorrectly encoded';
  const UTF8 = 'Malformed UTF-8 characters, possibly incorrectly encoded';
  const UTF16 = 'Single unpaired UTF-16 surrogate in unicode escape';
  const DEPTH = 'Maximum stack depth exceeded';
  const deep = (n: number) => Buffer.from(`{"fname":"Deep enough","x":${'['.repeat(n - 1)}${']'.repeat(n - 1)}}`);
  const cases: [Buffer, string][] = [
    [Buffer.from('{"fname":}'), SYNTAX],
    [Buffer.from('{"fname":"abc",}'), SYNTAX],
    [Buffer.from('{"fname":"a\\x"}'), SYNTAX],
    [Buffer.from('{"fname":"a\u0001b"}'), CTRL],
    [Buffer.from('{"fname":"a\tb"}'), CTRL],
    [Buffer.from('{"fname":"unterminated'), CTRL],
    [Buffer.from('{"fname":"ok"}\u0000'), CTRL],
    [Buffer.concat([Buffer.from('{"fname":"ab'), Buffer.from([0xff]), Buffer.from('"}')]), UTF8],
    [Buffer.concat([Buffer.from('{"fname":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]), UTF8],
    [Buffer.concat([Buffer.from('{"fname":'), Buffer.from([0xc3, 0x28])]), UTF8],
    [Buffer.from('{"fname":"\\ud800"}'), UTF16],
    [Buffer.from('{"fname":"\\udc00x"}'), UTF16],
    [Buffer.from('{"fname":"\\ud83d\\u0041"}'), UTF16],
    [deep(513), DEPTH],
    // The first error from the left decides.
    [Buffer.from('{"fname":"\\ud800", x}'), UTF16],
    [Buffer.from('{x "fname":"\\ud800"}'), SYNTAX],
    [Buffer.from('["a\u0001", \\ud800]'), CTRL],
  ];
  for (const [payload, why] of cases) {
    const res = await inject({ method: 'PUT', url: url('/v1/groups/update', `id=${group}`), headers: JSON_BODY, payload });
    assertError(res, 400, reason(why));
    const xml = await inject({
      method: 'PUT',
      url: url('/v1/groups/update', `id=${group}`),
      headers: { ...JSON_BODY, accept: 'application/xml' },
      payload,
    });
    assertError(xml, 400, reason(why), 'xml');
  }
  // 512 levels parse.
  const ok = await inject({ method: 'PUT', url: url('/v1/groups/update', `id=${group}`), headers: JSON_BODY, payload: deep(512) });
  assert.equal(ok.statusCode, 200, ok.body);
});

// ─── Validation ─────────────────────────────────────────────────────────────────────────────────

storeTest("API.md §4.4 blank means PHP's trim characters only; lengths are counted untrimmed", async () => {
  const { inject, url, demo } = await shared();
  const { group } = ids(demo);
  const put = (fname: string) =>
    inject({ method: 'PUT', url: url('/v1/groups/update', `id=${group}`), headers: JSON_BODY, payload: JSON.stringify({ fname }) });
  for (const blank of [' \t\n\r\0\x0B', '\0', '\x0B\x0B']) {
    assert422(await put(blank), [{ field: 'fname', message: 'Fname cannot be blank.' }]);
  }
  // Not trim characters: not blank, and counted as characters.
  for (const notBlank of ['\u00a0', '\f', '\u3000', '\u00a0\f']) {
    assert422(await put(notBlank), [{ field: 'fname', message: 'Fname should contain at least 3 characters.' }]);
  }
  for (const value of ['  a', 'ab\n', '\u3000\u3000x']) {
    const res = await put(value);
    assert.equal(res.statusCode, 200, `${JSON.stringify(value)}: ${res.body}`);
    assert.equal(JSON.parse(res.body).Name, value, 'stored as sent');
  }
  // XML renders the same 422.
  const xml = await inject({
    method: 'PUT',
    url: url('/v1/groups/update', `id=${group}`),
    headers: { ...JSON_BODY, accept: 'application/xml' },
    payload: '{"fname":"\\u00a0"}',
  });
  assert.equal(xml.statusCode, 422);
  assert.equal(
    xml.body,
    `${XML_DECL}\n<response><item><field>fname</field><message>Fname should contain at least 3 characters.</message></item></response>\n`,
  );
});

storeTest("API.md §3.1 the id parameter is read as PHP's FILTER_VALIDATE_INT reads it", async () => {
  const { inject, url, demo } = await shared();
  const { group } = ids(demo);
  const put = (id: string) =>
    inject({ method: 'PUT', url: url('/v1/groups/update', `id=${id}`), headers: JSON_BODY, payload: '{"fname":"Id read"}' });
  for (const id of [`${group}`, `+${group}`, `%20${group}`, `${group}%20`, `%09%0A%0D%0B${group}%0B%0D%0A%09`, `+${group}%20%20`]) {
    const res = await put(id);
    assert.equal(res.statusCode, 200, `${id}: ${res.body}`);
    assert.equal(JSON.parse(res.body).Id, group);
  }
  for (const id of [
    `%C2%A0${group}`,
    `%0C${group}`,
    `${group}%0C`,
    `%00${group}`,
    `${group}%00`,
    `0${group}`,
    `${group}.0`,
    `%E3%80%80${group}`,
    '',
    '%20',
    '9223372036854775808',
    '1e3',
  ]) {
    assertError(await put(id), 400, MSG.invalidId);
  }
  // In range but no such record: 404, with the value as PHP's int.
  assertError(await put('%20-0'), 404, MSG.notFound(0));
  assertError(await put('9223372036854775807'), 404, MSG.notFound('9223372036854775807'));
});

storeTest("API.md §4.5 integer fields: Yii2's /^[+-]?\\d+$/ with its final-newline quirk; 64 bits; no exponent", async () => {
  const { inject, url, demo } = await shared();
  const { entry, entryBody } = ids(demo);
  const put = (frcontact: string) =>
    inject({
      method: 'PUT',
      url: url('/v1/custom-contact-fields-entry/update', `id=${entry}`),
      headers: JSON_BODY,
      payload: `{"frfield":${entryBody.frfield},"frcontact":${frcontact},"fvalue":"Int check"}`,
    });
  const NOT_INT = [{ field: 'frcontact', message: 'Frcontact must be an integer.' }];
  const contact = entryBody.frcontact;
  for (const value of [`${contact}`, `"${contact}"`, `"${contact}\\n"`, `"+${contact}"`, `${contact}.0`, `"0${contact}"`]) {
    const res = await put(value);
    assert.equal(res.statusCode, 200, `${value}: ${res.body}`);
    assert.equal(JSON.parse(res.body).PhoneNumberId, contact);
  }
  for (const value of [
    `" ${contact}"`,
    `"${contact} "`,
    `"${contact}\\n\\n"`,
    `"\\n${contact}"`,
    `"${contact}\\r\\n"`,
    `${contact}.5`,
    `"${contact}.0"`,
    `1e+20`,
    `1e2`,
    `${contact}e0`,
    `1E5`,
    '99999999999999999999',
    '"99999999999999999999"',
    '"-9223372036854775809"',
    '100000000000000.0',
    'true',
    `[${contact}]`,
  ]) {
    assert422(await put(value), NOT_INT);
  }
  // Within 64 bits it is an integer (no such contact: the exist rule speaks instead).
  for (const value of ['9223372036854775807', '"-9223372036854775808"', '"9007199254740993"']) {
    assert422(await put(value), [{ field: 'frcontact', message: 'Frcontact is invalid.' }]);
  }
  // XML renders the same message.
  const xml = await inject({
    method: 'PUT',
    url: url('/v1/custom-contact-fields-entry/update', `id=${entry}`),
    headers: { ...JSON_BODY, accept: 'application/xml' },
    payload: `{"frfield":${entryBody.frfield},"frcontact":1e+20,"fvalue":"x"}`,
  });
  assert.equal(xml.statusCode, 422);
  assert.ok(xml.body.includes('<item><field>frcontact</field><message>Frcontact must be an integer.</message></item>'), xml.body);
});

storeTest('API.md §4.4 numbers inside messages have a comma between thousands', async () => {
  const { inject, url, demo } = await shared();
  const { activeNumber } = ids(demo);
  const body = JSON.stringify({ Keyword: 'THOUSANDS', Number: activeNumber, AutoreplyMessage: 'x'.repeat(1601) });
  assert422(await inject({ method: 'POST', url: url('/v1/keyword/reserve'), headers: JSON_BODY, payload: body }), [
    { field: 'AutoreplyMessage', message: 'Autoreply Message should contain at most 1,600 characters.' },
  ]);
  const xml = await inject({
    method: 'POST',
    url: url('/v1/keyword/reserve'),
    headers: { ...JSON_BODY, accept: 'application/xml' },
    payload: body,
  });
  assert.equal(
    xml.body,
    `${XML_DECL}\n<response><item><field>AutoreplyMessage</field><message>Autoreply Message should contain at most 1,600 characters.</message></item></response>\n`,
  );
  // 1,600 characters exactly are fine.
  const ok = await inject({
    method: 'POST',
    url: url('/v1/keyword/reserve'),
    headers: JSON_BODY,
    payload: JSON.stringify({ Keyword: 'THOUSANDS', Number: activeNumber, AutoreplyMessage: 'x'.repeat(1600) }),
  });
  assert.equal(ok.statusCode, 201, ok.body);
});

storeTest('API.md §4.4 uniqueness and combination messages quote the value as the client sent it', async () => {
  const { inject, url, demo } = await shared();
  const { activeNumber } = ids(demo);
  // Keywords are unique case-insensitively; the message quotes the second spelling.
  const reserve = (Keyword: string, accept = 'application/json') =>
    inject({
      method: 'POST',
      url: url('/v1/keyword/reserve'),
      headers: { ...JSON_BODY, accept },
      payload: JSON.stringify({ Keyword, Number: activeNumber }),
    });
  assert.equal((await reserve('QUOTED')).statusCode, 201);
  assert422(await reserve('quoted'), [{ field: 'Keyword', message: 'Keyword "quoted" has already been taken.' }]);
  const xml = await reserve('Quoted', 'application/xml');
  assert.equal(
    xml.body,
    `${XML_DECL}\n<response><item><field>Keyword</field><message>Keyword "Quoted" has already been taken.</message></item></response>\n`,
  );
  // An entry moved onto another entry's pair: frfield and frcontact quoted as sent ("+1", a JSON 4 as 4).
  const [a, b] = demo.customFieldEntries.filter(
    (e, i, all) => all.findIndex((o) => o.CustomFieldId === e.CustomFieldId && o.PhoneNumberId === e.PhoneNumberId) === i,
  );
  assert.ok(a && b, 'two entries with distinct pairs');
  const res = await inject({
    method: 'PUT',
    url: url('/v1/custom-contact-fields-entry/update', `id=${a.Id}`),
    headers: JSON_BODY,
    payload: `{"frfield":"+${b.CustomFieldId}","frcontact":${b.PhoneNumberId},"fvalue":"Taken"}`,
  });
  assert422(res, [
    {
      field: 'frfield',
      message: `The combination "+${b.CustomFieldId}"-"${b.PhoneNumberId}" of Frfield and Frcontact has already been taken.`,
    },
  ]);
});

// ─── Responses ──────────────────────────────────────────────────────────────────────────────────

storeTest('API.md §2.5 fields= keeps only the named fields, in the record order, for records and lists, JSON and XML', async () => {
  const { inject, url, demo } = await shared();
  const { group } = ids(demo);
  const numbers = JSON.parse((await inject({ url: url('/v1/numbers/index') })).body) as { Number: string; Status_Id: number }[];
  // A list: every record, the record's own order whatever the order asked, unknown names ignored.
  const list = await inject({ url: url('/v1/numbers/index', 'fields=Status_Id,%20Number%20,Nope,Number.x') });
  assert.equal(list.statusCode, 200);
  assert.equal(list.body, JSON.stringify(numbers.map((n) => ({ Number: n.Number, Status_Id: n.Status_Id }))));
  const listXml = await inject({ url: url('/v1/numbers/index', 'fields=Status_Id,Number&_format=xml') });
  assert.equal(
    listXml.body,
    `${XML_DECL}\n<response>${numbers.map((n) => `<item><Number>${n.Number}</Number><Status_Id>${n.Status_Id}</Status_Id></item>`).join('')}</response>\n`,
  );
  // A single record.
  const balance = await inject({ url: url('/v1/credits/balance', 'fields=AvailableCredits,Other&expand=x') });
  assert.equal(balance.body, '{"AvailableCredits":2500}');
  // No name matches: PHP's empty array, `[]` in JSON (not `{}`), an empty element in XML.
  assert.equal((await inject({ url: url('/v1/credits/balance', 'fields=Other') })).body, '[]');
  assert.equal((await inject({ url: url('/v1/credits/balance', 'fields=Other&_format=xml') })).body, `${XML_DECL}\n<response/>\n`);
  assert.ok(numbers.length >= 2, 'a list of several records');
  assert.equal((await inject({ url: url('/v1/numbers/index', 'fields=Other,Nope') })).body, JSON.stringify(numbers.map(() => [])));
  assert.equal(
    (await inject({ url: url('/v1/numbers/index', 'fields=Other&_format=xml') })).body,
    `${XML_DECL}\n<response>${'<item/>'.repeat(numbers.length)}</response>\n`,
  );
  const emptyUpdate = await inject({
    method: 'PUT',
    url: url('/v1/groups/update', `id=${group}&fields=Nope`),
    headers: JSON_BODY,
    payload: '{"fname":"Fields group"}',
  });
  assert.equal(emptyUpdate.statusCode, 200);
  assert.equal(emptyUpdate.body, '[]');
  const updated = await inject({
    method: 'PUT',
    url: url('/v1/groups/update', `id=${group}&fields=Name,Id`),
    headers: { ...JSON_BODY, accept: 'application/xml' },
    payload: '{"fname":"Fields group"}',
  });
  assert.equal(updated.body, `${XML_DECL}\n<response><Id>${group}</Id><Name>Fields group</Name></response>\n`);
  // Every field: no names, an empty list of names, `*`, or fields sent as an array.
  const all = (await inject({ url: url('/v1/numbers/index') })).body;
  for (const query of ['fields=', 'fields=,%20,', 'fields=*', 'fields=Number,*', 'fields[]=Number', 'expand=Number']) {
    assert.equal((await inject({ url: url('/v1/numbers/index', query) })).body, all, query);
  }
  // Error bodies are never filtered.
  assert422(await inject({ method: 'PUT', url: url('/v1/groups/update', `id=${group}&fields=Id`), headers: JSON_BODY, payload: '{}' }), [
    { field: 'fname', message: 'Fname cannot be blank.' },
  ]);
  assertError(
    await inject({ method: 'PUT', url: url('/v1/groups/update', 'id=999999&fields=Id'), headers: JSON_BODY, payload: '{"fname":"abc"}' }),
    404,
    MSG.notFound(999999),
  );
});

storeTest('API.md §2.2 JSON escapes U+2028 and U+2029; XML writes a carriage return as &#13;', async () => {
  const { inject, url, demo } = await shared();
  const { group } = ids(demo);
  const name = 'a\u2028b\u2029c\rd';
  const json = await inject({
    method: 'PUT',
    url: url('/v1/groups/update', `id=${group}`),
    headers: JSON_BODY,
    payload: JSON.stringify({ fname: name }),
  });
  assert.equal(json.statusCode, 200, json.body);
  assert.ok(json.body.includes('"Name":"a\\u2028b\\u2029c\\rd"'), json.body);
  assert.ok(!/[\u2028\u2029\r]/.test(json.body));
  assert.equal(JSON.parse(json.body).Name, name);
  const xml = await inject({
    url: url('/v1/groups/update', `id=${group}`),
    method: 'PATCH',
    headers: { ...JSON_BODY, accept: 'application/xml' },
    payload: JSON.stringify({ fname: name }),
  });
  assert.ok(xml.body.includes('<Name>a\u2028b\u2029c&#13;d</Name>'), xml.body);
  assert.ok(!xml.body.includes('\r'));
  // Error bodies too.
  const error = await inject({ url: url('/v1/credits/balance', `_format=${encodeURIComponent('x\u2028')}`) });
  assert.equal(
    error.body,
    '{"name":"Not Acceptable","message":"The requested response format is not supported: x\\u2028","code":0,"status":406}',
  );
  const xmlError = await inject({ url: url('/v1/contacts/find', `number=${encodeURIComponent('1\r')}&_format=xml`) });
  assert.ok(!xmlError.body.includes('\r'), xmlError.body);
});

// ─── Updates ────────────────────────────────────────────────────────────────────────────────────

const FORM_CT = { 'content-type': 'application/x-www-form-urlencoded' };

storeTest('API.md §5 updates: an optional string sent "" or null is stored "" (groups fnote, contacts, JSON and form)', async () => {
  const { inject, url, demo } = await shared();
  const group = demo.groups[1]!.Id;
  const put = (payload: string, headers: Record<string, string> = JSON_BODY) =>
    inject({ method: 'PUT', url: url('/v1/groups/update', `id=${group}`), headers, payload });
  const stored = async () => JSON.parse((await inject({ url: url('/v1/groups/view', `id=${group}`) })).body).Note as string;
  for (const [payload, headers] of [
    ['{"fname":"Team","fnote":""}', JSON_BODY],
    ['{"fname":"Team","fnote":null}', JSON_BODY],
    ['fname=Team&fnote=', FORM_CT],
  ] as const) {
    assert.equal(JSON.parse((await put('{"fname":"Team","fnote":"A note"}')).body).Note, 'A note');
    const res = await put(payload, headers);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(JSON.parse(res.body).Note, '', `${payload} clears the note`);
    assert.equal(await stored(), '', `${payload}: stored blank`);
  }
  // Left out, the note stays; a blank that is not empty is a value, and its length rule applies.
  await put('{"fname":"Team","fnote":"A note"}');
  assert.equal(JSON.parse((await put('{"fname":"Team"}')).body).Note, 'A note');
  assert422(await put('{"fname":"Team","fnote":" "}'), [{ field: 'fnote', message: 'Fnote should contain at least 3 characters.' }]);
  assert.equal(await stored(), 'A note');
  // The contacts' optional strings follow the same rule.
  const contact = demo.contacts.find((c) => c.City !== '' && c.FirstName !== '')!;
  const res = await inject({
    method: 'PATCH',
    url: url('/v1/contacts/update', `id=${contact.Id}`),
    headers: JSON_BODY,
    payload: '{"City":"","FirstName":null}',
  });
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual([JSON.parse(res.body).City, JSON.parse(res.body).FirstName], ['', '']);
});

storeTest('API.md §4.6 updates: an update whose every value equals the stored one leaves DateUpdated as it was', async () => {
  const { inject, url, ctx, demo } = await shared();
  const PAST = 1_000_000_000;
  const SHOWN = '2001-09-09 01:46:40';
  // The fields of the records read here, as the API shows them.
  type Shown = { Id: number; DateUpdated: string; Name: string; Note: string; KeywordId: number; ParentId: number } & {
    Entry: string;
    CustomFieldId: number;
    PhoneNumberId: number;
  } & {
    Number: string;
    FirstName: string;
    OptedOut: number;
    GroupIds: number[];
  };
  const view = async (path: string, id: number): Promise<Shown> => JSON.parse((await inject({ url: url(path, `id=${id}`) })).body);
  const dateUpdated = async (path: string, id: number) => (await view(path, id)).DateUpdated;
  const send = async (path: string, id: number, body: object) => {
    const res = await inject({ method: 'PUT', url: url(path, `id=${id}`), headers: JSON_BODY, payload: JSON.stringify(body) });
    assert.equal(res.statusCode, 200, res.body);
    return JSON.parse(res.body) as { DateUpdated: string };
  };
  const db = ctx.store.db;
  // Groups: the stored values sent again, then one changed.
  await db.updateTable('groups').set({ updated_at: PAST }).where('id', '=', demo.groups[2]!.Id).execute();
  const g = await view('/v1/groups/view', demo.groups[2]!.Id);
  const sameGroup = await send('/v1/groups/update', g.Id, {
    fname: g.Name,
    fnote: g.Note,
    KeywordId: String(g.KeywordId),
    ParentId: g.ParentId,
  });
  assert.equal(sameGroup.DateUpdated, SHOWN, 'the answer shows the stored DateUpdated');
  assert.equal(await dateUpdated('/v1/groups/view', g.Id), SHOWN, 'nothing was saved');
  assert.notEqual(
    (await send('/v1/groups/update', g.Id, { fname: g.Name, fnote: 'Another note' })).DateUpdated,
    SHOWN,
    'a change moves it',
  );
  // Custom fields and their values.
  await db.updateTable('custom_fields').set({ updated_at: PAST }).where('id', '=', demo.customFields[0]!.Id).execute();
  const field = await view('/v1/custom-contact-fields/view', demo.customFields[0]!.Id);
  assert.equal((await send('/v1/custom-contact-fields/update', field.Id, { fname: field.Name })).DateUpdated, SHOWN);
  assert.equal(await dateUpdated('/v1/custom-contact-fields/view', field.Id), SHOWN);
  await db.updateTable('custom_field_entries').set({ updated_at: PAST }).where('id', '=', demo.customFieldEntries[0]!.Id).execute();
  const entry = await view('/v1/custom-contact-fields-entry/view', demo.customFieldEntries[0]!.Id);
  const sameEntry = { frfield: `+${entry.CustomFieldId}`, frcontact: String(entry.PhoneNumberId), fvalue: entry.Entry };
  assert.equal((await send('/v1/custom-contact-fields-entry/update', entry.Id, sameEntry)).DateUpdated, SHOWN);
  assert.equal(await dateUpdated('/v1/custom-contact-fields-entry/view', entry.Id), SHOWN);
  // Contacts: the number in another writing and the same groups in another order are the same values.
  const cId = [...demo.contacts].reverse().find((x) => x.GroupIds.length >= 2)!.Id;
  await db.updateTable('contacts').set({ updated_at: PAST }).where('id', '=', cId).execute();
  const c = await view('/v1/contacts/view', cId);
  assert.ok(c.GroupIds.length >= 2);
  const sameContact = { Number: `+${c.Number}`, FirstName: c.FirstName, OptedOut: c.OptedOut, GroupIds: [...c.GroupIds].reverse() };
  assert.equal((await send('/v1/contacts/update', c.Id, sameContact)).DateUpdated, SHOWN);
  assert.equal(await dateUpdated('/v1/contacts/view', c.Id), SHOWN);
  assert.notEqual(
    (await send('/v1/contacts/update', c.Id, { GroupIds: c.GroupIds.slice(1) })).DateUpdated,
    SHOWN,
    'a GroupIds change moves it',
  );
});

/** Names of every header line of a head read off the socket. */
const namesOf = (res: RawResponse) => res.headers.map(([name]) => name);

/** Asserts that each header name is written with a capital at the start of every word. */
function assertCased(res: RawResponse): void {
  for (const name of namesOf(res)) assert.match(name, /^([A-Z][a-z]*|ETag|WWW)(-[A-Z][a-z]*)*$/, `${name} in ${res.statusLine}`);
}

storeTest("API.md §2.4 header names go on the wire exactly cased, ours and Fastify's alike (socket and inject)", async (t) => {
  const { ctx, token, demo, inject, url } = await shared();
  const { group } = ids(demo);
  const list = await wire(ctx, 'GET', withToken('/v1/numbers/index', token, 'per-page=2&page=2'));
  const LIST_NAMES = [
    'Vary',
    'Content-Type',
    'X-Rate-Limit-Limit',
    'X-Rate-Limit-Remaining',
    'X-Rate-Limit-Reset',
    'X-Pagination-Total-Count',
    'X-Pagination-Page-Count',
    'X-Pagination-Current-Page',
    'X-Pagination-Per-Page',
    'Link',
    'Content-Length',
    'X-Request-Id',
  ];
  assert.deepEqual(namesOf(list).sort(), [...LIST_NAMES, 'Date', 'Connection'].sort());
  const heads = [
    list,
    await wire(ctx, 'DELETE', withToken('/v1/groups/update', token)),
    await wire(ctx, 'GET', '/v1/nope'),
    await wire(ctx, 'GET', '/v1/numbers/%'),
    await wire(ctx, 'PUT', withToken(`/v1/groups/update?id=${group}`, token), { 'Content-Type': 'application/json' }, '{'),
    await wire(ctx, 'PUT', withToken(`/v1/groups/update?id=${group}`, token), { 'Content-Type': 'application/json' }, '{"fname":"x"}'),
    await wire(ctx, 'HEAD', withToken('/v1/credits/balance', token)),
    await wire(ctx, 'GET', '/healthz'),
    await wire(ctx, 'GET', `/v1/numbers/index?${'x'.repeat(9000)}&fields=Number`),
    await rawHttp(await portOf(ctx), `GET ${withToken('/v1/numbers/index', token, 'fields=Number')} HTTP/1.1\r\nConnection: close\r\n\r\n`),
  ];
  for (const res of heads) assertCased(res);
  // The early errors (414, and 400 for a missing Host) are in the API.md shape too.
  assertWireError(heads[8]!, 414, 'Request-URI Too Long: the URL is over the limit of 8192 bytes.');
  assertWireError(heads[9]!, 400, 'Bad Request: an HTTP/1.1 request must carry a Host header.');
  assert.equal(heads[1]!.header('Allow'), 'PUT, PATCH');
  assert.ok(namesOf(heads[6]!).includes('Content-Length'));
  // Location and Idempotent-Replayed (a create with Idempotency-Key, then its replay).
  const create = (key: string) =>
    wire(
      ctx,
      'POST',
      withToken('/v1/custom-contact-fields/create', token),
      { 'Content-Type': 'application/json', 'Idempotency-Key': key },
      '{"fname":"Cased field"}',
    );
  const created = await create('cased-1');
  assert.equal(created.status, 201, created.body.toString());
  assert.match(created.header('Location') ?? '', /^http:\/\/127\.0\.0\.1:\d+\/v1\/custom-contact-fields\/view\?id=\d+$/);
  const replayed = await create('cased-1');
  assert.equal(replayed.header('Idempotent-Replayed'), 'true');
  assert.equal(replayed.header('Location'), created.header('Location'));
  assertCased(created);
  assertCased(replayed);
  // Retry-After on a 429.
  const limited = await setup(t, { MSGSVC_RATE_LIMIT: '1', MSGSVC_RATE_WINDOW: '60' });
  await wire(limited.ctx, 'GET', withToken('/v1/credits/balance', limited.token));
  const tooMany = await wire(limited.ctx, 'GET', withToken('/v1/credits/balance', limited.token));
  assert.equal(tooMany.status, 429);
  assert.match(tooMany.header('Retry-After') ?? '', /^[1-9]\d*$/);
  assertCased(tooMany);
  // inject sees the names Node keeps (getRawHeaderNames), Content-Length included.
  const injected = await inject({ url: url('/v1/numbers/index') });
  const names = (injected.raw.res as unknown as { getRawHeaderNames(): string[] }).getRawHeaderNames();
  assert.deepEqual([...names].sort(), [...LIST_NAMES].sort());
});

storeTest("API.md §5 Link rebuilds the query as PHP's http_build_query: nested keys stay nested, bytes stay bytes", async () => {
  const { inject, url, ctx, token } = await shared();
  const t = encodeURIComponent(token);
  const base = (res: { headers: Record<string, unknown> }) => String(res.headers.link).match(/^<([^>]*)>; rel=self$/)![1]!;
  const cases: [string, string][] = [
    ['a[b]=1', 'a%5Bb%5D=1'],
    ['a[b][]=1&a[b][]=2&a[c]=3', 'a%5Bb%5D%5B0%5D=1&a%5Bb%5D%5B1%5D=2&a%5Bc%5D=3'],
    ['c[]=1&c[]=2', 'c%5B0%5D=1&c%5B1%5D=2'],
    ['c[5]=x&c[]=y', 'c%5B5%5D=x&c%5B6%5D=y'],
    ['x=%FF', 'x=%FF'],
    ['x=%C3%A9%FE', 'x=%C3%A9%FE'],
    ['%FF=1', '%FF=1'],
    ['x=a+b%20c~', 'x=a+b+c%7E'],
    ['x.y=1&p%20q=2', 'x_y=1&p_q=2'],
    ['e[=1', 'e_=1'],
    ['e[a.b%20c[=1', 'e_a_b_c_=1'],
    ['f[%20]=1&f[]=2&f[%20x]=3', 'f%5B0%5D=1&f%5B1%5D=2&f%5B+x%5D=3'],
    ['g[a]b=1&g[c]]=2', 'g%5Ba%5D=1&g%5Bc%5D=2'],
    ['x=%zz%', 'x=%25zz%25'],
    ['r=5&0=z', 'r=5&0=z'],
  ];
  for (const [query, rebuilt] of cases) {
    const res = await inject({ url: url('/v1/numbers/index', query) });
    assert.equal(res.statusCode, 200, `${query}: ${res.body}`);
    assert.equal(base(res), `http://localhost:80/v1/numbers/index?access_token=${t}&${rebuilt}&page=1`, query);
  }
  // page set in place when nested, per-page kept when not the default.
  const nested = await inject({ url: url('/v1/numbers/index', 'page[x]=2&per-page=2&z[]=1') });
  assert.match(
    String(nested.headers.link),
    new RegExp(`^<http://localhost:80/v1/numbers/index\\?access_token=${t}&page=1&per-page=2&z%5B0%5D=1>; rel=self, `),
  );
  // Over the socket the raw bytes of the request line are what is rebuilt.
  const onWire = await wire(ctx, 'GET', withToken('/v1/numbers/index', token, 'x=%FF&a[b]=%E2%80%A8'));
  assert.match(onWire.header('Link') ?? '', new RegExp(`\\?access_token=${t}&x=%FF&a%5Bb%5D=%E2%80%A8&page=1>; rel=self$`));
});
