/**
 * The console's compose page in headless Chromium (see ./browser.ts): sending to a group shows the
 * batch's progress until every message is final; scheduling to a contact at a time shows the
 * result, which links to the scheduled messages; "Send first" sends Priority 1 (docs/API.md §17.2). axe-core clean, no horizontal scroll at 375 px, no browser console error.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkPage, signIn, startConsole } from './browser.ts';

test(
  'console: compose to a group shows its progress to the end, and schedules to a contact, in Chromium',
  { timeout: 120_000 },
  async (t) => {
    const session = await startConsole(t);
    if (session === undefined) return;
    const { page, errors, dialogs } = session;

    await signIn(session);
    await page.getByRole('link', { name: 'Compose' }).click();
    await page.getByRole('heading', { name: 'Compose' }).waitFor();
    await page.getByLabel('Send to').selectOption('group');
    const group = page.getByLabel('Group', { exact: true });
    await group.locator('option', { hasText: 'Staff' }).waitFor({ state: 'attached' });
    await group.selectOption({ label: 'Staff' });
    await page.getByLabel('Message').fill('Shift starts at 9 <b>sharp</b>');
    await page.getByRole('button', { name: 'Send now' }).click();
    const progress = page.getByTestId('batch-progress');
    await progress.waitFor();
    await progress.filter({ hasText: /^Done: (\d+) of \1 final/ }).waitFor({ timeout: 30_000 });
    assert.match(await progress.innerText(), /^Done: [1-9]\d* of \d+ final · \d+ Delivered/);
    await checkPage(page, 'compose-group');
    // The group went at the normal priority (docs/API.md §17.2).
    const groupPriorities = await session.store.db.selectFrom('messages').select('priority').where('batch_id', 'is not', null).execute();
    assert.ok(groupPriorities.length > 0 && groupPriorities.every((m) => Number(m.priority) === 0));

    // Scheduled, to a contact, at a time in the service's time zone.
    await page.getByLabel('Send to').selectOption('contact');
    const contact = page.getByLabel('Contact', { exact: true });
    await contact.locator('option').nth(1).waitFor({ state: 'attached' });
    await contact.selectOption({ index: 1 });
    await page.getByLabel('When').selectOption('later');
    const next = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10);
    await page.getByLabel("Date and time (the service's time zone)").fill(`${next}T09:30`);
    await page.getByLabel('Type').selectOption('2');
    await page.getByLabel('MMS template').locator('option').nth(1).waitFor({ state: 'attached' });
    await page.getByLabel('MMS template').selectOption({ index: 1 });
    // Sent first (Priority 1): kept on the scheduled message for its occurrences.
    await page.getByLabel('Send first (Priority 1)').check();
    await checkPage(page, 'compose-scheduled');
    await page.getByRole('button', { name: 'Schedule' }).click();
    // The result takes the focus, and links to the scheduled messages.
    await page
      .getByTestId('send-result')
      .getByRole('heading', { name: /^Scheduled for \d{4}-\d{2}-\d{2} 09:30:00$/ })
      .waitFor();
    await page.getByRole('link', { name: 'See the scheduled list' }).click();
    await page.waitForURL(/#\/scheduled$/);
    await page.getByRole('heading', { name: /^Scheduled/ }).waitFor();
    const newest = await session.store.db
      .selectFrom('scheduled_messages')
      .select('priority')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirstOrThrow();
    assert.equal(Number(newest.priority), 1, 'Priority 1 sent with the schedule');

    assert.deepEqual(dialogs, []);
    assert.deepEqual(errors, [], 'the browser console shows errors');
  },
);
