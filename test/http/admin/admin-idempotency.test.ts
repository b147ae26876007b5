/**
 * Idempotency-Key on `/admin/v1` (docs/API.md §7, §16.4), on each store: every POST honours it as
 * `/v1` does, its keys kept per operator key. A repeated top-up is replayed, not credited twice; a
 * different request with the key is 409; an empty key is 400; another operator key, or an
 * account on `/v1`, has keys of its own. Also `subaccounts/numbers`, the one `/v1` POST that did
 * not honour it.
 */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import { assertError, call } from '../../helpers/operations.ts';
import { storeTest } from '../../helpers/stores.ts';
import { ADMIN, adminOk, operatorKey, type AccountRec } from './helpers.ts';

function post(ctx: TestApp, path: string, token: string, body: unknown, key: string, query = ''): Promise<LightMyRequestResponse> {
  return ctx.app.inject({
    method: 'POST',
    url: `${path}?access_token=${encodeURIComponent(token)}${query === '' ? '' : `&${query}`}`,
    headers: { 'content-type': 'application/json', accept: 'application/json', 'idempotency-key': key },
    payload: JSON.stringify(body),
  });
}

const DIFFERENT = 'Idempotency-Key was used with a different request.';

storeTest('/admin/v1 POSTs honour Idempotency-Key per operator key: replayed, never done twice; 409; 400', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const op = await operatorKey(ctx, 'a');
  const other = await operatorKey(ctx, 'b');
  const acme = await adminOk<AccountRec>(ctx, 201, { method: 'POST', path: '/accounts/create', token: op.secret, body: { Name: 'Acme' } });
  const credits = `${ADMIN}/accounts/credits`;

  const first = await post(ctx, credits, op.secret, { Amount: 100, Note: 'march' }, 'topup-1', `id=${acme.Id}`);
  assert.equal(first.statusCode, 200, first.body);
  assert.equal(first.headers['idempotent-replayed'], undefined);
  const again = await post(ctx, credits, op.secret, { Amount: 100, Note: 'march' }, 'topup-1', `id=${acme.Id}`);
  assert.equal(again.statusCode, 200, again.body);
  assert.equal(again.headers['idempotent-replayed'], 'true');
  assert.equal(again.body, first.body);
  const view = await adminOk<AccountRec>(ctx, 200, { path: '/accounts/view', token: op.secret, query: `id=${acme.Id}` });
  assert.equal(view.AvailableCredits, 100, 'credited once');
  const ledger = await ctx.store.db.selectFrom('credit_ledger').select(['type', 'amount']).where('account_id', '=', acme.Id).execute();
  assert.deepEqual(
    ledger.map((e) => [e.type, Number(e.amount)]),
    [['topup', 100]],
  );

  // The same key with another body: 409, nothing done.
  assertError(await post(ctx, credits, op.secret, { Amount: 5 }, 'topup-1', `id=${acme.Id}`), 409, DIFFERENT);
  // Another operator key has keys of its own: the same key runs.
  const theirs = await post(ctx, credits, other.secret, { Amount: 100, Note: 'march' }, 'topup-1', `id=${acme.Id}`);
  assert.equal(theirs.statusCode, 200, theirs.body);
  assert.equal(theirs.headers['idempotent-replayed'], undefined);
  // So has an account on /v1.
  const group = await post(ctx, '/v1/groups/create', demo.token, { fname: 'Team' }, 'topup-1');
  assert.equal(group.statusCode, 201, group.body);
  assert.equal(group.headers['idempotent-replayed'], undefined);

  // A create is replayed with its Location; an empty key is a 400, as on /v1.
  const made = await post(ctx, `${ADMIN}/accounts/create`, op.secret, { Name: 'Shop' }, 'make-shop');
  const remade = await post(ctx, `${ADMIN}/accounts/create`, op.secret, { Name: 'Shop' }, 'make-shop');
  assert.equal(made.statusCode, 201, made.body);
  assert.deepEqual([remade.statusCode, remade.body, remade.headers.location], [201, made.body, made.headers.location]);
  assert.equal((await ctx.store.db.selectFrom('accounts').select('id').where('name', '=', 'Shop').execute()).length, 1, 'one account made');
  const empty = await post(ctx, `${ADMIN}/accounts/create`, op.secret, { Name: 'Empty' }, '');
  const emptyV1 = await post(ctx, '/v1/groups/create', demo.token, { fname: 'Empty' }, '');
  assert.equal(empty.statusCode, 400, empty.body);
  assert.equal(empty.body, emptyV1.body, 'the same 400 as on /v1');
  // A number given once.
  const number = { Number: '15550300001', AccountId: acme.Id };
  const given = await post(ctx, `${ADMIN}/numbers/create`, op.secret, number, 'n-1');
  const givenAgain = await post(ctx, `${ADMIN}/numbers/create`, op.secret, number, 'n-1');
  assert.equal(given.statusCode, 201, given.body);
  assert.deepEqual([givenAgain.statusCode, givenAgain.headers['idempotent-replayed']], [201, 'true'], givenAgain.body);
});

storeTest('subaccounts/numbers: a POST with Idempotency-Key is replayed', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const child = (await call(ctx.app, { method: 'POST', path: '/v1/subaccounts/create', token: demo.token, body: { Name: 'C' } })).json<{
    Id: number;
  }>();
  const numbers = (await call(ctx.app, { path: '/v1/numbers/index', token: demo.token })).json<{ Number: string; Status_Id: number }[]>();
  const active = numbers.find((n) => n.Status_Id === 0)!;
  const body = { Number: active.Number };
  const first = await post(ctx, '/v1/subaccounts/numbers', demo.token, body, 'move-1', `id=${child.Id}`);
  assert.equal(first.statusCode, 200, first.body);
  const again = await post(ctx, '/v1/subaccounts/numbers', demo.token, body, 'move-1', `id=${child.Id}`);
  assert.deepEqual([again.statusCode, again.headers['idempotent-replayed'], again.body], [200, 'true', first.body]);
  assertError(await post(ctx, '/v1/subaccounts/numbers', demo.token, { Number: '1' }, 'move-1', `id=${child.Id}`), 409, DIFFERENT);
});
