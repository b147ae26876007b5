/**
 * Who reaches /admin/v1 (docs/API.md §16.4), on each store: an operator key only, as
 * `access_token` or `Authorization: Bearer`; an account key, a console cookie (of a key or of a
 * person), a revoked or unknown operator key and no credential are all 401 with CONVENTIONS' one
 * message, in JSON and XML; an operator key is 401 on /v1. Routing 404, 405 with Allow and 406 come
 * first, as on /v1. The rate limit counts per operator key, apart from any account's. An operator
 * key signs in to the console too: that session opens /admin/v1 (CSRF on writes), never /v1.
 */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { purgeExpired } from '../../../src/domain/housekeeping.ts';
import { revokeOperatorKey } from '../../../src/domain/operators.ts';
import { createManualClock, systemClock } from '../../../src/lib/time.ts';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import { assertError, call, WIRES } from '../../helpers/operations.ts';
import { storeTest } from '../../helpers/stores.ts';
import { ADMIN, admin, auditRows, eventually, operatorKey } from './helpers.ts';

const INVALID = 'Your request was made with invalid credentials.';

function cookieOf(res: LightMyRequestResponse): string {
  const set = res.headers['set-cookie'];
  const line = Array.isArray(set) ? set[0]! : String(set);
  return line.split(';')[0]!;
}

/** A console cookie signed in with an account key, and one of a person (an owner invited by that key). */
async function cookies(ctx: TestApp, token: string): Promise<{ keyCookie: string; userCookie: string }> {
  const json = { 'content-type': 'application/json', accept: 'application/json' };
  const byKey = await ctx.app.inject({
    method: 'POST',
    url: '/console/api/session',
    headers: json,
    payload: JSON.stringify({ Key: token }),
  });
  assert.equal(byKey.statusCode, 204, byKey.body);
  const invited = await call(ctx.app, {
    method: 'POST',
    path: '/v1/users/create',
    token,
    body: { Email: 'owner@example.com', Role: 'owner' },
  });
  assert.equal(invited.statusCode, 201, invited.body);
  const code = invited.json<{ InviteUrl: string }>().InviteUrl.split('#/invite/')[1]!;
  const accepted = await ctx.app.inject({
    method: 'POST',
    url: '/console/api/invite',
    headers: json,
    payload: JSON.stringify({ Code: code, Password: 'correct horse battery staple' }),
  });
  assert.equal(accepted.statusCode, 204, accepted.body);
  return { keyCookie: cookieOf(byKey), userCookie: cookieOf(accepted) };
}

storeTest('/admin/v1: an operator key only; account keys, console cookies, revoked keys: 401; an operator key on /v1: 401', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const op = await operatorKey(ctx);
  const { keyCookie, userCookie } = await cookies(ctx, demo.token);
  const url = `${ADMIN}/accounts/index`;

  // The operator key, as access_token and as Authorization: Bearer.
  assert.equal((await admin(ctx, { path: '/accounts/index', token: op.secret })).statusCode, 200);
  const bearer = await ctx.app.inject({ url, headers: { authorization: `Bearer ${op.secret}` } });
  assert.equal(bearer.statusCode, 200, bearer.body);
  // access_token wins over Authorization: a bad access_token with a good Bearer is refused.
  assertError(await ctx.app.inject({ url: `${url}?access_token=nope`, headers: { authorization: `Bearer ${op.secret}` } }), 401, INVALID);

  for (const wire of WIRES) {
    // An account's key (its `*` included), no credential, an unknown key.
    assertError(await admin(ctx, { path: '/accounts/index', token: demo.token, wire }), 401, INVALID, wire);
    assertError(await admin(ctx, { path: '/accounts/index', token: 'not-a-key', wire }), 401, INVALID, wire);
    assertError(
      await admin(ctx, { method: 'POST', path: '/accounts/create', token: demo.token, wire, body: { Name: 'x' } }),
      401,
      INVALID,
      wire,
    );
  }
  assertError(await ctx.app.inject({ url }), 401, INVALID);
  assertError(await ctx.app.inject({ url, headers: { authorization: `Bearer ${demo.token}` } }), 401, INVALID);
  // Console cookies (a key's session, a person's session) are never read on /admin/v1.
  for (const cookie of [keyCookie, userCookie]) {
    assert.equal((await ctx.app.inject({ url: '/v1/credits/balance', headers: { cookie } })).statusCode, 200, 'the cookie works on /v1');
    assertError(await ctx.app.inject({ url, headers: { cookie } }), 401, INVALID);
  }

  // An operator key on /v1 is no account's key.
  for (const wire of WIRES) {
    assertError(await call(ctx.app, { path: '/v1/numbers/index', token: op.secret, wire }), 401, INVALID, wire);
  }
  assertError(await ctx.app.inject({ url: '/v1/credits/balance', headers: { authorization: `Bearer ${op.secret}` } }), 401, INVALID);
  // Revoked: 401 at once; another operator key keeps working.
  const other = await operatorKey(ctx, 'second');
  assert.equal(await revokeOperatorKey({ store: ctx.store, clock: systemClock }, op.id), true);
  assert.equal(await revokeOperatorKey({ store: ctx.store, clock: systemClock }, op.id), false, 'revoking twice');
  assertError(await admin(ctx, { path: '/accounts/index', token: op.secret }), 401, INVALID);
  assert.equal((await admin(ctx, { path: '/accounts/index', token: other.secret })).statusCode, 200);
  // Its last use is recorded (to the minute), never its secret. The request does not wait for that
  // write (it is off the hot path), so it is read until it lands (CI: read before it, on PostgreSQL).
  const stored = () => ctx.store.db.selectFrom('operator_keys').selectAll().where('id', '=', other.id).executeTakeFirstOrThrow();
  await eventually(async () => assert.notEqual((await stored()).last_used_at, null));
  const row = await stored();
  assert.equal(row.prefix, other.secret.slice(0, 8));
  assert.ok(!Object.values(row).some((v) => String(v) === other.secret));
});

storeTest('/admin/v1: routing 404, 405 with Allow, 406 come before 401, as on /v1; errors in XML', async (t) => {
  const ctx = await buildTestApp(t);
  const op = await operatorKey(ctx);
  for (const wire of WIRES) {
    assertError(await admin(ctx, { path: '/nothing/index', token: op.secret, wire }), 404, 'Page not found.', wire);
    assertError(await admin(ctx, { path: '/accounts/nothing', token: 'bad', wire }), 404, 'Page not found.', wire);
    const wrong = await admin(ctx, { method: 'DELETE', path: '/accounts/index', token: 'bad', wire });
    assertError(wrong, 405, 'Method Not Allowed. This URL can only handle the following request methods: GET, HEAD.', wire);
    assert.equal(wrong.headers.allow, 'GET, HEAD');
    const update = await admin(ctx, { method: 'POST', path: '/accounts/update', token: op.secret, wire, query: 'id=1' });
    assert.equal(update.statusCode, 405);
    assert.equal(update.headers.allow, 'PUT, PATCH');
  }
  const notAcceptable = await ctx.app.inject({ url: `${ADMIN}/accounts/index?access_token=bad`, headers: { accept: 'text/html' } });
  assertError(notAcceptable, 406, 'None of your requested content types is supported.');
  // A trailing slash and leading repeated slashes route as on /v1.
  assert.equal((await ctx.app.inject({ url: `/${ADMIN}/accounts/index/?access_token=${op.secret}` })).statusCode, 200);
  // HEAD answers as GET without a body.
  const head = await ctx.app.inject({ method: 'HEAD', url: `${ADMIN}/accounts/index?access_token=${op.secret}` });
  assert.equal(head.statusCode, 200);
  assert.equal(head.headers['x-pagination-total-count'], '0');
});

storeTest('/admin/v1: the rate limit counts per operator key, apart from the accounts; its headers as on /v1', async (t) => {
  const ctx = await buildTestApp(t, { MSGSVC_RATE_LIMIT: '3', MSGSVC_RATE_WINDOW: '60' });
  const demo = await ctx.seed();
  const a = await operatorKey(ctx, 'a');
  const b = await operatorKey(ctx, 'b');
  for (let i = 0; i < 3; i++) {
    const res = await admin(ctx, { path: '/accounts/index', token: a.secret });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['x-rate-limit-limit'], '3');
    assert.equal(res.headers['x-rate-limit-remaining'], String(2 - i));
  }
  const over = await admin(ctx, { path: '/accounts/index', token: a.secret });
  assertError(over, 429, 'Rate limit exceeded.');
  assert.equal(over.headers['x-rate-limit-remaining'], '0');
  assert.ok(Number(over.headers['retry-after']) >= 1);
  // Another operator key, and the account whose id is the same number, have their own allowance.
  assert.equal((await admin(ctx, { path: '/accounts/index', token: b.secret })).statusCode, 200);
  const own = await call(ctx.app, { path: '/v1/credits/balance', token: demo.token });
  assert.equal(own.statusCode, 200);
  assert.equal(own.headers['x-rate-limit-remaining'], '2');
  // A refused credential is not counted (401 before 429).
  assertError(await admin(ctx, { path: '/accounts/index', token: demo.token }), 401, INVALID);
});

storeTest(
  'An operator key signs in to the console: the session opens /admin/v1 (CSRF on writes), never /v1; sign-out, revocation and the idle limit end it',
  async (t) => {
    const clock = createManualClock();
    const ctx = await buildTestApp(t, {}, { clock });
    const demo = await ctx.seed();
    const op = await operatorKey(ctx, 'night shift', clock);
    const json = { 'content-type': 'application/json', accept: 'application/json' };
    const signIn = (key: string) =>
      ctx.app.inject({ method: 'POST', url: '/console/api/session', headers: json, payload: JSON.stringify({ Key: key }) });

    const opened = await signIn(op.secret);
    assert.equal(opened.statusCode, 204, opened.body);
    assert.match(String(opened.headers['set-cookie']), /^msgsvc_session=[^;]+; Max-Age=604800; Path=\/; HttpOnly; SameSite=Strict$/);
    const cookie = cookieOf(opened);
    // Only the hash of the cookie's value is stored, in the operator's own table.
    const rows = await ctx.store.db.selectFrom('operator_sessions').selectAll().execute();
    assert.equal(rows.length, 1);
    assert.equal(Number(rows[0]!.operator_key_id), op.id);
    assert.notEqual(rows[0]!.token_hash, cookie.split('=')[1]);
    assert.equal((await ctx.store.db.selectFrom('sessions').select('id').execute()).length, 0, 'no account session');

    const session = await ctx.app.inject({ url: '/console/api/session', headers: { cookie } });
    assert.equal(session.statusCode, 200, session.body);
    const body = session.json<Record<string, unknown>>();
    assert.deepEqual(Object.keys(body), ['User', 'Key', 'Account', 'Operator', 'Scopes', 'CsrfToken', 'TimeZone']);
    assert.deepEqual(
      { ...body, CsrfToken: typeof body.CsrfToken },
      {
        User: null,
        Key: null,
        Account: null,
        Operator: { Id: op.id, Name: 'night shift' },
        Scopes: ['*'],
        CsrfToken: 'string',
        TimeZone: ctx.config.timeZone,
      },
    );
    const csrf = String(body.CsrfToken);

    // /admin/v1 by the cookie: reads as they are; a write needs the session's X-CSRF-Token.
    const list = await ctx.app.inject({ url: `${ADMIN}/accounts/index`, headers: { cookie } });
    assert.equal(list.statusCode, 200, list.body);
    const xml = await ctx.app.inject({ url: `${ADMIN}/accounts/index`, headers: { cookie, accept: 'application/xml' } });
    assert.equal(xml.statusCode, 200);
    assert.match(xml.body, /^<\?xml/);
    const create = (headers: Record<string, string>) =>
      ctx.app.inject({
        method: 'POST',
        url: `${ADMIN}/accounts/create`,
        headers: { cookie, ...json, ...headers },
        payload: '{"Name":"Acme"}',
      });
    assertError(await create({}), 403, 'You are not allowed to perform this action.');
    assertError(await create({ 'x-csrf-token': `${csrf.slice(1)}x` }), 403, 'You are not allowed to perform this action.');
    const made = await create({ 'x-csrf-token': csrf });
    assert.equal(made.statusCode, 201, made.body);
    // The write's audit entry names the operator, in the account it made.
    const id = made.json<{ Id: number }>().Id;
    await eventually(async () => assert.ok((await auditRows(ctx, id)).some((r) => r.actor === `operator:${op.id}:night shift`)));

    // Never /v1, nor a person's own settings.
    assertError(await ctx.app.inject({ url: '/v1/credits/balance', headers: { cookie } }), 401, INVALID);
    assertError(await ctx.app.inject({ url: '/console/api/passkeys', headers: { cookie } }), 401, INVALID);
    // An account key's sign-in is unchanged (Operator null).
    const byKey = await signIn(demo.token);
    assert.equal(byKey.statusCode, 204);
    const keySession = await ctx.app.inject({ url: '/console/api/session', headers: { cookie: cookieOf(byKey) } });
    assert.equal(keySession.json<{ Operator: unknown; Account: { Id: number } }>().Operator, null);
    assert.equal(keySession.json<{ Account: { Id: number } }>().Account.Id, demo.account.id);

    // Sign-out ends it.
    const out = await ctx.app.inject({ method: 'DELETE', url: '/console/api/session', headers: { cookie, 'x-csrf-token': csrf } });
    assert.equal(out.statusCode, 204);
    assertError(await ctx.app.inject({ url: `${ADMIN}/accounts/index`, headers: { cookie } }), 401, INVALID);
    assertError(await ctx.app.inject({ url: '/console/api/session', headers: { cookie } }), 401, INVALID);

    // Idle for 12 hours: ended; used within them: kept (the limit slides).
    const second = cookieOf(await signIn(op.secret));
    clock.advance(11 * 3600_000);
    assert.equal((await ctx.app.inject({ url: `${ADMIN}/carriers/index`, headers: { cookie: second } })).statusCode, 200);
    clock.advance(11 * 3600_000);
    assert.equal((await ctx.app.inject({ url: `${ADMIN}/carriers/index`, headers: { cookie: second } })).statusCode, 200);
    clock.advance(12 * 3600_000);
    assertError(await ctx.app.inject({ url: `${ADMIN}/carriers/index`, headers: { cookie: second } }), 401, INVALID);

    // Revoking the operator key ends its sessions at once; it no longer signs in; the purge removes them.
    const third = cookieOf(await signIn(op.secret));
    assert.equal((await ctx.app.inject({ url: `${ADMIN}/usage/index`, headers: { cookie: third } })).statusCode, 200);
    assert.equal(await revokeOperatorKey({ store: ctx.store, clock }, op.id), true);
    assertError(await ctx.app.inject({ url: `${ADMIN}/usage/index`, headers: { cookie: third } }), 401, INVALID);
    assertError(await ctx.app.inject({ url: '/console/api/session', headers: { cookie: third } }), 401, INVALID);
    const refused = await signIn(op.secret);
    assert.equal(refused.statusCode, 422);
    assert.deepEqual(refused.json(), [{ field: 'Key', message: 'Key is invalid.' }]);
    await purgeExpired(ctx.store, clock.nowSeconds(), 90);
    assert.equal((await ctx.store.db.selectFrom('operator_sessions').select('id').execute()).length, 0);
  },
);
