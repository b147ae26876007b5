/**
 * What the dispatcher benches share (bench/fairness.ts, bench/sender-pool.ts): a fresh migrated
 * database per run, `msgsvc worker` processes started as production starts them, and a bounded
 * wait that fails as soon as a worker dies.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { benchDatabase } from './databases.ts';
import { migrateToLatest, openStore, type Store } from '../../src/store/db.ts';

/** A fresh database of `kind`, migrated, filled by `fill`, analysed on PostgreSQL; `close()` drops it. */
export async function freshStore(
  kind: 'sqlite' | 'postgres',
  label: string,
  dir: string,
  pgUrl: string,
  fill: (store: Store) => Promise<void>,
): Promise<{ store: Store; url: string; close(): Promise<void> }> {
  const db = await benchDatabase(kind, label, pgUrl, { poolSize: 4, sqliteDir: dir });
  const store = openStore(db.config);
  try {
    await migrateToLatest(store);
    await fill(store);
    if (store.dialect === 'postgres') await sql`analyze`.execute(store.db);
  } catch (err) {
    await store.close();
    await db.drop();
    throw err;
  }
  return {
    store,
    url: db.url,
    async close() {
      await store.close();
      await db.drop();
      if (kind === 'sqlite') for (const f of ['', '-wal', '-shm']) rmSync(`${db.url}${f}`, { force: true });
    },
  };
}

/** A running `msgsvc worker`: its process, its last 20,000 characters of output, and `stop()`. */
export interface Worker {
  child: ChildProcess;
  stop(): Promise<void>;
  output(): string;
}

/**
 * `msgsvc worker` of the copy at `appRoot` in its own process on `url`, with `nodeArgs`;
 * `stop()` ends it (SIGTERM, then SIGKILL after 35 s).
 */
export function startWorker(appRoot: string, nodeArgs: readonly string[], url: string, env: Record<string, string>): Worker {
  const child = spawn(process.execPath, [...nodeArgs, join(appRoot, 'bin/msgsvc.js'), 'worker'], {
    env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (d: Buffer) => {
    out = (out + d.toString('utf8')).slice(-20_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = once(child, 'exit');
  return {
    child,
    output: () => out,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 35_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Waits until `ready()` (polled every 20 ms), failing when a worker exits or after `timeoutMs`. */
export async function waitFor(ready: () => Promise<boolean>, workers: readonly Worker[], timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ready())) {
    const dead = workers.find((w) => w.child.exitCode !== null);
    if (dead) throw new Error(`msgsvc worker exited (${dead.child.exitCode}) while waiting for ${what}:\n${dead.output().slice(-2000)}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}
