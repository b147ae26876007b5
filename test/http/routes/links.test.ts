/**
 * Tracked links, the serving half (docs/API.md §14.4.3), on each store: `GET /l/{code}` (302 to the
 * stored URL exactly with `Cache-Control: no-store`, the click committed before the answer: its
 * row with the IP truncated and the user agent capped, the link's counters and the `link.clicked`
 * event; 404 without Location for every unknown or malformed code, a property test included; HEAD
 * records nothing; other methods 405; no token, no rate limit), `GET /v1/sms/links?id=` (400, 404,
 * isolation, order, pagination, JSON and XML), and `link.clicked` delivered to a real receiver.
 * Links are written as a queued message's links are (storeLinks), and end to end through sms/send
 * with `ShortenLinks`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { capUserAgent, isLinkCode, truncateIp, USER_AGENT_MAX_CHARS } from '../../../src/domain/links.ts';
import { linkCodeOf, locationOf } from '../../../src/http/links.ts';
import { createManualClock, type ManualClock } from '../../../src/lib/time.ts';
import { storeLinks } from '../../../src/domain/personalise.ts';
import { WebhookDeliverer } from '../../../src/webhooks/deliverer.ts';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import { emptyAccount } from '../../helpers/conventions.ts';
import { assertError, call, fmtTime, JSON_TYPE, XML_TYPE, xmlDocument } from '../../helpers/operations.ts';
import { storeTest } from '../../helpers/stores.ts';
import { startReceiver } from '../../helpers/webhook-receiver.ts';

const START_MS = Date.UTC(2026, 10, 23, 10, 0, 0);
const LINKS_PATH = '/v1/sms/links';

interface Ctx {
  ctx: TestApp;
  clock: ManualClock;
  token: string;
  accountId: number;
}

async function setup(t: { after(fn: () => unknown): void }, env: Record<string, string> = {}): Promise<Ctx> {
  const clock = createManualClock(START_MS);
  const ctx = await buildTestApp(t, { MSGSVC_WEBHOOK_ALLOW_PRIVATE: '1', ...env }, { clock });
  const demo = await ctx.seed();
  return { ctx, clock, token: demo.token, accountId: demo.account.id };
}

/** Queues a real message through sms/send and returns its id. */
async function queueMessage(s: { ctx: TestApp; token: string }, text = 'See https://example.com/a'): Promise<number> {
  const res = await call(s.ctx.app, {
    method: 'POST',
    path: '/v1/sms/send',
    token: s.token,
    body: { Message: text, MobilePhone: '+15551234567' },
  });
  assert.equal(res.statusCode, 201, res.body);
  return (JSON.parse(res.body) as { Id: number }[])[0]!.Id;
}

/** Stores links of a queued message as the queueing transaction does (storeLinks of src/domain/personalise.ts). */
async function addLinks(s: Ctx, messageId: number, links: { code: string; url: string }[], accountId = s.accountId): Promise<void> {
  await storeLinks(s.ctx.store.db, accountId, messageId, links, s.clock.nowSeconds());
}

function follow(
  s: { ctx: TestApp },
  path: string,
  headers: Record<string, string> = {},
  method: 'GET' | 'HEAD' = 'GET',
  remoteAddress?: string,
) {
  return s.ctx.app.inject({ method, url: path, headers, ...(remoteAddress ? { remoteAddress } : {}) });
}

async function linkRow(s: Ctx, code: string) {
  const r = await s.ctx.store.db.selectFrom('message_links').selectAll().where('code', '=', code).executeTakeFirstOrThrow();
  return { ...r, clicks: Number(r.clicks) };
}

async function clickRows(s: Ctx, code: string) {
  return s.ctx.store.db
    .selectFrom('link_clicks')
    .innerJoin('message_links', 'message_links.id', 'link_clicks.link_id')
    .select(['link_clicks.account_id', 'link_clicks.clicked_at', 'link_clicks.ip', 'link_clicks.user_agent'])
    .where('message_links.code', '=', code)
    .orderBy('link_clicks.id')
    .execute();
}

async function deliveryCount(s: Ctx): Promise<number> {
  const r = await s.ctx.store.db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('event', '=', 'link.clicked')
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

function assertRedirect(res: LightMyRequestResponse, url: string): void {
  assert.equal(res.statusCode, 302, res.body);
  assert.equal(res.headers.location, url);
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(res.body, '');
}

function assertPageNotFound(res: LightMyRequestResponse, wire: 'json' | 'xml' = 'json'): void {
  assertError(res, 404, 'Page not found.', wire);
  assert.equal(res.headers.location, undefined);
}

// ------------------------------------------------------------------ pure functions

test('truncateIp: IPv4 to /24, IPv6 to /48 (RFC 5952 text), IPv4-mapped IPv6 as IPv4, anything else ""', () => {
  const cases: [string | undefined, string][] = [
    ['203.0.113.77', '203.0.113.0'],
    ['203.0.113.0', '203.0.113.0'],
    ['8.8.8.8', '8.8.8.0'],
    ['127.0.0.1', '127.0.0.0'],
    ['2001:db8:1:2::5', '2001:db8:1::'],
    ['2001:DB8:ABCD:12:34:56:78:9a', '2001:db8:abcd::'],
    ['2001:0db8:0001:ffff:ffff:ffff:ffff:ffff', '2001:db8:1::'],
    ['2001:0:0:1::', '2001::'],
    ['0:db8:0::1', '0:db8::'],
    ['fe80::1%eth0', 'fe80::'],
    ['::1', '::'],
    ['::', '::'],
    ['1:2:3:4:5:6:1.2.3.4', '1:2:3::'],
    ['::ffff:203.0.113.77', '203.0.113.0'],
    ['::ffff:cb00:714d', '203.0.113.0'],
    ['::FFFF:127.0.0.1', '127.0.0.0'],
    ['0:0:0:0:0:ffff:7f00:0001', '127.0.0.0'],
    ['64:ff9b::7f00:1', '64:ff9b::'],
    ['', ''],
    [undefined, ''],
    ['not an ip', ''],
    ['203.0.113', ''],
    ['1::2::3', ''],
  ];
  for (const [input, want] of cases) assert.equal(truncateIp(input), want, String(input));
  // Property: every IPv4 address keeps its first three octets and nothing of the fourth.
  fc.assert(
    fc.property(fc.ipV4(), (ip) => {
      const o = ip.split('.');
      assert.equal(truncateIp(ip), `${o[0]}.${o[1]}.${o[2]}.0`);
      assert.equal(truncateIp(`::ffff:${ip}`), `${o[0]}.${o[1]}.${o[2]}.0`);
    }),
  );
  // Property: an IPv6 address's /48 is kept and the rest is zero, whatever form it is written in;
  // the oracle is the WHATWG URL parser's canonical form (RFC 5952 compression, hex groups).
  const canonical = (ip: string) => new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  const expand = (c: string): number[] => {
    const [head, tail] = c.includes('::') ? c.split('::') : [c, undefined];
    const h = head ? head.split(':').map((g) => parseInt(g, 16)) : [];
    const tl = tail ? tail.split(':').map((g) => parseInt(g, 16)) : [];
    return tail === undefined ? h : [...h, ...new Array<number>(8 - h.length - tl.length).fill(0), ...tl];
  };
  fc.assert(
    fc.property(fc.ipV6(), (ip) => {
      const g = expand(canonical(ip));
      const mapped = g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff;
      const want = mapped
        ? `${g[6]! >> 8}.${g[6]! & 0xff}.${g[7]! >> 8}.0`
        : canonical(`${g[0]!.toString(16)}:${g[1]!.toString(16)}:${g[2]!.toString(16)}::`);
      assert.equal(truncateIp(ip), want, ip);
    }),
    { numRuns: 500 },
  );
});

test('capUserAgent: at most 512 characters, NUL removed, no half surrogate pair; none: ""', () => {
  assert.equal(USER_AGENT_MAX_CHARS, 512);
  assert.equal(capUserAgent(undefined), '');
  assert.equal(capUserAgent('curl/8.5.0'), 'curl/8.5.0');
  assert.equal(capUserAgent('x'.repeat(600)), 'x'.repeat(512));
  assert.equal(capUserAgent('a\u0000b'), 'ab');
  assert.equal(capUserAgent(`${'x'.repeat(511)}😀`), 'x'.repeat(511));
});

test('link codes: exactly 7 characters of A-Z a-z 0-9 - _; the path as the client wrote it', () => {
  for (const c of ['abcdefg', 'ABC-_09', '-------', '_______', 'Zz9Zz9Z']) assert.equal(isLinkCode(c), true, c);
  for (const c of ['', 'abcdef', 'abcdefgh', 'abc.def', 'abc def', 'abcdéfg', 'abc%41d', 'abc/def', 'abc+def'])
    assert.equal(isLinkCode(c), false, c);
  assert.equal(linkCodeOf('/l/abcdefg'), 'abcdefg');
  assert.equal(linkCodeOf('/l/abcdefg?utm=1'), 'abcdefg');
  for (const p of ['/l/abcdefg/', '//l/abcdefg', '/l/abcdefg/x', '/l/abc%41efg', '/l/', '/L/abcdefg', '/l/abcdef', '/x/abcdefg'])
    assert.equal(linkCodeOf(p), undefined, p);
  // Location: visible ASCII as is; anything else percent-encoded as UTF-8.
  assert.equal(locationOf('https://example.com/a?b=c&d=%20#f'), 'https://example.com/a?b=c&d=%20#f');
  assert.equal(locationOf('https://example.com/ä ö'), 'https://example.com/%C3%A4%20%C3%B6');
});

// ------------------------------------------------------------------ GET /l/{code}

storeTest(
  'GET /l/{code}: 302 to the URL exactly, no-store, empty body; the click row (time, IP /24, user agent capped), counters and FirstClick/LastClick; no token needed, a bad one ignored, no rate limit',
  async (t) => {
    const s = await setup(t, { MSGSVC_RATE_LIMIT: '2' });
    const messageId = await queueMessage(s);
    const url = 'https://example.com/Path?q=1&r=%2F#frag';
    await addLinks(s, messageId, [{ code: 'Ab3-_xZ', url }]);
    const t0 = s.clock.nowSeconds();
    const ua = `Mozilla/5.0 ${'x'.repeat(700)}`;
    assertRedirect(await follow(s, '/l/Ab3-_xZ', { 'user-agent': ua }, 'GET', '203.0.113.77'), url);
    let link = await linkRow(s, 'Ab3-_xZ');
    assert.equal(link.clicks, 1);
    assert.equal(Number(link.first_click_at), t0);
    assert.equal(Number(link.last_click_at), t0);
    let clicks = await clickRows(s, 'Ab3-_xZ');
    assert.equal(clicks.length, 1);
    assert.equal(Number(clicks[0]!.clicked_at), t0);
    assert.equal(clicks[0]!.ip, '203.0.113.0');
    assert.equal(clicks[0]!.user_agent, ua.slice(0, 512));
    assert.equal(Number(clicks[0]!.account_id), s.accountId);

    // Later clicks, IPv6 and IPv4-mapped, inject's own user agent; a token given (even a wrong one) is
    // ignored; more requests than the rate limit allows.
    s.clock.advance(90_000);
    assertRedirect(await follow(s, '/l/Ab3-_xZ?access_token=wrong', {}, 'GET', '2001:db8:1:2::5'), url);
    s.clock.advance(1000);
    assertRedirect(await follow(s, `/l/Ab3-_xZ?access_token=${encodeURIComponent(s.token)}`, {}, 'GET', '::ffff:198.51.100.9'), url);
    for (let i = 0; i < 3; i++) assertRedirect(await follow(s, '/l/Ab3-_xZ'), url);
    link = await linkRow(s, 'Ab3-_xZ');
    assert.equal(link.clicks, 6);
    assert.equal(Number(link.first_click_at), t0);
    assert.equal(Number(link.last_click_at), t0 + 91);
    clicks = await clickRows(s, 'Ab3-_xZ');
    assert.deepEqual(
      clicks.map((c) => [c.ip, c.user_agent]),
      [
        ['203.0.113.0', ua.slice(0, 512)],
        ['2001:db8:1::', 'lightMyRequest'],
        ['198.51.100.0', 'lightMyRequest'],
        ['127.0.0.0', 'lightMyRequest'],
        ['127.0.0.0', 'lightMyRequest'],
        ['127.0.0.0', 'lightMyRequest'],
      ],
    );
    // The /v1 operations still count requests: the rate limit applies to them, not to /l.
    const list = await call(s.ctx.app, { path: LINKS_PATH, token: s.token, query: `id=${messageId}` });
    assert.equal(list.statusCode, 200, list.body);
    assert.deepEqual(JSON.parse(list.body), [
      { Url: url, Code: 'Ab3-_xZ', Clicks: 6, FirstClick: fmtTime(t0), LastClick: fmtTime(t0 + 91) },
    ]);
  },
);

storeTest(
  'GET /l/{code} over a real socket: the click is in sms/links as soon as the 302 arrives; the peer address is what is truncated',
  async (t) => {
    const s = await setup(t);
    const messageId = await queueMessage(s);
    await addLinks(s, messageId, [
      { code: 'sock001', url: 'https://example.com/one' },
      { code: 'sock002', url: 'http://example.org/two' },
    ]);
    let address: string;
    try {
      address = await s.ctx.app.listen({ port: 0, host: '::' });
    } catch {
      address = await s.ctx.app.listen({ port: 0, host: '127.0.0.1' });
    }
    const port = new URL(address).port;
    const links = async (base: string) =>
      (await (await fetch(`${base}${LINKS_PATH}?id=${messageId}&access_token=${encodeURIComponent(s.token)}`)).json()) as {
        Code: string;
        Clicks: number;
      }[];
    const bases = [`http://127.0.0.1:${port}`];
    if (address.includes('[')) bases.push(`http://[::1]:${port}`);
    let n = 0;
    for (const base of bases) {
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${base}/l/sock001`, { redirect: 'manual', headers: { 'user-agent': 'socket-test' } });
        n++;
        assert.equal(res.status, 302);
        assert.equal(res.headers.get('location'), 'https://example.com/one');
        assert.equal(res.headers.get('cache-control'), 'no-store');
        assert.equal(await res.text(), '');
        // The very next request sees the click: it was committed before the 302 was written.
        const seen = await links(base);
        assert.deepEqual(
          seen.map((l) => [l.Code, l.Clicks]),
          [
            ['sock001', n],
            ['sock002', 0],
          ],
        );
      }
    }
    const ips = new Set((await clickRows(s, 'sock001')).map((c) => c.ip));
    // 127.0.0.1 (seen as ::ffff:127.0.0.1 on a dual-stack socket) → 127.0.0.0; ::1 → ::.
    assert.deepEqual([...ips].sort(), bases.length === 2 ? ['127.0.0.0', '::'].sort() : ['127.0.0.0']);
    const unknown = await fetch(`${bases[0]}/l/sock003`, { redirect: 'manual' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.headers.get('location'), null);
    assert.equal(unknown.headers.get('content-type'), JSON_TYPE);
  },
);

storeTest('GET /l/{code}: concurrent clicks of one link are each counted once, and each event carries its own count', async (t) => {
  const s = await setup(t);
  const hook = await call(s.ctx.app, {
    method: 'POST',
    path: '/v1/webhooks/create',
    token: s.token,
    body: { Url: 'http://127.0.0.1:9/x', Events: ['link.clicked'] },
  });
  assert.equal(hook.statusCode, 201, hook.body);
  const messageId = await queueMessage(s);
  await addLinks(s, messageId, [{ code: 'busy_01', url: 'https://example.com/busy' }]);
  const N = 25;
  const results = await Promise.all(Array.from({ length: N }, () => follow(s, '/l/busy_01')));
  for (const r of results) assertRedirect(r, 'https://example.com/busy');
  assert.equal((await linkRow(s, 'busy_01')).clicks, N);
  assert.equal((await clickRows(s, 'busy_01')).length, N);
  const payloads = await s.ctx.store.db.selectFrom('webhook_deliveries').select('payload').where('event', '=', 'link.clicked').execute();
  const counts = payloads.map((p) => (JSON.parse(p.payload) as { data: { clicks: number } }).data.clicks).sort((a, b) => a - b);
  assert.deepEqual(
    counts,
    Array.from({ length: N }, (_, i) => i + 1),
  );
});

storeTest(
  'GET /l/{code}: unknown and malformed codes are 404 Page not found. without Location (JSON by default, XML when asked, never 406), and record nothing',
  async (t) => {
    const s = await setup(t);
    const messageId = await queueMessage(s);
    await addLinks(s, messageId, [{ code: 'abcdEfg', url: 'https://example.com/x' }]);
    const paths = [
      '/l/abcdEfh', // well-formed, unknown
      '/l/abcdefg', // another case
      '/l/abcdEf',
      '/l/abcdEfgh',
      '/l/abcd.fg',
      '/l/abcd%45fg', // a percent-escape of the stored code
      '/l/%61bcdEfg',
      '/l/abcdEfg/',
      '//l/abcdEfg',
      '/l//abcdEfg',
      '/l/abcdEfg/x',
      '/l/abcdEfg%2F',
      '/l/',
      '/l',
      '/L/abcdEfg',
      '/l/abcdEfg;x',
    ];
    for (const p of paths) {
      for (const method of ['GET', 'HEAD'] as const) {
        const res = await follow(s, p, {}, method);
        assertPageNotFound(res);
      }
    }
    // A browser's Accept: HTML cannot be given; the error is JSON, not a 406.
    const browser = await follow(s, '/l/abcdEfh', { accept: 'text/html,application/xhtml+xml' });
    assertPageNotFound(browser);
    assertPageNotFound(await follow(s, '/l/abcdEfh', { accept: 'application/xml' }), 'xml');
    assertPageNotFound(await follow(s, '/l/abcd.fg?_format=xml'), 'xml');
    assert.equal((await linkRow(s, 'abcdEfg')).clicks, 0);
    assert.equal((await clickRows(s, 'abcdEfg')).length, 0);
    // The stored code itself still works.
    assertRedirect(await follow(s, '/l/abcdEfg'), 'https://example.com/x');
  },
);

storeTest('GET /l/{code}: property — a path that is not /l/ and a stored code never redirects', async (t) => {
  const s = await setup(t);
  const messageId = await queueMessage(s);
  const stored = ['Kq7-_a0', 'zzzzzzz', '0000000'];
  await addLinks(
    s,
    messageId,
    stored.map((code) => ({ code, url: `https://example.com/${code}` })),
  );
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const codeChar = fc.constantFrom(...alphabet.split(''));
  const anyChar = fc.oneof(codeChar, fc.constantFrom('.', '~', '%', '/', ' ', 'é', '😀', '?', '#', '+', '\\', '\u0000'));
  const candidate = fc.oneof(
    fc.array(codeChar, { minLength: 7, maxLength: 7 }).map((a) => a.join('')),
    fc.array(anyChar, { minLength: 0, maxLength: 12 }).map((a) => a.join('')),
    fc
      .constantFrom(...stored)
      .chain((c) =>
        fc.oneof(
          fc.constant(`${c}/`),
          fc.constant(`${c}x`),
          fc.constant(c.slice(1)),
          fc.constant(encodeURIComponent(c[0]!) === c[0] ? `%${c.charCodeAt(0).toString(16).toUpperCase()}${c.slice(1)}` : c),
        ),
      ),
  );
  await fc.assert(
    fc.asyncProperty(candidate, async (code) => {
      // %-escapes written as such stay raw; everything else is encoded as a client would.
      const raw = /%[0-9A-F]{2}/.test(code) ? code : encodeURIComponent(code);
      if (stored.includes(code) && raw === code) return;
      const res = await follow(s, `/l/${raw}`);
      assert.notEqual(res.statusCode, 302, raw);
      assert.equal(res.headers.location, undefined, raw);
      assert.equal(res.statusCode, 404, raw);
    }),
    { numRuns: 150 },
  );
  for (const code of stored) assert.equal((await linkRow(s, code)).clicks, 0);
});

storeTest(
  'HEAD /l/{code}: the same 302 and Location, no click recorded, no event; other methods 405 with Allow (404 for a malformed code)',
  async (t) => {
    const s = await setup(t);
    await call(s.ctx.app, {
      method: 'POST',
      path: '/v1/webhooks/create',
      token: s.token,
      body: { Url: 'http://127.0.0.1:9/x', Events: ['link.clicked'] },
    });
    const messageId = await queueMessage(s);
    await addLinks(s, messageId, [{ code: 'head_me', url: 'https://example.com/h' }]);
    const head = await follow(s, '/l/head_me', { 'user-agent': 'Slackbot-LinkExpanding 1.0' }, 'HEAD');
    assertRedirect(head, 'https://example.com/h');
    assert.equal((await linkRow(s, 'head_me')).clicks, 0);
    assert.equal((await clickRows(s, 'head_me')).length, 0);
    assert.equal(await deliveryCount(s), 0);
    assertPageNotFound(await follow(s, '/l/head_mf', {}, 'HEAD'));
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const) {
      const res = await s.ctx.app.inject({ method, url: '/l/head_me' });
      assertError(res, 405, 'Method Not Allowed. This URL can only handle the following request methods: GET, HEAD.');
      assert.equal(res.headers.allow, 'GET, HEAD');
      assert.equal(res.headers.location, undefined);
      assertPageNotFound(await s.ctx.app.inject({ method, url: '/l/head.me' }));
    }
    assert.equal((await linkRow(s, 'head_me')).clicks, 0);
    assertRedirect(await follow(s, '/l/head_me'), 'https://example.com/h');
    assert.equal(await deliveryCount(s), 1);
  },
);

storeTest(
  'end to end: sms/send with ShortenLinks 1 sends {MSGSVC_LINK_DOMAIN}/l/{code}; following it redirects to the URL and counts in sms/links',
  async (t) => {
    const s = await setup(t, { MSGSVC_LINK_DOMAIN: 'https://sho.rt' });
    const res = await call(s.ctx.app, {
      method: 'POST',
      path: '/v1/sms/send',
      token: s.token,
      body: { Message: 'Offer: https://example.com/offer?id=7 and http://example.org/b', MobilePhone: '+15551234567', ShortenLinks: 1 },
    });
    assert.equal(res.statusCode, 201, res.body);
    const sent = (JSON.parse(res.body) as { Id: number; Message: string }[])[0]!;
    const codes = [...sent.Message.matchAll(/https:\/\/sho\.rt\/l\/([A-Za-z0-9_-]{7})/g)].map((m) => m[1]!);
    assert.equal(codes.length, 2, sent.Message);
    assertRedirect(await follow(s, `/l/${codes[1]}`), 'http://example.org/b');
    assertRedirect(await follow(s, `/l/${codes[0]}`), 'https://example.com/offer?id=7');
    assertRedirect(await follow(s, `/l/${codes[0]}`), 'https://example.com/offer?id=7');
    const list = await call(s.ctx.app, { path: LINKS_PATH, token: s.token, query: `id=${sent.Id}` });
    assert.equal(list.statusCode, 200, list.body);
    const at = fmtTime(s.clock.nowSeconds());
    assert.deepEqual(JSON.parse(list.body), [
      { Url: 'https://example.com/offer?id=7', Code: codes[0], Clicks: 2, FirstClick: at, LastClick: at },
      { Url: 'http://example.org/b', Code: codes[1], Clicks: 1, FirstClick: at, LastClick: at },
    ]);
  },
);

// ------------------------------------------------------------------ GET /v1/sms/links?id=

storeTest(
  "sms/links?id=: 400 missing or not an integer, 404 unknown or another account's; links by Id ascending, paginated; JSON, XML, HEAD",
  async (t) => {
    const s = await setup(t);
    const a = await queueMessage(s);
    const b = await queueMessage(s, 'no links here');
    await addLinks(s, a, [
      { code: 'pg_0001', url: 'https://example.com/1' },
      { code: 'pg_0002', url: 'http://example.com/2?a=<b>&c' },
      { code: 'pg_0003', url: 'https://example.com/3' },
    ]);
    const other = await emptyAccount(s.ctx, 'Other');
    const foreign = await queueMessage({ ctx: s.ctx, token: (await s.ctx.seed('Foreign')).token });

    assertError(await call(s.ctx.app, { path: LINKS_PATH, token: s.token }), 400, 'Missing required parameters: id');
    assertError(
      await call(s.ctx.app, { path: LINKS_PATH, token: s.token, query: 'id=abc' }),
      400,
      'Invalid data received for parameter "id".',
    );
    assertError(await call(s.ctx.app, { path: LINKS_PATH, token: s.token, query: 'id=987654321' }), 404, 'Object not found: 987654321');
    assertError(await call(s.ctx.app, { path: LINKS_PATH, token: s.token, query: `id=${foreign}` }), 404, `Object not found: ${foreign}`);
    assertError(await call(s.ctx.app, { path: LINKS_PATH, token: other.token, query: `id=${a}` }), 404, `Object not found: ${a}`);

    // No click yet: FirstClick and LastClick are null.
    s.clock.advance(60_000);
    assertRedirect(await follow(s, '/l/pg_0002'), 'http://example.com/2?a=<b>&c');
    const clicked = fmtTime(s.clock.nowSeconds());
    const all = [
      { Url: 'https://example.com/1', Code: 'pg_0001', Clicks: 0, FirstClick: null, LastClick: null },
      { Url: 'http://example.com/2?a=<b>&c', Code: 'pg_0002', Clicks: 1, FirstClick: clicked, LastClick: clicked },
      { Url: 'https://example.com/3', Code: 'pg_0003', Clicks: 0, FirstClick: null, LastClick: null },
    ];
    const full = await call(s.ctx.app, { path: LINKS_PATH, token: s.token, query: `id=${a}` });
    assert.equal(full.statusCode, 200);
    assert.equal(full.headers['content-type'], JSON_TYPE);
    assert.equal(full.body, JSON.stringify(all));
    assert.deepEqual(Object.keys((JSON.parse(full.body) as object[])[0]!), ['Url', 'Code', 'Clicks', 'FirstClick', 'LastClick']);
    assert.equal(full.headers['x-pagination-total-count'], '3');

    const page2 = await call(s.ctx.app, { path: LINKS_PATH, token: s.token, query: `id=${a}&per-page=2&page=2` });
    assert.equal(page2.statusCode, 200);
    assert.equal(page2.body, JSON.stringify(all.slice(2)));
    assert.equal(page2.headers['x-pagination-total-count'], '3');
    assert.equal(page2.headers['x-pagination-page-count'], '2');
    assert.equal(page2.headers['x-pagination-current-page'], '2');
    assert.equal(page2.headers['x-pagination-per-page'], '2');
    assert.match(String(page2.headers.link), /rel=first/);

    for (const wire of ['xml', 'xml-param'] as const) {
      const xml = await call(s.ctx.app, { path: LINKS_PATH, token: s.token, query: `id=${a}&per-page=2`, wire });
      assert.equal(xml.statusCode, 200);
      assert.equal(xml.headers['content-type'], XML_TYPE);
      assert.equal(xml.body, xmlDocument(all.slice(0, 2)));
      assert.ok(xml.body.includes('<FirstClick></FirstClick>'));
      assert.ok(xml.body.includes('<Url>http://example.com/2?a=&lt;b&gt;&amp;c</Url>'));
    }
    const head = await call(s.ctx.app, { method: 'HEAD', path: LINKS_PATH, token: s.token, query: `id=${a}` });
    assert.equal(head.statusCode, 200);
    assert.equal(head.headers['x-pagination-total-count'], '3');

    // A message without links: an empty page.
    const none = await call(s.ctx.app, { path: LINKS_PATH, token: s.token, query: `id=${b}` });
    assert.equal(none.statusCode, 200);
    assert.equal(none.body, '[]');
    assert.equal(none.headers['x-pagination-total-count'], '0');
    // Another account's links are not listed under its message id through this account, and vice versa.
    assertError(
      await call(s.ctx.app, { path: LINKS_PATH, token: other.token, query: `id=${b}`, wire: 'xml' }),
      404,
      `Object not found: ${b}`,
      'xml',
    );
    // Without a token: 401 like every /v1 operation.
    const anon = await s.ctx.app.inject({ method: 'GET', url: `${LINKS_PATH}?id=${a}` });
    assert.equal(anon.statusCode, 401);
  },
);

// ------------------------------------------------------------------ link.clicked

storeTest(
  'link.clicked: webhooks/create and update accept it; a subscribed webhook receives {MessageId, Url, Clicks}, signed; others receive nothing',
  async (t) => {
    const s = await setup(t);
    const receiver = await startReceiver();
    t.after(() => receiver.close());
    const created = await call(s.ctx.app, {
      method: 'POST',
      path: '/v1/webhooks/create',
      token: s.token,
      body: { Url: receiver.url, Events: ['link.clicked'] },
    });
    assert.equal(created.statusCode, 201, created.body);
    const hook = JSON.parse(created.body) as { Id: number; Events: string[]; Secret: string };
    assert.deepEqual(hook.Events, ['link.clicked']);
    receiver.secret = hook.Secret;
    // A second webhook that does not take link.clicked, then update adds it to a third.
    const deaf = await call(s.ctx.app, {
      method: 'POST',
      path: '/v1/webhooks/create',
      token: s.token,
      body: { Url: `${receiver.url}/deaf`, Events: ['message.sent'] },
    });
    assert.equal(deaf.statusCode, 201);
    const deafId = (JSON.parse(deaf.body) as { Id: number }).Id;
    const upd = await call(s.ctx.app, {
      method: 'PATCH',
      path: '/v1/webhooks/update',
      token: s.token,
      query: `id=${deafId}`,
      body: { Events: ['message.sent', 'link.clicked'] },
    });
    assert.equal(upd.statusCode, 200, upd.body);
    assert.deepEqual((JSON.parse(upd.body) as { Events: string[] }).Events, ['message.sent', 'link.clicked']);
    const back = await call(s.ctx.app, {
      method: 'PATCH',
      path: '/v1/webhooks/update',
      token: s.token,
      query: `id=${deafId}`,
      body: { Events: ['message.sent'] },
    });
    assert.equal(back.statusCode, 200);

    const messageId = await queueMessage(s);
    await addLinks(s, messageId, [{ code: 'hook_01', url: 'https://example.com/\u2028x' }]);
    assertRedirect(await follow(s, '/l/hook_01'), 'https://example.com/%E2%80%A8x');
    // The event was written with the click: the delivery is listed right after the 302.
    const listed = await call(s.ctx.app, { path: '/v1/webhooks/deliveries', token: s.token, query: `id=${hook.Id}` });
    assert.deepEqual(
      (JSON.parse(listed.body) as { Event: string; Status: string }[]).map((d) => [d.Event, d.Status]),
      [['link.clicked', 'Pending']],
    );
    s.clock.advance(5000);
    assertRedirect(await follow(s, '/l/hook_01'), 'https://example.com/%E2%80%A8x');

    const deliverer = new WebhookDeliverer({
      store: s.ctx.store,
      clock: s.clock,
      allowPrivate: true,
      timeoutMs: 2000,
      batchSize: 50,
      concurrency: 1,
      pollMs: 5,
    });
    await deliverer.drain();
    const got = receiver.received.filter((r) => r.json.type === 'link.clicked');
    assert.equal(got.length, 2);
    for (const r of got) assert.equal(r.verified, true);
    assert.deepEqual(
      got.map((r) => r.json.data).sort((x, y) => Number(x.Clicks) - Number(y.Clicks)),
      [
        { MessageId: messageId, Url: 'https://example.com/\u2028x', Clicks: 1 },
        { MessageId: messageId, Url: 'https://example.com/\u2028x', Clicks: 2 },
      ],
    );
    // Keys in the contract's order; U+2028 escaped as in every JSON body.
    assert.match(
      got[0]!.body,
      /^\{"type":"link\.clicked","timestamp":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ","data":\{"MessageId":\d+,"Url":"https:\/\/example\.com\/\\u2028x","Clicks":[12]\}\}$/,
    );
    assert.equal(receiver.received.filter((r) => r.json.type !== 'link.clicked').length, 0);
    assert.ok(receiver.received.every((r) => !r.body.includes('deaf')));
  },
);
