import Database from 'better-sqlite3';
import { copyFileSync, rmSync } from 'node:fs';
for (const auto of [1000, 0]) {
  rmSync('/tmp/ck.db-wal', { force: true }); rmSync('/tmp/ck.db-shm', { force: true });
  copyFileSync('/tmp/t10k.db', '/tmp/ck.db');
  const db = new Database('/tmp/ck.db');
  db.pragma('journal_mode = WAL'); db.pragma('synchronous = NORMAL'); db.pragma(`wal_autocheckpoint = ${auto}`);
  const ins = db.prepare("insert into keyword_reservations (account_id, account_number_id, keyword, keyword_key, autoreply_message, created_at) values (1, 1, ?, ?, 'x', 0)");
  const n = 5000; const times = [];
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) { const t = process.hrtime.bigint(); db.transaction(() => ins.run('k' + i, 'k' + i))(); times.push(Number(process.hrtime.bigint() - t) / 1000); }
  const total = Number(process.hrtime.bigint() - t0) / 1000 / n;
  times.sort((a, b) => a - b);
  console.log(`autocheckpoint ${auto}: mean ${total.toFixed(1)} µs/commit, p50 ${times[n / 2].toFixed(1)}, p99 ${times[Math.floor(n * 0.99)].toFixed(1)}, max ${times[n - 1].toFixed(0)} µs`);
  db.close();
}
