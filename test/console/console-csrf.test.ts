/**
 * CSRF in Chromium (API.md §15.4): signed in to the console, the browser visits a page of another
 * site whose form POSTs to `/v1/groups/create` and whose script fetches it with `credentials:
 * 'include'`. Neither creates anything: the cookie is SameSite=Strict (the browser does not send it
 * from another site) and a request with the cookie but without `X-CSRF-Token` is refused with 403,
 * which the same page, on the console's own origin, shows with a plain fetch.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { signIn, startConsole, until } from './browser.ts';

test(
  'console: a cross-site form POST and fetch to /v1 with the session cookie create nothing; a same-site write without X-CSRF-Token is 403',
  { timeout: 120_000 },
  async (t) => {
    const s = await startConsole(t);
    if (!s) return;
    await signIn(s);
    const port = new URL(s.base).port;
    const target = `http://127.0.0.1:${port}/v1/groups/create`;
    // Another site: localhost is not 127.0.0.1 for the browser's site rules.
    const evil = createServer((req, res) => {
      if (req.url === '/form') {
        res.setHeader('content-type', 'text/html');
        res.end(
          `<!doctype html><html lang="en"><body><form id="f" method="POST" action="${target}">` +
            `<input name="fname" value="Evil form group"></form><script>document.getElementById('f').submit()</script></body></html>`,
        );
      } else {
        res.setHeader('content-type', 'text/html');
        res.end(
          `<!doctype html><html lang="en"><body><script>fetch(${JSON.stringify(target)}, { method: 'POST', credentials: 'include', ` +
            `headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'fname=Evil fetch group' })` +
            `.then((r) => { document.title = 'status ' + r.status; }, () => { document.title = 'blocked'; });</script></body></html>`,
        );
      }
    });
    await new Promise<void>((resolve) => evil.listen(0, 'localhost', resolve));
    t.after(() => evil.close());
    const evilBase = `http://localhost:${(evil.address() as { port: number }).port}`;

    const other = await s.page.context().newPage();
    const answers: number[] = [];
    other.on('response', (r) => {
      if (r.url().startsWith(target)) answers.push(r.status());
    });
    await other.goto(`${evilBase}/form`);
    await until(() => Promise.resolve(answers.length > 0), 'the form POST to be answered');
    assert.notEqual(answers[0], 201);
    await other.goto(`${evilBase}/fetch`);
    await until(async () => (await other.title()) !== '', 'the cross-site fetch to settle');
    await other.close();

    // On the console's own origin, with the cookie: a write without X-CSRF-Token is refused.
    const sameSite = await s.page.evaluate(async (url) => {
      const r = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'fname=No token group',
      });
      return { status: r.status, body: await r.text() };
    }, '/v1/groups/create');
    assert.equal(sameSite.status, 403);
    assert.deepEqual(JSON.parse(sameSite.body), {
      name: 'Forbidden',
      message: 'You are not allowed to perform this action.',
      code: 0,
      status: 403,
    });
    const read = await s.page.evaluate(async () => (await fetch('/v1/credits/balance')).status);
    assert.equal(read, 200, 'the cookie itself works on the same site');

    const groups = await s.store.db.selectFrom('groups').select('name').where('account_id', '=', s.demo.account.id).execute();
    const names = groups.map((g) => g.name);
    for (const evilName of ['Evil form group', 'Evil fetch group', 'No token group'])
      assert.ok(!names.includes(evilName), `${evilName} was not created`);
  },
);
