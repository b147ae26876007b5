/**
 * Stopping never depends on the log (issue 23; docs/RELIABILITY.md "Log lines"). `msgsvc serve`
 * logs to standard output; here that is a pipe whose reader first stops reading (a stalled tee or
 * log shipper: the pipe fills up) and then goes away (it exited). The server keeps answering, a
 * request still arriving when SIGTERM lands is answered, and the process exits 0 within 10 s: the
 * log's last lines are dropped rather than waited for. (With pino.destination, the flush at exit
 * retried forever, first while the pipe was full, then on EPIPE: only SIGKILL ended the process.)
 * The same for the `serve --workers 2` primary and its workers.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { serveSeeded, workerPids, type ServeProcess } from './helpers/cli.ts';
import { until } from './helpers/wait.ts';
import { testStoreKind } from './helpers/stores.ts';

const skip = testStoreKind() === 'postgres' ? 'runs a SQLite-backed server process' : false;

/** True when `pid`'s standard output is in non-blocking mode (O_NONBLOCK in /proc/pid/fdinfo/1). */
function stdoutNonBlocking(pid: number): boolean {
  const flags = /flags:\s+([0-7]+)/.exec(readFileSync(`/proc/${pid}/fdinfo/1`, 'utf8'))?.[1];
  return (parseInt(flags ?? '0', 8) & 0o4000) !== 0;
}

/** Resolves with the exit once the process exits, or with `undefined` after `ms`. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

for (const args of [
  ['--workers', '1'],
  ['--workers', '2'],
]) {
  describe(`msgsvc serve ${args.join(' ')}`, () => {
    test(
      'with stdout a pipe whose reader stopped reading and then went away, SIGTERM still finishes the in-flight request and exits 0 within 10 s',
      { skip, timeout: 60_000 },
      async (t) => {
        const { server, base, token } = await serveSeeded(t, args);
        // Where the test got to, in its diagnostics: a hang (once, in a CI run) then shows its step.
        const stepAt = Date.now();
        const step = (what: string) => t.diagnostic(`${Date.now() - stepAt} ms: ${what}`);
        step('listening');
        const balance = `${base}/v1/credits/balance?access_token=${encodeURIComponent(token)}`;

        // The reader stops reading; ~2 MB of log lines (6 KB each: the URL is logged) fill the pipe.
        server.child.stdout!.pause();
        const pad = 'x'.repeat(6000);
        for (let i = 0; i < 320; i++) {
          const res = await fetch(`${balance}&pad=${pad}`);
          await res.arrayBuffer();
        }
        step('320 requests answered with the output not read');
        const answered = await fetch(balance);
        assert.equal(answered.status, 200, 'the server answers while its log output is full');
        assert.equal(((await answered.json()) as { AvailableCredits: unknown }).AvailableCredits, 0);

        // A request whose body is still arriving when SIGTERM lands.
        const req = request(`${base}/v1/groups/create?access_token=${encodeURIComponent(token)}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
          // Connection: close, so that the process exits once it has answered: a connection kept
          // alive after its answer holds the close until the client lets go (not this test's subject).
          agent: false,
        });
        const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
          req.on('response', (res) => {
            let body = '';
            res.on('data', (d: Buffer) => (body += d.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          });
          req.on('error', reject);
        });
        req.write('{"fname":"Sent during');
        await sleep(300);
        const sigtermAt = Date.now();
        server.child.kill('SIGTERM');
        step('SIGTERM sent');
        const exit = within(server.exited, 10_000);
        const exitedAt = server.exited.then(() => Date.now());
        await sleep(300);
        req.end(' shutdown"}');
        const res = await response;
        step('the in-flight request answered');
        assert.equal(res.status, 201, res.body);
        assert.equal((JSON.parse(res.body) as { Name: string }).Name, 'Sent during shutdown');

        // Then the reader goes away for good (it exited): writes to the pipe now fail with EPIPE.
        await sleep(1500);
        server.child.stdout!.destroy();
        const exited = await exit;
        if (exited) t.diagnostic(`exited ${(await exitedAt) - sigtermAt} ms after SIGTERM`);
        else server.child.kill('SIGKILL'); // the old failure: the flush at exit never ends
        assert.deepEqual(
          exited,
          { code: 0, signal: null },
          `exit 0 within 10 s of SIGTERM (undefined: still running)\nstderr:\n${server.stderr}`,
        );
      },
    );
  });
}

/** Without /proc (not Linux) the worker processes cannot be found. */
const skipCluster = skip || (existsSync('/proc/self/fdinfo') ? false : 'needs /proc (Linux)');

/** `serve --workers 2` with a seeded account, once both workers run: the primary's and the workers' pids, and a balance URL. */
async function startCluster(t: { after(fn: () => unknown): void }) {
  const { server, base, token } = await serveSeeded(t, ['--workers', '2']);
  const primary = server.child.pid!;
  const workers = await until('two workers', async () => {
    const pids = await workerPids(primary);
    return pids.length === 2 ? pids : undefined;
  });
  return { server, primary, workers, balance: `${base}/v1/credits/balance?access_token=${encodeURIComponent(token)}` };
}

/** `count` balance requests, one at a time, each answered 200 within 5 s. */
async function answersBalance(balance: string, count: number, what: string): Promise<void> {
  for (let i = 0; i < count; i++) {
    const res = await fetch(balance, { signal: AbortSignal.timeout(5000) });
    assert.equal(res.status, 200, what);
    await res.arrayBuffer();
  }
}

/** Sends SIGTERM and expects exit 0 within 10 s (SIGKILL otherwise, so that the test ends). */
async function stopsWithin10s(t: { diagnostic(message: string): void }, server: ServeProcess): Promise<void> {
  const sigtermAt = Date.now();
  server.child.kill('SIGTERM');
  const exited = await within(server.exited, 10_000);
  if (exited) t.diagnostic(`exited ${Date.now() - sigtermAt} ms after SIGTERM`);
  else server.child.kill('SIGKILL');
  assert.deepEqual(
    exited,
    { code: 0, signal: null },
    `exit 0 within 10 s of SIGTERM (undefined: still running)\nstderr:\n${server.stderr}`,
  );
}

describe('msgsvc serve --workers 2, a worker restarting', () => {
  test(
    'while stdout is a pipe nobody reads, a worker that exits and its replacement leave the primary and the other worker writing without blocking: requests are answered and SIGTERM exits 0 within 10 s',
    { skip: skipCluster, timeout: 60_000 },
    async (t) => {
      // The cause this guards against: the non-blocking mode belongs to the open file, which
      // inherited descriptors share; forking a child makes its stdio blocking (libuv), and a Node
      // process restores its starting mode when it exits. With the workers sharing the primary's
      // stdout, one worker exiting left it blocking, and the next write to the full pipe waited forever.
      const { server, primary, workers, balance } = await startCluster(t);

      // The reader stops reading for good; ~2 MB of log lines fill the pipe.
      server.child.stdout!.pause();
      const pad = 'x'.repeat(6000);
      for (let i = 0; i < 320; i++) await (await fetch(`${balance}&pad=${pad}`)).arrayBuffer();

      // One worker exits (0, it was told to stop); the primary forks a replacement.
      process.kill(workers[0]!, 'SIGTERM');
      await until('a replacement worker', async () => {
        const pids = await workerPids(primary);
        return pids.length === 2 && !pids.includes(workers[0]!) ? pids : undefined;
      });
      await sleep(300); // the primary's and the workers' next log batches are due every 100 ms
      assert.ok(stdoutNonBlocking(primary), "the primary's stdout is still non-blocking");

      await answersBalance(balance, 20, 'answered after the restart with the output still full');
      await stopsWithin10s(t, server);
    },
  );
});

describe('msgsvc serve --workers 2, stderr gone', () => {
  test(
    "a worker's standard error relayed to a standard error whose reader has gone does not stop the primary",
    { skip: skipCluster, timeout: 60_000 },
    async (t) => {
      const { server, workers, balance } = await startCluster(t);
      server.child.stderr!.destroy();
      // SIGUSR1 opens Node's inspector in the worker, which says so on its standard error: the
      // primary relays that line into a pipe nobody reads any more (EPIPE).
      process.kill(workers[0]!, 'SIGUSR1');
      await sleep(1000);
      await answersBalance(balance, 10, 'the cluster still answers');
      await stopsWithin10s(t, server);
    },
  );
});
