/** What the `msgsvc` commands share: their database handle and their output. */
import type { Config } from '../config.ts';
import { migrateToLatest, openStore, type Store } from '../store/db.ts';

/** A command's failure the user can act on: printed as `msgsvc: <message>`, exit status 1. */
export class CliError extends Error {}

/** Opens and migrates the configured database, runs `fn`, and always closes it. */
export async function withStore<T>(config: Config, fn: (store: Store) => Promise<T>): Promise<T> {
  // A command that runs and exits needs no checkpoint thread (src/store/checkpointer.ts): SQLite's
  // own automatic checkpoint, and the last connection's close, keep its WAL short.
  const store = openStore(config.database.kind === 'sqlite' ? { ...config.database, checkpointMs: 0 } : config.database);
  try {
    await migrateToLatest(store);
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** Writes one line to stdout: a string as it is, anything else as JSON. */
export function out(value: unknown): void {
  process.stdout.write(`${typeof value === 'string' ? value : JSON.stringify(value)}\n`);
}
