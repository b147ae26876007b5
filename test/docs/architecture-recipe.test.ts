/**
 * docs/guides/adding-a-resource.md (the recipe of docs/ARCHITECTURE.md "Adding a resource"), kept honest: the recipe's files (code blocks headed
 * with their path) and its registry lines (code blocks headed with a path and where they go) are
 * applied to a copy of src/ in a temporary folder, exactly as the page shows them. The copy must
 * type-check, migrate a fresh database on every store (SQLite, PostgreSQL), serve create / list / view / update / delete of the
 * throwaway resource `widgets` in JSON and XML, and show the Widget record and the /v1/widgets/…
 * paths in its OpenAPI document, and keep the layer rules (.dependency-cruiser.cjs); and the recipe
 * may touch no existing file but the two registries.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type * as App from '../../src/app.ts';
import type * as Config from '../../src/config.ts';
import type * as Accounts from '../../src/domain/accounts.ts';
import type * as Db from '../../src/store/db.ts';
import { testDatabaseUrl } from '../helpers/app.ts';
import { storeTest } from '../helpers/stores.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DOC = readFileSync(join(ROOT, 'docs/guides/adding-a-resource.md'), 'utf8');

/** The files the recipe registers the resource in (docs/ARCHITECTURE.md, "What is listed, and why"). */
const REGISTRIES = ['src/store/tables.ts', 'src/http/routes/index.ts'];

interface Block {
  path: string;
  /** Where an insertion into an existing file goes; undefined for a new file. */
  where: string | undefined;
  code: string;
}

/** The code blocks of the "Adding a resource" section, each under its `#### \`path\`[, where]` heading. */
function recipeBlocks(): Block[] {
  const start = DOC.indexOf('\n## Adding a resource\n');
  assert.ok(start >= 0, 'docs/guides/adding-a-resource.md has a section "Adding a resource"');
  const next = DOC.indexOf('\n## ', start + 1);
  const section = DOC.slice(start, next === -1 ? undefined : next);
  const blocks: Block[] = [];
  for (const m of section.matchAll(/^#### `([^`]+)`(?:, (.+))?\n(?:(?!####|```)[^\n]*\n)*```ts\n([\s\S]*?)^```$/gm)) {
    blocks.push({ path: m[1]!, where: m[2], code: m[3]! });
  }
  assert.equal(blocks.length, (section.match(/^#### /gm) ?? []).length, 'every #### heading of the recipe is followed by its code block');
  return blocks;
}

/** `text` with `code` inserted where `where` says (the phrases the recipe uses). */
function insert(text: string, where: string, code: string): string {
  const lines = text.split('\n');
  const body = code.replace(/\n$/, '').split('\n');
  if (where === 'at the end of the file') return `${text.replace(/\n*$/, '')}\n\n${body.join('\n')}\n`;
  if (where === 'after the last import') {
    const last = lines.findLastIndex((l) => l.startsWith('import '));
    assert.ok(last >= 0, 'the file has an import');
    lines.splice(last + 1, 0, ...body);
    return lines.join('\n');
  }
  const inside = /^at the end of `(.+)`$/.exec(where);
  assert.ok(inside, `a known place: ${where}`);
  const open = lines.filter((l) => l.startsWith(inside[1]!));
  assert.equal(open.length, 1, `one line starts with ${inside[1]}`);
  const from = lines.indexOf(open[0]!);
  const close = lines.findIndex((l, i) => i > from && /^\}/.test(l));
  assert.ok(close > from, `${inside[1]} is closed`);
  lines.splice(close, 0, ...body);
  return lines.join('\n');
}

/** Every file below `dir`, relative to it, with its bytes. */
function snapshot(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files.set(relative(dir, path), readFileSync(path));
  }
  return files;
}

/** Runs a tool of node_modules in `cwd`; resolves when it exits 0, rejects with its output otherwise. */
function run(name: string, script: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [join(ROOT, 'node_modules', script), ...args], { cwd, maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${name} over the copy failed:\n${stdout}${stderr}`)) : resolve(),
    );
  });
}

/**
 * The copy of src/ with the recipe applied, made once for the file (the structure test and each
 * store's case use it), with the type check and the layer rules started over it. Removed after the
 * file's tests.
 */
const recipeCopy = (() => {
  let made: { dir: string; checks: Promise<void> } | undefined;
  after(() => made && rmSync(made.dir, { recursive: true, force: true }));
  return () => (made ??= copyWithRecipe());
})();

function copyWithRecipe(): { dir: string; checks: Promise<void> } {
  const blocks = recipeBlocks();
  const created = blocks.filter((b) => b.where === undefined);
  const insertions = blocks.filter((b) => b.where !== undefined);
  assert.ok(created.length >= 6, 'the recipe has its files');
  // The registry lines: at most two, each in a registry file (a table's type or an import goes with its line).
  const registryFiles = [...new Set(insertions.map((b) => b.path))];
  assert.deepEqual(registryFiles.sort(), [...REGISTRIES].sort());
  const lines = insertions.filter((b) => b.code.trim().split('\n').length === 1 && !b.code.trimStart().startsWith('import '));
  assert.ok(lines.length <= 2, 'at most two registry lines');

  // The copy: src/, and what it needs to run and type-check from a folder of its own.
  const dir = mkdtempSync(join(tmpdir(), 'msgsvc-recipe-'));
  const original = snapshot(join(ROOT, 'src'));
  for (const [path, bytes] of original) {
    mkdirSync(dirname(join(dir, 'src', path)), { recursive: true });
    writeFileSync(join(dir, 'src', path), bytes);
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  writeFileSync(join(dir, 'package.json'), readFileSync(join(ROOT, 'package.json')));
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ extends: join(ROOT, 'tsconfig.json'), include: ['src'] }));

  // The recipe, applied as the page states it.
  for (const b of created) {
    assert.ok(b.path.startsWith('src/'), `${b.path} is a source file`);
    assert.ok(!original.has(b.path.slice(4)), `${b.path} is a new file, not an edit of an existing one`);
    mkdirSync(dirname(join(dir, b.path)), { recursive: true });
    writeFileSync(join(dir, b.path), b.code);
  }
  for (const b of insertions) writeFileSync(join(dir, b.path), insert(readFileSync(join(dir, b.path), 'utf8'), b.where!, b.code));

  // Nothing else changed: every other file of the copy is the original's, byte for byte.
  const copy = snapshot(join(dir, 'src'));
  const changed = [...original].filter(([path, bytes]) => !copy.get(path)?.equals(bytes)).map(([path]) => `src/${path}`);
  assert.deepEqual(changed.sort(), [...REGISTRIES].sort());
  const added = [...copy.keys()].filter((path) => !original.has(path)).map((path) => `src/${path}`);
  assert.deepEqual(added.sort(), created.map((b) => b.path).sort());

  // The type check and the layer rules run beside the HTTP checks (they are the slow part).
  const checks = Promise.all([
    run('tsc', 'typescript/bin/tsc', ['-p', join(dir, 'tsconfig.json')], dir),
    run(
      'depcruise',
      'dependency-cruiser/bin/dependency-cruise.mjs',
      ['src', '--config', join(ROOT, '.dependency-cruiser.cjs'), '--output-type', 'err'],
      dir,
    ),
  ]);
  const done = checks.then(() => undefined);
  done.catch(() => {}); // awaited by the structure test; never an unhandled rejection when it is filtered out
  return { dir, checks: done };
}

test('the recipe "Adding a resource" of docs/ARCHITECTURE.md touches only its own files and two registries, type-checks and keeps the layers', async () => {
  await recipeCopy().checks;
});

storeTest('the recipe "Adding a resource" of docs/ARCHITECTURE.md serves a working resource', async (t) => {
  const { dir } = recipeCopy();
  const dataDir = mkdtempSync(join(tmpdir(), 'msgsvc-recipe-data-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));

  const load = async <T>(path: string) => (await import(pathToFileURL(join(dir, 'src', path)).href)) as T;
  const { loadConfig } = await load<typeof Config>('config.ts');
  const { openStore, migrateToLatest } = await load<typeof Db>('store/db.ts');
  const { buildApp } = await load<typeof App>('app.ts');
  const { createAccount, issueToken } = await load<typeof Accounts>('domain/accounts.ts');

  const config = loadConfig({
    DATABASE_URL: await testDatabaseUrl(dataDir),
    MSGSVC_DEMO: '0',
    LOG_LEVEL: 'silent',
    MSGSVC_RATE_LIMIT: '100000',
  });
  const store = openStore(config.database);
  t.after(() => store.close());
  const applied = await migrateToLatest(store);
  assert.ok(applied.includes('900_widgets'), 'the new migration is found in its folder');
  assert.deepEqual(applied, [...applied].sort(), 'migrations run in file-name order');
  assert.ok(applied.includes('001_initial') && applied.includes('010_webhooks'));
  const app: FastifyInstance = buildApp(config, { store });
  t.after(() => app.close());
  await app.ready();
  const { token } = await issueToken(store, await createAccount(store, 'Recipe'));
  const { token: other } = await issueToken(store, await createAccount(store, 'Other'));
  const call = (
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    path: string,
    options: { token?: string; json?: unknown; form?: string; xml?: boolean } = {},
  ) => {
    const sep = path.includes('?') ? '&' : '?';
    const headers: Record<string, string> = { Accept: options.xml ? 'application/xml' : 'application/json' };
    let payload: string | undefined;
    if (options.json !== undefined) [headers['Content-Type'], payload] = ['application/json', JSON.stringify(options.json)];
    if (options.form !== undefined) [headers['Content-Type'], payload] = ['application/x-www-form-urlencoded', options.form];
    return app.inject({
      method,
      url: `${path}${sep}access_token=${options.token ?? token}`,
      headers,
      ...(payload !== undefined ? { payload } : {}),
    });
  };
  const XML = '<?xml version="1.0" encoding="UTF-8"?>\n';

  // create: 201, the record, Location to its view; the domain's rules give the 422 list.
  const created1 = await call('POST', '/v1/widgets/create', { json: { Name: 'First widget', Note: 'blue' } });
  assert.equal(created1.statusCode, 201, created1.body);
  const first = created1.json<Record<string, unknown>>();
  assert.deepEqual(Object.keys(first), ['Id', 'Name', 'Note', 'DateCreated', 'DateUpdated']);
  assert.equal(first.Name, 'First widget');
  assert.equal(created1.headers.location, `http://localhost:80/v1/widgets/view?id=${String(first.Id)}`);
  const invalid = await call('POST', '/v1/widgets/create', { json: { Name: '', Note: 'x'.repeat(256) } });
  assert.equal(invalid.statusCode, 422);
  assert.deepEqual(invalid.json(), [
    { field: 'Name', message: 'Name cannot be blank.' },
    { field: 'Note', message: 'Note should contain at most 255 characters.' },
  ]);
  const created2 = await call('POST', '/v1/widgets/create', { form: 'Name=Second+widget', xml: true });
  assert.equal(created2.statusCode, 201);
  assert.match(
    created2.body,
    /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<response><Id>\d+<\/Id><Name>Second widget<\/Name><Note><\/Note><DateCreated>/,
  );

  // list: JSON and XML, paginated.
  const list = await call('GET', '/v1/widgets/index');
  assert.equal(list.statusCode, 200);
  assert.equal(list.headers['x-pagination-total-count'], '2');
  assert.deepEqual(
    list.json<{ Name: string }[]>().map((w) => w.Name),
    ['First widget', 'Second widget'],
  );
  const listXml = await call('GET', '/v1/widgets/index?per-page=1', { xml: true });
  assert.equal(listXml.headers['content-type'], 'application/xml; charset=UTF-8');
  assert.match(
    listXml.body,
    /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<response><item><Id>\d+<\/Id><Name>First widget<\/Name><Note>blue<\/Note><DateCreated>[^<]+<\/DateCreated><DateUpdated>[^<]+<\/DateUpdated><\/item><\/response>\n$/,
  );

  // view: the record in either format; another account's widget is not found.
  const view = await call('GET', `/v1/widgets/view?id=${String(first.Id)}`);
  assert.deepEqual(view.json(), first);
  const viewXml = await call('GET', `/v1/widgets/view?id=${String(first.Id)}&fields=Id,Name`, { xml: true });
  assert.equal(viewXml.body, `${XML}<response><Id>${String(first.Id)}</Id><Name>First widget</Name></response>\n`);
  const foreign = await call('GET', `/v1/widgets/view?id=${String(first.Id)}`, { token: other });
  assert.equal(foreign.statusCode, 404);
  assert.deepEqual(foreign.json(), { name: 'Not Found', message: `Object not found: ${String(first.Id)}`, code: 0, status: 404 });

  // update: PUT in XML with a form body, PATCH in JSON; only the fields sent change.
  const put = await call('PUT', `/v1/widgets/update?id=${String(first.Id)}`, { form: 'Name=Renamed', xml: true });
  assert.equal(put.statusCode, 200, put.body);
  assert.match(put.body, /<Name>Renamed<\/Name><Note>blue<\/Note>/);
  const patch = await call('PATCH', `/v1/widgets/update?id=${String(first.Id)}`, { json: { Note: 'green' } });
  assert.equal(patch.statusCode, 200);
  assert.deepEqual([patch.json<{ Name: string }>().Name, patch.json<{ Note: string }>().Note], ['Renamed', 'green']);
  const badUpdate = await call('PUT', `/v1/widgets/update?id=${String(first.Id)}`, { json: { Name: 'ab' }, xml: true });
  assert.equal(badUpdate.statusCode, 422);
  assert.equal(
    badUpdate.body,
    `${XML}<response><item><field>Name</field><message>Name should contain at least 3 characters.</message></item></response>\n`,
  );

  // delete: 204, then 404 in the negotiated format.
  const removed = await call('DELETE', `/v1/widgets/delete?id=${String(first.Id)}`);
  assert.equal(removed.statusCode, 204);
  assert.equal(removed.body, '');
  const gone = await call('GET', `/v1/widgets/view?id=${String(first.Id)}`, { xml: true });
  assert.equal(gone.statusCode, 404);
  assert.equal(
    gone.body,
    `${XML}<response><name>Not Found</name><message>Object not found: ${String(first.Id)}</message><code>0</code><status>404</status></response>\n`,
  );
  assert.equal((await call('GET', '/v1/widgets/index')).headers['x-pagination-total-count'], '1');

  // The OpenAPI document of the copy: the Widget record (found in src/records/widgets.ts) and the paths.
  const openapi = (await app.inject({ method: 'GET', url: '/openapi.json' })).json<{
    paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>>;
    components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    tags: { name: string }[];
  }>();
  assert.deepEqual(Object.keys(openapi.components.schemas.Widget?.properties ?? {}), ['Id', 'Name', 'Note', 'DateCreated', 'DateUpdated']);
  assert.ok(openapi.components.schemas.WidgetBody, 'the create body is a component');
  for (const action of ['create', 'index', 'view', 'update', 'delete'])
    assert.ok(openapi.paths[`/v1/widgets/${action}`], `/v1/widgets/${action}`);
  assert.deepEqual(openapi.paths['/v1/widgets/view']!.get!.responses['200']!.content!['application/json']!.schema, {
    $ref: '#/components/schemas/Widget',
  });
  assert.equal(openapi.tags.at(-2)?.name, 'widgets', 'the new controller comes last, before the probes');
});
