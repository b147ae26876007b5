import type { MessagingDeps } from '../../../domain/messages.ts';
import type { ScheduleDeps } from '../../../domain/scheduled.ts';
import { systemClock } from '../../../lib/time.ts';
import type { RouteDeps } from '../../operation.ts';

/**
 * What the messaging rules need, from the route dependencies (the system clock unless one was
 * injected), with the service's time zone, whose days MaxPerDay counts (API.md §16).
 */
export function messagingDeps({ store, config, clock }: RouteDeps): MessagingDeps {
  return {
    store,
    clock: clock ?? systemClock,
    prices: { smsSegmentCredits: config.smsSegmentCredits, mmsCredits: config.mmsCredits },
    region: config.defaultRegion,
    linkDomain: config.linkDomain,
    timeZone: config.timeZone,
  };
}

/** What the scheduled message rules need (API.md §10.6 `schedule`): the messaging deps and the service's time zone. */
export function scheduleDeps(deps: RouteDeps): ScheduleDeps {
  return { ...messagingDeps(deps), timeZone: deps.config.timeZone };
}
