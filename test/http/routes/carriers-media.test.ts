/**
 * The signed media links of a Twilio-compatible carrier (API.md §14.1): `GET
 * /v1/carriers/{name}/media?…` serves a medium's bytes without a token to whoever holds a link
 * msgsvc issued for that carrier (src/lib/signed-link.ts signMediaLink, keyed with
 * mediaLinkSecret, the key the dispatcher signs `MediaUrl`s with), with its Content-Type,
 * Content-Length and Range as media/download has them; anything altered, issued for another
 * carrier or past its expiry (a minute past, on the test clock) is 403 with no bytes. On each
 * store, over app.inject and a real socket.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import { mediaLinkSecret, signMediaLink } from '../../../src/lib/signed-link.ts';
import { createManualClock } from '../../../src/lib/time.ts';
import { buildTestApp, withToken, type TestApp } from '../../helpers/app.ts';
import { multipart, pngImage } from '../../helpers/images.ts';
import { assertError } from '../../helpers/operations.ts';
import { storeTest } from '../../helpers/stores.ts';

const TOKEN = 'tw-auth-token-0123456789abcdef';
const OTHER_TOKEN = 'another-token-fedcba9876543210';
const ENV = {
  MSGSVC_CARRIERS: `tw=twilio+http://ACx:${TOKEN}@127.0.0.1:9,tw2=twilio+http://ACx:${OTHER_TOKEN}@127.0.0.1:9,sm=smpp://sys:pw@127.0.0.1:9`,
  MSGSVC_PUBLIC_URL: 'https://sms.example.com',
  // The Twilio entries name 127.0.0.1 (a literal private address stops the start without it).
  MSGSVC_CARRIER_ALLOW_PRIVATE: '1',
  MSGSVC_RATE_LIMIT: '4',
};
const BAD_LINK = 'This media link is invalid or has expired.';
const DAY = 86_400;

/** A PNG over several 256 KiB chunks (noise does not compress; level 0 stores it raw). */
function bigPng(): Buffer {
  let seed = 7;
  const next = () => (seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff) & 0xff;
  return pngImage(540, 540, () => [next(), next(), next()], 0);
}

async function upload(ctx: TestApp, token: string, data: Buffer): Promise<number> {
  const mp = multipart([{ name: 'file', filename: 'photo.png', type: 'image/png', data }]);
  const res = await ctx.app.inject({
    method: 'POST',
    url: withToken('/v1/media/upload', token),
    headers: { 'content-type': mp.contentType },
    payload: mp.body,
  });
  assert.equal(res.statusCode, 201, res.body);
  return (JSON.parse(res.body) as { Id: number }).Id;
}

function get(
  ctx: TestApp,
  query: string,
  o: { carrier?: string; method?: 'GET' | 'HEAD'; headers?: Record<string, string> } = {},
): Promise<LightMyRequestResponse> {
  return ctx.app.inject({ method: o.method ?? 'GET', url: `/v1/carriers/${o.carrier ?? 'tw'}/media?${query}`, headers: o.headers ?? {} });
}

function assertForbidden(res: LightMyRequestResponse, what: string): void {
  try {
    assertError(res, 403, BAD_LINK);
  } catch (err) {
    (err as Error).message = `${what}: ${(err as Error).message}`;
    throw err;
  }
}

storeTest('a valid link serves the bytes, Content-Type and Content-Length; HEAD; Range as media/download has it', async (t) => {
  const clock = createManualClock(1_800_000_000_000);
  const ctx = await buildTestApp(t, ENV, { clock });
  const demo = await ctx.seed();
  const png = bigPng();
  assert.ok(png.length > 3 * 256 * 1024, 'several chunks');
  const id = await upload(ctx, demo.token, png);
  const query = signMediaLink(
    mediaLinkSecret({ authToken: TOKEN }),
    { carrier: 'tw', accountId: demo.account.id, mediaId: id },
    clock.nowSeconds() + DAY,
  );

  const whole = await get(ctx, query);
  assert.equal(whole.statusCode, 200);
  assert.equal(whole.headers['content-type'], 'image/png');
  assert.equal(whole.headers['content-length'], String(png.length));
  assert.equal(whole.headers['accept-ranges'], 'bytes');
  assert.ok(whole.rawPayload.equals(png), 'the very bytes uploaded');
  assert.equal(whole.headers['x-rate-limit-limit'], undefined, 'no rate limit');

  const head = await get(ctx, query, { method: 'HEAD' });
  assert.equal(head.statusCode, 200);
  assert.equal(head.headers['content-length'], String(png.length));
  assert.equal(head.headers['content-type'], 'image/png');
  assert.equal(head.rawPayload.length, 0);

  // One range, across a chunk boundary; a suffix; an open end; past the end: 416.
  const from = 256 * 1024 - 10;
  const part = await get(ctx, query, { headers: { range: `bytes=${from}-${from + 99}` } });
  assert.equal(part.statusCode, 206);
  assert.equal(part.headers['content-range'], `bytes ${from}-${from + 99}/${png.length}`);
  assert.equal(part.headers['content-length'], '100');
  assert.ok(part.rawPayload.equals(png.subarray(from, from + 100)));
  const suffix = await get(ctx, query, { headers: { range: 'bytes=-5' } });
  assert.equal(suffix.statusCode, 206);
  assert.ok(suffix.rawPayload.equals(png.subarray(png.length - 5)));
  const open = await get(ctx, query, { headers: { range: `bytes=${png.length - 3}-` } });
  assert.ok(open.rawPayload.equals(png.subarray(png.length - 3)));
  const past = await get(ctx, query, { headers: { range: `bytes=${png.length}-` } });
  assertError(past, 416, 'Requested range not satisfiable.');
  assert.equal(past.headers['content-range'], `bytes */${png.length}`);

  // Many fetches (a provider fetching each MediaUrl, retrying): never rate limited (the API's limit here is 4).
  for (let i = 0; i < 8; i++) assert.equal((await get(ctx, query, { method: 'HEAD' })).statusCode, 200);
});

storeTest('anything altered, another carrier, or a minute past the expiry: 403 and no bytes', async (t) => {
  const clock = createManualClock(1_800_000_000_000);
  const ctx = await buildTestApp(t, ENV, { clock });
  const demo = await ctx.seed();
  const other = await ctx.seed('Other account');
  const png = pngImage(8, 8, () => [1, 2, 3]);
  const id = await upload(ctx, demo.token, png);
  const otherId = await upload(ctx, other.token, png);
  const secret = mediaLinkSecret({ authToken: TOKEN });
  const expires = clock.nowSeconds() + DAY;
  const query = signMediaLink(secret, { carrier: 'tw', accountId: demo.account.id, mediaId: id }, expires);
  const [a, m, e, s] = query.split('&') as [string, string, string, string];
  const sig = s.slice(2);
  const flip = (c: string) => (c === 'A' ? 'B' : 'A');
  const cases: [string, string, string?][] = [
    ['no query', ''],
    ['another medium', `a=${demo.account.id}&m=${otherId}&${e}&${s}`],
    ['another account', `a=${other.account.id}&${m}&${e}&${s}`],
    ['a later expiry', `${a}&${m}&e=${expires + DAY}&${s}`],
    ['the signature altered', `${a}&${m}&${e}&s=${flip(sig[0]!)}${sig.slice(1)}`],
    ['the signature cut', `${a}&${m}&${e}&s=${sig.slice(0, -1)}`],
    ['the signature padded', `${query}=`],
    ['no signature', `${a}&${m}&${e}`],
    ['reordered', `${m}&${a}&${e}&${s}`],
    ['an extra parameter', `${query}&x=1`],
    ['an extra parameter first', `x=1&${query}`],
    ['a parameter twice', `${query}&${s}`],
    ['percent-encoded', query.replace('a=', '%61=')],
    ['a leading zero', query.replace(`a=${demo.account.id}`, `a=0${demo.account.id}`)],
    ['an access token added', `${query}&access_token=${demo.token}`],
    ['issued for tw, used on tw2', query, 'tw2'],
    [
      'signed with the token itself, not the derived key',
      signMediaLink(TOKEN, { carrier: 'tw', accountId: demo.account.id, mediaId: id }, expires),
    ],
    [
      'signed with tw2’s key',
      signMediaLink(mediaLinkSecret({ authToken: OTHER_TOKEN }), { carrier: 'tw', accountId: demo.account.id, mediaId: id }, expires),
    ],
  ];
  for (const [what, q, carrier] of cases) {
    for (const method of ['GET', 'HEAD'] as const) {
      const res = await get(ctx, q, { method, ...(carrier ? { carrier } : {}) });
      if (method === 'GET') assertForbidden(res, what);
      else assert.equal(res.statusCode, 403, what);
      assert.notEqual(res.headers['content-type'], 'image/png', what);
      assert.ok(!res.rawPayload.includes(png.subarray(0, 8)), `${what}: no bytes`);
    }
  }
  // Errors follow `_format` and Accept, as every error does (and the link with `_format` added is altered).
  assertError(await get(ctx, `${query}&_format=xml`), 403, BAD_LINK, 'xml-param');
  assertError(await get(ctx, `${a}&${m}&${e}`, { headers: { accept: 'application/xml' } }), 403, BAD_LINK, 'xml');
  assertError(await get(ctx, `${a}&${m}&${e}`, { headers: { accept: 'image/*' } }), 403, BAD_LINK);
  // A name of another kind, or unknown: 404 whatever the link.
  assertError(await get(ctx, query, { carrier: 'sm' }), 404, 'Page not found.');
  assertError(await get(ctx, query, { carrier: 'nope' }), 404, 'Page not found.');
  assertError(
    await ctx.app.inject({ method: 'POST', url: `/v1/carriers/tw/media?${query}` }),
    405,
    'Method Not Allowed. This URL can only handle the following request methods: GET, HEAD.',
  );

  // Expiry on the test clock: valid up to its second, 403 a minute past it.
  clock.set((expires - 1) * 1000);
  assert.equal((await get(ctx, query)).statusCode, 200, 'a second before');
  clock.set(expires * 1000);
  assert.equal((await get(ctx, query)).statusCode, 200, 'at the expiry second');
  clock.set((expires + 60) * 1000);
  assertForbidden(await get(ctx, query), 'a minute past the expiry');
  assert.equal((await get(ctx, query, { method: 'HEAD' })).statusCode, 403);
});

storeTest(
  'a valid link to a medium deleted since: 404; over a real socket the bytes arrive whole; the log keeps no signature',
  async (t) => {
    const clock = createManualClock(1_800_000_000_000);
    const lines: string[] = [];
    const ctx = await buildTestApp(t, { ...ENV, LOG_LEVEL: 'info' }, { clock, logDestination: { write: (line) => void lines.push(line) } });
    const demo = await ctx.seed();
    const png = bigPng();
    const id = await upload(ctx, demo.token, png);
    const gone = await upload(
      ctx,
      demo.token,
      pngImage(4, 4, () => [9, 9, 9]),
    );
    const secret = mediaLinkSecret({ authToken: TOKEN });
    const link = (mediaId: number) =>
      signMediaLink(secret, { carrier: 'tw', accountId: demo.account.id, mediaId }, clock.nowSeconds() + DAY);
    assert.equal((await ctx.app.inject({ method: 'DELETE', url: withToken(`/v1/media/delete?id=${gone}`, demo.token) })).statusCode, 204);
    assertError(await get(ctx, link(gone)), 404, `Object not found: ${gone}`);

    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
    const res = await fetch(`${base}/v1/carriers/tw/media?${link(id)}`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/png');
    assert.equal(res.headers.get('content-length'), String(png.length));
    assert.ok(Buffer.from(await res.arrayBuffer()).equals(png));
    const ranged = await fetch(`${base}/v1/carriers/tw/media?${link(id)}`, { headers: { range: 'bytes=300000-300009' } });
    assert.equal(ranged.status, 206);
    assert.ok(Buffer.from(await ranged.arrayBuffer()).equals(png.subarray(300_000, 300_010)));
    const altered = await fetch(`${base}/v1/carriers/tw/media?${link(id).replace(/s=./, 's=_')}`);
    assert.equal(altered.status, 403);
    assert.deepEqual(await altered.json(), { name: 'Forbidden', message: BAD_LINK, code: 0, status: 403 });
    // The link is the permission to fetch the medium: its signature stays out of the log.
    await ctx.close();
    const logged = lines.join('');
    assert.match(logged, /\/v1\/carriers\/tw\/media\?a=\d+&m=\d+&e=\d+&s=\*\*\*/);
    assert.ok(!logged.includes(link(id).slice(-43)), 'no signature in the log');
  },
);
