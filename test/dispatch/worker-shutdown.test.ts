/**
 * `msgsvc worker` stops on SIGTERM even when its database has stopped answering (docs/deploy.md:
 * `docker stop` and Compose give a container 10 s before SIGKILL). The case this covers: the
 * database's address vanishes with its container, so the worker's connections are neither answered
 * nor refused, only silent, and every query it has in flight hangs. The worker must still log its
 * shutdown at once and exit 0 well within those 10 s: its queries give up after the statement
 * timeout (`MSGSVC_STATEMENT_TIMEOUT_MS`, 5 s by default), and what the round could not write stays
 * leased in the database for the next worker (docs/RELIABILITY.md "Delivery guarantees").
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testDatabaseUrl } from '../helpers/app.ts';
import { startTcpProxy } from '../helpers/net.ts';
import { storeTest } from '../helpers/stores.ts';
import { until } from '../helpers/wait.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

storeTest(
  'msgsvc worker whose database goes silent (packets dropped, queries in flight) logs its shutdown at SIGTERM and exits 0 within 10 s',
  async (t, kind) => {
    if (kind === 'sqlite') return t.skip('a SQLite file is opened in the process: there is no connection to go silent');
    const dir = mkdtempSync(join(tmpdir(), 'msgsvc-worker-silent-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const url = new URL(await testDatabaseUrl(dir));
    const proxy = await startTcpProxy(Number(url.port || 5432), url.hostname);
    t.after(() => proxy.close());
    url.port = String(proxy.port);
    const child = spawn(process.execPath, ['bin/msgsvc.js', 'worker'], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: url.href, LOG_LEVEL: 'info', MSGSVC_DISPATCH_POLL_MS: '20' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    t.after(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'));
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    // 'close', not 'exit': the exit can come before the last of the output has been read.
    const exited = once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>;
    await until('the worker dispatching', () => (out.includes('msgsvc worker: dispatching') ? true : undefined));

    proxy.blackhole();
    // The worker polls every 20 ms: after half a second its next queries are waiting on silence.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const sent = Date.now();
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    const [code, signal] = await exited;
    clearTimeout(timer);
    const took = Date.now() - sent;
    t.diagnostic(`exited ${took} ms after SIGTERM`);
    assert.equal(signal, null, `killed after 15 s, not exited: ${out}`);
    assert.equal(code, 0, out);
    assert.ok(took < 10_000, `exited ${took} ms after SIGTERM, past the 10 s a container gets: ${out}`);
    assert.match(out, /"signal":"SIGTERM","msg":"worker shutting down"/);
  },
);
