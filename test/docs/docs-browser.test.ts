/**
 * The docs page at /docs (Swagger UI, @fastify/swagger-ui) in real headless Chromium, driven by
 * playwright-core: Debian's `chromium` at /usr/bin/chromium (`.ci/run` installs it). Without it the
 * test skips with one line, except under CI=true, where it fails.
 *
 * The page must render every tag of /openapi.json and "Try it out" on credits/balance with the demo
 * token must show 200; a screenshot goes to test-results/ (ignored by git).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import { buildTestApp } from '../helpers/app.ts';
import { storeTest } from '../helpers/stores.ts';

const CHROMIUM = process.env.MSGSVC_TEST_CHROMIUM ?? '/usr/bin/chromium';
const RESULTS = new URL('../../test-results/', import.meta.url);

storeTest('docs: /docs renders every tag, and Try it out on credits/balance answers 200', { timeout: 60_000 }, async (t) => {
  if (!existsSync(CHROMIUM)) {
    if (process.env.CI === 'true') assert.fail(`CI: ${CHROMIUM} is missing (apt-get install chromium)`);
    t.skip(`chromium not found at ${CHROMIUM}: apt-get install chromium to run the /docs browser test`);
    return;
  }
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const base = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const doc = (await (await fetch(`${base}/openapi.json`)).json()) as { tags: { name: string }[] };

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    headless: true,
  });
  t.after(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1280, height: 1600 } });
  // Nothing may come from outside: every request the page makes goes to this server.
  const outside: string[] = [];
  page.on('request', (req) => {
    if (!req.url().startsWith(base) && !req.url().startsWith('data:')) outside.push(req.url());
  });

  await page.goto(`${base}/docs`);
  for (const { name } of doc.tags) {
    await page.locator(`.opblock-tag[data-tag="${name}"]`).waitFor({ state: 'visible', timeout: 15_000 });
  }

  // Authorize with the demo account's key in the access_token apiKey scheme (the query); the
  // dialog also offers the bearer and session schemes (API.md §15.2), each with its own form.
  await page.locator('.auth-wrapper .btn.authorize').click();
  const modal = page.locator('.modal-ux');
  const accessToken = modal.locator('form').filter({ hasText: 'access_token (apiKey)' });
  await accessToken.locator('input[type="text"], input[type="password"]').first().fill(demo.token);
  await accessToken.locator('.auth-btn-wrapper .btn.modal-btn.authorize').click();
  await modal.locator('.auth-btn-wrapper .btn-done').first().click();

  // The GET block (each GET path also has its HEAD block).
  const operation = page
    .locator('.opblock.opblock-get')
    .filter({ has: page.locator('.opblock-summary-path', { hasText: /^\/v1\/credits\/balance$/ }) });
  await operation.locator('.opblock-summary').first().click();
  await operation.locator('.try-out__btn').click();
  await operation.locator('.execute').click();
  const status = operation.locator('.live-responses-table .response .response-col_status').first();
  await status.waitFor({ state: 'visible', timeout: 15_000 });
  assert.equal((await status.innerText()).trim(), '200');
  const body = await operation.locator('.live-responses-table .response-col_description pre').first().innerText();
  assert.match(body, /"AvailableCredits":\s*\d+/);

  mkdirSync(RESULTS, { recursive: true });
  await operation.scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(RESULTS.pathname, 'docs.png'), fullPage: false });
  assert.deepEqual(outside, [], 'the page loaded something from outside the server');
});
