import type { Config } from '../config.ts';
import type { CarrierSpec } from '../lib/carrier-settings.ts';
import { mediaLinkSecret, signMediaLink } from '../lib/signed-link.ts';
import { systemClock, type Clock } from '../lib/time.ts';
import { TokenBucket } from '../lib/token-bucket.ts';
import type { Store } from '../store/db.ts';
import { receiptLanded } from '../store/repositories/smpp.ts';
import type { Carrier, OutboundMessage } from '../dispatch/carrier.ts';
import { createSandboxCarrier } from '../dispatch/sandbox.ts';
import { createSmppCarrier } from '../dispatch/smpp.ts';
import { createTwilioCarrier } from './twilio.ts';
import { createAndroidCarrier } from './android.ts';

/**
 * Builds the configured carriers (docs/API.md §14.1): one per entry of config.carriers (MSGSVC_CARRIERS,
 * or the one carrier of the single-carrier settings, named `smpp` or `sandbox`), in list order,
 * not started (Dispatcher.start starts them with their sinks).
 *
 * - `sandbox`: the sandbox of API.md §11.3 (with the sandbox settings), its `window`; a `rate`
 *   given on its entry limits its submits per second.
 * - `smpp`: createSmppCarrier with the entry's URL, rate and window and MSGSVC_SMPP_TIMEOUT_MS /
 *   MSGSVC_SMPP_ENQUIRE_MS; an early receipt is known to have landed when the message of THIS
 *   carrier with its id is no longer Sent.
 * - `twilio`: createTwilioCarrier; an MMS's `MediaUrl`s are signed links (src/lib/signed-link.ts)
 *   to `{PUBLIC_URL}/v1/carriers/{name}/media?{query}`, keyed with mediaLinkSecret(spec) (derived
 *   from the auth token, so every instance signs and checks alike), valid for MEDIA_LINK_TTL_S
 *   from the submit. MSGSVC_CARRIER_ALLOW_PRIVATE lets its host be a private address.
 * - `android`: createAndroidCarrier (a phone on a LAN: private addresses allowed).
 * HTTP carriers take MSGSVC_CARRIER_TIMEOUT_MS. config.publicUrl is required with them (config.ts
 * refuses to start without it).
 */

/** A carrier with its configured name. */
export interface BuiltCarrier {
  readonly name: string;
  readonly carrier: Carrier;
}

/** How long a Twilio MediaUrl stays valid, seconds: API.md §14.1 asks for at least 24 hours; one more for a provider's queue. */
export const MEDIA_LINK_TTL_S = 25 * 3600;

type Log = { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void; error(obj: object, msg?: string): void };

/**
 * The carriers of `config`, in list order.
 * @param store lets an SMPP carrier check that an early receipt has taken effect.
 * @param options.clock the time the media links' expiry counts from (default the system clock).
 * @throws Error when an HTTP carrier is configured without config.publicUrl (config.ts already refuses it).
 */
export function buildCarriers(config: Config, store?: Store, options: { log?: Log; clock?: Clock } = {}): BuiltCarrier[] {
  return config.carriers.map((spec) => ({ name: spec.name, carrier: buildCarrier(config, spec, store, options) }));
}

/** One carrier of config.carriers (see buildCarriers). */
export function buildCarrier(config: Config, spec: CarrierSpec, store?: Store, options: { log?: Log; clock?: Clock } = {}): Carrier {
  const { log } = options;
  const clock = options.clock ?? systemClock;
  switch (spec.kind) {
    case 'sandbox': {
      const sandbox = createSandboxCarrier({
        receiptMs: config.sandboxReceiptMs,
        submitMs: config.sandboxSubmitMs,
        window: spec.window,
        ...(config.sandboxJournal ? { journal: config.sandboxJournal } : {}),
      });
      return spec.rate === undefined ? sandbox : rateLimited(sandbox, spec.rate);
    }
    case 'smpp':
      return createSmppCarrier({
        url: spec.url,
        rate: spec.rate,
        window: spec.window,
        timeoutMs: config.smppTimeoutMs,
        enquireMs: config.smppEnquireMs,
        ...(store ? { receiptLanded: (id: string) => receiptLanded(store.db, id, spec.name) } : {}),
        ...(log ? { log } : {}),
      });
    case 'twilio': {
      const publicUrl = requirePublicUrl(config, spec.name);
      const secret = mediaLinkSecret(spec);
      const mediaUrlBase = `${publicUrl}/v1/carriers/${spec.name}/media`;
      return createTwilioCarrier({
        name: spec.name,
        baseUrl: spec.baseUrl,
        accountSid: spec.accountSid,
        authToken: spec.authToken,
        publicUrl,
        rate: spec.rate,
        window: spec.window,
        timeoutMs: config.carrierTimeoutMs,
        allowPrivate: config.carrierAllowPrivate,
        mediaUrls: (m: OutboundMessage) => {
          const expires = clock.nowSeconds() + MEDIA_LINK_TTL_S;
          return (m.mediaIds ?? []).map(
            (mediaId) => `${mediaUrlBase}?${signMediaLink(secret, { carrier: spec.name, accountId: m.accountId, mediaId }, expires)}`,
          );
        },
        ...(log ? { log } : {}),
      });
    }
    case 'android':
      return createAndroidCarrier({
        name: spec.name,
        baseUrl: spec.baseUrl,
        username: spec.username,
        password: spec.password,
        publicUrl: requirePublicUrl(config, spec.name),
        rate: spec.rate,
        window: spec.window,
        timeoutMs: config.carrierTimeoutMs,
        ...(log ? { log } : {}),
      });
  }
}

function requirePublicUrl(config: Config, name: string): string {
  if (!config.publicUrl) throw new Error(`carrier ${name}: MSGSVC_PUBLIC_URL is required with an HTTP carrier`);
  return config.publicUrl;
}

/** `carrier` with at most `rate` submits per second (a listed sandbox with `?rate=`). */
function rateLimited<C extends Carrier>(carrier: C, rate: number): C {
  const bucket = new TokenBucket(rate);
  const submit = carrier.submit.bind(carrier);
  return Object.assign(Object.create(carrier) as C, {
    submit: async (m: OutboundMessage) => {
      await bucket.take();
      return submit(m);
    },
  });
}
