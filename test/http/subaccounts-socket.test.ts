/**
 * Suspended and closed sub-accounts over real HTTP, through `msgsvc serve` processes (docs/API.md
 * §16.2): a suspended account's writes get 403 `This account is suspended.` while its reads go on;
 * its Queued messages wait while a dispatcher runs, and go out once it is active again. A closed
 * account's Queued message ends Rejected `ACCOUNT_CLOSED`, its credits are back with the parent, and
 * its key is an unknown token (401). The ledger adds up at the end.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDatabaseUrl } from '../../src/config.ts';
import { createDemoAccount, type DemoAccount } from '../../src/domain/demo.ts';
import { createTimeFormat } from '../../src/lib/time.ts';
import { recordMappers } from '../../src/records/index.ts';
import { migrateToLatest, openStore } from '../../src/store/db.ts';
import { testDatabaseUrl } from '../helpers/app.ts';
import { assertLedgerAddsUp } from '../helpers/ledger.ts';
import { startServerProcess, type ServerProcess } from '../helpers/net.ts';
import { storeTest } from '../helpers/stores.ts';

async function seeded(t: { after(fn: () => unknown): void }): Promise<{ databaseUrl: string; demo: DemoAccount }> {
  const dir = mkdtempSync(join(tmpdir(), 'msgsvc-subaccounts-socket-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const databaseUrl = await testDatabaseUrl(dir);
  const store = openStore(parseDatabaseUrl(databaseUrl));
  try {
    await migrateToLatest(store);
    return { databaseUrl, demo: await createDemoAccount(store, recordMappers(createTimeFormat('UTC')), 'US', 'Reseller') };
  } finally {
    await store.close();
  }
}

/** One request over the socket; the JSON body (undefined for 204). */
async function req(server: ServerProcess, token: string, method: string, path: string, body?: unknown, query = '') {
  const res = await fetch(`${server.url}${path}?access_token=${encodeURIComponent(token)}${query ? `&${query}` : ''}`, {
    method,
    headers: { accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, json: (text ? JSON.parse(text) : undefined) as Record<string, unknown> & Record<string, unknown>[] };
}

async function statuses(server: ServerProcess, token: string): Promise<string[]> {
  const res = await req(server, token, 'GET', '/v1/sms/index');
  assert.equal(res.status, 200);
  return (res.json as unknown as { Status_Description: string }[]).map((m) => m.Status_Description);
}

storeTest(
  'suspended and closed sub-accounts over real HTTP: writes 403, reads on; Queued held then released; closed: Rejected, refunded, 401',
  { timeout: 90_000 },
  async (t) => {
    const { databaseUrl, demo } = await seeded(t);
    const env = { DATABASE_URL: databaseUrl, MSGSVC_SANDBOX_RECEIPT_MS: '100', MSGSVC_DISPATCH_POLL_MS: '20', LOG_LEVEL: 'warn' };
    // First without a dispatcher, so that messages stay Queued while the accounts change.
    let server = await startServerProcess({ ...env, MSGSVC_DISPATCHER: '0' });
    t.after(() => server.stop('SIGKILL'));
    const p = demo.token;
    const start = (await req(server, p, 'GET', '/v1/credits/balance')).json.AvailableCredits as number;
    const active = demo.numbers.filter((n) => n.Status_Id === 0).map((n) => n.Number);
    assert.ok(active.length >= 2, 'the demo has two Active numbers');

    const child = async (name: string, number: string) => {
      const made = await req(server, p, 'POST', '/v1/subaccounts/create', { Name: name, Credits: 20 });
      assert.equal(made.status, 201);
      const id = made.json.Id as number;
      const key = await req(server, p, 'POST', '/v1/subaccounts/keys', { Name: 'k' }, `id=${id}`);
      assert.equal(key.status, 201);
      assert.equal((await req(server, p, 'POST', '/v1/subaccounts/numbers', { Number: number }, `id=${id}`)).status, 200);
      return { id, token: key.json.Secret as string };
    };
    const held = await child('Held', active[0]!);
    const closing = await child('Closing', active[1]!);
    const send = (token: string) => req(server, token, 'POST', '/v1/sms/send', { Message: 'hello', MobilePhone: '+15551234567' });
    for (let i = 0; i < 2; i++) assert.equal((await send(held.token)).status, 201);
    assert.equal((await send(closing.token)).status, 201);

    // Suspended: writes refused with the exact message, reads go on.
    const suspended = await req(server, p, 'PATCH', '/v1/subaccounts/update', { Status: 'suspended' }, `id=${held.id}`);
    assert.equal(suspended.json.Status, 'suspended');
    const refused = await send(held.token);
    assert.deepEqual(
      [refused.status, refused.json],
      [403, { name: 'Forbidden', message: 'This account is suspended.', code: 0, status: 403 }],
    );
    assert.deepEqual(await statuses(server, held.token), ['Queued', 'Queued']);

    // Closed: its Queued message Rejected ACCOUNT_CLOSED and refunded, its credits with the parent, its key 401.
    assert.equal((await req(server, p, 'DELETE', '/v1/subaccounts/delete', undefined, `id=${closing.id}`)).status, 204);
    const gone = await req(server, closing.token, 'GET', '/v1/credits/balance');
    assert.deepEqual([gone.status, gone.json.message], [401, 'Your request was made with invalid credentials.']);
    const log = await req(server, p, 'GET', '/v1/subaccounts/view', undefined, `id=${closing.id}`);
    assert.deepEqual([log.json.Status, log.json.AvailableCredits], ['closed', 0]);
    assert.equal((await req(server, p, 'GET', '/v1/credits/balance')).json.AvailableCredits, start - 20, "Closing's 20 credits are back");

    // With a dispatcher running, the suspended account's messages wait.
    await server.stop('SIGTERM');
    server = await startServerProcess(env);
    const until = Date.now() + 1500;
    while (Date.now() < until) {
      assert.deepEqual(await statuses(server, held.token), ['Queued', 'Queued'], 'held while suspended');
      await new Promise((r) => setTimeout(r, 100));
    }
    // Active again: they go out.
    assert.equal((await req(server, p, 'PATCH', '/v1/subaccounts/update', { Status: 'active' }, `id=${held.id}`)).status, 200);
    const deadline = Date.now() + 15_000;
    let now = await statuses(server, held.token);
    while (!now.every((s) => s === 'Delivered') && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      now = await statuses(server, held.token);
    }
    assert.deepEqual(now, ['Delivered', 'Delivered']);
    assert.equal(await server.stop('SIGTERM'), 0);

    const store = openStore(parseDatabaseUrl(databaseUrl));
    try {
      const rejected = await store.db
        .selectFrom('messages')
        .select(['status_id', 'error_code'])
        .where('account_id', '=', closing.id)
        .execute();
      assert.deepEqual(
        rejected.map((m) => [Number(m.status_id), m.error_code]),
        [[6, 'ACCOUNT_CLOSED']],
      );
      await assertLedgerAddsUp(store, 'after the processes');
    } finally {
      await store.close();
    }
  },
);
