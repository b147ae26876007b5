/**
 * The audit log (API.md §15.5) on each store: one entry for every authenticated request that is
 * not GET or HEAD, whatever its status (a refusal by scope or rate limit included), and for every
 * sign-in, failed sign-in of an email that exists, and sign-out; the fields of an entry
 * (Actor, Ip, Operation as the operationId, ObjectId, Status, RequestId); newest first; the
 * filters; `audit:read`; no secret, password or message text in any entry; the retention.
 */
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { assert422, call, fieldError } from '../helpers/operations.ts';
import { storeTest } from '../helpers/stores.ts';
import { until } from '../helpers/wait.ts';
import { createManualClock } from '../../src/lib/time.ts';
import { purgeExpired } from '../../src/domain/housekeeping.ts';

interface Entry {
  Id: number;
  DateCreated: string;
  Actor: string;
  Ip: string;
  Operation: string;
  ObjectId: string;
  Status: number;
  RequestId: string;
}

async function entries(ctx: TestApp, token: string, query = ''): Promise<Entry[]> {
  const res = await call(ctx.app, { path: '/v1/audit/index', token, query });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<Entry[]>();
}

storeTest('every write has its entry, refused ones too; reads and unknown tokens have none', async (t) => {
  const ctx = await buildTestApp(t, { MSGSVC_RATE_LIMIT: '40', MSGSVC_RATE_WINDOW: '60' });
  const demo = await ctx.seed();
  const keyId = (await call(ctx.app, { path: '/v1/keys/index', token: demo.token })).json<{ Id: number }[]>()[0]!.Id;
  const actor = `key:${keyId}:default`;
  assert.deepEqual(await entries(ctx, demo.token), [], 'reads write nothing');
  const created = await ctx.app.inject({
    method: 'POST',
    url: `/v1/contacts/create?access_token=${demo.token}`,
    payload: { Number: '+15557770001', FirstName: 'Audit' },
    headers: { 'x-request-id': 'req-create-1' },
  });
  assert.equal(created.statusCode, 201, created.body);
  const contactId = created.json<{ Id: number }>().Id;
  const patched = await call(ctx.app, {
    method: 'PATCH',
    path: '/v1/contacts/update',
    token: demo.token,
    query: `id=${contactId}`,
    body: { City: 'Oslo' },
  });
  assert.equal(patched.statusCode, 200);
  assert422(await call(ctx.app, { method: 'POST', path: '/v1/contacts/create', token: demo.token, body: {} }), [
    fieldError('Number', 'Number cannot be blank.'),
  ]);
  assert.equal(
    (await call(ctx.app, { method: 'DELETE', path: '/v1/contacts/delete', token: demo.token, query: 'id=999999' })).statusCode,
    404,
  );
  assert.equal(
    (await call(ctx.app, { method: 'DELETE', path: '/v1/contacts/delete', token: demo.token, query: `id=${contactId}` })).statusCode,
    204,
  );
  assert.equal((await call(ctx.app, { method: 'POST', path: '/v1/contacts/create', token: 'unknown', body: {} })).statusCode, 401);
  const reader = (
    await call(ctx.app, { method: 'POST', path: '/v1/keys/create', token: demo.token, body: { Name: 'ro', Scopes: ['contacts:read'] } })
  ).json<{
    Id: number;
    Secret: string;
  }>();
  assert.equal(
    (await call(ctx.app, { method: 'POST', path: '/v1/groups/create', token: reader.Secret, body: { fname: 'Nope' } })).statusCode,
    403,
  );

  // A refusal's entry is written after its response (the 403 may not be there yet, and the 422's
  // may land after the next write's): compared in any order, once all seven are there.
  const log = await until('seven entries', async () => {
    const all = await entries(ctx, demo.token);
    return all.length >= 7 ? all : undefined;
  });
  const sorted = (rows: unknown[][]) => rows.map((r) => JSON.stringify(r)).sort();
  assert.deepEqual(
    sorted(log.map((e) => [e.Actor, e.Operation, e.ObjectId, e.Status])),
    sorted([
      [`key:${reader.Id}:ro`, 'groups.create', '', 403],
      [actor, 'keys.create', String(reader.Id), 201],
      [actor, 'contacts.delete', String(contactId), 204],
      [actor, 'contacts.delete', '999999', 404],
      [actor, 'contacts.create', '', 422],
      [actor, 'contacts.update.patch', String(contactId), 200],
      [actor, 'contacts.create', String(contactId), 201],
    ]),
  );
  const first = log.at(-1)!;
  assert.equal(first.RequestId, 'req-create-1');
  assert.equal(first.Ip, '127.0.0.1');
  assert.match(first.DateCreated, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
  assert.deepEqual(Object.keys(first), ['Id', 'DateCreated', 'Actor', 'Ip', 'Operation', 'ObjectId', 'Status', 'RequestId']);
  assert.ok(
    log.every((e, i) => i === 0 || log[i - 1]!.Id > e.Id),
    'newest first',
  );
  // A request refused by the rate limit after authentication has its entry too.
  let limited = 0;
  for (let i = 0; i < 40 && limited === 0; i++) {
    const r = await call(ctx.app, { method: 'POST', path: '/v1/groups/create', token: reader.Secret, body: { fname: 'Nope' } });
    if (r.statusCode === 429) limited++;
  }
  assert.equal(limited, 1);
  // A refusal's entry is written after its response: wait (bounded) for it.
  await until('the 429 logged', async () => {
    const statuses = (await ctx.store.db.selectFrom('audit_log').select('status').execute()).map((r) => Number(r.status));
    return statuses.includes(429) || undefined;
  });
});

storeTest('audit/index: filters Actor, Operation, from, to; pagination; 422 for a bad time; audit:read needed; sealed', async (t) => {
  const clock = createManualClock(Date.UTC(2030, 2, 1, 10, 0, 0));
  const ctx = await buildTestApp(t, {}, { clock });
  const a = await ctx.seed('A');
  const b = await ctx.seed('B');
  for (let i = 0; i < 3; i++) {
    await call(ctx.app, { method: 'POST', path: '/v1/groups/create', token: a.token, body: { fname: `Group ${i}` } });
    clock.advance(3600_000);
  }
  await call(ctx.app, { method: 'POST', path: '/v1/keys/create', token: a.token, body: { Name: 'k' } });
  const all = await entries(ctx, a.token);
  assert.equal(all.length, 4);
  assert.equal((await entries(ctx, a.token, 'Operation=groups.create')).length, 3);
  assert.equal((await entries(ctx, a.token, 'Operation=keys.create')).length, 1);
  assert.equal((await entries(ctx, a.token, `Actor=${encodeURIComponent(all[0]!.Actor)}`)).length, 4);
  assert.equal((await entries(ctx, a.token, 'Actor=key:0:nobody')).length, 0);
  assert.equal((await entries(ctx, a.token, `from=${encodeURIComponent('2030-03-01 11:00:00')}`)).length, 3);
  assert.equal((await entries(ctx, a.token, `to=${encodeURIComponent('2030-03-01 10:59:59')}`)).length, 1);
  assert.equal((await entries(ctx, a.token, 'from=2030-03-01&to=2030-03-01')).length, 4);
  const page = await call(ctx.app, { path: '/v1/audit/index', token: a.token, query: 'per-page=2&page=2' });
  assert.equal(page.headers['x-pagination-total-count'], '4');
  assert.deepEqual(
    page.json<Entry[]>().map((e) => e.Id),
    all.slice(2, 4).map((e) => e.Id),
  );
  assert422(await call(ctx.app, { path: '/v1/audit/index', token: a.token, query: 'from=yesterday' }), [
    fieldError('from', 'The format of From is invalid.'),
  ]);
  const xml = await call(ctx.app, { path: '/v1/audit/index', token: a.token, wire: 'xml', query: 'per-page=1' });
  assert.match(xml.body, /<response><item><Id>\d+<\/Id><DateCreated>2030-03-01 13:00:00<\/DateCreated><Actor>key:\d+:default<\/Actor>/);
  assert.deepEqual(await entries(ctx, b.token), [], "another account's entries are never shown");
  const groupsOnly = (
    await call(ctx.app, { method: 'POST', path: '/v1/keys/create', token: a.token, body: { Name: 'g', Scopes: ['groups:write'] } })
  ).json<{
    Secret: string;
  }>();
  assert.equal((await call(ctx.app, { path: '/v1/audit/index', token: groupsOnly.Secret })).statusCode, 403);
});

storeTest('sign-in, a failed sign-in of a known email, the lockout and sign-out have entries; an unknown email has none', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const invite = (
    await call(ctx.app, { method: 'POST', path: '/v1/users/create', token: demo.token, body: { Email: 'aud@example.com', Role: 'viewer' } })
  ).json<{
    Id: number;
    InviteUrl: string;
  }>();
  const post = (url: string, body: unknown, cookie?: string) =>
    ctx.app.inject({
      method: url === 'DELETE' ? 'DELETE' : 'POST',
      url,
      payload: body as object,
      headers: { ...(cookie ? { cookie } : {}) },
    });
  const taken = await post('/console/api/invite', { Code: invite.InviteUrl.split('#/invite/')[1], Password: 'a long enough passphrase' });
  assert.equal(taken.statusCode, 204);
  assert.equal((await post('/console/api/session', { Email: 'aud@example.com', Password: 'a wrong passphrase!' })).statusCode, 422);
  assert.equal((await post('/console/api/session', { Email: 'stranger@example.com', Password: 'a wrong passphrase!' })).statusCode, 422);
  const signedIn = await post('/console/api/session', { Email: 'aud@example.com', Password: 'a long enough passphrase' });
  const cookie = String(signedIn.headers['set-cookie']).split(';')[0]!;
  assert.equal((await ctx.app.inject({ method: 'DELETE', url: '/console/api/session', headers: { cookie } })).statusCode, 204);
  const log = await entries(ctx, demo.token, 'Operation=session.create');
  const actor = `user:${invite.Id}:aud@example.com`;
  assert.deepEqual(
    log.map((e) => [e.Actor, e.Status]),
    [
      [actor, 204],
      [actor, 422],
      [actor, 204],
    ],
  );
  const out = await entries(ctx, demo.token, 'Operation=session.delete');
  assert.deepEqual(
    out.map((e) => [e.Actor, e.Status]),
    [[actor, 204]],
  );
  const all = await ctx.store.db.selectFrom('audit_log').selectAll().execute();
  assert.ok(!JSON.stringify(all).includes('stranger'), 'an unknown email leaves no trace in any account');
});

storeTest('no entry holds a secret, a password, an invite code or a message text', async (t) => {
  const ctx = await buildTestApp(t, { MSGSVC_CARRIER: 'sandbox' });
  const demo = await ctx.seed();
  const key = (await call(ctx.app, { method: 'POST', path: '/v1/keys/create', token: demo.token, body: { Name: 'k' } })).json<{
    Id: number;
    Secret: string;
  }>();
  const rolled = (await call(ctx.app, { method: 'POST', path: '/v1/keys/roll', token: demo.token, query: `id=${key.Id}`, body: {} })).json<{
    Secret: string;
  }>();
  const user = (
    await call(ctx.app, { method: 'POST', path: '/v1/users/create', token: demo.token, body: { Email: 's@example.com' } })
  ).json<{ InviteUrl: string }>();
  const code = user.InviteUrl.split('#/invite/')[1]!;
  const password = 'my very secret passphrase';
  await ctx.app.inject({ method: 'POST', url: '/console/api/invite', payload: { Code: code, Password: password } });
  const text = 'the text of a private message 9QX';
  const sent = await call(ctx.app, {
    method: 'POST',
    path: '/v1/sms/send',
    token: rolled.Secret,
    body: { MobilePhone: '15550001234', Message: text },
  });
  assert.equal(sent.statusCode, 201, sent.body);
  const dump = JSON.stringify(await ctx.store.db.selectFrom('audit_log').selectAll().execute());
  for (const secret of [demo.token, key.Secret, rolled.Secret, code, password, text])
    assert.ok(!dump.includes(secret), `no ${secret.slice(0, 6)}… in the log`);
  assert.ok(dump.includes('sms.send') && dump.includes('users.create') && dump.includes('keys.roll'));
});

storeTest('retention: entries older than MSGSVC_AUDIT_DAYS go in the hourly purge, newer ones stay', async (t) => {
  const clock = createManualClock(Date.UTC(2030, 0, 1, 0, 0, 0));
  const ctx = await buildTestApp(t, { MSGSVC_AUDIT_DAYS: '30' }, { clock });
  const demo = await ctx.seed();
  await call(ctx.app, { method: 'POST', path: '/v1/groups/create', token: demo.token, body: { fname: 'Old one' } });
  clock.advance(20 * 86_400_000);
  await call(ctx.app, { method: 'POST', path: '/v1/groups/create', token: demo.token, body: { fname: 'New one' } });
  clock.advance(11 * 86_400_000);
  assert.equal(ctx.config.auditDays, 30);
  assert.equal(await purgeExpired(ctx.store, clock.nowSeconds(), ctx.config.auditDays), 1);
  const left = await entries(ctx, demo.token);
  assert.equal(left.length, 1);
  assert.equal(left[0]!.DateCreated, '2030-01-21 00:00:00');
});
