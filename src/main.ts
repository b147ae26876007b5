import closeWithGrace from 'close-with-grace';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import type { Config } from './config.ts';
import { createDemoAccount, demoCurlLines } from './cli/demo.ts';
import { recordMappers } from './http/schemas/index.ts';
import { createTimeFormat } from './domain/time.ts';
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

function banner(token: string, curls: string[]): string {
  return [
    '',
    'msgsvc: the database had no account, so a demo account with sample data was created.',
    `Access token (shown once; only its hash is stored): ${token}`,
    'Try every operation (add -H "Accept: application/xml" for XML):',
    ...curls.map((c) => `  ${c}`),
    'More demo accounts: npx msgsvc demo   ·   turn this off: MSGSVC_DEMO=0',
    '',
  ].join('\n');
}

/**
 * Opens the database, applies migrations, seeds a demo account on first start (when
 * `config.demo` and there is no account yet), and listens.
 * @param options.print where the demo banner goes (default stdout).
 */
export async function startServer(config: Config, options: { print?: (text: string) => void } = {}): Promise<RunningServer> {
  const store = openStore(config.database);
  try {
    await migrateToLatest(store);
    let dispatcher: Dispatcher | undefined;
    let deliverer: WebhookDeliverer | undefined;
    const app = buildApp(config, {
      store,
      carrierState: () => dispatcher?.carrierState() ?? 'not running',
      dispatcherStats: () => dispatcher?.stats(),
      webhookStats: () => deliverer?.stats(),
    });
    // API-EXTENSIONS §8: the dispatcher runs inside serve unless MSGSVC_DISPATCHER=0.
    if (config.dispatcher) dispatcher = createDispatcher(config, store, { log: app.log });
    // API-EXTENSIONS §6: scheduled messages are checked and sent wherever the dispatcher runs.
    const scheduler = config.dispatcher ? createScheduler(config, store, { log: app.log }) : undefined;
    // API-EXTENSIONS §10: webhook deliveries are sent wherever the dispatcher runs.
    if (config.dispatcher) deliverer = createWebhookDeliverer(config, store, { log: app.log });
    let firstStartDemo: Awaited<ReturnType<typeof createDemoAccount>> | undefined;
    if (config.demo && (await countAccounts(store.db)) === 0) {
      firstStartDemo = await createDemoAccount(store, recordMappers(createTimeFormat(config.timeZone)), config.defaultRegion);
    }
    await app.listen({ port: config.port, host: config.host });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    const url = `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${port}`;
    if (firstStartDemo) {
      (options.print ?? ((t) => process.stdout.write(t)))(banner(firstStartDemo.token, demoCurlLines(url, firstStartDemo)) + '\n');
    }
    await dispatcher?.start();
    scheduler?.start();
    deliverer?.start();
    let closing: Promise<void> | undefined;
    return {
      app,
      store,
      url,
      // The dispatcher first: its round in progress writes its outcomes before the store closes.
      close: () => (closing ??= Promise.resolve(scheduler?.stop()).then(() => deliverer?.stop()).then(() => dispatcher?.stop()).then(() => app.close()).then(() => store.close())),
    };
  } catch (err) {
    await store.close();
    throw err;
  }
}

/** Runs the server until SIGINT/SIGTERM, then closes gracefully (in-flight requests finish) and exits 0. */
export async function serve(config: Config): Promise<void> {
  const server = await startServer(config);
  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    if (err) server.app.log.error({ err }, 'shutting down after an error');
    else server.app.log.info({ signal }, 'shutting down');
    await server.close();
  });
}

/**
 * `msgsvc worker` (API-EXTENSIONS §8): the dispatcher alone, without HTTP, until SIGINT/SIGTERM;
 * then the round in progress finishes, its outcomes are written, and the process exits 0.
 */
export async function runWorker(config: Config): Promise<void> {
  const store = openStore(config.database);
  const log = createLogger(config.logLevel);
  let dispatcher: Dispatcher;
  const scheduler = createScheduler(config, store, { log });
  const deliverer = createWebhookDeliverer(config, store, { log });
  try {
    await migrateToLatest(store);
    dispatcher = createDispatcher(config, store, { log });
    await dispatcher.start();
    scheduler.start();
    deliverer.start();
  } catch (err) {
    await store.close();
    throw err;
  }
  log.info({ carrier: config.carrier, batch: config.dispatchBatchSize }, 'msgsvc worker: dispatching');
  closeWithGrace({ delay: 30_000 }, async ({ signal, err }) => {
    if (err) log.error({ err }, 'worker shutting down after an error');
    else log.info({ signal }, 'worker shutting down');
    await scheduler.stop();
    await deliverer.stop();
    await dispatcher.stop();
    await store.close();
  });
}
