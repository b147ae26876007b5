/**
 * People and sessions in the console, in real headless Chromium (test/console/browser.ts: a real
 * server on SQLite with the sandbox carrier, a demo account whose token is a key with scope `*`):
 *
 * - a member invited through the API (users/create with the account's key) opens the InviteUrl,
 *   chooses a password, lands signed in (the HttpOnly cookie: nothing in sessionStorage, no
 *   `access_token` in any request) and sends a message from Compose, Delivered;
 * - a viewer sees no Compose link and no send button, and a send forged with the viewer's cookie
 *   and CSRF token is refused 403;
 * - an admin creates a key (its secret shown once), invites a person from the People page (the
 *   InviteUrl shown), turns on two-factor sign-in from the QR code's secret (10 recovery codes
 *   shown once), adds a passkey (Chromium's virtual authenticator) and signs in with it, then
 *   signs in again with the password and a recovery code as the Code;
 * - axe-core finds no serious or critical violation, and nothing scrolls horizontally at 375 and
 *   1440 px, on the invite, Keys, People, Security and Audit pages; the audit log lists the
 *   changes made; the browser console shows no error but the deliberate 422 asking for the code.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as OTPAuth from 'otpauth';
import { checkPage, seriousViolations, startConsole, until, type ConsoleSession } from './browser.ts';

const PASSWORD = 'correct horse battery staple 42';

/** Invites `email` with `role` through the API with the account's key; returns the invite page on this server (at `base`). */
async function invite(session: ConsoleSession, email: string, role: string, base = session.base): Promise<string> {
  const response = await fetch(`${session.base}/v1/users/create?access_token=${session.demo.token}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ Email: email, Name: `Test ${role}`, Role: role }),
  });
  assert.equal(response.status, 201, await response.clone().text());
  const { InviteUrl } = (await response.json()) as { InviteUrl: string };
  const code = /\/console\/#\/invite\/([^/]+)$/.exec(InviteUrl)?.[1];
  assert.ok(code, `InviteUrl ${InviteUrl}`);
  return `${base}/console/#/invite/${code}`;
}

/** Opens an invitation, chooses the password and waits for the overview. */
async function acceptInvite(session: ConsoleSession, url: string, check = false): Promise<void> {
  const { page } = session;
  await page.goto(url);
  await page.getByRole('heading', { name: 'Choose your password' }).waitFor();
  assert.equal(await page.title(), 'Choose your password · msgsvc console');
  if (check) assert.deepEqual(await seriousViolations(page), [], 'axe on the invite page');
  await page.getByLabel('New password').fill(PASSWORD);
  await page.getByLabel('Repeat the password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Set password and sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
}

async function signOut(session: ConsoleSession): Promise<void> {
  await session.page.getByRole('button', { name: 'Sign out' }).click();
  await session.page.getByRole('heading', { name: 'Sign in to msgsvc' }).waitFor();
}

/** Opens a page of the navigation and waits for its heading. */
async function open(session: ConsoleSession, link: string, heading: string): Promise<void> {
  await session.page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: link, exact: true }).click();
  await session.page.getByRole('heading', { name: heading, exact: true }).waitFor();
}

test(
  'console: invite a member who sends, a viewer who cannot, keys, people, two-factor, a passkey and the audit log, in Chromium',
  { timeout: 300_000 },
  async (t) => {
    const session = await startConsole(t);
    if (session === undefined) return;
    const { page, base, errors, dialogs, outside } = session;
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));

    // A member: invited through the API, sets a password, lands signed in, sends from Compose.
    await acceptInvite(session, await invite(session, 'member@example.com', 'member'), true);
    assert.equal(await page.getByTestId('who').innerText(), 'Test member');
    assert.equal(await page.title(), 'Overview · msgsvc console');
    assert.equal(await page.evaluate('sessionStorage.length'), 0, 'the console keeps something in sessionStorage');
    await open(session, 'Compose', 'Compose');
    await page.getByLabel('To (mobile number)').fill('+1 202 555 0171');
    await page.getByLabel('Message').fill('Sent by a member');
    await page.getByRole('button', { name: 'Send now' }).click();
    await page.waitForURL(/#\/messages\/\d+$/);
    await page
      .getByTestId('status')
      .filter({ hasText: /^Delivered$/ })
      .waitFor({ timeout: 20_000 });
    assert.equal(await page.getByTestId('text').textContent(), 'Sent by a member');
    await page.getByRole('heading', { name: 'Link clicks' }).waitFor();
    // A member manages no keys or people.
    for (const name of ['Keys', 'People', 'Audit log']) assert.equal(await page.getByRole('link', { name, exact: true }).count(), 0, name);
    await signOut(session);

    // A viewer: no Compose link, no send button, and a forged send is refused.
    await acceptInvite(session, await invite(session, 'viewer@example.com', 'viewer'));
    assert.equal(await page.getByRole('link', { name: 'Compose', exact: true }).count(), 0);
    await page.goto(`${base}/console/#/compose`);
    await page.getByText('Your role can read messages but not send them.').waitFor();
    assert.equal(await page.getByRole('button', { name: /^Send/ }).count(), 0);
    const { CsrfToken } = (await (await page.request.get(`${base}/console/api/session`)).json()) as { CsrfToken: string };
    const forged = await page.request.post(`${base}/v1/sms/send`, {
      headers: { 'X-CSRF-Token': CsrfToken },
      data: { MobilePhone: '+12025550172', Message: 'forged' },
    });
    assert.equal(forged.status(), 403);
    assert.equal(((await forged.json()) as { message: string }).message, 'You are not allowed to perform this action.');
    await signOut(session);

    // An admin, on http://localhost (WebAuthn takes no IP address as the relying party, for the
    // passkey below): a key with its secret shown once; an invitation from the People page.
    const localhost = base.replace('//127.0.0.1:', '//localhost:');
    await acceptInvite(session, await invite(session, 'admin@example.com', 'admin', localhost));
    await open(session, 'Keys', 'Keys');
    assert.equal(await page.title(), 'Keys · msgsvc console');
    await page.getByLabel('Key name').fill('ci');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = await page.getByTestId('secret').innerText();
    assert.match(secret, /^\S{16,}$/);
    await page.getByText('you will not see it again').waitFor();
    await page.locator('[data-testid="key"][data-name="ci"]').waitFor();
    assert.ok((await page.locator('[data-testid="key"][data-name="ci"]').innerText()).includes(`${secret.slice(0, 8)}…`));
    await checkPage(page, 'keys');
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByTestId('secret').waitFor({ state: 'detached' });

    await open(session, 'People', 'People');
    await page.getByLabel('Their email').fill('new@example.com');
    await page.getByLabel('Their name').fill('New person');
    await page.getByRole('button', { name: 'Invite', exact: true }).click();
    assert.match(await page.getByTestId('secret').innerText(), /\/console\/#\/invite\/\S+$/);
    await page.locator('[data-testid="person"][data-email="new@example.com"]').waitFor();
    await checkPage(page, 'people');

    // Two-factor: the code of the QR code's secret turns it on; 10 recovery codes are shown once.
    await open(session, 'Security', 'Your security');
    await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
    await page.getByTestId('qr').waitFor();
    const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(await page.getByTestId('totp-secret').innerText()) });
    await page.getByLabel('Code from your app').fill(totp.generate());
    await page.getByRole('button', { name: 'Turn on two-factor' }).click();
    await page.getByTestId('recovery-codes').waitFor();
    const codes = (await page.getByTestId('recovery-codes').locator('li').allInnerTexts()).map((c) => c.trim());
    assert.equal(codes.length, 10);
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByTestId('two-factor-state').filter({ hasText: /^On:/ }).waitFor();

    // A passkey, with Chromium's virtual authenticator (CDP WebAuthn domain).
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
    });
    await page.getByLabel('Passkey name').fill('Virtual authenticator');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByTestId('passkey').filter({ hasText: 'Virtual authenticator' }).waitFor();
    await checkPage(page, 'security');

    await open(session, 'Audit log', 'Audit log');
    await page.getByTestId('audit-entry').first().waitFor();
    const operations = await page.locator('[data-testid="audit-entry"] td[data-label="Operation"]').allInnerTexts();
    for (const op of ['keys.create', 'users.create', 'session.create'])
      assert.ok(operations.includes(op), `${op} in ${operations.join(', ')}`);
    await checkPage(page, 'audit');
    await page.getByLabel('Operation').fill('keys.create');
    await page.getByRole('button', { name: 'Filter' }).click();
    await until(
      async () => (await page.locator('[data-testid="audit-entry"] td[data-label="Operation"]').allInnerTexts()).join() === 'keys.create',
      'the audit log filtered to keys.create',
    );

    // Signing in with the passkey, on the page the address names.
    await signOut(session);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.getByRole('heading', { name: 'Audit log', exact: true }).waitFor();
    assert.equal(await page.getByTestId('who').innerText(), 'Test admin');

    // Signing in again asks for the code (a 422 the browser logs), and a recovery code stands in for it.
    await signOut(session);
    const logged = errors.length;
    await page.getByLabel('Email', { exact: true }).fill('admin@example.com');
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByLabel('Two-factor code').fill(codes[0]!);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Audit log', exact: true }).waitFor();
    assert.equal(await page.getByTestId('who').innerText(), 'Test admin');
    assert.ok(
      errors.slice(logged).every((e) => e.includes('422')),
      errors.slice(logged).join('\n'),
    );
    errors.splice(logged);

    // And with a code the test computes from the secret, one step ahead (the enrolment used the
    // current step's code, which is now refused as used).
    await signOut(session);
    const beforeCode = errors.length;
    await page.getByLabel('Email', { exact: true }).fill('admin@example.com');
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByLabel('Two-factor code').fill(totp.generate({ timestamp: Date.now() + 30_000 }));
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Audit log', exact: true }).waitFor();
    assert.equal(await page.getByTestId('who').innerText(), 'Test admin');
    assert.ok(
      errors.slice(beforeCode).every((e) => e.includes('422')),
      errors.slice(beforeCode).join('\n'),
    );
    errors.splice(beforeCode);

    assert.deepEqual(
      requests.filter((url) => /access_token/i.test(url)),
      [],
      'a request of the console carries access_token',
    );
    assert.deepEqual(dialogs, []);
    assert.deepEqual(errors, [], 'the browser console shows errors');
    assert.deepEqual(
      outside.filter((url) => !url.startsWith(`${localhost}/`)),
      [],
      'the page loaded something from another origin',
    );
  },
);
