/**
 * The dispatcher as a process (API.md §11.2, docs/RELIABILITY.md "Delivery guarantees"):
 * - kill -9 of `msgsvc worker` mid-batch, several rounds, then a last worker to the end: every
 *   queued message reaches a final state, the credits balance exactly (debits = messages × cost −
 *   refunds), nothing is Delivered twice (one receipt per message, from a submission the carrier
 *   really made), and what reached the carrier twice is within one batch per kill;
 * - two `msgsvc worker` processes on one database at once: each message submitted exactly once.
 * The sandbox's journal (MSGSVC_SANDBOX_JOURNAL) records every submit before it is answered, so the
 * count survives the kills. Runs on each store (SQLite file, PostgreSQL database).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDemoAccount } from '../../src/domain/demo.ts';
import { sendGroupMessage } from '../../src/domain/messages.ts';
import { systemClock } from '../../src/lib/time.ts';
import { recordMappers } from '../../src/records/index.ts';
import { createTimeFormat } from '../../src/lib/time.ts';
import { inTransaction, migrateToLatest, openStore, type Store } from '../../src/store/db.ts';
import { changeCredits } from '../../src/store/repositories/accounts.ts';
import { assertLedgerAddsUp } from '../helpers/ledger.ts';
import { testDatabaseUrl } from '../helpers/app.ts';
import { storeTest } from '../helpers/stores.ts';
import { parseDatabaseUrl } from '../../src/config.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BATCH = 100;
const MAGIC = ['15005550001', '15005550002', '15005550003'];

interface Queued {
  accountId: number;
  /** Balance before the batch was queued. */
  initial: number;
  batchId: number;
}

/** A database with one account, a group of `members` contacts (the three magic numbers among them), and one send-group queued. */
async function queue(store: Store, members: number, message: string): Promise<Queued> {
  await migrateToLatest(store);
  const demo = await createDemoAccount(store, recordMappers(createTimeFormat('UTC')), 'US', 'Dispatcher crash test');
  const db = store.db;
  const accountId = demo.account.id;
  // The demo's scheduled messages (Pending, nothing reserved yet) would be checked by the worker's
  // scheduler, which reserves their cost: the balance below counts the batch only.
  await db.deleteFrom('scheduled_messages').where('account_id', '=', accountId).execute();
  const now = Math.floor(Date.now() / 1000);
  const groupId = (
    await db
      .insertInto('groups')
      .values({ account_id: accountId, name: 'All', note: '', keyword_id: 0, parent_id: 0, created_at: now, updated_at: now })
      .returning('id')
      .executeTakeFirstOrThrow()
  ).id;
  const numbers = [...MAGIC, ...Array.from({ length: members - MAGIC.length }, (_, i) => `1555${String(8_000_000 + i).padStart(7, '0')}`)];
  for (let i = 0; i < numbers.length; i += 500) {
    const rows = numbers.slice(i, i + 500).map((digits) => ({
      account_id: accountId,
      number: digits,
      number_e164: `+${digits}`,
      opted_out: 0,
      first_name: '',
      last_name: '',
      birthday: null,
      email: '',
      zip: '',
      city: '',
      created_at: now,
      updated_at: now,
    }));
    const ids = await db.insertInto('contacts').values(rows).returning('id').execute();
    await db
      .insertInto('group_members')
      .values(ids.map((r) => ({ account_id: accountId, group_id: groupId, contact_id: r.id })))
      .execute();
  }
  // As `msgsvc credits set` does: with its ledger entry.
  await inTransaction(store, (tx) => changeCredits(tx, accountId, 100_000, 'set', systemClock.nowSeconds()));
  const batch = await sendGroupMessage(
    { store, clock: systemClock, prices: { smsSegmentCredits: 1, mmsCredits: 3 }, region: 'US' },
    accountId,
    { GroupId: groupId, Message: message },
  );
  assert.equal(batch.recipients, members);
  // Ten recipients opt out while queued: Rejected with a refund.
  await db
    .updateTable('contacts')
    .set({ opted_out: 1 })
    .where('account_id', '=', accountId)
    .where('number', 'in', numbers.slice(10, 20))
    .execute();
  return { accountId, initial: 100_000, batchId: batch.id };
}

function startWorker(
  databaseUrl: string,
  env: Record<string, string>,
): { child: ChildProcess; exited: Promise<unknown>; output: () => string } {
  const child = spawn(process.execPath, ['bin/msgsvc.js', 'worker'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'warn',
      MSGSVC_DISPATCH_BATCH: String(BATCH),
      MSGSVC_DISPATCH_POLL_MS: '10',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return { child, exited: once(child, 'exit'), output: () => out };
}

const size = (file: string) => (existsSync(file) ? statSync(file).size : 0);

async function waitFor(what: string, ok: () => boolean | Promise<boolean>, ms: number, output?: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${output ? `: ${output()}` : ''}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Submits per message id, and every carrier id given per message, from journal files. */
function readJournals(files: string[]): { counts: Map<number, number>; ids: Map<number, Set<string>>; perFile: number[] } {
  const counts = new Map<number, number>();
  const ids = new Map<number, Set<string>>();
  const perFile: number[] = [];
  for (const f of files) {
    const lines = existsSync(f) ? readFileSync(f, 'utf8').split('\n').filter(Boolean) : [];
    perFile.push(lines.length);
    for (const line of lines) {
      const [id, carrierId] = line.split(' ') as [string, string];
      counts.set(Number(id), (counts.get(Number(id)) ?? 0) + 1);
      if (!ids.has(Number(id))) ids.set(Number(id), new Set());
      ids.get(Number(id))!.add(carrierId);
    }
  }
  return { counts, ids, perFile };
}

async function messagesOf(store: Store, batchId: number) {
  return store.db
    .selectFrom('messages')
    .select(['id', 'mobile_phone', 'status_id', 'credits', 'carrier_message_id', 'sent_at', 'delivered_at'])
    .where('batch_id', '=', batchId)
    .orderBy('id')
    .execute();
}

const FINAL = (m: { status_id: number; mobile_phone: string }) =>
  [3, 4, 5, 6].includes(m.status_id) || (m.status_id === 2 && m.mobile_phone === '15005550003');

storeTest(
  'kill -9 of msgsvc worker mid-batch, 3 rounds: every message final, credits exact, nothing Delivered twice',
  { timeout: 90_000 },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'msgsvc-dispatch-crash-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const databaseUrl = await testDatabaseUrl(dir);
    const store = openStore(parseDatabaseUrl(databaseUrl));
    t.after(() => store.close());
    const q = await queue(store, 1500, 'crash test');
    const journal = join(dir, 'journal');
    // Slow enough to be killed mid-batch: 10 ms a submit, 10 at once (a batch of 100 takes ~100 ms to
    // hand over, so a kill mostly lands after part of a batch reached the carrier and before its
    // outcomes were written); leases short, so the next worker retries what the killed one held.
    const env = {
      MSGSVC_SANDBOX_JOURNAL: journal,
      MSGSVC_SANDBOX_SUBMIT_MS: '10',
      MSGSVC_SANDBOX_WINDOW: '10',
      MSGSVC_SANDBOX_RECEIPT_MS: '50',
      MSGSVC_DISPATCH_LEASE_MS: '800',
    };
    const kills = 3;
    for (let round = 1; round <= kills; round++) {
      const before = size(journal);
      const w = startWorker(databaseUrl, env);
      t.after(() => w.child.kill('SIGKILL'));
      await waitFor(`round ${round} to submit`, () => size(journal) > before, 20_000, w.output);
      await new Promise((r) => setTimeout(r, 30 + Math.floor(Math.random() * 120)));
      w.child.kill('SIGKILL');
      await w.exited;
      assert.equal(w.child.signalCode, 'SIGKILL');
      const j = readJournals([journal]);
      t.diagnostic(`round ${round}: killed after ${j.perFile[0]} submits so far`);
      // Across the kill: every account's ledger adds up to its balance (API.md §10.1.1).
      await assertLedgerAddsUp(store, `after kill ${round}`);
    }
    const rows = await messagesOf(store, q.batchId);
    assert.ok(
      rows.some((m) => !FINAL(m)),
      'the kills left work undone',
    );
    const last = startWorker(databaseUrl, env);
    t.after(() => last.child.kill('SIGKILL'));
    await waitFor(
      'every message to reach a final state',
      async () => (await messagesOf(store, q.batchId)).every(FINAL),
      40_000,
      last.output,
    );
    last.child.kill('SIGTERM');
    await last.exited;
    assert.equal(last.child.exitCode, 0, `the worker stops cleanly on SIGTERM: ${last.output()}`);

    const final = await messagesOf(store, q.batchId);
    const { counts, ids } = readJournals([journal]);
    const byStatus = new Map<number, number>();
    for (const m of final) byStatus.set(m.status_id, (byStatus.get(m.status_id) ?? 0) + 1);
    assert.equal(byStatus.get(6), 10, 'the ten who opted out while queued: Rejected');
    assert.equal(byStatus.get(5), 1, '+15005550002: Failed');
    assert.equal(byStatus.get(4), 1, '+15005550001: Undelivered');
    assert.equal(byStatus.get(2), 1, '+15005550003: stays Sent');
    assert.equal(byStatus.get(3), final.length - 13, 'the rest Delivered');
    // Credits: debits = messages × cost − refunds (Failed and Rejected).
    const spent = final.reduce((s, m) => s + Number(m.credits), 0);
    const refunded = final.filter((m) => m.status_id === 5 || m.status_id === 6).reduce((s, m) => s + Number(m.credits), 0);
    const balance = Number(
      (
        await store.db
          .selectFrom('credit_balances')
          .select('available_credits')
          .where('account_id', '=', q.accountId)
          .executeTakeFirstOrThrow()
      ).available_credits,
    );
    assert.equal(balance, q.initial - spent + refunded, 'the balance is exact');
    await assertLedgerAddsUp(store, 'after the restart');
    // The carrier saw every message that was not Rejected, Rejected ones never; twice only within one batch per kill.
    for (const m of final) {
      const n = counts.get(m.id) ?? 0;
      if (m.status_id === 6) assert.equal(n, 0, `message ${m.id} was Rejected, never submitted`);
      else assert.ok(n >= 1, `message ${m.id} reached the carrier`);
      // Delivered once: one receipt, for a submission the carrier really made.
      if (m.status_id === 3 || m.status_id === 4)
        assert.ok(ids.get(m.id)!.has(m.carrier_message_id!), `message ${m.id}: its receipt is for a real submission`);
      if (m.status_id === 3) assert.ok(m.delivered_at !== null && m.sent_at !== null);
    }
    // Each kill can leave at most one batch handed over but not recorded: one extra submit each.
    const extra = [...counts.values()].reduce((sum, n) => sum + n - 1, 0);
    assert.ok(extra <= kills * BATCH, `at most one batch per kill reached the carrier again (${extra} extra submits)`);
    t.diagnostic(
      `${final.length} messages, ${kills} kills: ${extra} extra submits (bound ${kills * BATCH}), ` +
        `balance ${balance} = ${q.initial} − ${spent} + ${refunded}`,
    );
  },
);

storeTest('two msgsvc worker processes on one database: each message submitted exactly once', { timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'msgsvc-dispatch-two-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const databaseUrl = await testDatabaseUrl(dir);
  const store = openStore(parseDatabaseUrl(databaseUrl));
  t.after(() => store.close());
  await migrateToLatest(store);
  const journals = [join(dir, 'journal-a'), join(dir, 'journal-b')];
  const workers = journals.map((journal) =>
    startWorker(databaseUrl, {
      MSGSVC_SANDBOX_JOURNAL: journal,
      MSGSVC_SANDBOX_SUBMIT_MS: '5',
      MSGSVC_SANDBOX_RECEIPT_MS: '0',
      MSGSVC_DISPATCH_BATCH: '50',
      LOG_LEVEL: 'info',
    }),
  );
  for (const w of workers) t.after(() => w.child.kill('SIGKILL'));
  // Both workers polling before the first message is queued: on a loaded machine one process can
  // start seconds after the other, which would take every message before the second one looks.
  await waitFor(
    'both workers to start dispatching',
    () => workers.every((w) => w.output().includes('msgsvc worker: dispatching')),
    30_000,
    () => workers.map((w) => w.output()).join('\n'),
  );
  const q = await queue(store, 2000, 'two workers');
  await waitFor(
    'every message to reach a final state',
    async () => (await messagesOf(store, q.batchId)).every(FINAL),
    40_000,
    () => workers.map((w) => w.output()).join('\n'),
  );
  for (const w of workers) w.child.kill('SIGTERM');
  await Promise.all(workers.map((w) => w.exited));
  const { counts, perFile } = readJournals(journals);
  const final = await messagesOf(store, q.batchId);
  // Two dispatchers refunding concurrently: every account's ledger adds up to its balance.
  await assertLedgerAddsUp(store, 'after two workers');
  for (const m of final)
    assert.equal(
      counts.get(m.id) ?? 0,
      m.status_id === 6 ? 0 : 1,
      `message ${m.id} submitted ${m.status_id === 6 ? 'never (Rejected)' : 'exactly once'}`,
    );
  assert.ok(
    perFile.every((n) => n > 0),
    `both workers submitted (${perFile.join(' / ')})`,
  );
  t.diagnostic(`${final.length} messages over two workers: ${perFile.join(' / ')} submits`);
});
