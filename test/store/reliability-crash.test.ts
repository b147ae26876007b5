/**
 * Crash durability: under a concurrent write load (group updates, entry updates, keyword
 * reservations) the real server process (`msgsvc serve` on a SQLite file) is killed with SIGKILL
 * at a random moment, restarted on the same file, and the data is checked:
 *   - every write that got a 2xx is there (or was overwritten by a later write of the same writer);
 *   - nothing is there that was never sent, and nothing that got an error;
 *   - no write is half-applied (a group's name and note come from the same request; a keyword's
 *     autoreply belongs to its keyword) and the database passes integrity and foreign-key checks.
 * Each writer owns its rows and writes sequentially, so at most one of its writes is in flight
 * when the process dies: that one may or may not have landed.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { createDemoAccount, type DemoAccount } from '../../src/domain/demo.ts';
import { recordMappers } from '../../src/records/index.ts';
import { createTimeFormat } from '../../src/lib/time.ts';
import { migrateToLatest, openStore } from '../../src/store/db.ts';
import { startServerProcess, type ServerProcess } from '../helpers/net.ts';
import { assertLedgerAddsUp } from '../helpers/ledger.ts';
import { storeTest } from '../helpers/stores.ts';

const ROUNDS = 3;
// [sqlite] cases only ({ stores: ['sqlite'] }): kills a SQLite-backed server process.

interface Write {
  /** Unique text of this write (a group name, an entry value, a keyword). */
  value: string;
  /** Id the server returned (keyword reservations). */
  id?: number;
}

/** One writer: it owns its rows and sends one write at a time. */
interface Writer {
  kind: 'group' | 'entry' | 'keyword';
  target: number;
  acked: Write[];
  rejected: Write[];
  inFlight: Write | undefined;
}

async function seedDatabase(dbPath: string): Promise<DemoAccount> {
  const store = openStore({ kind: 'sqlite', path: dbPath });
  try {
    await migrateToLatest(store);
    return await createDemoAccount(store, recordMappers(createTimeFormat('UTC')), 'US', 'Crash test');
  } finally {
    await store.close();
  }
}

function requestFor(w: Writer, round: number, seq: number, demo: DemoAccount, activeNumber: string) {
  const token = encodeURIComponent(demo.token);
  const tag = `r${round}-${w.kind}${w.target}-${seq}`;
  if (w.kind === 'group') {
    return {
      value: tag,
      method: 'PUT',
      path: `/v1/groups/update?id=${w.target}&access_token=${token}`,
      body: { fname: `name-${tag}`, fnote: `note-${tag}` },
    };
  }
  if (w.kind === 'entry') {
    const entry = demo.customFieldEntries.find((e) => e.Id === w.target)!;
    return {
      value: tag,
      method: 'POST',
      path: `/v1/custom-contact-fields-entry/update?id=${w.target}&access_token=${token}`,
      body: { frfield: entry.CustomFieldId, frcontact: String(entry.PhoneNumberId), fvalue: `value-${tag}` },
    };
  }
  return {
    value: tag,
    method: 'POST',
    path: `/v1/keyword/reserve?access_token=${token}`,
    body: { Keyword: `KW-${tag}`, Number: activeNumber, AutoreplyMessage: `reply-${tag}` },
  };
}

async function runWriter(
  server: ServerProcess,
  w: Writer,
  round: number,
  demo: DemoAccount,
  activeNumber: string,
  onAck: () => void,
): Promise<void> {
  for (let seq = 1; ; seq++) {
    const r = requestFor(w, round, seq, demo, activeNumber);
    w.inFlight = { value: r.value };
    let status: number;
    let text: string;
    try {
      const res = await fetch(`${server.url}${r.path}`, {
        method: r.method,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(r.body),
        signal: AbortSignal.timeout(5000),
      });
      status = res.status;
      text = await res.text();
    } catch {
      return; // the server died with this write in flight: it may or may not have landed
    }
    const write: Write = { value: r.value };
    if (status >= 200 && status < 300) {
      if (w.kind === 'keyword') write.id = (JSON.parse(text) as { Id: number }[])[0]!.Id;
      w.acked.push(write);
      onAck();
    } else {
      w.rejected.push(write);
    }
    w.inFlight = undefined;
  }
}

function check(dbPath: string, round: number, writers: Writer[], previous: Map<string, string>): void {
  const db = new SQLite(dbPath);
  try {
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok', 'integrity_check');
    assert.deepEqual(db.pragma('foreign_key_check'), [], 'foreign_key_check');
    for (const w of writers) {
      const last = w.acked.at(-1)?.value;
      const key = `${w.kind}${w.target}`;
      const allowed = new Set([last ?? previous.get(key), w.inFlight?.value].filter((v): v is string => v !== undefined));
      for (const bad of w.rejected) assert.ok(!allowed.has(bad.value) || w.inFlight?.value === bad.value);
      if (w.kind === 'group') {
        const row = db.prepare('SELECT name, note FROM groups WHERE id = ?').get(w.target) as { name: string; note: string };
        const tag = row.name.replace(/^name-/, '');
        assert.equal(row.note, `note-${tag}`, `group ${w.target}: name and note come from one write (${row.name} / ${row.note})`);
        if (allowed.size > 0)
          assert.ok(allowed.has(tag), `group ${w.target} holds ${tag}; expected one of ${[...allowed].join(', ')} (round ${round})`);
        previous.set(key, tag);
      } else if (w.kind === 'entry') {
        const row = db.prepare('SELECT entry FROM custom_field_entries WHERE id = ?').get(w.target) as { entry: string };
        const tag = row.entry.replace(/^value-/, '');
        if (allowed.size > 0)
          assert.ok(allowed.has(tag), `entry ${w.target} holds ${tag}; expected one of ${[...allowed].join(', ')} (round ${round})`);
        previous.set(key, tag);
      } else {
        const rows = db
          .prepare('SELECT id, keyword, autoreply_message FROM keyword_reservations WHERE keyword LIKE ? ORDER BY id')
          .all(`KW-r${round}-keyword${w.target}-%`) as { id: number; keyword: string; autoreply_message: string }[];
        const present = new Map(rows.map((r) => [r.keyword.slice('KW-'.length), r]));
        for (const a of w.acked) {
          const row = present.get(a.value);
          assert.ok(row, `acknowledged keyword ${a.value} (id ${a.id}) survived the crash (round ${round})`);
          assert.equal(row.id, a.id, `keyword ${a.value} kept its id`);
        }
        for (const [tag, row] of present) {
          assert.equal(row.autoreply_message, `reply-${tag}`, `keyword ${tag}: autoreply from the same write`);
          assert.ok(
            w.acked.some((a) => a.value === tag) || w.inFlight?.value === tag,
            `keyword ${tag} was acknowledged or in flight (round ${round})`,
          );
        }
      }
    }
  } finally {
    db.close();
  }
}

storeTest(
  'kill -9 under concurrent writes: every acknowledged write survives, none is half-applied',
  { stores: ['sqlite'], timeout: 120_000 },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'msgsvc-crash-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const dbPath = join(dir, 'msgsvc.db');
    const demo = await seedDatabase(dbPath);
    const activeNumber = demo.numbers.find((n) => n.Status_Id === 0)!.Number;
    const env = { DATABASE_URL: dbPath, MSGSVC_RATE_LIMIT: '1000000', LOG_LEVEL: 'warn' };
    const previous = new Map<string, string>();
    let server: ServerProcess | undefined;
    t.after(() => server?.stop('SIGKILL'));
    const totals = { acked: 0, inFlight: 0 };

    server = await startServerProcess(env);
    for (let round = 1; round <= ROUNDS; round++) {
      const writers: Writer[] = [
        ...demo.groups.slice(0, 4).map((g) => ({ kind: 'group' as const, target: g.Id })),
        ...demo.customFieldEntries.slice(0, 3).map((e) => ({ kind: 'entry' as const, target: e.Id })),
        ...[1, 2, 3].map((k) => ({ kind: 'keyword' as const, target: k })),
      ].map((w) => ({ ...w, acked: [], rejected: [], inFlight: undefined }));
      let acks = 0;
      let firstAck!: () => void;
      const loaded = new Promise<void>((resolve) => (firstAck = resolve));
      const running = writers.map((w) => runWriter(server!, w, round, demo, activeNumber, () => ++acks === 1 && firstAck()));
      await loaded;
      // A random moment into the load: between 0.3 and 1.5 s after the first acknowledged write.
      await new Promise((r) => setTimeout(r, 300 + Math.floor(Math.random() * 1200)));
      const code = await server.stop('SIGKILL');
      assert.equal(server.child.signalCode, 'SIGKILL', `killed by SIGKILL (exit ${code})`);
      await Promise.all(running);
      const inFlight = writers.filter((w) => w.inFlight).length;
      totals.acked += acks;
      totals.inFlight += inFlight;
      assert.ok(acks >= 10, `round ${round}: real load before the kill (${acks} acknowledged writes)`);
      for (const w of writers) assert.deepEqual(w.rejected, [], `round ${round}: no write was refused under load (${w.kind} ${w.target})`);

      // Restart on the same file (SQLite recovers the WAL) and check the data while it serves; the
      // next round's load then runs against this process.
      server = await startServerProcess(env);
      const res = await fetch(`${server.url}/v1/credits/balance?access_token=${encodeURIComponent(demo.token)}`);
      assert.equal(res.status, 200, 'the restarted server serves');
      check(dbPath, round, writers, previous);
      // Across the kill: every account's credit ledger adds up to its balance (API.md §10.1.1).
      const store = openStore({ kind: 'sqlite', path: dbPath });
      try {
        await assertLedgerAddsUp(store, `round ${round}`);
      } finally {
        await store.close();
      }
      t.diagnostic(`round ${round}: ${acks} acknowledged writes, ${inFlight} in flight at the kill`);
    }
    await server.stop('SIGTERM');
    server = undefined;
    t.diagnostic(
      `${ROUNDS} rounds: ${totals.acked} acknowledged writes all present, ${totals.inFlight} in-flight writes resolved either way`,
    );
  },
);
