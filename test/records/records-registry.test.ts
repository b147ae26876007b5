/**
 * The OpenAPI document's components come from RECORD_MODULES (src/http/openapi.ts), which
 * src/records/index.ts discovers in its folder, so a new resource's records need no registration
 * (docs/ARCHITECTURE.md, "Adding a resource"). A module the discovery missed would silently lose
 * its components: every module of src/records but the shared ones must be there, once, in
 * file-name order (the document's order).
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { test } from 'node:test';
import { RECORD_MODULES } from '../../src/records/index.ts';

const SHARED = new Set(['index.ts', 'common.ts', 'statuses.ts']);

test('RECORD_MODULES holds every record module of src/records once, in file-name order', async () => {
  const dir = new URL('../../src/records/', import.meta.url);
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.ts') && !SHARED.has(f))
    .sort();
  assert.ok(files.length >= 10);
  for (const [i, file] of files.entries()) {
    const mod = (await import(new URL(file, dir).href)) as Record<string, unknown>;
    assert.equal(RECORD_MODULES.filter((m) => m === mod).length, 1, `src/records/${file}`);
    assert.equal(RECORD_MODULES[i], mod, `src/records/${file} in file-name order`);
  }
  assert.equal(RECORD_MODULES.length, files.length);
});
