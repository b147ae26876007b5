import type { Config } from '../config.ts';
import { systemClock, type Clock } from '../domain/time.ts';
import type { Store } from '../store/db.ts';
import type { Carrier, InboundText } from './carrier.ts';
import { Dispatcher, type DispatcherOptions } from './dispatcher.ts';
import { createSandboxCarrier } from './sandbox.ts';

/**
 * Where the dispatcher lives (API-EXTENSIONS §8): src/dispatch/, beside http/ and domain/, because
 * it is a process of its own (a loop in `msgsvc serve`, or `msgsvc worker` alone), not a step of a
 * request. carrier.ts is the carrier boundary, sandbox.ts the built-in carrier, dispatcher.ts the
 * loop; its SQL is in src/store/repositories/dispatch.ts.
 */

export type { Carrier } from './carrier.ts';
export { Dispatcher } from './dispatcher.ts';

/** The configured carrier (MSGSVC_CARRIER): the sandbox, the default when none is configured. */
export function createCarrier(config: Config): Carrier {
  return createSandboxCarrier({
    receiptMs: config.sandboxReceiptMs,
    submitMs: config.sandboxSubmitMs,
    window: config.sandboxWindow,
    ...(config.sandboxJournal ? { journal: config.sandboxJournal } : {}),
  });
}

/** Builds a dispatcher from the settings (not started). `overrides` replace the carrier, clock, log or inbound handler. */
export function createDispatcher(
  config: Config,
  store: Store,
  overrides: { clock?: Clock; carrier?: Carrier; log?: DispatcherOptions['log']; inbound?: (text: InboundText) => Promise<void> } = {},
): Dispatcher {
  return new Dispatcher({
    store,
    carrier: overrides.carrier ?? createCarrier(config),
    clock: overrides.clock ?? systemClock,
    batchSize: config.dispatchBatchSize,
    leaseMs: config.dispatchLeaseMs,
    maxAttempts: config.dispatchMaxAttempts,
    pollMs: config.dispatchPollMs,
    ...(overrides.log ? { log: overrides.log } : {}),
    ...(overrides.inbound ? { inbound: overrides.inbound } : {}),
  });
}
