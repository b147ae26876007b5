/**
 * WAL checkpoints on a thread of their own (src/store/checkpointer.ts, MSGSVC_SQLITE_CHECKPOINT_MS):
 * the request connection never checkpoints (wal_autocheckpoint = 0), and the thread keeps the WAL
 * from growing: under the same writes, the WAL file stays a fraction of what it grows to when
 * nobody checkpoints. With 0 the connection keeps SQLite's automatic checkpoint.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { checkpointRounds, openStore, sqliteHandle, type Store } from '../../src/store/db.ts';
import { loadConfig } from '../../src/config.ts';
import { storeTest } from '../helpers/stores.ts';

// [sqlite] cases only ({ stores: ['sqlite'] }): SQLite WAL checkpoints.

/** Writes 20 bursts of 150 commits of ~2 KB; returns the WAL file's size in bytes after them. */
async function writeBursts(store: Store, file: string): Promise<number> {
  const sqlite = sqliteHandle(store.db)!;
  sqlite.exec('create table if not exists t (id integer primary key, v text)');
  const insert = sqlite.prepare('insert into t (v) values (?)');
  for (let burst = 0; burst < 20; burst++) {
    for (let i = 0; i < 150; i++) insert.run('x'.repeat(2000));
    // Room for the thread's round between bursts (it never blocks these writes). With a thread,
    // wait (bounded) until it has completed a round after the burst: a loaded machine may not
    // schedule it within any fixed time, and this test is about where checkpoints run, not speed.
    const before = await checkpointRounds(store.db);
    for (let waited = 0; before !== undefined && waited < 2000; waited += 10) {
      await new Promise((r) => setTimeout(r, 10));
      if ((await checkpointRounds(store.db))! > before) break;
    }
    if (before === undefined) await new Promise((r) => setTimeout(r, 30));
  }
  return statSync(`${file}-wal`).size;
}

storeTest('the checkpoint thread keeps the WAL small while the request connection never checkpoints', { stores: ['sqlite'] }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'msgsvc-ckpt-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));

  const withThread = openStore({ kind: 'sqlite', path: join(dir, 'thread.db'), checkpointMs: 20 });
  const pragma = (s: Store, name: string) => sqliteHandle(s.db)!.pragma(name, { simple: true });
  assert.equal(pragma(withThread, 'wal_autocheckpoint'), 0, 'the request connection leaves checkpoints to the thread');
  const threadWal = await writeBursts(withThread, join(dir, 'thread.db'));
  await withThread.close();

  // Control: nobody checkpoints (what the thread's absence would mean with autocheckpoint off).
  const control = openStore({ kind: 'sqlite', path: join(dir, 'control.db') });
  sqliteHandle(control.db)!.pragma('wal_autocheckpoint = 0');
  const controlWal = await writeBursts(control, join(dir, 'control.db'));
  await control.close();

  t.diagnostic(`WAL after 3,000 commits of ~2 KB: ${threadWal} bytes with the thread, ${controlWal} without any checkpoint`);
  assert.ok(controlWal > 6_000_000, `the control WAL grew (${controlWal})`);
  assert.ok(threadWal < controlWal / 3, `the thread checkpointed: ${threadWal} vs ${controlWal}`);
});

storeTest(
  'MSGSVC_SQLITE_CHECKPOINT_MS: default 0 keeps the automatic checkpoint of SQLite; a value starts the thread',
  { stores: ['sqlite'] },
  async (t) => {
    const defaults = loadConfig({}).database;
    assert.equal(defaults.kind === 'sqlite' && defaults.checkpointMs, 0);
    const dir = mkdtempSync(join(tmpdir(), 'msgsvc-ckpt-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const config = loadConfig({ DATABASE_URL: join(dir, 'off.db') });
    assert.equal(config.database.kind === 'sqlite' && config.database.checkpointMs, 0);
    const store = openStore(config.database);
    assert.equal(sqliteHandle(store.db)!.pragma('wal_autocheckpoint', { simple: true }), 1000);
    const threaded = loadConfig({ DATABASE_URL: join(dir, 'on.db'), MSGSVC_SQLITE_CHECKPOINT_MS: '200' });
    assert.equal(threaded.database.kind === 'sqlite' && threaded.database.checkpointMs, 200);
    const withThread = openStore(threaded.database);
    assert.equal(sqliteHandle(withThread.db)!.pragma('wal_autocheckpoint', { simple: true }), 0);
    await withThread.close();
    const row = await sql<{ one: number }>`select 1 as one`.execute(store.db);
    assert.equal(row.rows[0]!.one, 1);
    await store.close();
    assert.throws(() => loadConfig({ MSGSVC_SQLITE_CHECKPOINT_MS: '-1' }), /MSGSVC_SQLITE_CHECKPOINT_MS/);
  },
);
