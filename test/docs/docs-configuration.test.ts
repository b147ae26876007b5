/**
 * docs/configuration.md (issue 23): generated from the SETTINGS table of src/config.ts by
 * `npm run config:doc`. Fails when the page is stale, when a variable the server reads (anywhere in
 * src/ or bin/) is missing from it, or when a documented flag is not a flag of `msgsvc serve`.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SETTINGS } from '../../src/config.ts';
import { CONFIGURATION_FILE, configurationPage } from '../../scripts/config-doc.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PAGE = readFileSync(CONFIGURATION_FILE, 'utf8');

/** Every .ts/.js file below `dir`, with its text. */
function sources(dir: string): { path: string; text: string }[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(ts|js|mjs|cjs)$/.test(e.name))
    .map((e) => ({ path: join(e.parentPath, e.name), text: readFileSync(join(e.parentPath, e.name), 'utf8') }));
}

/**
 * The environment variables a source text reads: every MSGSVC_* name, every `process.env.X`,
 * `process.env['X']`, `source.X` and `env.X` (loadConfig's and the CLI's spelling), and the quoted
 * upper-case names of the well-known variables (DATABASE_URL, REDIS_URL, PORT, HOST, LOG_LEVEL).
 */
function variablesRead(text: string): Set<string> {
  const names = new Set<string>();
  for (const m of text.matchAll(/\bMSGSVC_[A-Z0-9_]+\b/g)) names.add(m[0]);
  for (const m of text.matchAll(/\b(?:process\.env|source|env)(?:\.([A-Z][A-Z0-9_]*)\b|\[\s*['"]([A-Z][A-Z0-9_]*)['"]\s*\])/g))
    names.add((m[1] ?? m[2])!);
  for (const m of text.matchAll(/['"](DATABASE_URL|REDIS_URL|PORT|HOST|LOG_LEVEL|NODE_OPTIONS|NODE_EXTRA_CA_CERTS)['"]/g)) names.add(m[1]!);
  return names;
}

test('docs/configuration.md is what `npm run config:doc` writes', () => {
  assert.equal(PAGE, configurationPage(), 'docs/configuration.md is stale: run `npm run config:doc`');
});

test('docs/configuration.md lists every environment variable read in src/ and bin/', () => {
  const documented = new Set([...PAGE.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map((m) => m[1]!));
  const missing: string[] = [];
  for (const file of [...sources('src'), ...sources('bin')]) {
    for (const name of variablesRead(file.text)) if (!documented.has(name)) missing.push(`${name} (${file.path.slice(ROOT.length)})`);
  }
  assert.deepEqual(missing, [], 'add them to SETTINGS in src/config.ts, then run `npm run config:doc`');
  // The scan itself works: the variables the brief names are found and documented.
  const found = new Set(sources('src').flatMap((f) => [...variablesRead(f.text)]));
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'PORT', 'HOST', 'MSGSVC_SMPP_URL'])
    assert.ok(found.has(name), `${name} is found in src/`);
});

test('every flag in SETTINGS is an option of `msgsvc serve`', () => {
  const cli = readFileSync(join(ROOT, 'src/cli/index.ts'), 'utf8');
  for (const s of SETTINGS) {
    if (s.flag) assert.ok(cli.includes(`.option('${s.flag}`), `${s.name}: ${s.flag} is not an option in src/cli/index.ts`);
  }
  assert.equal(new Set(SETTINGS.map((s) => s.name)).size, SETTINGS.length, 'each variable once');
});
