/**
 * People and sessions (API.md §15.3–15.4) on each store: `/v1/users/…` with invites, roles and
 * the owner rules; passwords (length, the common list, Argon2id at rest); sign-in and its 422s;
 * the cookie's attributes; `/v1` with the cookie, the role's scopes and the CSRF check; sign-out,
 * reset and removal ending sessions; two-factor (TOTP computed here with otpauth, replay refused,
 * recovery codes single-use); sign in with a key; the lockout; and the same answer for an unknown
 * email and a wrong password, whose times are measured and printed (a figure, not a timed test).
 */
import assert from 'node:assert/strict';
import * as OTPAuth from 'otpauth';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import { assert422, assertError, call, fieldError } from '../../helpers/operations.ts';
import { storeTest } from '../../helpers/stores.ts';
import { createManualClock, type ManualClock } from '../../../src/lib/time.ts';
import {
  codeOf,
  cookieOf,
  FORBIDDEN,
  invite,
  PASSWORD,
  person,
  UNAUTHORIZED,
  withCookie,
  type UserReply,
} from '../../helpers/console-session.ts';

async function post(ctx: TestApp, url: string, body: unknown, cookie?: string, remoteAddress = '127.0.0.1') {
  return ctx.app.inject({
    method: 'POST',
    url,
    payload: JSON.stringify(body),
    headers: { 'content-type': 'application/json', accept: 'application/json', ...(cookie ? { cookie } : {}) },
    remoteAddress,
  });
}

storeTest(
  'users/create: 201, the record with InviteUrl (code in the fragment); Email unique in the service without case; 422s',
  async (t) => {
    const ctx = await buildTestApp(t, { MSGSVC_PUBLIC_URL: 'https://sms.example.com' });
    const a = await ctx.seed('A');
    const b = await ctx.seed('B');
    const res = await call(ctx.app, {
      method: 'POST',
      path: '/v1/users/create',
      token: a.token,
      body: { Email: 'Ann@Example.com', Name: 'Ann', Role: 'admin' },
    });
    assert.equal(res.statusCode, 201);
    const user = res.json<UserReply>();
    assert.deepEqual(Object.keys(user), [
      'Id',
      'Email',
      'Name',
      'Role',
      'TwoFactor',
      'DateLastSignIn',
      'DateCreated',
      'DateUpdated',
      'InviteUrl',
    ]);
    assert.match(user.InviteUrl!, /^https:\/\/sms\.example\.com\/console\/#\/invite\/[A-Za-z0-9_-]{20,}$/);
    assert.equal(res.headers.location, `http://localhost:80/v1/users/view?id=${user.Id}`);
    assert.deepEqual([user.Email, user.Role, user.TwoFactor, user.DateLastSignIn], ['Ann@Example.com', 'admin', 0, null]);
    const row = await ctx.store.db.selectFrom('users').selectAll().where('id', '=', user.Id).executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(row).includes(codeOf(user)), 'only the code hash is kept');
    const create = (token: string, body: unknown) => call(ctx.app, { method: 'POST', path: '/v1/users/create', token, body });
    assert422(await create(b.token, { Email: 'ann@example.COM' }), [
      fieldError('Email', 'Email "ann@example.COM" has already been taken.'),
    ]);
    assert422(await create(a.token, {}), [fieldError('Email', 'Email cannot be blank.')]);
    assert422(await create(a.token, { Email: 'not-an-email' }), [fieldError('Email', 'Email is not a valid email address.')]);
    assert422(await create(a.token, { Email: 'x@example.com', Role: 'boss' }), [fieldError('Role', 'Role is invalid.')]);
    const defaulted = await invite(ctx, a.token, { Email: 'm@example.com' });
    assert.equal(defaulted.Role, 'member', 'the default role');
    const list = await call(ctx.app, { path: '/v1/users/index', token: a.token });
    assert.deepEqual(
      list.json<UserReply[]>().map((u) => u.Email),
      ['Ann@Example.com', 'm@example.com'],
    );
    assert.equal((await call(ctx.app, { path: '/v1/users/index', token: b.token })).json<UserReply[]>().length, 0, 'accounts are sealed');
    assertError(
      await call(ctx.app, { path: '/v1/users/view', token: b.token, query: `id=${user.Id}` }),
      404,
      `Object not found: ${user.Id}`,
    );
  },
);

storeTest('invite: the code sets a password once (12+ characters, not a common one), signs in, and cannot be used again', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const user = await invite(ctx, demo.token, { Email: 'p@example.com', Role: 'viewer' });
  const take = (body: unknown) => post(ctx, '/console/api/invite', body);
  assert422(await take({ Code: codeOf(user), Password: 'short' }), [
    fieldError('Password', 'Password should contain at least 12 characters.'),
  ]);
  assert422(await take({ Code: codeOf(user), Password: '1Q2W3E4R5T6Y' }), [fieldError('Password', 'Password is too common.')]);
  assert422(await take({ Code: 'nope', Password: PASSWORD }), [fieldError('Code', 'Code is invalid.')]);
  const ok = await take({ Code: codeOf(user), Password: PASSWORD });
  assert.equal(ok.statusCode, 204);
  const set = String(ok.headers['set-cookie']);
  assert.match(set, /^msgsvc_session=[A-Za-z0-9_-]{40,}; Max-Age=604800; Path=\/; HttpOnly; SameSite=Strict$/);
  assert422(await take({ Code: codeOf(user), Password: PASSWORD }), [fieldError('Code', 'Code is invalid.')]);
  const row = await ctx.store.db.selectFrom('users').select('password_hash').where('id', '=', user.Id).executeTakeFirstOrThrow();
  assert.match(row.password_hash!, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
});

storeTest('invite codes expire after 72 hours', async (t) => {
  const clock = createManualClock();
  const ctx = await buildTestApp(t, {}, { clock });
  const demo = await ctx.seed();
  const user = await invite(ctx, demo.token, { Email: 'late@example.com' });
  clock.advance(72 * 3600 * 1000 + 1000);
  assert422(await post(ctx, '/console/api/invite', { Code: codeOf(user), Password: PASSWORD }), [fieldError('Code', 'Code is invalid.')]);
});

storeTest('sign-in: the cookie runs /v1 as the person with the role scopes; writes need X-CSRF-Token; sign-out ends it', async (t) => {
  const ctx = await buildTestApp(t, { MSGSVC_PUBLIC_URL: 'https://sms.example.com' });
  const demo = await ctx.seed();
  await invite(ctx, demo.token, { Email: 'mem@example.com', Role: 'member' });
  const u = (await call(ctx.app, { path: '/v1/users/index', token: demo.token })).json<UserReply[]>()[0]!;
  // Reset gives a fresh code to use here.
  const fresh = (
    await call(ctx.app, { method: 'POST', path: '/v1/users/reset', token: demo.token, query: `id=${u.Id}` })
  ).json<UserReply>();
  assert.equal((await post(ctx, '/console/api/invite', { Code: codeOf(fresh), Password: PASSWORD })).statusCode, 204);
  assert422(await post(ctx, '/console/api/session', { Email: 'mem@example.com', Password: 'wrong password!' }), [
    fieldError('Password', 'Incorrect email or password.'),
  ]);
  assert422(await post(ctx, '/console/api/session', { Email: 'nobody@example.com', Password: PASSWORD }), [
    fieldError('Password', 'Incorrect email or password.'),
  ]);
  assert422(await post(ctx, '/console/api/session', {}), [
    fieldError('Email', 'Email cannot be blank.'),
    fieldError('Password', 'Password cannot be blank.'),
  ]);
  const signIn = await post(ctx, '/console/api/session', { Email: 'MEM@example.com', Password: PASSWORD });
  assert.equal(signIn.statusCode, 204);
  assert.match(String(signIn.headers['set-cookie']), /; Secure; SameSite=Strict$/, 'Secure under an https PUBLIC_URL');
  const cookie = cookieOf(signIn);
  const me = await ctx.app.inject({ method: 'GET', url: '/console/api/session', headers: { cookie } });
  assert.equal(me.statusCode, 200);
  const session = me.json<{ User: UserReply; Key: null; Account: { Id: number }; Scopes: string[]; CsrfToken: string }>();
  assert.equal(session.User.Email, 'mem@example.com');
  assert.notEqual(session.User.DateLastSignIn, null);
  assert.equal(session.Account.Id, demo.account.id);
  assert.ok(session.Scopes.includes('contacts:write') && !session.Scopes.includes('*'));
  assert.equal((await withCookie(ctx, 'GET', '/v1/credits/balance', cookie)).statusCode, 200);
  assertError(await withCookie(ctx, 'GET', '/v1/keys/index', cookie), 403, FORBIDDEN);
  // CSRF: a write with the cookie needs the token; a wrong one is refused too.
  assertError(await withCookie(ctx, 'POST', '/v1/groups/create', cookie, undefined, { fname: 'Group G' }), 403, FORBIDDEN);
  assertError(
    await withCookie(ctx, 'POST', '/v1/groups/create', cookie, 'x'.repeat(session.CsrfToken.length), { fname: 'Group G' }),
    403,
    FORBIDDEN,
  );
  const created = await withCookie(ctx, 'POST', '/v1/groups/create', cookie, session.CsrfToken, { fname: 'Group G' });
  assert.equal(created.statusCode, 201, created.body);
  // A cross-site form POST carries no X-CSRF-Token: refused, nothing written.
  const form = await ctx.app.inject({
    method: 'POST',
    url: '/v1/groups/create',
    payload: 'fname=Evil group',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
  });
  assert.equal(form.statusCode, 403);
  const names = (await call(ctx.app, { path: '/v1/groups/index', token: demo.token, query: 'per-page=100' }))
    .json<{ Name: string }[]>()
    .map((g) => g.Name);
  assert.ok(names.includes('Group G') && !names.includes('Evil group'), JSON.stringify(names));
  const out = await ctx.app.inject({ method: 'DELETE', url: '/console/api/session', headers: { cookie } });
  assert.equal(out.statusCode, 204);
  assert.match(String(out.headers['set-cookie']), /^msgsvc_session=; Max-Age=0/);
  assertError(await withCookie(ctx, 'GET', '/v1/credits/balance', cookie), 401, UNAUTHORIZED);
  assertError(await ctx.app.inject({ method: 'GET', url: '/console/api/session', headers: { cookie } }), 401, UNAUTHORIZED);
});

storeTest('a viewer reads but gets 403 on every write; users/update changes the role at once; delete and reset end sessions', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const viewer = await person(ctx, demo.token, 'v@example.com', 'viewer');
  assert.equal((await withCookie(ctx, 'GET', '/v1/contacts/index', viewer.cookie)).statusCode, 200);
  assertError(
    await withCookie(ctx, 'POST', '/v1/sms/send', viewer.cookie, viewer.csrf, { to: '15550000001', message: 'hi' }),
    403,
    FORBIDDEN,
  );
  const up = await call(ctx.app, {
    method: 'PATCH',
    path: '/v1/users/update',
    token: demo.token,
    query: `id=${viewer.user.Id}`,
    body: { Role: 'member' },
  });
  assert.equal(up.json<UserReply>().Role, 'member');
  const sent = await withCookie(ctx, 'POST', '/v1/groups/create', viewer.cookie, viewer.csrf, { fname: 'By member' });
  assert.equal(sent.statusCode, 201, 'the new role applies to the live session');
  const reset = await call(ctx.app, { method: 'POST', path: '/v1/users/reset', token: demo.token, query: `id=${viewer.user.Id}` });
  assert.equal(reset.statusCode, 200);
  assert.match(reset.json<UserReply>().InviteUrl!, /#\/invite\//);
  assertError(await withCookie(ctx, 'GET', '/v1/contacts/index', viewer.cookie), 401, UNAUTHORIZED);
  assert422(await post(ctx, '/console/api/session', { Email: 'v@example.com', Password: PASSWORD }), [
    fieldError('Password', 'Incorrect email or password.'),
  ]);
  const back = await post(ctx, '/console/api/invite', { Code: codeOf(reset.json<UserReply>()), Password: 'another long passphrase' });
  assert.equal(back.statusCode, 204);
  const del = await call(ctx.app, { method: 'DELETE', path: '/v1/users/delete', token: demo.token, query: `id=${viewer.user.Id}` });
  assert.equal(del.statusCode, 204);
  assertError(await withCookie(ctx, 'GET', '/v1/contacts/index', cookieOf(back)), 401, UNAUTHORIZED);
});

storeTest('owners: only an owner (or a * key) makes or unmakes one; the last owner can be neither deleted nor demoted', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const owner = await person(ctx, demo.token, 'o@example.com', 'owner');
  const admin = await person(ctx, demo.token, 'a@example.com', 'admin');
  const asAdmin = (method: 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) =>
    withCookie(ctx, method, url, admin.cookie, admin.csrf, body);
  const asOwner = (method: 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) =>
    withCookie(ctx, method, url, owner.cookie, owner.csrf, body);
  assert422(await asAdmin('POST', '/v1/users/create', { Email: 'o2@example.com', Role: 'owner' }), [
    fieldError('Role', 'Role is invalid.'),
  ]);
  assert422(await asAdmin('PATCH', `/v1/users/update?id=${admin.user.Id}`, { Role: 'owner' }), [fieldError('Role', 'Role is invalid.')]);
  assert422(await asAdmin('PATCH', `/v1/users/update?id=${owner.user.Id}`, { Role: 'viewer' }), [fieldError('Role', 'Role is invalid.')]);
  assert422(await asAdmin('DELETE', `/v1/users/delete?id=${owner.user.Id}`), [fieldError('Role', 'Role is invalid.')]);
  assert422(await asOwner('PATCH', `/v1/users/update?id=${owner.user.Id}`, { Role: 'admin' }), [fieldError('Role', 'Role is invalid.')]);
  assert422(await asOwner('DELETE', `/v1/users/delete?id=${owner.user.Id}`), [fieldError('Role', 'Role is invalid.')]);
  const promoted = await asOwner('PATCH', `/v1/users/update?id=${admin.user.Id}`, { Role: 'owner' });
  assert.equal(promoted.statusCode, 200, promoted.body);
  assert.equal(
    (await asOwner('PATCH', `/v1/users/update?id=${owner.user.Id}`, { Role: 'admin' })).statusCode,
    200,
    'no longer the last owner',
  );
  // A key can give a role only within its own scopes.
  const { Secret } = (
    await call(ctx.app, {
      method: 'POST',
      path: '/v1/keys/create',
      token: demo.token,
      body: { Name: 'hr', Scopes: ['users:write', 'contacts:read'] },
    })
  ).json<{
    Secret: string;
  }>();
  assert422(
    await call(ctx.app, { method: 'POST', path: '/v1/users/create', token: Secret, body: { Email: 'x@example.com', Role: 'admin' } }),
    [fieldError('Role', 'Role is invalid.')],
  );
  assert422(
    await call(ctx.app, { method: 'POST', path: '/v1/users/create', token: Secret, body: { Email: 'x@example.com', Role: 'viewer' } }),
    [fieldError('Role', 'Role is invalid.')],
  );
});

function totpNow(secret: string, clock: ManualClock, offsetSteps = 0): string {
  return new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({
    timestamp: clock.nowMs() + offsetSteps * 30_000,
  });
}

storeTest(
  'two-factor: enrol, confirm with a code, sign in with a code (not the same one twice), recovery codes once each, turn off',
  async (t) => {
    const clock = createManualClock(Date.UTC(2030, 0, 1, 0, 0, 0));
    const ctx = await buildTestApp(t, {}, { clock });
    const demo = await ctx.seed();
    const p = await person(ctx, demo.token, 'tf@example.com', 'member');
    const begun = await post(ctx, '/console/api/2fa', {}, p.cookie);
    assert.equal(begun.statusCode, 200);
    const { Secret, Uri } = begun.json<{ Secret: string; Uri: string }>();
    assert.match(Secret, /^[A-Z2-7]{32}$/);
    assert.ok(
      Uri.startsWith('otpauth://totp/') && Uri.includes(`secret=${Secret}`) && Uri.includes('digits=6') && Uri.includes('period=30'),
    );
    assert422(await post(ctx, '/console/api/2fa/confirm', { Code: '000000' }, p.cookie), [fieldError('Code', 'Code is invalid.')]);
    const confirmed = await post(ctx, '/console/api/2fa/confirm', { Code: totpNow(Secret, clock) }, p.cookie);
    assert.equal(confirmed.statusCode, 200, confirmed.body);
    const codes = confirmed.json<{ RecoveryCodes: string[] }>().RecoveryCodes;
    assert.equal(codes.length, 10);
    assert.equal(new Set(codes).size, 10);
    const view = await call(ctx.app, { path: '/v1/users/view', token: demo.token, query: `id=${p.user.Id}` });
    assert.equal(view.json<UserReply>().TwoFactor, 1);
    const signIn = (body: Record<string, unknown>) =>
      post(ctx, '/console/api/session', { Email: 'tf@example.com', Password: PASSWORD, ...body }, undefined, '192.0.2.10');
    assert422(await signIn({}), [fieldError('Code', 'Code cannot be blank.')]);
    clock.advance(30_000);
    const code = totpNow(Secret, clock);
    assert.equal((await signIn({ Code: code })).statusCode, 204);
    assert422(await signIn({ Code: code }), [fieldError('Code', 'Code is invalid.')]);
    clock.advance(30_000);
    assert.equal((await signIn({ Code: totpNow(Secret, clock, -1) })).statusCode, 422, 'the previous step was used');
    assert.equal((await signIn({ Code: totpNow(Secret, clock, 1) })).statusCode, 204, 'one step ahead is accepted');
    assert.equal((await signIn({ Code: codes[0] })).statusCode, 204, 'a recovery code stands in for a code');
    assert422(await signIn({ Code: codes[0] }), [fieldError('Code', 'Code is invalid.')]);
    assertError(await post(ctx, '/console/api/2fa', {}), 401, UNAUTHORIZED);
    clock.advance(120_000);
    assert422(
      await ctx.app.inject({
        method: 'DELETE',
        url: '/console/api/2fa',
        payload: '{"Code":"123456"}',
        headers: { cookie: p.cookie, 'content-type': 'application/json' },
      }),
      [fieldError('Code', 'Code is invalid.')],
    );
    const off = await ctx.app.inject({
      method: 'DELETE',
      url: '/console/api/2fa',
      payload: JSON.stringify({ Code: totpNow(Secret, clock) }),
      headers: { cookie: p.cookie, 'content-type': 'application/json' },
    });
    assert.equal(off.statusCode, 204, off.body);
    assert.equal((await signIn({})).statusCode, 204, 'no code needed once two-factor is off');
    const row = await ctx.store.db
      .selectFrom('users')
      .select(['totp_secret', 'two_factor'])
      .where('id', '=', p.user.Id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { totp_secret: null, two_factor: 0 });
  },
);

storeTest('sign in with a key: the same cookie, acting as the key with its scopes; an unknown key is a 422', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const reader = (
    await call(ctx.app, { method: 'POST', path: '/v1/keys/create', token: demo.token, body: { Name: 'dev', Scopes: ['contacts:read'] } })
  ).json<{
    Id: number;
    Secret: string;
  }>();
  assert422(await post(ctx, '/console/api/session', { Key: 'not-a-key' }), [fieldError('Key', 'Key is invalid.')]);
  const res = await post(ctx, '/console/api/session', { Key: reader.Secret });
  assert.equal(res.statusCode, 204);
  const cookie = cookieOf(res);
  const me = (await ctx.app.inject({ method: 'GET', url: '/console/api/session', headers: { cookie } })).json<{
    User: null;
    Key: { Id: number; Name: string };
    Scopes: string[];
  }>();
  assert.deepEqual([me.User, me.Key, me.Scopes], [null, { Id: reader.Id, Name: 'dev' }, ['contacts:read']]);
  assert.equal((await withCookie(ctx, 'GET', '/v1/contacts/index', cookie)).statusCode, 200);
  assertError(await withCookie(ctx, 'GET', '/v1/groups/index', cookie), 403, FORBIDDEN);
  // The key's deletion ends its sessions.
  await call(ctx.app, { method: 'DELETE', path: '/v1/keys/delete', token: demo.token, query: `id=${reader.Id}` });
  assertError(await withCookie(ctx, 'GET', '/v1/contacts/index', cookie), 401, UNAUTHORIZED);
});

storeTest('sessions last 12 hours from their last use and 7 days at most', async (t) => {
  const clock = createManualClock(Date.UTC(2030, 0, 1, 0, 0, 0));
  const ctx = await buildTestApp(t, {}, { clock });
  const demo = await ctx.seed();
  const p = await person(ctx, demo.token, 'long@example.com', 'viewer');
  const ok = async () => (await withCookie(ctx, 'GET', '/v1/credits/balance', p.cookie)).statusCode;
  for (let h = 0; h < 6 * 24; h += 11) {
    clock.advance(11 * 3600 * 1000);
    assert.equal(await ok(), 200, `used every 11 hours: alive at ${h + 11} h`);
    await new Promise((r) => setTimeout(r, 10));
  }
  clock.set(Date.UTC(2030, 0, 8, 0, 0, 1));
  assert.equal(await ok(), 401, 'past 7 days');
  const q = await person(ctx, demo.token, 'idle@example.com', 'viewer');
  clock.advance(12 * 3600 * 1000);
  assert.equal((await withCookie(ctx, 'GET', '/v1/credits/balance', q.cookie)).statusCode, 401, 'idle 12 hours');
});

storeTest('the lockout: 5 failures for one email, or from one address, within 15 minutes give 429 with Retry-After', async (t) => {
  const clock = createManualClock(Date.UTC(2030, 0, 1, 0, 0, 0));
  const ctx = await buildTestApp(t, {}, { clock });
  const demo = await ctx.seed();
  await person(ctx, demo.token, 'lock@example.com', 'viewer');
  const attempt = (password: string, ip: string, email = 'lock@example.com') =>
    post(ctx, '/console/api/session', { Email: email, Password: password }, undefined, ip);
  for (let i = 0; i < 5; i++) assert.equal((await attempt('wrong wrong wrong', `198.51.100.${i + 1}`)).statusCode, 422);
  const locked = await attempt(PASSWORD, '198.51.100.99');
  assertError(locked, 429, 'Rate limit exceeded.');
  assert.equal(locked.headers['retry-after'], '900');
  clock.advance(15 * 60 * 1000 + 1000);
  assert.equal((await attempt(PASSWORD, '198.51.100.99')).statusCode, 204, 'the window has passed');
  // By address: five unknown emails from one IP.
  for (let i = 0; i < 5; i++) await attempt('whatever it is', '203.0.113.7', `nobody${i}@example.com`);
  assertError(await attempt(PASSWORD, '203.0.113.7'), 429, 'Rate limit exceeded.');
  assert.equal((await attempt(PASSWORD, '203.0.113.8')).statusCode, 204, 'another address is not locked');
});

storeTest('an unknown email and a wrong password get the same answer in the same time (medians printed)', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  await person(ctx, demo.token, 'time@example.com', 'viewer');
  const unknown: number[] = [];
  const wrong: number[] = [];
  for (let i = 0; i < 8; i++) {
    for (const [email, list] of [
      ['time@example.com', wrong],
      ['nobody-here@example.com', unknown],
    ] as const) {
      const start = process.hrtime.bigint();
      const res = await post(
        ctx,
        '/console/api/session',
        { Email: email, Password: 'not the password' },
        undefined,
        `192.0.2.${100 + (i % 50)}`,
      );
      list.push(Number(process.hrtime.bigint() - start) / 1e6);
      assert422(res, [fieldError('Password', 'Incorrect email or password.')]);
      if (email === 'time@example.com') await ctx.store.db.deleteFrom('sign_in_failures').execute();
    }
  }
  const median = (l: number[]) => [...l].sort((a, b) => a - b)[Math.floor(l.length / 2)]!;
  t.diagnostic(`sign-in median: wrong password ${median(wrong).toFixed(1)} ms, unknown email ${median(unknown).toFixed(1)} ms`);
  // Both verify one Argon2id hash: neither answer can be an order of magnitude faster.
  assert.ok(median(unknown) > median(wrong) / 3 && median(wrong) > median(unknown) / 3, `${median(wrong)} vs ${median(unknown)}`);
});
