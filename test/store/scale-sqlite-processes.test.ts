/**
 * Two `msgsvc serve` processes on ONE SQLite file (what `serve --workers 2`, or `serve` beside
 * `msgsvc worker`, amounts to): concurrent writes through both never fail. Before every SQLite
 * transaction started with BEGIN IMMEDIATE (src/store/db.ts inTransaction), a transaction that read
 * and then wrote failed at once with SQLITE_BUSY ("database is locked": 500 or 503) whenever the
 * other process had committed in between (bench/workers.ts found hundreds of them).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDemoAccount, type DemoAccount } from '../../src/domain/demo.ts';
import { recordMappers } from '../../src/records/index.ts';
import { createTimeFormat } from '../../src/lib/time.ts';
import { migrateToLatest, openStore } from '../../src/store/db.ts';
import { startServerProcess, type ServerProcess } from '../helpers/net.ts';
import { describeStores } from '../helpers/stores.ts';

// [sqlite] cases only ({ stores: ['sqlite'] }): two processes on one SQLite file.

describeStores('two serve processes on one SQLite file', { stores: ['sqlite'] }, () => {
  let a: ServerProcess;
  let b: ServerProcess;
  let demo: DemoAccount;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'msgsvc-two-'));
    const dbPath = join(dir, 'msgsvc.db');
    const store = openStore({ kind: 'sqlite', path: dbPath });
    await migrateToLatest(store);
    demo = await createDemoAccount(store, recordMappers(createTimeFormat('UTC')), 'US', 'Two processes');
    await store.close();
    const env = { DATABASE_URL: dbPath, MSGSVC_RATE_LIMIT: '1000000', MSGSVC_DISPATCHER: '0', LOG_LEVEL: 'warn' };
    [a, b] = await Promise.all([startServerProcess(env), startServerProcess(env)]);
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  test('read-then-write transactions through both processes at once: all 200, none locked out', { timeout: 60_000 }, async (t) => {
    const token = encodeURIComponent(demo.token);
    const entries = demo.customFieldEntries.slice(0, 8);
    const group = demo.groups[0]!;
    const statuses = new Map<number, number>();
    let writes = 0;
    const deadline = Date.now() + 2500;
    // 16 writers, half on each process, each sending one write after another for 2.5 s.
    await Promise.all(
      Array.from({ length: 16 }, async (_, w) => {
        const server = w % 2 === 0 ? a : b;
        for (let i = 0; Date.now() < deadline; i++) {
          const entry = entries[w % entries.length]!;
          const res =
            w % 4 === 3
              ? await fetch(`${server.url}/v1/groups/update?id=${group.Id}&access_token=${token}`, {
                  method: 'PUT',
                  headers: { 'content-type': 'application/json' },
                  body: JSON.stringify({ fname: `Group ${w}-${i}`, fnote: `note ${w}-${i}` }),
                })
              : await fetch(`${server.url}/v1/custom-contact-fields-entry/update?id=${entry.Id}&access_token=${token}`, {
                  method: 'PUT',
                  headers: { 'content-type': 'application/json' },
                  body: JSON.stringify({ frfield: entry.CustomFieldId, frcontact: entry.PhoneNumberId, fvalue: `value ${w}-${i}` }),
                });
          await res.arrayBuffer();
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          writes++;
        }
      }),
    );
    t.diagnostic(`${writes} writes: ${JSON.stringify(Object.fromEntries(statuses))}`);
    assert.deepEqual([...statuses.keys()], [200], `every write is 200: ${JSON.stringify(Object.fromEntries(statuses))}`);
    assert.ok(writes > 100, `enough writes to overlap (${writes})`);
  });
});
