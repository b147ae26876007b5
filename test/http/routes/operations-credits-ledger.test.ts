/**
 * `GET /v1/credits/ledger` (docs/API.md §10.1.1) on each store: the fields in their order, newest
 * first, the pagination headers, the filters `Type`, `from`, `to` and their 422s (JSON and XML),
 * another account's entries never shown, 403 without `credits:read`; and migration 021's one
 * opening `adjustment` entry per balance that existed before it.
 */
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createManualClock } from '../../../src/lib/time.ts';
import { inTransaction } from '../../../src/store/db.ts';
import { changeCredits } from '../../../src/store/repositories/accounts.ts';
import { creditLedgerMigration } from '../../../src/store/migrations/021_credit_ledger.ts';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import { keyWith } from '../../helpers/keys.ts';
import { assertLedgerAddsUp } from '../../helpers/ledger.ts';
import { assert422, assertXmlLayout, call, fieldError } from '../../helpers/operations.ts';
import { storeTest } from '../../helpers/stores.ts';

const LEDGER = '/v1/credits/ledger';

interface Entry {
  Id: number;
  DateCreated: string;
  Type: string;
  Amount: number;
  Balance: number;
  Reference: string;
  Note: string;
}

async function entries(ctx: TestApp, token: string, query = ''): Promise<Entry[]> {
  const res = await call(ctx.app, { path: LEDGER, token, query: query ? `per-page=100&${query}` : 'per-page=100' });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<Entry[]>();
}

storeTest(
  'credits/ledger: fields in order, newest first, pagination, filters Type/from/to, 422s in JSON and XML, sealed, credits:read',
  async (t) => {
    const clock = createManualClock(Date.UTC(2030, 2, 1, 10, 0, 0));
    const ctx = await buildTestApp(t, {}, { clock });
    const a = await ctx.seed('A');
    const b = await ctx.seed('B');
    const seeded = await entries(ctx, a.token);
    assert.ok(seeded.length >= 1, 'the demo account starts with its credits');
    await assertLedgerAddsUp(ctx.store);

    // Three changes an hour apart, the CLI's way.
    const change = (amount: number, mode: 'set' | 'add', type?: 'topup' | 'adjustment') =>
      inTransaction(ctx.store, (tx) =>
        changeCredits(tx, a.account.id, amount, mode, clock.nowSeconds(), type ? { type, note: 'by hand' } : {}),
      );
    clock.advance(3600_000);
    await change(100, 'add');
    clock.advance(3600_000);
    await change(-30, 'add', 'adjustment');
    clock.advance(3600_000);
    await change(5000, 'set');
    await change(5000, 'set'); // no change, no entry

    const all = await entries(ctx, a.token);
    assert.equal(all.length, seeded.length + 3);
    assert.deepEqual(Object.keys(all[0]!), ['Id', 'DateCreated', 'Type', 'Amount', 'Balance', 'Reference', 'Note']);
    assert.deepEqual(
      all.map((e) => e.Id),
      [...all.map((e) => e.Id)].sort((x, y) => y - x),
      'newest first',
    );
    const before = seeded[0]!.Balance;
    assert.deepEqual(all.slice(0, 3), [
      {
        Id: all[0]!.Id,
        DateCreated: '2030-03-01 13:00:00',
        Type: 'adjustment',
        Amount: 5000 - (before + 70),
        Balance: 5000,
        Reference: '',
        Note: '',
      },
      {
        Id: all[1]!.Id,
        DateCreated: '2030-03-01 12:00:00',
        Type: 'adjustment',
        Amount: -30,
        Balance: before + 70,
        Reference: '',
        Note: 'by hand',
      },
      { Id: all[2]!.Id, DateCreated: '2030-03-01 11:00:00', Type: 'topup', Amount: 100, Balance: before + 100, Reference: '', Note: '' },
    ]);
    assert.equal(
      all.reduce((s, e) => s + e.Amount, 0),
      5000,
    );
    const balance = (await call(ctx.app, { path: '/v1/credits/balance', token: a.token })).json<{ AvailableCredits: number }>();
    assert.equal(balance.AvailableCredits, all[0]!.Balance);

    // Filters.
    assert.deepEqual(
      (await entries(ctx, a.token, 'Type=topup')).map((e) => e.Type),
      all.filter((e) => e.Type === 'topup').map((e) => e.Type),
    );
    assert.ok((await entries(ctx, a.token, 'Type=spend')).every((e) => e.Type === 'spend' && e.Amount < 0));
    assert.deepEqual(await entries(ctx, a.token, 'Type=transfer_in'), []);
    assert.deepEqual(
      (await entries(ctx, a.token, `from=${encodeURIComponent('2030-03-01 11:00:00')}`)).map((e) => e.Id),
      all.slice(0, 3).map((e) => e.Id),
    );
    assert.deepEqual(
      (
        await entries(ctx, a.token, `from=${encodeURIComponent('2030-03-01 11:00:01')}&to=${encodeURIComponent('2030-03-01 12:00:00')}`)
      ).map((e) => e.Id),
      [all[1]!.Id],
    );
    assert.deepEqual(
      (await entries(ctx, a.token, `to=${encodeURIComponent('2030-03-01 10:59:59')}`)).map((e) => e.Id),
      all.slice(3).map((e) => e.Id),
    );

    // Pagination.
    const page = await call(ctx.app, { path: LEDGER, token: a.token, query: 'per-page=1&page=2' });
    assert.equal(page.statusCode, 200);
    assert.equal(page.headers['x-pagination-total-count'], String(all.length));
    assert.equal(page.headers['x-pagination-page-count'], String(all.length));
    assert.equal(page.headers['x-pagination-current-page'], '2');
    assert.equal(page.headers['x-pagination-per-page'], '1');
    assert.match(String(page.headers.link), /rel=self.*rel=first.*rel=prev.*rel=next.*rel=last/);
    assert.deepEqual(
      page.json<Entry[]>().map((e) => e.Id),
      [all[1]!.Id],
    );

    // 422s, JSON and XML, in the order Type, from, to.
    assert422(await call(ctx.app, { path: LEDGER, token: a.token, query: 'Type=gift' }), [fieldError('Type', 'Type is invalid.')]);
    assert422(await call(ctx.app, { path: LEDGER, token: a.token, query: 'Type=gift&from=yesterday&to=soon' }), [
      fieldError('Type', 'Type is invalid.'),
      fieldError('from', 'The format of From is invalid.'),
      fieldError('to', 'The format of To is invalid.'),
    ]);
    assert422(
      await call(ctx.app, { path: LEDGER, token: a.token, query: 'Type=gift&to=soon', wire: 'xml' }),
      [fieldError('Type', 'Type is invalid.'), fieldError('to', 'The format of To is invalid.')],
      'xml',
    );
    assert422(await call(ctx.app, { path: LEDGER, token: a.token, query: 'from=2030-13-45' }), [
      fieldError('from', 'The format of From is invalid.'),
    ]);

    // XML record.
    const xml = await call(ctx.app, { path: LEDGER, token: a.token, wire: 'xml', query: 'per-page=1' });
    assertXmlLayout(xml.body);
    assert.ok(
      xml.body.includes(
        `<response><item><Id>${all[0]!.Id}</Id><DateCreated>2030-03-01 13:00:00</DateCreated><Type>adjustment</Type><Amount>${all[0]!.Amount}</Amount><Balance>5000</Balance><Reference></Reference><Note></Note></item></response>`,
      ),
      xml.body,
    );

    // Sealed: B sees only its own.
    const theirs = await entries(ctx, b.token);
    const mine = new Set(all.map((e) => e.Id));
    assert.ok(theirs.length > 0 && theirs.every((e) => !mine.has(e.Id)), "another account's entries are never shown");

    // Scope.
    const noCredits = await keyWith(ctx, a.account.id, ['sms:read', 'numbers:read']);
    assert.equal((await call(ctx.app, { path: LEDGER, token: noCredits })).statusCode, 403);
    const readOnly = await keyWith(ctx, a.account.id, ['credits:read']);
    assert.equal((await call(ctx.app, { path: LEDGER, token: readOnly, query: 'per-page=1' })).statusCode, 200);
    await assertLedgerAddsUp(ctx.store);
  },
);

storeTest('migration 021: a balance that existed before it gets exactly one opening adjustment entry equal to it', async (t) => {
  const ctx = await buildTestApp(t);
  const a = await ctx.seed('A');
  const b = await ctx.seed('B');
  // The store as it was before migration 021: no ledger; A holds 1234, B nothing.
  await sql`drop table credit_ledger`.execute(ctx.store.db);
  await ctx.store.db.updateTable('credit_balances').set({ available_credits: 1234 }).where('account_id', '=', a.account.id).execute();
  await ctx.store.db.updateTable('credit_balances').set({ available_credits: 0 }).where('account_id', '=', b.account.id).execute();
  await creditLedgerMigration(ctx.store.dialect).up(ctx.store.db as never);
  const rows = await ctx.store.db.selectFrom('credit_ledger').selectAll().orderBy('id').execute();
  assert.deepEqual(
    rows.map((r) => [r.account_id, r.type, Number(r.amount), Number(r.balance), r.reference, r.note]),
    [[a.account.id, 'adjustment', 1234, 1234, '', 'Opening balance']],
  );
  await assertLedgerAddsUp(ctx.store);
  const listed = await entries(ctx, a.token);
  assert.deepEqual(
    listed.map((e) => [e.Type, e.Amount, e.Balance, e.Note]),
    [['adjustment', 1234, 1234, 'Opening balance']],
  );
  assert.deepEqual(await entries(ctx, b.token), []);
});
