import type { Config } from '../config.ts';
import { systemClock, type Clock } from '../lib/time.ts';
import type { Store } from '../store/db.ts';
import type { Carrier, InboundText } from './carrier.ts';
import { Dispatcher, type DispatcherOptions } from './dispatcher.ts';
import { buildCarrier, buildCarriers } from '../carriers/index.ts';
import { Scheduler, type SchedulerOptions } from './scheduler.ts';
import { createInboundHandler, inboundDeps } from '../domain/inbound.ts';
import { WebhookDeliverer } from '../webhooks/deliverer.ts';
import { createMemorySendCounter, createRedisSendCounter, type SendCounter } from './send-counter.ts';

/**
 * Where the dispatcher lives (API.md §11.2): src/dispatch/, beside http/ and domain/, because
 * it is a process of its own (a loop in `msgsvc serve`, or `msgsvc worker` alone), not a step of a
 * request. carrier.ts is the carrier boundary, sandbox.ts and smpp.ts the built-in carriers (the
 * HTTP ones are in src/carriers/, which builds them all from the settings), dispatcher.ts the
 * loop; its SQL is in src/store/repositories/dispatch.ts.
 */

export type { Carrier } from './carrier.ts';
export { Dispatcher } from './dispatcher.ts';
export type { SendCounter } from './send-counter.ts';
export { Scheduler } from './scheduler.ts';

/**
 * True while a sandbox carrier is configured (API.md §11.3: `POST /v1/sandbox/inbound` answers
 * only then, else 404): the single-carrier sandbox, or a `sandbox:` entry of MSGSVC_CARRIERS.
 */
export function isSandboxCarrier(config: Pick<Config, 'carriers'>): boolean {
  return config.carriers.some((c) => c.kind === 'sandbox');
}

/**
 * The first configured carrier (API.md §11.2; with the single-carrier settings, the only one:
 * SMPP when MSGSVC_SMPP_URL is set, else the sandbox), not started. For tools and tests; the
 * dispatcher takes every carrier (src/carriers/index.ts buildCarriers). `store` lets the SMPP
 * carrier check that an early receipt has taken effect; `log` gets its bind events.
 */
export function createCarrier(config: Config, store?: Store, log?: DispatcherOptions['log']): Carrier {
  return buildCarrier(config, config.carriers[0]!, store, log ? { log } : {});
}

/**
 * Where the dispatcher counts MaxPerSecond (API.md §16; src/dispatch/send-counter.ts): with
 * REDIS_URL, in Redis, shared by every instance (keys `{MSGSVC_RATE_KEY_PREFIX}:mps:{second}`);
 * without, in this process (the cap then holds per process).
 */
export function createSendCounter(config: Pick<Config, 'redisUrl' | 'rateKeyPrefix'>, log?: DispatcherOptions['log']): SendCounter {
  return config.redisUrl
    ? createRedisSendCounter(config.redisUrl, `${config.rateKeyPrefix}:mps`, log ?? { info() {}, warn() {} })
    : createMemorySendCounter();
}

/** Builds a dispatcher from the settings (not started). `overrides` replace the carrier, clock, log or inbound handler. */
export function createDispatcher(
  config: Config,
  store: Store,
  overrides: { clock?: Clock; carrier?: Carrier; log?: DispatcherOptions['log']; inbound?: (text: InboundText) => Promise<void> } = {},
): Dispatcher {
  const clock = overrides.clock ?? systemClock;
  return new Dispatcher({
    store,
    ...(overrides.carrier
      ? { carrier: overrides.carrier, carrierName: config.carriers[0]!.name }
      : { carriers: buildCarriers(config, store, { clock, ...(overrides.log ? { log: overrides.log } : {}) }), routes: config.routes }),
    clock,
    batchSize: config.dispatchBatchSize,
    leaseMs: config.dispatchLeaseMs,
    maxAttempts: config.dispatchMaxAttempts,
    pollMs: config.dispatchPollMs,
    // API.md §14.3.5: quiet hours of accounts that chose no TimeZone are in the service's zone.
    timeZone: config.timeZone,
    // API.md §16: MaxPerSecond across every instance when Redis is configured.
    sendCounter: createSendCounter(config, overrides.log),
    ...(overrides.log ? { log: overrides.log } : {}),
    // API.md §11.5: inbound texts from the carrier run the inbound rules (src/domain/inbound.ts).
    inbound: overrides.inbound ?? createInboundHandler(inboundDeps(config, store, overrides.clock ?? systemClock), overrides.log),
  });
}

/**
 * Builds the scheduler of scheduled messages (API.md §11.7; src/dispatch/scheduler.ts) from
 * the settings, not started. It runs wherever the dispatcher runs. `overrides` replace the clock or log.
 */
export function createScheduler(config: Config, store: Store, overrides: { clock?: Clock; log?: SchedulerOptions['log'] } = {}): Scheduler {
  return new Scheduler({
    store,
    clock: overrides.clock ?? systemClock,
    prices: { smsSegmentCredits: config.smsSegmentCredits, mmsCredits: config.mmsCredits },
    linkDomain: config.linkDomain,
    // API.md §16: MaxPerDay counts the days of the service's zone.
    timeZone: config.timeZone,
    batchSize: config.dispatchBatchSize,
    leaseMs: config.dispatchLeaseMs,
    pollMs: config.schedulerPollMs,
    ...(overrides.log ? { log: overrides.log } : {}),
  });
}

/**
 * Builds the webhook delivery loop (API.md §12; src/webhooks/deliverer.ts) from the
 * settings, not started. It runs wherever the dispatcher runs. `overrides` replace the clock or log.
 */
export function createWebhookDeliverer(
  config: Config,
  store: Store,
  overrides: { clock?: Clock; log?: { warn(obj: object, msg?: string): void; error(obj: object, msg?: string): void } } = {},
): WebhookDeliverer {
  return new WebhookDeliverer({
    store,
    clock: overrides.clock ?? systemClock,
    allowPrivate: config.webhookAllowPrivate,
    timeoutMs: config.webhookTimeoutMs,
    batchSize: config.webhookBatchSize,
    concurrency: config.webhookConcurrency,
    pollMs: config.dispatchPollMs,
    timeZone: config.timeZone,
    ...(overrides.log ? { log: overrides.log } : {}),
  });
}
