/**
 * The audit log across kill -9 (API.md §15.5), on each store: a real `msgsvc serve` takes
 * concurrent creates (contacts and groups, from eight writers), is killed with SIGKILL in the
 * middle, and restarted on the same data. Then every committed change has its entry (ObjectId,
 * Operation, Status), and no success entry names a change that did not commit: the entry is
 * written in the change's own transaction.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDemoAccount } from '../../src/domain/demo.ts';
import { recordMappers } from '../../src/records/index.ts';
import { createTimeFormat } from '../../src/lib/time.ts';
import { migrateToLatest, openStore } from '../../src/store/db.ts';
import { loadConfig } from '../../src/config.ts';
import { startServerProcess } from '../helpers/net.ts';
import { createTestDatabase, storeTest, testStoreKind } from '../helpers/stores.ts';

const WRITERS = 8;

storeTest('audit across kill -9: every committed change has its entry, and no entry claims a change that did not commit', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'msgsvc-audit-crash-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const databaseUrl = testStoreKind() === 'postgres' ? await createTestDatabase(dir) : join(dir, 'msgsvc.db');
  const config = loadConfig({ DATABASE_URL: databaseUrl, MSGSVC_DEMO: '0' });
  const seedStore = openStore(config.database);
  await migrateToLatest(seedStore);
  const demo = await createDemoAccount(seedStore, recordMappers(createTimeFormat('UTC')), 'US', 'Audit crash');
  await seedStore.close();

  const env = { DATABASE_URL: databaseUrl, MSGSVC_RATE_LIMIT: '1000000', MSGSVC_DISPATCHER: '0', LOG_LEVEL: 'silent' };
  const server = await startServerProcess(env);
  let stop = false;
  let sent = 0;
  const acked = new Set<string>();
  const writer = async (w: number) => {
    for (let i = 0; !stop; i++) {
      const kind = i % 2 === 0 ? 'contacts' : 'groups';
      const body =
        kind === 'contacts' ? { Number: `+1555${String(w).padStart(2, '0')}${String(i).padStart(5, '0')}` } : { fname: `Crash ${w}-${i}` };
      sent++;
      try {
        const res = await fetch(`${server.url}/v1/${kind}/create?access_token=${demo.token}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        if (res.status === 201) acked.add(`${kind}:${((await res.json()) as { Id: number }).Id}`);
      } catch {
        return; // the server is gone
      }
    }
  };
  const writers = Array.from({ length: WRITERS }, (_, w) => writer(w));
  // Kill once a few hundred requests are in, at a moment that falls inside some of them.
  while (sent < 300 + Math.floor(Math.random() * 200)) await new Promise((r) => setTimeout(r, 5));
  server.child.kill('SIGKILL');
  stop = true;
  await Promise.all(writers);
  await server.stop();

  const restarted = await startServerProcess(env);
  try {
    const store = openStore(config.database);
    try {
      const contacts = await store.db.selectFrom('contacts').select('id').where('account_id', '=', demo.account.id).execute();
      const groups = await store.db.selectFrom('groups').select('id').where('account_id', '=', demo.account.id).execute();
      const log = await store.db
        .selectFrom('audit_log')
        .select(['operation', 'object_id', 'status'])
        .where('account_id', '=', demo.account.id)
        .execute();
      const seeded = { contacts: new Set(demo.contacts.map((c) => c.Id)), groups: new Set(demo.groups.map((g) => g.Id)) };
      const committed = [
        ...contacts.filter((c) => !seeded.contacts.has(c.id)).map((c) => `contacts:${c.id}`),
        ...groups.filter((g) => !seeded.groups.has(g.id)).map((g) => `groups:${g.id}`),
      ];
      const entries = new Set(log.filter((e) => Number(e.status) === 201).map((e) => `${e.operation.split('.')[0]}:${e.object_id}`));
      assert.ok(committed.length > 50, `enough changes committed (${committed.length})`);
      for (const change of committed) assert.ok(entries.has(change), `${change} committed with its entry`);
      const exists = new Set(committed);
      for (const entry of entries) assert.ok(exists.has(entry), `the entry ${entry} names a committed change`);
      for (const a of acked) assert.ok(exists.has(a), `acknowledged ${a} is there`);
      t.diagnostic(`${sent} requests, ${acked.size} acknowledged, ${committed.length} committed, ${entries.size} success entries`);
    } finally {
      await store.close();
    }
    // The server is whole after the restart: a write still gets its entry.
    const res = await fetch(`${restarted.url}/v1/groups/create?access_token=${demo.token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"fname":"After the crash"}',
    });
    assert.equal(res.status, 201);
  } finally {
    await restarted.stop();
  }
});
