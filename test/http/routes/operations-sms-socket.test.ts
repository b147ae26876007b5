/**
 * A message's whole life through a real `msgsvc serve` process (API.md §10.6, §11.2): the
 * dispatcher runs inside serve with the sandbox carrier by default, so a send over HTTP becomes
 * Delivered (polled with a bounded wait, never a fixed sleep); with MSGSVC_DISPATCHER=0 it stays
 * Queued. `msgsvc worker` is listed by the CLI.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDemoAccount, type DemoAccount } from '../../../src/domain/demo.ts';
import { createTimeFormat } from '../../../src/lib/time.ts';
import { recordMappers } from '../../../src/records/index.ts';
import { parseDatabaseUrl } from '../../../src/config.ts';
import { migrateToLatest, openStore } from '../../../src/store/db.ts';
import { testDatabaseUrl } from '../../helpers/app.ts';
import { startServerProcess } from '../../helpers/net.ts';
import { storeTest } from '../../helpers/stores.ts';

async function seeded(t: { after(fn: () => unknown): void }): Promise<{ databaseUrl: string; demo: DemoAccount }> {
  const dir = mkdtempSync(join(tmpdir(), 'msgsvc-sms-socket-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const databaseUrl = await testDatabaseUrl(dir);
  const store = openStore(parseDatabaseUrl(databaseUrl));
  try {
    await migrateToLatest(store);
    return { databaseUrl, demo: await createDemoAccount(store, recordMappers(createTimeFormat('UTC')), 'US', 'Socket') };
  } finally {
    await store.close();
  }
}

async function statusUntil(url: string, want: string, ms: number): Promise<string> {
  const deadline = Date.now() + ms;
  let last = '';
  while (Date.now() < deadline) {
    last = ((await (await fetch(url)).json()) as { Status_Description: string }).Status_Description;
    if (last === want) return last;
    await new Promise((r) => setTimeout(r, 25));
  }
  return last;
}

storeTest(
  'msgsvc serve dispatches to the sandbox: a send over HTTP is Sent, then Delivered; MSGSVC_DISPATCHER=0 leaves it Queued',
  { timeout: 60_000 },
  async (t) => {
    const { databaseUrl, demo } = await seeded(t);
    const token = encodeURIComponent(demo.token);
    const server = await startServerProcess({ DATABASE_URL: databaseUrl, MSGSVC_SANDBOX_RECEIPT_MS: '200', MSGSVC_DISPATCH_POLL_MS: '20' });
    t.after(() => server.stop('SIGKILL'));
    const sent = await fetch(`${server.url}/v1/sms/send?access_token=${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ Message: 'Hello from the sandbox', MobilePhone: '+15551234567' }),
    });
    assert.equal(sent.status, 201);
    assert.equal(sent.headers.get('location')?.startsWith(`${server.url}/v1/sms/view?id=`), true);
    const view = `${sent.headers.get('location')}&access_token=${token}`;
    assert.equal(await statusUntil(view, 'Delivered', 10_000), 'Delivered');
    const record = (await (await fetch(view)).json()) as { DateSent: string | null; DateDelivered: string | null };
    assert.ok(record.DateSent !== null && record.DateDelivered !== null);
    assert.equal(await server.stop('SIGTERM'), 0);

    const off = await startServerProcess({ DATABASE_URL: databaseUrl, MSGSVC_DISPATCHER: '0' });
    t.after(() => off.stop('SIGKILL'));
    const queued = await fetch(`${off.url}/v1/sms/send?access_token=${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ Message: 'nobody takes this', MobilePhone: '+15551234567' }),
    });
    assert.equal(queued.status, 201);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await statusUntil(`${queued.headers.get('location')}&access_token=${token}`, 'Queued', 1000), 'Queued');
    await off.stop('SIGTERM');
  },
);

test('msgsvc --help lists the worker command', () => {
  const root = fileURLToPath(new URL('../../..', import.meta.url));
  const help = execFileSync(process.execPath, ['bin/msgsvc.js', '--help'], { cwd: root, encoding: 'utf8' });
  assert.match(help.replace(/\s+/g, ' '), /worker \[options\] run the dispatcher alone, without HTTP/);
});
