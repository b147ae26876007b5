/**
 * What a SIGKILL loses of the log (issue 15; docs/RELIABILITY.md "Log lines"): request lines go to
 * standard output in batches (src/http/log.ts: pino.destination with minLength 4096, sync: false,
 * flushed every 100 ms), so a process killed with SIGKILL loses the lines still in its buffer: at
 * most those of the requests answered in the last ~100 ms. Here the real `msgsvc serve` answers
 * requests one after another for ~0.8 s and is killed right after the last answer; then:
 *   - every line that arrived is whole JSON (no torn line), and names a request that was answered;
 *   - every request answered 500 ms or more before the kill has its line (the flush works: a
 *     buffer held until 4 KiB or exit would lose far older lines at this rate);
 *   - the loss is reported (lines lost, and how long before the kill the oldest lost one was answered).
 */
import assert from 'node:assert/strict';
import { serveSeeded } from '../helpers/cli.ts';
import { storeTest } from '../helpers/stores.ts';

// [sqlite] cases only ({ stores: ['sqlite'] }): kills a SQLite-backed server process.

storeTest(
  'SIGKILL loses only the log lines of the last ~100 ms, and no line is torn',
  { stores: ['sqlite'], timeout: 30_000 },
  async (t) => {
    const { server, base, token } = await serveSeeded(t, []);

    const answeredAt = new Map<string, number>();
    const until = Date.now() + 800;
    for (let i = 0; Date.now() < until; i++) {
      const id = `loss-${i}`;
      const res = await fetch(`${base}/v1/credits/balance?access_token=${encodeURIComponent(token)}`, { headers: { 'X-Request-Id': id } });
      assert.equal(res.status, 200);
      await res.arrayBuffer();
      answeredAt.set(id, performance.now());
    }
    const killedAt = performance.now();
    server.child.kill('SIGKILL');
    const exit = await server.exited;
    assert.equal(exit.signal, 'SIGKILL');

    const lines = server.stdout.split('\n').filter((l) => l !== '');
    const logged = new Set<string>();
    for (const line of lines) {
      const entry = JSON.parse(line) as { msg?: string; reqId?: string };
      if (entry.msg === 'request' && entry.reqId?.startsWith('loss-')) {
        assert.ok(answeredAt.has(entry.reqId), `a logged request was answered: ${entry.reqId}`);
        logged.add(entry.reqId);
      }
    }
    const lost = [...answeredAt].filter(([id]) => !logged.has(id));
    const oldestLostMs = lost.length === 0 ? 0 : killedAt - Math.min(...lost.map(([, at]) => at));
    t.diagnostic(
      `answered ${answeredAt.size} requests in 0.8 s; lines lost to SIGKILL: ${lost.length}; oldest lost answered ${oldestLostMs.toFixed(0)} ms before the kill`,
    );
    for (const [id, at] of lost) {
      assert.ok(killedAt - at < 500, `${id}, answered ${(killedAt - at).toFixed(0)} ms before the kill, has no log line`);
    }
    // The answers were on the wire before the kill, so their lines were formatted; only the batch went.
    assert.ok(logged.size > 0, 'lines reach standard output while the server runs');
  },
);
