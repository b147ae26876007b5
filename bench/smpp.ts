/**
 * SMPP throughput (issue 12, API.md §11.4): messages/s from queued to submit_sm_resp, through
 * the real dispatcher and the SMPP carrier, against the Perl SMSC (test/smsc/fake-smsc.pl, Net::SMPP)
 * on loopback, with a window of 10 and then 50. The SMSC's own CPU is shown beside it (one Perl
 * process, one core at most: it may be the limit), and msgsvc's.
 *
 *   node --import tsx bench/smpp.ts [MESSAGES=10000] [WINDOWS=10,50]
 *
 * Each run: a fresh SQLite store with one account and MESSAGES queued one-segment SMS; the SMSC
 * answers every submit_sm at once and sends no receipts (this measures the submit path; receipts
 * are a separate flow); the rate limit is set far above (100,000/s). Measured from the dispatcher's
 * start to the last submit_sm_resp (the carrier's ESME_ROK counter), and to the last Sent committed.
 * Results are printed and written to bench/results/smpp-<time>.json (not under
 * MSGSVC_BENCH_REPORT_ONLY: `npm run bench` records them in its own result file). The last line is
 * `SMPP {json}`; without Perl Net::SMPP it is `SMPP {"skipped":"…"}` and the exit code 0.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.ts';
import { createDemoAccount } from '../src/domain/demo.ts';
import { createDispatcher } from '../src/dispatch/index.ts';
import { createSmppCarrier } from '../src/dispatch/smpp.ts';
import { recordMappers } from '../src/records/index.ts';
import { createTimeFormat } from '../src/lib/time.ts';
import { inTransaction, migrateToLatest, openStore } from '../src/store/db.ts';
import { insertMessage } from '../src/store/repositories/message-log.ts';
import { FakeSmsc } from '../test/helpers/smsc.ts';

const MESSAGES = Number(process.argv[2] ?? 10_000);
const WINDOWS = (process.argv[3] ?? '10,50').split(',').map(Number);

interface Run {
  window: number;
  messages: number;
  /** Seconds from the dispatcher's start to the last submit_sm_resp. */
  toRespSeconds: number;
  /** Messages per second, queued → submit_sm_resp. */
  perSecond: number;
  /** Seconds to the last Sent committed. */
  toSentSeconds: number;
  /** CPU seconds and share of one core over toRespSeconds: the Perl SMSC and msgsvc's process. */
  smscCpuSeconds: number;
  smscCpuPercent: number;
  msgsvcCpuSeconds: number;
  msgsvcCpuPercent: number;
}

async function run(window: number): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'msgsvc-bench-smpp-'));
  const smsc = await FakeSmsc.start(['--quiet', '--receipt-delay-ms', '-1']);
  const config = loadConfig({ DATABASE_URL: join(dir, 'bench.db'), LOG_LEVEL: 'silent', MSGSVC_DISPATCH_POLL_MS: '5' });
  const store = openStore(config.database);
  try {
    await migrateToLatest(store);
    const demo = await createDemoAccount(store, recordMappers(createTimeFormat('UTC')), 'US', 'SMPP bench');
    const now = Math.floor(Date.now() / 1000);
    await inTransaction(store, async (tx) => {
      for (let i = 0; i < MESSAGES; i++) {
        await insertMessage(
          tx,
          demo.account.id,
          {
            direction: 1,
            number: '55155',
            mobilePhone: `1555${String(2_000_000 + i).padStart(7, '0')}`,
            message: `Bench message ${i}`,
            typeId: 1,
            statusId: 1,
            segments: 1,
            credits: 1,
            batchId: null,
            scheduledMessageId: null,
            optOutExempt: 1,
            dueAt: 0,
          },
          now,
        );
      }
    });
    const carrier = createSmppCarrier({
      url: `smpp://bench:pw@127.0.0.1:${smsc.port}`,
      rate: 100_000,
      window,
      timeoutMs: 10_000,
      enquireMs: 30_000,
    });
    const dispatcher = createDispatcher(config, store, { carrier });
    const smscCpu0 = smsc.cpuSeconds();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await dispatcher.start();
    while ((carrier.status().counters.responses.ESME_ROK ?? 0) < MESSAGES) await new Promise((r) => setTimeout(r, 2));
    const toResp = (performance.now() - t0) / 1000;
    const smscCpu = smsc.cpuSeconds() - smscCpu0;
    const cpu = process.cpuUsage(cpu0);
    for (;;) {
      const sent = await store.db
        .selectFrom('messages')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('status_id', '=', 2)
        .executeTakeFirstOrThrow();
      if (Number(sent.n) >= MESSAGES) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    const toSent = (performance.now() - t0) / 1000;
    await dispatcher.stop();
    const msgsvcCpu = (cpu.user + cpu.system) / 1e6;
    return {
      window,
      messages: MESSAGES,
      toRespSeconds: round(toResp),
      perSecond: Math.round(MESSAGES / toResp),
      toSentSeconds: round(toSent),
      smscCpuSeconds: round(smscCpu),
      smscCpuPercent: Math.round((100 * smscCpu) / toResp),
      msgsvcCpuSeconds: round(msgsvcCpu),
      msgsvcCpuPercent: Math.round((100 * msgsvcCpu) / toResp),
    };
  } finally {
    await store.close();
    await smsc.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

const round = (x: number) => Math.round(x * 1000) / 1000;

// Only the Perl SMSC is needed here (no TLS, so not stunnel, which the tests also want).
const missing =
  spawnSync('perl', ['-MNet::SMPP', '-e', '1'], { stdio: 'ignore' }).status === 0
    ? undefined
    : 'Perl Net::SMPP missing (apt-get install -y libnet-smpp-perl)';
if (missing) {
  console.log(`bench/smpp.ts skipped: ${missing}`);
  console.log(`SMPP ${JSON.stringify({ messages: MESSAGES, runs: [], skipped: missing })}`);
  process.exit(0);
}
const runs: Run[] = [];
for (const w of WINDOWS) {
  const r = await run(w);
  runs.push(r);
  console.log(
    `window ${String(w).padStart(3)}: ${String(r.perSecond).padStart(6)} msg/s queued→submit_sm_resp (${r.messages} in ${r.toRespSeconds} s; all Sent committed at ${r.toSentSeconds} s) · SMSC CPU ${r.smscCpuPercent}% of a core · msgsvc CPU ${r.msgsvcCpuPercent}%`,
  );
}
if (!process.env.MSGSVC_BENCH_REPORT_ONLY) {
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  const file = new URL(`./results/smpp-${new Date().toISOString().slice(0, 19).replace(/:/g, '-')}.json`, import.meta.url);
  writeFileSync(
    file,
    JSON.stringify({ bench: 'smpp', node: process.version, cores: (await import('node:os')).cpus().length, runs }, null, 2) + '\n',
  );
  console.log(`written to bench/results/${file.pathname.split('/').pop()}`);
}
console.log(`SMPP ${JSON.stringify({ messages: MESSAGES, runs })}`);
