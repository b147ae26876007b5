/**
 * Issue 30, the resource pages, in real headless Chromium (test/console/browser.ts: a real server on
 * SQLite with the sandbox carrier and a demo account), ONE console session, started WITHOUT
 * MSGSVC_WEBHOOK_ALLOW_PRIVATE (so that a loopback Url is refused as a person would meet it), one
 * subtest per defect or feature, in order:
 *
 * - defect 2, webhooks: the create reply's secret shown once, kept through another submit until
 *   Done, the form cleared; a webhook opened at `#/webhooks/<id>`, its Url and Events edited; paused
 *   (Active 0, no new delivery) and resumed; the deliveries of a webhook whose host does not resolve
 *   listed and one redelivered; the delete asked first (Cancel keeps it), then done (the API agrees,
 *   its deliveries gone);
 * - defect 3: Release keyword asks first, naming the keyword, its number and the groups it feeds;
 *   Delete media asks first and names the templates that use it and those it leaves with no media,
 *   which the template list then shows as "no media: cannot be sent";
 * - defect 9: "Url is invalid." next to the Url field with what it means (and "Url is not a valid
 *   URL."), the keyword's and the template's field errors likewise, the API's words kept exact;
 * - defect 10: the keyword `JOIN NOW` reserved, a group linked to it, "join   now" sent through the
 *   sandbox box: the sender is a member; the keyword edited (keyword/update) with its groups shown;
 * - templates: created with the media picker, edited (mms-templates/update), deleted with a confirm
 *   naming it;
 * - keys, people, audit, settings, security: every record date in one format (`<time>`), the audit's
 *   filter and page kept in the URL through a reload; the settings' SenderSelection (docs/API.md
 *   §17) chosen, saved and read back.
 *
 * checkPage on every page changed (no horizontal scroll at 375 and 1440 px, axe clean); the browser
 * console shows no error but the deliberate 422s, no dialog opens and nothing comes from another origin.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkPage, signIn, startConsole, until } from './browser.ts';

/** A 1×1 transparent PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
/** An answer's JSON, as JSON.parse gives it: the assertions check its shape (eslint.config.js, tests). */
type Json = ReturnType<typeof JSON.parse>;
/** The console's one date format. */
const DATE = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

test(
  'console (issue 30): webhooks, keywords, media and templates whole; dates and paging on keys, people and audit, in Chromium',
  { timeout: 300_000 },
  async (t) => {
    const session = await startConsole(t);
    if (session === undefined) return;
    const { page, base, demo } = session;
    const db = session.store.db;
    const number = demo.numbers[0]!.Number;

    /** A call to the API with the demo account's key: its status and its JSON. */
    async function call(method: string, path: string, body?: unknown): Promise<{ status: number; data: Json }> {
      const response = await fetch(`${base}/v1/${path}${path.includes('?') ? '&' : '?'}access_token=${demo.token}`, {
        method,
        ...(body === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
      });
      const text = await response.text();
      return { status: response.status, data: text === '' ? undefined : JSON.parse(text) };
    }
    /** Uploads the PNG as `name` through the API: its Media record. */
    async function upload(name: string): Promise<{ Id: number }> {
      const form = new FormData();
      form.append('file', new Blob([PNG], { type: 'image/png' }), name);
      const response = await fetch(`${base}/v1/media/upload?access_token=${demo.token}`, { method: 'POST', body: form });
      assert.equal(response.status, 201, await response.clone().text());
      return (await response.json()) as { Id: number };
    }
    /** An inbound text through the sandbox (API): it makes a message.received event. */
    async function inbound(from: string, text: string): Promise<void> {
      const answer = await call('POST', 'sandbox/inbound', { From: from, To: number, Message: text });
      assert.equal(answer.status, 201, JSON.stringify(answer.data));
    }
    /** Opens a page of the navigation and waits for its heading. */
    async function open(link: string, heading: string): Promise<void> {
      await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: link, exact: true }).click();
      await page.getByRole('heading', { name: heading, exact: true, level: 1 }).waitFor();
    }
    /** Waits until the focus is on something other than <body>. */
    async function focusKept(what: string): Promise<void> {
      await until(
        async () => Boolean(await page.evaluate('document.activeElement !== null && document.activeElement !== document.body')),
        `the focus after ${what} (it is on <body>)`,
      );
    }
    /** The texts of the `<time>` elements under `selector`. */
    async function times(selector: string): Promise<string[]> {
      return page.locator(`${selector} time`).allInnerTexts();
    }

    await signIn(session);
    const hookUrl = 'http://unreachable.invalid/hook';
    let hookId = 0;

    await t.test(
      'defect 2: a new webhook shows its secret once; it stays through another submit until Done; the form is cleared',
      async () => {
        await open('Webhooks', 'Webhooks');
        await page.getByLabel('URL', { exact: true }).fill(hookUrl);
        await page.getByRole('checkbox', { name: 'message.received' }).check();
        await page.getByRole('checkbox', { name: 'message.delivered' }).uncheck();
        await page.getByRole('button', { name: 'Add webhook' }).click();
        const once = page.getByTestId('shown-once');
        await once.waitFor();
        const secret = await once.getByTestId('secret').innerText();
        assert.match(secret, /^whsec_\S+$/);
        assert.match(await once.innerText(), /will not be shown again/);
        await once.getByRole('button', { name: 'Copy' }).waitFor();
        assert.equal(await page.getByLabel('URL', { exact: true }).inputValue(), '', 'the create form was not cleared');
        // A second submit of the (cleared) form makes no webhook, says why by the field, and keeps the secret.
        await page.getByRole('button', { name: 'Add webhook' }).click();
        await page.locator('[data-field="Url"]').filter({ hasText: 'Url cannot be blank.' }).waitFor();
        assert.equal(await once.getByTestId('secret').innerText(), secret, 'the secret changed or went');
        const hooks = await call('GET', 'webhooks/index');
        assert.equal(hooks.data.filter((w: { Url: string }) => w.Url === hookUrl).length, 1, 'a second webhook was made');
        hookId = Number(hooks.data.find((w: { Url: string }) => w.Url === hookUrl).Id);
        await page.getByTestId('webhook').filter({ hasText: hookUrl }).waitFor();
        await checkPage(page, 'webhooks');
        await once.getByRole('button', { name: 'Done' }).click();
        await once.waitFor({ state: 'detached' });
        await focusKept('Done');
      },
    );

    await t.test('defect 2: a webhook opens at #/webhooks/<id>; its Url and Events are edited (webhooks/update)', async () => {
      await page.getByRole('link', { name: hookUrl }).click();
      await page.waitForURL(new RegExp(`#/webhooks/${hookId}$`));
      await page.getByRole('heading', { name: `Webhook ${hookId}`, level: 1 }).waitFor();
      const form = page.getByRole('form', { name: 'Edit the webhook' });
      await form.getByLabel('URL', { exact: true }).fill(`${hookUrl}2`);
      await form.getByRole('checkbox', { name: 'message.failed' }).check();
      await form.getByRole('button', { name: 'Save changes' }).click();
      await page.getByTestId('notice').filter({ hasText: 'Saved.' }).waitFor();
      let view = await call('GET', `webhooks/view?id=${hookId}`);
      assert.equal(view.data.Url, `${hookUrl}2`);
      assert.deepEqual([...view.data.Events].sort(), ['message.failed', 'message.received']);
      await form.getByLabel('URL', { exact: true }).fill(hookUrl);
      await form.getByRole('button', { name: 'Save changes' }).click();
      await until(async () => (await call('GET', `webhooks/view?id=${hookId}`)).data.Url === hookUrl, 'the Url saved back');
      // The open webhook is in the URL: a reload comes back to it.
      await page.reload();
      await page.getByRole('heading', { name: `Webhook ${hookId}`, level: 1 }).waitFor();
      view = await call('GET', `webhooks/view?id=${hookId}`);
      assert.equal(await page.getByTestId('webhook-url').innerText(), view.data.Url);
      for (const text of await times('[data-testid="webhook-details"]')) assert.match(text, DATE);
    });

    await t.test(
      'defect 2: Pause makes the webhook Active 0 (no new delivery) and says what happens to pending retries; Resume undoes it',
      async () => {
        await page.getByRole('button', { name: 'Pause', exact: true }).click();
        await until(async () => (await call('GET', `webhooks/view?id=${hookId}`)).data.Active === 0, 'Active 0');
        await page
          .getByTestId('webhook-state')
          .filter({ hasText: /^Paused/ })
          .waitFor();
        assert.match(await page.getByTestId('webhook-state').innerText(), /pending/i);
        await focusKept('Pause');
        await inbound('+12025550181', 'while paused');
        const rows = await db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', hookId).execute();
        assert.equal(rows.length, 0, 'a paused webhook got a delivery');
        await page.getByRole('button', { name: 'Resume', exact: true }).click();
        await until(async () => (await call('GET', `webhooks/view?id=${hookId}`)).data.Active === 1, 'Active 1');
        await page
          .getByTestId('webhook-state')
          .filter({ hasText: /^Active/ })
          .waitFor();
        await focusKept('Resume');
      },
    );

    await t.test("defect 2: an unreachable webhook's deliveries are listed, paged in the URL, and Redeliver queues one again", async () => {
      await inbound('+12025550182', 'hello hook');
      // The host does not resolve: the first attempt fails ("host not found") and is retried later;
      // once its outcome is written (the lease released), it is made Failed (the retries skipped).
      let deliveryId = 0;
      await until(
        async () => {
          const row = await db
            .selectFrom('webhook_deliveries')
            .select(['id', 'attempts', 'last_error', 'lease_token'])
            .where('webhook_id', '=', hookId)
            .where('event', '=', 'message.received')
            .executeTakeFirst();
          deliveryId = Number(row?.id ?? 0);
          return (row?.attempts ?? 0) >= 1 && row?.last_error !== '' && row?.lease_token === null;
        },
        'the first attempt of the delivery',
        30_000,
      );
      const reason = (await db.selectFrom('webhook_deliveries').select('last_error').where('id', '=', deliveryId).executeTakeFirstOrThrow())
        .last_error;
      await db.updateTable('webhook_deliveries').set({ status: 'Failed', due_at: null }).where('id', '=', deliveryId).execute();
      await page.reload();
      const delivery = page.getByTestId('delivery').filter({ hasText: 'message.received' });
      await delivery.filter({ hasText: reason }).waitFor();
      assert.equal(await delivery.getByTestId('delivery-status').innerText(), 'Failed');
      for (const text of await times('[data-testid="delivery"]')) assert.match(text, DATE);
      await page.getByRole('navigation', { name: 'Pages of deliveries' }).getByText('1–1 of 1 deliveries').waitFor();
      await checkPage(page, 'webhook');
      await delivery.getByRole('button', { name: 'Redeliver' }).click();
      await page.locator('[data-testid="delivery"][data-status="Pending"]').filter({ hasText: 'message.received' }).waitFor();
      await focusKept('Redeliver');
      const listed = await call('GET', `webhooks/deliveries?id=${hookId}`);
      assert.equal(listed.data[0].Status, 'Pending');
    });

    await t.test(
      'defect 2: Delete asks first, naming the URL and that its pending deliveries stop; Cancel keeps it; then it is gone',
      async () => {
        await page.getByRole('button', { name: 'Delete webhook' }).click();
        const question = page.getByRole('group', { name: 'Confirm' });
        const text = await question.innerText();
        assert.ok(text.includes(hookUrl), text);
        assert.match(text, /pending deliveries stop/);
        await question.getByRole('button', { name: 'Cancel' }).click();
        assert.equal((await call('GET', `webhooks/view?id=${hookId}`)).status, 200);
        await page.getByRole('button', { name: 'Delete webhook' }).click();
        await page.getByRole('group', { name: 'Confirm' }).getByRole('button', { name: 'Delete webhook' }).click();
        await page.waitForURL(/#\/webhooks$/);
        await page.getByTestId('notice').filter({ hasText: hookUrl }).waitFor();
        assert.equal((await call('GET', `webhooks/view?id=${hookId}`)).status, 404);
        const left = await db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', hookId).execute();
        assert.equal(left.length, 0, 'its deliveries are still there');
        assert.equal(await page.getByTestId('webhook').filter({ hasText: hookUrl }).count(), 0);
        await focusKept('the delete');
      },
    );

    await t.test('defect 3: Release keyword asks first, naming the keyword, its number and the groups it feeds', async () => {
      const reserved = await call('POST', 'keyword/reserve', { Keyword: 'CLUBNEWS', Number: Number(number), AutoreplyMessage: '' });
      assert.equal(reserved.status, 201, JSON.stringify(reserved.data));
      const keywordId = Number(reserved.data[0].Id);
      const group = await call('POST', 'groups/create', { fname: 'Club news readers', KeywordId: keywordId });
      assert.equal(group.status, 201, JSON.stringify(group.data));
      await open('Keywords', 'Keywords');
      const card = page.getByTestId('keyword').filter({ hasText: 'CLUBNEWS' });
      await card.getByText('Club news readers').waitFor();
      await card.getByRole('button', { name: 'Release CLUBNEWS' }).click();
      const text = await card.getByRole('group', { name: 'Confirm' }).innerText();
      for (const part of ['CLUBNEWS', number, 'Club news readers', 'stop getting']) assert.ok(text.includes(part), `${part} in ${text}`);
      await card.getByRole('button', { name: 'Cancel' }).click();
      assert.equal((await call('GET', `keyword/view?id=${keywordId}`)).status, 200, 'Cancel released it');
      await card.getByRole('button', { name: 'Release CLUBNEWS' }).click();
      await card.getByRole('button', { name: 'Release keyword' }).click();
      await card.waitFor({ state: 'detached' });
      assert.equal((await call('GET', `keyword/view?id=${keywordId}`)).status, 404);
      assert.equal((await call('GET', `groups/view?id=${group.data.Id}`)).data.KeywordId, 0);
      await page.getByTestId('notice').filter({ hasText: 'CLUBNEWS' }).waitFor();
      await focusKept('the release');
    });

    await t.test(
      'defect 3: Delete media asks first, names the templates using it and those left with no media; the template list then says so',
      async () => {
        const only = await upload('only.png');
        const shared = await upload('shared.png');
        const one = await call('POST', 'mms-templates/create', { Name: 'Only image', Subject: '', Message: 'a', MediaIds: [only.Id] });
        const two = await call('POST', 'mms-templates/create', {
          Name: 'Two images',
          Subject: '',
          Message: 'b',
          MediaIds: [only.Id, shared.Id],
        });
        assert.equal(one.status, 201);
        assert.equal(two.status, 201);
        await open('Media and templates', 'Media and templates');
        const card = page.locator(`[data-testid="media"][data-id="${only.Id}"]`);
        await until(async () => {
          if ((await card.count()) > 0) return true;
          const next = page.getByRole('navigation', { name: 'Pages of media' }).getByRole('button', { name: 'Next' });
          if (await next.isEnabled()) await next.click();
          return false;
        }, 'only.png in the media list');
        await card.getByText('Only image').first().waitFor();
        await card.getByRole('button', { name: 'Delete only.png' }).click();
        const text = await card.getByRole('group', { name: 'Confirm' }).innerText();
        assert.ok(text.includes('Only image') && text.includes('Two images'), text);
        assert.match(text, /left with no media: Only image\b/);
        assert.ok(!/left with no media:[^.]*Two images/.test(text), text);
        await card.getByRole('button', { name: 'Delete image' }).click();
        await card.waitFor({ state: 'detached' });
        await focusKept('the delete');
        const emptied = page.locator(`[data-testid="template"][data-id="${one.data.Id}"]`);
        await until(async () => {
          if ((await emptied.count()) > 0) return true;
          const next = page.getByRole('navigation', { name: 'Pages of templates' }).getByRole('button', { name: 'Next' });
          if (await next.isEnabled()) await next.click();
          return false;
        }, 'the template in the list');
        await emptied.getByTestId('template-media').filter({ hasText: 'no media: cannot be sent' }).waitFor();
        const kept = page.locator(`[data-testid="template"][data-id="${two.data.Id}"]`);
        assert.match(await kept.getByTestId('template-media').innerText(), /^1 image: shared\.png/);
        assert.deepEqual((await call('GET', `mms-templates/view?id=${one.data.Id}`)).data.MediaIds, []);
        await checkPage(page, 'media');
      },
    );

    await t.test(
      'defect 9: "Url is invalid." is shown next to Url with what it means, the API\'s words kept; the same on keyword and template forms',
      async () => {
        await open('Webhooks', 'Webhooks');
        const url = page.getByLabel('URL', { exact: true });
        await url.fill('http://127.0.0.1:9/x');
        await page.getByRole('checkbox', { name: 'message.received' }).check();
        await page.getByRole('button', { name: 'Add webhook' }).click();
        const problem = page.locator('[data-field="Url"]');
        await problem.filter({ hasText: '(The API said: Url is invalid.)' }).waitFor();
        assert.match(await problem.innerText(), /MSGSVC_WEBHOOK_ALLOW_PRIVATE/);
        assert.match(await problem.innerText(), /private|loopback/);
        assert.equal(await url.getAttribute('aria-invalid'), 'true');
        assert.equal(await url.getAttribute('aria-describedby'), await problem.getAttribute('id'));
        await url.fill('ftp://example.com/x');
        await page.getByRole('button', { name: 'Add webhook' }).click();
        await problem.filter({ hasText: '(The API said: Url is not a valid URL.)' }).waitFor();
        assert.match(await problem.innerText(), /https?:\/\//);
        const hooks = await call('GET', 'webhooks/index');
        assert.equal(hooks.data.length, 0, 'a refused webhook was made');
        await checkPage(page, 'webhooks-errors');

        await open('Keywords', 'Keywords');
        await page.getByLabel('Keyword', { exact: true }).fill('STOP');
        await page.getByRole('button', { name: 'Reserve' }).click();
        const keyword = page.locator('[data-field="Keyword"]');
        await keyword.filter({ hasText: '(The API said: Keyword is invalid.)' }).waitFor();
        assert.match(await keyword.innerText(), /carrier/);

        await open('Media and templates', 'Media and templates');
        const create = page.getByRole('form', { name: 'Create a template' });
        await create.getByLabel('Template name').fill('No images');
        await create.getByRole('button', { name: 'Create template' }).click();
        const mediaIds = create.locator('[data-field="MediaIds"]');
        await mediaIds.filter({ hasText: '(The API said: Media Ids cannot be blank.)' }).waitFor();
        assert.match(await mediaIds.innerText(), /image/);
      },
    );

    let joinId = 0;
    await t.test(
      'defect 10: the keyword JOIN NOW, linked to a group: "join   now" through the sandbox box makes the sender a member',
      async () => {
        await open('Keywords', 'Keywords');
        await page.getByLabel('Keyword', { exact: true }).fill('JOIN NOW');
        await page.getByLabel('On number').selectOption(number);
        await page.getByRole('button', { name: 'Reserve' }).click();
        const card = page.getByTestId('keyword').filter({ hasText: 'JOIN NOW' });
        await card.waitFor();
        const listed = await call('GET', `keyword/index?Number=${number}`);
        joinId = Number(listed.data.find((k: { Keyword: string }) => k.Keyword === 'JOIN NOW').Id);
        const group = await call('POST', 'groups/create', { fname: 'Joined by text', KeywordId: joinId });
        assert.equal(group.status, 201);
        await page.reload();
        await card.getByText('Joined by text').waitFor();
        await page.getByLabel('From (mobile number)').fill('+1 202 555 0188');
        await page.getByLabel('To (your number)').selectOption(number);
        await page.getByLabel('Message', { exact: true }).fill('join   now');
        await page.getByRole('button', { name: 'Send inbound text' }).click();
        const result = page.getByTestId('inbound-result');
        await result.filter({ hasText: /^Received as message \d+\./ }).waitFor();
        await result.filter({ hasText: 'Joined by text' }).waitFor();
        const contact = await call('GET', 'contacts/find?number=12025550188');
        assert.equal(contact.status, 200);
        assert.ok(contact.data.GroupIds.includes(group.data.Id), `the sender is not a member: ${JSON.stringify(contact.data)}`);
        await card.getByTestId('keyword-groups').filter({ hasText: '1 member' }).waitFor();
        await checkPage(page, 'keywords');
      },
    );

    await t.test('defect 10: a keyword opens at #/keywords/<id> with the groups it feeds, and is edited (keyword/update)', async () => {
      await page.getByRole('link', { name: 'JOIN NOW' }).click();
      await page.waitForURL(new RegExp(`#/keywords/${joinId}$`));
      await page.getByRole('heading', { name: 'Keyword JOIN NOW', level: 1 }).waitFor();
      await page.getByTestId('keyword-groups').getByRole('link', { name: 'Joined by text' }).waitFor();
      const form = page.getByRole('form', { name: 'Edit the keyword' });
      await form.getByLabel('Keyword', { exact: true }).fill('JOIN US NOW');
      await form.getByLabel('Automatic reply (optional)').fill('Welcome aboard!');
      await form.getByRole('button', { name: 'Save changes' }).click();
      await page.getByTestId('notice').filter({ hasText: 'Saved.' }).waitFor();
      const view = await call('GET', `keyword/view?id=${joinId}`);
      assert.equal(view.data.Keyword, 'JOIN US NOW');
      assert.equal(view.data.AutoreplyMessage, 'Welcome aboard!');
      await page.getByRole('heading', { name: 'Keyword JOIN US NOW', level: 1 }).waitFor();
      // A keyword already held on the number: the API's words, and what they mean here.
      await call('POST', 'keyword/reserve', { Keyword: 'TAKEN WORD', Number: Number(number), AutoreplyMessage: '' });
      await form.getByLabel('Keyword', { exact: true }).fill('TAKEN WORD');
      await form.getByRole('button', { name: 'Save changes' }).click();
      const problem = form.locator('[data-field="Keyword"]');
      await problem.filter({ hasText: '(The API said: Keyword "TAKEN WORD" has already been taken.)' }).waitFor();
      await checkPage(page, 'keyword');
    });

    await t.test('templates: created with the media picker, edited (mms-templates/update), deleted with a confirm naming it', async () => {
      await open('Media and templates', 'Media and templates');
      const create = page.getByRole('form', { name: 'Create a template' });
      await create.getByLabel('Template name').fill('Spring sale');
      await create.getByLabel('Subject').fill('Sale');
      await create.getByLabel('Text', { exact: true }).fill('Half price, this week only');
      await create.getByRole('checkbox', { name: 'shared.png' }).check();
      await create.getByRole('button', { name: 'Create template' }).click();
      await page.getByTestId('notice').filter({ hasText: 'Spring sale' }).waitFor();
      assert.equal(await create.getByLabel('Template name').inputValue(), '');
      const all = await call('GET', 'mms-templates/index');
      const made = all.data.find((tpl: { Name: string }) => tpl.Name === 'Spring sale');
      assert.ok(made, 'the template was not made');
      assert.equal(made.MediaIds.length, 1);
      const card = page.locator(`[data-testid="template"][data-id="${made.Id}"]`);
      await until(async () => {
        if ((await card.count()) > 0) return true;
        const next = page.getByRole('navigation', { name: 'Pages of templates' }).getByRole('button', { name: 'Next' });
        if (await next.isEnabled()) await next.click();
        return false;
      }, 'the new template in the list');
      await card.getByRole('link', { name: 'Edit Spring sale' }).click();
      await page.waitForURL(new RegExp(`template=${made.Id}`));
      const edit = page.getByRole('form', { name: 'Edit template Spring sale' });
      await edit.getByLabel('Template name').fill('Spring sale, edited');
      await edit.getByRole('checkbox').first().waitFor();
      // Add the first image of the picker that is not chosen yet.
      const boxes = edit.getByRole('checkbox');
      for (let i = 0; i < (await boxes.count()); i++) {
        if (!(await boxes.nth(i).isChecked())) {
          await boxes.nth(i).check();
          break;
        }
      }
      await edit.getByRole('button', { name: 'Save changes' }).click();
      await page.getByTestId('notice').filter({ hasText: 'Spring sale, edited' }).waitFor();
      const view = await call('GET', `mms-templates/view?id=${made.Id}`);
      assert.equal(view.data.Name, 'Spring sale, edited');
      assert.equal(view.data.MediaIds.length, 2);
      await card
        .getByTestId('template-media')
        .filter({ hasText: /^2 images/ })
        .waitFor();
      await card.getByRole('button', { name: 'Delete template Spring sale, edited' }).click();
      const text = await card.getByRole('group', { name: 'Confirm' }).innerText();
      assert.ok(text.includes('Spring sale, edited'), text);
      await card.getByRole('button', { name: 'Cancel' }).click();
      assert.equal((await call('GET', `mms-templates/view?id=${made.Id}`)).status, 200);
      await card.getByRole('button', { name: 'Delete template Spring sale, edited' }).click();
      await card.getByRole('group', { name: 'Confirm' }).getByRole('button', { name: 'Delete template' }).click();
      await card.waitFor({ state: 'detached' });
      assert.equal((await call('GET', `mms-templates/view?id=${made.Id}`)).status, 404);
      await focusKept('the delete');
    });

    await t.test("keys: a key is edited (keys/update), the API's messages shown by their field", async () => {
      const made = await call('POST', 'keys/create', { Name: 'editable', Scopes: ['sms:read'] });
      assert.equal(made.status, 201, JSON.stringify(made.data));
      await open('Keys', 'Keys');
      const card = page.locator('[data-testid="key"][data-name="editable"]');
      await card.getByRole('button', { name: 'Edit editable' }).click();
      await page.waitForURL(new RegExp(`edit=${made.data.Id}`));
      const form = page.getByRole('form', { name: 'Edit key editable' });
      const expires = form.getByLabel("Expires (optional, the service's time zone)");
      await form.getByLabel('Key name').fill('edited key');
      await expires.fill('2020-01-01T00:00:00');
      await form.getByRole('button', { name: 'Save changes' }).click();
      const problem = form.locator('[data-field="DateExpires"]');
      await problem.filter({ hasText: '(The API said: Date Expires is invalid.)' }).waitFor();
      assert.match(await problem.innerText(), /future/);
      await expires.fill('2032-03-04T05:06:07');
      await form.getByRole('button', { name: 'Save changes' }).click();
      await page.getByTestId('notice').filter({ hasText: 'edited key' }).waitFor();
      await focusKept('the save');
      const view = await call('GET', `keys/view?id=${made.data.Id}`);
      assert.equal(view.data.Name, 'edited key');
      assert.equal(view.data.DateExpires, '2032-03-04 05:06:07');
      assert.ok(!page.url().includes('edit='), page.url());
    });

    await t.test(
      'dates and paging: keys, people and audit show every date as YYYY-MM-DD HH:MM:SS; the audit filter and page survive a reload',
      async () => {
        const key = await call('POST', 'keys/create', { Name: 'dated', Scopes: ['sms:read'], DateExpires: '2031-02-03 04:05:06' });
        assert.equal(key.status, 201, JSON.stringify(key.data));
        const person = await call('POST', 'users/create', { Email: 'dates@example.com', Name: 'Dates', Role: 'viewer' });
        assert.equal(person.status, 201, JSON.stringify(person.data));

        await open('Keys', 'Keys');
        // The keys page may be open already (the subtest before): read it again.
        await page.reload();
        const dated = page.locator('[data-testid="key"][data-name="dated"]');
        await dated.waitFor();
        const keyTimes = await times('[data-testid="key"][data-name="dated"]');
        assert.ok(keyTimes.includes('2031-02-03 04:05:06'), keyTimes.join());
        for (const text of await times('[data-testid="key"]')) assert.match(text, DATE);
        await page.getByRole('navigation', { name: 'Pages of keys' }).waitFor();
        await checkPage(page, 'keys');

        await open('People', 'People');
        const invited = page.locator('[data-testid="person"][data-email="dates@example.com"]');
        await invited.waitFor();
        assert.ok((await times('[data-testid="person"][data-email="dates@example.com"]')).length >= 1, 'no date on a person');
        for (const text of await times('[data-testid="person"]')) assert.match(text, DATE);
        await checkPage(page, 'people');

        // 55 entries of one operation: two pages of 50.
        for (let i = 0; i < 55; i++) assert.equal((await call('PUT', 'account/settings', { TimeZone: 'UTC' })).status, 200);
        await open('Audit log', 'Audit log');
        await page.getByTestId('audit-entry').first().waitFor();
        for (const text of await times('[data-testid="audit-entry"]')) assert.match(text, DATE);
        await page.getByLabel('Operation').fill('account.update-settings');
        await page.getByRole('button', { name: 'Filter' }).click();
        await page.waitForURL(/Operation=account\.update-settings/);
        const range = page.getByRole('navigation', { name: 'Pages of entries' }).getByTestId('range');
        await range.filter({ hasText: /^1–50 of 55 entries/ }).waitFor();
        await page.getByRole('navigation', { name: 'Pages of entries' }).getByRole('button', { name: 'Next' }).click();
        await range.filter({ hasText: /^51–55 of 55 entries/ }).waitFor();
        await page.reload();
        await page.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor();
        await range.filter({ hasText: /^51–55 of 55 entries/ }).waitFor();
        assert.equal(await page.getByLabel('Operation').inputValue(), 'account.update-settings');
        assert.ok(page.url().includes('page=2'), page.url());
        await page.goBack();
        await range.filter({ hasText: /^1–50 of 55 entries/ }).waitFor();
        await checkPage(page, 'audit');

        await open('Settings', 'Account settings');
        // SenderSelection (docs/API.md §17): first by default, each choice explained; pool saved.
        const first = page.getByRole('radio', { name: 'First number' });
        const pool = page.getByRole('radio', { name: 'Sender pool' });
        await until(async () => await first.isChecked(), 'first chosen');
        assert.equal(await pool.isChecked(), false);
        assert.match(await page.locator('#sender-pool-hint').innerText(), /never past a number's limits/);
        await pool.check();
        await page.getByRole('button', { name: 'Save settings' }).click();
        await page.getByTestId('settings-saved').waitFor();
        assert.equal((await call('GET', 'account/settings')).data.SenderSelection, 'pool');
        await page.reload();
        await page.getByRole('heading', { name: 'Account settings', level: 1 }).waitFor();
        await until(async () => await pool.isChecked(), 'pool read back');
        await checkPage(page, 'settings');
        await first.check();
        await page.getByRole('button', { name: 'Save settings' }).click();
        await until(async () => (await call('GET', 'account/settings')).data.SenderSelection === 'first', 'first saved');
        // Signed in with a key, Security is not in the navigation: its page says there is nothing to change.
        await page.goto(`${base}/console/#/security`);
        await page.getByRole('heading', { name: 'Your security', level: 1 }).waitFor();
        await checkPage(page, 'security');
      },
    );

    assert.deepEqual(session.dialogs, [], 'a dialog opened');
    assert.deepEqual(
      session.errors.filter((e) => !/\b(404|422)\b/.test(e)),
      [],
      'the browser console shows errors',
    );
    assert.deepEqual(session.outside, [], 'the page loaded something from another origin');
  },
);
