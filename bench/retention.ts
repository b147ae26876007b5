/**
 * Retention under load (MSGSVC_RETENTION_DAYS; src/domain/retention.ts, docs/guides/backup.md
 * "Retention"), on SQLite and PostgreSQL, against a `msgsvc serve` process run as production runs
 * it (`node --no-memory-reducer` and the flags of `npm start`; one process: `MSGSVC_WORKERS=1`,
 * so on SQLite the purge shares the event loop with the requests, the worst case; the dispatcher
 * on, with the sandbox carrier).
 *
 * 1. Seeding, set-based (a few INSERT … SELECT statements): one account with `--old` messages
 *    (default 1,000,000) created 60 to 31 days ago (one in ten inbound, the rest Delivered but for
 *    one in fifty Failed and one in fifty Undelivered) to 10,000 recipients, and a tenth as many
 *    created in the last two days; a tracked link on one message in a hundred with two clicks each;
 *    a Delivered webhook delivery for one message in ten (the webhook itself inactive); an inbound
 *    once-key for each inbound message; a credit ledger entry for one message in ten, and 1,000
 *    contacts with two consent ledger entries each.
 * 2. Baseline: `msgsvc serve` with MSGSVC_RETENTION_DAYS=0; sms/send at `--rate` per second
 *    (default 200, open loop, over `--connections` keep-alive connections, default 8: the latency of
 *    each counted from its scheduled time) for `--baseline-seconds` (default 20).
 * 3. The purge: the same server with MSGSVC_RETENTION_DAYS=30, which purges at start; the same
 *    sends go on, in runs of 2 s, until the server logs `retention purge done`, and for 3 runs
 *    more (the purge's end: its last checkpoint). Those runs are "during".
 * 4. Checks: no message older than the cutoff is left but none was Queued; every credit ledger and
 *    consent ledger row that existed before is there unchanged (count, sum of amounts and balances,
 *    of ids).
 *
 * Reported: send p50/p99/max without and during the purge, the p99 added, the purge's seconds,
 * rows/s (every kind) and messages/s, its longest step (statement or transaction: the longest a
 * lock was held), and whether the ledgers are untouched. Target: p99 added ≤ 100 ms, ledgers
 * untouched.
 *
 *   node --import tsx bench/retention.ts [--old 1000000] [--rate 200] [--connections 8]
 *     [--baseline-seconds 20] [--stores sqlite,postgres] [--pg-url URL] [--app DIR]
 *   npm run bench -- --only retention --no-docs          (the same, inside a bench run's result file)
 *
 * The last line is `RETENTION {json}`. Exit code 1 when a target is missed, unless
 * MSGSVC_BENCH_REPORT_ONLY is set.
 */
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sql, type RawBuilder } from 'kysely';
import { benchDatabase, postgresReachable } from './lib/databases.ts';
import type { Request } from 'autocannon';
import { pacedLoad, poolPacedRuns, type PacedRun } from './lib/paced.ts';
import { freePort, machine, msgsvcStartFlags, startServer, stopAll, type Machine } from './lib/procs.ts';
import { issueToken } from '../src/domain/accounts.ts';
import { inTransaction, migrateToLatest, openStore, type Store } from '../src/store/db.ts';
import { changeCredits, createAccount } from '../src/store/repositories/accounts.ts';
import { insertNumber } from '../src/store/repositories/numbers.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: flags } = parseArgs({
  options: {
    old: { type: 'string', default: '1000000' },
    rate: { type: 'string', default: '200' },
    connections: { type: 'string', default: '8' },
    'baseline-seconds': { type: 'string', default: '20' },
    stores: { type: 'string', default: 'sqlite,postgres' },
    'pg-url': { type: 'string', default: process.env.MSGSVC_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    app: { type: 'string' },
  },
});
const whole = (name: keyof typeof flags, min: number): number => {
  const n = Number(flags[name]);
  if (!Number.isSafeInteger(n) || n < min) throw new Error(`--${name} must be a whole number ≥ ${min}, not ${String(flags[name])}`);
  return n;
};
const OLD = whole('old', 100);
const RATE = whole('rate', 1);
const CONNECTIONS = whole('connections', 1);
const BASELINE_SECONDS = whole('baseline-seconds', 2);
const stores = flags.stores.split(',').map((s): 'sqlite' | 'postgres' => {
  const store = s.trim();
  if (store !== 'sqlite' && store !== 'postgres') throw new Error(`--stores: sqlite and/or postgres, not ${store}`);
  return store;
});
const APP = flags.app ? resolve(flags.app) : ROOT;
const DAYS = 30;
const DAY = 86_400;
const TARGET_ADDED_P99_MS = 100;
const RUN_SECONDS = 2;
/** Send runs after the purge ended, counted with those during it. */
const AFTER_RUNS = 3;
const NUMBER = '15550001000';
// The largest id a PostgreSQL serial column holds: "every row" as an id bound.
const INT_MAX = 2_147_483_647;
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

interface Latency {
  sent: number;
  /** Each 2-second run's p99, in order. */
  runP99Ms: number[];
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  unexpected: number;
  errors: number;
}

export interface RetentionBenchResult {
  date: string;
  machine: Machine;
  old: number;
  rate: number;
  connections: number;
  results: {
    store: 'sqlite' | 'postgres';
    seedSeconds: number;
    /** What the purge deleted, as the server logged it. */
    deleted: { messages: number; links: number; clicks: number; conversations: number; deliveries: number; inboundKeys: number };
    purgeSeconds: number;
    rowsPerSecond: number;
    messagesPerSecond: number;
    /** The longest statement or transaction of the purge, in ms. */
    maxStepMs: number;
    baseline: Latency;
    during: Latency;
    /** during.p99Ms − baseline.p99Ms. */
    addedP99Ms: number;
    oldLeft: number;
    ledgersUntouched: boolean;
    problems: string[];
  }[];
  skipped: string[];
  loadAverage: { start: number[]; end: number[] };
}

/** Seeds the account and its data set-based (see the module's comment); returns the account's token. */
async function seed(store: Store, now: number): Promise<string> {
  const pg = store.dialect === 'postgres';
  const accountId = await inTransaction(store, async (tx) => {
    const id = await createAccount(tx, 'Retention bench', now);
    await changeCredits(tx, id, 1_000_000_000, 'set', now, { type: 'topup', note: 'bench' });
    await insertNumber(tx, id, NUMBER, 0, null, now);
    return id;
  });
  const { token } = await issueToken(store, accountId, 'bench');
  const oldStart = now - 60 * DAY;
  const oldSpan = 29 * DAY;
  const fresh = Math.max(1, Math.floor(OLD / 10));
  // Seven digits, zero-padded (PostgreSQL's substr takes no negative start).
  const pad7 = (text: RawBuilder<string>) => (pg ? sql<string>`lpad(${text}, 7, '0')` : sql<string>`substr('0000000' || ${text}, -7)`);
  const series = (count: number) =>
    pg
      ? sql`select i from generate_series(1, ${count}) as s(i)`
      : sql`select i from (with recursive s(i) as (select 1 union all select i + 1 from s where i < ${count}) select i from s)`;
  const messages = (count: number, from: number, span: number) => sql`
    insert into messages (account_id, direction, number, mobile_phone, message, type_id, status_id, segments, credits,
      opt_out_exempt, error_code, created_at, sent_at, delivered_at)
    select ${accountId},
      case when i % 10 = 0 then 2 else 1 end,
      ${NUMBER},
      '1555' || ${pad7(sql`cast(i % 10000 as text)`)},
      'Your order ' || cast(i as text) || ' has shipped. Track it at https://example.com/t/' || cast(i as text) || ' Reply STOP to opt out.',
      1,
      case when i % 10 = 0 then 7 when i % 50 = 1 then 5 when i % 50 = 3 then 4 else 3 end,
      1,
      case when i % 10 = 0 then 0 else 1 end,
      0,
      case when i % 50 = 1 then 'ESME_RINVDSTADR' when i % 50 = 3 then 'UNDELIV:001' else '' end,
      ${from} + cast(i as bigint) * ${span} / ${count},
      case when i % 10 = 0 or i % 50 = 1 then null else ${from} + cast(i as bigint) * ${span} / ${count} + 1 end,
      case when i % 10 = 0 or i % 50 = 1 or i % 50 = 3 then null else ${from} + cast(i as bigint) * ${span} / ${count} + 4 end
    from (${series(count)}) as n`;
  const code = pad7(sql`cast(id as text)`);
  await inTransaction(store, async (tx) => {
    await messages(OLD, oldStart, oldSpan).execute(tx);
    await messages(fresh, now - 2 * DAY, 2 * DAY - 60).execute(tx);
    await sql`insert into message_links (account_id, message_id, code, url, created_at)
      select account_id, id, ${code}, 'https://example.com/t/' || cast(id as text), created_at from messages where id % 100 = 0`.execute(
      tx,
    );
    for (const after of [60, 120]) {
      await sql`insert into link_clicks (account_id, link_id, clicked_at) select account_id, id, created_at + ${after} from message_links`.execute(
        tx,
      );
    }
    const hook = await tx
      .insertInto('webhooks')
      .values({
        account_id: accountId,
        url: 'https://example.com/hook',
        events: '["message.delivered"]',
        active: 0,
        secret: 'whsec_bench',
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await sql`insert into webhook_deliveries (account_id, webhook_id, event, msg_id, payload, status, attempts, last_status_code, last_error,
        created_at, updated_at, due_at, lease_token)
      select account_id, ${hook.id}, 'message.delivered', 'msg_bench_' || cast(id as text), '{"v":1,"type":"message.delivered"}', 'Delivered', 1, 200, '',
        created_at, created_at, null, null
      from messages where id % 10 = 0 order by id`.execute(tx);
    await sql`insert into carrier_inbound (carrier, carrier_message_id, received_at)
      select 'tw', 'SM' || cast(id as text), created_at * 1000 from messages where direction = 2`.execute(tx);
    await sql`insert into credit_ledger (account_id, created_at, type, amount, balance, reference, note)
      select account_id, created_at, 'spend', -1, 0, 'message:' || cast(id as text), '' from messages where id % 10 = 1 order by id`.execute(
      tx,
    );
    await sql`insert into contacts (account_id, number, number_e164, opted_out, first_name, last_name, birthday, email, zip, city, created_at, updated_at)
      select ${accountId}, '1555' || ${pad7(sql`cast(i as text)`)}, '+1555' || ${pad7(sql`cast(i as text)`)}, 0, 'Bench', '', null, '', '', '', ${oldStart}, ${oldStart}
      from (${series(1000)}) as n`.execute(tx);
    for (const [optedOut, source, at] of [
      [1, 'keyword', oldStart + 10],
      [0, 'api', oldStart + 20],
    ] as const) {
      await sql`insert into contact_consent (account_id, contact_id, opted_out, source, detail, carrier, created_at)
        select account_id, id, ${optedOut}, ${source}, ${source === 'keyword' ? 'STOP' : 'contacts/update'}, '', ${at} from contacts where account_id = ${accountId}`.execute(
        tx,
      );
    }
  });
  if (pg) await sql`analyze`.execute(store.db);
  return token;
}

/** What must not change: every ledger row that exists now (count, sums of ids, amounts and balances), by id ≤ today's last. */
async function ledgerPrint(store: Store, upTo?: { credit: number; consent: number }) {
  const credit = (
    await sql<{ n: number; ids: number; amounts: number; balances: number; last: number }>`
      select count(*) as n, coalesce(sum(id), 0) as ids, coalesce(sum(amount), 0) as amounts, coalesce(sum(balance), 0) as balances,
        coalesce(max(id), 0) as last from credit_ledger where id <= ${upTo?.credit ?? INT_MAX}`.execute(store.db)
  ).rows[0]!;
  const consent = (
    await sql<{ n: number; ids: number; outs: number; last: number }>`
      select count(*) as n, coalesce(sum(id), 0) as ids, coalesce(sum(opted_out), 0) as outs, coalesce(max(id), 0) as last
      from contact_consent where id <= ${upTo?.consent ?? INT_MAX}`.execute(store.db)
  ).rows[0]!;
  const print = {
    credit: [credit.n, credit.ids, credit.amounts, credit.balances].map(Number),
    consent: [consent.n, consent.ids, consent.outs].map(Number),
  };
  return { print, upTo: { credit: Number(credit.last), consent: Number(consent.last) } };
}

/** Sends at RATE in runs of RUN_SECONDS until `until()` holds (checked between runs) or `maxRuns` ran. */
async function sendRuns(url: string, token: string, until: () => boolean, maxRuns: number): Promise<PacedRun[]> {
  let n = 0;
  const request = {
    method: 'POST' as const,
    path: `/v1/sms/send?access_token=${encodeURIComponent(token)}`,
    headers: { 'content-type': 'application/json' },
    setupRequest: (req: Request) => ({
      ...req,
      body: JSON.stringify({ MobilePhone: `+1555${String(20000 + (n++ % 10000)).padStart(7, '0')}`, Message: 'Retention bench send' }),
    }),
  };
  const runs: PacedRun[] = [];
  while (runs.length < maxRuns && !until()) {
    runs.push(await pacedLoad(url, request, { rate: RATE, seconds: RUN_SECONDS, connections: CONNECTIONS, expected: 201 }));
  }
  return runs;
}

function latency(runs: PacedRun[]): Latency {
  const pooled = poolPacedRuns(runs);
  return {
    sent: pooled.sent,
    runP99Ms: pooled.roundP99Ms,
    p50Ms: pooled.p50Ms,
    p99Ms: pooled.p99Ms,
    maxMs: pooled.maxMs,
    unexpected: pooled.unexpected,
    errors: pooled.errors,
  };
}

async function serve(databaseUrl: string, retentionDays: number, logFile: string) {
  const port = await freePort();
  const fd = openSync(logFile, 'w');
  try {
    return await startServer({
      name: `retention-${retentionDays}`,
      nodeArgs: ['--no-memory-reducer', ...msgsvcStartFlags(ROOT).filter((f) => f !== '--no-memory-reducer')],
      args: [join(APP, 'bin/msgsvc.js'), 'serve'],
      env: {
        DATABASE_URL: databaseUrl,
        PORT: String(port),
        HOST: '127.0.0.1',
        MSGSVC_WORKERS: '1',
        MSGSVC_DEMO: '0',
        MSGSVC_RATE_LIMIT: '1000000000',
        MSGSVC_RETENTION_DAYS: String(retentionDays),
        LOG_LEVEL: 'info',
      },
      port,
      readyPath: '/healthz',
      readyTimeoutMs: 120_000,
      stdout: fd,
    });
  } finally {
    closeSync(fd);
  }
}

/** The `retention` object of the server's `retention purge done` log line, once it is written. */
function purgeDone(logFile: string): Record<string, number> | undefined {
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    if (!line.includes('retention purge done')) continue;
    return (JSON.parse(line) as { retention: Record<string, number> }).retention;
  }
  return undefined;
}

const started = Date.now();
// The servers' logs (the purge reports its end there).
const logDir = mkdtempSync(join(tmpdir(), 'msgsvc-bench-retention-'));
const loadStart = loadavg().map((x) => round(x));
const result: RetentionBenchResult = {
  date: new Date().toISOString(),
  machine: machine(),
  old: OLD,
  rate: RATE,
  connections: CONNECTIONS,
  results: [],
  skipped: [],
  loadAverage: { start: loadStart, end: [] },
};
try {
  for (const kind of stores) {
    if (kind === 'postgres' && !(await postgresReachable(flags['pg-url']))) {
      result.skipped.push(`postgres: not reachable at ${flags['pg-url']}`);
      continue;
    }
    const db = await benchDatabase(kind, 'retention', flags['pg-url']);
    try {
      const store = openStore(db.config);
      const now = Math.floor(Date.now() / 1000);
      let token: string;
      let seedSeconds: number;
      let before: Awaited<ReturnType<typeof ledgerPrint>>;
      try {
        await migrateToLatest(store);
        const t0 = performance.now();
        token = await seed(store, now);
        seedSeconds = (performance.now() - t0) / 1000;
        before = await ledgerPrint(store);
      } finally {
        await store.close();
      }
      console.log(`${kind}: seeded ${OLD.toLocaleString('en-US')} old messages (and their rows) in ${seedSeconds.toFixed(1)} s`);

      const baselineLog = join(logDir, `retention-baseline-${process.pid}.log`);
      const baselineServer = await serve(db.url, 0, baselineLog);
      let baselineRuns: PacedRun[];
      try {
        baselineRuns = await sendRuns(baselineServer.url, token, () => false, Math.ceil(BASELINE_SECONDS / RUN_SECONDS));
      } finally {
        await baselineServer.stop();
      }
      const baseline = latency(baselineRuns);
      console.log(
        `${kind}: baseline sms/send at ${RATE}/s: p50 ${baseline.p50Ms} ms, p99 ${baseline.p99Ms} ms, max ${baseline.maxMs} ms (runs' p99 ${baseline.runP99Ms.join(', ')})`,
      );

      const purgeLog = join(logDir, `retention-purge-${process.pid}.log`);
      const purgeServer = await serve(db.url, DAYS, purgeLog);
      let duringRuns: PacedRun[];
      let afterRuns: PacedRun[];
      let done: Record<string, number> | undefined;
      try {
        duringRuns = await sendRuns(purgeServer.url, token, () => (done = purgeDone(purgeLog)) !== undefined, 1800 / RUN_SECONDS);
        done ??= purgeDone(purgeLog);
        // The purge's end (the WAL it leaves, the automatic checkpoint back on SQLite) is part of it.
        afterRuns = await sendRuns(purgeServer.url, token, () => false, AFTER_RUNS);
      } finally {
        await purgeServer.stop();
      }
      if (!done) throw new Error(`${kind}: the purge did not finish within 30 minutes`);
      const during = latency([...duringRuns, ...afterRuns]);

      const check = openStore(db.config);
      const problems: string[] = [];
      let oldLeft: number;
      let ledgersUntouched: boolean;
      try {
        const cutoff = now - DAYS * DAY;
        oldLeft = Number(
          (await sql<{ n: number }>`select count(*) as n from messages where created_at < ${cutoff} and status_id <> 1`.execute(check.db))
            .rows[0]!.n,
        );
        const after = await ledgerPrint(check, before.upTo);
        ledgersUntouched = JSON.stringify(after.print) === JSON.stringify(before.print);
      } finally {
        await check.close();
      }
      const deleted = {
        messages: done.messages ?? 0,
        links: done.links ?? 0,
        clicks: done.clicks ?? 0,
        conversations: done.conversations ?? 0,
        deliveries: done.deliveries ?? 0,
        inboundKeys: done.inboundKeys ?? 0,
      };
      const rows = Object.values(deleted).reduce((a, b) => a + b, 0);
      const purgeSeconds = done.seconds ?? NaN;
      const addedP99Ms = round(during.p99Ms - baseline.p99Ms);
      if (deleted.messages !== OLD) problems.push(`deleted ${deleted.messages} messages, seeded ${OLD} old ones`);
      if (oldLeft !== 0) problems.push(`${oldLeft} old messages left`);
      if (!ledgersUntouched) problems.push('a ledger changed');
      if (addedP99Ms > TARGET_ADDED_P99_MS) problems.push(`p99 added ${addedP99Ms} ms > ${TARGET_ADDED_P99_MS} ms`);
      if (during.unexpected + during.errors + baseline.unexpected + baseline.errors > 0) problems.push('a send was not answered 201');
      if (duringRuns.length < 3) problems.push(`only ${duringRuns.length} send runs during the purge`);
      const entry = {
        store: kind,
        seedSeconds: round(seedSeconds, 1),
        deleted,
        purgeSeconds: round(purgeSeconds),
        rowsPerSecond: Math.round(rows / purgeSeconds),
        messagesPerSecond: Math.round(deleted.messages / purgeSeconds),
        maxStepMs: round(done.maxStepMs ?? NaN),
        baseline,
        during,
        addedP99Ms,
        oldLeft,
        ledgersUntouched,
        problems,
      };
      result.results.push(entry);
      console.log(
        `${kind}: purge of ${deleted.messages.toLocaleString('en-US')} messages (${rows.toLocaleString('en-US')} rows) in ${entry.purgeSeconds} s: ` +
          `${entry.rowsPerSecond} rows/s, ${entry.messagesPerSecond} messages/s, longest step ${entry.maxStepMs} ms; ` +
          `sms/send during it p50 ${during.p50Ms} ms, p99 ${during.p99Ms} ms, max ${during.maxMs} ms (p99 added ${addedP99Ms} ms; runs' p99 ${during.runP99Ms.join(', ')}); ` +
          `ledgers ${ledgersUntouched ? 'untouched' : 'CHANGED'}${problems.length > 0 ? `; PROBLEMS: ${problems.join('; ')}` : ''}`,
      );
    } finally {
      await db.drop();
    }
  }
} finally {
  await stopAll();
  rmSync(logDir, { recursive: true, force: true });
}
result.loadAverage.end = loadavg().map((x) => round(x));
console.log(`done in ${Math.round((Date.now() - started) / 1000)} s`);
console.log(`RETENTION ${JSON.stringify(result)}`);
if (!process.env.MSGSVC_BENCH_REPORT_ONLY && result.results.some((r) => r.problems.length > 0)) process.exitCode = 1;
