/**
 * The console's API client (console/src/api.ts) marks every request with `X-Msgsvc-Client:
 * console`, so a change of a contact's opt-out made from the console is recorded in the contact's
 * consent ledger with Source `console` (API.md §14.4.2 contacts/consent; src/domain/consent.ts).
 * Run in Node against a real listening server: the client is the console's own module, with the
 * browser globals it reads (`location`, and a `fetch` that, like a browser's, resolves paths
 * against the origin and keeps the session cookie for it) set for the test. The console signs in
 * as it does in a browser: `POST /console/api/session` with a key sets the HttpOnly cookie, `GET
 * /console/api/session` gives the session (and its CSRF token), and its client then calls `/v1`
 * with the cookie alone. The module is imported by URL: it is type-checked with the console's DOM
 * settings (console/tsconfig.json), not the server's.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../helpers/app.ts';

/** What this test uses of console/src/api.ts and of the client it returns. */
interface ConsoleSession {
  CsrfToken: string;
}
interface ConsoleApi {
  signIn(this: void, body: { Key: string }): Promise<{ response: Response }>;
  loadSession(this: void): Promise<ConsoleSession | undefined>;
  createApi(
    this: void,
    session: ConsoleSession,
    events: { unauthorized(): void; slowDown(seconds: number | undefined): void },
  ): {
    PUT(path: string, init: { params: { query: Record<string, string> }; body: Record<string, unknown> }): Promise<{ response: Response }>;
  };
}
const API_MODULE = new URL('../../console/src/api.ts', import.meta.url).href;

/** A request the console's module made: its method, URL and headers as sent. */
interface Sent {
  method: string;
  url: URL;
  headers: Headers;
}

/**
 * A browser's fetch for a page at `origin`, as far as the console needs it: a path is resolved
 * against the origin, and the cookies the origin set (`Set-Cookie`) go back to it on later
 * requests (`credentials: 'same-origin'`). Every request is noted in `sent`.
 */
function browserFetch(origin: string, sent: Sent[]): typeof fetch {
  const jar = new Map<string, string>();
  const real = globalThis.fetch;
  return async (input, init) => {
    const request = new Request(new URL(input instanceof Request ? input.url : String(input), origin), init);
    const url = new URL(request.url);
    const headers = new Headers(request.headers);
    if (url.origin === origin && jar.size > 0) headers.set('Cookie', [...jar].map(([name, value]) => `${name}=${value}`).join('; '));
    sent.push({ method: request.method, url, headers });
    const body = request.body === null ? undefined : await request.arrayBuffer();
    const response = await real(url, { method: request.method, headers, body, redirect: request.redirect, signal: request.signal });
    if (url.origin === origin) {
      for (const line of response.headers.getSetCookie()) {
        const [pair = '', ...attributes] = line.split(';');
        const at = pair.indexOf('=');
        const name = pair.slice(0, at).trim();
        const value = pair.slice(at + 1).trim();
        const gone = value === '' || attributes.some((a) => /^\s*max-age\s*=\s*0\s*$/i.test(a));
        if (gone) jar.delete(name);
        else jar.set(name, value);
      }
    }
    return response;
  };
}

test('console: its API client sends X-Msgsvc-Client: console, and its contacts/update is a `console` consent entry', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const address = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const sent: Sent[] = [];
  const globals = globalThis as unknown as { location?: { origin: string }; fetch: typeof fetch };
  const saved = { location: globals.location, fetch: globals.fetch };
  globals.location = { origin: address };
  globals.fetch = browserFetch(address, sent);
  t.after(() => {
    globals.location = saved.location;
    globals.fetch = saved.fetch;
  });

  // Sign in as the console does (a key: the demo token), and read the session.
  const { signIn, loadSession, createApi } = (await import(API_MODULE)) as ConsoleApi;
  assert.equal((await signIn({ Key: demo.token })).response.status, 204);
  const session = await loadSession();
  assert.ok(session !== undefined, 'no session after signing in with the key');

  let unauthorized = 0;
  const api = createApi(session, { unauthorized: () => void unauthorized++, slowDown() {} });
  const contact = demo.contacts.find((c) => c.OptedOut === 0)!;
  const { response } = await api.PUT('/v1/contacts/update', { params: { query: { id: String(contact.Id) } }, body: { OptedOut: 1 } });
  assert.equal(response.status, 200);
  assert.equal(unauthorized, 0);

  // The update went with the header, the session cookie and its CSRF token, and no secret in its URL.
  const update = sent.find((s) => s.url.pathname === '/v1/contacts/update');
  assert.ok(update !== undefined, 'the client made no contacts/update request');
  assert.equal(update.method, 'PUT');
  assert.equal(update.headers.get('X-Msgsvc-Client'), 'console');
  assert.match(update.headers.get('Cookie') ?? '', /(^|; )msgsvc_session=[^;]+/);
  assert.equal(update.headers.get('X-CSRF-Token'), session.CsrfToken);
  assert.equal(update.url.searchParams.has('access_token'), false, 'the update URL carries access_token');
  for (const s of sent) {
    assert.equal(s.headers.get('X-Msgsvc-Client'), 'console', `${s.method} ${s.url.pathname} without X-Msgsvc-Client`);
    assert.ok(!s.url.search.includes('access_token'), `${s.method} ${s.url.pathname} carries access_token`);
  }

  const rows = await ctx.store.db
    .selectFrom('contact_consent')
    .select(['opted_out', 'source', 'detail', 'carrier'])
    .where('contact_id', '=', contact.Id)
    .execute();
  assert.deepEqual(
    rows.map((r) => `${r.opted_out} ${r.source} ${r.detail} ${r.carrier}`.trimEnd()),
    ['1 console contacts/update'],
  );
});
