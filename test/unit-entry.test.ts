/**
 * bin/entry.js: the `msgsvc` command runs the build in dist/ only when it is newer than every
 * source file, and the TypeScript sources otherwise (README "Quick start").
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUILD_STAMP, chooseEntry } from '../bin/entry.js';

function tree(t: { after(fn: () => void): void }): string {
  const root = mkdtempSync(join(tmpdir(), 'msgsvc-entry-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'src/http/routes'), { recursive: true });
  writeFileSync(join(root, 'src/main.ts'), '');
  writeFileSync(join(root, 'src/http/routes/index.ts'), '');
  return root;
}

function age(file: string, secondsAgo: number): void {
  const at = Date.now() / 1000 - secondsAgo;
  utimesSync(file, at, at);
}

/** Sets the modification times of the two source files `tree` makes. */
function sourcesChanged(root: string, mainSecondsAgo: number, routesSecondsAgo: number): void {
  age(join(root, 'src/main.ts'), mainSecondsAgo);
  age(join(root, 'src/http/routes/index.ts'), routesSecondsAgo);
}

function build(root: string, secondsAgo: number): void {
  mkdirSync(join(root, 'dist'), { recursive: true });
  writeFileSync(join(root, BUILD_STAMP), '');
  age(join(root, BUILD_STAMP), secondsAgo);
}

test('without a build, the sources run', (t) => {
  assert.deepEqual(chooseEntry(tree(t), {}), { entry: 'src', stale: false });
});

test('a build newer than every source file runs', (t) => {
  const root = tree(t);
  sourcesChanged(root, 100, 100);
  build(root, 10);
  assert.deepEqual(chooseEntry(root, {}), { entry: 'dist', stale: false });
});

test('a source file changed after the build, however deep, makes the build stale', (t) => {
  const root = tree(t);
  sourcesChanged(root, 100, 5);
  build(root, 10);
  assert.deepEqual(chooseEntry(root, {}), { entry: 'src', stale: true });
});

test('MSGSVC_FROM_SOURCE=1 always runs the sources', (t) => {
  const root = tree(t);
  sourcesChanged(root, 100, 100);
  build(root, 10);
  assert.deepEqual(chooseEntry(root, { MSGSVC_FROM_SOURCE: '1' }), { entry: 'src', stale: false });
});

test('a copy with a build and no sources runs the build', (t) => {
  const root = tree(t);
  rmSync(join(root, 'src'), { recursive: true });
  build(root, 10);
  assert.deepEqual(chooseEntry(root, {}), { entry: 'dist', stale: false });
});
