/**
 * The console's conversations page in headless Chromium (see ./browser.ts): the threads newest
 * first from sms/conversations with their unread counts and the number each uses, a thread in both directions, opening a
 * thread marks it read (sms/mark-read), and a reply whose counter turns at 160/161 GSM-7 characters
 * and 70/71 UCS-2 ones; the reply appears in the thread and becomes Delivered without a reload.
 * axe-core clean, no horizontal scroll at 375 px, no browser console error, text shown as text.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withToken } from '../helpers/app.ts';
import { checkPage, signIn, startConsole } from './browser.ts';

const XSS = '<img src=x onerror=alert(1)>';

test('console: conversations, a thread and a reply that becomes Delivered, in Chromium', { timeout: 120_000 }, async (t) => {
  const session = await startConsole(t);
  if (session === undefined) return;
  const { page, demo, base, errors, dialogs } = session;
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${base}${withToken(path, demo.token)}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.equal(response.status, 201, await response.text());
  };
  await post('/v1/sms/send', { MobilePhone: '+1 202 555 0161', Message: 'older thread' });
  await post('/v1/sandbox/inbound', { From: '+1 202 555 0161', To: '55155', Message: 'an answer' });
  await post('/v1/sms/send', { MobilePhone: '+1 202 555 0162', Message: XSS, Number: '15550100001' });

  await signIn(session);
  await page.getByRole('link', { name: 'Conversations' }).click();
  await page.getByRole('heading', { name: 'Conversations' }).waitFor();
  const links = page.locator('ul.threads a');
  await links.first().waitFor();
  const names = await links.allInnerTexts();
  const newer = names.findIndex((n) => n.replace(/\D/g, '').endsWith('2025550162'));
  const older = names.findIndex((n) => n.replace(/\D/g, '').endsWith('2025550161'));
  assert.ok(newer >= 0 && older > newer, `newest thread first: ${names.join(', ')}`);
  await page.locator('ul.threads p.text', { hasText: XSS }).waitFor();
  // The unread counts of sms/conversations: the inbound answer on the older thread only.
  const threads = page.getByTestId('thread');
  assert.equal(await threads.nth(older).getByTestId('unread').innerText(), '1 unread');
  assert.equal(await threads.nth(newer).getByTestId('unread').count(), 0);
  assert.equal(await threads.nth(older).locator('p.text').innerText(), 'They: an answer');
  // The number each thread uses (Number, docs/API.md §17): that of its newest message.
  assert.equal(await threads.nth(newer).getByTestId('thread-number').innerText(), '+15550100001');
  assert.equal(await threads.nth(older).getByTestId('thread-number').innerText(), '55155');
  await checkPage(page, 'conversations');

  // The thread, and the reply box's counter.
  await links.nth(newer).click();
  await page.getByRole('heading', { name: /^Conversation with / }).waitFor();
  assert.equal(await page.locator('ol.thread p.text').first().textContent(), XSS);
  const counter = page.getByTestId('counter');
  const reply = page.getByLabel('Reply');
  await reply.fill('a'.repeat(160));
  assert.match(await counter.innerText(), /^160 GSM-7 characters · 1 segment · 1 credit$/);
  await reply.fill('a'.repeat(161));
  assert.match(await counter.innerText(), /^161 GSM-7 characters · 2 segments · 2 credits$/);
  await reply.fill('ж'.repeat(70));
  assert.match(await counter.innerText(), /^70 UCS-2 characters · 1 segment · 1 credit$/);
  await reply.fill('ж'.repeat(71));
  assert.match(await counter.innerText(), /^71 UCS-2 characters · 2 segments · 2 credits$/);
  await reply.fill('the reply');
  await checkPage(page, 'conversation');

  const url = page.url();
  await page.getByRole('button', { name: 'Send reply' }).click();
  const sent = page.getByTestId('thread-message').filter({ hasText: 'the reply' });
  await sent.waitFor();
  await sent.locator('[data-status="Delivered"]').waitFor({ timeout: 20_000 });
  assert.equal(page.url(), url);
  assert.equal(await page.locator('main img').count(), 0, 'a message became an element');

  // Opening the older thread marks it read: back on the list, its unread count is gone.
  await page.getByRole('link', { name: 'Conversations', exact: true }).click();
  await page.locator('ul.threads a', { hasText: '12025550161' }).click();
  await page.getByTestId('thread-message').filter({ hasText: 'an answer' }).waitFor();
  const unread = async () => {
    const response = await fetch(`${base}${withToken('/v1/sms/conversations', demo.token)}`);
    return (await response.json()) as { MobilePhone: string; Unread: number }[];
  };
  for (let i = 0; i < 100 && (await unread()).some((c) => c.Unread > 0); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(
    (await unread()).every((c) => c.Unread === 0),
    'the opened thread was marked read',
  );
  await page.getByRole('link', { name: 'Conversations', exact: true }).click();
  await page.locator('ul.threads a').first().waitFor();
  assert.equal(await page.getByTestId('unread').count(), 0);
  assert.deepEqual(dialogs, [], 'a script of a message ran');
  assert.deepEqual(errors, [], 'the browser console shows errors');
});
