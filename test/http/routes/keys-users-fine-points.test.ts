/**
 * docs/API.md §4.4 on the records of §15, on each store: a key's `Name` is kept as sent (blank is
 * PHP's trim set only, the length counts every character); `users/create` (and a sub-account's
 * first person) takes a blank `Role` (null, "", []) as the default; and every answer of the
 * console's API, its 404s included, carries `Cache-Control: no-store` (§15.4).
 */
import assert from 'node:assert/strict';
import { buildTestApp } from '../../helpers/app.ts';
import { type KeyReply, type UserReply } from '../../helpers/console-session.ts';
import { assert422, call, fieldError } from '../../helpers/operations.ts';
import { storeTest } from '../../helpers/stores.ts';

storeTest(
  'keys: Name as sent; a no-break space, \\f and U+3000 are names; spaces alone are blank; 64 characters before trimming',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const create = (body: unknown) => call(ctx.app, { method: 'POST', path: '/v1/keys/create', token: demo.token, body });
    for (const name of ['\u00a0', '\f', '\u3000', '  padded  ']) {
      const res = await create({ Name: name });
      assert.equal(res.statusCode, 201, `${JSON.stringify(name)}: ${res.body}`);
      assert.equal(res.json<KeyReply>().Name, name, 'stored as sent');
    }
    assert422(await create({ Name: ' \t\r\n' }), [fieldError('Name', 'Name cannot be blank.')]);
    assert422(await create({ Name: `${' '.repeat(60)}abcde` }), [fieldError('Name', 'Name should contain at most 64 characters.')]);
    const key = (await create({ Name: 'k' })).json<KeyReply>();
    const update = await call(ctx.app, {
      method: 'PATCH',
      path: '/v1/keys/update',
      token: demo.token,
      query: `id=${key.Id}`,
      body: { Name: ' k ' },
    });
    assert.equal(update.json<KeyReply>().Name, ' k ');
    assert422(
      await call(ctx.app, { method: 'PATCH', path: '/v1/keys/update', token: demo.token, query: `id=${key.Id}`, body: { Name: '  ' } }),
      [fieldError('Name', 'Name cannot be blank.')],
    );
  },
);

storeTest('users/create: Role null, "" or [] is the default (member); a sub-account\'s first person: owner', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  let i = 0;
  for (const role of [null, '', []]) {
    const res = await call(ctx.app, {
      method: 'POST',
      path: '/v1/users/create',
      token: demo.token,
      body: { Email: `p${i++}@example.com`, Role: role },
    });
    assert.equal(res.statusCode, 201, `${JSON.stringify(role)}: ${res.body}`);
    assert.equal(res.json<UserReply>().Role, 'member', JSON.stringify(role));
  }
  const child = (await call(ctx.app, { method: 'POST', path: '/v1/subaccounts/create', token: demo.token, body: { Name: 'C' } })).json<{
    Id: number;
  }>();
  const first = await call(ctx.app, {
    method: 'POST',
    path: '/v1/subaccounts/users',
    token: demo.token,
    query: `id=${child.Id}`,
    body: { Email: 'boss@example.com', Role: null },
  });
  assert.equal(first.statusCode, 201, first.body);
  assert.equal(first.json<UserReply>().Role, 'owner');
});

storeTest('/console/api: a 404 carries Cache-Control: no-store too', async (t) => {
  const ctx = await buildTestApp(t);
  for (const [method, url] of [
    ['PUT', '/console/api/session'],
    ['GET', '/console/api/nothing'],
  ] as const) {
    const res = await ctx.app.inject({ method, url, headers: { accept: 'application/json' } });
    assert.equal(res.statusCode, 404, `${method} ${url}`);
    assert.equal(res.headers['cache-control'], 'no-store', `${method} ${url}`);
  }
  // The public API's 404 is not the console's: no such header there.
  assert.equal((await ctx.app.inject({ url: '/v1/nothing/index' })).headers['cache-control'], undefined);
});
