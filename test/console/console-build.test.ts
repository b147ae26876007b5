/**
 * The console's build (scripts/build-console.ts, Vite) into a temp dir: hashed asset names, all
 * the JavaScript at most 150 KB gzipped, no inline script or style attribute in index.html, and no
 * asset that loads anything from another host.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildConsole } from '../../scripts/build-console.ts';

/** The budget: the console's JavaScript, gzipped. */
const MAX_JS_GZIP_BYTES = 150 * 1024;

/** XML namespace names Preact compares against; they name no resource and are never fetched. */
const NAMESPACES = new Set(['http://www.w3.org/2000/svg', 'http://www.w3.org/1999/xhtml', 'http://www.w3.org/1998/Math/MathML']);

test('console: the build is hashed, small, and loads nothing from another host', { timeout: 120_000 }, async (t) => {
  const out = mkdtempSync(join(tmpdir(), 'msgsvc-console-build-'));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  assert.equal(await buildConsole(out), true);

  const assets = readdirSync(join(out, 'assets'));
  const js = assets.filter((name) => name.endsWith('.js'));
  assert.ok(js.length >= 1, 'no JavaScript was built');
  for (const name of assets) assert.match(name, /-[A-Za-z0-9_-]{8}\.(js|css|svg)$/, `${name} has no content hash`);

  const gzipped = js.reduce((n, name) => n + gzipSync(readFileSync(join(out, 'assets', name)), { level: 9 }).length, 0);
  t.diagnostic(`console JavaScript: ${(gzipped / 1024).toFixed(1)} KB gzipped`);
  assert.ok(gzipped <= MAX_JS_GZIP_BYTES, `the console's JavaScript is ${gzipped} bytes gzipped, over ${MAX_JS_GZIP_BYTES}`);

  const html = readFileSync(join(out, 'index.html'), 'utf8');
  for (const [, attrs, body] of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)) {
    assert.match(attrs!, /\ssrc="\/console\/assets\/[^"]+\.js"/, 'every script is a file of the build');
    assert.equal(body!.trim(), '', 'no inline script');
  }
  assert.doesNotMatch(html, /\sstyle=|<style\b|\son[a-z]+=/i, 'no inline style or event handler');
  for (const [, url] of html.matchAll(/\s(?:src|href)="([^"]*)"/g)) assert.match(url!, /^\/console\/assets\//, `index.html loads ${url}`);

  for (const name of assets) {
    const text = readFileSync(join(out, 'assets', name), 'utf8');
    const urls = [...text.matchAll(/(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}[^\s"'`)]*/gi)].map((m) => m[0]);
    const foreign = urls.filter((url) => ![...NAMESPACES].some((ns) => url.startsWith(ns) || `http:${url}`.startsWith(ns)));
    assert.deepEqual(foreign, [], `${name} names another host`);
    if (name.endsWith('.css')) assert.doesNotMatch(text, /@import|url\((?!['"]?data:)/, `${name} loads another file`);
  }
});
