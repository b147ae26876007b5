/**
 * Scope escalation, attacked (docs/API.md §1.2, §15.1–15.3, §16.1, §16.4), on each store: every way
 * a credential could come out of a request holding more than the credential that made the request.
 * - keys/create with Scopes beyond the caller's own, unknown, `admin:*` (no account credential
 *   holds those), `subaccounts` inside a sub-account, in every shape a body can carry them;
 * - keys/update widening another key or the caller itself;
 * - keys/roll: the new secret holds the key's scopes and no more, the old one ends with its grace,
 *   and a key cannot roll (and so be handed the secret of) a key wider than itself;
 * - subaccounts/keys: no `subaccounts` scope, 403; with it, the child's key is bounded by the
 *   caller's scopes and never holds `subaccounts`; the operator's accounts/keys likewise;
 * - people: a role below admin mints no key; a key holding `users:write` gives no role beyond its
 *   own, neither by users/create nor users/update nor by users/reset (whose InviteUrl is the
 *   person's credential).
 * Every refusal is checked in the database afterwards: nothing was created or changed.
 *
 * Constant time: no comparison of secret material other than crypto.timingSafeEqual or a database
 * lookup by SHA-256 hash, checked by structure over src/ (the TypeScript syntax tree) and, for the
 * CSRF token, session cookie, invite code, TOTP code and operator key, by tracing the crypto calls
 * of real requests (test/http/reliability-secrets.test.ts traces API keys the same way).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as OTPAuth from 'otpauth';
import ts from 'typescript';
import { createManualClock } from '../../src/lib/time.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { assert422, assertError, call, fieldError } from '../helpers/operations.ts';
import { traceCrypto } from '../helpers/crypto-trace.ts';
import { storeTest } from '../helpers/stores.ts';
import { admin, operatorKey } from '../http/admin/helpers.ts';
import {
  codeOf,
  consoleApi,
  createKey,
  FORBIDDEN,
  invite,
  keySession,
  liveKeys,
  person,
  PASSWORD,
  UNAUTHORIZED,
  withCookie,
  type KeyReply,
  type UserReply,
} from '../helpers/console-session.ts';

const SCOPES_INVALID = [fieldError('Scopes', 'Scopes is invalid.')];
const ROLE_INVALID = [fieldError('Role', 'Role is invalid.')];

/** Scopes §15.1 does not know: refused from every caller, a `*` key included. */
const UNKNOWN_SCOPES: unknown[] = [
  ['admin:read'],
  ['admin:write'],
  ['admin:*'],
  ['admin'],
  ['contacts'],
  ['contacts:*'],
  ['Contacts:read'],
  ['CONTACTS:READ'],
  ['contacts:Read'],
  ['*:read'],
  ['*:*'],
  ['**'],
  [' contacts:read'],
  ['contacts:read '],
  ['contacts:read\u0000'],
  ['contacts: read'],
  ['contacts:read,groups:read'],
  ['contacts:delete'],
  ['operator:write'],
  ['contacts:read', 'admin:write'],
  [],
  'contacts:read',
  '*',
  '',
  null,
  true,
  1,
  [['*']],
  [1],
  [null],
  [{}],
  { a: 'admin:write' },
  {},
];

/** A GET with a key: its status (200 when the key holds the scope, 403 when not, 401 when it is no key). */
async function statusOf(ctx: TestApp, token: string, path: string): Promise<number> {
  return (await call(ctx.app, { path, token })).statusCode;
}

storeTest(
  'keys/create: a scope beyond the caller, unknown, or admin:* is 422 Scopes is invalid. in every body shape; nothing is created',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const manager = await createKey(ctx, demo.token, { Name: 'manager', Scopes: ['keys:write', 'contacts:read', 'groups:write'] });
    const before = await liveKeys(ctx, demo.account.id);
    const create = (token: string, body: unknown) => call(ctx.app, { method: 'POST', path: '/v1/keys/create', token, body });

    // Beyond the manager's own: absent Scopes means ["*"]; write from a read; a resource it lacks.
    const beyond: unknown[] = [
      ['*'],
      ['contacts:write'],
      ['credits:read'],
      ['keys:write', '*'],
      ['groups:read', 'users:write'],
      ['subaccounts:read'],
      ['audit:read'],
      { a: 'contacts:read', b: '*' },
    ];
    assert422(await create(manager.Secret!, { Name: 'no scopes: ["*"]' }), SCOPES_INVALID);
    for (const scopes of [...beyond, ...UNKNOWN_SCOPES])
      assert422(await create(manager.Secret!, { Name: 'x', Scopes: scopes }), SCOPES_INVALID, 'json');
    // Unknown scopes are refused to a * key too: no account key can name admin:* (§16.4).
    for (const scopes of UNKNOWN_SCOPES) assert422(await create(demo.token, { Name: 'x', Scopes: scopes }), SCOPES_INVALID);

    // The same in a form body (Scopes[]=…), a JSON body whose last duplicate Scopes is wider, and a
    // __proto__ that would make Scopes inherited: the caller's limit holds in each.
    const raw = (token: string, payload: string, contentType: string) =>
      ctx.app.inject({
        method: 'POST',
        url: `/v1/keys/create?access_token=${encodeURIComponent(token)}`,
        payload,
        headers: { 'content-type': contentType, accept: 'application/json' },
      });
    const form = 'application/x-www-form-urlencoded';
    for (const payload of [
      'Name=x&Scopes[]=*',
      'Name=x&Scopes[]=contacts:read&Scopes[]=contacts:write',
      'Name=x&Scopes[0]=contacts:read&Scopes[1]=credits:read',
      'Name=x&Scopes=contacts:read',
      'Name=x&Scopes[]=admin:write',
      'Name=x',
    ])
      assert422(await raw(manager.Secret!, payload, form), SCOPES_INVALID);
    assert422(await raw(manager.Secret!, '{"Name":"x","Scopes":["contacts:read"],"Scopes":["*"]}', 'application/json'), SCOPES_INVALID);
    assert422(await raw(manager.Secret!, '{"Name":"x","__proto__":{"Scopes":["contacts:read"]}}', 'application/json'), SCOPES_INVALID);
    assert422(await raw(manager.Secret!, '{"Name":"x","Scopes":{"__proto__":["*"]}}', 'application/json'), SCOPES_INVALID);

    // Signed in to the console with the manager key: the session holds the key's scopes, no more.
    const session = await keySession(ctx, manager.Secret!);
    for (const scopes of [['*'], ['contacts:write'], ['admin:write']])
      assert422(
        await withCookie(ctx, 'POST', '/v1/keys/create', session.cookie, session.csrf, { Name: 'x', Scopes: scopes }),
        SCOPES_INVALID,
      );

    assert.deepEqual(await liveKeys(ctx, demo.account.id), before, 'no refused create wrote a key');
    const listed = (await call(ctx.app, { path: '/v1/keys/index', token: demo.token })).json<KeyReply[]>();
    assert.deepEqual(
      listed.map((k) => k.Name),
      ['default', 'manager'],
    );

    // Within its own (write includes read; a repeated scope counts once): allowed, and bounded.
    const ok = await createKey(ctx, manager.Secret!, {
      Name: 'within',
      Scopes: ['contacts:read', 'groups:write', 'groups:read', 'keys:read'],
    });
    assert.deepEqual(ok.Scopes, ['contacts:read', 'groups:write', 'groups:read', 'keys:read']);
    assert.equal(await statusOf(ctx, ok.Secret!, '/v1/contacts/index'), 200);
    assert.equal(await statusOf(ctx, ok.Secret!, '/v1/credits/balance'), 403);
    assertError(
      await call(ctx.app, { method: 'POST', path: '/v1/keys/create', token: ok.Secret!, body: { Name: 'y', Scopes: ['keys:read'] } }),
      403,
      FORBIDDEN,
    );
    // No account key reaches /admin/v1, whatever it holds.
    assertError(await admin(ctx, { path: '/accounts/index', token: demo.token }), 401, UNAUTHORIZED);
  },
);

storeTest('keys/update: widening another key, or itself, is 422 Scopes is invalid. and changes nothing', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const manager = await createKey(ctx, demo.token, { Name: 'manager', Scopes: ['keys:write', 'contacts:read'] });
  const reader = await createKey(ctx, manager.Secret!, { Name: 'reader', Scopes: ['contacts:read'] });
  const before = await liveKeys(ctx, demo.account.id);
  const update = (token: string, id: number, body: unknown, method: 'PUT' | 'PATCH' = 'PATCH') =>
    call(ctx.app, { method, path: '/v1/keys/update', token, query: `id=${id}`, body });
  for (const id of [reader.Id, manager.Id]) {
    for (const scopes of [
      ['*'],
      ['contacts:write'],
      ['credits:read'],
      ['keys:write', 'users:write'],
      ['admin:write'],
      ['subaccounts:write'],
    ]) {
      assert422(await update(manager.Secret!, id, { Scopes: scopes }), SCOPES_INVALID);
      assert422(await update(manager.Secret!, id, { Name: 'renamed', Scopes: scopes }, 'PUT'), SCOPES_INVALID);
    }
  }
  // The reader (no keys scope) cannot touch even itself.
  assertError(await update(reader.Secret!, reader.Id, { Scopes: ['contacts:read'] }), 403, FORBIDDEN);
  // From the console, signed in with the manager key.
  const session = await keySession(ctx, manager.Secret!);
  assert422(
    await withCookie(ctx, 'PATCH', `/v1/keys/update?id=${manager.Id}`, session.cookie, session.csrf, { Scopes: ['*'] }),
    SCOPES_INVALID,
  );
  assert.deepEqual(await liveKeys(ctx, demo.account.id), before, 'no refused update changed a key');
  assert.equal(await statusOf(ctx, manager.Secret!, '/v1/credits/balance'), 403, 'still without credits');
  assert.equal(await statusOf(ctx, reader.Secret!, '/v1/groups/index'), 403);
  // A change within the caller's own is allowed (so the refusals above are about the scopes).
  const narrowed = await update(manager.Secret!, reader.Id, { Scopes: ['keys:read'] });
  assert.equal(narrowed.statusCode, 200, narrowed.body);
  assert.equal(await statusOf(ctx, reader.Secret!, '/v1/contacts/index'), 403, 'narrowed at once');
});

storeTest(
  'keys/roll: the new secret holds the same scopes and no more; the old one ends with its grace; a key cannot roll a wider key',
  async (t) => {
    const clock = createManualClock(Date.UTC(2030, 0, 1, 12, 0, 0));
    const ctx = await buildTestApp(t, {}, { clock });
    const demo = await ctx.seed();
    const key = await createKey(ctx, demo.token, {
      Name: 'rolled',
      Scopes: ['contacts:read', 'keys:write'],
      AllowedIps: ['127.0.0.1'],
      DateExpires: '2030-02-01 00:00:00',
    });
    // Fields roll does not take are ignored: Scopes, AllowedIps, DateExpires stay as they were.
    const res = await call(ctx.app, {
      method: 'POST',
      path: '/v1/keys/roll',
      token: key.Secret!,
      query: `id=${key.Id}`,
      body: { GraceSeconds: 60, Scopes: ['*'], AllowedIps: [], DateExpires: null },
    });
    assert.equal(res.statusCode, 200, res.body);
    const rolled = res.json<KeyReply>();
    assert.deepEqual(
      [rolled.Id, rolled.Scopes, rolled.AllowedIps, rolled.DateExpires],
      [key.Id, ['contacts:read', 'keys:write'], ['127.0.0.1'], '2030-02-01 00:00:00'],
    );
    const row = (await liveKeys(ctx, demo.account.id)).find((k) => k.id === key.Id)!;
    assert.equal(row.scopes, '["contacts:read","keys:write"]');
    for (const secret of [rolled.Secret!, key.Secret!]) {
      assert.equal(await statusOf(ctx, secret, '/v1/contacts/index'), 200);
      assert.equal(await statusOf(ctx, secret, '/v1/groups/index'), 403, 'neither secret holds more than the key');
      assert.equal(
        (await ctx.app.inject({ url: `/v1/contacts/index?access_token=${encodeURIComponent(secret)}`, remoteAddress: '192.0.2.1' }))
          .statusCode,
        401,
        'AllowedIps kept',
      );
    }
    // A narrowing applies to the old secret in its grace as to the new one.
    const narrowed = await call(ctx.app, {
      method: 'PATCH',
      path: '/v1/keys/update',
      token: demo.token,
      query: `id=${key.Id}`,
      body: { Scopes: ['contacts:read', 'keys:write', 'groups:read'] },
    });
    assert.equal(narrowed.statusCode, 200);
    assert.equal(await statusOf(ctx, key.Secret!, '/v1/groups/index'), 200);
    // Past the grace, the old secret is the one 401, on /v1 and for a console sign-in.
    clock.advance(61_000);
    assertError(await call(ctx.app, { path: '/v1/contacts/index', token: key.Secret! }), 401, UNAUTHORIZED);
    assert422(await consoleApi(ctx, 'POST', '/console/api/session', { body: { Key: key.Secret! } }), [
      fieldError('Key', 'Key is invalid.'),
    ]);
    assert.equal(await statusOf(ctx, rolled.Secret!, '/v1/contacts/index'), 200);

    // The escalation: a key holding keys:write rolls the account's `*` key and is handed its secret.
    // Roll gives a secret, so it gives the key's scopes: beyond the caller's own, Scopes is invalid.
    const keys = await liveKeys(ctx, demo.account.id);
    const defaultKey = (await call(ctx.app, { path: '/v1/keys/index', token: demo.token }))
      .json<KeyReply[]>()
      .find((k) => k.Name === 'default')!;
    const wider = await createKey(ctx, demo.token, { Name: 'wider', Scopes: ['contacts:read', 'keys:write', 'credits:read'] });
    for (const target of [defaultKey.Id, wider.Id]) {
      assert422(
        await call(ctx.app, {
          method: 'POST',
          path: '/v1/keys/roll',
          token: rolled.Secret!,
          query: `id=${target}`,
          body: { GraceSeconds: 0 },
        }),
        SCOPES_INVALID,
      );
    }
    const session = await keySession(ctx, rolled.Secret!);
    assert422(await withCookie(ctx, 'POST', `/v1/keys/roll?id=${defaultKey.Id}`, session.cookie, session.csrf, {}), SCOPES_INVALID);
    assert.deepEqual(
      (await liveKeys(ctx, demo.account.id)).filter((k) => k.id !== wider.Id),
      keys,
      'no wider key was rolled',
    );
    assert.equal(await statusOf(ctx, demo.token, '/v1/credits/balance'), 200, 'the * key keeps its secret');
    assert.equal(await statusOf(ctx, wider.Secret!, '/v1/credits/balance'), 200);
    // Rolling a key within its own scopes (itself, a narrower one) is allowed.
    const narrower = await createKey(ctx, demo.token, { Name: 'narrower', Scopes: ['contacts:read'] });
    const ok = await call(ctx.app, { method: 'POST', path: '/v1/keys/roll', token: rolled.Secret!, query: `id=${narrower.Id}`, body: {} });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.deepEqual(ok.json<KeyReply>().Scopes, ['contacts:read']);
  },
);

storeTest(
  'subaccounts/keys: 403 without the subaccounts scope; with it, a child key within the caller and never subaccounts',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const made = await call(ctx.app, { method: 'POST', path: '/v1/subaccounts/create', token: demo.token, body: { Name: 'Child' } });
    assert.equal(made.statusCode, 201, made.body);
    const childId = made.json<{ Id: number }>().Id;
    const childKey = (token: string, body: unknown) =>
      call(ctx.app, { method: 'POST', path: '/v1/subaccounts/keys', token, query: `id=${childId}`, body });
    const noSub = await createKey(ctx, demo.token, { Name: 'no sub', Scopes: ['keys:write', 'contacts:write'] });
    const subOnly = await createKey(ctx, demo.token, { Name: 'sub only', Scopes: ['subaccounts:write'] });
    const subReader = await createKey(ctx, demo.token, { Name: 'sub + reader', Scopes: ['subaccounts:write', 'contacts:read'] });
    const subRead = await createKey(ctx, demo.token, { Name: 'sub read', Scopes: ['subaccounts:read', 'contacts:write'] });

    // No subaccounts scope (or only its read): 403, whatever the body.
    for (const token of [noSub.Secret!, subRead.Secret!])
      for (const body of [{ Name: 'c', Scopes: ['contacts:read'] }, { Name: 'c' }])
        assertError(await childKey(token, body), 403, FORBIDDEN);
    // With it: bounded by the caller's own scopes; a sub-account's key never holds subaccounts.
    for (const scopes of [undefined, ['*'], ['contacts:read'], ['subaccounts:write'], ['subaccounts:read']])
      assert422(await childKey(subOnly.Secret!, { Name: 'c', ...(scopes ? { Scopes: scopes } : {}) }), SCOPES_INVALID);
    for (const scopes of [['contacts:write'], ['*'], ['contacts:read', 'subaccounts:read'], ['admin:write']])
      assert422(await childKey(subReader.Secret!, { Name: 'c', Scopes: scopes }), SCOPES_INVALID);
    for (const scopes of [['subaccounts:read'], ['subaccounts:write'], ['*', 'subaccounts:write'], ['admin:read']])
      assert422(await childKey(demo.token, { Name: 'c', Scopes: scopes }), SCOPES_INVALID);
    assert.deepEqual(await liveKeys(ctx, childId), [], 'no refused request made a key of the child');

    const reader = await childKey(subReader.Secret!, { Name: 'child reader', Scopes: ['contacts:read'] });
    assert.equal(reader.statusCode, 201, reader.body);
    assert.deepEqual(reader.json<KeyReply>().Scopes, ['contacts:read']);
    const star = await childKey(demo.token, { Name: 'child *', Scopes: ['*'] });
    assert.equal(star.statusCode, 201, star.body);
    const childStar = star.json<KeyReply>().Secret!;
    // The child's `*` excludes subaccounts: its own keys/create cannot name them, and its keys reach none.
    assert422(
      await call(ctx.app, {
        method: 'POST',
        path: '/v1/keys/create',
        token: childStar,
        body: { Name: 'up', Scopes: ['subaccounts:write'] },
      }),
      SCOPES_INVALID,
    );
    const grand = await createKey(ctx, childStar, { Name: 'grand', Scopes: ['*'] });
    for (const token of [childStar, grand.Secret!]) {
      assertError(await call(ctx.app, { path: '/v1/subaccounts/index', token }), 403, FORBIDDEN);
      assertError(await childKey(token, { Name: 'self', Scopes: ['contacts:read'] }), 403, FORBIDDEN);
      assertError(
        await call(ctx.app, { method: 'POST', path: '/v1/subaccounts/create', token, body: { Name: 'Grandchild' } }),
        403,
        FORBIDDEN,
      );
    }
    assert.equal(await statusOf(ctx, reader.json<KeyReply>().Secret!, '/v1/groups/index'), 403);

    // People of the parent: an admin (role `*`) may give a child `*` but never subaccounts; a member
    // (no subaccounts scope) nothing.
    const adminPerson = await person(ctx, demo.token, 'admin@example.com', 'admin');
    const member = await person(ctx, demo.token, 'member@example.com', 'member');
    const asPerson = (s: { cookie: string; csrf: string }, scopes: string[]) =>
      withCookie(ctx, 'POST', `/v1/subaccounts/keys?id=${childId}`, s.cookie, s.csrf, { Name: 'p', Scopes: scopes });
    assert422(await asPerson(adminPerson, ['subaccounts:write']), SCOPES_INVALID);
    assertError(await asPerson(member, ['contacts:read']), 403, FORBIDDEN);
    // subaccounts/users invites an owner by default: only one who acts as an owner may (§16.5).
    assert422(
      await withCookie(ctx, 'POST', `/v1/subaccounts/users?id=${childId}`, adminPerson.cookie, adminPerson.csrf, {
        Email: 'o@example.com',
      }),
      ROLE_INVALID,
    );
    assert422(
      await call(ctx.app, {
        method: 'POST',
        path: '/v1/subaccounts/users',
        token: subReader.Secret!,
        query: `id=${childId}`,
        body: { Email: 'o2@example.com', Role: 'viewer' },
      }),
      ROLE_INVALID,
    );

    // The operator's accounts/keys: anything the account may hold, never subaccounts in a sub-account.
    const op = await operatorKey(ctx);
    for (const scopes of [['subaccounts:write'], ['admin:write'], ['admin:read']])
      assert422(
        await admin(ctx, {
          method: 'POST',
          path: '/accounts/keys',
          token: op.secret,
          query: `id=${childId}`,
          body: { Name: 'o', Scopes: scopes },
        }),
        SCOPES_INVALID,
      );
    assert.deepEqual(
      (await liveKeys(ctx, childId)).map((k) => k.scopes),
      ['["contacts:read"]', '["*"]', '["*"]'],
      'only the keys allowed above exist in the child',
    );
  },
);

/** The scopes of a `member` as docs/API.md §15.3 lists them: every read but keys, users and audit; write on six. */
const MEMBER_SCOPES = [
  'numbers:read',
  'credits:read',
  'sms:write',
  'contacts:write',
  'groups:write',
  'fields:write',
  'keywords:write',
  'media:write',
  'webhooks:read',
  'account:read',
  'subaccounts:read',
];

storeTest(
  'people: a role below admin mints no key; a key holding users:write gives no role beyond its own (create, update, reset)',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const viewer = await person(ctx, demo.token, 'viewer@example.com', 'viewer');
    const member = await person(ctx, demo.token, 'member@example.com', 'member');
    const adminPerson = await person(ctx, demo.token, 'admin@example.com', 'admin');
    const before = await liveKeys(ctx, demo.account.id);
    const defaultId = before[0]!.id;

    // viewer and member hold no keys or users scope: every such write is 403, with the right CSRF token.
    for (const p of [viewer, member]) {
      for (const scopes of [['contacts:read'], ['*']])
        assertError(await withCookie(ctx, 'POST', '/v1/keys/create', p.cookie, p.csrf, { Name: 'k', Scopes: scopes }), 403, FORBIDDEN);
      assertError(await withCookie(ctx, 'POST', `/v1/keys/roll?id=${defaultId}`, p.cookie, p.csrf, {}), 403, FORBIDDEN);
      assertError(await withCookie(ctx, 'PATCH', `/v1/keys/update?id=${defaultId}`, p.cookie, p.csrf, { Scopes: ['*'] }), 403, FORBIDDEN);
      assertError(await withCookie(ctx, 'GET', '/v1/keys/index', p.cookie), 403, FORBIDDEN);
      assertError(
        await withCookie(ctx, 'POST', '/v1/users/create', p.cookie, p.csrf, { Email: `by-${p.user.Id}@example.com`, Role: 'admin' }),
        403,
        FORBIDDEN,
      );
      assertError(await withCookie(ctx, 'PATCH', `/v1/users/update?id=${p.user.Id}`, p.cookie, p.csrf, { Role: 'admin' }), 403, FORBIDDEN);
      assertError(await withCookie(ctx, 'POST', `/v1/users/reset?id=${adminPerson.user.Id}`, p.cookie, p.csrf), 403, FORBIDDEN);
    }
    assert.deepEqual(await liveKeys(ctx, demo.account.id), before);

    // A key holding a member's scopes and users:write, but not `*`: it may give viewer and member,
    // never admin or owner, whether by users/create, users/update or users/reset. A reset hands out
    // the person's credential (a new InviteUrl signs in with their role), so resetting a person whose
    // role is beyond the caller's own gives that role, and is refused as giving it is (§15.3).
    const hr = await createKey(ctx, demo.token, { Name: 'hr', Scopes: ['users:write', ...MEMBER_SCOPES] });
    const asHr = (method: 'POST' | 'PATCH', path: string, query: string, body?: unknown) =>
      call(ctx.app, { method, path, token: hr.Secret!, query, ...(body !== undefined ? { body } : {}) });
    const users = () =>
      ctx.store.db
        .selectFrom('users')
        .select(['id', 'role', 'password_hash', 'invite_hash', 'invite_expires_at'])
        .where('account_id', '=', demo.account.id)
        .orderBy('id')
        .execute();
    const usersBefore = await users();
    for (const role of ['admin', 'owner'])
      assert422(await asHr('POST', '/v1/users/create', '', { Email: `new-${role}@example.com`, Role: role }), ROLE_INVALID);
    assert422(await asHr('PATCH', '/v1/users/update', `id=${member.user.Id}`, { Role: 'admin' }), ROLE_INVALID);
    assert422(await asHr('PATCH', '/v1/users/update', `id=${adminPerson.user.Id}`, { Role: 'owner' }), ROLE_INVALID);
    assert422(await asHr('POST', '/v1/users/reset', `id=${adminPerson.user.Id}`), ROLE_INVALID);
    assert.deepEqual(await users(), usersBefore, 'no person was invited, promoted or reset');
    assert.equal((await withCookie(ctx, 'GET', '/v1/credits/balance', adminPerson.cookie)).statusCode, 200, "the admin's session lives on");
    // A key holding users:write alone can give no role at all, and so reset no one.
    const onlyUsers = await createKey(ctx, demo.token, { Name: 'only users', Scopes: ['users:write'] });
    for (const target of [viewer, member, adminPerson])
      assert422(
        await call(ctx.app, { method: 'POST', path: '/v1/users/reset', token: onlyUsers.Secret!, query: `id=${target.user.Id}` }),
        ROLE_INVALID,
      );
    assert422(
      await call(ctx.app, {
        method: 'POST',
        path: '/v1/users/create',
        token: onlyUsers.Secret!,
        body: { Email: 'v@example.com', Role: 'viewer' },
      }),
      ROLE_INVALID,
    );
    assert.deepEqual(await users(), usersBefore);
    // Within its own: the hr key resets a member and invites a viewer (so the refusals are about the role).
    const reset = await asHr('POST', '/v1/users/reset', `id=${member.user.Id}`);
    assert.equal(reset.statusCode, 200, reset.body);
    assertError(await withCookie(ctx, 'GET', '/v1/credits/balance', member.cookie), 401, UNAUTHORIZED);
    const back = await consoleApi(ctx, 'POST', '/console/api/invite', {
      body: { Code: codeOf(reset.json<UserReply>()), Password: PASSWORD },
    });
    assert.equal(back.statusCode, 204, back.body);
    assert.equal((await invite(ctx, hr.Secret!, { Email: 'v2@example.com', Role: 'viewer' })).Role, 'viewer');

    // An admin holds `*`: it may mint a `*` key (within its role), never admin:* nor itself an owner.
    const minted = await withCookie(ctx, 'POST', '/v1/keys/create', adminPerson.cookie, adminPerson.csrf, {
      Name: 'by admin',
      Scopes: ['*'],
    });
    assert.equal(minted.statusCode, 201, minted.body);
    assert422(
      await withCookie(ctx, 'POST', '/v1/keys/create', adminPerson.cookie, adminPerson.csrf, { Name: 'x', Scopes: ['admin:write'] }),
      SCOPES_INVALID,
    );
    assert422(
      await withCookie(ctx, 'PATCH', `/v1/users/update?id=${adminPerson.user.Id}`, adminPerson.cookie, adminPerson.csrf, { Role: 'owner' }),
      ROLE_INVALID,
    );
    // Demoted, the same session loses it at its next request.
    const demoted = await call(ctx.app, {
      method: 'PATCH',
      path: '/v1/users/update',
      token: demo.token,
      query: `id=${adminPerson.user.Id}`,
      body: { Role: 'member' },
    });
    assert.equal(demoted.statusCode, 200);
    assertError(
      await withCookie(ctx, 'POST', '/v1/keys/create', adminPerson.cookie, adminPerson.csrf, { Name: 'late', Scopes: ['contacts:read'] }),
      403,
      FORBIDDEN,
    );
    assert.equal((await liveKeys(ctx, demo.account.id)).length, before.length + 3, 'hr, only users and the admin’s key: nothing else');
  },
);

// ------------------------------------------------------------------ constant time: by structure

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') ? [relative(SRC, path).split('\\').join('/')] : [];
  });
}

/** Words naming secret material (or its hash, which stands for it): an identifier holding one is compared only in constant time. */
const SECRET_WORDS = new Set([
  'secret',
  'secrets',
  'token',
  'tokens',
  'hash',
  'hashes',
  'digest',
  'signature',
  'signatures',
  'sig',
  'csrf',
  'hmac',
  'cookie',
  'password',
  'passcode',
  'otp',
  'totp',
  'recovery',
  'invite',
  'challenge',
]);
/** Where `code` means a secret (invite, TOTP and recovery codes), not an error code. */
const CODE_MODULES = new Set([
  'domain/sign-in.ts',
  'domain/users.ts',
  'domain/credentials.ts',
  'http/session.ts',
  'store/repositories/users.ts',
]);
/** Words of a hash or digest: a lookup keyed by one (a Map's get/has) is a lookup by hash, like the database's. */
const HASH_WORDS = new Set(['hash', 'hashes', 'digest']);

/**
 * The functions that verify a secret, each of which must call crypto.timingSafeEqual and compare
 * nothing else but lengths (public), types and absent values. The rest of the secrets are never
 * compared in code: they are looked up by their SHA-256 hash in the database (see below).
 */
const VERIFIERS: Record<string, string[]> = {
  // API keys (the hash found by a lookup, then confirmed) and the CSRF token (§15.3).
  'http/plugins/auth.ts': ['createAuthenticator', 'csrfHolds'],
  // Operator keys (§16.4); an operator session's CSRF token goes through csrfHolds.
  'http/admin/auth.ts': ['createOperatorAuthenticator'],
  // X-Twilio-Signature of the carriers' callbacks.
  'carriers/twilio-signature.ts': ['sameText'],
  // X-Signature of the Android gateway's events.
  'carriers/android-events.ts': ['verifyAndroidEvent'],
  // Signed MMS media links.
  'lib/signed-link.ts': ['verifyMediaLink'],
  // The /metrics bearer token.
  'http/metrics.ts': ['authorized'],
};

/**
 * Lookups by SHA-256 hash in the database, the other accepted form: the presented secret is
 * hashed, and the row is found by an index on the hash. What the index's comparison could leak is
 * how many leading bytes of a SHA-256 digest match, which says nothing about the secret (finding
 * a secret whose digest starts with chosen bytes is a preimage search). Each entry: the module,
 * and the call that must pass a hash of the presented value.
 */
const HASH_LOOKUPS: { file: string; call: string; arg: number; hashedBy: string; what: string }[] = [
  { file: 'http/plugins/auth.ts', call: 'resolveKey', arg: 1, hashedBy: 'hash', what: 'API keys (hash = hashToken(secret))' },
  { file: 'http/plugins/auth.ts', call: 'resolveSession', arg: 1, hashedBy: 'hashToken', what: 'session cookies' },
  { file: 'http/admin/auth.ts', call: 'resolveOperatorKey', arg: 1, hashedBy: 'hash', what: 'operator keys' },
  { file: 'http/admin/auth.ts', call: 'resolveOperatorSession', arg: 1, hashedBy: 'hashToken', what: 'operator sessions' },
  { file: 'http/session.ts', call: 'resolveSession', arg: 1, hashedBy: 'hash', what: 'session cookies (console API)' },
  { file: 'domain/sign-in.ts', call: 'findUserByInvite', arg: 1, hashedBy: 'hashToken', what: 'invite and password-reset codes' },
  { file: 'domain/sign-in.ts', call: 'useRecoveryCode', arg: 2, hashedBy: 'recoveryHash', what: 'recovery codes' },
  { file: 'domain/sign-in.ts', call: 'resolveKey', arg: 1, hashedBy: 'hash', what: 'keys signing in to the console' },
];

/**
 * Accepted comparisons that mention a secret word but compare no secret: each with its reason.
 * Every entry must still match something (a stale entry fails the test).
 */
const ALLOWED: { file: string; text: string; why: string }[] = [
  { file: 'http/plugins/auth.ts', text: 'revocations !== seenRevocations', why: 'a counter of revocations, not a token' },
  { file: 'http/plugins/auth.ts', text: 'tokenRevocations() === revocations', why: 'a counter of revocations, not a token' },
  {
    file: 'domain/quiet-hours.ts',
    text: 'signature(a, from) === signature(b, from)',
    why: 'the "signature" of a quiet-hours setting, no cryptography',
  },
  { file: 'http/plugins/auth.ts', text: 'writes !== seenWrites', why: "SQLite's data_version, not a token" },
  { file: 'http/plugins/auth.ts', text: 'externalWriteMarker(store) === writes', why: "SQLite's data_version, not a token" },
];

interface Finding {
  file: string;
  line: number;
  text: string;
  why: string;
}

function wordsOf(name: string): string[] {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== '');
  // `statusCode`, `errorCode`: a status, not a secret code.
  return words.some((w) => w === 'status' || w === 'error') ? words.filter((w) => w !== 'code') : words;
}

function unwrap(node: ts.Node): ts.Node {
  let n = node;
  while (ts.isParenthesizedExpression(n) || ts.isAsExpression(n) || ts.isNonNullExpression(n) || ts.isTypeAssertionExpression(n))
    n = n.expression;
  return n;
}

const COMPARISONS = new Set([
  ts.SyntaxKind.EqualsEqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsEqualsToken,
  ts.SyntaxKind.EqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsToken,
  ts.SyntaxKind.LessThanToken,
  ts.SyntaxKind.LessThanEqualsToken,
  ts.SyntaxKind.GreaterThanToken,
  ts.SyntaxKind.GreaterThanEqualsToken,
]);

/** A side of a comparison that says nothing secret: absent values, booleans, numbers, '', `typeof`, a length. */
function benign(node: ts.Node, literals: boolean): boolean {
  const n = unwrap(node);
  if (ts.isIdentifier(n) && n.text === 'undefined') return true;
  if (n.kind === ts.SyntaxKind.NullKeyword || n.kind === ts.SyntaxKind.TrueKeyword || n.kind === ts.SyntaxKind.FalseKeyword) return true;
  if (ts.isNumericLiteral(n) || ts.isTypeOfExpression(n) || ts.isVoidExpression(n)) return true;
  if (ts.isPrefixUnaryExpression(n) && ts.isNumericLiteral(n.operand)) return true;
  if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) return literals || n.text === '';
  if (ts.isPropertyAccessExpression(n) && ['length', 'byteLength', 'size'].includes(n.name.text)) return true;
  // A boolean made by another comparison (`(a === undefined) === (b === undefined)`) or a negation.
  if (ts.isBinaryExpression(n) && COMPARISONS.has(n.operatorToken.kind)) return true;
  if (ts.isPrefixUnaryExpression(n) && n.operator === ts.SyntaxKind.ExclamationToken) return true;
  return false;
}

/**
 * The comparisons of `text` (the source of `file`, relative to src/) that may compare secret
 * material other than in constant time. Exported for the self-check below.
 */
function scanSecretComparisons(file: string, text: string): Finding[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const secretWords = CODE_MODULES.has(file) ? new Set([...SECRET_WORDS, 'code', 'codes']) : SECRET_WORDS;
  const found: Finding[] = [];
  const wordsIn = (node: ts.Node): string[] => {
    const out: string[] = [];
    const visit = (n: ts.Node): void => {
      if (ts.isIdentifier(n) || ts.isPrivateIdentifier(n)) out.push(...wordsOf(n.text));
      else if (ts.isElementAccessExpression(n) && ts.isStringLiteral(n.argumentExpression)) out.push(...wordsOf(n.argumentExpression.text));
      if (!ts.isStringLiteral(n) && !ts.isTemplateExpression(n)) n.forEachChild(visit);
    };
    visit(node);
    return out;
  };
  const mentions = (node: ts.Node, words = secretWords) => wordsIn(node).some((w) => words.has(w));
  const note = (node: ts.Node, why: string) => {
    const snippet = node.getText(sf).replace(/\s+/g, ' ');
    if (ALLOWED.some((a) => a.file === file && snippet.includes(a.text))) return;
    found.push({ file, line: sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1, text: snippet.slice(0, 160), why });
  };
  const verifiers = new Set(VERIFIERS[file] ?? []);
  const EQUALITY = new Set([
    ts.SyntaxKind.EqualsEqualsEqualsToken,
    ts.SyntaxKind.ExclamationEqualsEqualsToken,
    ts.SyntaxKind.EqualsEqualsToken,
    ts.SyntaxKind.ExclamationEqualsToken,
  ]);
  const visit = (node: ts.Node, inVerifier: boolean): void => {
    let inside = inVerifier;
    const name =
      (ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isFunctionExpression(node)) &&
      node.name &&
      ts.isIdentifier(node.name)
        ? node.name.text
        : ts.isVariableDeclaration(node) && ts.isIdentifier(node.name)
          ? node.name.text
          : undefined;
    if (name !== undefined && verifiers.has(name)) inside = true;
    if (ts.isBinaryExpression(node) && EQUALITY.has(node.operatorToken.kind)) {
      const { left, right } = node;
      if (!benign(left, false) && !benign(right, false) && (mentions(left) || mentions(right)))
        note(node, 'a secret compared with ==/===/!=/!== (use crypto.timingSafeEqual, or look it up by its SHA-256 hash)');
      else if (inside && !benign(left, true) && !benign(right, true))
        note(node, 'a verifier compares two values with ==/===/!=/!== (only lengths, types and absent values may be)');
    }
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(unwrap(node.expression))) {
      const callee = unwrap(node.expression) as ts.PropertyAccessExpression;
      const method = callee.name.text;
      const receiver = callee.expression;
      const args = node.arguments;
      const argsMention = args.some((a) => mentions(a));
      if (['equals', 'compare', 'localeCompare'].includes(method) && (verifiers.size > 0 || mentions(receiver) || argsMention))
        note(node, `.${method}() of secret material (not constant time)`);
      if (['includes', 'indexOf', 'lastIndexOf', 'startsWith', 'endsWith', 'search', 'match'].includes(method)) {
        const literalArgs = args.every((a) => benign(a, true));
        if (argsMention || (mentions(receiver) && !literalArgs)) note(node, `.${method}() over secret material (not constant time)`);
      }
      if (['has', 'get'].includes(method) && args.length === 1) {
        const raw = new Set([...secretWords].filter((w) => !HASH_WORDS.has(w)));
        const words = wordsIn(args[0]!);
        if (words.some((w) => raw.has(w)) && !words.some((w) => HASH_WORDS.has(w)))
          note(node, `.${method}() keyed by a raw secret (key it by its hash)`);
      }
    }
    node.forEachChild((c) => visit(c, inside));
  };
  visit(sf, false);
  return found;
}

/** The names of the functions (declarations, methods, `const f = …`, object members) that call `callee` somewhere inside. */
function functionsCalling(file: string, text: string, callee: string): Set<string> {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out = new Set<string>();
  const visit = (node: ts.Node, names: string[]): void => {
    let here = names;
    const named =
      ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isVariableDeclaration(node) || ts.isPropertyAssignment(node)
        ? node.name
        : undefined;
    if (named && ts.isIdentifier(named)) here = [...names, named.text];
    if (ts.isCallExpression(node)) {
      const e = unwrap(node.expression);
      const name = ts.isIdentifier(e) ? e.text : ts.isPropertyAccessExpression(e) ? e.name.text : '';
      if (name === callee) for (const n of here) out.add(n);
    }
    node.forEachChild((c) => visit(c, here));
  };
  visit(sf, []);
  return out;
}

/** The source text of every call `name(…)` in `text`: its argument `arg` as written. */
function callArguments(file: string, text: string, name: string, arg: number): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const e = unwrap(node.expression);
      const callee = ts.isIdentifier(e) ? e.text : ts.isPropertyAccessExpression(e) ? e.name.text : '';
      if (callee === name && node.arguments[arg]) out.push(node.arguments[arg].getText(sf));
    }
    node.forEachChild(visit);
  };
  visit(sf);
  return out;
}

const read = (file: string) => readFileSync(join(SRC, file), 'utf8');

test('constant time (structure): no secret, token, hash, CSRF token, code or signature in src/ is compared except by timingSafeEqual or looked up by its hash', () => {
  const files = sourceFiles();
  assert.ok(files.length > 100, `src/ read (${files.length} files)`);
  const findings = files.flatMap((f) => scanSecretComparisons(f, read(f)));
  assert.deepEqual(
    findings.map((f) => `src/${f.file}:${f.line}: ${f.why}: ${f.text}`),
    [],
    'every comparison of secret material is constant time',
  );
  // No allowance is stale: each still names a comparison that is there.
  for (const a of ALLOWED) assert.ok(read(a.file).includes(a.text), `allowed comparison still present: ${a.file}: ${a.text}`);

  // Every verifier calls crypto.timingSafeEqual (imported from node:crypto).
  for (const [file, names] of Object.entries(VERIFIERS)) {
    const text = read(file);
    assert.match(text, /import \{[^}]*\btimingSafeEqual\b[^}]*\} from 'node:crypto'/, `${file} imports timingSafeEqual from node:crypto`);
    const callers = functionsCalling(file, text, 'timingSafeEqual');
    for (const name of names) assert.ok(callers.has(name), `${file}: ${name} compares with timingSafeEqual`);
  }
  // The Twilio check goes through sameText for every candidate URL.
  assert.ok(
    functionsCalling('carriers/twilio-signature.ts', read('carriers/twilio-signature.ts'), 'sameText').has('verifyTwilioSignature'),
  );

  // Every lookup of a presented secret is by its hash.
  for (const l of HASH_LOOKUPS) {
    const args = callArguments(l.file, read(l.file), l.call, l.arg);
    assert.ok(args.length > 0, `${l.file} calls ${l.call} (${l.what})`);
    for (const a of args)
      assert.ok(a === l.hashedBy || a.startsWith(`${l.hashedBy}(`), `${l.file}: ${l.call}(… ${a} …) passes a hash (${l.what})`);
  }
  // The hashes are SHA-256: hashToken, and recovery codes through it.
  assert.match(read('domain/tokens.ts'), /return hash\('sha256', token, 'hex'\);/);
  assert.match(read('domain/sign-in.ts'), /function recoveryHash\(code: string\): string \{\s*return hashToken\(/);
  // `hash` in the authenticators is hashToken(secret) of the presented secret.
  for (const file of ['http/plugins/auth.ts', 'http/admin/auth.ts']) assert.match(read(file), /const hash = hashToken\(secret\);/);
  assert.match(read('domain/sign-in.ts'), /const hash = secret\.length <= 512 \? hashToken\(secret\) : undefined;/);
  // The repositories find them by the hash column, in the database.
  const repos: [string, RegExp][] = [
    ['store/repositories/keys.ts', /\.where\('t\.token_hash', '=', hash\)/],
    ['store/repositories/keys.ts', /\.where\('t\.old_hash', '=', hash\)/],
    ['store/repositories/sessions.ts', /\.where\('s\.token_hash', '=', hash\)/],
    ['store/repositories/users.ts', /\.where\('invite_hash', '=', inviteHash\)/],
    ['store/repositories/users.ts', /\.where\('code_hash', '=', hash\)/],
  ];
  for (const [file, pattern] of repos) assert.match(read(file), pattern, file);
  // Passwords go through Argon2's verify; TOTP codes through otpauth's validate, which compares with
  // crypto.timingSafeEqual (traced in the next test); passkeys through @simplewebauthn's verifiers.
  assert.match(read('domain/users.ts'), /return await argon2Verify\(stored, password\);/);
  assert.match(read('domain/sign-in.ts'), /totp\(secret\)\.validate\(\{ token: code/);
  // Webhook signatures: msgsvc signs what it sends (Standard Webhooks) and verifies none itself;
  // receivers verify them (docs/API.md §12.3). Nothing in src/ checks one with a plain comparison.
  assert.match(read('webhooks/deliverer.ts'), /new Webhook\(webhook\.secret\)\.sign\(/);
  for (const f of files) assert.doesNotMatch(read(f), /new Webhook\([^)]*\)\.verify\(/, `${f} verifies no webhook signature by hand`);
});

test('constant time (structure): the scan catches the comparisons it forbids (a check of the check)', () => {
  const auth = read('http/plugins/auth.ts');
  const csrfLine = 'return a.length === b.length && timingSafeEqual(a, b);';
  assert.ok(auth.includes(csrfLine), `src/http/plugins/auth.ts still has: ${csrfLine}`);
  const mutations: { file: string; from: string; to: string }[] = [
    { file: 'http/plugins/auth.ts', from: csrfLine, to: 'return sent === p.csrf;' },
    { file: 'http/plugins/auth.ts', from: csrfLine, to: 'return a.equals(b);' },
    { file: 'http/plugins/auth.ts', from: csrfLine, to: 'return Buffer.compare(a, b) === 0;' },
    { file: 'http/plugins/auth.ts', from: csrfLine, to: "return String(sent) == p.csrf + '';" },
    {
      file: 'http/plugins/auth.ts',
      from: "if (!key || !timingSafeEqual(Buffer.from(key.storedHash, 'hex'), Buffer.from(hash, 'hex'))) {",
      to: 'if (!key || key.storedHash !== hash) {',
    },
    { file: 'carriers/twilio-signature.ts', from: 'return x.length === y.length && timingSafeEqual(x, y);', to: 'return a === b;' },
    {
      file: 'lib/signed-link.ts',
      from: 'if (given.length !== expected.length || !timingSafeEqual(given, expected)) return',
      to: 'if (s !== signature(secret, carrier, a, m, e)) return',
    },
    {
      file: 'domain/sign-in.ts',
      from: 'const errors = [];',
      to: 'const errors = []; if (user && user.invite_hash === hashToken(code)) void 0;',
    },
    {
      file: 'domain/sign-in.ts',
      from: "if (code === '') return 'Code cannot be blank.';",
      to: "if (code === user.totp_secret) return 'Code cannot be blank.';",
    },
    {
      file: 'domain/credentials.ts',
      from: 'const s = await sessions.findSession(store.db, hash);',
      to: 'const s = [].find((x: { token_hash: string }) => x.token_hash == hash);',
    },
    {
      file: 'http/metrics.ts',
      from: 'return timingSafeEqual(digest(authorization), tokenDigest);',
      to: 'return validTokens.includes(authorization);',
    },
    { file: 'http/plugins/auth.ts', from: 'const hit = cache.get(hash);', to: 'const hit = cache.get(secret);' },
  ];
  for (const m of mutations) {
    const text = read(m.file);
    assert.ok(text.includes(m.from), `${m.file} still has: ${m.from}`);
    assert.deepEqual(scanSecretComparisons(m.file, text), [], `${m.file} as it is passes`);
    const broken = text.replace(m.from, m.to);
    const found = scanSecretComparisons(m.file, broken);
    const callers = [...(VERIFIERS[m.file] ?? [])].filter((n) => !functionsCalling(m.file, broken, 'timingSafeEqual').has(n));
    assert.ok(found.length > 0 || callers.length > 0, `the scan flags: ${m.to}`);
  }
});

// ------------------------------------------------------------------ constant time: by tracing real requests

/** Variants of a secret an attacker would try: one character off at either end, a prefix, an extension, random ones. */
function nearMisses(real: string): Record<string, string> {
  const flip = (c: string) => (c === 'A' ? 'B' : 'A');
  return {
    'random, same length': randomBytes(64).toString('base64url').slice(0, real.length),
    'last character off': real.slice(0, -1) + flip(real.at(-1)!),
    'first character off': flip(real[0]!) + real.slice(1),
    'other case': real.toUpperCase() === real ? real.toLowerCase() : real.toUpperCase(),
    'a prefix': real.slice(0, -3),
    'one more character': `${real}A`,
  };
}

storeTest(
  'constant time (traced): CSRF token, session cookie, invite code, TOTP code and operator key take one path whatever the guess',
  async (t) => {
    const clock = createManualClock(Date.UTC(2030, 0, 1, 0, 0, 0));
    const ctx = await buildTestApp(t, {}, { clock });
    const demo = await ctx.seed();
    const p = await person(ctx, demo.token, 'traced@example.com', 'member');
    const other = await person(ctx, demo.token, 'other@example.com', 'member');
    const tracer = traceCrypto(t);

    // CSRF: compared with timingSafeEqual of two equal lengths (the token's length is public: every
    // CsrfToken has 32 characters, so a shorter or longer guess is refused before comparing).
    assert.equal(p.csrf.length, 32);
    const write = (csrf: string) => withCookie(ctx, 'POST', '/v1/groups/create', p.cookie, csrf, { fname: 'Traced group' });
    const csrfGuesses = { ...nearMisses(p.csrf), 'another session’s token': other.csrf };
    for (const [name, guess] of Object.entries(csrfGuesses)) {
      const { result, calls } = await tracer.run(guess, () => write(guess));
      assertError(result, 403, FORBIDDEN);
      const compares = calls.filter((c) => c.startsWith('timingSafeEqual'));
      assert.deepEqual(compares, guess.length === p.csrf.length ? ['timingSafeEqual(32,32)'] : [], `CSRF ${name}`);
    }
    const good = await tracer.run(p.csrf, () => write(p.csrf));
    assert.equal(good.result.statusCode, 201, good.result.body);
    assert.deepEqual(
      good.calls.filter((c) => c.startsWith('timingSafeEqual')),
      ['timingSafeEqual(32,32)'],
    );

    // Session cookie: hashed first, then looked up by the hash; never compared in code. Every guess
    // takes one path, the real cookie that path too (found, nothing compared).
    const value = p.cookie.split('=')[1]!;
    let cookiePath: string[] | undefined;
    for (const [name, guess] of Object.entries(nearMisses(value))) {
      const { result, calls } = await tracer.run(guess, () => withCookie(ctx, 'GET', '/v1/credits/balance', `msgsvc_session=${guess}`));
      assertError(result, 401, UNAUTHORIZED);
      cookiePath ??= calls;
      assert.deepEqual(calls, cookiePath, `cookie ${name}: one path`);
    }
    assert.deepEqual(cookiePath, ['sha256(value)'], 'a guessed cookie is hashed and looked up, never compared');
    const real = await tracer.run(value, () => withCookie(ctx, 'GET', '/v1/credits/balance', p.cookie));
    assert.equal(real.result.statusCode, 200);
    assert.deepEqual(real.calls, ['sha256(value)'], 'the real cookie: the same');

    // Invite codes: hashed and looked up, the same way for each guess.
    const invited = await invite(ctx, demo.token, { Email: 'code@example.com', Role: 'viewer' });
    const code = codeOf(invited);
    let invitePath: string[] | undefined;
    for (const [i, [name, guess]] of Object.entries(nearMisses(code)).entries()) {
      // Each guess from its own address, so that the lockout (§15.3) does not answer first.
      const { result, calls } = await tracer.run(guess, () =>
        consoleApi(ctx, 'POST', '/console/api/invite', { body: { Code: guess, Password: PASSWORD }, ip: `198.51.100.${i + 1}` }),
      );
      assert422(result, [fieldError('Code', 'Code is invalid.')]);
      assert.ok(calls.includes('sha256(value)'), `invite ${name}: hashed`);
      assert.ok(!calls.some((c) => c.startsWith('timingSafeEqual')), `invite ${name}: never compared`);
      invitePath ??= calls;
      assert.deepEqual(calls, invitePath, `invite ${name}: one path`);
    }

    // TOTP: otpauth compares each candidate of the window (one step either side) with timingSafeEqual.
    const begun = await consoleApi(ctx, 'POST', '/console/api/2fa', { cookie: p.cookie, body: {} });
    const secret = begun.json<{ Secret: string }>().Secret;
    const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' });
    // A code of none of the three steps the window accepts.
    const window = [-1, 0, 1].map((step) => totp.generate({ timestamp: clock.nowMs() + step * 30_000 }));
    let wrong = '123456';
    while (window.includes(wrong)) wrong = String((Number(wrong) + 1) % 1_000_000).padStart(6, '0');
    const refused = await tracer.run(wrong, () =>
      consoleApi(ctx, 'POST', '/console/api/2fa/confirm', { cookie: p.cookie, body: { Code: wrong } }),
    );
    assert422(refused.result, [fieldError('Code', 'Code is invalid.')]);
    assert.deepEqual(
      refused.calls.filter((c) => c.startsWith('timingSafeEqual')),
      ['timingSafeEqual(6,6)', 'timingSafeEqual(6,6)', 'timingSafeEqual(6,6)'],
      'every code of the window compared in constant time',
    );

    // Operator keys: found by hash, then one timingSafeEqual of two SHA-256 digests; guesses never compared.
    const op = await operatorKey(ctx);
    const opReal = await tracer.run(op.secret, () => admin(ctx, { path: '/accounts/index', token: op.secret }));
    assert.equal(opReal.result.statusCode, 200);
    assert.deepEqual(
      opReal.calls.filter((c) => c.startsWith('timingSafeEqual')),
      ['timingSafeEqual(32,32)'],
    );
    let opPath: string[] | undefined;
    for (const [name, guess] of Object.entries(nearMisses(op.secret))) {
      const { result, calls } = await tracer.run(guess, () => admin(ctx, { path: '/accounts/index', token: guess }));
      assertError(result, 401, UNAUTHORIZED);
      assert.ok(calls.includes('sha256(value)'), `operator key ${name}: hashed`);
      opPath ??= calls;
      assert.deepEqual(calls, opPath, `operator key ${name}: one path`);
    }
    assert.ok(!opPath!.some((c) => c.startsWith('timingSafeEqual')), 'a guessed operator key is never compared');
  },
);
