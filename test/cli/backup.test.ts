/**
 * Backup and restore (docs/guides/backup.md), with real processes.
 *
 * Under load, on each store: a `msgsvc serve` process takes sends and contact creates from 8
 * clients over HTTP; the backup is taken while they go on (`msgsvc backup` on SQLite; on
 * PostgreSQL the guide's `pg_dump -Fc`), then restored (`msgsvc restore`; the guide's `pg_restore`
 * into a fresh database and `msgsvc migrate`). Every message and contact acknowledged (201) before
 * the backup began is in the restored database, which passes `PRAGMA integrity_check` (SQLite)
 * and takes new rows (PostgreSQL: its sequences came along). On SQLite, `msgsvc restore` onto the
 * database of the running server is refused and changes nothing; once the server stopped, or was
 * killed with SIGKILL, it works at once.
 *
 * In-process: the refusals of restore (a process that is not msgsvc holding the database, a file
 * that is no msgsvc backup, a corrupt one, one of a newer msgsvc), each leaving the database byte
 * for byte as it was; a backup of a corrupt database fails and leaves no partial file; a store
 * cannot be opened while a restore holds the database.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.ts';
import { createDemoAccount, type DemoAccount } from '../../src/domain/demo.ts';
import { createTimeFormat } from '../../src/lib/time.ts';
import { recordMappers } from '../../src/records/index.ts';
import { BackupError, backupSqlite, DatabaseInUseError, restoreSqlite } from '../../src/store/backup.ts';
import { migrateToLatest, openStore, type Store } from '../../src/store/db.ts';
import { DatabaseBeingRestoredError, holdInUseLock, takeExclusiveLock } from '../../src/store/in-use.ts';
import { runCli } from '../helpers/cli.ts';
import { startServerProcess, type ServerProcess } from '../helpers/net.ts';
import { createTestDatabase, storeTest } from '../helpers/stores.ts';
import { until } from '../helpers/wait.ts';

const run = promisify(execFile);
const CLIENTS = 8;
const CI = process.env.CI === 'true';

/** Why the pg_dump / pg_restore cases cannot run here (false: they can). */
function pgToolsSkip(): string | false {
  try {
    execFileSync('pg_dump', ['--version'], { stdio: 'ignore' });
    execFileSync('pg_restore', ['--version'], { stdio: 'ignore' });
    return false;
  } catch {
    if (CI) throw new Error('CI=true: pg_dump and pg_restore (postgresql-client) must be installed');
    return 'pg_dump / pg_restore not installed (Debian: postgresql-client)';
  }
}

function tempDir(t: { after(fn: () => unknown): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'msgsvc-backup-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function storeOf(databaseUrl: string): Store {
  return openStore(loadConfig({ DATABASE_URL: databaseUrl }).database);
}

/** A migrated database with a demo account (numbers, 2,500 credits), its URL and the account. */
async function seeded(databaseUrl: string, name: string): Promise<DemoAccount> {
  const store = storeOf(databaseUrl);
  try {
    await migrateToLatest(store);
    return await createDemoAccount(store, recordMappers(createTimeFormat('UTC')), 'US', name);
  } finally {
    await store.close();
  }
}

function serve(databaseUrl: string): Promise<ServerProcess> {
  return startServerProcess(
    { DATABASE_URL: databaseUrl, MSGSVC_DISPATCHER: '0', MSGSVC_RATE_LIMIT: '1000000', MSGSVC_WORKERS: '1', LOG_LEVEL: 'warn' },
    60_000,
  );
}

interface Ack {
  kind: 'messages' | 'contacts';
  id: number;
  /** performance.now() when the request was sent, and when its 201 came. */
  sentAt: number;
  at: number;
}

/**
 * `CLIENTS` clients sending over HTTP, each in turn sms/send and contacts/create, until stop():
 * every 201 is recorded with its time. A client stops at its first failed request (server gone).
 */
function load(url: string, token: string) {
  const acks: Ack[] = [];
  const failures: string[] = [];
  let stopping = false;
  const client = async (c: number) => {
    for (let i = 0; !stopping; i++) {
      const send = i % 2 === 0;
      const path = send ? '/v1/sms/send' : '/v1/contacts/create';
      const body = send
        ? { MobilePhone: `+1555${String(c).padStart(2, '0')}${String(i % 1000).padStart(5, '0')}`, Message: `load ${c}-${i}` }
        : { Number: `+1555${String(c + 10).padStart(2, '0')}${String(i).padStart(5, '0')}`, FirstName: `C${c}-${i}` };
      const sentAt = performance.now();
      try {
        const res = await fetch(`${url}${path}?access_token=${encodeURIComponent(token)}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        const text = await res.text();
        if (res.status !== 201) {
          failures.push(`${path} ${res.status} ${text.slice(0, 200)}`);
          continue;
        }
        const parsed = JSON.parse(text) as { Id: number } | { Id: number }[];
        const id = Array.isArray(parsed) ? parsed[0]!.Id : parsed.Id;
        acks.push({ kind: send ? 'messages' : 'contacts', id, sentAt, at: performance.now() });
      } catch (err) {
        failures.push(`${path}: ${String(err)}`);
        return;
      }
    }
  };
  const clients = Array.from({ length: CLIENTS }, (_, c) => client(c));
  return {
    acks,
    failures,
    async stop() {
      stopping = true;
      await Promise.all(clients);
    },
  };
}

/** The ids of `acks` missing from the database at `databaseUrl`. */
async function missing(databaseUrl: string, acks: Ack[]): Promise<string[]> {
  const store = storeOf(databaseUrl);
  try {
    const out: string[] = [];
    for (const kind of ['messages', 'contacts'] as const) {
      const have = new Set((await store.db.selectFrom(kind).select('id').execute()).map((r) => Number(r.id)));
      for (const a of acks) if (a.kind === kind && !have.has(a.id)) out.push(`${kind}:${a.id}`);
    }
    return out;
  } finally {
    await store.close();
  }
}

function integrity(path: string): string {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return (db.pragma('integrity_check') as { integrity_check: string }[]).map((r) => r.integrity_check).join('; ');
  } finally {
    db.close();
  }
}

function sha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

storeTest(
  'backup under load: taken while 8 clients send, the restored database has every message and contact acknowledged before it began',
  { timeout: 240_000 },
  async (t, kind) => {
    const noTools = kind === 'postgres' && pgToolsSkip();
    if (noTools) return t.skip(noTools);
    const dir = tempDir(t);
    const databaseUrl = kind === 'postgres' ? await createTestDatabase() : join(dir, 'msgsvc.db');
    const demo = await seeded(databaseUrl, 'Backup under load');
    const server = await serve(databaseUrl);
    t.after(() => server.stop('SIGKILL'));
    const traffic = load(server.url, demo.token);
    await until('200 acknowledged requests', () => (traffic.acks.length >= 200 ? true : undefined), 60_000);

    const backupFile = join(dir, kind === 'postgres' ? 'msgsvc.dump' : 'backup.db');
    const began = performance.now();
    if (kind === 'sqlite') {
      const backup = await runCli(['backup', '--to', backupFile], { DATABASE_URL: databaseUrl });
      assert.equal(backup.code, 0, backup.stderr);
      assert.equal((JSON.parse(backup.stdout) as { backup: string }).backup, backupFile);
    } else {
      // The guide's command (docs/guides/backup.md, "PostgreSQL").
      await run('pg_dump', ['-Fc', '--no-owner', '--no-privileges', '-d', databaseUrl, '-f', backupFile]);
    }
    const ended = performance.now();
    const duringBackup = traffic.acks.filter((a) => a.at > began && a.at < ended).length;
    await until('requests sent and acknowledged after the backup', () =>
      traffic.acks.some((a) => a.sentAt > ended && a.kind === 'contacts') ? true : undefined,
    );
    await traffic.stop();
    assert.deepEqual(traffic.failures, [], 'every request was acknowledged');
    assert.ok(duringBackup > 0, 'the clients kept sending while the backup ran');
    const acked = traffic.acks.filter((a) => a.at < began);
    assert.ok(acked.some((a) => a.kind === 'messages') && acked.some((a) => a.kind === 'contacts'));
    t.diagnostic(
      `${acked.length} acknowledged before the backup, ${duringBackup} while it ran (${Math.round(ended - began)} ms), ${traffic.acks.length} in all`,
    );

    if (kind === 'sqlite') {
      assert.equal(integrity(backupFile), 'ok');
      // Refused while the server uses the database: exit 1, and the database is the live one still.
      const inode = statSync(databaseUrl).ino;
      const refused = await runCli(['restore', '--from', backupFile], { DATABASE_URL: databaseUrl });
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /refused: .* is in use by a msgsvc process .*nothing was changed/);
      assert.equal(statSync(databaseUrl).ino, inode, 'the database file was not replaced');
      assert.deepEqual(
        readdirSync(dir).filter((f) => f.includes('.restore-')),
        [],
        'no temporary file is left',
      );
      const after = traffic.acks.filter((a) => a.at > ended);
      const live = await fetch(
        `${server.url}/v1/contacts/view?id=${after.find((a) => a.kind === 'contacts')!.id}&access_token=${demo.token}`,
      );
      assert.equal(live.status, 200, 'a contact created after the backup is still served');

      // Once the server stopped, the restore goes through.
      assert.equal(await server.stop('SIGTERM'), 0);
      const restored = await runCli(['restore', '--from', backupFile], { DATABASE_URL: databaseUrl });
      assert.equal(restored.code, 0, restored.stderr);
      assert.deepEqual((JSON.parse(restored.stdout) as { pendingMigrations: string[] }).pendingMigrations, []);
      assert.equal(integrity(databaseUrl), 'ok');
      assert.deepEqual(await missing(databaseUrl, acked), [], 'every acknowledged message and contact is in the restored database');
      const later = traffic.acks.filter((a) => a.sentAt > ended);
      assert.equal((await missing(databaseUrl, later)).length, later.length, 'what was sent after the backup is not in it');
    } else {
      await server.stop('SIGTERM');
      // The guide's restore: a fresh database, pg_restore, then msgsvc migrate.
      const restoredUrl = await createTestDatabase();
      await run('pg_restore', ['--no-owner', '--no-privileges', '--exit-on-error', '--single-transaction', '-d', restoredUrl, backupFile]);
      const migrate = await runCli(['migrate'], { DATABASE_URL: restoredUrl });
      assert.equal(migrate.code, 0, migrate.stderr);
      assert.deepEqual(await missing(restoredUrl, acked), [], 'every acknowledged message and contact is in the restored database');
      // The sequences came along: a new row gets an id above every restored one.
      const store = storeOf(restoredUrl);
      try {
        const max = Number((await sql<{ m: number }>`select max(id) as m from contacts`.execute(store.db)).rows[0]!.m);
        const account = Number(demo.account.id);
        const row = await store.db
          .insertInto('contacts')
          .values({
            account_id: account,
            number: '15559990000',
            number_e164: '+15559990000',
            opted_out: 0,
            first_name: 'After',
            last_name: 'Restore',
            birthday: null,
            email: '',
            zip: '',
            city: '',
            created_at: 1,
            updated_at: 1,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        assert.ok(Number(row.id) > max, `new id ${row.id} > ${max}`);
      } finally {
        await store.close();
      }
    }
  },
);

test(
  'restore right after the server was killed with SIGKILL is not blocked, and the server starts on what it restored',
  { timeout: 120_000 },
  async (t) => {
    const dir = tempDir(t);
    const databaseUrl = join(dir, 'msgsvc.db');
    const demo = await seeded(databaseUrl, 'Killed');
    const backupFile = join(dir, 'backup.db');
    const backup = await runCli(['backup', '--to', backupFile], { DATABASE_URL: databaseUrl });
    assert.equal(backup.code, 0, backup.stderr);

    const server = await serve(databaseUrl);
    t.after(() => server.stop('SIGKILL'));
    // A contact the backup does not have, committed (in the WAL) when the server dies.
    const created = await fetch(`${server.url}/v1/contacts/create?access_token=${demo.token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ Number: '+15557770000' }),
    });
    assert.equal(created.status, 201);
    const lateId = ((await created.json()) as { Id: number }).Id;
    await server.stop('SIGKILL');

    const started = Date.now();
    const restored = await runCli(['restore', '--from', backupFile], { DATABASE_URL: databaseUrl }, 30_000);
    assert.equal(restored.code, 0, restored.stderr);
    assert.ok(Date.now() - started < 20_000, 'no lease of the dead server had to run out');
    assert.ok(
      !existsSync(`${databaseUrl}-wal`) || statSync(`${databaseUrl}-wal`).size === 0,
      "the dead server's WAL is not left to replay",
    );

    const again = await serve(databaseUrl);
    t.after(() => again.stop('SIGKILL'));
    const view = (id: number) => fetch(`${again.url}/v1/contacts/view?id=${id}&access_token=${demo.token}`).then((r) => r.status);
    assert.equal(await view(demo.contacts[0]!.Id), 200, 'the backup is served');
    assert.equal(await view(lateId), 404, 'what came after the backup is not');
    assert.equal(await again.stop('SIGTERM'), 0);
    assert.equal(integrity(databaseUrl), 'ok');
  },
);

test('restore refuses, changing nothing: a database another program has open, a file that is no msgsvc backup, a corrupt one, a newer one', async (t) => {
  const dir = tempDir(t);
  const databaseUrl = join(dir, 'msgsvc.db');
  await seeded(databaseUrl, 'Refusals');
  const good = join(dir, 'good.db');
  await backupSqlite(databaseUrl, good);
  const original = sha256(databaseUrl);
  const unchanged = () => {
    assert.equal(sha256(databaseUrl), original, 'the database is byte for byte as it was');
    assert.deepEqual(
      readdirSync(dir).filter((f) => f.includes('.restore-')),
      [],
      'no temporary file is left',
    );
  };

  // A program that is not msgsvc (no in-use lock) with the database open.
  const other = new Database(databaseUrl);
  other.pragma('journal_mode = WAL');
  other.prepare('select count(*) from accounts').get();
  await assert.rejects(restoreSqlite(databaseUrl, good), (err) => err instanceof DatabaseInUseError && /another process/.test(err.message));
  other.close();
  unchanged();

  // A msgsvc store open in this very process.
  const store = storeOf(databaseUrl);
  await assert.rejects(restoreSqlite(databaseUrl, good), (err) => err instanceof DatabaseInUseError && /msgsvc process/.test(err.message));
  await store.close();
  unchanged();

  const text = join(dir, 'notes.txt');
  rmSync(text, { force: true });
  closeSync(openSync(text, 'w'));
  await assert.rejects(restoreSqlite(databaseUrl, text), /is not a SQLite database/);
  unchanged();

  const foreign = join(dir, 'foreign.db');
  const f = new Database(foreign);
  f.exec('create table t (x)');
  f.close();
  await assert.rejects(restoreSqlite(databaseUrl, foreign), /is not a msgsvc database/);
  unchanged();

  const newer = join(dir, 'newer.db');
  await backupSqlite(databaseUrl, newer);
  const n = new Database(newer);
  n.prepare("insert into kysely_migration (name, timestamp) values ('999_from_the_future', '2099-01-01')").run();
  n.close();
  await assert.rejects(restoreSqlite(databaseUrl, newer), /made by a newer msgsvc .*999_from_the_future/);
  unchanged();

  const corrupt = join(dir, 'corrupt.db');
  await backupSqlite(databaseUrl, corrupt);
  corruptPages(corrupt);
  await assert.rejects(restoreSqlite(databaseUrl, corrupt), (err) => err instanceof BackupError);
  unchanged();

  // And a good one goes through.
  const report = await restoreSqlite(databaseUrl, good);
  assert.equal(report.database, databaseUrl);
  assert.equal(integrity(databaseUrl), 'ok');
});

/** Overwrites the second half of every page after the first two with garbage: the b-trees no longer hold together. */
function corruptPages(path: string): void {
  const size = statSync(path).size;
  const fd = openSync(path, 'r+');
  try {
    for (let page = 2; page * 4096 < size; page++) writeSync(fd, Buffer.alloc(2048, 0xa5), 0, 2048, page * 4096 + 2048);
  } finally {
    closeSync(fd);
  }
}

test('a backup of a corrupt database fails and leaves no partial file; a store cannot open while a restore holds the database', async (t) => {
  const dir = tempDir(t);
  const databaseUrl = join(dir, 'msgsvc.db');
  await seeded(databaseUrl, 'Corrupt');
  corruptPages(databaseUrl);
  const to = join(dir, 'out', 'backup.db');
  await assert.rejects(backupSqlite(databaseUrl, to), Error);
  assert.ok(!existsSync(to), 'no backup file');
  assert.deepEqual(
    readdirSync(join(dir, 'out')).filter((f) => f.includes('.partial-')),
    [],
    'no partial file',
  );

  const held = takeExclusiveLock(databaseUrl);
  assert.ok(held, 'nothing uses the database');
  assert.throws(() => holdInUseLock(databaseUrl, 50), DatabaseBeingRestoredError);
  assert.equal(takeExclusiveLock(databaseUrl), undefined, 'a second restore is refused too');
  held.release();
  holdInUseLock(databaseUrl, 50).release();
});

test('backup and restore on PostgreSQL exit 1 and point to pg_dump and pg_restore', async () => {
  const env = { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' };
  const backup = await runCli(['backup', '--to', join(tmpdir(), 'never.db')], env);
  assert.equal(backup.code, 1);
  assert.match(backup.stderr, /pg_dump -Fc .*docs\/guides\/backup\.md/);
  const restore = await runCli(['restore', '--from', join(tmpdir(), 'never.db')], env);
  assert.equal(restore.code, 1);
  assert.match(restore.stderr, /pg_restore .*docs\/guides\/backup\.md/);
});
