/**
 * API.md §6: one allowance per account (all tokens, all routes), default 60 per 1 s, headers on
 * every response past auth, 429 with Remaining 0, Reset = window and Retry-After.
 */
import assert from 'node:assert/strict';
import type { InjectOptions } from 'fastify';
import { setTimeout as sleep } from 'node:timers/promises';
import { issueToken } from '../../src/domain/accounts.ts';
import { withToken } from '../helpers/app.ts';
import { assertNoRateHeaders, assertRate, ids, JSON_BODY, MSG, setup } from '../helpers/conventions.ts';
import { assertError } from '../helpers/operations.ts';
import { storeTest } from '../helpers/stores.ts';

storeTest('API.md §6 defaults: Limit 60, Remaining counts down by one, Reset 0 (60 per 1 s)', async (t) => {
  const { inject, url } = await setup(t, { MSGSVC_RATE_LIMIT: '60' });
  const paths = [
    '/v1/numbers/index',
    '/v1/credits/balance',
    '/v1/sms/single-schedule-messages',
    '/v1/numbers/index',
    '/v1/credits/balance',
  ];
  let expected = 59;
  for (const path of paths) {
    const res = await inject({ url: url(path) });
    assert.equal(res.statusCode, 200);
    assertRate(res, 60, expected, 0);
    expected--;
  }
});

storeTest('API.md §6 config default is 60 per 1 second', async (t) => {
  const { ctx } = await setup(t, { MSGSVC_RATE_LIMIT: undefined, MSGSVC_RATE_WINDOW: undefined });
  assert.equal(ctx.config.rateLimit, 60);
  assert.equal(ctx.config.rateWindowSeconds, 1);
  const res = await ctx.app.inject({ url: withToken('/v1/credits/balance', (await ctx.seed('x')).token) });
  assertRate(res, 60, 59, 0);
});

storeTest('API.md §6 over the limit: 429 "Rate limit exceeded." with Remaining 0, Reset = window, Retry-After', async (t) => {
  const { inject, url } = await setup(t, { MSGSVC_RATE_LIMIT: '3', MSGSVC_RATE_WINDOW: '10' });
  const r1 = await inject({ url: url('/v1/credits/balance') });
  assertRate(r1, 3, 2, 3); // floor((3 - 2) × 10 / 3)
  const r2 = await inject({ url: url('/v1/credits/balance') });
  assertRate(r2, 3, 1, 6);
  const r3 = await inject({ url: url('/v1/credits/balance') });
  assertRate(r3, 3, 0, 10);
  assert.equal(r3.statusCode, 200);
  for (let i = 0; i < 3; i++) {
    const res = await inject({ url: url('/v1/credits/balance') });
    assertError(res, 429, MSG.rateLimited);
    assertRate(res, 3, 0, 10);
    const retryAfter = Number(res.headers['retry-after']);
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 10, `Retry-After ${res.headers['retry-after']}`);
    assert.equal(res.headers.vary, 'Accept');
  }
  const xml = await inject({ url: url('/v1/credits/balance'), headers: { accept: 'application/xml' } });
  assertError(xml, 429, MSG.rateLimited, 'xml');
});

storeTest('API.md §6 never more than the limit in one window, even in parallel', async (t) => {
  const { inject, url } = await setup(t, { MSGSVC_RATE_LIMIT: '5', MSGSVC_RATE_WINDOW: '30' });
  const results = await Promise.all(Array.from({ length: 20 }, () => inject({ url: url('/v1/numbers/index') })));
  const codes = results.map((r) => r.statusCode);
  assert.equal(codes.filter((c) => c === 200).length, 5, codes.join(','));
  assert.equal(codes.filter((c) => c === 429).length, 15);
  const remaining = results
    .filter((r) => r.statusCode === 200)
    .map((r) => Number(r.headers['x-rate-limit-remaining']))
    .sort();
  assert.deepEqual(remaining, [0, 1, 2, 3, 4]);
});

storeTest('API.md §6 errors after auth consume units and carry the rate headers', async (t) => {
  const { inject, url, demo } = await setup(t, { MSGSVC_RATE_LIMIT: '6', MSGSVC_RATE_WINDOW: '60' });
  const { group } = ids(demo);
  const steps: [InjectOptions, number][] = [
    [{ method: 'PUT', url: url('/v1/groups/update'), headers: JSON_BODY, payload: '{}' }, 400],
    [{ method: 'PUT', url: url('/v1/groups/update', 'id=999999'), headers: JSON_BODY, payload: '{"fname":"Valid"}' }, 404],
    [{ method: 'PUT', url: url('/v1/groups/update', `id=${group}`), headers: JSON_BODY, payload: '{}' }, 422],
    [{ method: 'PUT', url: url('/v1/groups/update', `id=${group}`), headers: JSON_BODY, payload: '{' }, 400],
    [{ method: 'PUT', url: url('/v1/groups/update', `id=${group}`), headers: { 'content-type': 'text/plain' }, payload: 'x' }, 415],
    [{ url: url('/v1/contacts/find') }, 400],
  ];
  let remaining = 5;
  for (const [req, status] of steps) {
    const res = await inject(req);
    assert.equal(res.statusCode, status, res.body);
    assertRate(res, 6, remaining);
    remaining--;
  }
  assertError(await inject({ url: url('/v1/credits/balance') }), 429, MSG.rateLimited);
});

storeTest('API.md §6 requests stopped before auth (404 route, 406, 405, 401) carry no rate headers and consume nothing', async (t) => {
  const { inject, url } = await setup(t, { MSGSVC_RATE_LIMIT: '2', MSGSVC_RATE_WINDOW: '60' });
  const early = [
    await inject({ url: url('/v1/nope') }),
    await inject({ url: url('/v1/numbers/index'), headers: { accept: 'text/html' } }),
    await inject({ url: url('/v1/numbers/index', '_format=csv') }),
    await inject({ method: 'DELETE', url: url('/v1/numbers/index') }),
    await inject({ url: '/v1/numbers/index?access_token=wrong' }),
    await inject({ url: '/v1/numbers/index' }),
    await inject({ method: 'PUT', url: '/v1/groups/update?id=1&access_token=', headers: JSON_BODY, payload: '{' }),
  ];
  for (const res of early) {
    assert.ok(res.statusCode >= 400);
    assertNoRateHeaders(res);
  }
  assertRate(await inject({ url: url('/v1/credits/balance') }), 2, 1);
  assertRate(await inject({ url: url('/v1/credits/balance') }), 2, 0);
  // Once exhausted, 401s stay 401s without rate headers.
  const unauthorized = await inject({ url: '/v1/credits/balance?access_token=wrong' });
  assertError(unauthorized, 401, MSG.invalidCredentials);
  assertNoRateHeaders(unauthorized);
});

storeTest('API.md §6 one allowance per account, shared by its tokens and across routes', async (t) => {
  const { inject, ctx, demo, token } = await setup(t, { MSGSVC_RATE_LIMIT: '4', MSGSVC_RATE_WINDOW: '60' });
  const second = (await issueToken(ctx.store, demo.account.id, 'second')).token;
  assertRate(await inject({ url: withToken('/v1/numbers/index', token) }), 4, 3);
  assertRate(await inject({ url: withToken('/v1/credits/balance', second) }), 4, 2);
  assertRate(await inject({ url: withToken('/v1/sms/single-schedule-messages', token) }), 4, 1);
  assertRate(await inject({ method: 'POST', url: withToken('/v1/keyword/reserve', second), headers: JSON_BODY, payload: '{}' }), 4, 0);
  assertError(await inject({ url: withToken('/v1/numbers/index', token) }), 429, MSG.rateLimited);
  assertError(await inject({ url: withToken('/v1/credits/balance', second) }), 429, MSG.rateLimited);
  const third = (await issueToken(ctx.store, demo.account.id, 'third')).token;
  assertError(await inject({ url: withToken('/v1/contacts/find', third) }), 429, MSG.rateLimited);
});

storeTest('API.md §6 two accounts are independent', async (t) => {
  const { inject, ctx, token } = await setup(t, { MSGSVC_RATE_LIMIT: '2', MSGSVC_RATE_WINDOW: '60' });
  const other = await ctx.seed('Other account');
  await inject({ url: withToken('/v1/credits/balance', token) });
  await inject({ url: withToken('/v1/credits/balance', token) });
  assertError(await inject({ url: withToken('/v1/credits/balance', token) }), 429, MSG.rateLimited);
  const res = await inject({ url: withToken('/v1/credits/balance', other.token) });
  assert.equal(res.statusCode, 200);
  assertRate(res, 2, 1);
});

storeTest('API.md §6 the allowance is full again after the window', async (t) => {
  const { inject, url } = await setup(t, { MSGSVC_RATE_LIMIT: '2', MSGSVC_RATE_WINDOW: '1' });
  assertRate(await inject({ url: url('/v1/credits/balance') }), 2, 1);
  assertRate(await inject({ url: url('/v1/credits/balance') }), 2, 0);
  const limited = await inject({ url: url('/v1/credits/balance') });
  assertError(limited, 429, MSG.rateLimited);
  assertRate(limited, 2, 0, 1);
  assert.equal(limited.headers['retry-after'], '1');
  await sleep(1100);
  const again = await inject({ url: url('/v1/credits/balance') });
  assert.equal(again.statusCode, 200);
  assertRate(again, 2, 1);
});
