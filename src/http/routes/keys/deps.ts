import type { KeyDeps } from '../../../domain/keys.ts';
import { systemClock } from '../../../lib/time.ts';
import type { RouteDeps } from '../../operation.ts';

/** What the key rules need, from the route dependencies (the system clock unless one was injected). */
export function keyDeps({ store, config, clock }: RouteDeps): KeyDeps {
  return { store, clock: clock ?? systemClock, timeZone: config.timeZone };
}
