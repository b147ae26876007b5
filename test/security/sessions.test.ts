/**
 * The console's sessions, attacked (docs/API.md §15.3–15.4, §16.4), on each store:
 * - fixation: a cookie value the client chose before signing in is never the session after it;
 * - CSRF: a write with the session cookie but without the session's own X-CSRF-Token (none, empty,
 *   wrong, another session's, sent elsewhere than the header, hidden behind a method override,
 *   from another Origin) is the 403 of §15.1 and writes nothing; reads need no token;
 * - the cookie's attributes, with MSGSVC_PUBLIC_URL https or http, behind a proxy that says
 *   X-Forwarded-Proto (which msgsvc does not trust) while the app itself speaks plain HTTP;
 * - which sessions end: a reset or a removal ends every session of the person, a changed password
 *   none of the others (§15.4), a deleted key those signed in with it;
 * - invites: a code works once; a reset voids the code before it; guessing is stopped by the
 *   lockout of §15.3 (5 failures from one address in 15 minutes: 429 with Retry-After), under
 *   which even the right code is refused until the window passes (a manual clock moves time).
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import { createManualClock } from '../../src/lib/time.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { assert422, assertError, call, fieldError } from '../helpers/operations.ts';
import { storeTest } from '../helpers/stores.ts';
import { operatorKey } from '../http/admin/helpers.ts';
import {
  codeOf,
  consoleApi,
  cookieOf,
  createKey,
  FORBIDDEN,
  invite,
  keySession,
  LOCKED,
  opened,
  PASSWORD,
  person,
  signIn,
  UNAUTHORIZED,
  withCookie,
  type UserReply,
} from '../helpers/console-session.ts';

const CODE_INVALID = [fieldError('Code', 'Code is invalid.')];
const INCORRECT = [fieldError('Password', 'Incorrect email or password.')];
/** A session cookie's value: 32 random bytes in base64url. */
const COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/;

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** The status of a read with the cookie alone. */
async function alive(ctx: TestApp, cookie: string): Promise<number> {
  return (await withCookie(ctx, 'GET', '/v1/credits/balance', cookie)).statusCode;
}

storeTest(
  'fixation: a cookie the client set before signing in is never the session after it; sign-in always makes a new one',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed('Victim');
    const attacker = await ctx.seed('Attacker');
    const planted = randomBytes(32).toString('base64url');
    const plantedCookie = `msgsvc_session=${planted}`;
    const victim = await invite(ctx, demo.token, { Email: 'victim@example.com', Role: 'admin' });
    const values = new Set<string>([planted]);
    const check = async (res: LightMyRequestResponse, email: string | null) => {
      assert.equal(res.statusCode, 204, res.body);
      const value = cookieOf(res).split('=')[1]!;
      assert.match(value, COOKIE_VALUE);
      assert.ok(!values.has(value), 'a new value at every sign-in, never the planted one');
      values.add(value);
      const me = await consoleApi(ctx, 'GET', '/console/api/session', { cookie: `msgsvc_session=${value}` });
      assert.equal(me.statusCode, 200);
      assert.equal(me.json<{ User: { Email: string } | null }>().User?.Email ?? null, email);
      // The planted value is still unknown: 401 everywhere.
      assertError(await withCookie(ctx, 'GET', '/v1/credits/balance', plantedCookie), 401, UNAUTHORIZED);
      assertError(await consoleApi(ctx, 'GET', '/console/api/session', { cookie: plantedCookie }), 401, UNAUTHORIZED);
    };
    // Every way in, each with the planted cookie sent along.
    await check(
      await consoleApi(ctx, 'POST', '/console/api/invite', { cookie: plantedCookie, body: { Code: codeOf(victim), Password: PASSWORD } }),
      'victim@example.com',
    );
    await check(
      await consoleApi(ctx, 'POST', '/console/api/session', {
        cookie: plantedCookie,
        body: { Email: 'victim@example.com', Password: PASSWORD },
      }),
      'victim@example.com',
    );
    await check(await consoleApi(ctx, 'POST', '/console/api/session', { cookie: plantedCookie, body: { Key: demo.token } }), null);
    const op = await operatorKey(ctx);
    const opIn = await consoleApi(ctx, 'POST', '/console/api/session', { cookie: plantedCookie, body: { Key: op.secret } });
    assert.equal(opIn.statusCode, 204);
    const opValue = cookieOf(opIn).split('=')[1]!;
    assert.ok(!values.has(opValue) && COOKIE_VALUE.test(opValue), 'the operator gets a new value too');
    assertError(await ctx.app.inject({ url: '/admin/v1/accounts/index', headers: { cookie: plantedCookie } }), 401, UNAUTHORIZED);
    // Nothing was stored under the planted value.
    for (const table of ['sessions', 'operator_sessions'] as const) {
      const rows = await ctx.store.db.selectFrom(table).select('token_hash').execute();
      assert.ok(rows.length > 0, `${table} has sessions`);
      assert.ok(
        !rows.some((r) => r.token_hash === sha256(planted) || r.token_hash === planted),
        `${table}: nothing under the planted value`,
      );
      assert.ok(
        rows.every((r) => /^[0-9a-f]{64}$/.test(r.token_hash)),
        `${table}: only SHA-256 hashes are kept`,
      );
    }

    // The attacker plants their own live session in the victim's browser: the victim's sign-in
    // replaces it with a new one; the attacker's cookie stays the attacker's, never the victim's.
    const mine = await keySession(ctx, attacker.token);
    const res = await consoleApi(ctx, 'POST', '/console/api/session', {
      cookie: mine.cookie,
      body: { Email: 'victim@example.com', Password: PASSWORD },
    });
    assert.equal(res.statusCode, 204);
    assert.notEqual(cookieOf(res), mine.cookie);
    const theirs = (await consoleApi(ctx, 'GET', '/console/api/session', { cookie: mine.cookie })).json<{
      User: unknown;
      Account: { Id: number };
    }>();
    assert.deepEqual([theirs.User, theirs.Account.Id], [null, attacker.account.id], "the planted session is still the attacker's own");
    const victims = (await consoleApi(ctx, 'GET', '/console/api/session', { cookie: cookieOf(res) })).json<{ Account: { Id: number } }>();
    assert.equal(victims.Account.Id, demo.account.id);
  },
);

storeTest(
  'CSRF: a cookie write without its own X-CSRF-Token is 403 however it is dressed, and writes nothing; reads need none',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const a = await person(ctx, demo.token, 'a@example.com', 'admin');
    const b = await person(ctx, demo.token, 'b@example.com', 'admin');
    const k = await keySession(ctx, demo.token);
    const group = demo.groups[0]!;
    const extra = await createKey(ctx, demo.token, { Name: 'target', Scopes: ['contacts:read'] });
    const snapshot = async () => ({
      groups: await ctx.store.db.selectFrom('groups').selectAll().where('account_id', '=', demo.account.id).orderBy('id').execute(),
      contacts: Number(
        (
          await ctx.store.db
            .selectFrom('contacts')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('account_id', '=', demo.account.id)
            .executeTakeFirstOrThrow()
        ).n,
      ),
      keys: await ctx.store.db
        .selectFrom('api_tokens')
        .select(['id', 'revoked_at'])
        .where('account_id', '=', demo.account.id)
        .orderBy('id')
        .execute(),
      users: await ctx.store.db
        .selectFrom('users')
        .select(['id', 'role'])
        .where('account_id', '=', demo.account.id)
        .orderBy('id')
        .execute(),
    });
    const before = await snapshot();
    const writes: { method: 'POST' | 'PATCH' | 'DELETE'; url: string; body?: unknown }[] = [
      { method: 'POST', url: '/v1/groups/create', body: { fname: 'Evil group' } },
      { method: 'PATCH', url: `/v1/groups/update?id=${group.Id}`, body: { fname: 'Evil rename' } },
      { method: 'DELETE', url: `/v1/groups/delete?id=${group.Id}` },
      { method: 'POST', url: '/v1/contacts/create', body: { fname: 'Evil', number: '+15550100999' } },
      { method: 'DELETE', url: `/v1/keys/delete?id=${extra.Id}` },
      { method: 'POST', url: '/v1/users/create', body: { Email: 'evil@example.com', Role: 'admin' } },
    ];
    const tokens: Record<string, string | undefined> = {
      'no header': undefined,
      'an empty header': '',
      'a wrong token of the right length': randomBytes(24).toString('base64url'),
      "another person's session's token": b.csrf,
      "a key session's token": k.csrf,
      'the token in other case': a.csrf.toUpperCase() === a.csrf ? a.csrf.toLowerCase() : a.csrf.toUpperCase(),
      'the token with one more character': `${a.csrf}x`,
      'a prefix of the token': a.csrf.slice(0, 16),
      'the token twice': `${a.csrf}, ${a.csrf}`,
    };
    for (const w of writes) {
      for (const [name, csrf] of Object.entries(tokens)) {
        const res = await withCookie(ctx, w.method, w.url, a.cookie, csrf, w.body);
        assertError(res, 403, FORBIDDEN);
        assert.ok(res.headers['x-rate-limit-limit'], `${w.method} ${w.url}, ${name}: refused at the scope step, after the rate limit`);
      }
      // Another site's page: Origin and Referer of another site, or even of this one, stand in for nothing.
      const sites: Record<string, string>[] = [
        { origin: 'https://evil.example' },
        { referer: 'https://evil.example/page' },
        { origin: 'http://localhost:80', referer: 'http://localhost:80/console/' },
        { origin: 'null' },
      ];
      for (const headers of sites)
        assertError(await withCookie(ctx, w.method, w.url, a.cookie, undefined, w.body, headers), 403, FORBIDDEN);
      // The token anywhere but its header: in the query, in the body, as a cookie.
      const sep = w.url.includes('?') ? '&' : '?';
      for (const url of [`${w.url}${sep}X-CSRF-Token=${a.csrf}`, `${w.url}${sep}csrf=${a.csrf}&_csrf=${a.csrf}`])
        assertError(await withCookie(ctx, w.method, url, a.cookie, undefined, w.body), 403, FORBIDDEN);
      if (w.body !== undefined)
        assertError(
          await withCookie(ctx, w.method, w.url, a.cookie, undefined, { ...(w.body as object), 'X-CSRF-Token': a.csrf, CsrfToken: a.csrf }),
          403,
          FORBIDDEN,
        );
      assertError(await withCookie(ctx, w.method, w.url, `${a.cookie}; X-CSRF-Token=${a.csrf}; csrf=${a.csrf}`), 403, FORBIDDEN);
      // The cookie of a session signed in with a key needs its token just the same.
      assertError(await withCookie(ctx, w.method, w.url, k.cookie, undefined, w.body), 403, FORBIDDEN);
      assertError(await withCookie(ctx, w.method, w.url, k.cookie, a.csrf, w.body), 403, FORBIDDEN);
    }
    // A form POST as a cross-site page sends it (no preflight): refused.
    const form = await ctx.app.inject({
      method: 'POST',
      url: '/v1/groups/create',
      payload: 'fname=Evil+form+group',
      headers: { cookie: a.cookie, 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
    });
    assertError(form, 403, FORBIDDEN);
    // A GET turned into a DELETE by X-Http-Method-Override is a write: it needs the token.
    const overridden = await ctx.app.inject({
      method: 'GET',
      url: `/v1/groups/delete?id=${group.Id}`,
      headers: { cookie: a.cookie, 'x-http-method-override': 'DELETE', accept: 'application/json' },
    });
    assertError(overridden, 403, FORBIDDEN);
    // An access_token in the request wins over the cookie: a bad one is the 401, never the cookie's session.
    assertError(
      await withCookie(ctx, 'POST', '/v1/groups/create?access_token=nope', a.cookie, a.csrf, { fname: 'Evil' }),
      401,
      UNAUTHORIZED,
    );
    assertError(
      await withCookie(ctx, 'POST', '/v1/groups/create', a.cookie, a.csrf, { fname: 'Evil' }, { authorization: 'Bearer nope' }),
      401,
      UNAUTHORIZED,
    );

    // Over a real socket, where a form's `_method` field overrides the method (docs/API.md §3.4).
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
    const formPost = async (url: string, body: string) => {
      const r = await fetch(`${base}${url}`, {
        method: 'POST',
        body,
        headers: {
          cookie: a.cookie,
          'content-type': 'application/x-www-form-urlencoded',
          origin: 'https://evil.example',
          accept: 'application/json',
        },
      });
      return { status: r.status, body: await r.json() };
    };
    const refused = { name: 'Forbidden', message: FORBIDDEN, code: 0, status: 403 };
    assert.deepEqual(await formPost(`/v1/groups/delete?id=${group.Id}`, '_method=DELETE'), { status: 403, body: refused });
    assert.deepEqual(await formPost(`/v1/groups/update?id=${group.Id}`, '_method=PATCH&fname=Evil+rename'), { status: 403, body: refused });
    assert.deepEqual(await formPost('/v1/groups/create', '_method=GET&fname=Evil+get'), { status: 403, body: refused });
    assert.deepEqual(await formPost('/v1/groups/create', '_method=HEAD&fname=Evil+head'), { status: 403, body: refused });

    assert.deepEqual(await snapshot(), before, 'no refused request wrote anything');

    // Reads need no token, with the cookie alone (GET and HEAD).
    assert.equal((await withCookie(ctx, 'GET', '/v1/groups/index', a.cookie)).statusCode, 200);
    assert.equal((await withCookie(ctx, 'HEAD', '/v1/credits/balance', a.cookie)).statusCode, 200);
    assert.equal((await withCookie(ctx, 'GET', `/v1/groups/view?id=${group.Id}`, k.cookie)).statusCode, 200);
    // The session's own token lets the same write through (so the refusals above are about the token).
    const ok = await withCookie(ctx, 'POST', '/v1/groups/create', a.cookie, a.csrf, { fname: 'Good group' });
    assert.equal(ok.statusCode, 201, ok.body);
    assert.equal((await withCookie(ctx, 'POST', '/v1/groups/create', k.cookie, k.csrf, { fname: 'Good key group' })).statusCode, 201);

    // The operator's console session on /admin/v1: its writes need its own token too (§16.4).
    const op = await operatorKey(ctx);
    const opSession = await opened(ctx, await consoleApi(ctx, 'POST', '/console/api/session', { body: { Key: op.secret } }));
    const accounts = async () => (await ctx.store.db.selectFrom('accounts').select('id').execute()).length;
    const count = await accounts();
    for (const csrf of [undefined, '', a.csrf, k.csrf, randomBytes(24).toString('base64url')])
      assertError(
        await withCookie(ctx, 'POST', '/admin/v1/accounts/create', opSession.cookie, csrf, { Name: 'Evil account' }),
        403,
        FORBIDDEN,
      );
    assert.equal(await accounts(), count, 'no account was made');
    assert.equal((await withCookie(ctx, 'GET', '/admin/v1/accounts/index', opSession.cookie)).statusCode, 200);
    const made = await withCookie(ctx, 'POST', '/admin/v1/accounts/create', opSession.cookie, opSession.csrf, { Name: 'Good account' });
    assert.equal(made.statusCode, 201, made.body);
    // An account's session token does nothing on /admin/v1, and an operator's session nothing on /v1.
    assertError(await withCookie(ctx, 'GET', '/admin/v1/accounts/index', a.cookie), 401, UNAUTHORIZED);
    assertError(await withCookie(ctx, 'POST', '/v1/groups/create', opSession.cookie, opSession.csrf, { fname: 'x' }), 401, UNAUTHORIZED);
  },
);

/** A Set-Cookie header as its name, value and attributes (names lower-cased; flags as true). */
function parseSetCookie(res: LightMyRequestResponse): { name: string; value: string; attrs: Record<string, string | true> } {
  const set = res.headers['set-cookie'];
  assert.ok(typeof set === 'string', `exactly one Set-Cookie: ${JSON.stringify(set)}`);
  const [pair, ...rest] = set.split(';').map((p) => p.trim());
  const eq = pair!.indexOf('=');
  const attrs: Record<string, string | true> = {};
  for (const a of rest) {
    const i = a.indexOf('=');
    if (i === -1) attrs[a.toLowerCase()] = true;
    else attrs[a.slice(0, i).toLowerCase()] = a.slice(i + 1);
  }
  return { name: pair!.slice(0, eq), value: pair!.slice(eq + 1), attrs };
}

storeTest(
  'the cookie: HttpOnly, SameSite=Strict, Path=/, Max-Age=604800, host-only; Secure exactly when MSGSVC_PUBLIC_URL is https, whatever X-Forwarded-Proto says',
  async (t) => {
    for (const setup of [
      { publicUrl: 'https://sms.example.com', secure: true },
      { publicUrl: 'http://sms.example.com', secure: false },
      { publicUrl: undefined, secure: false },
    ]) {
      const ctx = await buildTestApp(t, setup.publicUrl ? { MSGSVC_PUBLIC_URL: setup.publicUrl } : {});
      const demo = await ctx.seed();
      const op = await operatorKey(ctx);
      const expected = (maxAge: string): Record<string, string | true> => ({
        'max-age': maxAge,
        path: '/',
        httponly: true,
        samesite: 'Strict',
        ...(setup.secure ? { secure: true } : {}),
      });
      // The app speaks plain HTTP behind a proxy; the proxy may say https or http: neither decides.
      const proxies: Record<string, string>[] = [
        {},
        { 'x-forwarded-proto': 'https' },
        { 'x-forwarded-proto': 'http' },
        { 'x-forwarded-proto': 'https', 'x-forwarded-ssl': 'on' },
      ];
      for (const forwarded of proxies) {
        const where = `${setup.publicUrl ?? 'no MSGSVC_PUBLIC_URL'} ${JSON.stringify(forwarded)}`;
        const u = await invite(ctx, demo.token, { Email: `${randomBytes(4).toString('hex')}@example.com`, Role: 'viewer' });
        const signIns = {
          invite: await consoleApi(ctx, 'POST', '/console/api/invite', {
            body: { Code: codeOf(u), Password: PASSWORD },
            headers: forwarded,
          }),
          password: await consoleApi(ctx, 'POST', '/console/api/session', {
            body: { Email: u.Email, Password: PASSWORD },
            headers: forwarded,
          }),
          key: await consoleApi(ctx, 'POST', '/console/api/session', { body: { Key: demo.token }, headers: forwarded }),
          operator: await consoleApi(ctx, 'POST', '/console/api/session', { body: { Key: op.secret }, headers: forwarded }),
        };
        for (const [kind, res] of Object.entries(signIns)) {
          assert.equal(res.statusCode, 204, `${where} ${kind}: ${res.body}`);
          assert.equal(res.headers['cache-control'], 'no-store', `${where} ${kind}`);
          const c = parseSetCookie(res);
          assert.equal(c.name, 'msgsvc_session');
          assert.match(c.value, COOKIE_VALUE, `${where} ${kind}`);
          assert.deepEqual(c.attrs, expected('604800'), `${where} ${kind}: exactly these attributes (no Domain: host-only)`);
          // Signing out clears it with the same attributes.
          const out = await consoleApi(ctx, 'DELETE', '/console/api/session', { cookie: `msgsvc_session=${c.value}`, headers: forwarded });
          assert.equal(out.statusCode, 204, `${where} ${kind} sign-out`);
          const cleared = parseSetCookie(out);
          assert.deepEqual(
            [cleared.name, cleared.value, cleared.attrs],
            ['msgsvc_session', '', expected('0')],
            `${where} ${kind} sign-out`,
          );
          assertError(await consoleApi(ctx, 'GET', '/console/api/session', { cookie: `msgsvc_session=${c.value}` }), 401, UNAUTHORIZED);
        }
      }
      await ctx.close();
    }
  },
);

storeTest(
  'which sessions end: a reset or a removal ends every session of the person; a password change none of the others; a deleted key its own',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const p = await person(ctx, demo.token, 'p@example.com', 'admin');
    const p2 = await signIn(ctx, 'p@example.com', PASSWORD, '192.0.2.1');
    const p3 = await signIn(ctx, 'p@example.com', PASSWORD, '2001:db8::1');
    const q = await person(ctx, demo.token, 'q@example.com', 'member');
    const key = await createKey(ctx, demo.token, { Name: 'console key', Scopes: ['*'] });
    const k = await keySession(ctx, key.Secret!);
    const sessionsOf = async (userId: number) =>
      (await ctx.store.db.selectFrom('sessions').select('id').where('user_id', '=', userId).execute()).length;
    assert.equal(await sessionsOf(p.user.Id), 3);

    // A password change (§15.4): the current password is checked; the other sessions stay signed in.
    const change = (cookie: string, body: unknown) => consoleApi(ctx, 'PUT', '/console/api/password', { cookie, body });
    assert422(await change(p.cookie, { CurrentPassword: 'not the password', Password: 'a brand new passphrase' }), [
      fieldError('CurrentPassword', 'Current Password is invalid.'),
    ]);
    assertError(await change(k.cookie, { CurrentPassword: PASSWORD, Password: 'a brand new passphrase' }), 403, FORBIDDEN);
    assertError(await change('msgsvc_session=nope', { CurrentPassword: PASSWORD, Password: 'a brand new passphrase' }), 401, UNAUTHORIZED);
    assert.equal((await change(p.cookie, { CurrentPassword: PASSWORD, Password: 'a brand new passphrase' })).statusCode, 204);
    for (const s of [p, p2, p3, q, k]) assert.equal(await alive(ctx, s.cookie), 200, 'every session lives on after a password change');
    assert422(
      await consoleApi(ctx, 'POST', '/console/api/session', { body: { Email: 'p@example.com', Password: PASSWORD }, ip: '192.0.2.50' }),
      INCORRECT,
    );
    const p4 = await signIn(ctx, 'p@example.com', 'a brand new passphrase', '192.0.2.51');

    // Signing out ends that session only.
    assert.equal((await consoleApi(ctx, 'DELETE', '/console/api/session', { cookie: p3.cookie })).statusCode, 204);
    assertError(await withCookie(ctx, 'GET', '/v1/credits/balance', p3.cookie), 401, UNAUTHORIZED);
    assert.equal(await alive(ctx, p2.cookie), 200);

    // A reset (here by another admin, through the console): every session of the person ends at
    // once, on /v1 and on the console API; nobody else's.
    const admin2 = await person(ctx, demo.token, 'admin2@example.com', 'admin');
    const reset = await withCookie(ctx, 'POST', `/v1/users/reset?id=${p.user.Id}`, admin2.cookie, admin2.csrf);
    assert.equal(reset.statusCode, 200, reset.body);
    for (const s of [p, p2, p4]) {
      assertError(await withCookie(ctx, 'GET', '/v1/credits/balance', s.cookie), 401, UNAUTHORIZED);
      assertError(await consoleApi(ctx, 'GET', '/console/api/session', { cookie: s.cookie }), 401, UNAUTHORIZED);
      assertError(await withCookie(ctx, 'POST', '/v1/groups/create', s.cookie, s.csrf, { fname: 'after reset' }), 401, UNAUTHORIZED);
    }
    assert.equal(await sessionsOf(p.user.Id), 0);
    for (const s of [q, k, admin2]) assert.equal(await alive(ctx, s.cookie), 200, "other people's sessions and a key's live on");
    // The password is gone with the reset: neither the old nor the new one signs in; the link does.
    for (const password of [PASSWORD, 'a brand new passphrase'])
      assert422(
        await consoleApi(ctx, 'POST', '/console/api/session', { body: { Email: 'p@example.com', Password: password }, ip: '192.0.2.60' }),
        INCORRECT,
      );
    const back = await opened(
      ctx,
      await consoleApi(ctx, 'POST', '/console/api/invite', { body: { Code: codeOf(reset.json<UserReply>()), Password: PASSWORD } }),
    );
    assert.equal(await alive(ctx, back.cookie), 200);

    // A removal ends the person's sessions at once.
    assert.equal((await withCookie(ctx, 'DELETE', `/v1/users/delete?id=${q.user.Id}`, admin2.cookie, admin2.csrf)).statusCode, 204);
    assertError(await withCookie(ctx, 'GET', '/v1/credits/balance', q.cookie), 401, UNAUTHORIZED);
    // A deleted key ends the sessions signed in with it.
    assert.equal(
      (await call(ctx.app, { method: 'DELETE', path: '/v1/keys/delete', token: demo.token, query: `id=${key.Id}` })).statusCode,
      204,
    );
    assertError(await withCookie(ctx, 'GET', '/v1/credits/balance', k.cookie), 401, UNAUTHORIZED);
    for (const s of [back, admin2]) assert.equal(await alive(ctx, s.cookie), 200);
  },
);

storeTest(
  'invites: a code works once; a reset voids the earlier code; guessed codes are locked out (429) even the right one, until the window passes',
  async (t) => {
    const clock = createManualClock(Date.UTC(2030, 0, 1, 0, 0, 0));
    const ctx = await buildTestApp(t, {}, { clock });
    const demo = await ctx.seed();
    const take = (code: string, ip: string, password = PASSWORD) =>
      consoleApi(ctx, 'POST', '/console/api/invite', { body: { Code: code, Password: password }, ip });

    // Used once: the second use is refused, and the password stays the first one.
    const once = await invite(ctx, demo.token, { Email: 'once@example.com', Role: 'viewer' });
    assert.equal((await take(codeOf(once), '192.0.2.1')).statusCode, 204);
    assert422(await take(codeOf(once), '192.0.2.1', 'the attacker passphrase'), CODE_INVALID);
    assert422(
      await consoleApi(ctx, 'POST', '/console/api/session', {
        body: { Email: 'once@example.com', Password: 'the attacker passphrase' },
        ip: '192.0.2.2',
      }),
      INCORRECT,
    );
    await signIn(ctx, 'once@example.com', PASSWORD, '192.0.2.2');

    // A reset gives a new code and voids the one before, used or not.
    const fresh = await invite(ctx, demo.token, { Email: 'fresh@example.com', Role: 'viewer' });
    const reset = await call(ctx.app, { method: 'POST', path: '/v1/users/reset', token: demo.token, query: `id=${fresh.Id}` });
    assert.equal(reset.statusCode, 200);
    const second = codeOf(reset.json<UserReply>());
    assert.notEqual(second, codeOf(fresh));
    assert422(await take(codeOf(fresh), '192.0.2.3'), CODE_INVALID);
    assert.equal((await take(second, '192.0.2.3')).statusCode, 204);
    assert422(await take(second, '192.0.2.3'), CODE_INVALID);

    // Guessing: 5 wrong codes from one address within 15 minutes lock it (§15.3), with Retry-After
    // the seconds until the oldest of those 5 is 15 minutes old.
    const target = await invite(ctx, demo.token, { Email: 'target@example.com', Role: 'admin' });
    const attacker = '203.0.113.66';
    for (let i = 0; i < 5; i++) {
      assert422(await take(randomBytes(24).toString('base64url'), attacker), CODE_INVALID);
      clock.advance(1000);
    }
    for (const code of [randomBytes(24).toString('base64url'), codeOf(target)]) {
      const locked = await take(code, attacker);
      assertError(locked, 429, LOCKED);
      assert.equal(locked.headers['retry-after'], String(15 * 60 - 5), 'until the oldest of the 5 failures is 15 minutes old');
    }
    // The lockout is the address's for every sign-in, a password's or a key's too.
    assertError(
      await consoleApi(ctx, 'POST', '/console/api/session', { body: { Email: 'once@example.com', Password: PASSWORD }, ip: attacker }),
      429,
      LOCKED,
    );
    assertError(await consoleApi(ctx, 'POST', '/console/api/session', { body: { Key: demo.token }, ip: attacker }), 429, LOCKED);
    // Another address is not locked.
    assert422(await take(randomBytes(24).toString('base64url'), '203.0.113.67'), CODE_INVALID);
    // One second before the window passes: still refused, even the right code.
    clock.advance((15 * 60 - 5) * 1000 - 1000);
    const late = await take(codeOf(target), attacker);
    assertError(late, 429, LOCKED);
    assert.equal(late.headers['retry-after'], '1');
    const row = await ctx.store.db
      .selectFrom('users')
      .select(['password_hash', 'invite_hash'])
      .where('id', '=', target.Id)
      .executeTakeFirstOrThrow();
    assert.deepEqual([row.password_hash, row.invite_hash === null], [null, false], 'the invite is untouched by the refused tries');
    // Once the oldest failure leaves the window, the code works (once).
    clock.advance(1000);
    assert.equal((await take(codeOf(target), attacker)).statusCode, 204);
    assert422(await take(codeOf(target), attacker), CODE_INVALID);

    // Wrong passwords from an address lock its invites too.
    const other = await invite(ctx, demo.token, { Email: 'other@example.com', Role: 'viewer' });
    for (let i = 0; i < 5; i++)
      assert422(
        await consoleApi(ctx, 'POST', '/console/api/session', {
          body: { Email: 'once@example.com', Password: 'wrong wrong wrong' },
          ip: '198.51.100.9',
        }),
        INCORRECT,
      );
    assertError(await take(codeOf(other), '198.51.100.9'), 429, LOCKED);
    // A missing code is no failure (§15.3): six blank tries, and the address is not locked.
    for (let i = 0; i < 6; i++) assert422(await take('', '198.51.100.10'), CODE_INVALID);
    assert.equal((await take(codeOf(other), '198.51.100.10')).statusCode, 204);
  },
);
