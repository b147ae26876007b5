import { openStore, migrateToLatest } from '/work/main/src/store/db.ts';
import * as m from '/work/main/src/store/repositories/messages.ts';
const store = openStore({ kind: 'sqlite', path: process.argv[2]! });
console.log(await migrateToLatest(store));
console.log('count', await m.countScheduledMessages(store.db, 1));
for (const [limit, offset] of [[100, 0], [100, 999], [100, 1000], [7, 4567], [100, 9950], [100, 10000]]) {
  const a = await m.listScheduledMessages(store.db, 1, limit, offset);
  const b = await store.db.selectFrom('scheduled_messages').select('id').where('account_id', '=', 1).orderBy('id').limit(limit).offset(offset).execute();
  console.log(limit, offset, a.length, JSON.stringify(a.map(r => r.id)) === JSON.stringify(b.map(r => r.id)), a[0]?.id);
}
await store.close();
