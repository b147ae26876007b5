/**
 * The console's record pages of issue 30 in real headless Chromium (test/console/browser.ts: a real
 * server on SQLite with the sandbox carrier, a demo account): contacts, custom fields, groups and
 * numbers, whole, tried as a new user would. One console session; one subtest per defect or
 * feature, in order, each asserting what the page shows and, where it matters, what the API holds.
 *
 * - defect 1: a contact is created, opened (`#/contacts/<id>`), edited (only the changed fields
 *   are sent) and deleted after a confirm that names it (Cancel keeps it); Groups → Members takes a
 *   new number (`+15550000000`): the console offers to create the contact and adds it, never
 *   "Object not found"; a contact picked with the server-search picker is added too; Remove offers
 *   Undo; after Save, Cancel, Remove and Delete the focus is never left on <body>;
 * - defect 1, paging and search: 250 contacts show "1–20 of 250 contacts", the page lives in the
 *   URL (Next, reload, Back), the server search finds contact #237 by name; Back and reload keep
 *   the open contact and the list page;
 * - defect 2: custom fields (create, rename, a contact's value, delete with a confirm);
 * - defect 3: a group with a keyword (create, open, edit with a parent group, delete with a confirm
 *   saying its members stay); "Fname cannot be blank." next to Name with what it means, and a
 *   contact's "Number is invalid." next to Number;
 * - defect 4: the numbers page, every field of every number and its status in words;
 * - sender pools (docs/API.md §17): each number's limits and today's use, its limits edited (a 422
 *   next to its field, Save, Cancel), what the API then holds.
 *
 * checkPage on every page changed (no horizontal scroll at 375 and 1440 px, axe clean); no browser
 * dialog, no console error, nothing from another origin.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { checkPage, frames, signIn, startConsole, typeOnArrival, until } from './browser.ts';

const DATE_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

/** The fragment of the page's URL (`#/contacts/12?page=3`). */
function hashOf(page: Page): string {
  return new URL(page.url()).hash;
}

/** The element that has the focus: its tag, and its text (trimmed, first 80 characters). */
async function focused(page: Page): Promise<{ tag: string; text: string }> {
  return JSON.parse(
    String(
      await page.evaluate(
        'JSON.stringify({ tag: document.activeElement ? document.activeElement.tagName : "", text: (document.activeElement ? document.activeElement.textContent || "" : "").trim().slice(0, 80) })',
      ),
    ),
  ) as { tag: string; text: string };
}

/** Waits (2 s at most) until the focus is on an element, not <body>: `what` names the moment. */
async function notOnBody(page: Page, what: string): Promise<void> {
  await until(async () => (await focused(page)).tag !== 'BODY', what, 10_000);
}

test('console records: contacts, custom fields, groups and numbers, whole, in Chromium', { timeout: 300_000 }, async (t) => {
  const session = await startConsole(t);
  if (session === undefined) return;
  const { page, demo, base } = session;
  /** A call to the API with the demo's key (not through the console): what the server holds. */
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}/v1/${path}${path.includes('?') ? '&' : '?'}access_token=${demo.token}`, {
      method,
      ...(body === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, json: text === '' ? undefined : JSON.parse(text) };
  };
  /** Opens a place of the console (`contacts/12`) and waits for its heading. */
  const open = async (place: string, heading: string | RegExp) => {
    await page.goto(`${base}/console#/${place}`);
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  };
  const listRange = (noun: string) => page.getByRole('navigation', { name: `Pages of ${noun}` }).getByTestId('range');
  await signIn(session);

  let newcomersId = 0;

  await t.test(
    'defect 1: a contact is created, opened, edited (only what changed is sent) and deleted after a confirm naming it',
    async () => {
      await open('contacts', 'Contacts');
      const form = page.getByRole('form', { name: 'Add a contact' });
      await form.getByLabel('Number', { exact: true }).fill('+1 202 555 0190');
      await form.getByLabel('First name').fill('Ada');
      await form.getByLabel('Last name').fill('Lovelace');
      await form.getByLabel('Email').fill('ada@example.com');
      await form.getByLabel('City').fill('London');
      await form.getByLabel('Zip').fill('N1 9GU');
      await form.getByLabel('Birthday').fill('1990-12-10');
      await form.getByRole('button', { name: 'Add contact' }).click();
      await page.getByRole('heading', { level: 1, name: 'Ada Lovelace' }).waitFor();
      const found = await api('GET', 'contacts/find?number=12025550190');
      assert.equal(found.status, 200);
      const id = String(found.json.Id);
      assert.equal(hashOf(page), `#/contacts/${id}`);
      assert.deepEqual(
        [found.json.FirstName, found.json.LastName, found.json.Email, found.json.City, found.json.Zip, found.json.BirthDay],
        ['Ada', 'Lovelace', 'ada@example.com', 'London', 'N1 9GU', '1990-12-10'],
      );
      const details = page.getByTestId('contact-details');
      assert.match(await details.innerText(), /\+12025550190/);
      assert.match(await details.innerText(), /1990-12-10/);
      for (const time of await details.locator('time').allInnerTexts()) assert.match(time, DATE_TIME);
      await until(async () => (await focused(page)).tag === 'H1', 'the new contact page focusing its heading', 10_000);
      await page.getByTestId('consent').getByText('No change of opt-out yet.').waitFor();

      // Edit: only the city changes, and only the city is sent.
      // Cancel closes the form without a change, and the focus goes to the heading, not <body>.
      await page.getByRole('button', { name: 'Edit contact' }).click();
      await page.getByRole('form', { name: 'Edit contact' }).getByRole('button', { name: 'Cancel' }).click();
      await until(async () => (await focused(page)).tag === 'H1', 'the focus on the heading after Cancel', 10_000);
      await page.getByRole('button', { name: 'Edit contact' }).click();
      const edit = page.getByRole('form', { name: 'Edit contact' });
      await edit.getByLabel('City').fill('Paris');
      const sent = page.waitForRequest((r) => r.url().includes('/v1/contacts/update'));
      await edit.getByRole('button', { name: 'Save' }).click();
      assert.deepEqual((await sent).postDataJSON(), { City: 'Paris' });
      await page.getByTestId('status').filter({ hasText: 'Saved.' }).waitFor();
      await until(async () => (await focused(page)).text === 'Saved.', 'the focus on the status after Save', 10_000);
      await until(async () => /Paris/.test(await details.innerText()), 'the saved city on the contact page', 10_000);
      assert.equal((await api('GET', `contacts/view?id=${id}`)).json.City, 'Paris');
      await checkPage(page, 'contact');

      // Delete: the question names the contact and what goes with it; Cancel keeps it.
      await page.getByRole('button', { name: 'Delete contact' }).click();
      const confirm = page.getByRole('group', { name: 'Confirm' });
      const question = await confirm.locator('p').innerText();
      assert.match(question, /Ada Lovelace/);
      assert.match(question, /\+12025550190/);
      assert.match(question, /group memberships/);
      assert.match(question, /custom field values/);
      assert.match(question, /messages stay/);
      await confirm.getByRole('button', { name: 'Cancel' }).click();
      await confirm.waitFor({ state: 'detached' });
      await until(
        async () => (await focused(page)).tag === 'BUTTON',
        'the focus back on Delete contact after Cancel (not on <body>)',
        10_000,
      );
      assert.equal((await focused(page)).text, 'Delete contact');
      assert.equal((await api('GET', `contacts/view?id=${id}`)).status, 200, 'Cancel deleted the contact');
      await page.getByRole('button', { name: 'Delete contact' }).click();
      await confirm.getByRole('button', { name: 'Delete contact' }).click();
      await page.getByRole('heading', { level: 1, name: 'Contacts' }).waitFor();
      assert.equal(hashOf(page), '#/contacts');
      await page.getByTestId('status').filter({ hasText: 'Deleted contact Ada Lovelace' }).waitFor();
      assert.equal((await api('GET', `contacts/view?id=${id}`)).status, 404);
    },
  );

  await t.test(
    'contacts/erase: Erase… asks first, naming what goes and what stays; Cancel keeps; Erase erases (docs/API.md §10.2.1)',
    async () => {
      const created = await api('POST', 'contacts/create', { Number: '+1 202 555 0191', FirstName: 'Grace', LastName: 'Hopper' });
      assert.equal(created.status, 201);
      const id = String(created.json.Id);
      const sent = await api('POST', 'sms/send', { MobilePhone: '+12025550191', Message: 'Grace, your badge is ready' });
      assert.equal(sent.status, 201);
      await open(`contacts/${id}`, 'Grace Hopper');
      const erase = page.getByRole('button', { name: /^Erase the data of/ });
      await erase.click();
      const confirm = page.getByRole('group', { name: 'Confirm' });
      const question = await confirm.locator('p').innerText();
      for (const words of [
        /Grace Hopper/,
        /\+12025550191/,
        /custom field values/,
        /group memberships/,
        /“erased”/,
        /SHA-256/,
        /cannot be undone/,
      ])
        assert.match(question, words);
      await confirm.getByRole('button', { name: 'Cancel' }).click();
      await confirm.waitFor({ state: 'detached' });
      await until(async () => (await focused(page)).tag === 'BUTTON', 'the focus back on Erase… after Cancel (not on <body>)', 10_000);
      assert.equal((await api('GET', `contacts/view?id=${id}`)).status, 200, 'Cancel erased the contact');
      await erase.click();
      await confirm.getByRole('button', { name: 'Erase', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Contacts' }).waitFor();
      await page.getByTestId('status').filter({ hasText: 'Erased the data of Grace Hopper' }).waitFor();
      assert.equal((await api('GET', 'contacts/find?number=12025550191')).status, 404);
      const message = await api('GET', `sms/view?id=${(sent.json as { Id: number }[])[0]!.Id}`);
      assert.deepEqual([message.json.MobilePhone, message.json.Message], ['erased', '']);
    },
  );

  await t.test(
    'defect 1: Add member takes a new number +15550000000 (create the contact and add it), or a contact picked by a server search; Remove offers Undo',
    async () => {
      const created = await api('POST', 'groups/create', { fname: 'Newcomers' });
      assert.equal(created.status, 201);
      newcomersId = created.json.Id as number;
      await open(`groups/${newcomersId}`, 'Newcomers');
      const members = page.getByRole('region', { name: 'Members' });
      await members.getByText('No members.').waitFor();
      const add = page.getByRole('form', { name: 'Add a member' });
      await add.getByLabel('Number (any format)').fill('+15550000000');
      await add.getByRole('button', { name: 'Add member' }).click();
      const offer = page.getByTestId('create-offer');
      await offer.waitFor();
      assert.match(await offer.innerText(), /No contact has the number \+15550000000/);
      assert.equal(await page.getByText(/Object not found/).count(), 0, '"Object not found" is shown');
      await offer.getByLabel('First name').fill('Nia');
      await offer.getByRole('button', { name: 'Create the contact and add it' }).click();
      await members.locator('[data-testid="member"][data-number="15550000000"]').waitFor();
      await page.getByTestId('status').filter({ hasText: 'Created contact Nia' }).waitFor();
      const contact = await api('GET', 'contacts/find?number=15550000000');
      assert.equal(contact.status, 200);
      assert.equal(contact.json.FirstName, 'Nia');
      assert.deepEqual(contact.json.GroupIds, [newcomersId]);
      assert.equal(await page.getByText(/Object not found/).count(), 0);

      // A contact picked with the search picker (the server searches, here by the number's digits).
      const demoContact = demo.contacts[7]!;
      await add.getByLabel('Search contacts').fill(demoContact.Number);
      const picker = add.getByLabel('Contact', { exact: true });
      await picker.locator(`option[value="${demoContact.Id}"]`).waitFor({ state: 'attached' });
      await until(
        async () => (await add.getByTestId('member-picker-range').innerText()).startsWith('1–1 of 1 contacts'),
        'the search result',
      );
      await picker.selectOption(String(demoContact.Id));
      await add.getByRole('button', { name: 'Add member' }).click();
      await members.locator(`[data-testid="member"][data-number="${demoContact.Number}"]`).waitFor();
      assert.deepEqual(
        ((await api('GET', `groups/view?id=${newcomersId}`)).json.PhoneNumberIds as number[]).sort(),
        [contact.json.Id, demoContact.Id].sort(),
      );
      await members.getByRole('navigation', { name: 'Pages of members' }).getByText('1–2 of 2 members').waitFor();
      await checkPage(page, 'group-members');

      // Remove is undoable: the status offers Undo, which adds the same contact back.
      const row = members.locator(`[data-testid="member"][data-number="${demoContact.Number}"]`);
      await row.getByRole('button', { name: /^Remove/ }).click();
      await row.waitFor({ state: 'detached' });
      const status = page.getByTestId('status').filter({ hasText: 'Removed' });
      await status.waitFor();
      await notOnBody(page, 'the focus fell to <body> after Remove');
      assert.deepEqual((await api('GET', `groups/view?id=${newcomersId}`)).json.PhoneNumberIds, [contact.json.Id]);
      await status.getByRole('button', { name: 'Undo' }).click();
      await row.waitFor();
      assert.deepEqual(
        ((await api('GET', `groups/view?id=${newcomersId}`)).json.PhoneNumberIds as number[]).sort(),
        [contact.json.Id, demoContact.Id].sort(),
      );
      await notOnBody(page, 'the focus fell to <body> after Undo');
    },
  );

  let contact237 = 0;

  await t.test(
    'defect 1: paging and search: 250 contacts show "1–20 of 250 contacts", the page is in the URL, a server search finds contact #237 by name',
    async () => {
      const total = Number((await api('GET', 'contacts/index?per-page=1')).headers.get('X-Pagination-Total-Count'));
      const rows = ['Number,FirstName,LastName'];
      for (let n = total + 1; n <= 250; n++)
        rows.push(`+1202555${String(3000 + n).padStart(4, '0')},${n === 237 ? 'Quintessa' : 'Person'},Number${n}`);
      const imported = await fetch(`${base}/v1/contacts/import?access_token=${demo.token}`, {
        method: 'POST',
        headers: { 'Content-Type': 'text/csv' },
        body: `${rows.join('\n')}\n`,
      });
      assert.equal(imported.status, 200);
      assert.equal(((await imported.json()) as { Created: number }).Created, 250 - total);
      contact237 = Number((await api('GET', `contacts/find?number=+1202555${3000 + 237}`)).json.Id);

      await open('contacts', 'Contacts');
      await until(async () => (await listRange('contacts').innerText()) === '1–20 of 250 contacts · page 1 of 13', 'the range of page 1');
      assert.equal(await page.getByTestId('contact').count(), 20);
      await page.getByRole('navigation', { name: 'Pages of contacts' }).getByRole('button', { name: 'Next' }).click();
      await until(async () => (await listRange('contacts').innerText()).startsWith('21–40 of 250 contacts'), 'the range of page 2');
      assert.equal(hashOf(page), '#/contacts?page=2');
      await page.reload();
      await until(async () => (await listRange('contacts').innerText()).startsWith('21–40 of 250 contacts'), 'page 2 after a reload');
      await page.goBack();
      await until(async () => (await listRange('contacts').innerText()).startsWith('1–20 of 250 contacts'), 'page 1 after Back');

      // The server's search: contains, case-insensitive; the filter is in the URL.
      const filters = page.getByRole('form', { name: 'Search contacts' });
      await filters.getByLabel('Search (name, email or number)').fill('quintessa');
      await filters.getByRole('button', { name: 'Search' }).click();
      await until(async () => (await listRange('contacts').innerText()).startsWith('1–1 of 1 contacts'), 'the search result');
      assert.equal(hashOf(page), '#/contacts?Search=quintessa');
      const hit = page.getByTestId('contact');
      assert.equal(await hit.count(), 1);
      assert.match(await hit.innerText(), /Quintessa Number237/);
      await page.reload();
      await until(async () => (await listRange('contacts').innerText()).startsWith('1–1 of 1 contacts'), 'the search after a reload');
      assert.equal(await filters.getByLabel('Search (name, email or number)').inputValue(), 'quintessa');
      // The opt-out filter, in the URL too.
      await filters.getByLabel('Search (name, email or number)').fill('');
      await filters.getByLabel('Opt-out').selectOption('1');
      await filters.getByRole('button', { name: 'Search' }).click();
      const optedOut = Number((await api('GET', 'contacts/index?per-page=1&OptedOut=1')).headers.get('X-Pagination-Total-Count'));
      await until(
        async () => (await listRange('contacts').innerText()).startsWith(`1–${Math.min(20, optedOut)} of ${optedOut} contacts`),
        'the opted-out contacts',
      );
      assert.equal(hashOf(page), '#/contacts?OptedOut=1');
      for (const state of await page.getByTestId('opt-out').allInnerTexts()) assert.equal(state, 'Opted out');
      await checkPage(page, 'contacts');
    },
  );

  await t.test('defect 1: paging: Back and reload keep the open contact and the list page', async () => {
    await open('contacts?page=12', 'Contacts');
    await until(async () => (await listRange('contacts').innerText()).startsWith('221–240 of 250 contacts'), 'page 12');
    const link = page.getByTestId('contact').filter({ hasText: 'Quintessa' }).getByRole('link');
    await link.click();
    await page.getByRole('heading', { level: 1, name: 'Quintessa Number237' }).waitFor();
    assert.equal(hashOf(page), `#/contacts/${contact237}?page=12`);
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Quintessa Number237' }).waitFor();
    await page.goBack();
    await page.getByRole('heading', { level: 1, name: 'Contacts' }).waitFor();
    await until(async () => (await listRange('contacts').innerText()).startsWith('221–240 of 250 contacts'), 'page 12 after Back');
    await page.goForward();
    await page.getByRole('heading', { level: 1, name: 'Quintessa Number237' }).waitFor();
    // The contact page's own link back keeps the list's page.
    await page.getByRole('link', { name: 'All contacts' }).click();
    await until(async () => (await listRange('contacts').innerText()).startsWith('221–240 of 250 contacts'), 'page 12 from "All contacts"');
    assert.equal(hashOf(page), '#/contacts?page=12');
  });

  await t.test(
    "defect 2: custom fields: create one, rename it, a contact's value, delete it after a confirm saying every value goes",
    async () => {
      await open('fields', 'Custom fields');
      const create = page.getByRole('form', { name: 'Add a custom field' });
      await create.getByLabel('Field name').fill('Membership');
      await create.getByRole('button', { name: 'Add field' }).click();
      const card = page.locator('[data-testid="field"][data-name="Membership"]');
      await card.waitFor();
      const fields = (await api('GET', 'custom-contact-fields/index')).json as { Id: number; Name: string }[];
      const fieldId = fields.find((f) => f.Name === 'Membership')!.Id;
      await checkPage(page, 'fields');
      await card.getByRole('button', { name: 'Rename Membership' }).click();
      await card.getByLabel('New name').fill('Membership level');
      await card.getByRole('button', { name: 'Save' }).click();
      const renamed = page.locator('[data-testid="field"][data-name="Membership level"]');
      await renamed.waitFor();
      assert.equal((await api('GET', `custom-contact-fields/view?id=${fieldId}`)).json.Name, 'Membership level');

      // A contact's value for it, on the contact's page.
      const contact = demo.contacts[2]!;
      await open(`contacts/${contact.Id}`, /./);
      const values = page.getByRole('region', { name: 'Custom fields' });
      const value = values.locator(`[data-testid="field-value"][data-field="${fieldId}"]`);
      const input = value.getByRole('textbox', { name: 'Membership level' });
      await input.fill('Gold');
      await value.getByRole('button', { name: 'Save Membership level' }).click();
      await value.getByText('Saved.').waitFor();
      const entries = (await api('GET', `custom-contact-fields-entry/index?frcontact=${contact.Id}&frfield=${fieldId}`)).json as {
        Id: number;
        Entry: string;
      }[];
      assert.deepEqual(
        entries.map((e) => e.Entry),
        ['Gold'],
      );
      await input.fill('Platinum');
      await value.getByRole('button', { name: 'Save Membership level' }).click();
      await until(
        async () => ((await api('GET', `custom-contact-fields-entry/view?id=${entries[0]!.Id}`)).json.Entry as string) === 'Platinum',
        'the value updated in place',
      );
      await checkPage(page, 'contact-fields');
      // Remove value asks first, naming the value; then the contact has none.
      await value.getByRole('button', { name: 'Remove the value of Membership level' }).click();
      const ask = value.getByRole('group', { name: 'Confirm' });
      assert.match(await ask.locator('p').innerText(), /“Membership level” \(“Platinum”\)/);
      await ask.getByRole('button', { name: 'Remove value' }).click();
      await value.getByText('Value removed.').waitFor();
      assert.equal((await api('GET', `custom-contact-fields-entry/view?id=${entries[0]!.Id}`)).status, 404);
      await until(async () => (await input.inputValue()) === '', 'the input emptied');
      await notOnBody(page, 'the focus fell to <body> after Remove value');
      await input.fill('Gold');
      await value.getByRole('button', { name: 'Save Membership level' }).click();
      await value.getByText('Saved.').waitFor();
      const entryId = (
        (await api('GET', `custom-contact-fields-entry/index?frcontact=${contact.Id}&frfield=${fieldId}`)).json as { Id: number }[]
      )[0]!.Id;

      // Delete the field: the confirm says every contact's value goes.
      await open('fields', 'Custom fields');
      await renamed.getByText('1 contact has a value').waitFor();
      await renamed.getByRole('button', { name: 'Delete Membership level' }).click();
      const confirm = renamed.getByRole('group', { name: 'Confirm' });
      const question = await confirm.locator('p').innerText();
      assert.match(question, /Membership level/);
      assert.match(question, /Every contact's value for it goes/);
      await confirm.getByRole('button', { name: 'Cancel' }).click();
      assert.equal((await api('GET', `custom-contact-fields/view?id=${fieldId}`)).status, 200, 'Cancel deleted the field');
      await renamed.getByRole('button', { name: 'Delete Membership level' }).click();
      await confirm.getByRole('button', { name: 'Delete field' }).click();
      await renamed.waitFor({ state: 'detached' });
      assert.equal((await api('GET', `custom-contact-fields/view?id=${fieldId}`)).status, 404);
      assert.equal((await api('GET', `custom-contact-fields-entry/view?id=${entryId}`)).status, 404);
      await notOnBody(page, 'the focus fell to <body> after the delete');
    },
  );

  await t.test(
    "what is typed in a page's first frame stays: a filter, and a contact's value (an effect after the paint wiped it)",
    async () => {
      // The contacts search, typed as the list page appears.
      await open('overview', 'Overview');
      await typeOnArrival(page, '#contacts-search', 'Ada');
      await page.evaluate('location.hash = "#/contacts"');
      await page.getByRole('heading', { level: 1, name: 'Contacts' }).waitFor();
      await frames(page);
      assert.equal(await page.locator('#contacts-search').inputValue(), 'Ada');
      // A contact's value of a custom field, typed as the contact's page draws it, is what Save sends.
      const made = await api('POST', 'custom-contact-fields/create', { fname: 'Early' });
      assert.equal(made.status, 201);
      const fieldId = made.json.Id as number;
      const contact = demo.contacts[3]!;
      await typeOnArrival(page, `#value-${fieldId}`, 'First frame');
      await page.evaluate(`location.hash = "#/contacts/${contact.Id}"`);
      const value = page.locator(`[data-testid="field-value"][data-field="${fieldId}"]`);
      await value.waitFor();
      await frames(page);
      assert.equal(await value.getByRole('textbox', { name: 'Early' }).inputValue(), 'First frame');
      await value.getByRole('button', { name: 'Save Early' }).click();
      await value.getByText('Saved.').waitFor();
      const entries = (await api('GET', `custom-contact-fields-entry/index?frcontact=${contact.Id}&frfield=${fieldId}`)).json as {
        Entry: string;
      }[];
      assert.deepEqual(
        entries.map((e) => e.Entry),
        ['First frame'],
      );
      assert.equal((await api('DELETE', `custom-contact-fields/delete?id=${fieldId}`)).status, 204);
    },
  );

  await t.test(
    'defect 3: a group with a keyword is created, opened, edited (a parent group) and deleted after a confirm saying its members stay',
    async () => {
      const reserved = await api('POST', 'keyword/reserve', { Keyword: 'RECJOIN', Number: demo.numbers[0]!.Number });
      assert.equal(reserved.status, 201);
      const keywordId = reserved.json[0].Id as number;
      await open('groups', 'Groups');
      const create = page.getByRole('form', { name: 'Create a group' });
      await create.getByLabel('Name', { exact: true }).fill('Book club');
      await create.getByLabel('Note').fill('Meets on Mondays');
      const keyword = create.getByLabel('Keyword');
      await keyword.locator(`option[value="${keywordId}"]`).waitFor({ state: 'attached' });
      await keyword.selectOption(String(keywordId));
      await create.getByRole('button', { name: 'Create group' }).click();
      await page.getByRole('heading', { level: 1, name: 'Book club' }).waitFor();
      const groupId = Number(hashOf(page).replace(/^#\/groups\//, ''));
      let group = (await api('GET', `groups/view?id=${groupId}`)).json;
      assert.deepEqual([group.Name, group.Note, group.KeywordId, group.ParentId], ['Book club', 'Meets on Mondays', keywordId, 0]);
      const details = page.getByTestId('group-details');
      assert.match(await details.innerText(), /RECJOIN/);
      for (const time of await details.locator('time').allInnerTexts()) assert.match(time, DATE_TIME);

      // Edit: a new name and a parent picked with the search picker; only these are sent.
      await page.getByRole('button', { name: 'Edit group' }).click();
      const edit = page.getByRole('form', { name: 'Edit group' });
      await edit.getByLabel('Name', { exact: true }).fill('Book club (Mondays)');
      await edit.getByLabel('Search groups').fill('newcom');
      const parent = edit.getByLabel('Parent group', { exact: true });
      await parent.locator(`option[value="${newcomersId}"]`).waitFor({ state: 'attached' });
      await parent.selectOption(String(newcomersId));
      const sent = page.waitForRequest((r) => r.url().includes('/v1/groups/update'));
      await edit.getByRole('button', { name: 'Save' }).click();
      assert.deepEqual((await sent).postDataJSON(), { fname: 'Book club (Mondays)', ParentId: newcomersId });
      await page.getByRole('heading', { level: 1, name: 'Book club (Mondays)' }).waitFor();
      group = (await api('GET', `groups/view?id=${groupId}`)).json;
      assert.deepEqual(
        [group.Name, group.Note, group.KeywordId, group.ParentId],
        ['Book club (Mondays)', 'Meets on Mondays', keywordId, newcomersId],
      );
      await details.getByRole('link', { name: 'Newcomers' }).waitFor();
      await checkPage(page, 'group');

      // Delete: the question names the group and says its members stay.
      const member = demo.contacts[3]!;
      assert.equal((await api('POST', `groups/add-contacts?id=${groupId}`, { PhoneNumberIds: [member.Id] })).status, 200);
      await page.reload();
      await page.getByRole('heading', { level: 1, name: 'Book club (Mondays)' }).waitFor();
      await page.getByRole('region', { name: 'Members' }).locator(`[data-testid="member"][data-number="${member.Number}"]`).waitFor();
      await page.getByRole('button', { name: 'Delete group' }).click();
      const confirm = page.getByRole('group', { name: 'Confirm' });
      const question = await confirm.locator('p').innerText();
      assert.match(question, /Book club \(Mondays\)/);
      assert.match(question, /1 member/);
      assert.match(question, /stay/);
      await confirm.getByRole('button', { name: 'Cancel' }).click();
      assert.equal((await api('GET', `groups/view?id=${groupId}`)).status, 200, 'Cancel deleted the group');
      await page.getByRole('button', { name: 'Delete group' }).click();
      await confirm.getByRole('button', { name: 'Delete group' }).click();
      await page.getByRole('heading', { level: 1, name: 'Groups' }).waitFor();
      await page.getByTestId('status').filter({ hasText: 'Deleted group Book club (Mondays)' }).waitFor();
      assert.equal((await api('GET', `groups/view?id=${groupId}`)).status, 404);
      assert.equal((await api('GET', `contacts/view?id=${member.Id}`)).status, 200, 'the member went with the group');
    },
  );

  await t.test(
    'defect 3: "Fname cannot be blank." next to the Name field with what it means; a contact\'s "Number is invalid." next to Number',
    async () => {
      await open('groups', 'Groups');
      const create = page.getByRole('form', { name: 'Create a group' });
      await create.getByRole('button', { name: 'Create group' }).click();
      const error = create.locator('.field-error[data-field="fname"]');
      await error.waitFor();
      assert.equal(await error.innerText(), 'Give the group a name. (The API said: Fname cannot be blank.)');
      const name = create.getByLabel('Name', { exact: true });
      assert.equal(await name.getAttribute('aria-invalid'), 'true');
      assert.equal(await name.getAttribute('aria-describedby'), await error.getAttribute('id'));
      await name.fill('ab');
      await create.getByLabel('Note').fill('x');
      await create.getByRole('button', { name: 'Create group' }).click();
      await error.filter({ hasText: 'at least 3 characters' }).waitFor();
      assert.equal(
        await error.innerText(),
        'The name needs at least 3 characters. (The API said: Fname should contain at least 3 characters.)',
      );
      assert.equal(
        await create.locator('.field-error[data-field="fnote"]').innerText(),
        'A note needs at least 3 characters, or none. (The API said: Fnote should contain at least 3 characters.)',
      );
      await checkPage(page, 'groups-errors');

      await open('contacts', 'Contacts');
      const contact = page.getByRole('form', { name: 'Add a contact' });
      await contact.getByLabel('Number', { exact: true }).fill('12');
      await contact.getByLabel('Email').fill('not-an-email');
      await contact.getByRole('button', { name: 'Add contact' }).click();
      const number = contact.locator('.field-error[data-field="Number"]');
      await number.waitFor();
      assert.match(await number.innerText(), /^This is not a phone number: .* \(The API said: Number is invalid\.\)$/);
      assert.match(
        await contact.locator('.field-error[data-field="Email"]').innerText(),
        /\(The API said: Email is not a valid email address\.\)$/,
      );
      // A number that is already a contact's: the message quotes it as sent.
      await contact.getByLabel('Number', { exact: true }).fill(`+${demo.contacts[0]!.Number}`);
      await contact.getByLabel('Email').fill('');
      await contact.getByRole('button', { name: 'Add contact' }).click();
      await number.filter({ hasText: 'already been taken' }).waitFor();
      assert.match(
        await number.innerText(),
        /^Another contact already has this number\. .*\(The API said: Number "\+\d+" has already been taken\.\)$/,
      );
      await checkPage(page, 'contacts-errors');
    },
  );

  await t.test('defect 4: the numbers page shows every number with every field and its status in words, paged', async () => {
    await open('numbers', 'Numbers');
    const rows = page.getByTestId('number');
    await until(async () => (await rows.count()) === demo.numbers.length, 'the numbers');
    await listRange('numbers')
      .filter({ hasText: `1–${demo.numbers.length} of ${demo.numbers.length} numbers` })
      .waitFor();
    const words: Record<number, RegExp> = { 0: /^Active/, 1: /^Inactive/, 301: /^Temporarily blocked/, 302: /^Permanently blocked/ };
    for (const n of demo.numbers) {
      const row = page.locator(`[data-testid="number"][data-number="${n.Number}"]`);
      assert.match(await row.getByTestId('status-words').innerText(), words[n.Status_Id]!);
      assert.equal(await row.getByTestId('status-id').innerText(), String(n.Status_Id));
      assert.equal(await row.getByTestId('status-description').innerText(), n.Status_Description);
      const blocked = await row.getByTestId('blocked').innerText();
      if (n.Blocked_Date === null) assert.equal(blocked, 'Not blocked');
      else assert.match(blocked, DATE_TIME);
    }
    await checkPage(page, 'numbers');
  });

  await t.test(
    "sender pools: each number's limits and today's use (numbers/usage); its limits edited (numbers/view, numbers/update)",
    async () => {
      const long = demo.numbers.find((n) => n.Status_Id === 0 && n.Number.length > 6)!.Number;
      const usage = async () =>
        ((await api('GET', 'numbers/usage')).json as { Number: string; MessagesToday: number; RecipientsThisMonth: number }[]).find(
          (u) => u.Number === long,
        )!;
      const before = await usage();
      // Two more messages from it today, to two new recipients.
      for (const to of ['+12025550181', '+12025550182'])
        assert.equal((await api('POST', 'sms/send', { MobilePhone: to, Message: 'hi', Number: long })).status, 201);
      const today = before.MessagesToday + 2;
      const month = before.RecipientsThisMonth + 2;
      const after = await usage();
      assert.deepEqual([after.MessagesToday, after.RecipientsThisMonth], [today, month]);
      // The numbers page is open already (defect 4): leave it, so that it reads its lists again.
      await open('contacts', 'Contacts');
      await open('numbers', 'Numbers');
      const row = page.locator(`[data-testid="number"][data-number="${long}"]`);
      await row
        .getByTestId('use')
        .filter({ hasText: `${today} messages today · ${month} recipients this month` })
        .waitFor();
      assert.equal(await row.getByTestId('limits').innerText(), 'No limits');
      // Edit: the form reads the number's limits, the API's message shows next to its field.
      await row.getByRole('button', { name: `Edit the limits of +${long}` }).click();
      const form = page.getByRole('form', { name: `Limits of +${long}` });
      await until(async () => (await form.getByLabel('Max messages per day').inputValue()) === '0', 'the limits read');
      await notOnBody(page, 'the form opened');
      await form.getByLabel('Max messages per day').fill('-1');
      await form.getByRole('button', { name: 'Save limits' }).click();
      await form.locator('[data-field="MaxPerDay"]').filter({ hasText: 'Max Per Day must be no less than 0.' }).waitFor();
      await checkPage(page, 'numbers-limits');
      await form.getByLabel('Max messages per day').fill('300');
      await form.getByLabel('Max recipients per month').fill('200');
      await form.getByRole('button', { name: 'Save limits' }).click();
      await page
        .getByTestId('notice')
        .filter({ hasText: `Limits of +${long} saved: 300 a day · 200 recipients a month.` })
        .waitFor();
      await notOnBody(page, 'the limits saved');
      await row.getByTestId('limits').filter({ hasText: '300 a day · 200 recipients a month' }).waitFor();
      await row
        .getByTestId('use')
        .filter({ hasText: `${today} of 300 messages today · ${month} of 200 recipients this month` })
        .waitFor();
      // The API holds them; only the fields changed were sent (MaxPerSecond stayed 0).
      const held = await api('GET', `numbers/view?number=${long}`);
      assert.deepEqual([held.json.MaxPerSecond, held.json.MaxPerDay, held.json.MaxRecipientsPerMonth], [0, 300, 200]);
      // Cancel closes the form without a change; the focus goes to the heading.
      await row.getByRole('button', { name: `Edit the limits of +${long}` }).click();
      await until(async () => (await form.getByLabel('Max messages per day').inputValue()) === '300', 'the limits read again');
      await form.getByLabel('Max messages per second').fill('9');
      await form.getByRole('button', { name: 'Cancel' }).click();
      await form.waitFor({ state: 'detached' });
      await notOnBody(page, 'the form cancelled');
      assert.equal((await api('GET', `numbers/view?number=${long}`)).json.MaxPerSecond, 0);
      await checkPage(page, 'numbers-after-limits');
    },
  );

  await t.test('every page: no browser dialog, no console error, nothing from another origin', () => {
    assert.deepEqual(session.dialogs, []);
    // Chromium logs every 4xx answer; the 404 of contacts/find (a new number) and the 422s of the forms are expected.
    const expected =
      /^Failed to load resource: the server responded with a status of (404 \(Not Found\)|422 \(Data Validation Failed\.\))$/;
    assert.deepEqual(
      session.errors.filter((e) => !expected.test(e)),
      [],
    );
    assert.deepEqual(session.outside, []);
  });
});
