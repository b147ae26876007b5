/**
 * npm test's reporter (scripts/test-reporter.mjs): node's TAP with every failed test repeated just
 * before the closing summary, so that a log that keeps only its end names the failures; the output
 * still ends with node's summary.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const REPORTER = resolve('scripts/test-reporter.mjs');

async function report(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'msgsvc-reporter-'));
  try {
    for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
    const args = ['--test', `--test-reporter=${REPORTER}`, '--test-reporter-destination=stdout', ...Object.keys(files)];
    // Without the test runner's own NODE_TEST_CONTEXT, which would make the inner run talk to ours.
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    const out = await run(process.execPath, args, { cwd: dir, env }).then(
      (r) => r.stdout,
      (e: { stdout: string }) => e.stdout,
    );
    return out;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const HEAD = `import { test } from 'node:test'; import assert from 'node:assert';\n`;

test('each failed test is repeated before the summary, with its file, line and error; the output ends with the summary', async () => {
  const out = await report({
    'a.test.mjs': `${HEAD}test('fine', () => {});\ntest('plain failure', () => { assert.equal(1, 2, 'one is not two'); });\n`,
    'b.test.mjs': `${HEAD}test('outer', async (t) => {\n  await t.test('inner failure', () => { throw new Error('first line\\nsecond line'); });\n});\n`,
  });
  const lines = out.trimEnd().split('\n');
  const at = lines.indexOf('# 2 failed test(s), repeated here (a parent that failed only by its subtests is not):');
  assert.ok(at > 0, out);
  assert.deepEqual(lines.slice(at + 1, at + 7), [
    '# not ok: a.test.mjs:3 plain failure',
    '#   AssertionError: one is not two',
    '# not ok: b.test.mjs:3 inner failure',
    '#   Error: first line',
    '#   second line',
    '# tests 4',
  ]);
  assert.match(lines.at(-1)!, /^# duration_ms [\d.]+$/);
  assert.deepEqual(lines.slice(-8, -1), ['# tests 4', '# suites 0', '# pass 1', '# fail 3', '# cancelled 0', '# skipped 0', '# todo 0']);
});

test('a run without failures is node TAP, unchanged', async () => {
  const out = await report({ 'a.test.mjs': `${HEAD}test('fine', () => {});\n` });
  assert.doesNotMatch(out, /repeated here/);
  assert.match(out, /^ok 1 - fine$/m);
  assert.match(out, /# pass 1\n# fail 0\n/);
});
