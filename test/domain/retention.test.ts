/**
 * Retention of the message log (MSGSVC_RETENTION_DAYS; src/domain/retention.ts, docs/guides/backup.md
 * "Retention"), on each store: what is older than the cutoff goes (messages but Queued ones, their
 * links and clicks, emptied conversations, ended webhook deliveries, inbound once-keys), what is
 * newer stays, the credit and consent ledgers are untouched, 0 days deletes nothing, every
 * repository call deletes at most its limit, and the purge runs once a day by the injected clock.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { Client } from 'pg';
import { createAccount } from '../../src/domain/accounts.ts';
import { createRetention, purgeOldMessages, RETENTION_INTERVAL_SECONDS } from '../../src/domain/retention.ts';
import { createManualClock } from '../../src/lib/time.ts';
import { checkpointRounds, migrateToLatest, openStore, sqliteHandle, type Store } from '../../src/store/db.ts';
import { createHostLoops } from '../../src/server.ts';
import { until } from '../helpers/wait.ts';
import * as conversations from '../../src/store/repositories/conversations.ts';
import * as repo from '../../src/store/repositories/retention.ts';
import { loadConfig } from '../../src/config.ts';
import { testDatabaseUrl } from '../helpers/app.ts';
import { PG_ADMIN_URL, storeTest } from '../helpers/stores.ts';

const DAY = 86_400;
const NOW = Math.floor(Date.parse('2026-06-01T12:00:00Z') / 1000);
const DAYS = 30;
const CUTOFF = NOW - DAYS * DAY;
const OLD = CUTOFF - 5 * DAY;
const NEW = NOW - 2 * DAY;
const FAST = { restRatio: 0 } as const;

async function freshStore(t: { after(fn: () => unknown): void }): Promise<Store> {
  const dir = mkdtempSync(join(tmpdir(), 'msgsvc-retention-'));
  const store = openStore(loadConfig({ DATABASE_URL: await testDatabaseUrl(dir) }).database);
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await migrateToLatest(store);
  return store;
}

interface MessageSpec {
  phone: string;
  createdAt: number;
  status?: number;
  direction?: 1 | 2;
}

let serial = 0;

/** A message of the log, written as the service writes one (the conversations trigger runs). */
async function message(store: Store, accountId: number, m: MessageSpec): Promise<number> {
  const direction = m.direction ?? 1;
  const status = m.status ?? (direction === 2 ? 7 : 3);
  const row = await store.db
    .insertInto('messages')
    .values({
      account_id: accountId,
      direction,
      number: '15550009999',
      mobile_phone: m.phone,
      message: `text ${++serial}`,
      type_id: 1,
      status_id: status,
      segments: 1,
      credits: direction === 2 ? 0 : 1,
      batch_id: null,
      scheduled_message_id: null,
      created_at: m.createdAt,
      sent_at: status >= 2 && status !== 7 ? m.createdAt : null,
      delivered_at: status === 3 ? m.createdAt + 1 : null,
      due_at: status === 1 ? (NOW + 60) * 1000 : null,
      lease_token: null,
      carrier: null,
      mms_template_id: null,
      carrier_message_id: null,
      receipt_status: null,
      receipt_error: null,
      receipt_due_at: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

/** A tracked link of `messageId` with `clicks` clicks; returns the link's id. */
async function link(store: Store, accountId: number, messageId: number, clicks: number, at: number): Promise<number> {
  const code = `c${String(++serial).padStart(6, '0')}`;
  const row = await store.db
    .insertInto('message_links')
    .values({ account_id: accountId, message_id: messageId, code, url: `https://example.com/${code}`, created_at: at })
    .returning('id')
    .executeTakeFirstOrThrow();
  for (let i = 0; i < clicks; i++) {
    await store.db
      .insertInto('link_clicks')
      .values({ account_id: accountId, link_id: Number(row.id), clicked_at: at + i })
      .execute();
  }
  return Number(row.id);
}

async function webhook(store: Store, accountId: number): Promise<number> {
  const row = await store.db
    .insertInto('webhooks')
    .values({
      account_id: accountId,
      url: 'https://example.com/hook',
      events: '["message.sent"]',
      secret: 'whsec_x',
      created_at: OLD,
      updated_at: OLD,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

async function delivery(store: Store, accountId: number, webhookId: number, createdAt: number, status: 'Pending' | 'Delivered' | 'Failed') {
  const row = await store.db
    .insertInto('webhook_deliveries')
    .values({
      account_id: accountId,
      webhook_id: webhookId,
      event: 'message.sent',
      msg_id: `msg_${++serial}`,
      payload: '{}',
      status,
      last_status_code: status === 'Pending' ? null : 200,
      created_at: createdAt,
      updated_at: createdAt,
      due_at: status === 'Pending' ? createdAt * 1000 : null,
      lease_token: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

async function inboundKey(store: Store, id: string, receivedAtSeconds: number): Promise<void> {
  await store.db
    .insertInto('carrier_inbound')
    .values({ carrier: 'tw', carrier_message_id: id, received_at: receivedAtSeconds * 1000 })
    .execute();
}

/** Two credit ledger entries (a top-up and a spend naming an old message) with the balance they add up to. */
async function ledger(store: Store, accountId: number, messageId: number): Promise<void> {
  await store.db
    .insertInto('credit_ledger')
    .values([
      { account_id: accountId, created_at: OLD - 10, type: 'topup', amount: 100, balance: 100, reference: '', note: 'seed' },
      { account_id: accountId, created_at: OLD, type: 'spend', amount: -1, balance: 99, reference: `message:${messageId}`, note: '' },
    ])
    .execute();
  await store.db
    .insertInto('credit_balances')
    .values({ account_id: accountId, available_credits: 99, updated_at: OLD })
    .onConflict((oc) => oc.column('account_id').doUpdateSet({ available_credits: 99 }))
    .execute();
}

/** A contact and two entries of the consent ledger (opted out by keyword long ago, back in by the API). */
async function consent(store: Store, accountId: number, phone: string): Promise<void> {
  const contact = await store.db
    .insertInto('contacts')
    .values({
      account_id: accountId,
      number: phone,
      number_e164: `+${phone}`,
      opted_out: 0,
      first_name: '',
      last_name: '',
      birthday: null,
      email: '',
      zip: '',
      city: '',
      created_at: OLD,
      updated_at: OLD,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await store.db
    .insertInto('contact_consent')
    .values([
      {
        account_id: accountId,
        contact_id: Number(contact.id),
        opted_out: 1,
        source: 'keyword',
        detail: 'STOP',
        carrier: '',
        created_at: OLD,
      },
      {
        account_id: accountId,
        contact_id: Number(contact.id),
        opted_out: 0,
        source: 'api',
        detail: 'contacts/update',
        carrier: '',
        created_at: OLD + 1,
      },
    ])
    .execute();
}

/** Every row of the ledgers and balances, and the credit sum per account: what retention must leave as it is. */
async function ledgers(store: Store) {
  const credit = await store.db.selectFrom('credit_ledger').selectAll().orderBy('id').execute();
  const balances = await store.db.selectFrom('credit_balances').select(['account_id', 'available_credits']).orderBy('account_id').execute();
  const consentRows = await store.db.selectFrom('contact_consent').selectAll().orderBy('id').execute();
  const sums = await store.db
    .selectFrom('credit_ledger')
    .select(['account_id', (eb) => eb.fn.sum<number>('amount').as('sum')])
    .groupBy('account_id')
    .orderBy('account_id')
    .execute();
  return {
    credit: credit.map((r) => ({ ...r, amount: Number(r.amount), balance: Number(r.balance) })),
    balances: balances.map((r) => ({ account_id: Number(r.account_id), available: Number(r.available_credits) })),
    sums: sums.map((r) => ({ account_id: Number(r.account_id), sum: Number(r.sum) })),
    consent: consentRows,
  };
}

async function ids(store: Store, table: 'messages' | 'message_links' | 'link_clicks' | 'webhook_deliveries'): Promise<Set<number>> {
  return new Set((await store.db.selectFrom(table).select('id').execute()).map((r) => Number(r.id)));
}

async function inboundKeys(store: Store): Promise<string[]> {
  return (await store.db.selectFrom('carrier_inbound').select('carrier_message_id').orderBy('carrier_message_id').execute()).map(
    (r) => r.carrier_message_id,
  );
}

async function thread(store: Store, accountId: number, phone: string) {
  return store.db
    .selectFrom('conversations')
    .select(['last_message_id', 'unread'])
    .where('account_id', '=', accountId)
    .where('mobile_phone', '=', phone)
    .executeTakeFirst();
}

/** sms/conversations reads: the trigger-kept total equals the page, and every thread's newest message exists. */
async function assertConversationsConsistent(store: Store, accountId: number): Promise<void> {
  const total = await conversations.countConversations(store.db, accountId);
  const page = await conversations.listConversations(store.db, accountId, 1000, 0);
  assert.equal(page.length, total, `account ${accountId}: X-Pagination-Total-Count ${total} matches the ${page.length} threads listed`);
  const count = await store.db
    .selectFrom('conversations')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  assert.equal(Number(count.n), total, 'list_totals.conversations counts the rows');
}

storeTest(
  'retention: old messages, their links, clicks, emptied threads, ended deliveries and once-keys go; newer ones, Queued ones and both ledgers stay',
  async (t) => {
    const store = await freshStore(t);
    const a = await createAccount(store, 'Retention A');
    const b = await createAccount(store, 'Retention B');

    // Account A. Phone 1: only old messages (an inbound one unread): the thread goes.
    const onlyOld = [
      await message(store, a, { phone: '15550000001', createdAt: OLD }),
      await message(store, a, { phone: '15550000001', createdAt: OLD + 10, direction: 2 }),
    ];
    // Phone 2: two old inbound (unread) and a new inbound: the thread stays on the new one, unread 3 → 1.
    const mixedOld = [
      await message(store, a, { phone: '15550000002', createdAt: OLD, direction: 2 }),
      await message(store, a, { phone: '15550000002', createdAt: OLD + 1, direction: 2 }),
    ];
    const mixedNew = await message(store, a, { phone: '15550000002', createdAt: NEW, direction: 2 });
    // Phone 3: an old Queued message, then an old Delivered one: the thread moves back to the Queued one.
    const oldQueued = await message(store, a, { phone: '15550000003', createdAt: OLD, status: 1 });
    const oldDelivered3 = await message(store, a, { phone: '15550000003', createdAt: OLD + 1, status: 3 });
    // Phone 4: every status, old: all but Queued (1) go.
    const byStatus = new Map<number, number>();
    for (let status = 1; status <= 7; status++) {
      byStatus.set(
        status,
        await message(store, a, { phone: '15550000004', createdAt: OLD + status, status, direction: status === 7 ? 2 : 1 }),
      );
    }
    // The boundary: created exactly at the cutoff stays, a second before it goes.
    const atCutoff = await message(store, a, { phone: '15550000005', createdAt: CUTOFF });
    const justBefore = await message(store, a, { phone: '15550000005', createdAt: CUTOFF - 1 });
    // Tracked links: an old message's link (3 clicks) goes with it, a new message's (2 clicks) stays.
    const oldLink = await link(store, a, onlyOld[0]!, 3, OLD + 100);
    const newLinkMessage = await message(store, a, { phone: '15550000006', createdAt: NEW });
    const newLink = await link(store, a, newLinkMessage, 2, NEW + 100);
    // The link of the old Queued message stays with it.
    const queuedLink = await link(store, a, oldQueued, 0, OLD);
    // Webhook deliveries: old ended ones go, an old Pending one and new ones stay.
    const hook = await webhook(store, a);
    const oldDelivered = await delivery(store, a, hook, OLD, 'Delivered');
    const oldFailed = await delivery(store, a, hook, OLD + 1, 'Failed');
    const oldPending = await delivery(store, a, hook, OLD + 2, 'Pending');
    const newDelivered = await delivery(store, a, hook, NEW, 'Delivered');
    // Inbound once-keys.
    await inboundKey(store, 'SM-old-1', OLD);
    await inboundKey(store, 'SM-old-2', CUTOFF - 1);
    await inboundKey(store, 'SM-new', NEW);
    // The ledgers, naming an old message that goes.
    await ledger(store, a, onlyOld[0]!);
    await consent(store, a, '15550000001');
    // A scheduled message made long ago: never touched.
    await store.db
      .insertInto('scheduled_messages')
      .values({
        account_id: a,
        mobile_phone: '15550000007',
        message: 'later',
        scheduled_at: NOW + DAY,
        status_id: 3,
        type_id: 1,
        mms_template_id: null,
        subject: '',
        created_at: OLD,
        reserved_credits: 1,
        due_at: (NOW + DAY) * 1000,
        lease_token: null,
      })
      .execute();

    // Account B: old and new messages, and its own ledgers.
    const bOld = await message(store, b, { phone: '15550000011', createdAt: OLD });
    const bNew = await message(store, b, { phone: '15550000011', createdAt: NEW });
    await ledger(store, b, bOld);
    await consent(store, b, '15550000011');

    const before = { ledgers: await ledgers(store), messages: await ids(store, 'messages') };
    assert.equal((await thread(store, a, '15550000002'))?.unread, 3);

    // Batches of 2: every kind needs several windows.
    const result = await purgeOldMessages(store, NOW, DAYS, { ...FAST, batchSize: 2 });
    assert.equal(result.cutoff, CUTOFF);
    assert.equal(result.aborted, false);
    assert.equal(result.skipped, 0);

    const gone = [...onlyOld, ...mixedOld, oldDelivered3, justBefore, bOld, ...[2, 3, 4, 5, 6, 7].map((s) => byStatus.get(s)!)];
    const kept = [mixedNew, oldQueued, byStatus.get(1)!, atCutoff, newLinkMessage, bNew];
    const messagesAfter = await ids(store, 'messages');
    for (const id of gone) assert.ok(!messagesAfter.has(id), `message ${id} is deleted`);
    for (const id of kept) assert.ok(messagesAfter.has(id), `message ${id} is kept`);
    assert.equal(messagesAfter.size, before.messages.size - gone.length, 'nothing else is deleted');
    assert.equal(result.messages, gone.length);

    assert.deepEqual([...(await ids(store, 'message_links'))].sort(), [newLink, queuedLink].sort(), "the old message's link is deleted");
    const clicksLeft = await store.db.selectFrom('link_clicks').select('link_id').execute();
    assert.deepEqual(
      clicksLeft.map((c) => Number(c.link_id)),
      [newLink, newLink],
      "the old link's 3 clicks are deleted, the new one's 2 kept",
    );
    assert.equal(result.clicks + result.links, 3 + 1);
    assert.ok(!clicksLeft.some((c) => Number(c.link_id) === oldLink));

    assert.deepEqual([...(await ids(store, 'webhook_deliveries'))].sort(), [oldPending, newDelivered].sort());
    assert.equal(result.deliveries, 2);
    assert.ok(oldDelivered && oldFailed);
    assert.deepEqual(await inboundKeys(store), ['SM-new']);
    assert.equal(result.inboundKeys, 2);

    // Threads: phone 1's goes (and B's only thread keeps its new message), phone 2's keeps its new
    // message with unread 1, phone 3's points at its Queued message.
    assert.equal(await thread(store, a, '15550000001'), undefined, 'a thread left with no message is deleted');
    assert.deepEqual(await thread(store, a, '15550000002'), { last_message_id: mixedNew, unread: 1 });
    assert.equal(Number((await thread(store, a, '15550000003'))?.last_message_id), oldQueued);
    assert.equal(Number((await thread(store, b, '15550000011'))?.last_message_id), bNew);
    assert.equal(result.conversations, 1);
    await assertConversationsConsistent(store, a);
    await assertConversationsConsistent(store, b);

    assert.deepEqual(await ledgers(store), before.ledgers, 'the credit ledger, the balances and the consent ledger are untouched');
    const scheduled = await store.db.selectFrom('scheduled_messages').select('id').execute();
    assert.equal(scheduled.length, 1, 'scheduled messages are kept');

    // A second run finds nothing more.
    const again = await purgeOldMessages(store, NOW, DAYS, FAST);
    assert.deepEqual(
      [again.messages, again.links, again.clicks, again.conversations, again.deliveries, again.inboundKeys],
      [0, 0, 0, 0, 0, 0],
    );
  },
);

storeTest('retention: 0 days deletes nothing, and the daily runner never runs', async (t) => {
  const store = await freshStore(t);
  const a = await createAccount(store, 'Keep everything');
  await message(store, a, { phone: '15550000021', createdAt: NOW - 10_000 * DAY });
  await inboundKey(store, 'SM-ancient', NOW - 10_000 * DAY);
  const hook = await webhook(store, a);
  await delivery(store, a, hook, NOW - 10_000 * DAY, 'Delivered');
  const result = await purgeOldMessages(store, NOW, 0, FAST);
  assert.equal(result.messages + result.deliveries + result.inboundKeys, 0);
  const retention = createRetention({ store, clock: createManualClock(NOW * 1000), days: 0, options: FAST });
  assert.equal(await retention.runIfDue(), undefined);
  assert.equal((await ids(store, 'messages')).size, 1);
  assert.equal((await ids(store, 'webhook_deliveries')).size, 1);
  assert.deepEqual(await inboundKeys(store), ['SM-ancient']);
});

storeTest('retention: once a day by the injected clock, at the first round and again 24 h after it started', async (t) => {
  const store = await freshStore(t);
  const a = await createAccount(store, 'Daily');
  const clock = createManualClock(NOW * 1000);
  const retention = createRetention({ store, clock, days: DAYS, options: FAST });
  const first = await message(store, a, { phone: '15550000031', createdAt: OLD });
  assert.equal((await retention.runIfDue())?.messages, 1, 'the first round runs it');
  assert.ok(!(await ids(store, 'messages')).has(first));

  // A message that becomes old an hour later is left until the next day's run.
  const second = await message(store, a, { phone: '15550000031', createdAt: CUTOFF + 3600 });
  clock.advance((RETENTION_INTERVAL_SECONDS - 3600) * 1000);
  assert.equal(await retention.runIfDue(), undefined, 'not again within 24 h');
  assert.ok((await ids(store, 'messages')).has(second));
  clock.advance(3600 * 1000);
  const next = await retention.runIfDue();
  assert.equal(next?.cutoff, clock.nowSeconds() - DAYS * DAY);
  assert.equal(next?.messages, 1, '24 h after the first start it runs again');
  assert.ok(!(await ids(store, 'messages')).has(second));
  await retention.stop();
  clock.advance(2 * RETENTION_INTERVAL_SECONDS * 1000);
  assert.equal(await retention.runIfDue(), undefined, 'stopped: it never runs again');
});

storeTest(
  'retention: every repository call deletes at most its limit; windows of one second of Queued messages do not stop the purge',
  async (t) => {
    const store = await freshStore(t);
    const a = await createAccount(store, 'Bounded');
    const old = [];
    for (let i = 0; i < 7; i++) old.push(await message(store, a, { phone: `1555000004${i}`, createdAt: OLD + i }));
    const linkId = await link(store, a, old[0]!, 5, OLD);
    const hook = await webhook(store, a);
    for (let i = 0; i < 5; i++) await delivery(store, a, hook, OLD + i, 'Delivered');
    for (let i = 0; i < 5; i++) await inboundKey(store, `SM-${i}`, OLD + i);

    assert.equal((await repo.oldMessageWindow(store.db, a, CUTOFF, Number.MIN_SAFE_INTEGER, 3)).length, 3);
    assert.equal(await repo.deleteLinkClicks(store.db, a, old, 2), 2);
    assert.equal(await repo.deleteInboundKeys(store.db, CUTOFF * 1000, 2), 2);
    const window = await repo.deleteEndedDeliveries(store.db, 0, CUTOFF, 2);
    assert.equal(window.deleted, 2);
    assert.equal(window.old, 2);
    assert.equal((await ids(store, 'link_clicks')).size, 3);
    assert.equal((await inboundKeys(store)).length, 3);
    assert.equal((await ids(store, 'webhook_deliveries')).size, 3);
    assert.ok(linkId > 0);

    // Three Queued messages of one second fill a window of 2 on their own; the Delivered one a second later still goes.
    const queued = [];
    for (let i = 0; i < 3; i++) queued.push(await message(store, a, { phone: '15550000049', createdAt: OLD + 100, status: 1 }));
    const after = await message(store, a, { phone: '15550000049', createdAt: OLD + 101 });
    const result = await purgeOldMessages(store, NOW, DAYS, { ...FAST, batchSize: 2 });
    const left = await ids(store, 'messages');
    for (const id of [...old, after]) assert.ok(!left.has(id), `message ${id} is deleted`);
    for (const id of queued) assert.ok(left.has(id), `Queued message ${id} is kept`);
    assert.equal(result.messages, 8);
    assert.ok(result.steps >= 8, `small steps (${result.steps})`);
  },
);

storeTest(
  'retention on PostgreSQL never waits for a row a request holds: the window is skipped, and deleted once it is free',
  { stores: ['postgres'] },
  async (t) => {
    const store = await freshStore(t);
    const a = await createAccount(store, 'Locked');
    const lockedPhone = '15550000051';
    const locked = await message(store, a, { phone: lockedPhone, createdAt: OLD });
    const holder = new Client({ connectionString: await testUrlOf(store) });
    await holder.connect();
    t.after(() => holder.end());
    // A request holding the thread's row (sms/mark-read's UPDATE, an inbound text's upsert).
    await holder.query('begin');
    await holder.query('select * from conversations where account_id = $1 and mobile_phone = $2 for update', [a, lockedPhone]);
    const started = Date.now();
    const result = await purgeOldMessages(store, NOW, DAYS, { ...FAST, busyRetries: 2, busyWaitMs: 10 });
    assert.ok(Date.now() - started < 3000, `the purge did not wait for the lock (${Date.now() - started} ms)`);
    assert.equal(result.skipped, 1);
    assert.ok((await ids(store, 'messages')).has(locked), 'the locked window is left as it was');
    await holder.query('rollback');
    const again = await purgeOldMessages(store, NOW, DAYS, FAST);
    assert.equal(again.messages, 1);
    assert.equal(await thread(store, a, lockedPhone), undefined);
    await assertConversationsConsistent(store, a);
  },
);

/** The PostgreSQL URL of a test store (current_database() on the admin URL's server). */
async function testUrlOf(store: Store): Promise<string> {
  const name = (await sql<{ db: string }>`select current_database() as db`.execute(store.db)).rows[0]!.db;
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

storeTest('retention runs in the host loops: a server with MSGSVC_RETENTION_DAYS purges at start, and stops cleanly', async (t) => {
  const store = await freshStore(t);
  const a = await createAccount(store, 'Host loops');
  const now = Math.floor(Date.now() / 1000);
  const old = await message(store, a, { phone: '15550000061', createdAt: now - 40 * DAY });
  const fresh = await message(store, a, { phone: '15550000061', createdAt: now - DAY });
  // The loops' settings only: the store is the test's own.
  const config = loadConfig({ MSGSVC_RETENTION_DAYS: '30', LOG_LEVEL: 'silent' });
  const lines: string[] = [];
  const log = {
    info: (obj: object, msg: string) => lines.push(`${msg} ${JSON.stringify(obj)}`),
    error: () => {},
    warn: () => {},
    debug: () => {},
  };
  const loops = createHostLoops(config, store, log as unknown as Parameters<typeof createHostLoops>[2]);
  await loops.start();
  try {
    await until('the purge at start', async () => ((await ids(store, 'messages')).has(old) ? undefined : true));
  } finally {
    await loops.stop();
  }
  assert.ok((await ids(store, 'messages')).has(fresh));
  assert.ok(
    lines.some((l) => l.startsWith('retention purge done')),
    'the purge reports what it deleted',
  );
});

storeTest('MSGSVC_RETENTION_DAYS: a whole number of days from 0 (the default: keep everything) to 36,500', { stores: ['sqlite'] }, () => {
  assert.equal(loadConfig({}).retentionDays, 0);
  assert.equal(loadConfig({ MSGSVC_RETENTION_DAYS: '30' }).retentionDays, 30);
  for (const bad of ['-1', '1.5', 'a month', '36501'])
    assert.throws(() => loadConfig({ MSGSVC_RETENTION_DAYS: bad }), /MSGSVC_RETENTION_DAYS/);
});

storeTest(
  'retention on SQLite: its checkpoint thread is gone afterwards and the automatic checkpoint is back',
  { stores: ['sqlite'] },
  async (t) => {
    const store = await freshStore(t);
    const a = await createAccount(store, 'Checkpoints');
    for (let i = 0; i < 20; i++) await message(store, a, { phone: '15550000071', createdAt: OLD + i });
    const sqlite = sqliteHandle(store.db)!;
    assert.equal(sqlite.pragma('wal_autocheckpoint', { simple: true }), 1000);
    const result = await purgeOldMessages(store, NOW, DAYS, { ...FAST, batchSize: 5 });
    assert.equal(result.messages, 20);
    assert.equal(sqlite.pragma('wal_autocheckpoint', { simple: true }), 1000, 'SQLite checkpoints in COMMIT again');
    assert.equal(checkpointRounds(store.db), undefined, 'no thread is left running');
  },
);
