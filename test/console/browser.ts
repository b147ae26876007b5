/**
 * What the console's Chromium tests share: a real server on SQLite whose loops send through the
 * sandbox carrier, with the console built into a temp dir and a demo account; one headless Chromium
 * page that records console errors, dialogs and requests to other origins; `until` (bounded polling)
 * and `checkPage` (no horizontal scroll at 375 and 1440 px, axe-core without serious or critical
 * violations, screenshots in test-results/).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium, type Page } from 'playwright-core';
import { buildConsole } from '../../scripts/build-console.ts';
import { buildApp } from '../../src/app.ts';
import type { Config, ConfigSource } from '../../src/config.ts';
import { createDemoAccount, type DemoAccount } from '../../src/domain/demo.ts';
import { createTimeFormat } from '../../src/lib/time.ts';
import { recordMappers } from '../../src/records/index.ts';
import { createHostLoops } from '../../src/server.ts';
import { migrateToLatest, openStore, type Store } from '../../src/store/db.ts';
import { testConfig } from '../helpers/app.ts';

export const CHROMIUM = process.env.MSGSVC_TEST_CHROMIUM ?? '/usr/bin/chromium';
export const RESULTS = new URL('../../test-results/', import.meta.url);
export const WIDTHS = [375, 1440] as const;
/** Where the console kept the token before sessions (console/src/api.ts keeps none now: nothing may be stored under it). */
export const TOKEN_KEY = 'msgsvc.console.token';

/** Waits (polling every 100 ms, at most `ms`, 15 s by default) until `check` holds; the page's CSP forbids Playwright's own polling (eval). */
export async function until(check: () => Promise<boolean>, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Types `text` into the first input matching `selector` in the same task that inserts it into the
 * page (a MutationObserver's callback runs before the next paint and before any animation frame):
 * the fastest keystroke a person can make. Resolves once the observer is set; the caller then
 * navigates. Evaluated as text: the page's CSP forbids Playwright's own function evaluation.
 */
export async function typeOnArrival(page: Page, selector: string, text: string): Promise<void> {
  const args = JSON.stringify([selector, text]);
  await page.evaluate(`(() => {
    const [selector, text] = ${args};
    const type = (input) => {
      Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set.call(input, text);
      input.dispatchEvent(new Event('input', { bubbles: true }));
    };
    const observer = new MutationObserver(() => {
      const input = document.querySelector(selector);
      if (input === null) return;
      observer.disconnect();
      type(input);
    });
    observer.observe(document, { childList: true, subtree: true });
  })()`);
}

/** Resolves after `n` animation frames of the page (effects that run after paint have run). */
export async function frames(page: Page, n = 3): Promise<void> {
  await page.evaluate(
    `new Promise((resolve) => { let left = ${n}; const step = () => (--left <= 0 ? resolve(true) : requestAnimationFrame(step)); requestAnimationFrame(step); })`,
  );
}

/** axe-core on the page as it is now: the serious and critical violations, one line each. */
export async function seriousViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** At each width: no horizontal scroll, axe clean, a screenshot `console-<name>-<width>.png`; back at 1440 px after. */
export async function checkPage(page: Page, name: string): Promise<void> {
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    await page.waitForTimeout(100);
    const overflow = Number(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'));
    assert.ok(overflow <= 0, `${name} at ${width} px scrolls horizontally by ${overflow} px`);
    assert.deepEqual(await seriousViolations(page), [], `axe on ${name} at ${width} px`);
    await page.screenshot({ path: join(RESULTS.pathname, `console-${name}-${width}.png`), fullPage: true });
  }
}

/** A running server with the console, a demo account and a Chromium page on it. */
export interface ConsoleSession {
  base: string;
  config: Config;
  store: Store;
  demo: DemoAccount;
  page: Page;
  /** Errors of the browser console and uncaught page errors. */
  errors: string[];
  /** Messages of dialogs (alert, confirm) the page opened: a script of a text ran. */
  dialogs: string[];
  /** URLs requested from another origin. */
  outside: string[];
}

/**
 * Starts it all for test `t` and stops it when the test ends; undefined (the test skipped) when
 * Chromium is missing, except under CI=true where that fails.
 */
export async function startConsole(
  t: { after(fn: () => unknown): void; skip(message: string): void },
  overrides: ConfigSource = {},
): Promise<ConsoleSession | undefined> {
  if (!existsSync(CHROMIUM)) {
    if (process.env.CI === 'true') assert.fail(`CI: ${CHROMIUM} is missing (apt-get install chromium)`);
    t.skip(`chromium not found at ${CHROMIUM}: apt-get install chromium to run the console browser test`);
    return undefined;
  }
  const dir = mkdtempSync(join(tmpdir(), 'msgsvc-console-browser-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const consoleDir = join(dir, 'console');
  assert.equal(await buildConsole(consoleDir), true);

  const config = testConfig(join(dir, 'msgsvc.db'), { MSGSVC_SANDBOX_RECEIPT_MS: '300', ...overrides });
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
  const session: ConsoleSession = { base, config, store, demo, page, errors: [], dialogs: [], outside: [] };
  page.on('console', (msg) => {
    if (msg.type() === 'error') session.errors.push(msg.text());
  });
  page.on('pageerror', (err) => session.errors.push(String(err)));
  page.on('dialog', (dialog) => {
    session.dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  page.on('request', (req) => {
    if (!req.url().startsWith(`${base}/`) && !req.url().startsWith('data:') && !req.url().startsWith('blob:'))
      session.outside.push(req.url());
  });
  mkdirSync(RESULTS, { recursive: true });
  return session;
}

/**
 * Signs in through "Sign in with a key" with `key` (the demo account's token by default: a key
 * with scope `*`) and waits for the overview. The session is then the HttpOnly cookie.
 */
export async function signIn(session: ConsoleSession, key: string = session.demo.token): Promise<void> {
  const { page } = session;
  await page.goto(`${session.base}/console`);
  await page.getByRole('button', { name: 'Sign in with a key' }).click();
  await page.getByLabel('Key (access token)').fill(key);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}
