import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './net.ts';

/** Helpers for tests that run the real `msgsvc` command (bin/msgsvc.js) in a child process. */

export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const BIN = join(ROOT, 'bin', 'msgsvc.js');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A new temp dir, deleted when the test ends. Its database file is `dir/msgsvc.db` (the path buildTestApp uses). */
export function tempDir(t: { after(fn: () => unknown): void }): { dir: string; dbPath: string } {
  const dir = mkdtempSync(join(tmpdir(), 'msgsvc-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return { dir, dbPath: join(dir, 'msgsvc.db') };
}

/** The environment of a child: ours without any msgsvc setting, plus `env` (undefined removes a key). */
export function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(MSGSVC_|DATABASE_URL$|PORT$|HOST$|LOG_LEVEL$|REDIS_URL$|NODE_OPTIONS$|NODE_TEST_CONTEXT$)/.test(k)) continue;
    out[k] = v;
  }
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete out[k];
    else out[k] = v;
  }
  return out;
}

/** Runs `node bin/msgsvc.js ...args` to completion. */
export function runCli(args: string[], env: Record<string, string | undefined>, timeoutMs = 60_000): Promise<CliResult> {
  return new Promise((resolvePromise) => {
    execFile(process.execPath, [BIN, ...args], { cwd: ROOT, env: childEnv(env), timeout: timeoutMs }, (err, stdout, stderr) => {
      const e = err as (Error & { code?: unknown; signal?: NodeJS.Signals | null }) | null;
      resolvePromise({
        code: e ? (typeof e.code === 'number' ? e.code : null) : 0,
        signal: e?.signal ?? null,
        stdout: String(stdout),
        stderr: String(stderr),
      });
    });
  });
}

/** A running `msgsvc serve` child and everything it has printed so far. */
export interface ServeProcess {
  child: ChildProcess;
  readonly stdout: string;
  readonly stderr: string;
  /** Resolves with stdout once `predicate(stdout)` holds; rejects when the child exits first or after `timeoutMs`. */
  waitForStdout(predicate: (stdout: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Resolves with the exit code and signal (immediately when it already exited). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends SIGTERM (when still running) and waits for the exit. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Spawns `node bin/msgsvc.js serve ...args`; the child is killed when the test ends. */
export function spawnServe(t: { after(fn: () => unknown): void }, args: string[], env: Record<string, string | undefined>): ServeProcess {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], { cwd: ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const listeners = new Set<() => void>();
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    for (const l of listeners) l();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  let exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolvePromise) => {
    child.once('exit', (code, signal) => {
      exitInfo = { code, signal };
      for (const l of listeners) l();
      resolvePromise(exitInfo);
    });
  });
  const proc: ServeProcess = {
    child,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    waitForStdout(predicate, timeoutMs = 60_000) {
      return new Promise((resolvePromise, reject) => {
        const check = () => {
          if (predicate(stdout)) {
            done();
            resolvePromise(stdout);
          } else if (exitInfo) {
            done();
            reject(
              new Error(
                `msgsvc serve exited (${JSON.stringify(exitInfo)}) before the expected output.\nstdout:\n${stdout}\nstderr:\n${stderr}`,
              ),
            );
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`timed out waiting for msgsvc serve output.\nstdout:\n${stdout}\nstderr:\n${stderr}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      });
    },
    exited,
    async stop() {
      if (!exitInfo) child.kill('SIGTERM');
      return exited;
    },
  };
  t.after(async () => {
    if (exitInfo) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => {
      if (!exitInfo) child.kill('SIGKILL');
    }, 5000);
    await exited;
    clearTimeout(timer);
  });
  return proc;
}

/** GETs `url` until the server answers (any status), for up to `timeoutMs`. */
export async function waitForHttp(url: string, timeoutMs = 60_000): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      return await fetch(url);
    } catch (err) {
      last = err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`no HTTP answer from ${url}: ${String(last)}`);
}

/**
 * Creates an account (and a token for it) directly in the SQLite file, without spawning the CLI,
 * for tests whose subject is another command. The store is closed before this returns.
 */
export async function seedAccount(dbPath: string, name = 'Acme Ltd'): Promise<{ account: number; token: string; tokenId: number }> {
  const { openStore, migrateToLatest } = await import('../../src/store/db.ts');
  const { createAccount, issueToken } = await import('../../src/domain/accounts.ts');
  const store = openStore({ kind: 'sqlite', path: dbPath });
  try {
    await migrateToLatest(store);
    const account = await createAccount(store, name);
    const { token, id } = await issueToken(store, account, 'test');
    return { account, token, tokenId: id };
  } finally {
    await store.close();
  }
}

/** PIDs of the live msgsvc children of `pid` (from /proc, Linux), i.e. the workers of a `serve --workers` primary. */
export async function workerPids(pid: number): Promise<number[]> {
  const { readFile, readdir } = await import('node:fs/promises');
  const out: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // Workers run bin/msgsvc.js; tsx may also have started an esbuild service beside them.
      if (Number(fields[1]) === pid && fields[0] !== 'Z' && (await readFile(`/proc/${entry}/cmdline`, 'utf8')).includes('msgsvc.js'))
        out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/**
 * `msgsvc serve ...args` on a fresh SQLite file with one seeded account, logging at info, without
 * the demo, the dispatcher or a practical rate limit: for tests whose subject is the process itself
 * (its log output, its stopping). Resolves once /healthz answers.
 */
export async function serveSeeded(
  t: { after(fn: () => unknown): void },
  args: string[],
): Promise<{ server: ServeProcess; base: string; token: string }> {
  const { dbPath } = tempDir(t);
  const { token } = await seedAccount(dbPath);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = spawnServe(t, args, {
    DATABASE_URL: dbPath,
    PORT: String(port),
    MSGSVC_DEMO: '0',
    MSGSVC_DISPATCHER: '0',
    MSGSVC_RATE_LIMIT: '1000000',
    LOG_LEVEL: 'info',
  });
  await waitForHttp(`${base}/healthz`);
  return { server, base, token };
}
