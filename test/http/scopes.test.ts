/**
 * Scopes are complete (API.md §15.1): every registered /v1 operation has a scope, `{resource}:read`
 * for GET and `{resource}:write` otherwise; the OpenAPI document names it (`x-scope`); and for
 * every operation a key without its scope gets the 403, while a key with it does not. The 403
 * comes after the rate limit and before any 400 (API.md §1.5, §15.2).
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { buildTestApp } from '../helpers/app.ts';
import { assertError } from '../helpers/operations.ts';
import { storeTest } from '../helpers/stores.ts';
import { OPERATIONS, operationsFor } from '../../src/http/routes/index.ts';
import { buildOpenApi } from '../../src/http/openapi.ts';
import { CONTROLLERS } from '../../src/http/routes/index.ts';
import { ALL_SCOPES, grants, RESOURCES, roleScopes, type Scope } from '../../src/domain/scopes.ts';
import { loadConfig } from '../../src/config.ts';
import { keyWith } from '../helpers/keys.ts';

const FORBIDDEN = 'You are not allowed to perform this action.';

test('every operation has a scope: {resource}:read for GET alone, {resource}:write otherwise, of a known resource', () => {
  assert.ok(OPERATIONS.length > 60);
  for (const op of OPERATIONS) {
    assert.ok((RESOURCES as readonly string[]).includes(op.resource), `${op.id}: resource ${op.resource}`);
    const reads = op.methods.every((m) => m === 'GET');
    assert.equal(op.scope, `${op.resource}:${reads ? 'read' : 'write'}`, op.id);
  }
  // The resources the rules name for the existing controllers.
  const byId = new Map(OPERATIONS.map((op) => [op.id, op.scope]));
  assert.equal(byId.get('keyword.reserve'), 'sms:write');
  assert.equal(byId.get('custom-contact-fields-entry.update'), 'fields:write');
  assert.equal(byId.get('mms-templates.create'), 'media:write');
  assert.equal(byId.get('credits.balance'), 'credits:read');
  assert.equal(byId.get('audit.index'), 'audit:read');
});

test('the OpenAPI document names each /v1 operation scope (x-scope) and the 403 answer', () => {
  const config = loadConfig({ DATABASE_URL: ':memory:', MSGSVC_DEMO: '0', MSGSVC_CARRIER: 'sandbox' });
  const ops = operationsFor(config);
  const doc = buildOpenApi(ops, { version: '0', controllers: CONTROLLERS }) as {
    paths: Record<string, Record<string, Record<string, unknown>>>;
  };
  for (const op of ops) {
    for (const method of op.methods) {
      const item = doc.paths[op.path]![method.toLowerCase()]!;
      assert.equal(item['x-scope'], op.scope, `${op.id} ${method}`);
      assert.ok((item.responses as Record<string, unknown>)['403'], `${op.id} ${method}: a 403 response`);
    }
  }
});

test('roles map to scopes as API.md §15.3 says', () => {
  const viewer = roleScopes('viewer');
  const member = roleScopes('member');
  for (const r of RESOURCES) {
    const read = `${r}:read` as Scope;
    const write = `${r}:write` as Scope;
    const hidden = r === 'keys' || r === 'users' || r === 'audit';
    assert.equal(grants(viewer, read), !hidden, `viewer ${read}`);
    assert.equal(grants(viewer, write), false, `viewer ${write}`);
    assert.equal(grants(member, read), !hidden, `member ${read}`);
    assert.equal(grants(member, write), ['sms', 'contacts', 'groups', 'fields', 'keywords', 'media'].includes(r), `member ${write}`);
    for (const role of ['admin', 'owner']) assert.equal(grants(roleScopes(role), write), true);
  }
  assert.deepEqual(roleScopes('nobody'), []);
  assert.equal(ALL_SCOPES.length, 1 + RESOURCES.length * 2);
});

storeTest('for every operation: a key without its scope gets the 403 (before any 400), a key with it does not', async (t) => {
  const ctx = await buildTestApp(t, { MSGSVC_CARRIER: 'sandbox' });
  const demo = await ctx.seed();
  const ops = operationsFor(ctx.config);
  // One key per scope, and for each scope one key holding every other write (which grants it not).
  const holders = new Map<string, string>();
  const lackers = new Map<string, string>();
  for (const op of ops) {
    if (!holders.has(op.scope)) {
      holders.set(op.scope, await keyWith(ctx, demo.account.id, [op.scope]));
      const others = RESOURCES.filter((r) => r !== op.resource).map((r) => `${r}:write`);
      // A read operation is also refused to a key holding only other reads, and a write one to a key holding its read.
      if (op.scope.endsWith(':write')) others.push(`${op.resource}:read`);
      lackers.set(op.scope, await keyWith(ctx, demo.account.id, others));
    }
  }
  for (const op of ops) {
    const method = op.methods[0]!;
    const body = method === 'GET' || method === 'DELETE' ? {} : { payload: '{}', headers: { 'content-type': 'application/json' } };
    const send = (token: string) =>
      ctx.app.inject({
        method,
        // id=abc: a 400 with the scope, so the 403 is seen to come first.
        url: `${op.path}?id=abc&access_token=${encodeURIComponent(token)}`,
        ...body,
        headers: { accept: 'application/json', ...(body.headers ?? {}) },
      });
    const refused = await send(lackers.get(op.scope)!);
    assertError(refused, 403, FORBIDDEN);
    assert.ok(refused.headers['x-rate-limit-limit'], `${op.id}: the rate limit counted the request first`);
    const allowed = await send(holders.get(op.scope)!);
    assert.notEqual(allowed.statusCode, 403, `${op.id} with ${op.scope}: ${allowed.body}`);
    assert.notEqual(allowed.statusCode, 401, op.id);
    assert.ok(allowed.statusCode < 500, `${op.id}: ${allowed.statusCode} ${allowed.body}`);
  }
});

storeTest('order of checks: 401 before 429 before 403', async (t) => {
  const ctx = await buildTestApp(t, { MSGSVC_RATE_LIMIT: '2', MSGSVC_RATE_WINDOW: '60' });
  const demo = await ctx.seed();
  const reader = await keyWith(ctx, demo.account.id, ['credits:read']);
  const groups = (token: string) =>
    ctx.app.inject({ method: 'GET', url: `/v1/groups/index?access_token=${token}`, headers: { accept: 'application/json' } });
  assertError(await groups(reader), 403, FORBIDDEN);
  assertError(await groups(reader), 403, FORBIDDEN);
  assertError(await groups(reader), 429, 'Rate limit exceeded.');
  assertError(await groups('unknown'), 401, 'Your request was made with invalid credentials.');
});
