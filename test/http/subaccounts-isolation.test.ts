/**
 * Isolation (BOLA) between a parent, its two sub-accounts and an unrelated account (docs/API.md
 * §16.1): every record id of each account is tried with every other account's `*` key on every
 * operation that takes an `id`. Each answer must be byte-for-byte the answer to an id that never
 * existed (404 `Object not found: {id}`, never a 403 that would reveal it exists), and no row of
 * any account changes. The one exception is the rule itself: a parent reaches its own
 * sub-accounts through `subaccounts/…`; a sub-account's key gets the same 403 there for every id.
 * The same for the operations that name a number of the account by `number` (API.md §17): another
 * account's number, in any writing, answers as a number nobody holds.
 */
import assert from 'node:assert/strict';
import { OPERATIONS } from '../../src/http/routes/index.ts';
import { insertNumber } from '../../src/store/repositories/numbers.ts';
import { TABLES } from '../../src/store/tables.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { call, UNUSED_ID } from '../helpers/operations.ts';
import { storeTest } from '../helpers/stores.ts';

/** The table whose ids an operation's `id` names, by path. */
function tableOf(path: string): string {
  const [, , controller = '', action = ''] = path.split('/');
  if (controller === 'sms')
    return ['view-scheduled', 'update-scheduled', 'cancel-scheduled'].includes(action) ? 'scheduled_messages' : 'messages';
  if (controller === 'webhooks' && action === 'redeliver') return 'webhook_deliveries';
  const tables: Record<string, string> = {
    contacts: 'contacts',
    groups: 'groups',
    'custom-contact-fields': 'custom_fields',
    'custom-contact-fields-entry': 'custom_field_entries',
    keyword: 'keyword_reservations',
    media: 'media',
    'mms-templates': 'mms_templates',
    webhooks: 'webhooks',
    keys: 'api_tokens',
    users: 'users',
    subaccounts: 'accounts',
  };
  const t = tables[controller];
  assert.ok(t, `no table known for ${path}: add it here`);
  return t;
}

/** Every row of every account table that has an account_id, for one account. */
async function snapshot(ctx: TestApp, accountId: number): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const t of TABLES) {
    if (t === 'accounts') continue;
    out[t] = await ctx.store.db
      .selectFrom(t as 'contacts')
      .selectAll()
      .where('account_id', '=', accountId)
      .execute();
    out[t].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  }
  out.account = [await ctx.store.db.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirst()];
  return out;
}

interface World {
  name: string;
  id: number;
  token: string;
}

async function post(ctx: TestApp, token: string, path: string, body: unknown, query = ''): Promise<{ Id: number }> {
  const res = await call(ctx.app, { method: 'POST', path, token, body, query });
  assert.ok(res.statusCode === 200 || res.statusCode === 201, `${path}: ${res.statusCode} ${res.body}`);
  const json = res.json<{ Id: number } | { Id: number }[]>();
  return Array.isArray(json) ? json[0]! : json;
}

/** One record of each kind the demo does not make: a message, a webhook, a keyword, a key, a person. */
async function fill(ctx: TestApp, w: World, n: number): Promise<void> {
  const numbers = await call(ctx.app, { path: '/v1/numbers/index', token: w.token, query: 'per-page=100' });
  const active = numbers.json<{ Number: string; Status_Id: number }[]>().find((x) => x.Status_Id === 0)!.Number;
  await post(ctx, w.token, '/v1/sms/send', { Message: `hello ${w.name}`, MobilePhone: '+15551234567', Number: active });
  await post(ctx, w.token, '/v1/webhooks/create', { Url: `https://hooks-${n}.example.com/x`, Events: ['message.sent'] });
  await post(ctx, w.token, '/v1/keyword/reserve', { Keyword: `WORD${n}`, Number: active });
  await post(ctx, w.token, '/v1/keys/create', { Name: `extra ${w.name}` });
  await post(ctx, w.token, '/v1/users/create', { Email: `someone-${n}@example.com` });
}

storeTest(
  'BOLA with sub-accounts: every id of a parent, two children and an unrelated account, with every other key, on every id operation',
  async (t) => {
    const ctx = await buildTestApp(t);
    const seeds = [await ctx.seed('Parent'), await ctx.seed('Child 1'), await ctx.seed('Child 2'), await ctx.seed('Unrelated')];
    const worlds: World[] = seeds.map((s) => ({ name: s.account.name, id: s.account.id, token: s.token }));
    const [parent, c1, c2] = worlds as [World, World, World, World];
    // The children are made sub-accounts of the parent as subaccounts/create would leave them.
    await ctx.store.db.updateTable('accounts').set({ parent_id: parent.id }).where('id', 'in', [c1.id, c2.id]).execute();
    for (const [i, w] of worlds.entries()) await fill(ctx, w, i);
    // A delivery of each webhook, so that webhooks/redeliver has ids to try.
    const hooks = await ctx.store.db.selectFrom('webhooks').select(['id', 'account_id']).execute();
    for (const h of hooks) {
      await ctx.store.db
        .insertInto('webhook_deliveries')
        .values({
          account_id: Number(h.account_id),
          webhook_id: Number(h.id),
          event: 'message.sent',
          msg_id: `msg_${h.id}`,
          payload: '{"v":1,"type":"message.sent","at":1,"data":{}}',
          status: 'Failed',
          attempts: 1,
          last_status_code: 500,
          created_at: 1,
          updated_at: 1,
          due_at: null,
          lease_token: null,
        })
        .execute();
    }

    const ids = new Map<string, Map<number, number[]>>(); // table → account → ids (two at most)
    const idsOf = async (table: string, accountId: number): Promise<number[]> => {
      let byAccount = ids.get(table);
      if (!byAccount) ids.set(table, (byAccount = new Map()));
      let list = byAccount.get(accountId);
      if (!list) {
        const rows =
          table === 'accounts'
            ? await ctx.store.db.selectFrom('accounts').select('id').where('id', '=', accountId).execute()
            : await ctx.store.db
                .selectFrom(table as 'contacts')
                .select('id')
                .where('account_id', '=', accountId)
                .orderBy('id')
                .limit(2)
                .execute();
        list = rows.map((r) => Number(r.id));
        byAccount.set(accountId, list);
      }
      return list;
    };

    const before = await Promise.all(worlds.map((w) => snapshot(ctx, w.id)));
    const idOps = OPERATIONS.filter((op) =>
      Object.hasOwn((op.schema.query as { properties?: object } | undefined)?.properties ?? {}, 'id'),
    );
    assert.ok(idOps.length >= 50, `every operation with an id: ${idOps.length}`);
    let tried = 0;
    for (const op of idOps) {
      const table = tableOf(op.path);
      for (const method of op.methods)
        for (const caller of worlds) {
          const body = method === 'GET' || method === 'DELETE' ? undefined : {};
          const unused = await call(ctx.app, { method, path: op.path, token: caller.token, query: `id=${UNUSED_ID}`, body });
          for (const target of worlds) {
            if (target === caller) continue;
            // The rule itself: a parent reaches its own sub-accounts through subaccounts/….
            if (table === 'accounts' && caller === parent && (target === c1 || target === c2)) continue;
            const targetIds = await idsOf(table, target.id);
            assert.ok(targetIds.length > 0, `${target.name} has no ${table} to try`);
            for (const id of targetIds) {
              const res = await call(ctx.app, { method, path: op.path, token: caller.token, query: `id=${id}`, body });
              tried++;
              const where = `${method} ${op.path}?id=${id} (${target.name}'s) with ${caller.name}'s key`;
              assert.equal(res.statusCode, unused.statusCode, `${where}: ${res.body}`);
              assert.equal(
                res.body.replaceAll(`found: ${id}"`, 'found: ID"'),
                unused.body.replaceAll(`found: ${UNUSED_ID}"`, 'found: ID"'),
                where,
              );
              assert.ok(res.statusCode === 404 || (res.statusCode === 403 && table === 'accounts'), `${where}: ${res.statusCode}`);
            }
          }
        }
    }
    assert.ok(tried > 1100, `${tried} requests tried`);
    const after = await Promise.all(worlds.map((w) => snapshot(ctx, w.id)));
    for (const [i, w] of worlds.entries()) assert.deepEqual(after[i], before[i], `${w.name}'s rows are unchanged`);
  },
);

storeTest(
  'BOLA with sub-accounts: every number held by one account alone, with every other key, on every operation that takes a number (API.md §17)',
  async (t) => {
    const ctx = await buildTestApp(t);
    const seeds = [await ctx.seed('Parent'), await ctx.seed('Child 1'), await ctx.seed('Child 2'), await ctx.seed('Unrelated')];
    const worlds: World[] = seeds.map((s) => ({ name: s.account.name, id: s.account.id, token: s.token }));
    const [parent, c1, c2] = worlds as [World, World, World, World];
    await ctx.store.db.updateTable('accounts').set({ parent_id: parent.id }).where('id', 'in', [c1.id, c2.id]).execute();
    // Each account also holds a long number and a short code of its own (the demo's are shared by all).
    const own = new Map<World, string[]>();
    for (const [i, w] of worlds.entries()) {
      const mine = [`1555019000${i}`, `7700${i}`];
      for (const n of mine) await insertNumber(ctx.store.db, w.id, n, 0, null, 1);
      own.set(w, mine);
    }
    // A never-held number written the same ways, for the answer each attempt must equal.
    const unused = ['15550199999', '77999'];
    const numberOps = OPERATIONS.filter((op) =>
      Object.hasOwn((op.schema.query as { properties?: object } | undefined)?.properties ?? {}, 'number'),
    ).filter((op) => op.resource === 'numbers');
    assert.deepEqual(numberOps.map((op) => op.id).sort(), ['numbers.update', 'numbers.view']);
    // Each key used once first: its last use is noted on its first request (not data a request changes).
    for (const w of worlds) await call(ctx.app, { path: '/v1/numbers/index', token: w.token });
    const before = await Promise.all(worlds.map((w) => snapshot(ctx, w.id)));
    let tried = 0;
    const written = (digits: string, how: number) =>
      how === 0 || digits.length <= 6 ? digits : `+1 (${digits.slice(1, 4)}) ${digits.slice(4)}`;
    for (const op of numberOps)
      for (const method of op.methods)
        for (const caller of worlds) {
          const body = method === 'GET' ? undefined : { MaxPerDay: 5, MaxRecipientsPerMonth: 5, MaxPerSecond: 5 };
          for (const target of worlds) {
            if (target === caller) continue;
            for (const [k, digits] of own.get(target)!.entries())
              for (const how of [0, 1]) {
                const as = written(digits, how);
                const none = written(unused[k]!, how);
                const query = (n: string) => `number=${encodeURIComponent(n)}`;
                const res = await call(ctx.app, { method, path: op.path, token: caller.token, query: query(as), body });
                const never = await call(ctx.app, { method, path: op.path, token: caller.token, query: query(none), body });
                tried++;
                const where = `${method} ${op.path}?number=${as} (${target.name}'s) with ${caller.name}'s key`;
                assert.equal(res.statusCode, 404, `${where}: ${res.body}`);
                assert.equal(res.body.replace(`found: ${as}"`, 'found: N"'), never.body.replace(`found: ${none}"`, 'found: N"'), where);
              }
          }
        }
    assert.ok(tried >= 100, `${tried} requests tried`);
    const after = await Promise.all(worlds.map((w) => snapshot(ctx, w.id)));
    for (const [i, w] of worlds.entries()) assert.deepEqual(after[i], before[i], `${w.name}'s rows are unchanged`);
    // Each account reaches its own.
    for (const w of worlds) {
      const res = await call(ctx.app, {
        method: 'PUT',
        path: '/v1/numbers/update',
        token: w.token,
        query: `number=${own.get(w)![0]}`,
        body: { MaxPerDay: 5 },
      });
      assert.equal(res.statusCode, 200, res.body);
    }
  },
);
