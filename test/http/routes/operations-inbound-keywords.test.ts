/**
 * Keywords of several words (API.md §11.5 rule 4, §10.5), on each store, through
 * `POST /v1/sandbox/inbound` and the keyword operations: a text fires the keyword it BEGINS with
 * (the keyword followed by white space or the end of the text, its words separated by any white
 * space, compared without case), the longest one when several do; `JOIN NOW` fires for
 * `join now` and `JOIN\t\nNOW please`, never for `JOIN NOWHERE` or `JOINNOW`; the sender joins the
 * keyword's groups and gets its paid autoreply; a shared short code sends the text to the account
 * of the keyword that won only. keyword/reserve, update and check treat `JOIN  NOW` and `join now`
 * as one keyword, and migration 020 rewrites the keys stored before. Expected rows are read from
 * the database, never from src's mappers.
 */
import assert from 'node:assert/strict';
import type { DemoAccount } from '../../../src/domain/demo.ts';
import { keywordKeysMigration } from '../../../src/store/migrations/020_keyword_keys.ts';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import { assert422, assertBody, call, contactFromDb, fieldError, groupFromDb } from '../../helpers/operations.ts';
import { balanceOf } from '../../helpers/sms.ts';
import { storeTest } from '../../helpers/stores.ts';

const INBOUND = '/v1/sandbox/inbound';
const SHORT = '55155'; // every demo account holds it
const SENDER = '+15551234567';
const SENDER_DIGITS = '15551234567';

async function reserve(ctx: TestApp, demo: DemoAccount, Keyword: string, AutoreplyMessage = ''): Promise<number> {
  const res = await call(ctx.app, {
    method: 'POST',
    path: '/v1/keyword/reserve',
    token: demo.token,
    body: { Keyword, Number: SHORT, AutoreplyMessage },
  });
  assert.equal(res.statusCode, 201, res.body);
  return (JSON.parse(res.body) as { Id: number }[])[0]!.Id;
}

async function createGroup(ctx: TestApp, demo: DemoAccount, fname: string, KeywordId: number): Promise<number> {
  const res = await call(ctx.app, { method: 'POST', path: '/v1/groups/create', token: demo.token, body: { fname, KeywordId } });
  assert.equal(res.statusCode, 201, res.body);
  return (JSON.parse(res.body) as { Id: number }).Id;
}

/** Texts `Message` from `From` to 55155 through `demo`'s sandbox; returns the Ids of the inbound records the caller got. */
async function text(ctx: TestApp, demo: DemoAccount, Message: string, From = SENDER): Promise<number[]> {
  const res = await call(ctx.app, { method: 'POST', path: INBOUND, token: demo.token, body: { From, To: SHORT, Message } });
  assert.equal(res.statusCode, 201, res.body);
  return (JSON.parse(res.body) as { Id: number }[]).map((r) => r.Id);
}

async function lastId(ctx: TestApp): Promise<number> {
  const r = await ctx.store.db
    .selectFrom('messages')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirst();
  return Number(r?.id ?? 0);
}

/** The account's messages after `afterId`, as `Direction Status credits "text"` (Inbound / Outbound; Received / Queued…). */
async function newMessages(ctx: TestApp, accountId: number, afterId: number): Promise<string[]> {
  const rows = await ctx.store.db
    .selectFrom('messages')
    .select(['direction', 'status_id', 'credits', 'message', 'mobile_phone'])
    .where('account_id', '=', accountId)
    .where('id', '>', afterId)
    .orderBy('id')
    .execute();
  const status: Record<number, string> = { 1: 'Queued', 6: 'Rejected', 7: 'Received' };
  return rows.map(
    (r) => `${r.direction === 1 ? 'Outbound' : 'Inbound'} ${status[r.status_id] ?? r.status_id} ${Number(r.credits)} "${r.message}"`,
  );
}

async function contactOf(ctx: TestApp, accountId: number, digits: string) {
  const r = await ctx.store.db
    .selectFrom('contacts')
    .select('id')
    .where('account_id', '=', accountId)
    .where('number', '=', digits)
    .executeTakeFirst();
  return r ? contactFromDb(ctx, r.id) : undefined;
}

storeTest(
  'API.md §11.5 rule 4: a keyword of two words fires for its words in order, separated by any white space, in any case, followed by white space or the end; never inside a longer word',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const joinNow = await reserve(ctx, demo, 'JOIN NOW', 'Welcome aboard!');
    const club = await createGroup(ctx, demo, 'Joined now', joinNow);
    let balance = await balanceOf(ctx, demo.account.id);

    for (const message of ['join now', 'JOIN\t\nNOW please', '  Join   Now  ', 'join\u00a0now yes!']) {
      const before = await lastId(ctx);
      assert.equal((await text(ctx, demo, message)).length, 1, message);
      assert.deepEqual(
        await newMessages(ctx, demo.account.id, before),
        [`Inbound Received 0 "${message}"`, `Outbound Queued 1 "Welcome aboard!"`],
        message,
      );
      balance -= 1;
      assert.equal(await balanceOf(ctx, demo.account.id), balance, `${message}: the autoreply is an ordinary paid message`);
    }
    const contact = (await contactOf(ctx, demo.account.id, SENDER_DIGITS))!;
    assert.deepEqual([contact.OptedOut, contact.GroupIds], [0, [club]], 'created once, in the keyword’s group');
    assert.deepEqual((await groupFromDb(ctx, club)).PhoneNumberIds, [contact.Id]);

    // Not followed by white space or the end, not its words in order, not at the start: stored only.
    for (const message of ['JOIN NOWHERE', 'JOINNOW', 'join', 'join later', 'now join', 'please join now', 'JOIN-NOW', 'join now!']) {
      const before = await lastId(ctx);
      await text(ctx, demo, message, '+15553007777');
      assert.deepEqual(await newMessages(ctx, demo.account.id, before), [`Inbound Received 0 "${message}"`], message);
    }
    assert.equal(await contactOf(ctx, demo.account.id, '15553007777'), undefined, 'no contact, no group');
    assert.equal(await balanceOf(ctx, demo.account.id), balance);
  },
);

storeTest('API.md §11.5 rule 4: with JOIN and JOIN NOW reserved, the longest keyword the text begins with wins', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const join = await reserve(ctx, demo, 'JOIN', 'You joined.');
  const joinNow = await reserve(ctx, demo, 'Join Now', 'You joined now.');
  const joinNowVip = await reserve(ctx, demo, 'join now vip'); // no autoreply
  const gJoin = await createGroup(ctx, demo, 'Join', join);
  const gJoinNow = await createGroup(ctx, demo, 'Join now', joinNow);
  const gVip = await createGroup(ctx, demo, 'Join now VIP', joinNowVip);

  const cases: [message: string, from: string, replies: string[], groups: number[]][] = [
    ['join now', '+15553000001', ['You joined now.'], [gJoinNow]],
    ['JOIN NOW please', '+15553000002', ['You joined now.'], [gJoinNow]],
    ['join later', '+15553000003', ['You joined.'], [gJoin]],
    ['Join', '+15553000004', ['You joined.'], [gJoin]],
    // "now!" is not the word "now": the longest keyword the text begins with is JOIN.
    ['join now! thanks', '+15553000005', ['You joined.'], [gJoin]],
    ['join now vip', '+15553000006', [], [gVip]],
    ['JOIN  NOW  VIPS', '+15553000007', ['You joined now.'], [gJoinNow]],
  ];
  for (const [message, from, replies, groups] of cases) {
    const before = await lastId(ctx);
    await text(ctx, demo, message, from);
    assert.deepEqual(
      await newMessages(ctx, demo.account.id, before),
      [`Inbound Received 0 "${message}"`, ...replies.map((r) => `Outbound Queued 1 "${r}"`)],
      message,
    );
    assert.deepEqual((await contactOf(ctx, demo.account.id, from.slice(1)))!.GroupIds, groups, message);
  }
});

storeTest(
  'API.md §11.5 shared short code: the text goes to the account of the longest keyword only, whichever account it comes through',
  async (t) => {
    const ctx = await buildTestApp(t);
    const a = await ctx.seed('A');
    const b = await ctx.seed('B');
    // Keywords are unique on the number across accounts: JOIN (A) and JOIN NOW (B) are two keywords.
    const join = await reserve(ctx, a, 'JOIN', 'A says hi');
    const joinNow = await reserve(ctx, b, 'JOIN NOW', 'B says hi');
    const aGroup = await createGroup(ctx, a, 'A joiners', join);
    const bGroup = await createGroup(ctx, b, 'B joiners', joinNow);

    let before = await lastId(ctx);
    assert.deepEqual(await text(ctx, a, 'Join Now please', '+15553001111'), [], 'through A: the text is B’s');
    assert.deepEqual(await newMessages(ctx, a.account.id, before), []);
    assert.deepEqual(await newMessages(ctx, b.account.id, before), [
      `Inbound Received 0 "Join Now please"`,
      `Outbound Queued 1 "B says hi"`,
    ]);
    assert.equal(await contactOf(ctx, a.account.id, '15553001111'), undefined);
    assert.deepEqual((await contactOf(ctx, b.account.id, '15553001111'))!.GroupIds, [bGroup]);

    before = await lastId(ctx);
    assert.deepEqual(await text(ctx, b, 'join us', '+15553002222'), [], 'through B: the text is A’s');
    assert.deepEqual(await newMessages(ctx, b.account.id, before), []);
    assert.deepEqual(await newMessages(ctx, a.account.id, before), [`Inbound Received 0 "join us"`, `Outbound Queued 1 "A says hi"`]);
    assert.deepEqual((await contactOf(ctx, a.account.id, '15553002222'))!.GroupIds, [aGroup]);

    // Neither keyword: stored in both accounts, nothing else.
    before = await lastId(ctx);
    await text(ctx, a, 'joining now', '+15553003333');
    for (const acc of [a, b]) assert.deepEqual(await newMessages(ctx, acc.account.id, before), [`Inbound Received 0 "joining now"`]);
  },
);

storeTest(
  'API.md §10.5: reserve, update and check compare keywords with every run of white space as one space (JOIN  NOW is join now)',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const other = await ctx.seed('Other');
    const joinNow = await reserve(ctx, demo, 'JOIN  NOW');
    const stored = await ctx.store.db
      .selectFrom('keyword_reservations')
      .select(['keyword', 'keyword_key'])
      .where('id', '=', joinNow)
      .execute();
    assert.deepEqual(stored, [{ keyword: 'JOIN  NOW', keyword_key: 'join now' }], 'the keyword as sent; its key with one space');

    const taken = (kw: string) => [fieldError('Keyword', `Keyword "${kw}" has already been taken.`)];
    for (const Keyword of ['join now', 'Join\tNow', ' JOIN \n NOW ', 'join\u3000now']) {
      for (const who of [demo, other]) {
        const res = await call(ctx.app, {
          method: 'POST',
          path: '/v1/keyword/reserve',
          token: who.token,
          body: { Keyword, Number: SHORT },
        });
        assert422(res, taken(Keyword));
        const check = await call(ctx.app, {
          path: '/v1/keyword/check',
          token: who.token,
          query: `Keyword=${encodeURIComponent(Keyword)}&Number=${SHORT}`,
        });
        assertBody(check, 'json', 200, { Keyword, Number: 55155, Available: false });
      }
    }
    const check = await call(ctx.app, { path: '/v1/keyword/check', token: demo.token, query: `Keyword=JOIN%20NOWS&Number=${SHORT}` });
    assertBody(check, 'json', 200, { Keyword: 'JOIN NOWS', Number: 55155, Available: true });

    // update: renaming another keyword onto it is refused; renaming itself with other spacing is fine.
    const later = await reserve(ctx, demo, 'JOIN LATER');
    const update = (id: number, Keyword: string) =>
      call(ctx.app, { method: 'PATCH', path: '/v1/keyword/update', token: demo.token, query: `id=${id}`, body: { Keyword } });
    assert422(await update(later, 'join   now'), taken('join   now'));
    const renamed = await update(joinNow, 'Join Now');
    assert.equal(renamed.statusCode, 200, renamed.body);
    const rows = await ctx.store.db
      .selectFrom('keyword_reservations')
      .select(['keyword', 'keyword_key'])
      .where('id', '=', joinNow)
      .execute();
    assert.deepEqual(rows, [{ keyword: 'Join Now', keyword_key: 'join now' }]);
  },
);

storeTest(
  'migration 020: keys stored before get one space per run of white space (oldest first); a key that would clash keeps its old form',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const numberId = (
      await ctx.store.db
        .selectFrom('account_numbers')
        .select('id')
        .where('account_id', '=', demo.account.id)
        .where('number', '=', SHORT)
        .executeTakeFirstOrThrow()
    ).id;
    // Reservations as the service stored them before: NFKC, trimmed, lower case, white space kept.
    const legacy = async (keyword: string, key: string, autoreply: string) =>
      (
        await ctx.store.db
          .insertInto('keyword_reservations')
          .values({
            account_id: demo.account.id,
            account_number_id: numberId,
            number: SHORT,
            keyword,
            keyword_key: key,
            autoreply_message: autoreply,
            created_at: 1,
          })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id;
    const sale = await legacy('SALE  TODAY', 'sale  today', 'Sale!');
    const first = await legacy('GO\tNOW', 'go\tnow', 'first');
    const second = await legacy('Go  Now', 'go  now', 'second');
    const plain = await legacy('PIZZA', 'pizza', '');

    await keywordKeysMigration(ctx.store.dialect).up(ctx.store.db as never);
    const keys = await ctx.store.db.selectFrom('keyword_reservations').select(['id', 'keyword_key']).orderBy('id').execute();
    assert.deepEqual(keys, [
      { id: sale, keyword_key: 'sale today' },
      { id: first, keyword_key: 'go now' },
      { id: second, keyword_key: 'go  now' },
      { id: plain, keyword_key: 'pizza' },
    ]);
    // The rewritten keys are texted; a second run changes nothing.
    for (const [message, reply] of [
      ['sale today', 'Sale!'],
      ['Go Now', 'first'],
    ]) {
      const before = await lastId(ctx);
      await text(ctx, demo, message!);
      assert.deepEqual(await newMessages(ctx, demo.account.id, before), [
        `Inbound Received 0 "${message}"`,
        `Outbound Queued 1 "${reply}"`,
      ]);
    }
    await keywordKeysMigration(ctx.store.dialect).up(ctx.store.db as never);
    assert.deepEqual(await ctx.store.db.selectFrom('keyword_reservations').select(['id', 'keyword_key']).orderBy('id').execute(), keys);
  },
);
