import { openStore } from '../../src/store/db.ts';
import * as accounts from '../../src/store/repositories/accounts.ts';
const store = openStore({ kind: 'sqlite', path: process.argv[2]! });
async function bench(name: string, fn: () => Promise<unknown> | unknown, n = 100000) {
  for (let i = 0; i < 10000; i++) await fn();
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await fn();
  console.log(name, (Number(process.hrtime.bigint() - t) / n).toFixed(0), 'ns');
}
await bench('getCredits', () => accounts.getCredits(store.db, 1));
await bench('findLiveToken', () => accounts.findLiveToken(store.db, 'abc'));
await bench('kysely getCredits', () => store.db.selectFrom('credit_balances').select('available_credits').where('account_id', '=', 1).executeTakeFirst());
await store.close();
