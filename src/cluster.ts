/**
 * `msgsvc serve --workers N` (N > 1): one primary process and N HTTP workers (node:cluster, the
 * primary hands connections to the workers round-robin; they all listen on config.port, port 0
 * included: one random port shared by all).
 *
 * The primary opens the database, applies migrations, creates the first-start demo account and
 * prints its banner once; it runs the dispatcher, the scheduler and the webhook deliverer (once per
 * host, when config.dispatcher: the workers run none), keeps the rate-limit counters of all the
 * workers (exact, API.md §6, unless REDIS_URL is set: then the workers share Redis as separate
 * instances do), and tells the workers the carrier's state for /readyz. It forks a new worker when
 * one exits unexpectedly (after a backoff that grows while workers keep dying young), and on
 * SIGINT/SIGTERM stops the workers gracefully (they finish their in-flight requests), then its own
 * loops, and exits 0.
 *
 * Workers are the same `msgsvc serve …` command line run again by cluster.fork(), with
 * CLUSTER_WORKER_ENV set: they read the same flags and environment, so they get the same config.
 * Their standard output and error are pipes to the primary, which relays them (see relayLines in
 * src/http/log.ts for why they cannot share its own).
 */
import cluster, { type Worker } from 'node:cluster';
import closeWithGrace from 'close-with-grace';
import { RateLimiterClusterMaster } from 'rate-limiter-flexible';
import { ConfigError, type Config } from './config.ts';
import { createLogger, relayLines } from './http/log.ts';
import {
  createHostLoops,
  openPreparedStore,
  printDemoBanner,
  serverUrl,
  startServer,
  type HostLoops,
  type RunningServer,
} from './server.ts';

/** Set by a `serve --workers` primary in the environment of the workers it forks. */
export const CLUSTER_WORKER_ENV = 'MSGSVC_CLUSTER_WORKER';

/** True in a worker forked by `serve --workers` (not in one of another cluster manager, such as pm2's). */
export function isClusterWorker(): boolean {
  return cluster.isWorker && process.env[CLUSTER_WORKER_ENV] === '1';
}

/** The IPC channel of msgsvc's own messages (the rate limiter uses `rate_limiter_flexible`). */
const CHANNEL = 'msgsvc';

/** Messages between the primary and its workers on CHANNEL. */
type ClusterMessage =
  | { channel: typeof CHANNEL; type: 'carrier'; state: string; states?: Record<string, string> } // primary → worker: the carriers' state changed
  | { channel: typeof CHANNEL; type: 'carrier?' } // worker → primary: send me the carrier's state
  | { channel: typeof CHANNEL; type: 'shutdown' }; // primary → worker: finish in-flight requests and exit 0

/** How often the primary looks at its dispatcher's carrier state to pass changes on, in ms. */
const CARRIER_POLL_MS = 200;
/** How long a worker has to finish its in-flight requests before the primary kills it, in ms. */
const WORKER_STOP_MS = 10_000;
/** Refork backoff: the first delay, the longest, and how long a worker must live to reset it (ms). */
const BACKOFF_FIRST_MS = 100;
const BACKOFF_MAX_MS = 10_000;
const BACKOFF_RESET_AFTER_MS = 30_000;

function isClusterMessage(msg: unknown): msg is ClusterMessage {
  return typeof msg === 'object' && msg !== null && (msg as { channel?: unknown }).channel === CHANNEL;
}

/** True for a SQLite database that lives in one process's memory and cannot be shared by workers. */
function inMemoryDatabase(config: Config): boolean {
  if (config.database.kind !== 'sqlite') return false;
  const path = config.database.path.trim();
  return path === ':memory:' || path === '' || (/^file:/i.test(path) && /[?&]mode=memory\b/i.test(path));
}

/**
 * Runs `serve --workers`: the primary in the process started by the command, a worker in a
 * process the primary forked. Returns once started; the processes run until SIGINT/SIGTERM.
 * @throws ConfigError when the database cannot be shared (an in-memory SQLite database), or when
 *   this process is already a worker of another cluster manager.
 */
export async function serveCluster(config: Config): Promise<void> {
  if (isClusterWorker()) return runClusterWorker(config);
  if (cluster.isWorker) {
    throw new ConfigError(
      `--workers ${config.workers} (MSGSVC_WORKERS) cannot run inside another cluster manager (such as pm2's cluster mode): use --workers 1 there`,
    );
  }
  if (inMemoryDatabase(config)) {
    throw new ConfigError(
      `--workers ${config.workers} (MSGSVC_WORKERS) needs a database the processes can share, but DATABASE_URL is an in-memory SQLite database (${(config.database as { path: string }).path}): use a file, PostgreSQL, or --workers 1`,
    );
  }
  return runPrimary(config);
}

async function runPrimary(config: Config): Promise<void> {
  const log = createLogger(config.logLevel);
  const { store, firstStartDemo } = await openPreparedStore(config);
  let loops: HostLoops;
  try {
    loops = createHostLoops(config, store, log);
  } catch (err) {
    await store.close();
    throw err;
  }
  // Before any fork: a worker's rate limiter announces itself once, when it is created.
  if (!config.redisUrl) new RateLimiterClusterMaster();

  const started = new Map<number, { startedAt: number; listening: boolean }>();
  const reforks = new Set<NodeJS.Timeout>();
  let anyListening = false;
  let shuttingDown = false;
  let backoffMs = 0;
  let carrier = loops.carrierState();
  let states = loops.carrierStates();

  const send = (worker: Worker, msg: ClusterMessage) => {
    if (!worker.isConnected()) return;
    try {
      worker.send(msg);
    } catch {
      // The worker is going away; its exit is handled below.
    }
  };
  // The workers' standard output and error are pipes to this process, relayed to its own: they
  // must not share its descriptors (relayLines says why: a worker starting or exiting would leave
  // them blocking). Standard input is no worker's business.
  cluster.setupPrimary({ stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  // A standard error whose reader has gone (EPIPE) must not stop the primary when it relays a
  // worker's: the lines are lost, as the log's are (src/http/log.ts).
  process.stderr.on('error', () => {});
  const fork = () => {
    const worker = cluster.fork({ [CLUSTER_WORKER_ENV]: '1' });
    started.set(worker.id, { startedAt: Date.now(), listening: false });
    if (worker.process.stdout) relayLines(worker.process.stdout);
    // Written as it comes (a worker's stderr is a start failure or a crash: little, and never
    // held back, so the worker never waits on it).
    worker.process.stderr?.on('data', (chunk: Buffer) => process.stderr.write(chunk));
    // A message to a worker that has just died (a rate-limit answer) emits 'error': not fatal here.
    worker.on('error', (err: Error) => log.warn({ err: { message: err.message }, worker: worker.process.pid }, 'IPC error with a worker'));
  };

  cluster.on('message', (worker, msg: unknown) => {
    if (isClusterMessage(msg) && msg.type === 'carrier?')
      send(worker, { channel: CHANNEL, type: 'carrier', state: carrier, ...(states ? { states } : {}) });
  });
  const carrierPoll = setInterval(() => {
    const state = loops.carrierState();
    const now = loops.carrierStates();
    if (state === carrier && JSON.stringify(now) === JSON.stringify(states)) return;
    carrier = state;
    states = now;
    for (const worker of Object.values(cluster.workers ?? {}))
      if (worker) send(worker, { channel: CHANNEL, type: 'carrier', state, ...(now ? { states: now } : {}) });
  }, CARRIER_POLL_MS);
  carrierPoll.unref();

  let loopsStarted: Promise<void> | undefined;
  cluster.on('listening', (worker, address) => {
    const info = started.get(worker.id);
    if (info) info.listening = true;
    if (anyListening) return;
    anyListening = true;
    const url = serverUrl(config.host, address.port);
    log.info({ url, workers: config.workers }, 'msgsvc serve: workers listening');
    if (firstStartDemo) printDemoBanner(firstStartDemo, url);
    loopsStarted = loops.start().catch((err: unknown) => {
      log.error({ err }, 'the dispatcher could not start: stopping');
      fail();
    });
  });

  cluster.on('exit', (worker, code, signal) => {
    const info = started.get(worker.id);
    started.delete(worker.id);
    if (shuttingDown) return;
    if (!anyListening) {
      // No worker has ever listened (port in use, bad database…): reforking would loop.
      log.error({ worker: worker.process.pid, code, signal }, 'a worker failed to start: stopping');
      fail();
      return;
    }
    const lived = info ? Date.now() - info.startedAt : 0;
    backoffMs = lived >= BACKOFF_RESET_AFTER_MS ? BACKOFF_FIRST_MS : Math.min(Math.max(backoffMs * 2, BACKOFF_FIRST_MS), BACKOFF_MAX_MS);
    log.warn({ worker: worker.process.pid, code, signal, restartInMs: backoffMs }, 'a worker exited unexpectedly: forking another');
    const timer = setTimeout(() => {
      reforks.delete(timer);
      if (!shuttingDown) fork();
    }, backoffMs);
    reforks.add(timer);
  });

  const stopWorker = (worker: Worker) =>
    new Promise<void>((resolve) => {
      if (worker.isDead()) return resolve();
      const kill = setTimeout(() => worker.process.kill('SIGKILL'), WORKER_STOP_MS);
      // 'close' comes after the exit once its output has been read to the end: its last lines are
      // relayed before this process exits.
      worker.process.once('close', () => {
        clearTimeout(kill);
        resolve();
      });
      // A worker still loading has not subscribed to messages yet, and would lose this one (then
      // serve until the SIGKILL above). SIGTERM reaches it either way: before its handler is set it
      // ends the process (nothing is served yet), after it the worker stops as on `shutdown`.
      if (started.get(worker.id)?.listening === true) send(worker, { channel: CHANNEL, type: 'shutdown' });
      else worker.process.kill('SIGTERM');
    });
  let stopping: Promise<void> | undefined;
  const shutdown = () =>
    (stopping ??= (async () => {
      shuttingDown = true;
      for (const timer of reforks) clearTimeout(timer);
      clearInterval(carrierPoll);
      await Promise.all(Object.values(cluster.workers ?? {}).map((worker) => (worker ? stopWorker(worker) : Promise.resolve())));
      await loopsStarted;
      await loops.stop();
      await store.close();
    })());

  const grace = closeWithGrace({ delay: WORKER_STOP_MS + 5000 }, async ({ signal, err }) => {
    if (err) log.error({ err }, 'shutting down after an error');
    else log.info({ signal }, 'shutting down');
    await shutdown();
  });
  // A failure of the primary itself: stop everything and exit 1 (close-with-grace would exit 0 once
  // the event loop is empty, so it is uninstalled first).
  function fail(): void {
    grace.uninstall();
    process.exitCode = 1;
    void shutdown();
  }
  for (let i = 0; i < config.workers; i++) fork();
}

/**
 * A worker: the HTTP server without the dispatcher and without the demo (the primary's), its rate
 * limit counted by the primary (unless REDIS_URL), its /readyz carrier the primary's. It stops on
 * the primary's `shutdown` message, on SIGTERM, or when the primary is gone; SIGINT (a terminal's
 * Ctrl-C reaches every process of the group) is left to the primary, which then stops the workers.
 */
async function runClusterWorker(config: Config): Promise<void> {
  let carrier = 'not running';
  let states: Record<string, string> | undefined;
  let server: RunningServer | undefined;
  let stopRequested = false;
  let stopping = false;
  const stop = () => {
    stopRequested = true;
    if (!server || stopping) return;
    stopping = true;
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        server?.app.log.error({ err }, 'worker shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('message', (msg: unknown) => {
    if (!isClusterMessage(msg)) return;
    if (msg.type === 'carrier') ({ state: carrier, states } = msg);
    else if (msg.type === 'shutdown') stop();
  });
  process.on('SIGINT', () => {});
  process.on('SIGTERM', stop);
  process.on('disconnect', stop);
  process.send?.({ channel: CHANNEL, type: 'carrier?' } satisfies ClusterMessage);
  try {
    server = await startServer(
      { ...config, dispatcher: false, demo: false },
      { carrierState: () => carrier, carrierStates: () => states, clusterRateLimit: true, migrated: true },
    );
  } catch (err) {
    process.stderr.write(`msgsvc: worker ${process.pid} could not start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
  if (stopRequested) stop();
}
