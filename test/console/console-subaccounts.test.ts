/**
 * The console's Sub-accounts page (docs/API.md §16.1) in real headless Chromium (test/console/browser.ts:
 * a real server on SQLite with the sandbox carrier and a demo account, signed in with its key, `*`).
 * One console session, one subtest per feature, in order, each asserting what the page shows and
 * what the API then holds:
 *
 * - create: `Not enough credits: {n} needed, {available} available.` next to Credits, the API's words
 *   exact; then a sub-account with 100 credits and quotas, whose page opens, and this account's
 *   balance 100 lower (on the page and in credits/balance); the list shows it;
 * - credits: Give 50 and Take back 30 (a positive amount both times), each balance moved; taking back
 *   more than it has is refused next to Amount;
 * - a key of the sub-account made with the Keys page's scope chooser: its secret shown once, and it
 *   works (as the sub-account);
 * - a person invited (Role owner by default): the invitation link shown once;
 * - one of this account's Active numbers moved in (the sub-account's key sees it, this account no
 *   longer) and back;
 * - Name and quotas edited (only what changed is sent); Suspend (the sub-account's writes get 403
 *   `This account is suspended.`) and Resume;
 * - usage over the default 7 days: the sub-account's message counted; the list paged in the URL
 *   ("1–20 of 21 sub-accounts", Next, reload);
 * - Close asked first, naming it and saying what closing does (Keep it closes nothing); then closed:
 *   its credits back, its key refused 401;
 * - a sub-account's own key (scope `*`) signed into the console: no Sub-accounts in the navigation,
 *   and `#/subaccounts` says why instead of a list.
 *
 * checkPage on the list and a sub-account's page (no horizontal scroll at 375 and 1440 px, axe clean);
 * no dialog, nothing from another origin, and no browser console error but the deliberate 422s (and
 * the sub-account session's 403, which is how the console learns it is one).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkPage, signIn, startConsole, until } from './browser.ts';

/** An answer's JSON, as JSON.parse gives it: the assertions check its shape. */
type Json = ReturnType<typeof JSON.parse>;

test(
  'console: sub-accounts, created, funded, given a key, a person and a number, suspended, closed; usage; hidden from a sub-account',
  { timeout: 300_000 },
  async (t) => {
    const session = await startConsole(t);
    if (session === undefined) return;
    const { page, base, demo } = session;

    /** A call to the API with `token` (the demo account's key by default): its status and JSON. */
    async function call(method: string, path: string, body?: unknown, token = demo.token): Promise<{ status: number; data: Json }> {
      const response = await fetch(`${base}/v1/${path}${path.includes('?') ? '&' : '?'}access_token=${token}`, {
        method,
        ...(body === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
      });
      const text = await response.text();
      return { status: response.status, data: text === '' ? undefined : JSON.parse(text) };
    }
    const balance = async (token = demo.token): Promise<number> =>
      Number((await call('GET', 'credits/balance', undefined, token)).data.AvailableCredits);
    /** Opens a place of the console and waits for its heading. */
    const open = async (place: string, heading: string) => {
      await page.goto(`${base}/console#/${place}`);
      await page.getByRole('heading', { level: 1, name: heading, exact: true }).waitFor();
    };
    const nav = () => page.getByRole('navigation', { name: 'Pages' });
    const notice = () => page.getByTestId('notice');
    const subCredits = () => page.getByTestId('subaccount-details').getByTestId('subaccount-credits');

    await signIn(session);
    const start = await balance();
    assert.ok(start > 200, `the demo account has ${start} credits`);
    let subId = 0;
    let subKey = '';
    const number = demo.numbers.find((n) => n.Status_Id === 0)!.Number;

    await t.test(
      'create: "Not enough credits" next to Credits; then one with 100 credits opens, and this account has 100 fewer',
      async () => {
        await nav().getByRole('link', { name: 'Sub-accounts', exact: true }).click();
        await page.getByRole('heading', { level: 1, name: 'Sub-accounts' }).waitFor();
        assert.equal(await page.title(), 'Sub-accounts · msgsvc console');
        await page.getByText('No sub-accounts yet.').waitFor();
        await page
          .getByTestId('own-balance')
          .filter({ hasText: `This account has ${start} credits.` })
          .waitFor();
        const form = page.getByRole('form', { name: 'Create a sub-account' });
        await form.getByLabel('Name', { exact: true }).fill('Acme <b>Shop</b>');
        await form.getByLabel('Credits moved from this account').fill(String(start + 5));
        await form.getByRole('button', { name: 'Create sub-account' }).click();
        const message = `Not enough credits: ${(start + 5).toLocaleString('en-US')} needed, ${start.toLocaleString('en-US')} available.`;
        await page.locator('[data-field="Credits"]').filter({ hasText: message }).waitFor();
        assert.equal(await form.getByLabel('Credits moved from this account').getAttribute('aria-invalid'), 'true');
        assert.equal((await call('GET', 'subaccounts/index')).data.length, 0, 'a sub-account was made');
        // A blank name is explained by its field, the API's words kept.
        await form.getByLabel('Name', { exact: true }).fill('');
        await form.getByLabel('Credits moved from this account').fill('');
        await form.getByRole('button', { name: 'Create sub-account' }).click();
        await page.locator('[data-field="Name"]').filter({ hasText: '(The API said: Name cannot be blank.)' }).waitFor();
        await checkPage(page, 'subaccounts-errors');

        await form.getByLabel('Name', { exact: true }).fill('Acme <b>Shop</b>');
        await form.getByLabel('Credits moved from this account').fill('100');
        await form.getByLabel('Max messages per second').fill('5');
        await form.getByLabel('Max messages per day').fill('1000');
        await form.getByRole('button', { name: 'Create sub-account' }).click();
        await page.waitForURL(/#\/subaccounts\/\d+$/);
        subId = Number(new URL(page.url()).hash.split('/').pop());
        await page.getByRole('heading', { level: 1, name: `Sub-account ${subId}` }).waitFor();
        assert.equal(await page.title(), `Sub-account ${subId} · msgsvc console`);
        await notice().filter({ hasText: 'with 100 credits moved from this account' }).waitFor();
        assert.equal(await page.getByTestId('subaccount-name').innerText(), 'Acme <b>Shop</b>', 'the name is shown literally');
        assert.equal(await subCredits().innerText(), '100');
        await page
          .getByTestId('credit-balances')
          .filter({ hasText: `this account has ${start - 100}.` })
          .waitFor();
        assert.equal(await balance(), start - 100);
        const view = (await call('GET', `subaccounts/view?id=${subId}`)).data;
        assert.deepEqual([view.Status, view.AvailableCredits, view.MaxPerSecond, view.MaxPerDay], ['active', 100, 5, 1000]);
        await checkPage(page, 'subaccount');

        await page.getByRole('link', { name: 'All sub-accounts' }).click();
        const row = page.getByTestId('subaccount').filter({ hasText: 'Acme <b>Shop</b>' });
        await row.waitFor();
        assert.equal(await row.getByTestId('subaccount-status').innerText(), 'active');
        assert.equal(await row.getByTestId('subaccount-credits').innerText(), '100');
        assert.match(await row.innerText(), /5 a second/);
        assert.match(await row.innerText(), /1,000 a day/);
        assert.match(await row.locator('time').innerText(), /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
        await page
          .getByTestId('own-balance')
          .filter({ hasText: `This account has ${start - 100} credits.` })
          .waitFor();
        await checkPage(page, 'subaccounts');
        await row.getByRole('link').click();
        await page.getByRole('heading', { level: 1, name: `Sub-account ${subId}` }).waitFor();
      },
    );

    await t.test('credits: Give 50 and Take back 30, a positive amount both times; taking back too many is refused by Amount', async () => {
      const form = page.getByRole('form', { name: 'Move credits' });
      await form.getByLabel('Amount (credits)').fill('50');
      await form.getByRole('button', { name: 'Give' }).click();
      await notice().filter({ hasText: 'Gave 50 credits' }).waitFor();
      await until(async () => (await subCredits().innerText()) === '150', 'the sub-account at 150');
      await page
        .getByTestId('credit-balances')
        .filter({ hasText: `this account has ${start - 150}.` })
        .waitFor();
      assert.equal(await balance(), start - 150);

      await form.getByLabel('Amount (credits)').fill('30');
      await form.getByRole('button', { name: 'Take back' }).click();
      await notice().filter({ hasText: 'Took back 30 credits' }).waitFor();
      await until(async () => (await subCredits().innerText()) === '120', 'the sub-account at 120');
      await page
        .getByTestId('credit-balances')
        .filter({ hasText: `this account has ${start - 120}.` })
        .waitFor();
      assert.equal(await balance(), start - 120);
      const ledger = (await call('GET', 'credits/ledger?Type=transfer_in')).data as { Amount: number; Reference: string }[];
      assert.deepEqual(
        ledger.map((e) => [e.Amount, e.Reference]),
        [[30, `account:${subId}`]],
      );

      await form.getByLabel('Amount (credits)').fill('1000');
      await form.getByRole('button', { name: 'Take back' }).click();
      await form.locator('[data-field="Amount"]').filter({ hasText: 'Not enough credits: 1,000 needed, 120 available.' }).waitFor();
      await form.getByLabel('Amount (credits)').fill('0');
      await form.getByRole('button', { name: 'Give' }).click();
      await form.locator('[data-field="Amount"]').filter({ hasText: '(The API said: Amount is invalid.)' }).waitFor();
      assert.equal(await balance(), start - 120, 'a refused move moved credits');
    });

    await t.test("a key of the sub-account, made with the Keys page's scope chooser: its secret shown once, and it works", async () => {
      const form = page.getByRole('form', { name: 'Make a key of the sub-account' });
      await form.getByLabel('Key name').fill('shop');
      assert.ok(await form.getByRole('checkbox', { name: /All \(\*\)/ }).isChecked(), 'All (*) is chosen by default');
      await form.getByRole('button', { name: 'Make key' }).click();
      const once = page.getByTestId('shown-once');
      await once.waitFor();
      assert.match(await once.innerText(), /The secret of key “shop” of Acme <b>Shop<\/b>/);
      assert.match(await once.innerText(), /you will not see it again/);
      subKey = await once.getByTestId('secret').innerText();
      assert.ok(subKey.length > 20, subKey);
      assert.equal(await form.getByLabel('Key name').inputValue(), '', 'the form was not emptied');
      // The key is the sub-account's: its balance, not this account's.
      assert.equal(await balance(subKey), 120);
      await checkPage(page, 'subaccount-key');
      await once.getByRole('button', { name: 'Done' }).click();
      await once.waitFor({ state: 'detached' });
      // Its scopes: the chooser without `*` gives per-resource choices, and none for subaccounts.
      await form.getByRole('checkbox', { name: /All \(\*\)/ }).uncheck();
      await form.getByLabel('sms', { exact: true }).waitFor();
      assert.equal(await form.getByLabel('subaccounts', { exact: true }).count(), 0);
      await form.getByRole('checkbox', { name: /All \(\*\)/ }).check();
    });

    await t.test('a person invited to the sub-account, Role owner by default: the invitation link shown once', async () => {
      const form = page.getByRole('form', { name: 'Invite a person to the sub-account' });
      assert.equal(await form.getByLabel('Role').inputValue(), 'owner');
      await form.getByLabel('Their email').fill('owner@acme.example');
      await form.getByLabel('Their name').fill('Ada Acme');
      await form.getByRole('button', { name: 'Invite' }).click();
      const once = page.getByTestId('shown-once');
      await once.waitFor();
      assert.match(await once.innerText(), /Invitation for owner@acme\.example to Acme <b>Shop<\/b>/);
      assert.match(await once.getByTestId('secret').innerText(), /\/console\/#\/invite\/\S+$/);
      const people = (await call('GET', 'users/index', undefined, subKey)).data as { Email: string; Role: string }[];
      assert.deepEqual(
        people.map((p) => [p.Email, p.Role]),
        [['owner@acme.example', 'owner']],
      );
      assert.equal(
        ((await call('GET', 'users/index')).data as { Email: string }[]).filter((p) => p.Email === 'owner@acme.example').length,
        0,
        'the person was invited to this account',
      );
      await once.getByRole('button', { name: 'Done' }).click();
      await once.waitFor({ state: 'detached' });
    });

    await t.test("one of this account's Active numbers moved in, then back", async () => {
      const moveIn = page.getByRole('form', { name: 'Move a number to the sub-account' });
      await moveIn.getByLabel("One of this account's Active numbers").selectOption(number);
      await moveIn.getByRole('button', { name: 'Move to the sub-account' }).click();
      await notice().filter({ hasText: 'now belongs to “Acme <b>Shop</b>”' }).waitFor();
      const held = async (token: string) =>
        ((await call('GET', 'numbers/index', undefined, token)).data as { Number: string }[]).map((n) => n.Number);
      assert.deepEqual(await held(subKey), [number]);
      assert.ok(!(await held(demo.token)).includes(number), 'this account still has the number');
      // The number is no longer offered: it is not this account's.
      await until(async () => (await moveIn.locator(`option[value="${number}"]`).count()) === 0, 'the number gone from the choice');
      // The sub-account sends from it (its first Active number): usage counts it below.
      const sent = await call('POST', 'sms/send', { MobilePhone: '+12025550123', Message: 'From the shop' }, subKey);
      assert.equal(sent.status, 201, JSON.stringify(sent.data));

      await until(
        async () =>
          ((await call('GET', 'sms/index', undefined, subKey)).data as { Status_Description: string }[])[0]?.Status_Description ===
          'Delivered',
        'the sub-account message Delivered',
      );
      await page
        .getByTestId('moved-numbers')
        .getByRole('button', { name: `Move ${number} back` })
        .click();
      await notice().filter({ hasText: 'is back in this account' }).waitFor();
      assert.ok((await held(demo.token)).includes(number));
      assert.deepEqual(await held(subKey), []);
      // Moving back a number it does not hold is refused next to the field.
      const back = page.getByRole('form', { name: 'Move a number back to this account' });
      await back.getByLabel('A number of the sub-account to move back').fill(number);
      await back.getByRole('button', { name: 'Move back to this account' }).click();
      await back.locator('[data-field="Number"]').filter({ hasText: '(The API said: Number is invalid.)' }).waitFor();
    });

    await t.test('Name and quotas edited; Suspend refuses its writes, Resume lets them through', async () => {
      const form = page.getByRole('form', { name: 'Edit the sub-account' });
      await form.getByLabel('Name', { exact: true }).fill('Acme Shop');
      await form.getByLabel('Max messages per day').fill('');
      await form.getByRole('button', { name: 'Save changes' }).click();
      await notice().filter({ hasText: 'Saved.' }).waitFor();
      await page
        .getByTestId('subaccount-name')
        .filter({ hasText: /^Acme Shop$/ })
        .waitFor();
      let view = (await call('GET', `subaccounts/view?id=${subId}`)).data;
      assert.deepEqual([view.Name, view.MaxPerSecond, view.MaxPerDay], ['Acme Shop', 5, 0]);

      await page.getByRole('button', { name: 'Suspend' }).click();
      await notice().filter({ hasText: '“Acme Shop” is suspended' }).waitFor();
      await page.getByTestId('subaccount-status').and(page.locator('[data-status="suspended"]')).waitFor();
      const refused = await call('POST', 'contacts/create', { Number: '+12025550124' }, subKey);
      assert.equal(refused.status, 403);
      assert.equal(refused.data.message, 'This account is suspended.');
      assert.equal((await call('GET', 'credits/balance', undefined, subKey)).status, 200, 'reads go on');

      await page.getByRole('button', { name: 'Resume' }).click();
      await notice().filter({ hasText: '“Acme Shop” is active again' }).waitFor();
      view = (await call('GET', `subaccounts/view?id=${subId}`)).data;
      assert.equal(view.Status, 'active');
      assert.equal((await call('POST', 'contacts/create', { Number: '+12025550124' }, subKey)).status, 201);
    });

    await t.test('usage over the last 7 days; the list paged in the URL', async () => {
      for (let i = 2; i <= 21; i++) assert.equal((await call('POST', 'subaccounts/create', { Name: `Customer ${i}` })).status, 201);
      await open('subaccounts', 'Sub-accounts');
      const usage = page.getByTestId('usage-row').and(page.locator(`[data-id="${subId}"]`));
      await usage.waitFor();
      assert.equal(await usage.getByTestId('usage-outbound').innerText(), '1');
      assert.equal(await usage.getByTestId('usage-delivered').innerText(), '1');
      assert.equal(await usage.getByTestId('usage-failed').innerText(), '0');
      const api = (await call('GET', 'subaccounts/usage')).data as { Id: number; Credits: number }[];
      assert.equal(await usage.getByTestId('usage-credits').innerText(), String(api.find((u) => u.Id === subId)!.Credits));
      // The default days are the last 7 in the service's zone: the From and To fields say which.
      const from = await page.getByLabel('From day').inputValue();
      const to = await page.getByLabel('To day').inputValue();
      assert.equal((Date.parse(to) - Date.parse(from)) / 86_400_000, 6);
      // A day range before the message: none counted, the days kept in the URL.
      await page.getByLabel('From day').fill('2020-01-01');
      await page.getByLabel('To day').fill('2020-01-02');
      await page.getByRole('button', { name: 'Show usage' }).click();
      await page.waitForURL(/from=2020-01-01&to=2020-01-02/);
      await until(async () => (await usage.getByTestId('usage-outbound').innerText()) === '0', 'no usage in 2020');

      const range = page.getByRole('navigation', { name: 'Pages of sub-accounts' }).getByTestId('range');
      await range.filter({ hasText: '1–20 of 21 sub-accounts · page 1 of 2' }).waitFor();
      await page.getByRole('navigation', { name: 'Pages of sub-accounts' }).getByRole('button', { name: 'Next' }).click();
      await range.filter({ hasText: '21–21 of 21 sub-accounts · page 2 of 2' }).waitFor();
      assert.match(new URL(page.url()).hash, /[?&]page=2/);
      await page.reload();
      await range.filter({ hasText: '21–21 of 21 sub-accounts' }).waitFor();
      await page.getByTestId('subaccount').filter({ hasText: 'Customer 21' }).waitFor();
      await checkPage(page, 'subaccounts-usage');
    });

    await t.test('Close asks first, naming it and saying what closing does; then its credits come back and its key stops', async () => {
      await open(`subaccounts/${subId}`, `Sub-account ${subId}`);
      await page.getByRole('button', { name: 'Close sub-account' }).click();
      const question = page.getByRole('group', { name: 'Confirm' });
      const text = await question.innerText();
      for (const part of [
        'Close sub-account “Acme Shop”?',
        'Queued messages are rejected and refunded',
        'scheduled messages are cancelled',
        'come back to this account',
        'keys stop working',
        'cannot be undone',
      ])
        assert.ok(text.includes(part), `the question says ${part}: ${text}`);
      // The focus moves to the confirm once the question is shown (a bounded wait: a loaded machine may take a frame longer).
      await until(
        async () => (await page.evaluate('document.activeElement && document.activeElement.textContent')) === 'Close it',
        'the confirm is focused',
      );
      await question.getByRole('button', { name: 'Keep it' }).click();
      assert.equal((await call('GET', `subaccounts/view?id=${subId}`)).data.Status, 'active', 'Keep it closed it');

      const left = Number((await call('GET', `subaccounts/view?id=${subId}`)).data.AvailableCredits);
      const before = await balance();
      await page.getByRole('button', { name: 'Close sub-account' }).click();
      await page.getByRole('button', { name: 'Close it' }).click();
      await notice().filter({ hasText: '“Acme Shop” is closed' }).waitFor();
      await page.getByTestId('subaccount-status').and(page.locator('[data-status="closed"]')).waitFor();
      assert.equal(await page.getByRole('form', { name: 'Move credits' }).count(), 0, 'a closed sub-account still offers changes');
      assert.equal(await balance(), before + left);
      assert.equal((await call('GET', 'credits/balance', undefined, subKey)).status, 401, 'the closed sub-account key still works');
      await checkPage(page, 'subaccount-closed');
    });

    // Only the deliberate refusals (422) may show in the browser console up to here.
    assert.deepEqual(
      session.errors.filter((e) => !/\b422\b/.test(e)),
      [],
      'the browser console shows errors',
    );

    await t.test("a sub-account's own key (scope *) does not see Sub-accounts, and #/subaccounts says why", async () => {
      const other = await call('POST', 'subaccounts/create', { Name: 'Other customer', Credits: 5 });
      assert.equal(other.status, 201);
      const key = await call('POST', `subaccounts/keys?id=${other.data.Id}`, { Name: 'own', Scopes: ['*'] });
      assert.equal(key.status, 201);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('button', { name: 'Sign in with a key' }).waitFor();
      await signIn(session, String(key.data.Secret));
      // The navigation is whole once the session is read; give the console's question time to be answered.
      await nav().getByRole('link', { name: 'Keys', exact: true }).waitFor();
      await page.waitForTimeout(1000);
      assert.equal(await nav().getByRole('link', { name: 'Sub-accounts' }).count(), 0, 'a sub-account sees Sub-accounts');
      await page.goto(`${base}/console#/subaccounts`);
      await page.getByRole('heading', { level: 1, name: 'Sub-accounts' }).waitFor();
      await page.getByText('This account is a sub-account: it has none of its own').waitFor();
      assert.equal(await page.getByRole('form', { name: 'Create a sub-account' }).count(), 0);
      assert.equal(await nav().getByRole('link', { name: 'Sub-accounts' }).count(), 0);
      await checkPage(page, 'subaccounts-refused');
    });

    assert.deepEqual(
      session.errors.filter((e) => !/\b(403|422)\b/.test(e)),
      [],
      'the browser console shows errors',
    );
    assert.deepEqual(session.dialogs, [], 'dialogs opened');
    assert.deepEqual(session.outside, [], 'requests to other origins');
  },
);
