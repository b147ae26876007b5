/**
 * Every fuzz target, by name (docs/RELIABILITY.md "Fuzzing"). A target is loaded only when it
 * runs, so `npm run fuzz -- query` does not build the app the body target needs.
 */
import type { FuzzTarget, FuzzValue } from '../target.ts';

type Loader = () => Promise<FuzzTarget<FuzzValue>>;
const load =
  <T extends FuzzValue>(importer: () => Promise<{ target: FuzzTarget<T> }>): Loader =>
  async () =>
    (await importer()).target;

export const TARGETS: Readonly<Record<string, Loader>> = {
  android: load(() => import('./android.ts')),
  body: load(() => import('./body.ts')),
  csv: load(() => import('./csv.ts')),
  idempotency: load(() => import('./idempotency.ts')),
  query: load(() => import('./query.ts')),
  'media-link': load(() => import('./media-link.ts')),
  'merge-fields': load(() => import('./merge-fields.ts')),
  phone: load(() => import('./phone.ts')),
  rrule: load(() => import('./rrule.ts')),
  'second-factor': load(() => import('./second-factor.ts')),
  session: load(() => import('./session.ts')),
  smpp: load(() => import('./smpp.ts')),
  twilio: load(() => import('./twilio.ts')),
  xml: load(() => import('./xml.ts')),
};
