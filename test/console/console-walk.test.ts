/**
 * A walk of every page of the console in headless Chromium (test/console/browser.ts: a real server
 * on SQLite with the sandbox carrier and a demo account), as a keyboard user would take it:
 *
 * - defect 11, accessibility: the skip link is the first Tab stop and takes the focus to the page's
 *   heading; after sign-in and after every navigation the focus is on the new page's <h1>, never on
 *   <body>; each page has its own title; the focus ring of a dark button is visible (a 3 px outline
 *   of another colour than the button);
 * - defect 7, one date format with the zone named: the header names the service's zone once, and no
 *   page shows a date in the spec's `YYYY:MM:DD` form;
 * - every page at 1440 and 375 px: axe-core finds no serious or critical violation, nothing scrolls
 *   horizontally (checkPage), and the browser console shows no error.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { checkPage, signIn, startConsole, until } from './browser.ts';

/** Every page of the navigation: its route, its link's text and its title (before ` · msgsvc console`). */
const PAGES: readonly { route: string; link: string; title: string }[] = [
  { route: 'overview', link: 'Overview', title: 'Overview' },
  { route: 'ledger', link: 'Credits', title: 'Credit ledger' },
  { route: 'messages', link: 'Messages', title: 'Messages' },
  { route: 'conversations', link: 'Conversations', title: 'Conversations' },
  { route: 'compose', link: 'Compose', title: 'Compose' },
  { route: 'scheduled', link: 'Scheduled', title: 'Scheduled messages' },
  { route: 'contacts', link: 'Contacts', title: 'Contacts' },
  { route: 'fields', link: 'Custom fields', title: 'Custom fields' },
  { route: 'groups', link: 'Groups', title: 'Groups' },
  { route: 'keywords', link: 'Keywords', title: 'Keywords' },
  { route: 'media', link: 'Media and templates', title: 'Media and templates' },
  { route: 'numbers', link: 'Numbers', title: 'Numbers' },
  { route: 'webhooks', link: 'Webhooks', title: 'Webhooks' },
  { route: 'keys', link: 'Keys', title: 'Keys' },
  { route: 'people', link: 'People', title: 'People' },
  { route: 'subaccounts', link: 'Sub-accounts', title: 'Sub-accounts' },
  { route: 'audit', link: 'Audit log', title: 'Audit log' },
  { route: 'settings', link: 'Settings', title: 'Account settings' },
];

/** What has the focus: its tag, and its text when it is a heading or a link. */
async function focused(page: Page): Promise<{ tag: string; text: string }> {
  return page.evaluate<{ tag: string; text: string }>(
    '({ tag: document.activeElement ? document.activeElement.tagName : "", text: document.activeElement ? document.activeElement.textContent.trim() : "" })',
  );
}

test(
  'console: skip link, focus on each new heading, a title per page, the zone named once, one date format, and every page clean at 1440 and 375 px',
  { timeout: 300_000 },
  async (t) => {
    const session = await startConsole(t);
    if (session === undefined) return;
    const { page, config } = session;

    await t.test('defect 11: after sign-in the focus is on the Overview heading, not <body>', async () => {
      await signIn(session);
      await until(async () => (await focused(page)).tag === 'H1', 'the focus on the heading after sign-in', 10_000);
      assert.deepEqual(await focused(page), { tag: 'H1', text: 'Overview' });
      assert.equal(await page.title(), 'Overview · msgsvc console');
    });

    await t.test('defect 11: the skip link is the first Tab stop and takes the focus to the heading', async () => {
      await page.reload();
      // The page's own move of the focus to its heading comes first (as after any navigation): a
      // Tab pressed before it would be overtaken by it.
      await until(async () => (await focused(page)).tag === 'H1', 'the focus on the heading after the reload', 10_000);
      await page.evaluate('document.activeElement && document.activeElement.blur()');
      await page.keyboard.press('Tab');
      assert.deepEqual(await focused(page), { tag: 'A', text: 'Skip to content' });
      const box = await page.getByRole('link', { name: 'Skip to content' }).boundingBox();
      assert.ok(box !== null && box.y >= 0, 'the skip link is on screen while focused');
      await page.keyboard.press('Enter');
      assert.deepEqual(await focused(page), { tag: 'H1', text: 'Overview' });
      assert.ok(page.url().endsWith('#/overview') || !page.url().includes('#main'), 'the skip link does not change the route');
    });

    await t.test('defect 11: the focus ring of a dark button is visible', async () => {
      await page.getByRole('link', { name: 'Compose' }).click();
      await page.getByRole('heading', { name: 'Compose', level: 1 }).waitFor();
      const button = page.locator('main button:not(.secondary):not(.link):not([disabled])').first();
      await button.focus();
      // Keyboard focus (focus-visible): Shift+Tab then Tab comes back to it.
      await page.keyboard.press('Shift+Tab');
      await page.keyboard.press('Tab');
      // The function runs in the page, where the DOM's globals exist (this file's lib has no DOM).
      const ring = await button.evaluate((el) => {
        const s = (globalThis as unknown as { getComputedStyle(e: unknown): Record<string, string> }).getComputedStyle(el);
        return {
          style: s.outlineStyle,
          width: parseFloat(s.outlineWidth ?? '0'),
          color: s.outlineColor,
          background: s.backgroundColor,
          focused: el.matches(':focus-visible'),
        };
      });
      assert.ok(ring.focused, 'the button has keyboard focus');
      assert.notEqual(ring.style, 'none');
      assert.ok(ring.width >= 3, `outline ${ring.width} px`);
      assert.notEqual(ring.color, ring.background, 'the ring is not the colour of the button');
    });

    await t.test('defect 7: the header names the service time zone once', async () => {
      const zone = page.getByTestId('zone');
      assert.equal(await zone.innerText(), `Times in ${config.timeZone}`);
      assert.equal(await page.getByText(`Times in ${config.timeZone}`).count(), 1);
    });

    await t.test(
      'every page: its title, the focus on its heading, one date format, axe clean, no horizontal scroll at 1440 and 375 px',
      async () => {
        const titles = new Set<string>();
        for (const p of PAGES) {
          await page.setViewportSize({ width: 1440, height: 900 });
          await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: p.link, exact: true }).click();
          await page.getByRole('heading', { name: p.title, level: 1 }).waitFor();
          await until(async () => (await focused(page)).tag === 'H1', `the focus on the heading of ${p.route}`, 10_000);
          assert.deepEqual(await focused(page), { tag: 'H1', text: p.title }, p.route);
          assert.equal(await page.title(), `${p.title} · msgsvc console`);
          titles.add(await page.title());
          // Let lists load before looking at dates and at the layout.
          await page.waitForTimeout(300);
          const main = await page.locator('main').innerText();
          assert.doesNotMatch(main, /\b\d{4}:\d{2}:\d{2} \d{2}:\d{2}/, `${p.route} shows a date as YYYY:MM:DD`);
          await checkPage(page, `walk-${p.route}`);
        }
        assert.equal(titles.size, PAGES.length, 'every page has its own title');
      },
    );

    await t.test('a record page has its own title: Message <id>', async () => {
      const res = await fetch(`${session.base}/v1/sms/send?access_token=${session.demo.token}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ MobilePhone: '+12025550100', Message: 'A record page' }),
      });
      assert.equal(res.status, 201);
      const [message] = (await res.json()) as { Id: number }[];
      assert.ok(message !== undefined);
      await page.goto(`${session.base}/console/#/messages/${message.Id}`);
      await page.getByRole('heading', { level: 1 }).first().waitFor();
      assert.equal(await page.title(), `Message ${message.Id} · msgsvc console`);
    });

    assert.deepEqual(session.errors, [], 'browser console errors');
    assert.deepEqual(session.dialogs, [], 'dialogs opened');
    assert.deepEqual(session.outside, [], 'requests to other origins');
  },
);
