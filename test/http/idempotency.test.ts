/**
 * Idempotency-Key (API.md §7), mostly on POST /v1/keyword/reserve: bad keys, replay (status,
 * body in the negotiated format, Idempotent-Replayed, nothing done twice), the two 409s (name
 * `Conflict`, API.md §4), access_token not part of the request, per-account keys, 4xx kept and
 * 5xx not kept, concurrent duplicates, a row left in progress, expiry after 24 hours by the injected
 * clock, and the rate limit counting replays; then `fields=` with a cross-format replay, Location
 * (contacts/create), a streamed body (contacts/import), and POST only. Runs on SQLite and
 * PostgreSQL. Across two instances: test/scale-idempotency.test.ts.
 */
import assert from 'node:assert/strict';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { sql } from 'kysely';
import fastify, { type LightMyRequestResponse } from 'fastify';
import type { DemoAccount } from '../../src/domain/demo.ts';
import { issueToken } from '../../src/domain/accounts.ts';
import { createTimeFormat } from '../../src/lib/time.ts';
import { defineOperation, registerOperations } from '../../src/http/operation.ts';
import { collectRawBodies } from '../../src/http/plugins/body.ts';
import { createIdempotency, queryWithoutToken, requestFingerprint } from '../../src/http/plugins/idempotency.ts';
import { parseParams } from '../../src/http/query.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { assertBody, keywordsFromDb, XML_TYPE } from '../helpers/operations.ts';
import { storeTest } from '../helpers/stores.ts';

const PATH = '/v1/keyword/reserve';
const BODY = { Keyword: 'JOINx', Number: '55155' };
const IN_PROGRESS = 'A request with this Idempotency-Key is still in progress.';
const DIFFERENT = 'Idempotency-Key was used with a different request.';

interface ReserveOptions {
  key?: string;
  body?: unknown;
  xml?: boolean;
  /** Extra query text after access_token. */
  query?: string;
}

function reserve(ctx: TestApp, token: string, o: ReserveOptions = {}): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { accept: o.xml ? 'application/xml' : 'application/json', 'content-type': 'application/json' };
  if (o.key !== undefined) headers['idempotency-key'] = o.key;
  return ctx.app.inject({
    method: 'POST',
    url: `${PATH}?access_token=${encodeURIComponent(token)}${o.query ? `&${o.query}` : ''}`,
    headers,
    payload: JSON.stringify(o.body ?? BODY),
  });
}

/** The header exactly as it went on the wire (name casing included), or undefined. */
function rawHeader(res: LightMyRequestResponse, name: string): string | undefined {
  // Node's OutgoingMessage keeps the names as set (getRawHeaderNames, Node ≥ 15.13; not in @types/node 20's ServerResponse).
  const names = (res.raw.res as unknown as { getRawHeaderNames(): string[] }).getRawHeaderNames();
  if (!names.includes(name)) return undefined;
  return String(res.raw.res.getHeader(name));
}

/** An API.md §4 409 (name: the reason phrase), in JSON unless `xml`. */
function assertConflict(res: LightMyRequestResponse, message: string, xml = false): void {
  assertBody(res, xml ? 'xml' : 'json', 409, { name: 'Conflict', message, code: 0, status: 409 });
  assert.equal(res.headers['idempotent-replayed'], undefined);
}

async function reservations(ctx: TestApp, demo: DemoAccount) {
  return (await keywordsFromDb(ctx, demo.account.id)).length;
}

async function keyRows(ctx: TestApp) {
  return ctx.store.db.selectFrom('idempotency_keys').selectAll().orderBy('account_id').orderBy('key').execute();
}

storeTest('bad Idempotency-Key values get 400; a good one of 1 or 255 characters is accepted', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const message = 'Invalid Idempotency-Key header: use 1 to 255 visible ASCII characters.';
  for (const key of ['', 'k'.repeat(256), 'clé', 'a\u0001b', 'a b', 'a\tb', '\u007f']) {
    const res = await reserve(ctx, demo.token, { key });
    assertBody(res, 'json', 400, { name: 'Bad Request', message, code: 0, status: 400 });
  }
  assert.equal(await reservations(ctx, demo), 0, 'nothing done for a bad key');
  assert.equal((await keyRows(ctx)).length, 0);
  const one = await reserve(ctx, demo.token, { key: '!', body: { Keyword: 'JOIN1', Number: '55155' } });
  assert.equal(one.statusCode, 201, one.body);
  const long = await reserve(ctx, demo.token, { key: '~'.repeat(255), body: { Keyword: 'JOIN2', Number: '55155' } });
  assert.equal(long.statusCode, 201, long.body);
  // Without the header: no row at all (the hot path never touches the table).
  const none = await reserve(ctx, demo.token, { body: { Keyword: 'JOIN3', Number: '55155' } });
  assert.equal(none.statusCode, 201);
  assert.equal((await keyRows(ctx)).length, 2);
});

storeTest('the same key and request replays the first response with Idempotent-Replayed: true; nothing is done twice', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const first = await reserve(ctx, demo.token, { key: 'order-1' });
  assert.equal(first.statusCode, 201, first.body);
  assert.equal(first.headers['idempotent-replayed'], undefined);
  const again = await reserve(ctx, demo.token, { key: 'order-1' });
  assert.equal(again.statusCode, 201, again.body);
  assert.equal(again.statusMessage, 'Created');
  assert.equal(again.body, first.body);
  assert.equal(again.headers['content-type'], first.headers['content-type']);
  assert.equal(rawHeader(again, 'Idempotent-Replayed'), 'true', 'exact name casing and value');
  assert.ok(again.headers['x-rate-limit-remaining'] !== undefined, 'rate-limit headers on a replay');
  assert.equal(await reservations(ctx, demo), 1, 'one reservation');
  const [row] = await keyRows(ctx);
  assert.equal(Number(row!.response_status), 201);
  assert.equal(row!.response_body, first.body, 'the JSON form is kept');
});

storeTest('a replay is rendered in the format THIS request negotiated (JSON first, XML replay, and back)', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const first = await reserve(ctx, demo.token, { key: 'fmt-1' });
  assert.equal(first.statusCode, 201);
  const [record] = JSON.parse(first.body) as [{ Id: number; Keyword: string; Number: number; AutoreplyMessage: string }];
  const xmlForm = [{ Id: record.Id, Number: record.Keyword, ShortCode: record.Number, AutoreplyMessage: record.AutoreplyMessage }];
  const asXml = await reserve(ctx, demo.token, { key: 'fmt-1', xml: true });
  assertBody(asXml, 'xml', 201, xmlForm);
  assert.equal(asXml.headers['idempotent-replayed'], 'true');
  // `_format=xml` is part of the query, hence of the request: another request.
  assertConflict(await reserve(ctx, demo.token, { key: 'fmt-1', query: '_format=xml' }), DIFFERENT, true);

  // XML first: the JSON replay has the JSON names.
  const second = await reserve(ctx, demo.token, {
    key: 'fmt-2',
    xml: true,
    body: { Keyword: 'JOINz', Number: '55155', AutoreplyMessage: 'a & b' },
  });
  assert.equal(second.statusCode, 201, second.body);
  assert.equal(second.headers['content-type'], XML_TYPE);
  const asJson = await reserve(ctx, demo.token, { key: 'fmt-2', body: { Keyword: 'JOINz', Number: '55155', AutoreplyMessage: 'a & b' } });
  const id = (await keywordsFromDb(ctx, demo.account.id)).find((r) => r.keyword === 'JOINz')!.id;
  assertBody(asJson, 'json', 201, [{ Id: id, Keyword: 'JOINz', Number: 55155, AutoreplyMessage: 'a & b' }]);
  const xmlAgain = await reserve(ctx, demo.token, {
    key: 'fmt-2',
    xml: true,
    body: { Keyword: 'JOINz', Number: '55155', AutoreplyMessage: 'a & b' },
  });
  assert.equal(xmlAgain.body, second.body);
  assert.equal(await reservations(ctx, demo), 2);
});

storeTest('the same key with another body or another query: 409 "used with a different request"', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  assert.equal((await reserve(ctx, demo.token, { key: 'k1' })).statusCode, 201);
  assertConflict(await reserve(ctx, demo.token, { key: 'k1', body: { Keyword: 'JOINy', Number: '55155' } }), DIFFERENT);
  // The body bytes count, not only their meaning.
  const spaced = await ctx.app.inject({
    method: 'POST',
    url: `${PATH}?access_token=${demo.token}`,
    headers: { 'content-type': 'application/json', 'idempotency-key': 'k1' },
    payload: JSON.stringify(BODY, null, 1),
  });
  assertConflict(spaced, DIFFERENT);
  assertConflict(await reserve(ctx, demo.token, { key: 'k1', query: 'x=1' }), DIFFERENT);
  assert.equal(await reservations(ctx, demo), 1);
  // The rejected requests did not touch the kept response.
  const replay = await reserve(ctx, demo.token, { key: 'k1' });
  assert.equal(replay.statusCode, 201);
  assert.equal(replay.headers['idempotent-replayed'], 'true');
});

storeTest(
  'access_token is not part of the request: another token of the account replays; order of the other parameters kept',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const other = await issueToken(ctx.store, demo.account.id, 'second');
    const first = await reserve(ctx, demo.token, { key: 'tok', query: 'a=1&b=2' });
    assert.equal(first.statusCode, 201, first.body);
    // The token placed elsewhere among the parameters, and sent twice.
    const again = await ctx.app.inject({
      method: 'POST',
      url: `${PATH}?a=1&access_token=${other.token}&b=2&access_token=${other.token}`,
      headers: { 'content-type': 'application/json', 'idempotency-key': 'tok' },
      payload: JSON.stringify(BODY),
    });
    assert.equal(again.statusCode, 201, again.body);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.body, first.body);
    assertConflict(await reserve(ctx, other.token, { key: 'tok', query: 'b=2&a=1' }), DIFFERENT);
    assert.equal(await reservations(ctx, demo), 1);

    assert.equal(queryWithoutToken('access_token=x&a=1&access%5Ftoken=y&b=2&access_token=z'), 'a=1&b=2');
    assert.equal(queryWithoutToken('a=1&&b=2'), 'a=1&&b=2');
    assert.equal(
      requestFingerprint('POST', PATH, 'access_token=1&a=b', '{}'),
      requestFingerprint('POST', PATH, 'a=b&access_token=2', '{}'),
    );
  },
);

storeTest('keys are scoped to the account: another account with the same key is independent', async (t) => {
  const ctx = await buildTestApp(t);
  const a = await ctx.seed('Account A');
  const b = await ctx.seed('Account B');
  const first = await reserve(ctx, a.token, { key: 'shared-key' });
  assert.equal(first.statusCode, 201, first.body);
  const other = await reserve(ctx, b.token, { key: 'shared-key', body: { Keyword: 'JOINb', Number: '55155' } });
  assert.equal(other.statusCode, 201, other.body);
  assert.equal(other.headers['idempotent-replayed'], undefined);
  assert.notEqual(other.body, first.body);
  assert.equal(await reservations(ctx, a), 1);
  assert.equal(await reservations(ctx, b), 1);
  assert.equal((await keyRows(ctx)).length, 2);
});

storeTest('a 422 is kept and replayed (the error handler payload goes through preSerialization)', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const bad = { Keyword: 'STOP', Number: '55155' };
  const first = await reserve(ctx, demo.token, { key: 'bad-1', body: bad });
  assert.equal(first.statusCode, 422, first.body);
  assert.equal(first.statusMessage, 'Data Validation Failed.');
  const again = await reserve(ctx, demo.token, { key: 'bad-1', body: bad, xml: true });
  assert.equal(again.statusCode, 422);
  assert.equal(again.statusMessage, 'Data Validation Failed.');
  assert.equal(again.headers['idempotent-replayed'], 'true');
  assertBody(again, 'xml', 422, JSON.parse(first.body));
  const [row] = await keyRows(ctx);
  assert.equal(Number(row!.response_status), 422);
});

/** Makes every insert into keyword_reservations fail with an unexpected database error; returns the undo. */
async function breakReservations(ctx: TestApp): Promise<() => Promise<void>> {
  if (ctx.config.database.kind === 'postgres') {
    await sql`create function msgsvc_test_boom() returns trigger language plpgsql as $$ begin raise exception 'boom'; end $$`.execute(
      ctx.store.db,
    );
    await sql`create trigger msgsvc_test_boom before insert on keyword_reservations for each row execute function msgsvc_test_boom()`.execute(
      ctx.store.db,
    );
    return async () => {
      await sql`drop trigger msgsvc_test_boom on keyword_reservations`.execute(ctx.store.db);
      await sql`drop function msgsvc_test_boom()`.execute(ctx.store.db);
    };
  }
  await sql`create trigger msgsvc_test_boom before insert on keyword_reservations begin select raise(abort, 'boom'); end`.execute(
    ctx.store.db,
  );
  return async () => {
    await sql`drop trigger msgsvc_test_boom`.execute(ctx.store.db);
  };
}

storeTest('a 500 is not kept: the key is free again and a retry with it runs', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const undo = await breakReservations(ctx);
  const failed = await reserve(ctx, demo.token, { key: 'retry-me' });
  assert.equal(failed.statusCode, 500, failed.body);
  assert.equal(JSON.parse(failed.body).message, 'An internal server error occurred.');
  assert.equal((await keyRows(ctx)).length, 0, 'the in-progress row is gone');
  await undo();
  const retry = await reserve(ctx, demo.token, { key: 'retry-me' });
  assert.equal(retry.statusCode, 201, retry.body);
  assert.equal(retry.headers['idempotent-replayed'], undefined);
  assert.equal(await reservations(ctx, demo), 1);
});

storeTest('a row left in progress (a request still running, or a process that died) answers 409 "still in progress"', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const now = Math.floor(Date.now() / 1000);
  await ctx.store.db
    .insertInto('idempotency_keys')
    .values({
      account_id: demo.account.id,
      key: 'stuck',
      fingerprint: requestFingerprint('POST', PATH, '', JSON.stringify(BODY)),
      response_status: null,
      response_body: null,
      response_location: null,
      created_at: now - 3600,
      expires_at: now + 3600,
    })
    .execute();
  assertConflict(await reserve(ctx, demo.token, { key: 'stuck' }), IN_PROGRESS);
  // Whatever the request: the first one may still do its work.
  assertConflict(await reserve(ctx, demo.token, { key: 'stuck', body: { Keyword: 'OTHER', Number: '55155' } }), IN_PROGRESS);
  assert.equal(await reservations(ctx, demo), 0);
});

/**
 * Holds back keyword_reservations inserts until the returned release is called: on SQLite by
 * holding the one connection's lock (the Idempotency-Key statements run beside it), on PostgreSQL
 * by a table lock from another connection.
 */
async function holdReservations(ctx: TestApp): Promise<() => Promise<void>> {
  if (ctx.config.database.kind === 'postgres') {
    const client = new pg.Client({ connectionString: ctx.config.database.kind === 'postgres' ? ctx.config.database.url : '' });
    await client.connect();
    await client.query('begin');
    await client.query('lock table keyword_reservations in exclusive mode');
    return async () => {
      await client.query('commit');
      await client.end();
    };
  }
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let held!: () => void;
  const holding = new Promise<void>((resolve) => (held = resolve));
  const done = ctx.store.db.connection().execute(async () => {
    held();
    await gate;
  });
  await holding;
  return async () => {
    release();
    await done;
  };
}

/** Waits until the account's row for `key` exists (read beside the app's own connection). */
async function waitForRow(ctx: TestApp, accountId: number, key: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  const reader = ctx.config.database.kind === 'sqlite' ? new SQLite(ctx.dbPath, { readonly: true }) : undefined;
  try {
    for (;;) {
      const found = reader
        ? reader.prepare('select 1 from idempotency_keys where account_id = ? and key = ?').get(accountId, key)
        : await ctx.store.db
            .selectFrom('idempotency_keys')
            .select('key')
            .where('account_id', '=', accountId)
            .where('key', '=', key)
            .executeTakeFirst();
      if (found) return;
      if (Date.now() > deadline) throw new Error(`no row for ${key}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    reader?.close();
  }
}

storeTest('concurrent duplicates: while the first runs the second gets 409 in progress; afterwards a replay', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const release = await holdReservations(ctx);
  const first = reserve(ctx, demo.token, { key: 'dup' });
  await waitForRow(ctx, demo.account.id, 'dup');
  const second = await reserve(ctx, demo.token, { key: 'dup' });
  assertConflict(second, IN_PROGRESS);
  await release();
  const res = await first;
  assert.equal(res.statusCode, 201, res.body);
  const third = await reserve(ctx, demo.token, { key: 'dup' });
  assert.equal(third.statusCode, 201);
  assert.equal(third.headers['idempotent-replayed'], 'true');
  assert.equal(third.body, res.body);
  assert.equal(await reservations(ctx, demo), 1);
});

storeTest('concurrent duplicates fired at once: one 201 that ran, the others a 409 in progress or a replay, one row', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const all = await Promise.all(Array.from({ length: 6 }, () => reserve(ctx, demo.token, { key: 'burst' })));
  const ran = all.filter((r) => r.statusCode === 201 && r.headers['idempotent-replayed'] === undefined);
  assert.equal(ran.length, 1, all.map((r) => `${r.statusCode} ${r.body}`).join('\n'));
  for (const r of all) {
    if (r === ran[0]) continue;
    if (r.statusCode === 409) assertConflict(r, IN_PROGRESS);
    else {
      assert.equal(r.statusCode, 201);
      assert.equal(r.headers['idempotent-replayed'], 'true');
      assert.equal(r.body, ran[0]!.body);
    }
  }
  assert.equal(await reservations(ctx, demo), 1);
});

storeTest('keys are kept 24 hours: an expired row is ignored and overwritten; expired rows are purged', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const first = await reserve(ctx, demo.token, { key: 'old' });
  assert.equal(first.statusCode, 201);
  const [row] = await keyRows(ctx);
  const ttl = Number(row!.expires_at) - Number(row!.created_at);
  assert.equal(ttl, 24 * 60 * 60);
  // 24 hours later: the same key with another request runs.
  await ctx.store.db
    .updateTable('idempotency_keys')
    .set({ expires_at: Math.floor(Date.now() / 1000) - 1 })
    .execute();
  const later = await reserve(ctx, demo.token, { key: 'old', body: { Keyword: 'LATER', Number: '55155' } });
  assert.equal(later.statusCode, 201, later.body);
  assert.equal(later.headers['idempotent-replayed'], undefined);
  assert.equal(await reservations(ctx, demo), 2);
  const rows = await keyRows(ctx);
  assert.equal(rows.length, 1);
  assert.equal(rows[0]!.response_body, later.body, 'overwritten by the new response');
  // An expired row of another key is deleted by a later claim (at most once a minute per process,
  // and the first claim of this app already purged: so only checked as "gone or expired").
  const replay = await reserve(ctx, demo.token, { key: 'old', body: { Keyword: 'LATER', Number: '55155' } });
  assert.equal(replay.headers['idempotent-replayed'], 'true');
});

storeTest('a replay still counts against the rate limit', async (t) => {
  const ctx = await buildTestApp(t, { MSGSVC_RATE_LIMIT: '3', MSGSVC_RATE_WINDOW: '60' });
  const demo = await ctx.seed();
  const first = await reserve(ctx, demo.token, { key: 'rl' });
  assert.equal(first.statusCode, 201);
  assert.equal(first.headers['x-rate-limit-remaining'], '2');
  const replay = await reserve(ctx, demo.token, { key: 'rl' });
  assert.equal(replay.headers['idempotent-replayed'], 'true');
  assert.equal(replay.headers['x-rate-limit-remaining'], '1');
  assert.equal((await reserve(ctx, demo.token, { key: 'rl' })).headers['x-rate-limit-remaining'], '0');
  const limited = await reserve(ctx, demo.token, { key: 'rl' });
  assert.equal(limited.statusCode, 429);
  assert.equal(limited.headers['idempotent-replayed'], undefined);
});

storeTest('fields= with a cross-format replay: the kept result is the one before fields= picked from it', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  // In JSON `Number` is the short code; in the XML form of a reservation it holds the keyword.
  const first = await reserve(ctx, demo.token, { key: 'pick', query: 'fields=Number' });
  assertBody(first, 'json', 201, [{ Number: 55155 }]);
  const asXml = await reserve(ctx, demo.token, { key: 'pick', query: 'fields=Number', xml: true });
  assertBody(asXml, 'xml', 201, [{ Number: BODY.Keyword }]);
  assert.equal(asXml.headers['idempotent-replayed'], 'true');
  const asJson = await reserve(ctx, demo.token, { key: 'pick', query: 'fields=Number' });
  assert.equal(asJson.body, first.body);
  assert.equal(await reservations(ctx, demo), 1);
});

storeTest('contacts/create: the replay carries the first Location (exactly cased) and creates nothing', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const create = (host: string) =>
    ctx.app.inject({
      method: 'POST',
      url: `/v1/contacts/create?access_token=${demo.token}`,
      headers: { host, 'content-type': 'application/json', 'idempotency-key': 'contact-1' },
      payload: JSON.stringify({ Number: '+14155550142', FirstName: 'Ann' }),
    });
  const first = await create('a.example');
  assert.equal(first.statusCode, 201, first.body);
  const id = (JSON.parse(first.body) as { Id: number }).Id;
  assert.equal(rawHeader(first, 'Location'), `http://a.example/v1/contacts/view?id=${id}`);
  const again = await create('b.example');
  assert.equal(again.statusCode, 201);
  assert.equal(again.body, first.body);
  assert.equal(rawHeader(again, 'Location'), `http://a.example/v1/contacts/view?id=${id}`, 'the first response, not a new one');
  assert.equal(rawHeader(again, 'Idempotent-Replayed'), 'true');
  const count = await ctx.store.db
    .selectFrom('contacts')
    .select('id')
    .where('account_id', '=', demo.account.id)
    .where('number', '=', '14155550142')
    .execute();
  assert.equal(count.length, 1);
});

storeTest('contacts/import (a streamed CSV body): replay, another file gets 409, nothing imported twice', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const csv = 'Number,FirstName\n+14155550100,Ann\n+14155550101,Bob\n';
  const upload = (payload: string, key = 'import-1') =>
    ctx.app.inject({
      method: 'POST',
      url: `/v1/contacts/import?access_token=${demo.token}`,
      headers: { 'content-type': 'text/csv', 'idempotency-key': key },
      payload,
    });
  const first = await upload(csv);
  assert.equal(first.statusCode, 200, first.body);
  assert.deepEqual(JSON.parse(first.body), { Created: 2, Updated: 0, Failed: 0, Errors: [] });
  const again = await upload(csv);
  assert.equal(again.statusCode, 200);
  assert.equal(again.headers['idempotent-replayed'], 'true');
  assert.equal(again.body, first.body, 'the first report, not "Updated: 2"');
  assertConflict(await upload(`${csv}+14155550102,Cy\n`), DIFFERENT);
  const rows = await keyRows(ctx);
  assert.equal(rows.length, 1);
  assert.equal(
    rows[0]!.fingerprint,
    requestFingerprint('POST', '/v1/contacts/import', '', csv),
    'the final fingerprint covers the whole body',
  );
  const other = await upload('Number\n+14155550103\n', 'import-2');
  assert.equal(other.statusCode, 200);
  assert.equal(JSON.parse(other.body).Created, 1);
});

storeTest('only a POST honours the header: the PUT of custom-contact-fields-entry/update ignores it', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const entry = demo.customFieldEntries[0]!;
  const update = (method: 'POST' | 'PUT', key: string, fvalue: string) =>
    ctx.app.inject({
      method,
      url: `/v1/custom-contact-fields-entry/update?access_token=${demo.token}&id=${entry.Id}`,
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      payload: JSON.stringify({ frfield: entry.CustomFieldId, frcontact: entry.PhoneNumberId, fvalue }),
    });
  const put = await update('PUT', '', 'by PUT');
  assert.equal(put.statusCode, 200, put.body);
  assert.equal((await update('PUT', 'same', 'PUT 1')).statusCode, 200);
  const put2 = await update('PUT', 'same', 'PUT 2');
  assert.equal(put2.statusCode, 200);
  assert.equal(put2.headers['idempotent-replayed'], undefined);
  assert.equal((await keyRows(ctx)).length, 0);
  assert.equal((await update('POST', '', 'x')).statusCode, 400);
  const post = await update('POST', 'post-1', 'by POST');
  assert.equal(post.statusCode, 200, post.body);
  const replay = await update('POST', 'post-1', 'by POST');
  assert.equal(replay.headers['idempotent-replayed'], 'true');
  assert.equal(replay.body, post.body);
});

storeTest('24 hours by the injected clock: a replay until the last second, then the key runs anew; expired rows purged', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  let clock = 1_000_000_000;
  let runs = 0;
  const app = fastify();
  t.after(() => app.close());
  collectRawBodies(app);
  app.decorateRequest('format', 'json');
  app.decorateRequest('accountId', 0);
  app.decorateRequest('queryParams', null as never);
  app.decorateRequest('rawQuery', '');
  app.addHook('onRequest', (request, _reply, done) => {
    request.accountId = demo.account.id;
    request.rawQuery = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
    request.queryParams = parseParams(request.rawQuery);
    done();
  });
  const op = defineOperation({
    id: 'test.run',
    path: '/v1/test/run',
    resource: 'contacts',
    methods: ['POST'],
    summary: 'counts its runs',
    success: 201,
    idempotent: true,
    handler: () => () => Promise.resolve({ Id: ++runs }),
  });
  const idempotency = createIdempotency(ctx.store, { now: () => clock });
  registerOperations(app, [op], { store: ctx.store, config: ctx.config, time: createTimeFormat('UTC') }, idempotency);
  const post = (key: string) =>
    app.inject({
      method: 'POST',
      url: '/v1/test/run',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      payload: '{}',
    });

  const first = await post('k');
  assert.equal(first.body, '{"Id":1}');
  const [row] = await keyRows(ctx);
  assert.deepEqual([Number(row!.created_at), Number(row!.expires_at)], [clock, clock + 86_400], 'times from the injected clock');
  clock += 86_399;
  const replay = await post('k');
  assert.equal(replay.headers['idempotent-replayed'], 'true');
  assert.equal(replay.body, '{"Id":1}');
  clock += 1;
  const anew = await post('k');
  assert.equal(anew.headers['idempotent-replayed'], undefined);
  assert.equal(anew.body, '{"Id":2}');

  // Purge (at most once a minute, by the same clock): key "old" expires, a later claim deletes it.
  await post('old');
  clock += 86_400 + 60;
  await post('new');
  const deadline = Date.now() + 20_000;
  while ((await keyRows(ctx)).some((r) => r.key === 'old') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(
    (await keyRows(ctx)).map((r) => r.key),
    ['new'],
  );
});
