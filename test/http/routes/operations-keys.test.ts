/**
 * `/v1/keys/…` (API.md §15.2) on each store: the migrated `default` key, create with the secret
 * shown once and only its hash kept, every 422, escalation refused, update, roll with a grace (a
 * manual clock moves past it), expiry, AllowedIps, delete (401 at once), `Authorization: Bearer`
 * (access_token wins), last use kept to the minute, JSON and XML.
 */
import assert from 'node:assert/strict';
import { hash } from 'node:crypto';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import { assert422, assertError, call, fieldError, WIRES } from '../../helpers/operations.ts';
import { storeTest } from '../../helpers/stores.ts';
import { createManualClock } from '../../../src/lib/time.ts';
import { until } from '../../helpers/wait.ts';
import { createKey, FORBIDDEN, UNAUTHORIZED, type KeyReply } from '../../helpers/console-session.ts';

async function balance(ctx: TestApp, token: string, remoteAddress?: string) {
  return ctx.app.inject({
    method: 'GET',
    url: `/v1/credits/balance?access_token=${encodeURIComponent(token)}`,
    headers: { accept: 'application/json' },
    ...(remoteAddress ? { remoteAddress } : {}),
  });
}

storeTest('keys/index: a token is a key named default with scope *; the list shows no secret', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const res = await call(ctx.app, { path: '/v1/keys/index', token: demo.token });
  assert.equal(res.statusCode, 200);
  const list = res.json<KeyReply[]>();
  assert.equal(list.length, 1);
  assert.deepEqual(Object.keys(list[0]!), [
    'Id',
    'Name',
    'Prefix',
    'Scopes',
    'AllowedIps',
    'DateExpires',
    'DateLastUsed',
    'LastIp',
    'DateCreated',
    'DateUpdated',
  ]);
  assert.equal(list[0]!.Name, 'default');
  assert.deepEqual(list[0]!.Scopes, ['*']);
  assert.equal(list[0]!.Prefix, demo.token.slice(0, 8));
  assert.ok(!res.body.includes(demo.token), 'the secret is never listed');
  for (const wire of WIRES) {
    const r = await call(ctx.app, { path: '/v1/keys/index', token: demo.token, wire });
    assert.equal(r.statusCode, 200);
  }
  const xml = await call(ctx.app, { path: '/v1/keys/view', token: demo.token, query: `id=${list[0]!.Id}`, wire: 'xml' });
  assert.match(xml.body, /<Scopes><item>\*<\/item><\/Scopes><AllowedIps\/><DateExpires><\/DateExpires>/);
});

storeTest('a token made before keys existed: named default, scope *, Prefix filled in at its first use', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  // A row as migration 019 leaves a pre-keys token: the defaults, no prefix.
  await ctx.store.db.updateTable('api_tokens').set({ prefix: '', name: 'default', last_used_at: null }).execute();
  assert.equal((await balance(ctx, demo.token)).statusCode, 200);
  // The use is written beside the request, not before its answer: wait for it (bounded).
  const row = await until('the first use written', async () => {
    const r = await ctx.store.db.selectFrom('api_tokens').select(['prefix', 'name', 'scopes', 'last_used_at']).executeTakeFirstOrThrow();
    return r.prefix !== '' ? r : undefined;
  });
  assert.equal(row.prefix, demo.token.slice(0, 8));
  assert.equal(row.scopes, '["*"]');
  assert.notEqual(row.last_used_at, null);
});

storeTest('keys/create: 201 with Location and the Secret once; only its SHA-256 is stored; the key works with its scopes', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const res = await call(ctx.app, {
    method: 'POST',
    path: '/v1/keys/create',
    token: demo.token,
    body: { Name: 'reporting', Scopes: ['contacts:read', 'credits:read'] },
  });
  assert.equal(res.statusCode, 201);
  const key = res.json<KeyReply>();
  assert.equal(res.headers.location, `http://localhost:80/v1/keys/view?id=${key.Id}`);
  assert.equal(typeof key.Secret, 'string');
  assert.equal(key.Prefix, key.Secret!.slice(0, 8));
  assert.equal(Object.keys(key).at(-1), 'Secret');
  const row = await ctx.store.db.selectFrom('api_tokens').selectAll().where('id', '=', key.Id).executeTakeFirstOrThrow();
  assert.equal(row.token_hash, hash('sha256', key.Secret!, 'hex'));
  assert.ok(!JSON.stringify(row).includes(key.Secret!), 'the secret itself is nowhere in the row');
  const view = await call(ctx.app, { path: '/v1/keys/view', token: demo.token, query: `id=${key.Id}` });
  assert.equal(view.json<KeyReply>().Secret, undefined, 'view never shows the secret');
  assert.equal((await balance(ctx, key.Secret!)).statusCode, 200);
  const contacts = await call(ctx.app, { path: '/v1/contacts/index', token: key.Secret! });
  assert.equal(contacts.statusCode, 200);
  assertError(await call(ctx.app, { path: '/v1/groups/index', token: key.Secret! }), 403, FORBIDDEN);
  assertError(
    await call(ctx.app, { method: 'POST', path: '/v1/contacts/create', token: key.Secret!, body: { fname: 'x' } }),
    403,
    FORBIDDEN,
  );
  // Defaults: scope *, any address, never expires.
  const plain = await createKey(ctx, demo.token, { Name: 'ci' });
  assert.deepEqual([plain.Scopes, plain.AllowedIps, plain.DateExpires, plain.DateLastUsed, plain.LastIp], [['*'], [], null, null, '']);
});

storeTest('keys/create: the 422s (blank or long Name, unknown scope, bad address or range, past or malformed DateExpires)', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const post = (body: unknown) => call(ctx.app, { method: 'POST', path: '/v1/keys/create', token: demo.token, body });
  assert422(await post({}), [fieldError('Name', 'Name cannot be blank.')]);
  assert422(await post({ Name: 'x'.repeat(65) }), [fieldError('Name', 'Name should contain at most 64 characters.')]);
  assert422(await post({ Name: 'k', Scopes: ['contacts:delete'] }), [fieldError('Scopes', 'Scopes is invalid.')]);
  assert422(await post({ Name: 'k', Scopes: 'contacts:read' }), [fieldError('Scopes', 'Scopes is invalid.')]);
  assert422(await post({ Name: 'k', Scopes: [] }), [fieldError('Scopes', 'Scopes is invalid.')]);
  for (const bad of [['10.0.0.0/33'], ['300.1.1.1'], ['example.com'], ['1.2.3'], [7]]) {
    assert422(await post({ Name: 'k', AllowedIps: bad }), [fieldError('AllowedIps', 'Allowed Ips is invalid.')]);
  }
  assert422(await post({ Name: 'k', DateExpires: '2001-01-01 00:00:00' }), [fieldError('DateExpires', 'Date Expires is invalid.')]);
  assert422(await post({ Name: 'k', DateExpires: 'tomorrow' }), [fieldError('DateExpires', 'The format of Date Expires is invalid.')]);
  const ok = await createKey(ctx, demo.token, {
    Name: 'k',
    AllowedIps: ['192.0.2.0/24', '2001:db8::1'],
    DateExpires: '2099-01-01 00:00:00',
  });
  assert.deepEqual(ok.AllowedIps, ['192.0.2.0/24', '2001:db8::1']);
  assert.equal(ok.DateExpires, '2099-01-01 00:00:00');
  const count = await ctx.store.db
    .selectFrom('api_tokens')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  assert.equal(Number(count.n), 2, 'no failed create wrote a key');
});

storeTest('escalation is refused: a key cannot give, or change a key to, scopes beyond its own', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const manager = await createKey(ctx, demo.token, { Name: 'manager', Scopes: ['keys:write', 'contacts:read'] });
  const as = manager.Secret!;
  const post = (body: unknown) => call(ctx.app, { method: 'POST', path: '/v1/keys/create', token: as, body });
  assert422(await post({ Name: 'x' }), [fieldError('Scopes', 'Scopes is invalid.')]);
  assert422(await post({ Name: 'x', Scopes: ['*'] }), [fieldError('Scopes', 'Scopes is invalid.')]);
  assert422(await post({ Name: 'x', Scopes: ['contacts:write'] }), [fieldError('Scopes', 'Scopes is invalid.')]);
  assert422(await post({ Name: 'x', Scopes: ['credits:read'] }), [fieldError('Scopes', 'Scopes is invalid.')]);
  const reader = await call(ctx.app, {
    method: 'POST',
    path: '/v1/keys/create',
    token: as,
    body: { Name: 'r', Scopes: ['contacts:read', 'keys:read'] },
  });
  assert.equal(reader.statusCode, 201, 'within its own scopes (write includes read)');
  const id = reader.json<KeyReply>().Id;
  const up = await call(ctx.app, { method: 'PATCH', path: '/v1/keys/update', token: as, query: `id=${id}`, body: { Scopes: ['*'] } });
  assert422(up, [fieldError('Scopes', 'Scopes is invalid.')]);
  const self = await call(ctx.app, {
    method: 'PATCH',
    path: '/v1/keys/update',
    token: as,
    query: `id=${manager.Id}`,
    body: { Scopes: ['*'] },
  });
  assert422(self, [fieldError('Scopes', 'Scopes is invalid.')]);
});

storeTest('keys/update: only the fields sent change; a narrowed key loses its scope at once; DateExpires null is never', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const key = await createKey(ctx, demo.token, { Name: 'a', Scopes: ['contacts:read'], DateExpires: '2099-01-01 00:00:00' });
  assert.equal((await call(ctx.app, { path: '/v1/contacts/index', token: key.Secret! })).statusCode, 200);
  const res = await call(ctx.app, {
    method: 'PUT',
    path: '/v1/keys/update',
    token: demo.token,
    query: `id=${key.Id}`,
    body: { Scopes: ['groups:read'] },
  });
  assert.equal(res.statusCode, 200);
  const after = res.json<KeyReply>();
  assert.deepEqual([after.Name, after.Scopes, after.DateExpires], ['a', ['groups:read'], '2099-01-01 00:00:00']);
  assertError(await call(ctx.app, { path: '/v1/contacts/index', token: key.Secret! }), 403, FORBIDDEN);
  const never = await call(ctx.app, {
    method: 'PATCH',
    path: '/v1/keys/update',
    token: demo.token,
    query: `id=${key.Id}`,
    body: { DateExpires: null, Name: 'b' },
  });
  assert.deepEqual([never.json<KeyReply>().Name, never.json<KeyReply>().DateExpires], ['b', null]);
  assert422(
    await call(ctx.app, { method: 'PATCH', path: '/v1/keys/update', token: demo.token, query: `id=${key.Id}`, body: { Name: '' } }),
    [fieldError('Name', 'Name cannot be blank.')],
  );
  assertError(
    await call(ctx.app, { method: 'PATCH', path: '/v1/keys/update', token: demo.token, query: 'id=999999', body: { Name: 'x' } }),
    404,
    'Object not found: 999999',
  );
});

storeTest("another account's key is 404 everywhere, and never listed", async (t) => {
  const ctx = await buildTestApp(t);
  const a = await ctx.seed('A');
  const b = await ctx.seed('B');
  const key = await createKey(ctx, a.token, { Name: 'a-only' });
  for (const [method, path] of [
    ['GET', '/v1/keys/view'],
    ['PATCH', '/v1/keys/update'],
    ['DELETE', '/v1/keys/delete'],
    ['POST', '/v1/keys/roll'],
  ] as const) {
    assertError(
      await call(ctx.app, {
        method,
        path,
        token: b.token,
        query: `id=${key.Id}`,
        ...(method !== 'GET' && method !== 'DELETE' ? { body: {} } : {}),
      }),
      404,
      `Object not found: ${key.Id}`,
    );
  }
  const list = (await call(ctx.app, { path: '/v1/keys/index', token: b.token })).json<KeyReply[]>();
  assert.ok(list.every((k) => k.Name !== 'a-only'));
  assert.equal((await balance(ctx, key.Secret!)).statusCode, 200, 'untouched');
});

storeTest('keys/delete: 204 and the key is refused at once with the one 401', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const key = await createKey(ctx, demo.token, { Name: 'gone' });
  assert.equal((await balance(ctx, key.Secret!)).statusCode, 200, 'used once: now in the cache');
  const del = await call(ctx.app, { method: 'DELETE', path: '/v1/keys/delete', token: demo.token, query: `id=${key.Id}` });
  assert.equal(del.statusCode, 204);
  assertError(await balance(ctx, key.Secret!), 401, UNAUTHORIZED);
  assertError(await call(ctx.app, { path: '/v1/keys/view', token: demo.token, query: `id=${key.Id}` }), 404, `Object not found: ${key.Id}`);
  assert.equal((await balance(ctx, demo.token)).statusCode, 200);
});

storeTest('keys/roll: a new Secret; the old one works for GraceSeconds, then gets the one 401; GraceSeconds 0..604800', async (t) => {
  const clock = createManualClock();
  const ctx = await buildTestApp(t, {}, { clock });
  const demo = await ctx.seed();
  const key = await createKey(ctx, demo.token, { Name: 'rolled', Scopes: ['credits:read'] });
  const roll = (body: unknown) => call(ctx.app, { method: 'POST', path: '/v1/keys/roll', token: demo.token, query: `id=${key.Id}`, body });
  assert422(await roll({ GraceSeconds: -1 }), [fieldError('GraceSeconds', 'Grace Seconds must be no less than 0.')]);
  assert422(await roll({ GraceSeconds: 604801 }), [fieldError('GraceSeconds', 'Grace Seconds must be no greater than 604,800.')]);
  assert422(await roll({ GraceSeconds: 'soon' }), [fieldError('GraceSeconds', 'Grace Seconds must be an integer.')]);
  const res = await roll({ GraceSeconds: 60 });
  assert.equal(res.statusCode, 200);
  const rolled = res.json<KeyReply>();
  assert.notEqual(rolled.Secret, key.Secret);
  assert.equal(rolled.Prefix, rolled.Secret!.slice(0, 8));
  assert.deepEqual(rolled.Scopes, ['credits:read']);
  assert.equal((await balance(ctx, rolled.Secret!)).statusCode, 200);
  assert.equal((await balance(ctx, key.Secret!)).statusCode, 200, 'the old secret within its grace');
  clock.advance(61_000);
  assertError(await balance(ctx, key.Secret!), 401, UNAUTHORIZED);
  assert.equal((await balance(ctx, rolled.Secret!)).statusCode, 200);
  // Default grace 24 hours; GraceSeconds 0 ends the old secret at once.
  const again = (await roll({})).json<KeyReply>();
  clock.advance(86_399_000);
  assert.equal((await balance(ctx, rolled.Secret!)).statusCode, 200, 'within the default 86400 s');
  clock.advance(2000);
  assertError(await balance(ctx, rolled.Secret!), 401, UNAUTHORIZED);
  const last = (await roll({ GraceSeconds: 0 })).json<KeyReply>();
  assertError(await balance(ctx, again.Secret!), 401, UNAUTHORIZED);
  assert.equal((await balance(ctx, last.Secret!)).statusCode, 200);
});

storeTest('DateExpires: the key works until then and then gets the one 401', async (t) => {
  const clock = createManualClock(Date.UTC(2030, 0, 1, 12, 0, 0));
  const ctx = await buildTestApp(t, {}, { clock });
  const demo = await ctx.seed();
  const key = await createKey(ctx, demo.token, { Name: 'temp', DateExpires: '2030-01-01 12:10:00' });
  assert.equal((await balance(ctx, key.Secret!)).statusCode, 200);
  clock.advance(9 * 60_000);
  assert.equal((await balance(ctx, key.Secret!)).statusCode, 200);
  clock.advance(60_000);
  assertError(await balance(ctx, key.Secret!), 401, UNAUTHORIZED);
});

storeTest('AllowedIps: only from the listed addresses and ranges (IPv4-mapped IPv6 too); elsewhere the one 401', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const key = await createKey(ctx, demo.token, { Name: 'office', AllowedIps: ['192.0.2.0/24', '2001:db8::7'] });
  assert.equal((await balance(ctx, key.Secret!, '192.0.2.55')).statusCode, 200);
  assert.equal((await balance(ctx, key.Secret!, '::ffff:192.0.2.9')).statusCode, 200);
  assert.equal((await balance(ctx, key.Secret!, '2001:db8::7')).statusCode, 200);
  assertError(await balance(ctx, key.Secret!, '198.51.100.1'), 401, UNAUTHORIZED);
  assertError(await balance(ctx, key.Secret!, '2001:db8::8'), 401, UNAUTHORIZED);
  assertError(await balance(ctx, key.Secret!, '127.0.0.1'), 401, UNAUTHORIZED);
  // The use is written beside the request, not before its answer: wait (bounded) for the last one.
  const view = async () => (await call(ctx.app, { path: '/v1/keys/view', token: demo.token, query: `id=${key.Id}` })).json<KeyReply>();
  await until('LastIp 2001:db8::7', async () => ((await view()).LastIp === '2001:db8::7' ? true : undefined));
});

storeTest(
  'Authorization: Bearer works like access_token; access_token wins when both are given; a 401 has no WWW-Authenticate',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const reader = await createKey(ctx, demo.token, { Name: 'r', Scopes: ['credits:read'] });
    const bearer = (token: string, url = '/v1/credits/balance') =>
      ctx.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
    assert.equal((await bearer(reader.Secret!)).statusCode, 200);
    assertError(await bearer('nope'), 401, UNAUTHORIZED);
    assert.equal((await bearer('nope')).headers['www-authenticate'], undefined);
    assertError(
      await ctx.app.inject({ method: 'GET', url: '/v1/credits/balance', headers: { authorization: `Basic ${reader.Secret}` } }),
      401,
      UNAUTHORIZED,
    );
    // Both: access_token (a * key) is the one used, so groups are readable; Bearer alone would be 403.
    assert.equal((await bearer(reader.Secret!, `/v1/groups/index?access_token=${demo.token}`)).statusCode, 200);
    assertError(await bearer(demo.token, `/v1/groups/index?access_token=${reader.Secret}`), 403, FORBIDDEN);
    assertError(await bearer(demo.token, `/v1/groups/index?access_token=unknown`), 401, UNAUTHORIZED);
  },
);

storeTest('last use: DateLastUsed and LastIp are kept, written at most once a minute', async (t) => {
  const clock = createManualClock(Date.UTC(2030, 5, 1, 8, 0, 0));
  const ctx = await buildTestApp(t, {}, { clock });
  const demo = await ctx.seed();
  const key = await createKey(ctx, demo.token, { Name: 'used' });
  const view = async () => (await call(ctx.app, { path: '/v1/keys/view', token: demo.token, query: `id=${key.Id}` })).json<KeyReply>();
  assert.equal((await view()).DateLastUsed, null);
  // The use is written beside the request: wait (bounded) for the expected value.
  const seen = (expected: string) =>
    until(`DateLastUsed ${expected}`, async () => ((await view()).DateLastUsed === expected ? true : undefined), 20_000);
  await balance(ctx, key.Secret!, '192.0.2.1');
  await seen('2030-06-01 08:00:00');
  assert.equal((await view()).LastIp, '192.0.2.1');
  clock.advance(30_000);
  await balance(ctx, key.Secret!, '192.0.2.1');
  await balance(ctx, key.Secret!, '192.0.2.1');
  await new Promise((r) => setTimeout(r, 200));
  assert.equal((await view()).DateLastUsed, '2030-06-01 08:00:00', 'within the minute: not written again');
  // The next minute's use is written, through the same path.
  clock.advance(31_000);
  await balance(ctx, key.Secret!, '192.0.2.1');
  await seen('2030-06-01 08:01:01');
  const writes = await ctx.store.db.selectFrom('audit_log').select('id').execute();
  assert.equal(writes.length, 1, 'only keys/create is audited: a use is no change');
});

storeTest('msgsvc tokens create and the demo token are keys: named, scope *', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const { issueToken } = await import('../../../src/domain/accounts.ts');
  const { token } = await issueToken(ctx.store, demo.account.id, '', 'cli');
  const list = (await call(ctx.app, { path: '/v1/keys/index', token })).json<KeyReply[]>();
  assert.deepEqual(
    list.map((k) => [k.Name, k.Scopes, k.Prefix]),
    [
      ['default', ['*'], demo.token.slice(0, 8)],
      ['cli', ['*'], token.slice(0, 8)],
    ],
  );
});
