/**
 * Regenerates the screenshots of the console in the README (docs/images/console-overview.png and
 * docs/images/console-messages.png) and in docs/guides/console.md (compose, a contact, groups,
 * numbers, webhooks, and compose at 375 px): `npm run screenshots`. It builds the console into a temporary
 * directory, starts a real server on a temporary SQLite database whose first start creates the demo
 * account (a week of message history: src/domain/demo.ts), signs in through "Sign in with a key" with
 * the demo token (the session is then the HttpOnly cookie) in headless Chromium (playwright-core;
 * /usr/bin/chromium or MSGSVC_TEST_CHROMIUM) at 1440×900 and captures the overview and the message
 * log, then the guide's pages by their URL (console/src/route.ts).
 */
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createHostLoops, openPreparedStore } from '../src/server.ts';
import { buildConsole, ROOT } from './build-console.ts';

const CHROMIUM = process.env.MSGSVC_TEST_CHROMIUM ?? '/usr/bin/chromium';
const OUT = resolve(ROOT, 'docs', 'images');

const dir = mkdtempSync(join(tmpdir(), 'msgsvc-screenshots-'));
try {
  const consoleDir = join(dir, 'console');
  if (!(await buildConsole(consoleDir))) throw new Error('the console could not be built (is Vite installed?)');
  const config = loadConfig({ DATABASE_URL: join(dir, 'msgsvc.db'), PORT: '0', LOG_LEVEL: 'warn', MSGSVC_DEMO: '1' });
  const { store, firstStartDemo } = await openPreparedStore(config);
  if (!firstStartDemo) throw new Error('no demo account was created');
  const app = buildApp(config, { store, consoleDir });
  const loops = createHostLoops(config, store, app.log);
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  await loops.start();
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  try {
    const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${base}/console`);
    await page.getByRole('button', { name: 'Sign in with a key' }).click();
    await page.getByLabel('Key (access token)').fill(firstStartDemo.token);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.locator('.chart canvas').waitFor();
    await page.waitForTimeout(1000);
    mkdirSync(OUT, { recursive: true });
    const shots: string[] = [];
    const shoot = async (name: string) => {
      await page.waitForTimeout(1000);
      const path = join(OUT, `console-${name}.png`);
      await page.screenshot({ path });
      shots.push(path);
    };
    await shoot('overview');
    await page.getByRole('link', { name: 'Messages', exact: true }).click();
    await page.getByRole('heading', { name: 'Messages' }).waitFor();
    await shoot('messages');
    // The guide's pages, each by its place in the URL.
    const contact = firstStartDemo.contacts[0];
    const guide: [string, string, string][] = [
      ['compose', '#/compose', 'Compose'],
      ['contact', `#/contacts/${contact?.Id ?? ''}`, ''],
      ['groups', '#/groups', 'Groups'],
      ['numbers', '#/numbers', 'Numbers'],
      ['webhooks', '#/webhooks', 'Webhooks'],
    ];
    for (const [name, hash, heading] of guide) {
      await page.goto(`${base}/console/${hash}`);
      await (heading === '' ? page.locator('main h1') : page.getByRole('heading', { name: heading, level: 1 })).first().waitFor();
      await shoot(name);
    }
    await page.setViewportSize({ width: 375, height: 812 });
    await page.goto(`${base}/console/#/compose`);
    await page.getByRole('heading', { name: 'Compose', level: 1 }).waitFor();
    await shoot('compose-375');
    for (const shot of shots) console.log(`${shot} (${Math.round(statSync(shot).size / 1024)} KB)`);
  } finally {
    await browser.close();
    await loops.stop();
    await app.close();
    await store.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
