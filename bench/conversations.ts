/**
 * `sms/conversations` page 1 at 10,000 threads over 1,000,000 messages (the issue's target: p50 at
 * most 20 ms), on SQLite and PostgreSQL, and what the threads' trigger (migration 017) costs
 * `msgsvc generate`.
 *
 * For each store: a fresh database, migrated; `generateAccount` with 10,000 contacts and
 * 1,000,000 log messages (contact m mod 10,000: every contact a thread of 100 messages), timed;
 * one thread in ten gets three inbound messages and every fourth of those is marked read (so
 * Unread varies). Then msgsvc's app (buildApp, the production request path: auth, rate limit,
 * negotiation) listens on 127.0.0.1 and one client asks for page 1 (`per-page` default 100, JSON)
 * back to back for `--seconds`, after a warm-up; every answer is checked (200, 100 records,
 * X-Pagination-Total-Count 10000). Latency is measured at the client, per request, and the
 * process's CPU time per request beside it (server and client share the process: on a loaded
 * machine the CPU time is the figure that does not depend on the other processes).
 *
 * With `--compare-generate`, the generator also runs once more on a database whose trigger was
 * dropped, so the trigger's cost is the difference of the two times.
 *
 *   node --import tsx bench/conversations.ts [--threads 10000] [--messages 1000000] [--seconds 5]
 *     [--stores sqlite,postgres] [--pg-url postgres://…] [--compare-generate]
 *
 * The last line is `CONVERSATIONS {json}`.
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { benchDatabase, postgresReachable } from './lib/databases.ts';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { contactDigits, generateAccount } from '../src/domain/generate.ts';
import { migrateToLatest, openStore, type Store } from '../src/store/db.ts';
import { insertMessage } from '../src/store/repositories/message-log.ts';
import { markConversationRead } from '../src/store/repositories/conversations.ts';

const { values: flags } = parseArgs({
  options: {
    threads: { type: 'string', default: '10000' },
    messages: { type: 'string', default: '1000000' },
    seconds: { type: 'string', default: '5' },
    stores: { type: 'string', default: 'sqlite,postgres' },
    'pg-url': { type: 'string', default: process.env.MSGSVC_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    'compare-generate': { type: 'boolean', default: false },
  },
});
const THREADS = Number(flags.threads);
const MESSAGES = Number(flags.messages);
const SECONDS = Number(flags.seconds);
const stores = flags.stores.split(',').map((s) => s.trim()) as ('sqlite' | 'postgres')[];

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const round = (x: number, digits = 2) => +x.toFixed(digits);

/** Seconds `msgsvc generate` takes for the dataset on `store`. */
async function generate(store: Store) {
  const started = performance.now();
  const account = await generateAccount(store, { contacts: THREADS, messages: 0, logMessages: MESSAGES, name: 'Conversations bench' });
  return { account, seconds: (performance.now() - started) / 1000 };
}

async function run(kind: 'sqlite' | 'postgres') {
  const db = await benchDatabase(kind, 'conversations', flags['pg-url']);
  const store = openStore(db.config);
  try {
    await migrateToLatest(store);
    const { account, seconds: generateSeconds } = await generate(store);
    console.log(`${kind}: generated ${THREADS} contacts and ${MESSAGES} log messages in ${generateSeconds.toFixed(1)} s`);
    const now = Math.floor(Date.now() / 1000);
    for (let i = 0; i < THREADS; i += 10) {
      for (let k = 0; k < 3; k++) {
        await insertMessage(
          store.db,
          account.accountId,
          {
            direction: 2,
            number: '55155',
            mobilePhone: contactDigits(i),
            message: `reply ${k}`,
            typeId: 1,
            statusId: 7,
            segments: 1,
            credits: 0,
            batchId: null,
            scheduledMessageId: null,
            optOutExempt: 0,
            dueAt: null,
          },
          now,
        );
      }
      if (i % 40 === 0) await markConversationRead(store.db, account.accountId, contactDigits(i));
    }
    if (kind === 'postgres') await sql`analyze`.execute(store.db);

    const config = loadConfig({ DATABASE_URL: db.url, MSGSVC_DEMO: '0', LOG_LEVEL: 'silent', MSGSVC_RATE_LIMIT: '1000000000' });
    const app = buildApp(config, { store });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const url = `http://127.0.0.1:${port}/v1/sms/conversations?access_token=${encodeURIComponent(account.token)}`;
    const once = async () => {
      const t0 = performance.now();
      const res = await fetch(url);
      const body = (await res.json()) as unknown[];
      const ms = performance.now() - t0;
      if (res.status !== 200 || body.length !== 100 || res.headers.get('x-pagination-total-count') !== String(THREADS))
        throw new Error(`${kind}: answered ${res.status}, ${body.length} records, total ${res.headers.get('x-pagination-total-count')}`);
      return ms;
    };
    const warmUntil = performance.now() + 1000;
    while (performance.now() < warmUntil) await once();
    const times: number[] = [];
    const cpu0 = process.cpuUsage();
    const until = performance.now() + SECONDS * 1000;
    while (performance.now() < until) times.push(await once());
    const cpu = process.cpuUsage(cpu0);
    await app.close();
    times.sort((a, b) => a - b);

    let generateWithoutTriggerSeconds: number | undefined;
    if (flags['compare-generate']) {
      const bare = await benchDatabase(kind, 'conversations_bare', flags['pg-url']);
      const bareStore = openStore(bare.config);
      try {
        await migrateToLatest(bareStore);
        await sql`drop trigger messages_conversation_insert${sql.raw(kind === 'postgres' ? ' on messages' : '')}`.execute(bareStore.db);
        generateWithoutTriggerSeconds = (await generate(bareStore)).seconds;
      } finally {
        await bareStore.close();
        await bare.drop();
      }
    }
    const result = {
      store: kind,
      threads: THREADS,
      messages: MESSAGES + Math.ceil(THREADS / 10) * 3,
      requests: times.length,
      p50Ms: round(quantile(times, 0.5)),
      p90Ms: round(quantile(times, 0.9)),
      p99Ms: round(quantile(times, 0.99)),
      // CPU of this process (server and client) per request: what the latency is when a CPU is free.
      cpuMsPerRequest: round((cpu.user + cpu.system) / 1000 / times.length),
      generateSeconds: round(generateSeconds, 1),
      ...(generateWithoutTriggerSeconds !== undefined ? { generateWithoutTriggerSeconds: round(generateWithoutTriggerSeconds, 1) } : {}),
      loadAverage: round(loadavg()[0]!),
    };
    console.log(
      `${kind}: page 1 of ${THREADS} threads: p50 ${result.p50Ms} ms, p90 ${result.p90Ms} ms, p99 ${result.p99Ms} ms over ${times.length} requests, CPU ${result.cpuMsPerRequest} ms per request (load ${result.loadAverage})` +
        (generateWithoutTriggerSeconds !== undefined
          ? `; generate ${result.generateSeconds} s (without the trigger ${result.generateWithoutTriggerSeconds} s)`
          : ''),
    );
    return result;
  } finally {
    await store.close();
    await db.drop();
  }
}

const results = [];
const skipped: string[] = [];
for (const kind of stores) {
  if (kind === 'postgres' && !(await postgresReachable(flags['pg-url']))) {
    skipped.push(`postgres: ${flags['pg-url']} does not answer`);
    console.log(`postgres: skipped (${flags['pg-url']} does not answer)`);
    continue;
  }
  results.push(await run(kind));
}
console.log(`CONVERSATIONS ${JSON.stringify({ targetP50Ms: 20, results, skipped })}`);
