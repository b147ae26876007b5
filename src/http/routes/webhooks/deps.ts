import type { WebhookDeps } from '../../../domain/webhooks.ts';
import { systemClock } from '../../../lib/time.ts';
import type { RouteDeps } from '../../operation.ts';

/** What the webhook rules need, from the route dependencies (the system clock unless one was injected). */
export function webhookDeps({ store, config, clock }: RouteDeps): WebhookDeps {
  return { store, clock: clock ?? systemClock, allowPrivate: config.webhookAllowPrivate };
}
