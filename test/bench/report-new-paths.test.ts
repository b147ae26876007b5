/**
 * The "New paths (issue 22 item 4)" table of bench/report.ts: one row per path with its SQLite and
 * PostgreSQL figures, target and whether it was met, from the results of the steps `npm run bench`
 * runs after the HTTP scenarios (quiet hours, conversations, links, carriers, console) and of the
 * sms-stats scenario. Pure: sample results, no servers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CarriersRun } from '../../bench/carriers.ts';
import type { ConsoleSeries } from '../../bench/console.ts';
import type { LinksPhaseResult } from '../../bench/links.ts';
import { newPathRows, renderMarkdown, renderNewPaths, type BenchResult, type QuietHoursRun, type SideResult } from '../../bench/report.ts';

const side = (p50Ms: number, paced?: { rate: number; p50Ms: number }): SideResult => ({
  rps: [200],
  medianRps: 200,
  p50Ms,
  p99Ms: p50Ms * 2,
  unexpected: 0,
  errors: 0,
  instructionsPerRequest: null,
  cpuMicrosPerRequest: 5000,
  ...(paced
    ? { paced: { ...paced, p99Ms: paced.p50Ms * 2, maxMs: paced.p50Ms * 3, achievedRps: paced.rate, unexpected: 0, errors: 0 } }
    : {}),
});

const quietRun = (store: 'sqlite' | 'postgres', queueSeconds: number, tokyoEarly = 0, perZone = 20_000): QuietHoursRun => ({
  store,
  queueSeconds,
  queueMet: queueSeconds <= 3,
  loadAverage: 0.5,
  holdSeconds: 4,
  heldPerSecond: 25_000,
  zones: ['Tokyo', 'Kolkata', 'Paris', 'London', 'New York'].map((zone, i) => ({
    zone,
    releasedAt: `2030-01-15T0${i}:00:00.000Z`,
    messages: perZone - (zone === 'Tokyo' ? tokyoEarly : 0),
    early: zone === 'Tokyo' ? tokyoEarly : 0,
    seconds: 1,
    messagesPerSecond: perZone,
  })),
  problems: tokyoEarly > 0 ? [`Tokyo: ${tokyoEarly} early, ${perZone - tokyoEarly} at the end (expected 0, ${perZone})`] : [],
});

const carrierRun = (
  store: 'sqlite' | 'postgres',
  kind: CarriersRun['kind'],
  msgPerSecond: number,
  msgPerWorkerCpuSecond: number,
  workerCpuShare: number,
): CarriersRun => ({
  store,
  kind,
  messages: 20_000,
  seconds: 20_000 / msgPerSecond,
  msgPerSecond,
  workerCpuShare,
  msgPerWorkerCpuSecond,
  workerWaitShare: 0.01,
  providerCpuShare: 0.3,
  peakRssMiB: 120,
  queueSeconds: 0.5,
  target: kind === 'twilio-mms' ? 500 : 2000,
  met: msgPerSecond >= (kind === 'twilio-mms' ? 500 : 2000),
  loadAverage: 0.5,
  problems: [],
});

const linkPhase = (store: 'sqlite' | 'postgres', phase: 'plain' | 'webhook', redirectsPerSecond: number): LinksPhaseResult => ({
  store,
  phase,
  redirectsPerSecond,
  p50Ms: 3.1,
  p99Ms: 9,
  redirects: redirectsPerSecond * 15,
  unexpected: 0,
  errors: 0,
  serverCpuPercent: 98,
  loadBefore: 0.4,
  healthzPerSecond: 20_000,
  ofHealthz: redirectsPerSecond / 20_000,
});

const series = (overviewMs: number, transferBytes: number): ConsoleSeries => {
  const spread = (p50: number) => ({ p50, max: p50 * 1.5 });
  return {
    loads: 10,
    overviewMs: spread(overviewMs),
    domContentLoadedMs: spread(overviewMs / 2),
    transferBytes: spread(transferBytes),
    bodyBytes: spread(180_000),
    requests: spread(9),
    serverCpuMs: spread(12),
    failedResponses: 0,
    runs: [],
  };
};

/** A full run: every step ran; PostgreSQL missed the quiet-hours queue target, and was not reachable for conversations. */
function sample(): BenchResult {
  return {
    date: '2030-01-15T00:00:00.000Z',
    mode: 'full',
    machine: {
      nproc: 2,
      cpuModel: 'test CPU',
      node: 'v20',
      platform: 'linux',
      kernel: '6',
      memoryGiB: 4,
      taskset: true,
      perfCounters: false,
    },
    plan: {
      sizes: [10_000, 1_000_000],
      rounds: 5,
      durationSeconds: 2,
      warmupSeconds: 1,
      connections: 50,
      pacedSeconds: 3,
      pacedShare: 0.5,
    },
    serverPinnedToCpu: 0,
    msgsvc: { env: { MSGSVC_DISPATCHER: '0' }, logTo: '/dev/null', runs: 'dist' },
    datasets: [],
    scenarios: [
      {
        scenario: 'sms-stats',
        title: 'sms/stats (7 days by hour)',
        kind: 'read',
        contacts: 10_000,
        ceiling: side(1),
        msgsvc: side(2),
        ratio: 0.1,
        roundRatios: [0.1],
      },
      {
        scenario: 'sms-stats',
        title: 'sms/stats (7 days by hour)',
        kind: 'read',
        contacts: 1_000_000,
        ceiling: side(1, { rate: 100, p50Ms: 0.3 }),
        msgsvc: side(400, { rate: 100, p50Ms: 31.5 }),
        ratio: 0.01,
        roundRatios: [0.01],
      },
    ],
    skipped: [],
    quietHours: { messages: 100_000, runs: [quietRun('sqlite', 2.1), quietRun('postgres', 3.4)], skipped: [] },
    conversations: {
      targetP50Ms: 20,
      results: [
        {
          store: 'sqlite',
          threads: 10_000,
          messages: 1_003_000,
          requests: 900,
          p50Ms: 7.2,
          p90Ms: 9,
          p99Ms: 14,
          cpuMsPerRequest: 5,
          generateSeconds: 40,
          loadAverage: 0.5,
        },
      ],
      skipped: ['postgres: postgres://postgres@127.0.0.1:5432/postgres does not answer'],
    },
    links: {
      seconds: 15,
      connections: 50,
      links: 1000,
      results: [linkPhase('sqlite', 'plain', 5210), linkPhase('sqlite', 'webhook', 3800), linkPhase('postgres', 'plain', 2900)],
      skipped: [],
    },
    carriers: {
      sizes: { sms: 20_000, mms: 5_000, android: 20_000 },
      rate: 100_000,
      window: null,
      runs: 'dist',
      results: [
        carrierRun('sqlite', 'twilio-sms', 2600, 3100, 0.84),
        carrierRun('sqlite', 'twilio-mms', 700, 900, 0.78),
        carrierRun('sqlite', 'android-sms', 1500, 1700, 0.88),
        carrierRun('postgres', 'twilio-sms', 2400, 2500, 0.96),
        carrierRun('postgres', 'android-sms', 2300, 2600, 0.9),
      ],
      skipped: ['postgres twilio-mms: failed: fake provider did not start'],
    },
    console: { chromium: '120', runs: 'dist', pinned: true, cold: series(412, 251_000), warm: series(180, 4_000), seconds: 30 },
    seconds: 1700,
  };
}

const row = (rows: ReturnType<typeof newPathRows>, start: string) => {
  const found = rows.find((x) => x.path.startsWith(start));
  assert.ok(found, `a row starting with ${start}: ${rows.map((x) => x.path).join(' / ')}`);
  return found;
};

test('every path of the list has its row, in order, with the command that runs it alone', () => {
  const rows = newPathRows(sample());
  assert.deepEqual(
    rows.map((x) => x.path),
    [
      'sms/send-group to 100 k recipients over 5 zones, quiet hours on: time to queue',
      'the same send-group: zones released on time',
      'sms/conversations page 1, 10 k threads / 1 M messages: p50',
      'GET /l/{code}: redirects per second, no click webhook',
      'GET /l/{code}: redirects per second, with a click webhook',
      'HTTP carriers: Twilio-compatible SMS, msg/s Queued → accepted',
      'HTTP carriers: Twilio-compatible MMS, msg/s Queued → accepted',
      'HTTP carriers: Android SMS, msg/s Queued → accepted',
      "HTTP carriers: msgsvc's worker CPU, share of one core (1 = one core busy)",
      'console first load: overview drawn p50, cold / warm',
      'console first load: bytes transferred, cold (p50)',
      'sms/stats (7 days by hour) over 1 M messages: p50 at 100/s',
    ],
  );
  assert.equal(row(rows, 'sms/send-group').command, '`npm run bench -- --only quiet-hours`');
  assert.equal(row(rows, 'HTTP carriers: Android').command, '`npm run bench -- --only carriers`');
  assert.equal(row(rows, 'sms/stats').command, '`npm run bench -- --only sms-stats`');
});

test('figures per store, targets, and a missed target on one store makes the row missed', () => {
  const rows = newPathRows(sample());
  const queue = row(rows, 'sms/send-group');
  assert.deepEqual([queue.sqlite, queue.postgres, queue.target, queue.met], ['2.10 s', '3.40 s', '≤ 3 s at 100 k', false]);
  const zones = row(rows, 'the same send-group');
  assert.equal(zones.sqlite, '5 of 5 zones on time, 0 early');
  assert.equal(zones.met, true);

  const conv = row(rows, 'sms/conversations');
  assert.deepEqual(
    [conv.sqlite, conv.postgres, conv.target, conv.met],
    [
      '7.2 ms (p99 14 ms)',
      'not run (postgres://postgres@127.0.0.1:5432/postgres does not answer)',
      '≤ 20 ms at 10 k threads / 1 M messages',
      true,
    ],
  );

  const plain = row(rows, 'GET /l/{code}: redirects per second, no');
  assert.deepEqual([plain.sqlite, plain.postgres, plain.target, plain.met], ['5,210/s (p50 3.1 ms)', '2,900/s (p50 3.1 ms)', '–', null]);
  assert.equal(row(rows, 'GET /l/{code}: redirects per second, with').postgres, 'not run');

  // Twilio SMS: met on both stores. Android SMS: SQLite below 2,000 msg/s. Twilio SMS on PostgreSQL
  // reaches the rate on one core (2,500 per worker CPU second).
  assert.equal(row(rows, 'HTTP carriers: Twilio-compatible SMS').met, true);
  const android = row(rows, 'HTTP carriers: Android SMS');
  assert.equal(android.sqlite, '1,500 msg/s (1,700 per worker CPU second)');
  assert.equal(android.target, '≥ 2,000 msg/s on one core of worker CPU');
  assert.equal(android.met, false);
  const mms = row(rows, 'HTTP carriers: Twilio-compatible MMS');
  assert.equal(mms.postgres, 'not run (failed: fake provider did not start)');
  assert.equal(mms.met, true);
  const cpu = row(rows, "HTTP carriers: msgsvc's worker CPU");
  assert.equal(cpu.sqlite, 'Twilio SMS 0.84, Twilio MMS 0.78, Android SMS 0.88');
  assert.equal(cpu.postgres, 'Twilio SMS 0.96, Android SMS 0.9');

  const overview = row(rows, 'console first load: overview');
  assert.deepEqual([overview.sqlite, overview.postgres, overview.target, overview.met], ['412 / 180 ms', '–', '–', null]);
  assert.equal(row(rows, 'console first load: bytes').sqlite, '251,000 bytes in 9 requests');

  // sms/stats at the largest size, p50 of the paced run (not the saturated 400 ms).
  const stats = row(rows, 'sms/stats');
  assert.deepEqual([stats.sqlite, stats.postgres, stats.target, stats.met], ['31.5 ms', '–', '≤ 50 ms at 1 M', true]);
});

test('a step that was not run shows "not run" with the reason recorded, both stores', () => {
  const r = sample();
  delete r.quietHours;
  delete r.links;
  r.console = { skipped: 'chromium not found at /usr/bin/chromium (apt-get install chromium)', seconds: 0 };
  r.skipped.push({ scenario: 'quiet-hours', contacts: 100_000, reason: 'time budget' });
  r.scenarios = [];
  r.skipped.push({ scenario: 'sms-stats', contacts: 1_000_000, reason: '--only' });
  const rows = newPathRows(r);
  for (const start of ['sms/send-group', 'the same send-group']) {
    const x = row(rows, start);
    assert.deepEqual([x.sqlite, x.postgres, x.met], ['not run (time budget)', 'not run (time budget)', null]);
  }
  // No reason recorded (an older result file): "not run" alone.
  assert.deepEqual([row(rows, 'GET /l/{code}: redirects per second, no').sqlite, row(rows, 'GET /l/').postgres], ['not run', 'not run']);
  assert.equal(
    row(rows, 'console first load: overview').sqlite,
    'not run (chromium not found at /usr/bin/chromium (apt-get install chromium))',
  );
  const stats = row(rows, 'sms/stats');
  assert.deepEqual(
    [stats.path, stats.sqlite, stats.met],
    ['sms/stats (7 days by hour) over 1 M messages: p50 at 100/s', 'not run (--only)', null],
  );
});

test('targets set at a size are not judged on a smaller (quick) run', () => {
  const r = sample();
  r.quietHours = { messages: 20_000, runs: [quietRun('sqlite', 0.4, 0, 4000)], skipped: ['postgres: not reachable'] };
  r.scenarios = r.scenarios.filter((s) => s.contacts === 10_000);
  const rows = newPathRows(r);
  const queue = row(rows, 'sms/send-group to 20 k recipients');
  assert.deepEqual(
    [queue.sqlite, queue.postgres, queue.met, queue.note],
    ['0.40 s', 'not run (not reachable)', null, 'not judged at 20 k'],
  );
  // Zones released on time: judged at any size.
  assert.equal(row(rows, 'the same send-group').met, true);
  const stats = row(rows, 'sms/stats');
  assert.deepEqual(
    [stats.path, stats.sqlite, stats.met],
    ['sms/stats (7 days by hour) over 10 k messages: p50 at saturation', '2 ms (50 connections)', null],
  );
});

test('a zone released early misses its row', () => {
  const r = sample();
  r.quietHours!.runs[1] = quietRun('postgres', 2.5, 12);
  const zones = row(newPathRows(r), 'the same send-group');
  assert.equal(zones.met, false);
  assert.match(zones.postgres, /^4 of 5 zones on time, 12 early ⚠ Tokyo: 12 early/);
});

test('Markdown: one table after the targets table, one line per row, misses in bold', () => {
  const r = sample();
  const table = renderNewPaths(r);
  const lines = table.split('\n');
  assert.match(lines[0]!, /^\*\*New paths \(issue 22 item 4\)\.\*\*/);
  assert.equal(lines[2], '| Path | Command | SQLite | PostgreSQL | Target | Met |');
  const body = lines.slice(4);
  assert.equal(body.length, newPathRows(r).length);
  assert.equal(
    body[0],
    '| sms/send-group to 100 k recipients over 5 zones, quiet hours on: time to queue | `npm run bench -- --only quiet-hours` | 2.10 s | 3.40 s | ≤ 3 s at 100 k | **no** |',
  );
  assert.ok(body.some((l) => l.startsWith('| GET /l/{code}: redirects per second, no click webhook |') && l.endsWith('| – | – |')));
  assert.ok(body.some((l) => l.startsWith('| sms/stats') && l.endsWith('| yes |')));

  const markdown = renderMarkdown(r, 'bench/results/sample.json');
  const targets = markdown.indexOf('| Target | Measured | Met |');
  const newPaths = markdown.indexOf('| Path | Command | SQLite | PostgreSQL | Target | Met |');
  assert.ok(targets > 0 && newPaths > targets, 'the new table comes after the targets table');
  assert.equal(markdown.split('**New paths (issue 22 item 4).**').length, 2, 'rendered once');
});

test('a figure holding a pipe does not break the table', () => {
  const r = sample();
  r.carriers!.skipped = ['postgres twilio-mms: failed: a | b'];
  const line = renderNewPaths(r)
    .split('\n')
    .find((l) => l.startsWith('| HTTP carriers: Twilio-compatible MMS'))!;
  assert.ok(line.includes('not run (failed: a \\| b)'));
  assert.equal(line.split(/(?<!\\)\|/).length, 8);
});
