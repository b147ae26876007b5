/**
 * The console in real headless Chromium (playwright-core, Debian's `chromium` at /usr/bin/chromium,
 * which `.ci/run` installs), against a real server on SQLite whose dispatcher sends through the
 * sandbox carrier. Without chromium the test skips with one line, except under CI=true.
 *
 * The flow: sign in with the demo token (kept in sessionStorage, never in the URL); the overview
 * with its chart; compose, whose counter turns at 160/161 GSM-7 characters; send
 * `<img src=x onerror=alert(1)>` and watch it become Delivered without a reload, shown literally
 * with no dialog; the message log. On every page: axe-core finds no serious or critical violation,
 * nothing scrolls horizontally at 375 and 1440 px; screenshots go to test-results/. The browser
 * console shows no error, nothing is loaded from another origin, a 429 shows "slow down" until the
 * retry, and a 401 returns to sign-in.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium, type Page } from 'playwright-core';
import { buildConsole } from '../../scripts/build-console.ts';
import { buildApp } from '../../src/app.ts';
import { createDemoAccount } from '../../src/domain/demo.ts';
import { createTimeFormat } from '../../src/lib/time.ts';
import { recordMappers } from '../../src/records/index.ts';
import { createHostLoops } from '../../src/server.ts';
import { migrateToLatest, openStore } from '../../src/store/db.ts';
import { testConfig, withToken } from '../helpers/app.ts';

const CHROMIUM = process.env.MSGSVC_TEST_CHROMIUM ?? '/usr/bin/chromium';
const RESULTS = new URL('../../test-results/', import.meta.url);
const XSS = '<img src=x onerror=alert(1)>';
const XSS2 = '</script><script>alert(2)</script>';
const WIDTHS = [375, 1440] as const;
/** Where the console keeps the token (console/src/api.ts). */
const TOKEN_KEY = 'msgsvc.console.token';

/** Waits (polling every 100 ms, at most 15 s) until `check` holds; the page's CSP forbids Playwright's own polling (eval). */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** axe-core on the page as it is now: the serious and critical violations, one line each. */
async function seriousViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** At each width: no horizontal scroll, axe clean, a screenshot `console-<name>-<width>.png`. */
async function checkPage(page: Page, name: string): Promise<void> {
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    await page.waitForTimeout(100);
    const overflow = Number(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'));
    assert.ok(overflow <= 0, `${name} at ${width} px scrolls horizontally by ${overflow} px`);
    assert.deepEqual(await seriousViolations(page), [], `axe on ${name} at ${width} px`);
    await page.screenshot({ path: join(RESULTS.pathname, `console-${name}-${width}.png`), fullPage: true });
  }
}

test('console: sign in, overview, compose, delivery without reload, message log, in Chromium', { timeout: 120_000 }, async (t) => {
  if (!existsSync(CHROMIUM)) {
    if (process.env.CI === 'true') assert.fail(`CI: ${CHROMIUM} is missing (apt-get install chromium)`);
    t.skip(`chromium not found at ${CHROMIUM}: apt-get install chromium to run the console browser test`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'msgsvc-console-browser-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const consoleDir = join(dir, 'console');
  assert.equal(await buildConsole(consoleDir), true);

  const config = testConfig(join(dir, 'msgsvc.db'), { MSGSVC_SANDBOX_RECEIPT_MS: '300' });
  const store = openStore(config.database);
  await migrateToLatest(store);
  const demo = await createDemoAccount(store, recordMappers(createTimeFormat(config.timeZone)), config.defaultRegion);
  const app = buildApp(config, { store, consoleDir });
  const loops = createHostLoops(config, store, app.log);
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  await loops.start();
  t.after(async () => {
    await loops.stop();
    await app.close();
    await store.close();
  });

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  t.after(() => browser.close());
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const errors: string[] = [];
  const dialogs: string[] = [];
  const outside: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(msg.text());
  });
  page.on('pageerror', (err) => errors.push(String(err)));
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  page.on('request', (req) => {
    if (!req.url().startsWith(`${base}/`) && !req.url().startsWith('data:') && !req.url().startsWith('blob:')) outside.push(req.url());
  });
  mkdirSync(RESULTS, { recursive: true });

  // Sign in.
  await page.goto(`${base}/console`);
  await page.getByRole('heading', { name: 'Sign in to msgsvc' }).waitFor();
  await checkPage(page, 'sign-in');
  await page.getByLabel('Access token').fill(demo.token);
  await page.getByRole('button', { name: 'Sign in' }).click();

  // The overview.
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  await page.locator('.chart canvas').waitFor();
  assert.match(await page.getByTestId('credits').innerText(), /^\d+$/);
  assert.equal(await page.evaluate(`sessionStorage.getItem('${TOKEN_KEY}')`), demo.token);
  assert.ok(!page.url().includes(demo.token), 'the token is in the URL');
  await checkPage(page, 'overview');

  // Compose: the counter turns at 160/161 GSM-7 characters and 70/71 UCS-2 ones.
  await page.getByRole('link', { name: 'Compose' }).click();
  await page.getByRole('heading', { name: 'Compose' }).waitFor();
  const counter = page.getByTestId('counter');
  await page.getByLabel('Message').fill('a'.repeat(160));
  assert.match(await counter.innerText(), /^160 GSM-7 characters · 1 segment · 1 credit$/);
  await page.getByLabel('Message').fill('a'.repeat(161));
  assert.match(await counter.innerText(), /^161 GSM-7 characters · 2 segments · 2 credits$/);
  await page.getByLabel('Message').fill('ж'.repeat(70));
  assert.match(await counter.innerText(), /^70 UCS-2 characters · 1 segment · 1 credit$/);
  await page.getByLabel('Message').fill('ж'.repeat(71));
  assert.match(await counter.innerText(), /^71 UCS-2 characters · 2 segments · 2 credits$/);
  await page.getByLabel('To (mobile number)').fill('+1 202 555 0142');
  await page.getByLabel('Message').fill(XSS);
  await checkPage(page, 'compose');

  // Send it, and watch it become Delivered on its page without a reload.
  await page.getByRole('button', { name: 'Send now' }).click();
  await page.waitForURL(/#\/messages\/\d+$/);
  await page
    .getByTestId('status')
    .filter({ hasText: /^Delivered$/ })
    .waitFor({ timeout: 20_000 });
  assert.equal(await page.getByTestId('text').textContent(), XSS);
  assert.equal(await page.locator('main img').count(), 0, 'the message became an element');
  await checkPage(page, 'message');

  // The message log shows both texts literally.
  const other = await fetch(`${base}${withToken('/v1/sms/send', demo.token)}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ MobilePhone: '+1 202 555 0143', Message: XSS2 }),
  });
  assert.equal(other.status, 201);
  await page.getByRole('link', { name: 'Messages', exact: true }).click();
  await page.getByRole('heading', { name: 'Messages' }).waitFor();
  await page.locator('td.text', { hasText: XSS2 }).first().waitFor();
  assert.equal(await page.locator('td.text', { hasText: XSS }).first().textContent(), XSS);
  assert.equal(await page.locator('main img').count(), 0);
  await page.getByLabel('Status').selectOption('3');
  await page.getByRole('button', { name: 'Filter' }).click();
  await until(
    async () =>
      (await page.locator('td[data-status="Delivered"]').count()) > 0 &&
      (await page.locator('td[data-status]:not([data-status="Delivered"])').count()) === 0,
    'only Delivered messages after filtering',
  );
  await checkPage(page, 'messages');

  assert.deepEqual(dialogs, [], 'a script of a message ran');
  assert.deepEqual(errors, [], 'the browser console shows errors');
  assert.deepEqual(outside, [], 'the page loaded something from another origin');

  // A 429 shows "slow down", and the call is retried after Retry-After (the browser logs the 429 itself).
  let limited = 0;
  const balance = (url: URL) => url.pathname === '/v1/credits/balance';
  await page.route(balance, async (route) => {
    if (limited++ > 0) return route.continue();
    await route.fulfill({ status: 429, headers: { 'Retry-After': '1', 'Content-Type': 'application/json' }, body: '{}' });
  });
  await page.getByRole('link', { name: 'Overview' }).click();
  await page.getByText(/^Slow down: the API's rate limit was reached\. Retrying in 1 s/).waitFor();
  await page.getByTestId('credits').filter({ hasText: /^\d+$/ }).waitFor();
  await page.getByText(/^Slow down/).waitFor({ state: 'detached' });
  assert.equal(limited, 2);
  await page.unroute(balance);

  // A 401 from any call returns to sign-in (the browser logs the 401 itself; not counted above).
  await page.evaluate(`sessionStorage.setItem('${TOKEN_KEY}', 'not-a-token')`);
  await page.reload();
  await page.getByRole('heading', { name: 'Sign in to msgsvc' }).waitFor();
  await page.getByText('Your session ended: sign in again.').waitFor();
  assert.equal(await page.evaluate(`sessionStorage.getItem('${TOKEN_KEY}')`), null);
});
