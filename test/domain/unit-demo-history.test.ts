/**
 * The demo's week of message history (src/domain/demo.ts): the same for the same clock, within the
 * 7 days before it, a mix of final statuses and replies; written on every store with the credits
 * the log's rules give (Failed refunded) and a balance that ends at 2500; nothing left for the dispatcher.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createDemoAccount, demoHistory } from '../../src/domain/demo.ts';
import { createTimeFormat } from '../../src/lib/time.ts';
import { recordMappers } from '../../src/records/index.ts';
import { buildTestApp } from '../helpers/app.ts';
import { balanceOf, countMessages } from '../helpers/sms.ts';
import { storeTest } from '../helpers/stores.ts';

const NOW = Date.parse('2026-11-25T12:00:00Z') / 1000;
const CONTACTS = Array.from({ length: 50 }, (_, i) => `1555${String(2000000 + i * 7919).padStart(7, '0')}`);

test('demoHistory: deterministic, within the last 7 days, every day busy with a mix of statuses and replies', () => {
  const history = demoHistory(CONTACTS, NOW);
  assert.deepEqual(demoHistory(CONTACTS, NOW), history);
  assert.ok(history.length >= 100 && history.length <= 200, `${history.length} messages`);
  for (const m of history) assert.ok(m.createdAt > NOW - 7 * 86_400 && m.createdAt < NOW, String(m.createdAt));
  for (let d = 0; d < 7; d++) {
    const day = history.filter((m) => m.createdAt <= NOW - d * 86_400 && m.createdAt > NOW - (d + 1) * 86_400);
    assert.ok(day.some((m) => m.statusId === 3) && day.some((m) => m.statusId === 7), `day ${d}`);
  }
  for (const s of [3, 4, 5, 7])
    assert.ok(
      history.some((m) => m.statusId === s),
      `status ${s}`,
    );
  // Opted-out contacts (index % 11 = 5) get nothing.
  const optedOut = new Set(CONTACTS.filter((_, i) => i % 11 === 5));
  assert.ok(history.every((m) => !optedOut.has(m.mobilePhone)));
});

storeTest('createDemoAccount with history: the log holds it, no message is due, Failed refunded, balance 2500', async (t) => {
  const ctx = await buildTestApp(t);
  const mappers = recordMappers(createTimeFormat('UTC'));
  const demo = await createDemoAccount(ctx.store, mappers, 'US', 'History', { now: NOW, history: true });
  const expected = demoHistory(
    demo.contacts.map((c) => c.Number),
    NOW,
  );
  assert.equal(await countMessages(ctx, demo.account.id), expected.length);
  assert.equal(await balanceOf(ctx, demo.account.id), 2500);
  const rows = await ctx.store.db
    .selectFrom('messages')
    .select(['status_id', 'credits', 'due_at', 'lease_token', 'receipt_due_at', 'created_at'])
    .where('account_id', '=', demo.account.id)
    .execute();
  assert.ok(rows.every((r) => r.due_at === null && r.lease_token === null && r.receipt_due_at === null));
  assert.deepEqual(
    rows.map((r) => [Number(r.created_at), r.status_id, Number(r.credits)]).sort((a, b) => a[0]! - b[0]!),
    expected.map((m) => [m.createdAt, m.statusId, m.credits]).sort((a, b) => a[0]! - b[0]!),
  );
  // Without history (the tests' seed), the log stays empty.
  const plain = await createDemoAccount(ctx.store, mappers, 'US', 'Plain', { now: NOW });
  assert.equal(await countMessages(ctx, plain.account.id), 0);
});
