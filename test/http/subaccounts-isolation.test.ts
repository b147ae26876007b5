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
import { buildTestApp } from '../helpers/app.ts';
import { call, UNUSED_ID } from '../helpers/operations.ts';
import { storeTest } from '../helpers/stores.ts';
import { buildWorlds, idLookup, idOperations, snapshot, tableOf, type World } from '../helpers/tenancy.ts';

storeTest(
  'BOLA with sub-accounts: every id of a parent, two children and an unrelated account, with every other key, on every id operation',
  async (t) => {
    const ctx = await buildTestApp(t);
    const { all: worlds, parent, c1, c2 } = await buildWorlds(ctx);
    const idsOf = idLookup(ctx);

    const before = await Promise.all(worlds.map((w) => snapshot(ctx, w.id)));
    const idOps = idOperations();
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
    const { all: worlds } = await buildWorlds(ctx);
    // Each account also holds a long number and a short code of its own (the demo's are shared by all).
    const own = new Map<World, string[]>(worlds.map((w) => [w, w.ownNumbers]));
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
