/**
 * The server's assembly: the prepared store (migrated, with the first-start demo account), the
 * HTTP app (src/app.ts), the background loops of one host (dispatcher, scheduler, webhook
 * deliverer), listening and closing. No signals and no process model here: src/main.ts (one
 * process) and src/cluster.ts (`serve --workers`) decide when to start and stop what this builds.
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import type { Config } from './config.ts';
import { createDemoAccount, demoCurlLines, type DemoAccount } from './domain/demo.ts';
import { recordMappers } from './records/index.ts';
import { createTimeFormat, nowSeconds, systemClock } from './lib/time.ts';
import { purgeExpired } from './domain/housekeeping.ts';
import { createRetention } from './domain/retention.ts';
import { PollLoop } from './dispatch/poll-loop.ts';
import { migrateToLatest, openStore, type Store } from './store/db.ts';
import { countAccounts } from './store/repositories/accounts.ts';
import type { WebhookDeliverer } from './webhooks/deliverer.ts';
import { createDispatcher, createScheduler, createWebhookDeliverer, type Dispatcher } from './dispatch/index.ts';
import { createLogger } from './http/log.ts';

export interface RunningServer {
  app: FastifyInstance;
  store: Store;
  /** `http://host:port` the server listens on. */
  url: string;
  /** Stops accepting connections, finishes in-flight requests, closes the database. */
  close(): Promise<void>;
}

/**
 * The first-start banner: the demo account's token, the console's address (`{url}/console`, to
 * sign in with that token as a key, docs/API.md §15.4: it never goes in a URL), then one curl line
 * per operation.
 */
function banner(token: string, url: string, curls: string[]): string {
  return [
    '',
    'msgsvc: the database had no account, so a demo account with sample data was created.',
    `Access token (shown once; only its hash is stored): ${token}`,
    `Console: ${url}/console   (choose "Sign in with a key" and paste the access token above; invite people from its People page)`,
    'Try every operation (add -H "Accept: application/xml" for XML):',
    ...curls.map((c) => `  ${c}`),
    'More demo accounts: npx msgsvc demo   ·   turn this off: MSGSVC_DEMO=0',
    '',
  ].join('\n');
}

/** `http://host:port` a client reaches the server at (127.0.0.1 when it listens on every interface). */
export function serverUrl(host: string, port: number): string {
  const bracketed = host.includes(':') ? `[${host}]` : host;
  return `http://${bracketed === '0.0.0.0' || bracketed === '[::]' ? '127.0.0.1' : bracketed}:${port}`;
}

/** Writes the first-start banner (the demo account's token and curl lines for `url`) to `print` (default stdout). */
export function printDemoBanner(demo: DemoAccount, url: string, print: (text: string) => void = (t) => process.stdout.write(t)): void {
  print(banner(demo.token, url, demoCurlLines(url, demo)) + '\n');
}

/**
 * Opens the database and applies migrations (unless `options.migrated`: a `serve --workers`
 * primary applied them before forking); on first start (when `config.demo` and there is no
 * account yet) creates the demo account, returned so that its banner can be printed once the
 * server's URL is known. Closes the database when any step fails.
 */
export async function openPreparedStore(
  config: Config,
  options: { migrated?: boolean } = {},
): Promise<{ store: Store; firstStartDemo: DemoAccount | undefined }> {
  const store = openStore(config.database);
  try {
    if (!options.migrated) await migrateToLatest(store);
    let firstStartDemo: DemoAccount | undefined;
    if (config.demo && (await countAccounts(store.db)) === 0) {
      firstStartDemo = await createDemoAccount(store, recordMappers(createTimeFormat(config.timeZone)), config.defaultRegion, undefined, {
        history: true,
      });
    }
    return { store, firstStartDemo };
  } catch (err) {
    await store.close();
    throw err;
  }
}

/** The background loops of one host: the dispatcher, the scheduler and the webhook deliverer. */
export interface HostLoops {
  /** The carrier's state for /readyz: `ok`, `unavailable`, or `not running` (no dispatcher here). */
  carrierState(): string;
  /** Each carrier's state for /readyz by name (`ok` or `unavailable`); undefined without a dispatcher here. */
  carrierStates(): Record<string, string> | undefined;
  dispatcherStats(): ReturnType<Dispatcher['stats']> | undefined;
  webhookStats(): ReturnType<WebhookDeliverer['stats']> | undefined;
  start(): Promise<void>;
  /** Stops them, the dispatcher last: its round in progress writes its outcomes before the store closes. */
  stop(): Promise<void>;
}

/**
 * The loops `serve` runs when `config.dispatcher` (none otherwise): API.md §11.2, the
 * dispatcher runs inside serve unless MSGSVC_DISPATCHER=0; API.md §10.6, scheduled messages are checked and
 * sent wherever the dispatcher runs; API.md §12, webhook deliveries are sent wherever the dispatcher runs.
 */
/** How often the housekeeping round runs, in ms (one hour). */
const HOUSEKEEPING_MS = 3_600_000;

export function createHostLoops(config: Config, store: Store, log: FastifyBaseLogger): HostLoops {
  const dispatcher = config.dispatcher ? createDispatcher(config, store, { log }) : undefined;
  const scheduler = config.dispatcher ? createScheduler(config, store, { log }) : undefined;
  const deliverer = config.dispatcher ? createWebhookDeliverer(config, store, { log }) : undefined;
  // Once a day (checked in the hourly round, and at start): the message log's retention (MSGSVC_RETENTION_DAYS).
  const retention = config.dispatcher ? createRetention({ store, clock: systemClock, days: config.retentionDays, log }) : undefined;
  // Once an hour (and at start): the audit log's retention, ended sessions, old sign-in failures.
  const housekeeping = config.dispatcher
    ? new PollLoop({
        round: async () => {
          await purgeExpired(store, nowSeconds(), config.auditDays);
          await retention?.runIfDue();
          return false;
        },
        pollMs: HOUSEKEEPING_MS,
        onError: (err) => log.error({ err }, 'housekeeping round failed'),
      })
    : undefined;
  return {
    carrierState: () => dispatcher?.carrierState() ?? 'not running',
    carrierStates: () => dispatcher?.carrierStates(),
    dispatcherStats: () => dispatcher?.stats(),
    webhookStats: () => deliverer?.stats(),
    async start() {
      await dispatcher?.start();
      scheduler?.start();
      deliverer?.start();
      housekeeping?.start();
    },
    // Every loop is told to stop at once, each ending after its round in progress. One after the
    // other, a loop not yet told would start another round while the one before it ended: with a
    // database that has gone silent (its address vanished), every such round waits out the statement
    // timeout, and the stop took a timeout per loop, past the 10 s `docker stop` allows.
    async stop() {
      const stopped = await Promise.allSettled([
        retention?.stop(),
        housekeeping?.stop(),
        scheduler?.stop(),
        deliverer?.stop(),
        dispatcher?.stop(),
      ]);
      const failed = stopped.find((s): s is PromiseRejectedResult => s.status === 'rejected');
      if (failed) throw failed.reason;
    },
  };
}

/**
 * Opens the database, applies migrations, seeds a demo account on first start (when
 * `config.demo` and there is no account yet), listens, prints the demo banner, and starts the
 * host loops.
 * @param options.print where the demo banner goes (default stdout).
 * @param options.carrierState the carrier's state for /readyz when the dispatcher runs elsewhere
 *   (a `serve --workers` worker: the primary's); default this process's own loops.
 * @param options.carrierStates each carrier's state likewise (/readyz `carriers`).
 * @param options.clusterRateLimit this process is a `serve --workers` worker (see AppDeps).
 * @param options.migrated the schema is known to be current (the primary migrated it): no migration check.
 * @throws what opening, migrating or listening threw (the database is closed again).
 */
export async function startServer(
  config: Config,
  options: {
    print?: (text: string) => void;
    carrierState?: () => string;
    carrierStates?: () => Readonly<Record<string, string>> | undefined;
    clusterRateLimit?: boolean;
    migrated?: boolean;
  } = {},
): Promise<RunningServer> {
  const { store, firstStartDemo } = await openPreparedStore(config, { migrated: options.migrated === true });
  try {
    let loops: HostLoops | undefined;
    const app = buildApp(config, {
      store,
      carrierState: options.carrierState ?? (() => loops?.carrierState() ?? 'not running'),
      carrierStates: options.carrierStates ?? (() => loops?.carrierStates()),
      dispatcherStats: () => loops?.dispatcherStats(),
      webhookStats: () => loops?.webhookStats(),
      ...(options.clusterRateLimit ? { clusterRateLimit: true } : {}),
    });
    const background = (loops = createHostLoops(config, store, app.log));
    await app.listen({ port: config.port, host: config.host });
    const address = app.server.address();
    const url = serverUrl(config.host, typeof address === 'object' && address ? address.port : config.port);
    if (firstStartDemo) printDemoBanner(firstStartDemo, url, options.print);
    await background.start();
    let closing: Promise<void> | undefined;
    return {
      app,
      store,
      url,
      close: () =>
        (closing ??= background
          .stop()
          .then(() => app.close())
          .then(() => store.close())),
    };
  } catch (err) {
    await store.close();
    throw err;
  }
}

/** `msgsvc worker` once started: its logger, and `close` (the round in progress finishes, then the database closes). */
export interface RunningWorker {
  log: FastifyBaseLogger;
  close(): Promise<void>;
}

/**
 * `msgsvc worker` (API.md §11.2): opens the database, applies migrations and starts the host
 * loops without HTTP, whatever MSGSVC_DISPATCHER says.
 * @throws what opening, migrating or starting the dispatcher threw (the database is closed again).
 */
export async function startWorker(config: Config): Promise<RunningWorker> {
  const store = openStore(config.database);
  const log = createLogger(config.logLevel);
  const loops = createHostLoops({ ...config, dispatcher: true }, store, log);
  try {
    await migrateToLatest(store);
    await loops.start();
  } catch (err) {
    await store.close();
    throw err;
  }
  log.info(
    { carrier: config.carrier, carriers: config.carriers.map((c) => `${c.name}=${c.display}`), batch: config.dispatchBatchSize },
    'msgsvc worker: dispatching',
  );
  let closing: Promise<void> | undefined;
  return { log, close: () => (closing ??= loops.stop().then(() => store.close())) };
}
