/**
 * GET /console and its assets (src/http/console.ts), through inject: index.html with no-cache, a
 * hashed asset cached for a year, both with the Content-Security-Policy, nosniff and no-referrer;
 * no token needed; a missing asset is the API's 404; without a build, a 503 page saying how to build.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildApp } from '../../src/app.ts';
import { CONSOLE_CSP } from '../../src/http/console.ts';
import { migrateToLatest, openStore } from '../../src/store/db.ts';
import { testConfig } from '../helpers/app.ts';

async function consoleApp(t: { after(fn: () => unknown): void }, files: Record<string, string | Buffer>) {
  const dir = mkdtempSync(join(tmpdir(), 'msgsvc-console-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const consoleDir = join(dir, 'console');
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(consoleDir, name, '..'), { recursive: true });
    writeFileSync(join(consoleDir, name), text);
  }
  mkdirSync(consoleDir, { recursive: true });
  const config = testConfig(join(dir, 'msgsvc.db'));
  const store = openStore(config.database);
  await migrateToLatest(store);
  const app = buildApp(config, { store, consoleDir });
  await app.ready();
  t.after(async () => {
    await app.close();
    await store.close();
  });
  return app;
}

function assertSecurityHeaders(headers: Record<string, unknown>): void {
  assert.equal(headers['content-security-policy'], CONSOLE_CSP);
  assert.equal(headers['x-content-type-options'], 'nosniff');
  assert.equal(headers['referrer-policy'], 'no-referrer');
}

test('console: the CSP allows no inline script and no other origin', () => {
  const directives = new Map(CONSOLE_CSP.split(/;\s*/).map((d) => [d.split(' ')[0], d.split(' ').slice(1).join(' ')]));
  assert.equal(directives.get('default-src'), "'self'");
  assert.equal(directives.get('script-src'), "'self'");
  assert.equal(directives.get('style-src'), "'self'");
  assert.equal(directives.get('connect-src'), "'self'");
  assert.equal(directives.get('img-src'), "'self' data: blob:");
  assert.equal(directives.get('frame-ancestors'), "'none'");
  assert.equal(directives.get('base-uri'), "'none'");
  assert.equal(directives.get('form-action'), "'self'");
  assert.doesNotMatch(CONSOLE_CSP, /unsafe-|https?:|\*/);
});

test('console: /console is index.html (no-cache), assets are immutable, all with the security headers', async (t) => {
  const html = '<!doctype html><title>t</title><script type="module" src="/console/assets/index-AbC123.js"></script>';
  const app = await consoleApp(t, { 'index.html': html, 'assets/index-AbC123.js': 'console.log(1);\n', 'assets/index-XyZ789.css': 'b{}' });

  for (const url of ['/console', '/console/']) {
    const page = await app.inject({ method: 'GET', url });
    assert.equal(page.statusCode, 200, url);
    assert.equal(page.body, html);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.equal(page.headers['cache-control'], 'no-cache');
    assertSecurityHeaders(page.headers);
  }

  const js = await app.inject({ method: 'GET', url: '/console/assets/index-AbC123.js' });
  assert.equal(js.statusCode, 200);
  assert.match(String(js.headers['content-type']), /javascript/);
  assert.equal(js.headers['cache-control'], 'public, max-age=31536000, immutable');
  assertSecurityHeaders(js.headers);

  const css = await app.inject({ method: 'GET', url: '/console/assets/index-XyZ789.css' });
  assert.equal(css.statusCode, 200);
  assert.match(String(css.headers['content-type']), /^text\/css/);
  assert.equal(css.headers['cache-control'], 'public, max-age=31536000, immutable');

  const head = await app.inject({ method: 'HEAD', url: '/console' });
  assert.equal(head.statusCode, 200);
  assertSecurityHeaders(head.headers);

  const missing = await app.inject({ method: 'GET', url: '/console/assets/nope-123.js' });
  assert.equal(missing.statusCode, 404);
  assert.deepEqual(missing.json(), { name: 'Not Found', message: 'Page not found.', code: 0, status: 404 });
  assertSecurityHeaders(missing.headers);

  const traversal = await app.inject({ method: 'GET', url: '/console/../package.json' });
  assert.notEqual(traversal.statusCode, 200);
});

test('console: a file is sent Brotli- or gzip-encoded when the browser accepts it and the build has that copy; Vary: Accept-Encoding', async (t) => {
  const html = `<!doctype html><title>t</title>${'<p>page</p>'.repeat(200)}`;
  const script = `console.log(${JSON.stringify('x'.repeat(4000))});\n`;
  const app = await consoleApp(t, {
    'index.html': html,
    'index.html.br': brotliCompressSync(html),
    'index.html.gz': gzipSync(html),
    'assets/index-AbC123.js': script,
    'assets/index-AbC123.js.gz': gzipSync(script), // a gzip copy only
    'assets/index-XyZ789.css': 'b{}',
  });
  const get = (url: string, acceptEncoding?: string) =>
    app.inject({ method: 'GET', url, headers: acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding } });

  const br = await get('/console', 'gzip, deflate, br');
  assert.equal(br.statusCode, 200);
  assert.equal(br.headers['content-encoding'], 'br', 'Brotli first when both are accepted');
  assert.equal(brotliDecompressSync(br.rawPayload).toString(), html);
  assert.match(String(br.headers['content-type']), /^text\/html/);
  assert.equal(br.headers['cache-control'], 'no-cache', 'the encoded page is still the page');
  assert.match(String(br.headers.vary), /accept-encoding/i);
  assertSecurityHeaders(br.headers);

  const gz = await get('/console', 'gzip');
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.equal(gunzipSync(gz.rawPayload).toString(), html);

  for (const acceptEncoding of [undefined, 'identity']) {
    const plain = await get('/console', acceptEncoding);
    assert.equal(plain.headers['content-encoding'], undefined, `Accept-Encoding: ${acceptEncoding}`);
    assert.equal(plain.body, html);
    assert.match(String(plain.headers.vary), /accept-encoding/i, 'the plain answer varies too');
  }

  // Brotli accepted, but the build has only a gzip copy of this file: gzip.
  const js = await get('/console/assets/index-AbC123.js', 'br, gzip');
  assert.equal(js.headers['content-encoding'], 'gzip');
  assert.equal(gunzipSync(js.rawPayload).toString(), script);
  assert.match(String(js.headers['content-type']), /javascript/);
  assert.equal(js.headers['cache-control'], 'public, max-age=31536000, immutable');

  // No copy at all (a file too small to be worth one): the file itself.
  const css = await get('/console/assets/index-XyZ789.css', 'br, gzip');
  assert.equal(css.headers['content-encoding'], undefined);
  assert.equal(css.body, 'b{}');

  const missing = await get('/console/assets/nope-123.js', 'br, gzip');
  assert.equal(missing.statusCode, 404);
});

test('console: without a build, /console answers 503 with how to build it', async (t) => {
  const app = await consoleApp(t, {});
  for (const url of ['/console', '/console/assets/index-AbC123.js']) {
    const res = await app.inject({ method: 'GET', url });
    assert.equal(res.statusCode, 503, url);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.match(res.body, /npm run build/);
    assertSecurityHeaders(res.headers);
  }
});
