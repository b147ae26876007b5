/**
 * src/records/index.ts is the registry of the record modules: the OpenAPI document's components
 * come from RECORD_MODULES (src/http/openapi.ts), so a record module left out of it would
 * silently lose its components. Every module of src/records but the shared ones must be listed.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { test } from 'node:test';
import { RECORD_MODULES } from '../src/records/index.ts';

const SHARED = new Set(['index.ts', 'common.ts', 'statuses.ts']);

test('RECORD_MODULES lists every record module of src/records once', async () => {
  const dir = new URL('../src/records/', import.meta.url);
  const files = readdirSync(dir).filter((f) => f.endsWith('.ts') && !SHARED.has(f));
  for (const file of files) {
    const mod = (await import(new URL(file, dir).href)) as Record<string, unknown>;
    assert.equal(RECORD_MODULES.filter((m) => m === mod).length, 1, `src/records/${file}`);
  }
  assert.equal(RECORD_MODULES.length, files.length);
});
