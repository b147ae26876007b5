/**
 * The process shell of `msgsvc serve` and `msgsvc worker`: given the configuration the command
 * line read (src/cli/), starts the server (src/server.ts) or the cluster (src/cluster.ts) and
 * stops it gracefully on SIGINT/SIGTERM. bin/msgsvc.js hands these two functions to the CLI;
 * nothing in src/ imports this file.
 */
import closeWithGrace from 'close-with-grace';
import type { Config } from './config.ts';
import { isClusterWorker, serveCluster } from './cluster.ts';
import { startServer, startWorker } from './server.ts';

/**
 * `msgsvc serve`: runs the server until SIGINT/SIGTERM, then closes gracefully (in-flight requests
 * finish) and exits 0; 1 after an uncaught error, or when closing takes over 10 s. With
 * `config.workers` above 1: a primary and that many HTTP workers (src/cluster.ts).
 * @throws what starting threw (ConfigError for a setting the cluster cannot use, a listen error).
 */
export async function serve(config: Config): Promise<void> {
  if (config.workers > 1 || isClusterWorker()) return serveCluster(config);
  const server = await startServer(config);
  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    if (err) server.app.log.error({ err }, 'shutting down after an error');
    else server.app.log.info({ signal }, 'shutting down');
    await server.close();
  });
}

/**
 * `msgsvc worker` (API.md §11.2): the dispatcher alone, without HTTP, until SIGINT/SIGTERM;
 * then the round in progress finishes, its outcomes are written, and the process exits 0.
 * @throws what starting threw (the database cannot be opened or migrated).
 */
export async function worker(config: Config): Promise<void> {
  const running = await startWorker(config);
  closeWithGrace({ delay: 30_000 }, async ({ signal, err }) => {
    if (err) running.log.error({ err }, 'worker shutting down after an error');
    else running.log.info({ signal }, 'worker shutting down');
    await running.close();
  });
}
