/**
 * Redirects per second of `GET /l/{code}` (docs/API.md §14.4.3), on SQLite and PostgreSQL.
 *
 * For each store: a fresh database, migrated; one account, one queued message and `--links`
 * tracked links on it (default 1,000, random 7-character codes, stored as the queueing
 * transaction stores them). `msgsvc serve` (bin/msgsvc.js, MSGSVC_DISPATCHER=0, in its own
 * process) listens on 127.0.0.1; autocannon (`--connections`, default 50) follows the links in
 * turn for `--seconds`, after a 2-second warm-up. Every click is a write transaction (the click
 * row, the link's counters, the event check), committed before the 302 is answered. Two phases:
 * `plain` (the account has no webhook) and `webhook` (one webhook takes `link.clicked`, so every
 * click also writes an outbox row; nothing is delivered: no deliverer runs). Before each phase
 * `GET /healthz` on the same server for as long gives this machine's HTTP ceiling at that moment,
 * and the redirects are reported as a share of it too. Checked: every answer
 * is 302, and the links' clicks in the database add up to the 302s counted (give or take the
 * requests in flight when a run stops, at most one per connection).
 *
 *   node --import tsx bench/links.ts [--seconds 10] [--connections 50] [--links 1000]
 *     [--stores sqlite,postgres] [--pg-url postgres://…]
 *
 * The last line is `LINKS {json}`.
 */
import autocannon, { type Request } from 'autocannon';
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { benchDatabase, postgresReachable } from './lib/databases.ts';
import { freePort, startServer, stopAll } from './lib/procs.ts';
import { createAccount } from '../src/domain/accounts.ts';
import { storeLinks } from '../src/domain/personalise.ts';
import { createWebhook } from '../src/domain/webhooks.ts';
import { systemClock } from '../src/lib/time.ts';
import { inTransaction, migrateToLatest, openStore } from '../src/store/db.ts';
import { insertMessage } from '../src/store/repositories/message-log.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: flags } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    links: { type: 'string', default: '1000' },
    stores: { type: 'string', default: 'sqlite,postgres' },
    'pg-url': { type: 'string', default: process.env.MSGSVC_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
  },
});
const SECONDS = Number(flags.seconds);
const CONNECTIONS = Number(flags.connections);
const LINKS = Number(flags.links);
const stores = flags.stores.split(',').map((s) => s.trim()) as ('sqlite' | 'postgres')[];
const round = (x: number, digits = 2) => +x.toFixed(digits);

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const newCode = () => [...randomBytes(7)].map((b) => ALPHABET[b & 63]).join('');

export interface LinksPhaseResult {
  store: 'sqlite' | 'postgres';
  phase: 'plain' | 'webhook';
  redirectsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  redirects: number;
  unexpected: number;
  errors: number;
  serverCpuPercent: number;
  loadBefore: number;
  /** GET /healthz per second on the same server just before (the HTTP ceiling of this machine now). */
  healthzPerSecond: number;
  /** redirectsPerSecond / healthzPerSecond. */
  ofHealthz: number;
}
export interface LinksBenchResult {
  seconds: number;
  connections: number;
  links: number;
  results: LinksPhaseResult[];
  skipped: string[];
}

/** One autocannon run over the codes in turn: 302s counted, latency percentiles. */
function load(url: string, codes: readonly string[], seconds: number, expected = 302) {
  let next = 0;
  const request: Request = {
    method: 'GET',
    setupRequest: (req) => ({ ...req, path: codes.length === 0 ? '/healthz' : `/l/${codes[next++ % codes.length]}` }),
  };
  return new Promise<{ ok: number; unexpected: number; errors: number; duration: number; p50: number; p99: number }>(
    (resolvePromise, reject) => {
      let ok = 0;
      let unexpected = 0;
      const instance = autocannon({ url, connections: CONNECTIONS, duration: seconds, requests: [request], timeout: 10 }, (err, result) => {
        if (err) return reject(err);
        resolvePromise({
          ok,
          unexpected,
          errors: result.errors + result.timeouts,
          duration: result.duration,
          p50: result.latency.p50,
          p99: result.latency.p99,
        });
      });
      instance.on('response', (_client: unknown, status: number) => {
        if (status === expected) ok++;
        else unexpected++;
      });
    },
  );
}

async function run(kind: 'sqlite' | 'postgres'): Promise<LinksPhaseResult[]> {
  const db = await benchDatabase(kind, 'links', flags['pg-url']);
  const store = openStore(db.config);
  const out: LinksPhaseResult[] = [];
  try {
    await migrateToLatest(store);
    const accountId = await createAccount(store, 'Links bench');
    const now = Math.floor(Date.now() / 1000);
    const codes = Array.from({ length: LINKS }, newCode);
    await inTransaction(store, async (tx) => {
      const m = await insertMessage(
        tx,
        accountId,
        {
          direction: 1,
          number: '55155',
          mobilePhone: '15557654321',
          message: 'links',
          typeId: 1,
          statusId: 1,
          segments: 1,
          credits: 1,
          batchId: null,
          scheduledMessageId: null,
          optOutExempt: 0,
          dueAt: null,
        },
        now,
      );
      await storeLinks(
        tx,
        accountId,
        m.id,
        codes.map((code, i) => ({ code, url: `https://example.com/page/${i}?utm_source=sms` })),
        now,
      );
    });
    const port = await freePort();
    const server = await startServer({
      name: `links-${kind}`,
      nodeArgs: [],
      args: [join(ROOT, 'bin/msgsvc.js'), 'serve'],
      env: { DATABASE_URL: db.url, PORT: String(port), HOST: '127.0.0.1', MSGSVC_DISPATCHER: '0', MSGSVC_DEMO: '0', LOG_LEVEL: 'warn' },
      port,
      readyPath: '/healthz',
      // From src/ through tsx on a busy machine, start-up can take a while.
      readyTimeoutMs: 120_000,
    });
    try {
      for (const phase of ['plain', 'webhook'] as const) {
        if (phase === 'webhook') {
          await createWebhook({ store, clock: systemClock, allowPrivate: true }, accountId, {
            Url: 'http://127.0.0.1:9/hook',
            Events: ['link.clicked'],
          });
        }
        await load(server.url, codes, 2);
        const warm = await totalClicks();
        const ceiling = await load(server.url, [], SECONDS, 200);
        const healthzPerSecond = Math.round(ceiling.ok / ceiling.duration);
        const loadBefore = loadavg()[0]!;
        const cpu0 = server.cpuMicros();
        const r = await load(server.url, codes, SECONDS);
        const cpu = server.cpuMicros() - cpu0;
        const counted = (await totalClicks()) - warm;
        // Requests in flight when autocannon stops (the warm-up's and this run's, at most one per
        // connection each) are served and counted without their answer being read.
        if (r.unexpected !== 0 || counted < r.ok || counted > r.ok + 2 * CONNECTIONS)
          throw new Error(`${kind} ${phase}: ${r.unexpected} answers other than 302; ${counted} clicks stored for ${r.ok} redirects`);
        const result: LinksPhaseResult = {
          store: kind,
          phase,
          redirectsPerSecond: Math.round(r.ok / r.duration),
          p50Ms: r.p50,
          p99Ms: r.p99,
          redirects: r.ok,
          unexpected: r.unexpected,
          errors: r.errors,
          serverCpuPercent: round((cpu / 1e6 / r.duration) * 100, 1),
          loadBefore: round(loadBefore),
          healthzPerSecond,
          ofHealthz: round(r.ok / r.duration / Math.max(1, healthzPerSecond)),
        };
        console.log(
          `${kind} ${phase}: ${result.redirectsPerSecond} redirects/s (p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, ${result.redirects} in ${round(r.duration)} s, server CPU ${result.serverCpuPercent} %, load ${result.loadBefore}; ${result.ofHealthz} × GET /healthz at ${healthzPerSecond}/s)`,
        );
        out.push(result);
      }
    } finally {
      await stopAll();
    }
    return out;
  } finally {
    await store.close();
    await db.drop();
  }

  async function totalClicks(): Promise<number> {
    const row = await store.db
      .selectFrom('message_links')
      .select((eb) => eb.fn.sum<number>('clicks').as('n'))
      .where('account_id', '>', 0)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }
}

const results: LinksPhaseResult[] = [];
const skipped: string[] = [];
for (const kind of stores) {
  if (kind === 'postgres' && !(await postgresReachable(flags['pg-url']))) {
    skipped.push(`postgres: ${flags['pg-url']} does not answer`);
    console.log(`postgres: skipped (${flags['pg-url']} does not answer)`);
    continue;
  }
  results.push(...(await run(kind)));
}
console.log(
  `LINKS ${JSON.stringify({ seconds: SECONDS, connections: CONNECTIONS, links: LINKS, results, skipped } satisfies LinksBenchResult)}`,
);
