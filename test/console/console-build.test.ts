/**
 * The console's build (scripts/build-console.ts, Vite) into a temp dir: hashed asset names, all
 * the JavaScript at most 150 KB gzipped, no inline script or style attribute in index.html, and no
 * asset that loads anything from another host; the script, style sheet and page have Brotli and
 * gzip copies that decode to their bytes exactly.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
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

  const all = readdirSync(join(out, 'assets'));
  const assets = all.filter((name) => !/\.(br|gz)$/.test(name));
  const js = assets.filter((name) => name.endsWith('.js'));
  assert.ok(js.length >= 1, 'no JavaScript was built');
  for (const name of assets) assert.match(name, /-[A-Za-z0-9_-]{8}\.(js|css|svg)$/, `${name} has no content hash`);

  // The encoded copies /console sends (src/http/console.ts): every script and style sheet, and the
  // page, has both, each smaller than the file and decoding to it byte for byte.
  const encoded = all.filter((name) => /\.(br|gz)$/.test(name));
  for (const name of encoded) assert.ok(assets.includes(name.slice(0, -3)), `${name} is the copy of a file of the build`);
  for (const file of [...assets.filter((name) => /\.(js|css)$/.test(name)).map((name) => join('assets', name)), 'index.html']) {
    const bytes = readFileSync(join(out, file));
    if (file === 'index.html' && bytes.length < 1024) continue; // too small to be worth it
    const br = readFileSync(join(out, `${file}.br`));
    const gz = readFileSync(join(out, `${file}.gz`));
    assert.ok(br.length < bytes.length && gz.length < bytes.length, `${file}: the copies are smaller`);
    assert.ok(brotliDecompressSync(br).equals(bytes), `${file}.br decodes to ${file}`);
    assert.ok(gunzipSync(gz).equals(bytes), `${file}.gz decodes to ${file}`);
  }

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
