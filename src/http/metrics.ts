import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { LOG_STATUSES } from '../records/statuses.ts';
import { dispatchQueue, messageCountsByStatus } from '../domain/metrics.ts';
import type { Store } from '../domain/store.ts';
import type { DispatcherStats } from '../dispatch/dispatcher.ts';

export type { DispatcherStats };

/**
 * Metrics and request ids (issue 14).
 *
 * `GET /metrics` (Prometheus text format) is served only when MSGSVC_METRICS_TOKEN is set, and only
 * to a request carrying `Authorization: Bearer <that token>` (docs/guides/metrics.md). Every series lives
 * in a registry of its own per app, so several apps in one process (the tests) never clash.
 *
 * The request path pays for one thing only: `observe` in the onResponse step, a Map lookup of the
 * (method, route template, status) children and two increments. Everything else is read when
 * Prometheus scrapes (collect functions): the dispatcher's and the carrier's counters, the
 * rate-limit rejections, and two small queries (queue depth and lag; messages by status, cached).
 */

/**
 * Webhook deliveries (API.md §12), as the delivery loop counts them since it started.
 * The hook for the webhooks worker: pass `webhookStats` to buildApp and these become
 * `msgsvc_webhook_deliveries_total{result}` and `msgsvc_webhook_deliveries{status="Pending"}`.
 */
export interface WebhookDeliveryStats {
  /** Attempts answered 2xx. */
  delivered: number;
  /** Attempts that failed and will be retried. */
  retried: number;
  /** Deliveries that used up their attempts (Failed). */
  failed: number;
  /** Deliveries waiting for an attempt, when known. */
  pending?: number;
}

export interface MetricsSources {
  store: Store;
  /** The dispatcher of this process, if one runs here. */
  dispatcherStats?: () => DispatcherStats | undefined;
  /** The webhook delivery loop of this process, if one runs here. */
  webhookStats?: () => WebhookDeliveryStats | undefined;
  /** 429s answered by the rate limit (src/http/plugins/rate-limit.ts). */
  rateLimitRejections: () => number;
  /** The route template of a path answered without a route (405 on a known path), else undefined. */
  knownPath: (path: string) => boolean;
  /** Epoch seconds (the messages' created_at). */
  nowSeconds: () => number;
}

/** A request id kept from the client: 1 to 200 visible ASCII characters (0x21–0x7E). */
const CLIENT_REQUEST_ID = /^[\x21-\x7e]{1,200}$/;

/**
 * Fastify's genReqId: the client's `X-Request-Id` when it is 1 to 200 visible ASCII characters,
 * else a new UUID. (Node joins a repeated header with `, `, which has a space: a new id.)
 */
export function requestIdOf(req: IncomingMessage): string {
  const sent = req.headers['x-request-id'];
  return typeof sent === 'string' && CLIENT_REQUEST_ID.test(sent) ? sent : randomUUID();
}

/** Label of requests that matched no route (unknown paths): one series, never the raw URL. */
export const UNMATCHED_ROUTE = 'unmatched';

/** Latency buckets of msgsvc_http_request_duration_seconds (upper bounds, seconds). */
export const LATENCY_BUCKETS: readonly number[] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * One (method, route, status) series of the request metrics, counted in plain numbers: prom-client's
 * Histogram hashes the label values on every observe (~0.8 µs a request), this costs a few ns.
 * The registry reads them at scrape time (requestCollectors).
 */
interface RequestSeries {
  labels: { method: string; route: string; status: string };
  count: number;
  sum: number;
  /** Observations per bucket (not cumulative); the last slot is above the largest bound. */
  buckets: Float64Array;
}

/** Prometheus collectors (prom-client's metric interface) of the request series. */
function requestCollectors(registry: Registry, series: Map<string, RequestSeries>): void {
  const counterName = 'msgsvc_http_requests_total';
  const counterHelp = 'HTTP requests answered, by method, route template and status.';
  registry.registerMetric({
    name: counterName,
    help: counterHelp,
    type: 'counter',
    aggregator: 'sum',
    get: () =>
      Promise.resolve({
        name: counterName,
        help: counterHelp,
        type: 'counter',
        aggregator: 'sum',
        values: [...series.values()].map((s) => ({ labels: s.labels, value: s.count })),
      }),
  } as never);
  const histName = 'msgsvc_http_request_duration_seconds';
  const histHelp = 'Time from the request to the response, by method, route template and status.';
  registry.registerMetric({
    name: histName,
    help: histHelp,
    type: 'histogram',
    aggregator: 'sum',
    get: () => {
      const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
      for (const s of series.values()) {
        let acc = 0;
        LATENCY_BUCKETS.forEach((le, i) => {
          acc += s.buckets[i]!;
          values.push({ labels: { le, ...s.labels }, value: acc, metricName: `${histName}_bucket` });
        });
        values.push({ labels: { le: '+Inf', ...s.labels }, value: s.count, metricName: `${histName}_bucket` });
        values.push({ labels: s.labels, value: s.sum, metricName: `${histName}_sum` });
        values.push({ labels: s.labels, value: s.count, metricName: `${histName}_count` });
      }
      return Promise.resolve({ name: histName, help: histHelp, type: 'histogram', aggregator: 'sum', values });
    },
  } as never);
}

/** A counter whose value is read from a monotonic source at scrape time. */
function mirrorCounter(
  registry: Registry,
  name: string,
  help: string,
  labelNames: string[],
  read: () => Iterable<[Record<string, string>, number]> | undefined,
): void {
  const last = new Map<string, number>();
  new Counter({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      const values = read();
      if (!values) return;
      for (const [labels, value] of values) {
        const key = JSON.stringify(labels);
        const delta = value - (last.get(key) ?? 0);
        // A source that restarted (a new dispatcher) starts again from 0: count its new value.
        if (delta > 0) this.inc(labels, delta);
        else if (delta < 0 && value > 0) this.inc(labels, value);
        last.set(key, value);
      }
    },
  });
}

export interface Metrics {
  readonly registry: Registry;
  /** onResponse: counts the request and its latency by method, route template and status. */
  observe(request: FastifyRequest, reply: FastifyReply): void;
  /** True when `Authorization` carries the metrics token (constant time). */
  authorized(authorization: string | undefined): boolean;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** How long the messages-by-status counts are reused between scrapes (one grouped count per period at most). */
export const STATUS_COUNTS_TTL_MS = 15_000;

export function createMetrics(sources: MetricsSources, token: string | undefined): Metrics {
  const registry = new Registry();
  if (token !== undefined) collectDefaultMetrics({ register: registry });

  // Series by "method status route": bounded (known methods × route templates × statuses).
  const series = new Map<string, RequestSeries>();
  requestCollectors(registry, series);

  mirrorCounter(registry, 'msgsvc_rate_limit_rejections_total', 'Requests answered 429 by the per-account rate limit.', [], () => [
    [{}, sources.rateLimitRejections()],
  ]);

  // Messages by status: one grouped count over the messages table, reused for STATUS_COUNTS_TTL_MS.
  let statusCounts: { at: number; rows: Map<number, number> } | undefined;
  new Gauge({
    name: 'msgsvc_messages',
    help: `Messages in the log by status (all accounts; counted at most once per ${STATUS_COUNTS_TTL_MS / 1000} s).`,
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      if (!statusCounts || Date.now() - statusCounts.at > STATUS_COUNTS_TTL_MS) {
        const rows = await messageCountsByStatus(sources.store);
        statusCounts = { at: Date.now(), rows };
      }
      for (const [id, name] of Object.entries(LOG_STATUSES)) this.set({ status: name }, statusCounts.rows.get(Number(id)) ?? 0);
    },
  });

  // Queue depth and lag: Queued messages (due now or later) read through the partial index of due work.
  let queue: { depth: number; oldest: number | null } | undefined;
  const readQueue = async () => {
    queue = await dispatchQueue(sources.store);
  };
  new Gauge({
    name: 'msgsvc_dispatcher_queue_depth',
    help: 'Messages Queued for the carrier (retries waiting included), all accounts.',
    registers: [registry],
    async collect() {
      await readQueue();
      this.set(queue!.depth);
    },
  });
  new Gauge({
    name: 'msgsvc_dispatcher_queue_lag_seconds',
    help: 'Age of the oldest Queued message (0 when none).',
    registers: [registry],
    collect() {
      // Registered after queue_depth, whose collect has just read the queue for this scrape.
      this.set(queue?.oldest == null ? 0 : Math.max(0, sources.nowSeconds() - queue.oldest));
    },
  });

  const dispatcher = () => sources.dispatcherStats?.();
  new Gauge({
    name: 'msgsvc_dispatcher_running',
    help: '1 when a dispatcher runs in this process.',
    registers: [registry],
    collect() {
      this.set(dispatcher() ? 1 : 0);
    },
  });
  mirrorCounter(registry, 'msgsvc_dispatcher_rounds_total', 'Dispatcher rounds run in this process, by result.', ['result'], () => {
    const s = dispatcher();
    return (
      s && [
        [{ result: 'ok' }, s.rounds - s.roundErrors],
        [{ result: 'error' }, s.roundErrors],
      ]
    );
  });
  mirrorCounter(
    registry,
    'msgsvc_dispatcher_messages_total',
    'Messages the dispatcher of this process claimed and what became of them.',
    ['outcome'],
    () => {
      const s = dispatcher();
      return (
        s &&
        (['claimed', 'sent', 'failed', 'rejected', 'retried', 'lost', 'waiting', 'receipts'] as const).map((k) => [{ outcome: k }, s[k]])
      );
    },
  );
  mirrorCounter(
    registry,
    'msgsvc_carrier_submits_total',
    'Submits to the carrier by result (accepted, failed: permanent refusal, retry: temporary, error: the submit threw).',
    ['result'],
    () => {
      const s = dispatcher();
      return s && Object.entries(s.submits).map(([result, n]) => [{ result }, n]);
    },
  );
  // Per carrier, labelled by its configured name (docs/API.md §14.1; `smpp` or `sandbox` with the single-carrier settings).
  mirrorCounter(
    registry,
    'msgsvc_carrier_submits_by_carrier_total',
    'Submits by carrier name and result (accepted, failed: permanent refusal, retry: temporary, error: the submit threw).',
    ['carrier', 'result'],
    () => {
      const s = dispatcher();
      return (
        s &&
        Object.entries(s.carriers).flatMap(([carrier, c]) =>
          Object.entries(c.submits).map(([result, n]) => [{ carrier, result }, n] as [Record<string, string>, number]),
        )
      );
    },
  );
  new Gauge({
    name: 'msgsvc_carrier_ready',
    help: 'Per carrier name: 1 when it can take submits (an SMPP bind is up, an HTTP carrier reachable; the sandbox always), 0 when not; absent without a dispatcher.',
    labelNames: ['carrier'],
    registers: [registry],
    collect() {
      this.reset();
      const s = dispatcher();
      for (const [carrier, c] of Object.entries(s?.carriers ?? {})) this.set({ carrier }, c.ready ? 1 : 0);
    },
  });
  new Gauge({
    name: 'msgsvc_carrier_in_flight',
    help: "Per carrier name: submits of this dispatcher awaiting their answer (at most the carrier's window).",
    labelNames: ['carrier'],
    registers: [registry],
    collect() {
      this.reset();
      const s = dispatcher();
      for (const [carrier, c] of Object.entries(s?.carriers ?? {})) this.set({ carrier }, c.inFlight);
    },
  });
  const smppStates = () => Object.values(dispatcher()?.carriers ?? {}).flatMap((c) => (c.smpp ? [c.smpp] : []));
  new Gauge({
    name: 'msgsvc_smpp_bound',
    help: 'SMPP carrier: 1 while a transceiver bind is up (absent with another carrier).',
    labelNames: ['url'],
    registers: [registry],
    collect() {
      this.reset();
      for (const smpp of smppStates()) this.set({ url: smpp.url }, smpp.bound ? 1 : 0);
    },
  });
  new Gauge({
    name: 'msgsvc_smpp_in_flight',
    help: 'SMPP carrier: submit_sm awaiting their response.',
    labelNames: ['url'],
    registers: [registry],
    collect() {
      this.reset();
      for (const smpp of smppStates()) this.set({ url: smpp.url }, smpp.inFlight);
    },
  });
  const smppCounter = (name: string, help: string, pick: (c: NonNullable<DispatcherStats['carrier']['smpp']>['counters']) => number) =>
    mirrorCounter(registry, name, help, ['url'], () => {
      const all = smppStates();
      return all.length > 0 ? all.map((smpp) => [{ url: smpp.url }, pick(smpp.counters)] as [Record<string, string>, number]) : undefined;
    });
  smppCounter('msgsvc_smpp_submit_pdus_total', 'SMPP carrier: submit_sm PDUs sent (one per segment, retries included).', (c) => c.submits);
  smppCounter('msgsvc_smpp_timeouts_total', 'SMPP carrier: submit_sm without a response in time.', (c) => c.timeouts);
  smppCounter('msgsvc_smpp_receipts_total', 'SMPP carrier: delivery receipts received.', (c) => c.receipts);
  smppCounter('msgsvc_smpp_binds_total', 'SMPP carrier: successful binds.', (c) => c.binds);
  smppCounter('msgsvc_smpp_reconnects_total', 'SMPP carrier: reconnect attempts.', (c) => c.reconnects);
  mirrorCounter(
    registry,
    'msgsvc_smpp_submit_responses_total',
    'SMPP carrier: submit_sm_resp by command status (ESME_ROK, ESME_RTHROTTLED, …).',
    ['url', 'command_status'],
    () => {
      const all = smppStates();
      return all.length > 0
        ? all.flatMap((smpp) =>
            Object.entries(smpp.counters.responses).map(
              ([command_status, n]) => [{ url: smpp.url, command_status }, n] as [Record<string, string>, number],
            ),
          )
        : undefined;
    },
  );

  mirrorCounter(
    registry,
    'msgsvc_webhook_deliveries_total',
    'Webhook delivery attempts of this process by result (delivered, retried, failed).',
    ['result'],
    () => {
      const w = sources.webhookStats?.();
      return w && (['delivered', 'retried', 'failed'] as const).map((k) => [{ result: k }, w[k]]);
    },
  );
  new Gauge({
    name: 'msgsvc_webhook_deliveries',
    help: 'Webhook deliveries by status (Pending: waiting for an attempt), when the delivery loop reports it.',
    labelNames: ['status'],
    registers: [registry],
    collect() {
      this.reset();
      const pending = sources.webhookStats?.()?.pending;
      if (pending !== undefined) this.set({ status: 'Pending' }, pending);
    },
  });

  const tokenDigest = token === undefined ? undefined : digest(`Bearer ${token}`);

  return {
    registry,
    observe(request, reply) {
      const method = request.method;
      let route = request.routeOptions.url;
      if (route === undefined) {
        const q = request.url.indexOf('?');
        const path = q === -1 ? request.url : request.url.slice(0, q);
        route = sources.knownPath(path) ? path : UNMATCHED_ROUTE;
      }
      const status = reply.statusCode;
      const key = `${method} ${status} ${route}`;
      let s = series.get(key);
      if (s === undefined) {
        s = { labels: { method, route, status: String(status) }, count: 0, sum: 0, buckets: new Float64Array(LATENCY_BUCKETS.length + 1) };
        series.set(key, s);
      }
      const seconds = reply.elapsedTime / 1000;
      s.count++;
      s.sum += seconds;
      let i = 0;
      while (i < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[i]!) i++;
      s.buckets[i]!++;
    },
    authorized(authorization) {
      if (tokenDigest === undefined || authorization === undefined) return false;
      return timingSafeEqual(digest(authorization), tokenDigest);
    },
  };
}
