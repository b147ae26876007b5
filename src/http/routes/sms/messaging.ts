import type { MessagingDeps } from '../../../domain/messages.ts';
import { systemClock } from '../../../domain/time.ts';
import type { RouteDeps } from '../../operation.ts';

/** What the messaging rules need, from the route dependencies (the system clock unless one was injected). */
export function messagingDeps({ store, config, clock }: RouteDeps): MessagingDeps {
  return {
    store,
    clock: clock ?? systemClock,
    prices: { smsSegmentCredits: config.smsSegmentCredits, mmsCredits: config.mmsCredits },
    region: config.defaultRegion,
  };
}
