/**
 * The operator's console (docs/API.md §16.4) in real headless Chromium (test/console/browser.ts: a
 * real server on SQLite with the sandbox carrier and a demo account). An operator key (made through
 * the domain, as `msgsvc operators create` does) signs in on the sign-in page's key form; the
 * session is then the `msgsvc_session` cookie, which opens `/admin/v1` only. One console session,
 * one subtest per feature, in order, each asserting what the page shows and what the API then holds:
 *
 * - sign-in: the operator's navigation only (Accounts, Numbers, Carriers, Usage, Audit log), no
 *   account page, "Signed in as operator ops", Accounts the default page; an account page's address
 *   leads to Accounts; and no request to `/v1` at all (it would answer 401 and sign the operator out);
 * - Accounts: a blank name refused next to Name, the API's words exact; then a top-level account
 *   with quotas, whose page opens, with 0 credits;
 * - credits: Top up 500 with a note (a `topup` entry with that note on its ledger), Take off 100 (an
 *   `adjustment`); taking off more than it has is refused next to Amount;
 * - a key of the account (its secret shown once, and it works as the account) and its owner invited
 *   (Role owner by default; the invitation link shown once);
 * - numbers: one added on the account's page; one added to the demo account on the Numbers page and
 *   moved to the new account there (its key sees both), one removed (asked first);
 * - usage: the new account's message counted; carriers: the page says what carriers/index says;
 * - Suspend (its key's writes get 403 `This account is suspended.`) and Resume; Name and quotas edited;
 * - the audit log of every account, the operator's writes as `operator:{Id}:ops`, filtered by account;
 * - Close asked first, then closed: its key refused 401;
 * - sign out: back to the sign-in page, and the cookie no longer opens `/admin/v1`.
 *
 * checkPage on every operator page (no horizontal scroll at 375 and 1440 px, axe clean); no dialog,
 * nothing from another origin, and no browser console error but the deliberate 422s.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createOperatorKey } from '../../src/domain/operators.ts';
import { systemClock } from '../../src/lib/time.ts';
import { checkPage, startConsole, until } from './browser.ts';

/** An answer's JSON, as JSON.parse gives it: the assertions check its shape. */
type Json = ReturnType<typeof JSON.parse>;

test(
  'console: the operator signs in with an operator key; accounts created, funded, given a key, an owner and numbers, suspended, closed; usage, carriers, audit',
  { timeout: 300_000 },
  async (t) => {
    const session = await startConsole(t);
    if (session === undefined) return;
    const { page, base, demo } = session;
    const operator = await createOperatorKey({ store: session.store, clock: systemClock }, 'ops');
    const actor = `operator:${operator.row.id}:ops`;

    // Every request the page makes to an account's API: an operator's session must make none.
    const accountCalls: string[] = [];
    page.on('request', (req) => {
      const url = new URL(req.url());
      if (url.origin === base && url.pathname.startsWith('/v1/')) accountCalls.push(`${req.method()} ${url.pathname}`);
    });

    /** A call to `/admin/v1/<path>` with the operator key: its status and JSON. */
    async function admin(method: string, path: string, body?: unknown): Promise<{ status: number; data: Json }> {
      const response = await fetch(`${base}/admin/v1/${path}`, {
        method,
        headers: { Authorization: `Bearer ${operator.secret}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      return { status: response.status, data: text === '' ? undefined : JSON.parse(text) };
    }
    /** A call to `/v1/<path>` with an account's key: its status and JSON. */
    async function call(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; data: Json }> {
      const response = await fetch(`${base}/v1/${path}${path.includes('?') ? '&' : '?'}access_token=${token}`, {
        method,
        ...(body === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
      });
      const text = await response.text();
      return { status: response.status, data: text === '' ? undefined : JSON.parse(text) };
    }
    /** Opens a place of the console and waits for its heading. */
    const open = async (place: string, heading: string) => {
      await page.goto(`${base}/console#/${place}`);
      await page.getByRole('heading', { level: 1, name: heading, exact: true }).waitFor();
    };
    const nav = () => page.getByRole('navigation', { name: 'Pages' });
    const notice = () => page.getByTestId('notice');
    const credits = () => page.getByTestId('account-details').getByTestId('account-credits');

    let accountId = 0;
    let key = '';
    const first = '12025550177';
    const second = '12025550178';

    await t.test('sign-in with an operator key: the operator navigation only, Accounts by default, no account call', async () => {
      await page.goto(`${base}/console`);
      await page.getByRole('button', { name: 'Sign in with a key' }).click();
      await page.getByLabel('Key (access token)').fill(operator.secret);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Accounts', exact: true }).waitFor();
      assert.equal(new URL(page.url()).hash, '#/operator-accounts');
      assert.equal(await page.title(), 'Accounts · msgsvc console');
      assert.deepEqual(await nav().getByRole('link').allInnerTexts(), ['Accounts', 'Numbers', 'Carriers', 'Usage', 'Audit log']);
      for (const name of [
        'Overview',
        'Credits',
        'Messages',
        'Compose',
        'Contacts',
        'Keys',
        'People',
        'Sub-accounts',
        'Settings',
        'Security',
      ])
        assert.equal(await nav().getByRole('link', { name, exact: true }).count(), 0, `the operator sees ${name}`);
      assert.equal(await page.getByTestId('who').innerText(), 'operator ops');
      assert.equal(await page.locator('header .who').textContent(), 'Signed in as operator ops');
      const who = (await page.evaluate('fetch("/console/api/session").then((r) => r.json())')) as Json;
      assert.deepEqual(
        [who.User, who.Key, who.Account, who.Operator, who.Scopes],
        [null, null, null, { Id: operator.row.id, Name: 'ops' }, ['*']],
      );
      // The demo account is listed, with its credits.
      const row = page.getByTestId('account').and(page.locator(`[data-id="${demo.account.id}"]`));
      await row.waitFor();
      assert.ok((await row.innerText()).includes(demo.account.name), await row.innerText());
      await checkPage(page, 'operator-accounts');

      // An account page's address (the overview, the messages) leads to Accounts; still no account call.
      await open('messages', 'Accounts');
      await page.waitForURL(/#\/operator-accounts$/);
      await page.waitForTimeout(500);
      assert.deepEqual(accountCalls, [], 'the operator session called /v1');
    });

    await t.test('create: a blank name refused next to Name; then a top-level account with quotas and 0 credits opens', async () => {
      const form = page.getByRole('form', { name: 'Create an account' });
      await form.getByRole('button', { name: 'Create account' }).click();
      await form.locator('[data-field="Name"]').filter({ hasText: '(The API said: Name cannot be blank.)' }).waitFor();
      assert.equal(await form.getByLabel('Name', { exact: true }).getAttribute('aria-invalid'), 'true');

      await form.getByLabel('Name', { exact: true }).fill('Acme <b>Corp</b>');
      await form.getByLabel('Max messages per second').fill('5');
      await form.getByLabel('Max messages per day').fill('1000');
      await form.getByRole('button', { name: 'Create account' }).click();
      await page.waitForURL(/#\/operator-accounts\/\d+$/);
      accountId = Number(new URL(page.url()).hash.split('/').pop());
      await page.getByRole('heading', { level: 1, name: `Account ${accountId}` }).waitFor();
      assert.equal(await page.title(), `Account ${accountId} · msgsvc console`);
      await notice().filter({ hasText: 'Account “Acme <b>Corp</b>” is created, with 0 credits.' }).waitFor();
      assert.equal(await page.getByTestId('account-name').innerText(), 'Acme <b>Corp</b>', 'the name is shown literally');
      assert.equal(await credits().innerText(), '0');
      const view = (await admin('GET', `accounts/view?id=${accountId}`)).data;
      assert.deepEqual(
        [view.Status, view.AvailableCredits, view.MaxPerSecond, view.MaxPerDay, view.ParentId],
        ['active', 0, 5, 1000, null],
      );
      await checkPage(page, 'operator-account');
    });

    await t.test('credits: Top up 500 with a note, Take off 100; taking off more than it has is refused by Amount', async () => {
      const form = page.getByRole('form', { name: 'Credits of the account' });
      await form.getByLabel('Amount (credits)').fill('500');
      await form.getByLabel('Note (kept on its ledger)').fill('Invoice 42');
      await form.getByRole('button', { name: 'Top up' }).click();
      await notice().filter({ hasText: 'Topped up “Acme <b>Corp</b>” with 500 credits: it has 500 now.' }).waitFor();
      await until(async () => (await credits().innerText()) === '500', 'the account at 500');
      assert.equal(await form.getByLabel('Note (kept on its ledger)').inputValue(), '', 'the form was not emptied');

      await form.getByLabel('Amount (credits)').fill('100');
      await form.getByRole('button', { name: 'Take off' }).click();
      await notice().filter({ hasText: 'Took 100 credits off “Acme <b>Corp</b>”: it has 400 now.' }).waitFor();
      await until(async () => (await credits().innerText()) === '400', 'the account at 400');
      assert.equal((await admin('GET', `accounts/view?id=${accountId}`)).data.AvailableCredits, 400);

      await form.getByLabel('Amount (credits)').fill('1000');
      await form.getByRole('button', { name: 'Take off' }).click();
      await form.locator('[data-field="Amount"]').filter({ hasText: 'Not enough credits: 1,000 needed, 400 available.' }).waitFor();
      await form.getByLabel('Amount (credits)').fill('-5');
      await form.getByRole('button', { name: 'Top up' }).click();
      await form.locator('[data-field="Amount"]').filter({ hasText: 'Write the amount without a sign' }).waitFor();
      assert.equal((await admin('GET', `accounts/view?id=${accountId}`)).data.AvailableCredits, 400, 'a refused change moved credits');
    });

    await t.test('a key of the account (secret shown once, it works) and its owner invited (Role owner, link shown once)', async () => {
      const keyForm = page.getByRole('form', { name: 'Make a key of the account' });
      await keyForm.getByLabel('Key name').fill('main');
      assert.ok(await keyForm.getByRole('checkbox', { name: /All \(\*\)/ }).isChecked(), 'All (*) is chosen by default');
      await keyForm.getByRole('button', { name: 'Make key' }).click();
      let once = page.getByTestId('shown-once');
      await once.waitFor();
      assert.match(await once.innerText(), /The secret of key “main” of Acme <b>Corp<\/b>/);
      key = await once.getByTestId('secret').innerText();
      assert.ok(key.length > 20, key);
      // The key is the account's: its balance and its ledger, with the operator's note.
      assert.equal((await call('GET', 'credits/balance', key)).data.AvailableCredits, 400);
      const ledger = (await call('GET', 'credits/ledger', key)).data as { Type: string; Amount: number; Note: string }[];
      assert.deepEqual(ledger.map((e) => [e.Type, e.Amount, e.Note]).sort(), [
        ['adjustment', -100, ''],
        ['topup', 500, 'Invoice 42'],
      ]);
      await once.getByRole('button', { name: 'Done' }).click();
      await once.waitFor({ state: 'detached' });

      const invite = page.getByRole('form', { name: 'Invite a person to the account' });
      assert.equal(await invite.getByLabel('Role').inputValue(), 'owner');
      await invite.getByLabel('Their email').fill('owner@acme.example');
      await invite.getByLabel('Their name').fill('Ada Acme');
      await invite.getByRole('button', { name: 'Invite' }).click();
      once = page.getByTestId('shown-once');
      await once.waitFor();
      assert.match(await once.innerText(), /Invitation for owner@acme\.example to Acme <b>Corp<\/b>/);
      assert.match(await once.getByTestId('secret').innerText(), /\/console\/#\/invite\/\S+$/);
      const people = (await call('GET', 'users/index', key)).data as { Email: string; Role: string }[];
      assert.deepEqual(
        people.map((p) => [p.Email, p.Role]),
        [['owner@acme.example', 'owner']],
      );
      await checkPage(page, 'operator-account-invite');
      await once.getByRole('button', { name: 'Done' }).click();
      await once.waitFor({ state: 'detached' });
    });

    await t.test('numbers: one added on its page; one added to the demo account and moved to it on Numbers; one removed', async () => {
      const held = async (token: string) => ((await call('GET', 'numbers/index', token)).data as { Number: string }[]).map((n) => n.Number);
      const add = page.getByRole('form', { name: 'Add a number' });
      await add.getByLabel('Number', { exact: true }).fill('12');
      await add.getByRole('button', { name: 'Add number' }).click();
      await add.locator('[data-field="Number"]').filter({ hasText: 'Number is invalid.' }).waitFor();
      await add.getByLabel('Number', { exact: true }).fill(`+${first}`);
      assert.equal(await add.getByLabel('Status').inputValue(), '0');
      await add.getByRole('button', { name: 'Add number' }).click();
      await notice()
        .filter({ hasText: `+${first} now belongs to account ${accountId}.` })
        .waitFor();
      await page
        .getByTestId('service-number')
        .and(page.locator(`[data-number="${first}"]`))
        .waitFor();
      assert.deepEqual(await held(key), [first]);

      await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Numbers', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Numbers', exact: true }).waitFor();
      const form = page.getByRole('form', { name: 'Add a number' });
      await form.getByLabel('Number', { exact: true }).fill(`+${second}`);
      await form.getByLabel('Account', { exact: true }).selectOption(String(demo.account.id));
      await form.getByRole('button', { name: 'Add number' }).click();
      await notice()
        .filter({ hasText: `+${second} now belongs to account ${demo.account.id}.` })
        .waitFor();
      assert.ok((await held(demo.token)).includes(second), 'the demo account holds the number');
      const card = page.getByTestId('service-number').and(page.locator(`[data-number="${second}"]`));
      await card.waitFor();
      assert.equal(await card.getAttribute('data-account'), String(demo.account.id));
      await checkPage(page, 'operator-numbers');

      const change = card.getByRole('form', { name: `Change +${second} of account ${demo.account.id}` });
      await change.getByLabel('Account').selectOption(String(accountId));
      await change.getByRole('button', { name: 'Save' }).click();
      await notice()
        .filter({ hasText: `+${second} moved from account ${demo.account.id} to account ${accountId}.` })
        .waitFor();
      await page
        .getByTestId('service-number')
        .and(page.locator(`[data-number="${second}"][data-account="${accountId}"]`))
        .waitFor();
      assert.deepEqual((await held(key)).sort(), [first, second]);
      assert.ok(!(await held(demo.token)).includes(second), 'the demo account still holds the moved number');

      // Filtered by account: the new account's two numbers only.
      await page.getByRole('form', { name: 'Filters' }).getByLabel('Account Id').fill(String(accountId));
      await page.getByRole('form', { name: 'Filters' }).getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(new RegExp(`AccountId=${accountId}`));
      await until(async () => (await page.getByTestId('service-number').count()) === 2, 'the two numbers of the account');

      const moved = page.getByTestId('service-number').and(page.locator(`[data-number="${second}"]`));
      await moved.getByRole('button', { name: `Remove +${second} from account ${accountId}` }).click();
      const question = page.getByRole('group', { name: 'Confirm' });
      assert.match(await question.innerText(), new RegExp(`Take \\+${second} from “Acme <b>Corp</b>”\\?`));
      await question.getByRole('button', { name: 'Remove number' }).click();
      await notice()
        .filter({ hasText: `+${second} was taken from account ${accountId}.` })
        .waitFor();
      await moved.waitFor({ state: 'detached' });
      assert.deepEqual(await held(key), [first]);
    });

    await t.test("usage counts the account's message; carriers say what carriers/index says", async () => {
      const sent = await call('POST', 'sms/send', key, { MobilePhone: '+12025550123', Message: 'From Acme' });
      assert.equal(sent.status, 201, JSON.stringify(sent.data));
      await until(
        async () => ((await call('GET', 'sms/index', key)).data as { Status_Description: string }[])[0]?.Status_Description === 'Delivered',
        'the message Delivered',
      );
      await nav().getByRole('link', { name: 'Usage', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Usage', exact: true }).waitFor();
      assert.equal(await page.title(), 'Usage · msgsvc console');
      const usage = page.getByTestId('usage-row').and(page.locator(`[data-id="${accountId}"]`));
      await usage.waitFor();
      assert.equal(await usage.getByTestId('usage-outbound').innerText(), '1');
      assert.equal(await usage.getByTestId('usage-delivered').innerText(), '1');
      assert.equal(await usage.getByTestId('usage-failed').innerText(), '0');
      const api = (await admin('GET', 'usage/index')).data as { Id: number; Credits: number }[];
      assert.equal(await usage.getByTestId('usage-credits').innerText(), String(api.find((u) => u.Id === accountId)!.Credits));
      assert.equal(await usage.getByRole('link').getAttribute('href'), `#/operator-accounts/${accountId}`);
      await checkPage(page, 'operator-usage');

      await nav().getByRole('link', { name: 'Carriers', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Carriers', exact: true }).waitFor();
      const carriers = (await admin('GET', 'carriers/index')).data as { Name: string; State: string; Submitted: number; Failed: number }[];
      assert.ok(carriers.length >= 1, 'no carrier is configured');
      for (const c of carriers) {
        const row = page.getByTestId('carrier').and(page.locator(`[data-name="${c.Name}"]`));
        await row.waitFor();
        assert.equal(await row.getAttribute('data-state'), c.State);
        assert.match(await row.getByTestId('carrier-state').innerText(), new RegExp(`^${c.State}:`, 'i'));
        await until(async () => Number(await row.getByTestId('carrier-submitted').innerText()) >= c.Submitted, `${c.Name} Submitted`);
        assert.equal(await row.getByTestId('carrier-failed').innerText(), String(c.Failed));
      }
      assert.ok(
        carriers.some((c) => c.Submitted >= 1),
        `the message is counted by no carrier: ${JSON.stringify(carriers)}`,
      );
      await checkPage(page, 'operator-carriers');
    });

    await t.test('Suspend refuses its writes, Resume lets them through; Name and quotas edited', async () => {
      await open(`operator-accounts/${accountId}`, `Account ${accountId}`);
      await page.getByRole('button', { name: 'Suspend' }).click();
      await notice().filter({ hasText: '“Acme <b>Corp</b>” is suspended' }).waitFor();
      await page.getByTestId('account-status').and(page.locator('[data-status="suspended"]')).waitFor();
      const refused = await call('POST', 'contacts/create', key, { Number: '+12025550124' });
      assert.equal(refused.status, 403);
      assert.equal(refused.data.message, 'This account is suspended.');
      assert.equal((await admin('GET', `accounts/view?id=${accountId}`)).data.Status, 'suspended');
      await checkPage(page, 'operator-account-suspended');

      await page.getByRole('button', { name: 'Resume' }).click();
      await notice().filter({ hasText: '“Acme <b>Corp</b>” is active again' }).waitFor();
      assert.equal((await admin('GET', `accounts/view?id=${accountId}`)).data.Status, 'active');
      assert.equal((await call('POST', 'contacts/create', key, { Number: '+12025550124' })).status, 201);

      const form = page.getByRole('form', { name: 'Edit the account' });
      await form.getByLabel('Name', { exact: true }).fill('Acme Corp');
      await form.getByLabel('Max messages per day').fill('');
      await form.getByRole('button', { name: 'Save changes' }).click();
      await notice().filter({ hasText: 'Saved.' }).waitFor();
      await page
        .getByTestId('account-name')
        .filter({ hasText: /^Acme Corp$/ })
        .waitFor();
      const view = (await admin('GET', `accounts/view?id=${accountId}`)).data;
      assert.deepEqual([view.Name, view.MaxPerSecond, view.MaxPerDay], ['Acme Corp', 5, 0]);
    });

    await t.test("the audit log of every account: the operator's writes, filtered by account", async () => {
      await page.getByRole('link', { name: 'Its audit log' }).click();
      await page.getByRole('heading', { level: 1, name: 'Audit log', exact: true }).waitFor();
      await page.waitForURL(new RegExp(`#/operator-audit\\?AccountId=${accountId}$`));
      assert.equal(await page.getByLabel('Account Id').inputValue(), String(accountId));
      const entries = page.getByTestId('audit-entry');
      await entries.first().waitFor();
      const accounts = new Set(await page.getByTestId('audit-account').allInnerTexts());
      assert.deepEqual([...accounts], [String(accountId)], 'the filter shows other accounts');
      const text = await page.locator('main').innerText();
      for (const operation of ['admin.accounts.create', 'admin.accounts.credits', 'admin.accounts.keys', 'admin.accounts.users'])
        assert.ok(text.includes(operation), `the log shows ${operation}`);
      assert.ok(text.includes(actor), `the log names ${actor}`);
      await checkPage(page, 'operator-audit');

      // Unfiltered: the demo account's entries too (the number moved out of it).
      await nav().getByRole('link', { name: 'Audit log', exact: true }).click();
      await page.waitForURL(/#\/operator-audit$/);
      await until(
        async () => (await page.getByTestId('audit-account').allInnerTexts()).includes(String(demo.account.id)),
        "the demo account's entries",
      );
    });

    await t.test('Close asks first, then closes: the account takes no change and its key stops', async () => {
      await open(`operator-accounts/${accountId}`, `Account ${accountId}`);
      await page.getByRole('button', { name: 'Close account' }).click();
      const question = page.getByRole('group', { name: 'Confirm' });
      const text = await question.innerText();
      for (const part of ['Close account “Acme Corp”', 'keys stop working', 'It keeps its balance (', 'cannot be undone'])
        assert.ok(text.includes(part), `the question says ${part}: ${text}`);
      await question.getByRole('button', { name: 'Keep it' }).click();
      assert.equal((await admin('GET', `accounts/view?id=${accountId}`)).data.Status, 'active', 'Keep it closed it');

      await page.getByRole('button', { name: 'Close account' }).click();
      await page.getByRole('button', { name: 'Close it' }).click();
      await notice().filter({ hasText: '“Acme Corp” is closed' }).waitFor();
      await page.getByTestId('account-status').and(page.locator('[data-status="closed"]')).waitFor();
      assert.equal(await page.getByRole('form', { name: 'Credits of the account' }).count(), 0, 'a closed account still offers changes');
      assert.equal(await page.getByRole('form', { name: 'Add a number' }).count(), 0, 'a closed account is offered a number');
      assert.equal((await call('GET', 'credits/balance', key)).status, 401, 'the closed account key still works');
      await checkPage(page, 'operator-account-closed');
    });

    await t.test('sign out: the sign-in page, and the cookie opens /admin/v1 no more', async () => {
      const csrf = ((await page.evaluate('fetch("/console/api/session").then((r) => r.json())')) as Json).CsrfToken as string;
      assert.equal(
        await page.evaluate(`fetch("/admin/v1/accounts/index").then((r) => r.status)`),
        200,
        'the cookie opens /admin/v1 while signed in',
      );
      assert.equal(
        await page.evaluate(
          `fetch("/admin/v1/accounts/create", { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" }).then((r) => r.status)`,
        ),
        403,
        'a write without the CSRF token',
      );
      assert.ok(csrf.length > 10);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('button', { name: 'Sign in with a key' }).waitFor();
      assert.equal(await page.evaluate(`fetch("/admin/v1/accounts/index").then((r) => r.status)`), 401);
    });

    assert.deepEqual(accountCalls, [], 'the operator session called /v1');
    // Only the deliberate refusals (422, the CSRF check's 403 and the signed-out 401) may show in the browser console.
    assert.deepEqual(
      session.errors.filter((e) => !/\b(422|403|401)\b/.test(e)),
      [],
      'the browser console shows errors',
    );
    assert.deepEqual(session.dialogs, [], 'dialogs opened');
    assert.deepEqual(session.outside, [], 'requests to other origins');
  },
);
