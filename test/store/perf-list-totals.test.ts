/**
 * Pagination without rescanning (src/store/anchors.ts; migrations 002 and 008): the stored
 * totals of scheduled messages and of contacts stay exact after inserts and deletes by any writer, and a deep page
 * served from the cached page anchors is exactly the page OFFSET would give, also after the list
 * changed. Also covers `msgsvc generate` on both stores (src/domain/generate.ts).
 * Runs on SQLite, and on PostgreSQL too when it is reachable.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.ts';
import { generateAccount } from '../../src/domain/generate.ts';
import { migrateToLatest, openStore, type Store } from '../../src/store/db.ts';
import * as contacts from '../../src/store/repositories/contacts.ts';
import * as messages from '../../src/store/repositories/messages.ts';
import { testDatabaseUrl } from '../helpers/app.ts';
import { storeTest } from '../helpers/stores.ts';

async function open(t: { after(fn: () => unknown): void }): Promise<{ store: Store; other: Store }> {
  const dir = mkdtempSync(join(tmpdir(), 'msgsvc-perf-'));
  const url = await testDatabaseUrl(dir);
  const config = loadConfig({ DATABASE_URL: url });
  const store = openStore(config.database);
  await migrateToLatest(store);
  const other = openStore(config.database);
  t.after(async () => {
    await store.close();
    await other.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { store, other };
}

async function countAll(store: Store, accountId: number): Promise<number> {
  const row = await store.db
    .selectFrom('scheduled_messages')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function idsAt(store: Store, accountId: number, limit: number, offset: number): Promise<number[]> {
  const rows = await store.db
    .selectFrom('scheduled_messages')
    .select('id')
    .where('account_id', '=', accountId)
    .orderBy('id')
    .limit(limit)
    .offset(offset)
    .execute();
  return rows.map((r) => Number(r.id));
}

async function assertPagesExact(store: Store, accountId: number, total: number, label: string): Promise<void> {
  assert.equal(await messages.countScheduledMessages(store.db, accountId), total, `${label}: total`);
  assert.equal(await countAll(store, accountId), total, `${label}: count(*)`);
  for (const [limit, offset] of [
    [100, 0],
    [100, 999],
    [100, 1000],
    [37, 1234],
    [100, 1999],
    [100, 2000],
    [7, total - 3],
    [100, total],
  ]) {
    const page = (await messages.listScheduledMessages(store.db, accountId, limit!, offset!)).map((r) => Number(r.id));
    assert.deepEqual(page, await idsAt(store, accountId, limit!, offset!), `${label}: limit ${limit} offset ${offset}`);
  }
}

storeTest('list totals and deep pages stay exact as the list changes', { timeout: 120_000 }, async (t) => {
  const { store, other } = await open(t);
  const a = await generateAccount(store, { contacts: 0, messages: 2500, name: 'A' });
  const b = await generateAccount(store, { contacts: 0, messages: 1200, name: 'B' });
  assert.equal(a.rows.scheduledMessages, 2500);
  await assertPagesExact(store, a.accountId, 2500, 'generated');
  await assertPagesExact(store, b.accountId, 1200, 'other account');

  // Inserts through the repository, and deletes through another connection (another process).
  for (let i = 0; i < 3; i++) {
    await messages.insertScheduledMessage(
      store.db,
      a.accountId,
      { mobilePhone: '15550000000', message: `late ${i}`, scheduledAt: 0, statusId: 1, typeId: 1, mmsTemplateId: null, subject: '' },
      0,
    );
  }
  await assertPagesExact(store, a.accountId, 2503, 'after inserts');
  const firstIds = await idsAt(store, a.accountId, 10, 500);
  await other.db.deleteFrom('scheduled_messages').where('id', 'in', firstIds).execute();
  await assertPagesExact(store, a.accountId, 2493, 'after deletes by another connection');
  await sql`delete from scheduled_messages where account_id = ${a.accountId} and id % 7 = 0`.execute(other.db);
  await assertPagesExact(store, a.accountId, await countAll(store, a.accountId), 'after a bulk delete');
  await assertPagesExact(store, b.accountId, 1200, 'other account untouched');
});

storeTest('contacts: the kept total and deep pages of contacts/index stay exact as the list changes', { timeout: 120_000 }, async (t) => {
  const { store, other } = await open(t);
  const a = await generateAccount(store, { contacts: 2600, messages: 0, name: 'A' });
  const b = await generateAccount(store, { contacts: 1100, messages: 0, name: 'B' });
  const countContacts = async (accountId: number) =>
    Number(
      (
        await store.db
          .selectFrom('contacts')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('account_id', '=', accountId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const contactIdsAt = async (accountId: number, limit: number, offset: number) =>
    (
      await store.db
        .selectFrom('contacts')
        .select('id')
        .where('account_id', '=', accountId)
        .orderBy('id')
        .limit(limit)
        .offset(offset)
        .execute()
    ).map((r) => Number(r.id));
  const exact = async (accountId: number, label: string) => {
    const total = await countContacts(accountId);
    assert.equal(await contacts.countContacts(store.db, accountId, {}), total, `${label}: total`);
    for (const [limit, offset] of [
      [100, 0],
      [100, 999],
      [100, 1000],
      [37, 1234],
      [100, 1999],
      [100, 2000],
      [7, total - 3],
      [100, total],
    ]) {
      const page = (await contacts.listContacts(store.db, accountId, {}, limit!, offset!)).map((r) => Number(r.id));
      assert.deepEqual(page, await contactIdsAt(accountId, limit!, offset!), `${label}: limit ${limit} offset ${offset}`);
    }
  };
  await exact(a.accountId, 'generated');
  await exact(b.accountId, 'other account');
  // Deep pages asked for at once, on a list version no anchors were built for yet (one build,
  // shared): each is the page OFFSET gives.
  await store.db
    .deleteFrom('contacts')
    .where('account_id', '=', a.accountId)
    .where('id', '=', (await contactIdsAt(a.accountId, 1, 5))[0]!)
    .execute();
  const offsets = Array.from({ length: 20 }, (_, i) => 1000 + 77 * i);
  const pages = await Promise.all(offsets.map((o) => contacts.listContacts(store.db, a.accountId, {}, 50, o)));
  for (const [i, o] of offsets.entries())
    assert.deepEqual(
      pages[i]!.map((r) => Number(r.id)),
      await contactIdsAt(a.accountId, 50, o),
      `concurrent: offset ${o}`,
    );
  // Deletes through another connection (another process), then inserts by plain SQL.
  await other.db
    .deleteFrom('contacts')
    .where('id', 'in', await contactIdsAt(a.accountId, 10, 500))
    .execute();
  await exact(a.accountId, 'after deletes by another connection');
  await sql`delete from contacts where account_id = ${a.accountId} and id % 7 = 0`.execute(other.db);
  await exact(a.accountId, 'after a bulk delete');
  for (let i = 0; i < 3; i++) {
    await other.db
      .insertInto('contacts')
      .values({
        account_id: a.accountId,
        number: `1555000${i}000`,
        number_e164: `+1555000${i}000`,
        opted_out: 0,
        first_name: '',
        last_name: '',
        email: '',
        zip: '',
        city: '',
        birthday: null,
        created_at: 0,
        updated_at: 0,
      })
      .execute();
  }
  await exact(a.accountId, 'after inserts');
  await exact(b.accountId, 'other account untouched');
});

storeTest('generate creates the documented shape', { timeout: 120_000 }, async (t, kind) => {
  const { store } = await open(t);
  const g = await generateAccount(store, { contacts: 1000 });
  if (kind === 'postgres') {
    // The planner's statistics are fresh once the load is done (not left to autovacuum).
    const { rows } = await sql<{
      relname: string;
    }>`select relname from pg_stat_user_tables where last_analyze is null and relname in ('contacts', 'scheduled_messages', 'group_members', 'custom_field_entries')`.execute(
      store.db,
    );
    assert.deepEqual(rows, []);
  }
  assert.deepEqual(g.rows, { contacts: 1000, groupMembers: 1334, customFieldEntries: 1034, scheduledMessages: 1000, logMessages: 0 });
  assert.equal(g.groups, 10);
  assert.ok(g.group.members > 100 && g.group.members < 200, `group of typical size: ${g.group.members}`);
  assert.ok(g.entry.id > 0 && g.entry.customFieldId > 0 && g.entry.contactId > 0);
  assert.equal(await messages.countScheduledMessages(store.db, g.accountId), 1000);
});

storeTest('generate --log-messages fills the message log with Delivered messages', { timeout: 120_000 }, async (t) => {
  const { store } = await open(t);
  const g = await generateAccount(store, { contacts: 100, messages: 0, logMessages: 2500 });
  assert.equal(g.rows.logMessages, 2500);
  const rows = await store.db
    .selectFrom('messages')
    .select(['status_id', 'direction', 'account_id'])
    .where('account_id', '=', g.accountId)
    .execute();
  assert.equal(rows.length, 2500);
  assert.ok(
    rows.every((r) => r.status_id === 3 && r.direction === 1),
    'Delivered outbound messages',
  );
  // None is due for the dispatcher.
  const due = await store.db
    .selectFrom('messages')
    .select('id')
    .where('account_id', '=', g.accountId)
    .where('due_at', 'is not', null)
    .execute();
  assert.equal(due.length, 0);
});
