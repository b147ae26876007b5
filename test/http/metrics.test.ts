// GET /metrics (issue 14): the listed series after traffic, their labels (route templates, never
// raw URLs), and the protection by MSGSVC_METRICS_TOKEN.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp, type AppDeps } from '../../src/app.ts';
import { loadConfig, ConfigError, type ConfigSource } from '../../src/config.ts';
import { createDemoAccount } from '../../src/domain/demo.ts';
import { Dispatcher } from '../../src/dispatch/dispatcher.ts';
import { createSandboxCarrier } from '../../src/dispatch/sandbox.ts';
import type { Carrier } from '../../src/dispatch/carrier.ts';
import { createTimeFormat, systemClock } from '../../src/lib/time.ts';
import { recordMappers } from '../../src/records/index.ts';
import type { WebhookDeliveryStats } from '../../src/http/metrics.ts';
import { migrateToLatest, openStore } from '../../src/store/db.ts';
import { testConfig, testDatabaseUrl, withToken } from '../helpers/app.ts';
import { storeTest } from '../helpers/stores.ts';

const TOKEN = 'metrics-token-0123456789';
const AUTH = { authorization: `Bearer ${TOKEN}` };

/** An app with the given settings and extra deps over a fresh database with one demo account. */
async function metricsApp(
  t: { after(fn: () => unknown): void },
  env: ConfigSource,
  deps: (store: AppDeps['store']) => Partial<AppDeps> = () => ({}),
) {
  const dir = mkdtempSync(join(tmpdir(), 'msgsvc-metrics-'));
  const config = testConfig(await testDatabaseUrl(dir), env);
  const store = openStore(config.database);
  await migrateToLatest(store);
  const app = buildApp(config, { store, ...deps(store) });
  await app.ready();
  const demo = await createDemoAccount(store, recordMappers(createTimeFormat(config.timeZone)), config.defaultRegion);
  t.after(async () => {
    await app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { app, store, config, demo };
}

/** The value of one sample (`name{labels}`, labels in the order prom-client writes them), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

storeTest('GET /metrics shows the listed series after traffic, labelled by route template', async (t) => {
  const webhooks: WebhookDeliveryStats = { delivered: 3, retried: 2, failed: 1, pending: 4 };
  const { app, store, demo } = await metricsApp(t, { MSGSVC_METRICS_TOKEN: TOKEN }, () => ({
    // Read on a scrape only, when the dispatcher below exists.
    dispatcherStats: () => dispatcher.stats(),
    webhookStats: () => webhooks,
  }));
  const dispatcher = new Dispatcher({
    store,
    carrier: createSandboxCarrier({ receiptMs: 60_000 }),
    clock: systemClock,
    batchSize: 100,
    leaseMs: 60_000,
    maxAttempts: 3,
    pollMs: 1000,
  });
  // Not started: the test runs its rounds itself (runOnce), so nothing is dispatched behind its back.

  const contactId = demo.contacts[0]!.Id;
  assert.equal((await app.inject({ url: withToken('/v1/numbers/index', demo.token) })).statusCode, 200);
  assert.equal((await app.inject({ url: withToken(`/v1/contacts/view?id=${contactId}`, demo.token) })).statusCode, 200);
  assert.equal((await app.inject({ url: withToken('/v1/contacts/view?id=999999', demo.token) })).statusCode, 404);
  assert.equal((await app.inject({ url: '/secret/place?x=1' })).statusCode, 404);
  assert.equal((await app.inject({ method: 'DELETE', url: withToken('/v1/numbers/index', demo.token) })).statusCode, 405);
  const send = await app.inject({
    method: 'POST',
    url: withToken('/v1/sms/send', demo.token),
    headers: { 'content-type': 'application/json' },
    payload: { MobilePhone: '+15551234567', Message: 'metrics' },
  });
  assert.equal(send.statusCode, 201, send.body);

  const res = await app.inject({ url: '/metrics', headers: AUTH });
  assert.equal(res.statusCode, 200);
  assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  const text = res.body;
  // Requests: counts and latency histograms by method, route template and status.
  assert.equal(sample(text, 'msgsvc_http_requests_total{method="GET",route="/v1/numbers/index",status="200"}'), 1);
  assert.equal(sample(text, 'msgsvc_http_requests_total{method="GET",route="/v1/contacts/view",status="200"}'), 1);
  assert.equal(sample(text, 'msgsvc_http_requests_total{method="GET",route="/v1/contacts/view",status="404"}'), 1);
  assert.equal(sample(text, 'msgsvc_http_requests_total{method="GET",route="unmatched",status="404"}'), 1);
  assert.equal(sample(text, 'msgsvc_http_requests_total{method="DELETE",route="/v1/numbers/index",status="405"}'), 1);
  assert.equal(sample(text, 'msgsvc_http_requests_total{method="POST",route="/v1/sms/send",status="201"}'), 1);
  assert.equal(sample(text, 'msgsvc_http_request_duration_seconds_count{method="GET",route="/v1/numbers/index",status="200"}'), 1);
  assert.equal(
    sample(text, 'msgsvc_http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/v1/numbers/index",status="200"}'),
    1,
  );
  // Never the raw URL: no query, no id, no unknown path, no token.
  assert.ok(!text.includes('/secret/place'));
  assert.ok(!text.includes(`id=${contactId}`));
  assert.ok(!text.includes(demo.token));
  // Messages by status, the queue and its lag.
  assert.ok((sample(text, 'msgsvc_messages{status="Queued"}') ?? 0) >= 1);
  for (const s of ['Sent', 'Delivered', 'Undelivered', 'Failed', 'Rejected', 'Received'])
    assert.notEqual(sample(text, `msgsvc_messages{status="${s}"}`), undefined, s);
  const depth = sample(text, 'msgsvc_dispatcher_queue_depth')!;
  assert.ok(depth >= 1);
  assert.ok(sample(text, 'msgsvc_dispatcher_queue_lag_seconds')! >= 0);
  // The dispatcher and the carrier.
  assert.equal(sample(text, 'msgsvc_dispatcher_running'), 1);
  assert.equal(sample(text, 'msgsvc_carrier_ready{carrier="sandbox"}'), 1);
  // Webhook deliveries (the hook) and rate-limit rejections.
  assert.equal(sample(text, 'msgsvc_webhook_deliveries_total{result="delivered"}'), 3);
  assert.equal(sample(text, 'msgsvc_webhook_deliveries_total{result="retried"}'), 2);
  assert.equal(sample(text, 'msgsvc_webhook_deliveries_total{result="failed"}'), 1);
  assert.equal(sample(text, 'msgsvc_webhook_deliveries{status="Pending"}'), 4);
  assert.equal(sample(text, 'msgsvc_rate_limit_rejections_total'), 0);
  // The process's own (prom-client defaults).
  assert.match(text, /^process_resident_memory_bytes /m);
  assert.match(text, /^nodejs_eventloop_lag_seconds /m);

  // One dispatcher round: the send goes to the sandbox carrier.
  const round = await dispatcher.runOnce();
  assert.ok(round.sent >= 1);
  webhooks.delivered = 5;
  const after = (await app.inject({ url: '/metrics', headers: AUTH })).body;
  assert.equal(sample(after, 'msgsvc_dispatcher_messages_total{outcome="sent"}'), round.sent);
  assert.equal(sample(after, 'msgsvc_dispatcher_messages_total{outcome="claimed"}'), round.claimed);
  assert.equal(sample(after, 'msgsvc_carrier_submits_total{result="accepted"}'), round.sent);
  assert.equal(sample(after, 'msgsvc_dispatcher_queue_depth'), depth - round.sent);
  assert.equal(sample(after, 'msgsvc_webhook_deliveries_total{result="delivered"}'), 5, 'counters follow their source');
  assert.equal(sample(after, 'msgsvc_http_requests_total{method="GET",route="/metrics",status="200"}'), 1);
  // No SMPP series with the sandbox.
  assert.ok(!after.includes('msgsvc_smpp_bound{'));
});

storeTest('rate-limit rejections are counted', async (t) => {
  const { app, demo } = await metricsApp(t, { MSGSVC_METRICS_TOKEN: TOKEN, MSGSVC_RATE_LIMIT: '2', MSGSVC_RATE_WINDOW: '60' });
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++) statuses.push((await app.inject({ url: withToken('/v1/credits/balance', demo.token) })).statusCode);
  assert.deepEqual(statuses, [200, 200, 429, 429, 429]);
  const text = (await app.inject({ url: '/metrics', headers: AUTH })).body;
  assert.equal(sample(text, 'msgsvc_rate_limit_rejections_total'), 3);
  assert.equal(sample(text, 'msgsvc_http_requests_total{method="GET",route="/v1/credits/balance",status="429"}'), 3);
});

storeTest("the SMPP carrier's bind state and counters come through Dispatcher.stats()", async (t) => {
  const status = {
    state: 'bound',
    bound: true,
    url: 'smpp://smsc.example:2775',
    since: 0,
    lastError: undefined,
    inFlight: 2,
    heldReceipts: 0,
    counters: {
      submits: 7,
      messages: 5,
      responses: { ESME_ROK: 6, ESME_RTHROTTLED: 1 },
      timeouts: 1,
      receipts: 4,
      receiptsHeld: 0,
      receiptsUnmatched: 0,
      inbound: 0,
      inboundIncomplete: 0,
      binds: 1,
      reconnects: 2,
    },
  };
  const carrier: Carrier & { status(): typeof status } = {
    name: 'smpp://smsc.example:2775',
    supportsMms: false,
    window: 1,
    async start() {},
    async stop() {},
    submit() {
      return Promise.resolve({ kind: 'accepted', carrierMessageId: 'x' });
    },
    ready: () => status.bound,
    status: () => status,
  };
  const { app, store } = await metricsApp(t, { MSGSVC_METRICS_TOKEN: TOKEN }, () => ({ dispatcherStats: () => dispatcher.stats() }));
  const dispatcher = new Dispatcher({ store, carrier, clock: systemClock, batchSize: 10, leaseMs: 1000, maxAttempts: 3, pollMs: 1000 });
  let text = (await app.inject({ url: '/metrics', headers: AUTH })).body;
  const url = 'url="smpp://smsc.example:2775"';
  assert.equal(sample(text, `msgsvc_smpp_bound{${url}}`), 1);
  assert.equal(sample(text, `msgsvc_carrier_ready{carrier="smpp"}`), 1);
  assert.equal(sample(text, `msgsvc_smpp_in_flight{${url}}`), 2);
  assert.equal(sample(text, `msgsvc_smpp_submit_pdus_total{${url}}`), 7);
  assert.equal(sample(text, `msgsvc_smpp_timeouts_total{${url}}`), 1);
  assert.equal(sample(text, `msgsvc_smpp_reconnects_total{${url}}`), 2);
  assert.equal(sample(text, `msgsvc_smpp_submit_responses_total{${url},command_status="ESME_RTHROTTLED"}`), 1);
  status.bound = false;
  status.counters.submits = 9;
  text = (await app.inject({ url: '/metrics', headers: AUTH })).body;
  assert.equal(sample(text, `msgsvc_smpp_bound{${url}}`), 0);
  assert.equal(sample(text, `msgsvc_carrier_ready{carrier="smpp"}`), 0);
  assert.equal(sample(text, `msgsvc_smpp_submit_pdus_total{${url}}`), 9);
  assert.ok(!text.includes('password'));
});

storeTest('/metrics needs the bearer token; without MSGSVC_METRICS_TOKEN it does not exist', async (t) => {
  const { app, demo } = await metricsApp(t, { MSGSVC_METRICS_TOKEN: TOKEN });
  for (const headers of [
    {},
    { authorization: 'Bearer wrong-token-0123456789' },
    { authorization: TOKEN },
    { authorization: `Basic ${TOKEN}` },
    { authorization: `Bearer ${TOKEN}x` },
  ]) {
    const res = await app.inject({ url: '/metrics', headers });
    assert.equal(res.statusCode, 401, JSON.stringify(headers));
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="metrics"');
    assert.deepEqual(JSON.parse(res.body), {
      name: 'Unauthorized',
      message: 'Your request was made with invalid credentials.',
      code: 0,
      status: 401,
    });
  }
  // An account's access token opens nothing here, nor does the metrics token in the query.
  assert.equal((await app.inject({ url: withToken('/metrics', demo.token) })).statusCode, 401);
  assert.equal((await app.inject({ url: `/metrics?access_token=${TOKEN}` })).statusCode, 401);
  assert.equal((await app.inject({ url: '/metrics', headers: AUTH })).statusCode, 200);

  const { app: closed } = await metricsApp(t, {});
  const res = await closed.inject({ url: '/metrics', headers: AUTH });
  assert.equal(res.statusCode, 404);
  assert.equal(JSON.parse(res.body).message, 'Page not found.');

  assert.throws(
    () => loadConfig({ MSGSVC_METRICS_TOKEN: 'short' }),
    (e: Error) => e instanceof ConfigError && /MSGSVC_METRICS_TOKEN/.test(e.message),
  );
  assert.throws(() => loadConfig({ MSGSVC_METRICS_TOKEN: 'has a space in it 0123456' }), ConfigError);
  assert.equal(loadConfig({}).metricsToken, undefined);
  assert.equal(loadConfig({ MSGSVC_METRICS_TOKEN: ` ${TOKEN} ` }).metricsToken, TOKEN);
});
