import Database from 'better-sqlite3';
const db = new Database(process.argv[2]);
db.pragma('journal_mode = WAL');
const dv = db.prepare('PRAGMA data_version');
const dvp = db.prepare('PRAGMA data_version').pluck();
const cr = db.prepare('select available_credits from credit_balances where account_id = ?');
function bench(name, fn, n = 200000) {
  for (let i = 0; i < 10000; i++) fn();
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn();
  console.log(name, Number(process.hrtime.bigint() - t) / n, 'ns');
}
bench('data_version get', () => dv.get());
bench('data_version pluck', () => dvp.get());
bench('credits get', () => cr.get(1));
bench('credits get arr', () => cr.get([1]));
