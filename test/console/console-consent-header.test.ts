/**
 * The console's API client (console/src/api.ts) marks every request with `X-Msgsvc-Client:
 * console`, so a change of a contact's opt-out made from the console is recorded in the contact's
 * consent ledger with Source `console` (API.md §14.4.2 contacts/consent; src/domain/consent.ts).
 * Run in Node against a real listening server: the client is the console's own module, with the
 * browser globals it reads (`location`) set for the test. The module is imported by URL: it is
 * type-checked with the console's DOM settings (console/tsconfig.json), not the server's.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../helpers/app.ts';

/** What this test uses of console/src/api.ts and of the client it returns. */
interface ConsoleApi {
  createApi(
    this: void,
    token: string,
    events: { unauthorized(): void; slowDown(seconds: number | undefined): void },
  ): {
    PUT(path: string, init: { params: { query: Record<string, string> }; body: Record<string, unknown> }): Promise<{ response: Response }>;
  };
}
const API_MODULE = new URL('../../console/src/api.ts', import.meta.url).href;

test('console: its API client sends X-Msgsvc-Client: console, and its contacts/update is a `console` consent entry', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const address = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const globals = globalThis as unknown as { location?: { origin: string } };
  const saved = globals.location;
  globals.location = { origin: address };
  t.after(() => {
    globals.location = saved;
  });

  const { createApi } = (await import(API_MODULE)) as ConsoleApi;
  const api = createApi(demo.token, { unauthorized() {}, slowDown() {} });
  const contact = demo.contacts.find((c) => c.OptedOut === 0)!;
  const { response } = await api.PUT('/v1/contacts/update', { params: { query: { id: String(contact.Id) } }, body: { OptedOut: 1 } });
  assert.equal(response.status, 200);
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
