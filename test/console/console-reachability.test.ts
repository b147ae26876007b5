/**
 * Every operation of the OpenAPI documents that a person would use is reachable from some page of
 * the console: its path is called by a page module that the console's shell routes to. That is
 * docs/openapi.json's for an account's session, and docs/openapi-admin.json's (`/admin/v1/…`,
 * docs/API.md §16.4) for the operator's session, through `api.admin(…)` on the operator's pages.
 * What is left out on purpose is listed below with the reason, and the list is checked too: an
 * entry that the console does call, or that is no operation any more, fails, so the list cannot go
 * stale.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const ROOT = new URL('../../', import.meta.url).pathname;
const CONSOLE = join(ROOT, 'console/src');

/** Operations no page calls, and why. Keys: `METHOD path` as in docs/openapi.json or docs/openapi-admin.json. */
const LEFT_OUT: Readonly<Record<string, string>> = {
  'GET /healthz': 'a probe for the operator and the load balancer, not for a person',
  'GET /readyz': 'a probe for the operator and the load balancer, not for a person',
  'GET /v1/custom-contact-fields/view': "the custom fields page lists every field's whole record; there is nothing more to open",
  'GET /v1/custom-contact-fields-entry/view': "a contact's page lists its entries whole (custom-contact-fields-entry/index by frcontact)",
  'GET /v1/keyword/check': 'reserve answers the same question ("taken") at the moment it matters; a second check would race it',
  'GET /v1/media/view': 'the media list holds every field of each medium, and its picture comes from media/download',
  'GET /v1/keys/view': 'the keys list holds every field of each key',
  'GET /v1/users/view': 'the people list holds every field of each person',
};

/**
 * Every operation of the OpenAPI document `file` as `METHOD path` (HEAD is GET's, and not listed).
 * The writing methods of one path (an update's PUT and PATCH, custom-contact-fields-entry/update's
 * POST too) are one operation, written `PUT|PATCH path`: calling it with any of them reaches it.
 */
function operations(file: string): string[] {
  const doc = JSON.parse(readFileSync(join(ROOT, file), 'utf8')) as { paths: Record<string, Record<string, unknown>> };
  const out: string[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    const methods = Object.keys(item).map((m) => m.toUpperCase());
    if (methods.includes('GET')) out.push(`GET ${path}`);
    if (methods.includes('DELETE')) out.push(`DELETE ${path}`);
    const writes = methods.filter((m) => m === 'POST' || m === 'PUT' || m === 'PATCH');
    if (writes.length > 0) out.push(`${writes.join('|')} ${path}`);
  }
  return out;
}

/** The console's sources that pages are made of: every .ts/.tsx under console/src, one text per file. */
function sources(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [join(dir, e.name)] : [],
    );
  return walk(CONSOLE).map((f) => readFileSync(f, 'utf8'));
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * True when a file of the console calls `methods path` (any of `|`-joined methods): the file holds
 * the path as a string (quoted, or a template's start) and a call with that method (the typed
 * client's `.POST(`, `call('POST', …)`, or the operator's `admin('POST', …)`); for GET also a link
 * or an image to it (`href={`…`, `src={`…`). A path `/v1/x/index` is also called as `/v1/x`, the
 * controller's default action.
 */
function called(files: readonly string[], methods: string, path: string): boolean {
  const paths = path.endsWith('/index') ? [path, path.slice(0, -'/index'.length)] : [path];
  return files.some((src) =>
    paths.some((p) => {
      const named = new RegExp(`['"\`]${escape(p)}['"\`?$]`).test(src);
      if (!named) return false;
      return methods.split('|').some((method) => {
        if (new RegExp(`\\.${method}(?:<[^>]*>)?\\(|(?:call|admin)(?:<[^>]*>)?\\(\\s*'${method}'`).test(src)) return true;
        return method === 'GET' && new RegExp(`(href|src)=\\{\`${escape(p)}`).test(src);
      });
    }),
  );
}

test('console: every operation a person would use is called from a page; the left-out list is exact', () => {
  const src = sources();
  const account = operations('docs/openapi.json');
  const operator = operations('docs/openapi-admin.json');
  assert.ok(account.length > 70, `the OpenAPI document lists ${account.length} operations`);
  assert.ok(operator.length >= 15, `the operator's OpenAPI document lists ${operator.length} operations`);
  assert.ok(
    operator.every((op) => op.split(' ')[1]!.startsWith('/admin/v1/')),
    "the operator's document lists an operation outside /admin/v1",
  );
  const ops = [...account, ...operator];
  const unreachable = ops.filter((op) => {
    const [method = '', path = ''] = op.split(' ');
    return LEFT_OUT[op] === undefined && !called(src, method, path);
  });
  assert.deepEqual(unreachable, [], 'operations no page calls (call them from a page, or list them in LEFT_OUT with the reason)');
  for (const op of Object.keys(LEFT_OUT)) {
    assert.ok(ops.includes(op), `LEFT_OUT lists ${op}, which the OpenAPI document no longer has`);
    const [method = '', path = ''] = op.split(' ');
    assert.ok(!called(src, method, path), `LEFT_OUT lists ${op}, but the console calls it: take it off the list`);
  }
});
