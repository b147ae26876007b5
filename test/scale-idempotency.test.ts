/**
 * Idempotency-Key across instances (API.md §7: keys are kept in the database, so a replay
 * works through any instance; a concurrent duplicate gets the in-progress 409).
 *
 * - Two apps on one database, on both stores: on SQLite two apps (two connections) on the same
 *   file, on PostgreSQL two apps, two pools, on the same database.
 * - Two `msgsvc serve` processes over one PostgreSQL and one Redis (when Redis is reachable, as
 *   test/scale-instances.test.ts).
 *
 * Each covers a replay through the other instance (JSON and XML), a duplicate through the other
 * instance while the first still runs (409 in progress, then a replay), and a burst of duplicates
 * spread over both instances (exactly one runs).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import type { DemoAccount } from '../src/domain/demo.ts';
import { buildTestApp, type TestApp } from './helpers/app.ts';
import { startServerProcess, type ServerProcess } from './helpers/net.ts';
import { XML_TYPE } from './helpers/operations.ts';
import { SCALE_OUT, seededPostgres, uniqueRatePrefix } from './helpers/scale.ts';
import { describeStores, REDIS_TEST_URL } from './helpers/stores.ts';

const RESERVE = '/v1/keyword/reserve';
const CREATE = '/v1/contacts/create';
const IN_PROGRESS = { name: 'Conflict', message: 'A request with this Idempotency-Key is still in progress.', code: 0, status: 409 };
const DIFFERENT = { name: 'Conflict', message: 'Idempotency-Key was used with a different request.', code: 0, status: 409 };

/** One response, whichever way it was sent: status, headers (lower-case names) and body text. */
interface Res {
  status: number;
  header(name: string): string | undefined;
  body: string;
}

/** An instance of the service, reached in-process (inject) or over HTTP. */
interface Instance {
  post(path: string, token: string, key: string, body: unknown, xml?: boolean): Promise<Res>;
}

function injected(ctx: TestApp): Instance {
  return {
    async post(path, token, key, body, xml = false) {
      const res = await ctx.app.inject({
        method: 'POST',
        url: `${path}?access_token=${encodeURIComponent(token)}`,
        headers: { accept: xml ? 'application/xml' : 'application/json', 'content-type': 'application/json', 'idempotency-key': key },
        payload: JSON.stringify(body),
      });
      return { status: res.statusCode, header: (name) => res.headers[name] as string | undefined, body: res.body };
    },
  };
}

function overHttp(server: ServerProcess): Instance {
  return {
    async post(path, token, key, body, xml = false) {
      const res = await fetch(`${server.url}${path}?access_token=${encodeURIComponent(token)}`, {
        method: 'POST',
        headers: { accept: xml ? 'application/xml' : 'application/json', 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify(body),
      });
      return { status: res.status, header: (name) => res.headers.get(name) ?? undefined, body: await res.text() };
    },
  };
}

function assertInProgress(res: Res): void {
  assert.equal(res.status, 409, res.body);
  assert.deepEqual(JSON.parse(res.body), IN_PROGRESS);
  assert.equal(res.header('idempotent-replayed'), undefined);
}

function assertReplayOf(res: Res, first: Res): void {
  assert.equal(res.status, first.status, res.body);
  assert.equal(res.header('idempotent-replayed'), 'true');
  assert.equal(res.body, first.body);
  assert.equal(res.header('location'), first.header('location'));
}

/** Reads and waits on the shared database beside the instances. */
interface Db {
  reservations(accountId: number, keyword: string): Promise<number>;
  contacts(accountId: number, number: string): Promise<number>;
  keyRows(accountId: number): Promise<number>;
  /** Waits until the account's row for `key` exists (the first request has claimed it). */
  waitForRow(accountId: number, key: string): Promise<void>;
  /**
   * Holds back every keyword_reservations write made through `holder` until the returned release
   * is called, while its Idempotency-Key statements go through (the first request claims its key,
   * then waits inside its work).
   */
  holdReservations(holder: TestApp | undefined): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

async function poll(found: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await found())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function postgresDb(url: string): Promise<Db> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const count = async (text: string, values: unknown[]) => (await client.query<{ n: number }>(text, values)).rows[0]!.n;
  return {
    reservations: (a, k) => count('select count(*)::int as n from keyword_reservations where account_id = $1 and keyword = $2', [a, k]),
    contacts: (a, n) => count('select count(*)::int as n from contacts where account_id = $1 and number = $2', [a, n]),
    keyRows: (a) => count('select count(*)::int as n from idempotency_keys where account_id = $1', [a]),
    waitForRow: (a, key) =>
      poll(
        async () => (await count('select count(*)::int as n from idempotency_keys where account_id = $1 and key = $2', [a, key])) === 1,
        `the row of ${key}`,
      ),
    async holdReservations() {
      // A table lock from another connection: inserts into keyword_reservations wait for it, from
      // any instance; idempotency_keys is untouched.
      const locker = new pg.Client({ connectionString: url });
      await locker.connect();
      await locker.query('begin');
      await locker.query('lock table keyword_reservations in exclusive mode');
      return async () => {
        await locker.query('commit');
        await locker.end();
      };
    },
    close: () => client.end(),
  };
}

function sqliteDb(path: string): Db {
  const reader = new SQLite(path, { readonly: true });
  const count = (text: string, ...values: unknown[]) => (reader.prepare(text).get(...values) as { n: number }).n;
  return {
    reservations: (a, k) =>
      Promise.resolve(count('select count(*) as n from keyword_reservations where account_id = ? and keyword = ?', a, k)),
    contacts: (a, n) => Promise.resolve(count('select count(*) as n from contacts where account_id = ? and number = ?', a, n)),
    keyRows: (a) => Promise.resolve(count('select count(*) as n from idempotency_keys where account_id = ?', a)),
    waitForRow: (a, key) =>
      poll(
        () => Promise.resolve(count('select count(*) as n from idempotency_keys where account_id = ? and key = ?', a, key) === 1),
        `the row of ${key}`,
      ),
    async holdReservations(holder) {
      // The holder's one connection, held through Kysely's lock: its transactions (the
      // reservation) wait, while its Idempotency-Key statements (prepared, run beside the lock)
      // go through. The other instance has its own connection and is not held.
      if (!holder) throw new Error('SQLite holds an instance');
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let held!: () => void;
      const holding = new Promise<void>((resolve) => (held = resolve));
      const done = holder.store.db.connection().execute(async () => {
        held();
        await gate;
      });
      await holding;
      return async () => {
        release();
        await done;
      };
    },
    close() {
      reader.close();
      return Promise.resolve();
    },
  };
}

/**
 * The shared scenarios, over two instances `a` and `b` of one database. `holder` is the app behind
 * `a` when it runs in this process (SQLite holds its connection).
 */
function scenarios(setup: () => { a: Instance; b: Instance; db: Db; demo: DemoAccount; holder?: TestApp }): void {
  const reservationBody = (keyword: string) => ({ Keyword: keyword, Number: String(setup().demo.numbers[0]!.Number) });

  test('a replay through the other instance: status, body, Location, in the format that request negotiated', async () => {
    const { a, b, db, demo } = setup();
    const contact = { Number: '+14155550177', FirstName: 'Across' };
    const first = await a.post(CREATE, demo.token, 'create-across', contact);
    assert.equal(first.status, 201, first.body);
    assert.ok(first.header('location')?.endsWith(`/v1/contacts/view?id=${(JSON.parse(first.body) as { Id: number }).Id}`));
    assertReplayOf(await b.post(CREATE, demo.token, 'create-across', contact), first);
    const asXml = await b.post(CREATE, demo.token, 'create-across', contact, true);
    assert.equal(asXml.status, 201);
    assert.equal(asXml.header('content-type'), XML_TYPE);
    assert.equal(asXml.header('idempotent-replayed'), 'true');
    assert.match(
      asXml.body,
      new RegExp(
        `^<\\?xml version="1.0" encoding="UTF-8"\\?>\\n<response><Id>${(JSON.parse(first.body) as { Id: number }).Id}</Id><Number>14155550177</Number>`,
      ),
    );
    const other = await b.post(CREATE, demo.token, 'create-across', { ...contact, FirstName: 'Changed' });
    assert.equal(other.status, 409);
    assert.deepEqual(JSON.parse(other.body), DIFFERENT);
    assert.equal(await db.contacts(demo.account.id, '14155550177'), 1, 'created once');

    // keyword/reserve, XML first: the JSON replay through the other instance has the JSON names.
    const reservedXml = await b.post(RESERVE, demo.token, 'reserve-across', reservationBody('ACROSS'), true);
    assert.equal(reservedXml.status, 201, reservedXml.body);
    const asJson = await a.post(RESERVE, demo.token, 'reserve-across', reservationBody('ACROSS'));
    assert.equal(asJson.status, 201);
    assert.equal(asJson.header('idempotent-replayed'), 'true');
    const [record] = JSON.parse(asJson.body) as [{ Keyword: string; Number: number }];
    assert.equal(record.Keyword, 'ACROSS');
    assert.equal(record.Number, Number(demo.numbers[0]!.Number));
    assert.equal(await db.reservations(demo.account.id, 'ACROSS'), 1);
  });

  test('a duplicate through the other instance while the first runs: 409 in progress, then a replay', async () => {
    const { a, b, db, demo, holder } = setup();
    const body = reservationBody('HELDUP');
    const release = await db.holdReservations(holder);
    let first: Promise<Res>;
    try {
      first = a.post(RESERVE, demo.token, 'held', body);
      await db.waitForRow(demo.account.id, 'held');
      assertInProgress(await b.post(RESERVE, demo.token, 'held', body));
      // Whatever the request: the first one may still do its work.
      assertInProgress(await b.post(RESERVE, demo.token, 'held', reservationBody('OTHERS')));
    } finally {
      await release();
    }
    const ran = await first;
    assert.equal(ran.status, 201, ran.body);
    assert.equal(ran.header('idempotent-replayed'), undefined);
    assertReplayOf(await b.post(RESERVE, demo.token, 'held', body), ran);
    assert.equal(await db.reservations(demo.account.id, 'HELDUP'), 1);
    assert.equal(await db.reservations(demo.account.id, 'OTHERS'), 0);
  });

  test('a burst of duplicates over both instances: exactly one runs; the others 409 in progress or a replay', async () => {
    const { a, b, db, demo } = setup();
    const rowsBefore = await db.keyRows(demo.account.id);
    const body = reservationBody('BURST');
    const all = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).post(RESERVE, demo.token, 'burst', body)));
    const ran = all.filter((r) => r.status === 201 && r.header('idempotent-replayed') === undefined);
    assert.equal(ran.length, 1, all.map((r) => `${r.status} ${r.body}`).join('\n'));
    for (const r of all) {
      if (r === ran[0]) continue;
      if (r.status === 409) assertInProgress(r);
      else assertReplayOf(r, ran[0]!);
    }
    assert.equal(await db.reservations(demo.account.id, 'BURST'), 1);
    assert.equal(await db.keyRows(demo.account.id), rowsBefore + 1);
    // Afterwards, through either instance: the replay.
    assertReplayOf(await a.post(RESERVE, demo.token, 'burst', body), ran[0]!);
    assertReplayOf(await b.post(RESERVE, demo.token, 'burst', body), ran[0]!);
  });
}

describeStores('two apps on one database', (kind) => {
  let appA: TestApp;
  let appB: TestApp;
  let db: Db;
  let demo: DemoAccount;

  before(async () => {
    appA = await buildTestApp();
    // The same dir: the same SQLite file, or (PostgreSQL) the same database, with its own connection.
    appB = await buildTestApp(undefined, {}, { dir: appA.dir });
    demo = await appA.seed();
    db =
      kind === 'postgres' && appA.config.database.kind === 'postgres' ? await postgresDb(appA.config.database.url) : sqliteDb(appA.dbPath);
  });
  after(async () => {
    await db?.close();
    await appB?.close();
    await appA?.close();
  });

  scenarios(() => ({ a: injected(appA), b: injected(appB), db, demo, holder: appA }));
});

describeStores('two msgsvc processes over one PostgreSQL and one Redis', SCALE_OUT, () => {
  let a: ServerProcess;
  let b: ServerProcess;
  let db: Db;
  let demo: DemoAccount;

  before(async () => {
    let databaseUrl: string;
    ({ databaseUrl, demo } = await seededPostgres());
    const env = { DATABASE_URL: databaseUrl, REDIS_URL: REDIS_TEST_URL, MSGSVC_RATE_KEY_PREFIX: uniqueRatePrefix(), LOG_LEVEL: 'warn' };
    [a, b] = await Promise.all([startServerProcess(env), startServerProcess(env)]);
    db = await postgresDb(databaseUrl);
  });
  after(async () => {
    await db?.close();
    await Promise.all([a?.stop(), b?.stop()]);
  });

  scenarios(() => ({ a: overHttp(a), b: overHttp(b), db, demo }));
});
