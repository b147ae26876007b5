/**
 * The operator's registry and its document (docs/API.md §16.4): docs/openapi-admin.json is what
 * `npm run openapi` writes; every operator operation is under /admin/v1 with scope admin:read or
 * admin:write, which no account key can hold; the public registry and docs/openapi.json hold no
 * operator operation; app.ts refuses to start with an operation in the wrong registry.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { adminOpenApiText } from '../../../scripts/openapi.ts';
import { ADMIN_CONTROLLERS, ADMIN_OPERATIONS, checkRegistries } from '../../../src/http/admin/index.ts';
import { OPERATIONS } from '../../../src/http/routes/index.ts';
import { ALL_SCOPES, grants, roleScopes } from '../../../src/domain/scopes.ts';

test('docs/openapi-admin.json is current (npm run openapi)', () => {
  const file = readFileSync(new URL('../../../docs/openapi-admin.json', import.meta.url), 'utf8');
  assert.equal(file, adminOpenApiText(), 'run `npm run openapi`');
  const doc = JSON.parse(file) as { paths: Record<string, Record<string, { 'x-scope': string; operationId: string }>>; security: unknown };
  assert.deepEqual(Object.keys(doc.paths), [...new Set(ADMIN_OPERATIONS.map((op) => op.path))]);
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      assert.match(op['x-scope'], /^admin:(read|write)$/, `${method} ${path}`);
      assert.match(op.operationId, /^admin\./);
    }
  }
  assert.deepEqual(doc.security, [{ access_token: [] }, { bearer: [] }]);
  const publicDoc = readFileSync(new URL('../../../docs/openapi.json', import.meta.url), 'utf8');
  assert.ok(!publicDoc.includes('/admin/'), 'the public document holds no operator operation');
});

test('the registries never mix; admin scopes are no scope an account key or role can hold', () => {
  assert.deepEqual(Object.keys(ADMIN_CONTROLLERS), ['accounts', 'numbers', 'usage', 'carriers', 'audit']);
  for (const op of ADMIN_OPERATIONS) {
    assert.ok(op.path.startsWith('/admin/v1/'), op.path);
    assert.match(String(op.scope), /^admin:(read|write)$/, op.id);
    assert.ok(!ALL_SCOPES.includes(op.scope), 'not a scope keys/create accepts');
    for (const role of ['viewer', 'member']) assert.equal(grants(roleScopes(role), op.scope), false);
  }
  assert.ok(!OPERATIONS.some((op) => op.path.startsWith('/admin/')));
  assert.doesNotThrow(() => checkRegistries(OPERATIONS, ADMIN_OPERATIONS));
  assert.throws(() => checkRegistries([...OPERATIONS, ADMIN_OPERATIONS[0]!], ADMIN_OPERATIONS), /in the \/v1 registry/);
  assert.throws(() => checkRegistries(OPERATIONS, [...ADMIN_OPERATIONS, OPERATIONS[0]!]), /without the admin marker/);
});
