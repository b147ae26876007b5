import { test } from 'node:test';
// Request ids (issue 14): every response carries `X-Request-Id` (exactly cased on the wire); an
// incoming one is kept when it is 1 to 200 visible ASCII characters, else a new one is made; the
// request's log line carries it as `reqId`.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { requestIdOf } from '../../src/http/metrics.ts';
import { buildTestApp, withToken } from '../helpers/app.ts';
import { rawHttp } from '../helpers/net.ts';
import { storeTest } from '../helpers/stores.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const VISIBLE = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).join('');

test('requestIdOf keeps 1 to 200 visible ASCII characters and replaces anything else', () => {
  const of = (value: string | string[] | undefined) =>
    requestIdOf({ headers: value === undefined ? {} : { 'x-request-id': value } } as never);
  for (const kept of ['a', 'abc-123', 'x'.repeat(200), VISIBLE, '0123e4567-e89b', '"quoted"', '{json}']) assert.equal(of(kept), kept);
  for (const replaced of [undefined, '', 'x'.repeat(201), 'a b', 'tab\there', 'caf\u00e9', 'new\nline', '\u007f', 'a, b', ['a', 'b']]) {
    assert.match(of(replaced), UUID, JSON.stringify(replaced));
  }
  assert.notEqual(of(undefined), of(undefined));
});

storeTest('every response carries X-Request-Id, kept or made, and the log line names it', async (t) => {
  const lines: string[] = [];
  const ctx = await buildTestApp(t, { LOG_LEVEL: 'info' }, { logDestination: { write: (l: string) => void lines.push(l) } });
  const demo = await ctx.seed();
  const requestLine = async (id: string) => {
    await sleep(0);
    return lines.map((l) => JSON.parse(l)).filter((e) => e.msg === 'request' && e.reqId === id);
  };

  // Kept: on a success, on every kind of error, and on a HEAD.
  const cases: {
    method?: 'GET' | 'HEAD' | 'POST' | 'DELETE';
    url: string;
    status: number;
    headers?: Record<string, string>;
    payload?: string;
  }[] = [
    { url: withToken('/v1/numbers/index', demo.token), status: 200 },
    { method: 'HEAD', url: withToken('/v1/numbers/index', demo.token), status: 200 },
    { url: '/v1/numbers/index', status: 401 },
    { url: '/nowhere', status: 404 },
    { url: '/v1/numbers/%zz', status: 404 },
    { method: 'DELETE', url: withToken('/v1/numbers/index', demo.token), status: 405 },
    { url: withToken('/v1/numbers/index', demo.token), status: 406, headers: { accept: 'text/html' } },
    { url: withToken('/v1/contacts/view?id=abc', demo.token), status: 400 },
    { url: `/v1/numbers/index?x=${'a'.repeat(9000)}`, status: 414 },
    {
      method: 'POST',
      url: withToken('/v1/contacts/create', demo.token),
      status: 422,
      headers: { 'content-type': 'application/json' },
      payload: '{}',
    },
    { url: '/healthz', status: 200 },
  ];
  for (const [i, c] of cases.entries()) {
    const id = `case-${i}-${c.status}`;
    const res = await ctx.app.inject({
      method: c.method ?? 'GET',
      url: c.url,
      headers: { 'x-request-id': id, ...c.headers },
      ...(c.payload ? { payload: c.payload } : {}),
    });
    assert.equal(res.statusCode, c.status, `${c.url}: ${res.body}`);
    assert.equal(res.headers['x-request-id'], id, c.url);
    assert.equal((await requestLine(id)).length, 1, `one log line with reqId ${id}`);
  }

  // Made: none sent, or one that breaks the rules; a new one each time.
  const made = new Set<string>();
  for (const headers of [{}, { 'x-request-id': '' }, { 'x-request-id': 'x'.repeat(201) }, { 'x-request-id': 'has space' }, {}]) {
    const res = await ctx.app.inject({ url: withToken('/v1/credits/balance', demo.token), headers });
    const id = String(res.headers['x-request-id']);
    assert.match(id, UUID);
    assert.equal((await requestLine(id)).length, 1);
    made.add(id);
  }
  assert.equal(made.size, 5);
  // The log line carries the id, never the token.
  assert.ok(!lines.join('').includes(demo.token));
});

storeTest('on a real socket: X-Request-Id exactly cased, kept or made', async (t) => {
  const lines: string[] = [];
  const ctx = await buildTestApp(t, { LOG_LEVEL: 'info' }, { logDestination: { write: (l: string) => void lines.push(l) } });
  const demo = await ctx.seed();
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (ctx.app.server.address() as { port: number }).port;
  const get = (path: string, extra = '') => rawHttp(port, `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}Connection: close\r\n\r\n`);

  const kept = await get(withToken('/v1/numbers/index', demo.token), 'x-request-id: trace-42/abc\r\n');
  assert.equal(kept.status, 200);
  assert.equal(kept.header('X-Request-Id'), 'trace-42/abc');
  assert.ok(!kept.headers.some(([n]) => n !== 'X-Request-Id' && n.toLowerCase() === 'x-request-id'), 'one header, exactly cased');

  const made = await get('/v1/numbers/index', `X-Request-Id: ${'y'.repeat(201)}\r\n`);
  assert.equal(made.status, 401);
  assert.match(made.header('X-Request-Id') ?? '', UUID);

  // Two headers are joined by Node with ", ": not a valid id, so a new one.
  const twice = await get('/healthz', 'X-Request-Id: a\r\nX-Request-Id: b\r\n');
  assert.match(twice.header('X-Request-Id') ?? '', UUID);

  // Bytes outside ASCII on the wire.
  const latin = await get('/healthz', 'X-Request-Id: caf\u00e9\r\n');
  assert.match(latin.header('X-Request-Id') ?? '', UUID);

  // A request Node cannot parse (answered on the socket, before any routing) gets a new id too.
  const broken = await rawHttp(port, 'NOT HTTP AT ALL\r\n\r\n');
  assert.equal(broken.status, 400);
  assert.match(broken.header('X-Request-Id') ?? '', UUID);
  const connect = await rawHttp(port, 'CONNECT /v1/numbers/index HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  assert.equal(connect.status, 405);
  assert.match(connect.header('X-Request-Id') ?? '', UUID);

  await sleep(0);
  const entries = lines.map((l) => JSON.parse(l)).filter((e) => e.msg === 'request');
  assert.ok(entries.some((e) => e.reqId === 'trace-42/abc' && e.statusCode === 200));
  assert.ok(entries.some((e) => e.reqId === made.header('X-Request-Id') && e.statusCode === 401));
});
