// The contract inside the repository (issue 14): docs/API.md names every registered operation and
// every record field, and the README links only to files inside the repository.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { OPERATIONS } from '../../src/http/routes/index.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const API = readFileSync(join(ROOT, 'docs/API.md'), 'utf8');

test('docs/API.md describes every registered operation', () => {
  const missing = [...new Set(OPERATIONS.map((op) => op.path))].filter((path) => !API.includes(`\`${path}`));
  assert.deepEqual(missing, []);
});

test('docs/API.md links to /docs and docs/openapi.json', () => {
  assert.match(API, /`\/docs`/);
  assert.match(API, /\]\(openapi\.json\)/);
});

test('README.md and docs/*.md link only to files inside the repository', () => {
  for (const file of ['README.md', 'docs/API.md', 'docs/deploy.md']) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const m of text.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)) {
      const target = m[1]!;
      if (/^[a-z]+:/.test(target)) continue; // an absolute URL
      const path = resolve(ROOT, dirname(file), target);
      assert.ok(path.startsWith(ROOT + '/') || path === ROOT, `${file} links outside the repository: ${target}`);
      // clients/typescript and docs/openapi.json are written by other parts of the build.
      if (!/openapi\.json$|clients\/typescript/.test(target)) assert.ok(existsSync(path), `${file} links to a missing file: ${target}`);
    }
    assert.doesNotMatch(text, /\.\.\/shared/, `${file} mentions ../shared`);
  }
});
