import assert from 'node:assert/strict';
import { buildTestApp, withToken } from './helpers/app.ts';
import { storeTest } from './helpers/stores.ts';

storeTest('credits/balance answers the seeded balance in JSON', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const res = await ctx.app.inject({ url: withToken('/v1/credits/balance', demo.token) });
  assert.equal(res.statusCode, 200);
  assert.equal(res.body, '{"AvailableCredits":2500}');
});
