/**
 * The console in real headless Chromium (playwright-core, Debian's `chromium` at /usr/bin/chromium,
 * which `.ci/run` installs), against a real server on SQLite whose dispatcher sends through the
 * sandbox carrier. Without chromium the test skips with one line, except under CI=true.
 *
 * The flow: sign in through "Sign in with a key" with the demo token (the session is then the
 * HttpOnly cookie: nothing secret in sessionStorage or localStorage, which holds only the flag
 * `msgsvc.console.signedIn`, and no request URL carries `access_token`); the overview with its
 * chart; compose, whose counter turns at 160/161 GSM-7 characters; send
 * `<img src=x onerror=alert(1)>` and watch it become Delivered without a reload, shown literally
 * with no dialog; the message log. On every page: axe-core finds no serious or critical violation,
 * nothing scrolls horizontally at 375 and 1440 px; screenshots go to test-results/. The browser
 * console shows no error, nothing is loaded from another origin, a 429 shows "slow down" until the
 * retry, and a session that ended (its cookie cleared) returns to sign-in, at the next API call as
 * on a reload.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withToken } from '../helpers/app.ts';
import { checkPage, signIn, startConsole, TOKEN_KEY, until } from './browser.ts';

const XSS = '<img src=x onerror=alert(1)>';
const XSS2 = '</script><script>alert(2)</script>';

test('console: sign in, overview, compose, delivery without reload, message log, in Chromium', { timeout: 120_000 }, async (t) => {
  const session = await startConsole(t);
  if (session === undefined) return;
  const { page, demo, base, errors, dialogs, outside } = session;
  // Every URL the page requests: none may carry a secret.
  const urls: string[] = [];
  page.on('request', (request) => urls.push(request.url()));

  // Sign in: the page first, then through "Sign in with a key" with the demo token.
  await page.goto(`${base}/console`);
  await page.getByRole('heading', { name: 'Sign in to msgsvc' }).waitFor();
  await checkPage(page, 'sign-in');
  await signIn(session);

  // The overview.
  await page.locator('.chart canvas').waitFor();
  assert.match(await page.getByTestId('credits').innerText(), /^\d+$/);
  // The session is the HttpOnly cookie: the page keeps no secret, and scripts cannot read the cookie.
  assert.equal(await page.evaluate('sessionStorage.length'), 0, 'the console keeps something in sessionStorage');
  assert.deepEqual(await page.evaluate('JSON.stringify(Object.entries(localStorage))'), JSON.stringify([['msgsvc.console.signedIn', '1']]));
  assert.equal(await page.evaluate(`sessionStorage.getItem('${TOKEN_KEY}') ?? localStorage.getItem('${TOKEN_KEY}')`), null);
  assert.equal(await page.evaluate('document.cookie'), '', 'a script can read the session cookie');
  const cookies = await page.context().cookies();
  assert.deepEqual(
    cookies.map((c) => `${c.name} httpOnly=${c.httpOnly} sameSite=${c.sameSite}`),
    ['msgsvc_session httpOnly=true sameSite=Strict'],
  );
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
  assert.ok(urls.length > 0);
  assert.deepEqual(
    urls.filter((url) => url.includes('access_token') || url.includes(demo.token)),
    [],
    'a request URL carries a secret',
  );

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

  // A session that ended returns to sign-in (the browser logs the 401s itself; not counted above):
  // at the next API call of a page,
  await page.context().clearCookies();
  await page.getByRole('link', { name: 'Messages', exact: true }).click();
  await page.getByRole('heading', { name: 'Sign in to msgsvc' }).waitFor();
  await page.getByText('Your session ended: sign in again.').waitFor();
  assert.equal(await page.evaluate('localStorage.length + sessionStorage.length'), 0);

  // and on a reload.
  await signIn(session);
  assert.equal(await page.evaluate("localStorage.getItem('msgsvc.console.signedIn')"), '1');
  await page.context().clearCookies();
  await page.reload();
  await page.getByRole('heading', { name: 'Sign in to msgsvc' }).waitFor();
  await page.getByText('Your session ended: sign in again.').waitFor();
  assert.equal(await page.evaluate('localStorage.length + sessionStorage.length'), 0);
  assert.deepEqual(
    urls.filter((url) => url.includes('access_token') || url.includes(demo.token)),
    [],
    'a request URL carries a secret',
  );
});
