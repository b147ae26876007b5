/**
 * The tenancy matrix (docs/API.md §1.3, §15, §16), on each store, beyond what
 * test/http/subaccounts-isolation.test.ts already proves for `/v1` with each account's `*` key
 * (every id of a parent, its two sub-accounts and an unrelated account, with every other key, on
 * every operation that takes an `id` or a `number`). Here the same four accounts (the world of
 * test/helpers/tenancy.ts) and:
 *
 * - the console's session cookie as the credential (a person's session and a key's, each sending
 *   its X-CSRF-Token): every id and number of every other account on every such operation, and
 *   every passkey id on `DELETE /console/api/passkeys`;
 * - ids named in bodies and filters (`GroupIds`, `ParentId`, `KeywordId`, `PhoneNumberIds`,
 *   `frfield`, `frcontact`, `PhoneNumberId`, `MmsTemplateId`, `GroupId`, `MediaIds`, a sending or
 *   keyword `Number`, `BatchId`), with every other account's key and person session;
 * - `/admin/v1`: every account credential (keys holding `*` as `access_token` and as Bearer,
 *   people's and keys' console sessions, sub-account keys) on every operator operation, and an
 *   operator key and an operator session on every `/v1` operation, each answered exactly as an
 *   unknown credential (§16.4); a revoked operator key refused everywhere at once; the operator's
 *   ids of accounts that do not exist against those of closed accounts (§16.2, §16.4, §16.5);
 * - a parent reaching its children only through `/v1/subaccounts/…`, never an unrelated account,
 *   its sub-account, a grandchild, itself or a sibling through them (§16.1).
 *
 * "The same answer" is the same status, status text, body (with the id as sent written alike) and
 * headers, but the request id and the rate limit's countdown (test/helpers/tenancy.ts
 * assertSameAnswer); after every refused request no row of any account has changed.
 */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { revokeOperatorKey } from '../../src/domain/operators.ts';
import type { Operation } from '../../src/http/operation.ts';
import { ADMIN_OPERATIONS } from '../../src/http/admin/index.ts';
import { operationsFor } from '../../src/http/routes/index.ts';
import { systemClock } from '../../src/lib/time.ts';
import { createAccount } from '../../src/store/repositories/accounts.ts';
import { insertNumber } from '../../src/store/repositories/numbers.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { assertError, call, fmtTime, nowSeconds, UNUSED_ID } from '../helpers/operations.ts';
import { storeTest } from '../helpers/stores.ts';
import {
  assertSameAnswer,
  buildWorlds,
  idLookup,
  idOperations,
  keySession,
  personSession,
  send,
  snapshot,
  tableOf,
  type Credential,
  type World,
  type Worlds,
} from '../helpers/tenancy.ts';
import { eventually, operatorKey } from '../http/admin/helpers.ts';

const INVALID = 'Your request was made with invalid credentials.';
const FORBIDDEN = 'You are not allowed to perform this action.';
const PASSWORD = 'tenancy passphrase of an owner';

type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Every row of every account of the world (to compare before and after). */
function snapshotAll(ctx: TestApp, worlds: readonly { id: number }[]): Promise<Record<string, unknown[]>[]> {
  return Promise.all(worlds.map((w) => snapshot(ctx, w.id)));
}

async function assertUnchanged(ctx: TestApp, worlds: readonly { id: number; name?: string }[], before: Record<string, unknown[]>[]) {
  const after = await snapshotAll(ctx, worlds);
  for (const [i, w] of worlds.entries()) assert.deepEqual(after[i], before[i], `${w.name ?? w.id}'s rows are unchanged`);
}

/** The newest audit entry's id (0 for none). */
async function lastAuditId(ctx: TestApp): Promise<number> {
  const row = await ctx.store.db.selectFrom('audit_log').select('id').orderBy('id', 'desc').limit(1).executeTakeFirst();
  return row ? Number(row.id) : 0;
}

/**
 * Every audit entry after `since` is in the log of its actor's own account (API.md §15.5): a
 * request naming another account's record is recorded for the caller, never in the log of the
 * account whose id it tried. Returns how many there were.
 */
async function assertAuditInCallersAccounts(ctx: TestApp, since: number): Promise<number> {
  const db = ctx.store.db;
  const rows = await db.selectFrom('audit_log').select(['id', 'account_id', 'actor']).where('id', '>', since).execute();
  const owners = new Map<string, number>();
  for (const u of await db.selectFrom('users').select(['id', 'account_id']).execute()) owners.set(`user:${u.id}`, Number(u.account_id));
  for (const k of await db.selectFrom('api_tokens').select(['id', 'account_id']).execute()) owners.set(`key:${k.id}`, Number(k.account_id));
  for (const row of rows) {
    const who = row.actor.split(':').slice(0, 2).join(':');
    assert.equal(Number(row.account_id), owners.get(who), `audit entry ${row.id} of ${row.actor} is in its own account's log`);
  }
  return rows.length;
}

/** Each account's owner (a person invited with its key) signed in, and a console session of its key. */
async function consoleSessions(ctx: TestApp, worlds: Worlds): Promise<Map<World, { owner: Credential; key: Credential; ownerId: number }>> {
  const out = new Map<World, { owner: Credential; key: Credential; ownerId: number }>();
  for (const [i, w] of worlds.all.entries()) {
    const person = await personSession(ctx, w.token, `owner-${i}@tenancy.example`, PASSWORD);
    const key = await keySession(ctx, w.token, `${w.name}'s key session`);
    out.set(w, { owner: { ...person.cred, label: `${w.name}'s owner session` }, key, ownerId: person.userId });
  }
  return out;
}

/** Methods an operation answers, HEAD included for a read. */
function methodsOf(op: Operation): Method[] {
  return op.methods.flatMap((m): Method[] => (m === 'GET' ? ['GET', 'HEAD'] : [m]));
}

storeTest(
  'console sessions: every id and number of a parent, two children and an unrelated account, with every other account\u2019s person and key session (cookie + X-CSRF-Token), on every /v1 operation that names one, and every passkey id: answered as one that never existed; no row changes',
  async (t) => {
    const ctx = await buildTestApp(t);
    const worlds = await buildWorlds(ctx);
    const { parent, c1, c2 } = worlds;
    const sessions = await consoleSessions(ctx, worlds);
    const credsOf = (w: World) => [sessions.get(w)!.owner, sessions.get(w)!.key];
    const idsOf = idLookup(ctx);

    // A passkey of each owner, and of the account's other person (the member `fill` invited).
    const passkeys = new Map<World, number[]>();
    for (const w of worlds.all) {
      const member = await ctx.store.db
        .selectFrom('users')
        .select('id')
        .where('account_id', '=', w.id)
        .orderBy('id')
        .executeTakeFirstOrThrow();
      const ids: number[] = [];
      for (const userId of [sessions.get(w)!.ownerId, Number(member.id)]) {
        const row = await ctx.store.db
          .insertInto('passkeys')
          .values({
            user_id: userId,
            credential_id: `cred-${userId}`,
            public_key: 'pk',
            counter: 0,
            transports: '[]',
            name: 'Phone',
            created_at: 1,
            last_used_at: null,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        ids.push(Number(row.id));
      }
      passkeys.set(w, ids);
    }
    const passkeyRows = () => ctx.store.db.selectFrom('passkeys').selectAll().orderBy('id').execute();
    const passkeysBefore = await passkeyRows();
    const before = await snapshotAll(ctx, worlds.all);
    const auditBefore = await lastAuditId(ctx);

    let tried = 0;
    const idOps = idOperations(operationsFor(ctx.config));
    assert.ok(idOps.length >= 50, `every operation with an id: ${idOps.length}`);
    for (const op of idOps) {
      const table = tableOf(op.path);
      for (const method of op.methods)
        for (const caller of worlds.all)
          for (const cred of credsOf(caller)) {
            const body = method === 'GET' || method === 'DELETE' ? undefined : {};
            const unused = await send(ctx, cred, { method, path: op.path, query: `id=${UNUSED_ID}`, body });
            for (const target of worlds.all) {
              if (target === caller) continue;
              // The rule itself: a parent reaches its own sub-accounts through subaccounts/….
              if (table === 'accounts' && caller === parent && (target === c1 || target === c2)) continue;
              const targetIds = await idsOf(table, target.id);
              assert.ok(targetIds.length > 0, `${target.name} has no ${table} to try`);
              for (const id of targetIds) {
                const res = await send(ctx, cred, { method, path: op.path, query: `id=${id}`, body });
                tried++;
                const where = `${method} ${op.path}?id=${id} (${target.name}'s) with ${cred.label}`;
                assertSameAnswer(res, unused, where, { got: id, expected: UNUSED_ID });
                assert.ok(res.statusCode === 404 || (res.statusCode === 403 && table === 'accounts'), `${where}: ${res.statusCode}`);
              }
            }
          }
    }

    // The operations that name a number of the account, or a contact by its phone number.
    const byNumber: { id: string; numbers: (w: World) => string[]; never: (n: string) => string; status: number }[] = [
      { id: 'numbers.view', numbers: (w) => w.ownNumbers, never: (n) => (n.length > 6 ? '15550199999' : '77999'), status: 404 },
      { id: 'numbers.update', numbers: (w) => w.ownNumbers, never: (n) => (n.length > 6 ? '15550199999' : '77999'), status: 404 },
      { id: 'contacts.find', numbers: (w) => [w.ownContact], never: () => '15550889999', status: 404 },
      // API.md §10.2.1: 204 whether or not the account knew the number, and only the caller's account is touched.
      { id: 'contacts.erase', numbers: (w) => [w.ownContact], never: () => '15550889999', status: 204 },
    ];
    const numberOps = operationsFor(ctx.config).filter((op) =>
      Object.hasOwn((op.schema.query as { properties?: object } | undefined)?.properties ?? {}, 'number'),
    );
    assert.deepEqual(numberOps.map((op) => op.id).sort(), byNumber.map((b) => b.id).sort(), 'every operation taking a number is tried');
    for (const b of byNumber) {
      const op = numberOps.find((o) => o.id === b.id)!;
      for (const method of op.methods)
        for (const caller of worlds.all)
          for (const cred of credsOf(caller)) {
            const body = method === 'PUT' || method === 'PATCH' ? { MaxPerDay: 5, MaxPerSecond: 5, MaxRecipientsPerMonth: 5 } : undefined;
            for (const target of worlds.all) {
              if (target === caller) continue;
              for (const digits of b.numbers(target)) {
                const never = b.never(digits);
                const res = await send(ctx, cred, { method, path: op.path, query: `number=${digits}`, body });
                const none = await send(ctx, cred, { method, path: op.path, query: `number=${never}`, body });
                tried++;
                const where = `${method} ${op.path}?number=${digits} (${target.name}'s) with ${cred.label}`;
                assertSameAnswer(res, none, where, { got: digits, expected: never });
                assert.equal(res.statusCode, b.status, `${where}: ${res.body}`);
              }
            }
          }
    }

    // A person's passkeys are theirs alone: another account's, and another person's of the same
    // account, answer as an id that never existed (a key's session: the 403 for every id).
    for (const caller of worlds.all)
      for (const cred of credsOf(caller)) {
        const del = (id: number) => send(ctx, cred, { method: 'DELETE', path: '/console/api/passkeys', query: `id=${id}` });
        const unused = await del(UNUSED_ID);
        const others = [...worlds.all.filter((w) => w !== caller).flatMap((w) => passkeys.get(w)!), passkeys.get(caller)![1]!];
        for (const id of others) {
          assertSameAnswer(await del(id), unused, `DELETE /console/api/passkeys?id=${id} with ${cred.label}`, {
            got: id,
            expected: UNUSED_ID,
          });
          tried++;
        }
        if (cred === sessions.get(caller)!.owner) {
          assertError(unused, 404, `Object not found: ${UNUSED_ID}`);
          const listed = await send(ctx, cred, { path: '/console/api/passkeys' });
          assert.deepEqual(
            listed.json<{ Id: number }[]>().map((p) => p.Id),
            [passkeys.get(caller)![0]],
            'a person lists their own passkeys only',
          );
        } else assertError(unused, 403, FORBIDDEN);
      }

    assert.ok(tried > 2500, `${tried} requests tried`);
    t.diagnostic(`${tried} requests with console sessions`);
    await assertUnchanged(ctx, worlds.all, before);
    assert.deepEqual(await passkeyRows(), passkeysBefore, 'no passkey changed');
    // Refusals of writes are in the log, the caller's own (entries come just after their answers).
    await eventually(async () => assert.ok((await assertAuditInCallersAccounts(ctx, auditBefore)) > 1000));
  },
);

/** What a request body or a filter names: a record of a table, or a number the account holds. */
type RefKind = 'groups' | 'contacts' | 'custom_fields' | 'keyword_reservations' | 'mms_templates' | 'media' | 'batches' | 'number';

interface Own {
  group: number;
  contact: number;
  field: number;
  entry: number;
  entryField: number;
  entryContact: number;
  keyword: number;
  template: number;
  scheduled: number;
}

interface RefCase {
  path: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH';
  kind: RefKind;
  /** The 422's field when the reference is not the caller's (body references); undefined for a filter. */
  field?: string;
  query?: (own: Own, x: string) => string;
  body?: (own: Own, x: number | string) => unknown;
}

function refCases(): RefCase[] {
  const future = fmtTime(nowSeconds() + 86_400);
  const to = '+15551234567';
  const cases: RefCase[] = [
    {
      path: '/v1/contacts/create',
      method: 'POST',
      kind: 'groups',
      field: 'GroupIds',
      body: (_o, x) => ({ Number: '+15550177777', GroupIds: [x] }),
    },
    {
      path: '/v1/groups/create',
      method: 'POST',
      kind: 'groups',
      field: 'ParentId',
      body: (_o, x) => ({ fname: 'Ref group', ParentId: x }),
    },
    {
      path: '/v1/groups/create',
      method: 'POST',
      kind: 'keyword_reservations',
      field: 'KeywordId',
      body: (_o, x) => ({ fname: 'Ref group', KeywordId: x }),
    },
    ...(['frfield', 'frcontact'] as const).map((f): RefCase => ({
      path: '/v1/custom-contact-fields-entry/create',
      method: 'POST',
      kind: f === 'frfield' ? 'custom_fields' : 'contacts',
      field: f,
      body: (o, x) => ({ frfield: o.field, frcontact: o.contact, fvalue: 'v', [f]: x }),
    })),
    {
      path: '/v1/mms-templates/create',
      method: 'POST',
      kind: 'media',
      field: 'MediaIds',
      body: (_o, x) => ({ Name: 'Ref template', MediaIds: [x] }),
    },
    { path: '/v1/keyword/reserve', method: 'POST', kind: 'number', field: 'Number', body: (_o, x) => ({ Keyword: 'REFWORD', Number: x }) },
    ...(['/v1/sms/send', '/v1/sms/preview'] as const).flatMap((path): RefCase[] => [
      { path, method: 'POST', kind: 'contacts', field: 'PhoneNumberId', body: (_o, x) => ({ Message: 'm', PhoneNumberId: x }) },
      {
        path,
        method: 'POST',
        kind: 'mms_templates',
        field: 'MmsTemplateId',
        body: (_o, x) => ({ MobilePhone: to, Type_Id: 2, MmsTemplateId: x }),
      },
      { path, method: 'POST', kind: 'number', field: 'Number', body: (_o, x) => ({ MobilePhone: to, Message: 'm', Number: x }) },
    ]),
    { path: '/v1/sms/send-group', method: 'POST', kind: 'groups', field: 'GroupId', body: (_o, x) => ({ Message: 'm', GroupId: x }) },
    {
      path: '/v1/sms/send-group',
      method: 'POST',
      kind: 'mms_templates',
      field: 'MmsTemplateId',
      body: (o, x) => ({ GroupId: o.group, Type_Id: 2, MmsTemplateId: x }),
    },
    {
      path: '/v1/sms/send-group',
      method: 'POST',
      kind: 'number',
      field: 'Number',
      body: (o, x) => ({ Message: 'm', GroupId: o.group, Number: x }),
    },
    {
      path: '/v1/sms/schedule',
      method: 'POST',
      kind: 'mms_templates',
      field: 'MmsTemplateId',
      body: (_o, x) => ({ MobilePhone: to, DateTime: future, Type_Id: 2, MmsTemplateId: x, Subject: 's' }),
    },
    {
      path: '/v1/sms/schedule',
      method: 'POST',
      kind: 'number',
      field: 'Number',
      body: (_o, x) => ({ MobilePhone: to, Message: 'm', DateTime: future, Number: x }),
    },
    // Filters of lists: another account's record filters like one that never existed.
    { path: '/v1/contacts/index', method: 'GET', kind: 'groups', query: (_o, x) => `GroupId=${x}` },
    { path: '/v1/custom-contact-fields-entry/index', method: 'GET', kind: 'custom_fields', query: (_o, x) => `frfield=${x}` },
    { path: '/v1/custom-contact-fields-entry/index', method: 'GET', kind: 'contacts', query: (_o, x) => `frcontact=${x}` },
    { path: '/v1/sms/index', method: 'GET', kind: 'batches', query: (_o, x) => `BatchId=${x}` },
    { path: '/v1/sms/export', method: 'GET', kind: 'batches', query: (_o, x) => `BatchId=${x}` },
    { path: '/v1/keyword/index', method: 'GET', kind: 'number', query: (_o, x) => `Number=${x}` },
    { path: '/v1/keyword/check', method: 'GET', kind: 'number', field: 'Number', query: (_o, x) => `Keyword=FREEWORD&Number=${x}` },
  ];
  // Updates of the caller's own record, by each method.
  for (const method of ['PUT', 'PATCH'] as const) {
    cases.push(
      {
        path: '/v1/contacts/update',
        method,
        kind: 'groups',
        field: 'GroupIds',
        query: (o) => `id=${o.contact}`,
        body: (_o, x) => ({ GroupIds: [x] }),
      },
      {
        path: '/v1/groups/update',
        method,
        kind: 'groups',
        field: 'ParentId',
        query: (o) => `id=${o.group}`,
        body: (_o, x) => ({ ParentId: x }),
      },
      {
        path: '/v1/groups/update',
        method,
        kind: 'keyword_reservations',
        field: 'KeywordId',
        query: (o) => `id=${o.group}`,
        body: (_o, x) => ({ KeywordId: x }),
      },
      {
        path: '/v1/mms-templates/update',
        method,
        kind: 'media',
        field: 'MediaIds',
        query: (o) => `id=${o.template}`,
        body: (_o, x) => ({ MediaIds: [x] }),
      },
      {
        path: '/v1/keyword/update',
        method,
        kind: 'number',
        field: 'Number',
        query: (o) => `id=${o.keyword}`,
        body: (_o, x) => ({ Number: x }),
      },
      {
        path: '/v1/sms/update-scheduled',
        method,
        kind: 'mms_templates',
        field: 'MmsTemplateId',
        query: (o) => `id=${o.scheduled}`,
        body: (_o, x) => ({ Type_Id: 2, MmsTemplateId: x }),
      },
      {
        path: '/v1/sms/update-scheduled',
        method,
        kind: 'number',
        field: 'Number',
        query: (o) => `id=${o.scheduled}`,
        body: (_o, x) => ({ Number: x }),
      },
    );
  }
  for (const method of ['POST', 'PUT', 'PATCH'] as const)
    for (const f of ['frfield', 'frcontact'] as const)
      cases.push({
        path: '/v1/custom-contact-fields-entry/update',
        method,
        kind: f === 'frfield' ? 'custom_fields' : 'contacts',
        field: f,
        query: (o) => `id=${o.entry}`,
        body: (o, x) => ({ frfield: o.entryField, frcontact: o.entryContact, fvalue: 'v', [f]: x }),
      });
  for (const path of ['/v1/groups/add-contacts', '/v1/groups/remove-contacts'])
    cases.push({
      path,
      method: 'POST',
      kind: 'contacts',
      field: 'PhoneNumberIds',
      query: (o) => `id=${o.group}`,
      body: (_o, x) => ({ PhoneNumberIds: [x] }),
    });
  return cases;
}

storeTest(
  'references: every id and number another account holds, named in a body or a filter, with every other account\u2019s key and person session: answered as one that never existed; no row changes',
  async (t) => {
    const ctx = await buildTestApp(t);
    const worlds = await buildWorlds(ctx);
    const sessions = await consoleSessions(ctx, worlds);
    const idsOf = idLookup(ctx);
    const db = ctx.store.db;
    const own = new Map<World, Own>();
    for (const w of worlds.all) {
      const first = async (table: string) => (await idsOf(table, w.id))[0]!;
      const entry = await db
        .selectFrom('custom_field_entries')
        .selectAll()
        .where('account_id', '=', w.id)
        .orderBy('id')
        .executeTakeFirstOrThrow();
      own.set(w, {
        group: await first('groups'),
        contact: await first('contacts'),
        field: (
          await db.selectFrom('custom_fields').select('id').where('account_id', '=', w.id).orderBy('id', 'desc').executeTakeFirstOrThrow()
        ).id,
        entry: Number(entry.id),
        entryField: Number(entry.custom_field_id),
        entryContact: Number(entry.contact_id),
        keyword: await first('keyword_reservations'),
        template: await first('mms_templates'),
        scheduled: await first('scheduled_messages'),
      });
    }
    const foreign = async (kind: RefKind, target: World): Promise<(number | string)[]> =>
      kind === 'number' ? target.ownNumbers : idsOf(kind, target.id);
    const never = (kind: RefKind, x: number | string) => (kind !== 'number' ? UNUSED_ID : String(x).length > 6 ? '15550199999' : '77999');

    const before = await snapshotAll(ctx, worlds.all);
    const cases = refCases();
    const auditBefore = await lastAuditId(ctx);
    let tried = 0;
    for (const c of cases)
      for (const caller of worlds.all)
        for (const cred of [
          { kind: 'key', token: caller.token, label: `${caller.name}'s key` } as Credential,
          sessions.get(caller)!.owner,
        ]) {
          const o = own.get(caller)!;
          const request = (x: number | string) =>
            send(ctx, cred, {
              method: c.method,
              path: c.path,
              ...(c.query ? { query: c.query(o, String(x)) } : {}),
              ...(c.body ? { body: c.body(o, x) } : {}),
            });
          const baseline = new Map<string, LightMyRequestResponse>();
          for (const target of worlds.all) {
            if (target === caller) continue;
            for (const x of await foreign(c.kind, target)) {
              const n = never(c.kind, x);
              let none = baseline.get(String(n));
              if (!none) {
                none = await request(n);
                baseline.set(String(n), none);
                // The reference is what is refused (so the case proves something).
                if (c.field)
                  assert.ok(none.statusCode === 422 && none.body.includes(`"field":"${c.field}"`), `${c.method} ${c.path}: ${none.body}`);
                else assert.equal(none.statusCode, 200, `${c.method} ${c.path}: ${none.body}`);
              }
              const res = await request(x);
              tried++;
              assertSameAnswer(res, none, `${c.method} ${c.path} naming ${target.name}'s ${c.kind} ${x} with ${cred.label}`, {
                got: x,
                expected: n,
              });
            }
          }
        }
    assert.ok(tried > 2000, `${tried} requests tried`);
    t.diagnostic(`${cases.length} references × ${worlds.all.length} callers × 2 credentials: ${tried} requests`);
    await assertUnchanged(ctx, worlds.all, before);
    await eventually(async () => assert.ok((await assertAuditInCallersAccounts(ctx, auditBefore)) > 1000));
  },
);

/** A body for each operator write, so that a request let through would change something. */
function adminBody(op: Operation, target: World): unknown {
  const bodies: Record<string, unknown> = {
    'admin.accounts.create': { Name: 'Intruder' },
    'admin.accounts.update': { Name: 'Taken over', Status: 'suspended' },
    'admin.accounts.credits': { Amount: 1000, Note: 'free credits' },
    'admin.accounts.keys': { Name: 'backdoor' },
    'admin.accounts.users': { Email: 'intruder@example.com', Role: 'owner' },
    'admin.numbers.create': { Number: '15550177001', AccountId: target.id },
    'admin.numbers.update': { AccountId: target.id, Status_Id: 302 },
  };
  return op.methods.some((m) => m !== 'GET' && m !== 'DELETE') ? (bodies[op.id] ?? {}) : undefined;
}

/** The queries of an operator operation: one per account of the world when it names an account or a number. */
function adminQueries(op: Operation, worlds: readonly World[]): string[] {
  const params = Object.keys((op.schema.query as { properties?: object } | undefined)?.properties ?? {});
  if (params.includes('id')) return worlds.map((w) => `id=${w.id}`);
  if (params.includes('number')) return worlds.map((w) => `number=${w.ownNumbers[0]}&AccountId=${w.id}`);
  return [''];
}

/** Everything outside the accounts' own rows a write could touch: accounts, operator tables, the audit log. */
async function serviceState(ctx: TestApp): Promise<unknown> {
  const db = ctx.store.db;
  return {
    accounts: await db.selectFrom('accounts').selectAll().orderBy('id').execute(),
    numbers: await db.selectFrom('account_numbers').selectAll().orderBy('id').execute(),
    keys: (await db.selectFrom('api_tokens').select(['id', 'account_id', 'name', 'revoked_at']).orderBy('id').execute()).length,
    users: (await db.selectFrom('users').select('id').execute()).length,
    audit: (await db.selectFrom('audit_log').select('id').execute()).length,
    operatorSessions: (await db.selectFrom('operator_sessions').select('id').execute()).length,
  };
}

storeTest(
  '/admin/v1 refuses every account credential (`*` keys as access_token and Bearer, owners\u2019 and keys\u2019 sessions with X-CSRF-Token, sub-account keys) on every operator operation, for every account, exactly as an unknown key; an operator key and session on every /v1 operation, and on a person\u2019s own settings, exactly as an unknown one',
  async (t) => {
    const ctx = await buildTestApp(t);
    const worlds = await buildWorlds(ctx);
    const sessions = await consoleSessions(ctx, worlds);
    // A key of a sub-account, made by its parent (API.md §16.1 subaccounts/keys).
    const subKey = await call(ctx.app, {
      method: 'POST',
      path: '/v1/subaccounts/keys',
      token: worlds.parent.token,
      query: `id=${worlds.c1.id}`,
      body: { Name: 'made by the parent' },
    });
    assert.equal(subKey.statusCode, 201, subKey.body);
    const accountCreds: Credential[] = [
      ...worlds.all.flatMap((w): Credential[] => [
        { kind: 'key', token: w.token, label: `${w.name}'s * key` },
        { kind: 'bearer', token: w.token, label: `${w.name}'s * key as Bearer` },
        sessions.get(w)!.owner,
        sessions.get(w)!.key,
      ]),
      { kind: 'key', token: subKey.json<{ Secret: string }>().Secret, label: 'a key made through subaccounts/keys' },
    ];
    const unknownKey: Credential = { kind: 'key', token: 'msk_no-such-key-0123456789abcdef', label: 'an unknown key' };
    const unknowns: Credential[] = [
      { kind: 'bearer', token: 'msk_no-such-key-0123456789abcdef', label: 'an unknown Bearer key' },
      { kind: 'cookie', cookie: 'msgsvc_session=no-such-session-0123456789', csrf: 'x', label: 'an unknown cookie' },
      { kind: 'none', label: 'no credential' },
    ];

    const beforeRows = await snapshotAll(ctx, worlds.all);
    const beforeService = await serviceState(ctx);
    let tried = 0;
    const adminOps = ADMIN_OPERATIONS;
    assert.ok(adminOps.length >= 16, `${adminOps.length} operator operations`);
    for (const op of adminOps)
      for (const method of methodsOf(op))
        for (const [i, query] of adminQueries(op, worlds.all).entries()) {
          const o = { method, path: op.path, query, body: adminBody(op, worlds.all[i] ?? worlds.parent) };
          const unknown = await send(ctx, unknownKey, o);
          assertError(unknown, 401, INVALID);
          for (const cred of [...unknowns, ...accountCreds]) {
            assertSameAnswer(await send(ctx, cred, o), unknown, `${method} ${op.path}?${query} with ${cred.label}`);
            tried++;
          }
        }
    t.diagnostic(`${tried} account credentials tried on /admin/v1`);
    assert.ok(tried > 900, `${tried} requests`);

    // An operator key is no account's key on /v1, and an operator's console session no account's session.
    const op = await operatorKey(ctx, 'night shift');
    const opSession = await keySession(ctx, op.secret, 'the operator\u2019s console session');
    const operatorCreds: Credential[] = [
      { kind: 'key', token: op.secret, label: 'the operator key' },
      { kind: 'bearer', token: op.secret, label: 'the operator key as Bearer' },
      opSession,
    ];
    let v1 = 0;
    for (const v1op of operationsFor(ctx.config)) {
      const params = Object.keys((v1op.schema.query as { properties?: object } | undefined)?.properties ?? {});
      const query = params.includes('id') ? 'id=1' : params.includes('number') ? `number=${worlds.parent.ownNumbers[0]}` : '';
      for (const method of methodsOf(v1op)) {
        const o = { method, path: v1op.path, query, body: method === 'GET' || method === 'HEAD' || method === 'DELETE' ? undefined : {} };
        const unknown = await send(ctx, unknownKey, o);
        assert.equal(unknown.statusCode, 401, `${method} ${v1op.path}: ${unknown.body}`);
        for (const cred of [...operatorCreds, unknowns[1]!]) {
          assertSameAnswer(await send(ctx, cred, o), unknown, `${method} ${v1op.path} with ${cred.label}`);
          v1++;
        }
      }
    }
    // A person's own settings (API.md §16.4: 401 for an operator's session), as for an unknown cookie.
    const own: { method: Method; path: string; query?: string; body?: unknown }[] = [
      { method: 'PUT', path: '/console/api/password', body: { CurrentPassword: PASSWORD, Password: 'another long passphrase' } },
      { method: 'POST', path: '/console/api/2fa', body: {} },
      { method: 'POST', path: '/console/api/2fa/confirm', body: { Code: '123456' } },
      { method: 'DELETE', path: '/console/api/2fa', body: { Code: '123456' } },
      { method: 'GET', path: '/console/api/passkeys' },
      { method: 'POST', path: '/console/api/passkeys/options', body: {} },
      { method: 'POST', path: '/console/api/passkeys', body: { Name: 'x', Response: {} } },
      { method: 'DELETE', path: '/console/api/passkeys', query: 'id=1' },
    ];
    for (const o of own) {
      const unknown = await send(ctx, unknowns[1]!, o);
      assertError(unknown, 401, INVALID);
      assertSameAnswer(await send(ctx, opSession, o), unknown, `${o.method} ${o.path} with the operator's session`);
      v1++;
    }
    t.diagnostic(`${v1} operator credentials tried on /v1 and a person's own settings`);
    await assertUnchanged(ctx, worlds.all, beforeRows);
    const afterService = (await serviceState(ctx)) as { operatorSessions: number };
    assert.deepEqual(
      { ...afterService, operatorSessions: 0 },
      { ...(beforeService as object), operatorSessions: 0 },
      'nothing else changed',
    );
  },
);

storeTest(
  'a revoked operator key is refused at once everywhere, each exactly as an unknown key: every /admin/v1 operation (access_token, Bearer, and its console session), every /v1 operation, the console sign-in; another operator key goes on',
  async (t) => {
    const ctx = await buildTestApp(t);
    const worlds = await buildWorlds(ctx);
    const op = await operatorKey(ctx, 'leaver');
    const other = await operatorKey(ctx, 'stays');
    const session = await keySession(ctx, op.secret, 'the revoked operator\u2019s session');
    const accounts = (c: Credential) => send(ctx, c, { path: '/admin/v1/accounts/index' });
    assert.equal((await accounts({ kind: 'key', token: op.secret, label: '' })).statusCode, 200, 'it worked before');
    assert.equal((await accounts(session)).statusCode, 200, 'its session worked before');
    assert.equal(await revokeOperatorKey({ store: ctx.store, clock: systemClock }, op.id), true);

    const revoked: Credential[] = [
      { kind: 'key', token: op.secret, label: 'the revoked operator key' },
      { kind: 'bearer', token: op.secret, label: 'the revoked operator key as Bearer' },
    ];
    const unknownKey: Credential = { kind: 'key', token: 'msk_no-such-key-0123456789abcdef', label: 'an unknown key' };
    const unknownCookie: Credential = { kind: 'cookie', cookie: 'msgsvc_session=no-such-session-0123456789', csrf: 'x', label: '' };
    const beforeRows = await snapshotAll(ctx, worlds.all);
    const beforeService = await serviceState(ctx);
    let tried = 0;
    for (const aop of ADMIN_OPERATIONS)
      for (const method of methodsOf(aop))
        for (const [i, query] of adminQueries(aop, worlds.all).entries()) {
          const o = { method, path: aop.path, query, body: adminBody(aop, worlds.all[i] ?? worlds.parent) };
          const unknown = await send(ctx, unknownKey, o);
          assertError(unknown, 401, INVALID);
          for (const cred of revoked)
            assertSameAnswer(await send(ctx, cred, o), unknown, `${method} ${aop.path}?${query} with ${cred.label}`);
          assertSameAnswer(
            await send(ctx, session, o),
            await send(ctx, unknownCookie, o),
            `${method} ${aop.path}?${query} with its session`,
          );
          tried += 3;
        }
    for (const v1op of operationsFor(ctx.config))
      for (const method of methodsOf(v1op)) {
        const o = { method, path: v1op.path, body: method === 'GET' || method === 'HEAD' || method === 'DELETE' ? undefined : {} };
        const unknown = await send(ctx, unknownKey, o);
        for (const cred of revoked) assertSameAnswer(await send(ctx, cred, o), unknown, `${method} ${v1op.path} with ${cred.label}`);
        tried += 2;
      }
    // Its session is over (GET /console/api/session) and it signs in no more: as an unknown key.
    assertSameAnswer(
      await send(ctx, session, { path: '/console/api/session' }),
      await send(ctx, unknownCookie, { path: '/console/api/session' }),
      'GET /console/api/session',
    );
    const signIn = (key: string) =>
      ctx.app.inject({
        method: 'POST',
        url: '/console/api/session',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        payload: JSON.stringify({ Key: key }),
      });
    const refused = await signIn(op.secret);
    assertSameAnswer(refused, await signIn('msk_no-such-key-0123456789abcdef'), 'POST /console/api/session with the revoked key');
    assert.deepEqual(refused.json(), [{ field: 'Key', message: 'Key is invalid.' }]);
    t.diagnostic(`${tried} requests with the revoked key`);
    await assertUnchanged(ctx, worlds.all, beforeRows);
    assert.deepEqual(await serviceState(ctx), beforeService, 'nothing else changed');
    // The other operator key is untouched.
    assert.equal((await accounts({ kind: 'key', token: other.secret, label: '' })).statusCode, 200);
    assert.equal((await signIn(other.secret)).statusCode, 204);
  },
);

storeTest(
  'operator: ids of accounts that never existed are 404 on every operation and recorded nowhere; closed accounts (a sub-account and a top-level one) are kept, answer as the docs say, and their keys and sessions are unknown credentials',
  async (t) => {
    const ctx = await buildTestApp(t);
    const worlds = await buildWorlds(ctx);
    const op = await operatorKey(ctx, 'ops');
    const opKey: Credential = { kind: 'key', token: op.secret, label: 'the operator key' };
    const actor = `operator:${op.id}:ops`;
    const sessions = await consoleSessions(ctx, worlds);
    // Closed: Child 2 by its parent (subaccounts/delete), and a top-level account by the operator, after a key of its own.
    const closedSub = worlds.c2;
    assert.equal(
      (await call(ctx.app, { method: 'DELETE', path: '/v1/subaccounts/delete', token: worlds.parent.token, query: `id=${closedSub.id}` }))
        .statusCode,
      204,
    );
    const made = await send(ctx, opKey, { method: 'POST', path: '/admin/v1/accounts/create', body: { Name: 'Gone' } });
    assert.equal(made.statusCode, 201, made.body);
    const gone = made.json<{ Id: number }>().Id;
    const goneKey = await send(ctx, opKey, { method: 'POST', path: '/admin/v1/accounts/keys', query: `id=${gone}`, body: { Name: 'k' } });
    assert.equal(goneKey.statusCode, 201, goneKey.body);
    assert.equal((await send(ctx, opKey, { method: 'DELETE', path: '/admin/v1/accounts/delete', query: `id=${gone}` })).statusCode, 204);
    const closed = [closedSub.id, gone];
    const never = [UNUSED_ID, 2_147_483_648, 0, -1];

    const everyone = [...worlds.all.map((w) => ({ id: w.id, name: w.name })), { id: gone, name: 'Gone' }];
    const beforeRows = await snapshotAll(ctx, everyone);
    const auditCount = async () => (await ctx.store.db.selectFrom('audit_log').select('id').execute()).length;
    const closedWrites: { requestId: string; account: number; operation: string; status: number }[] = [];
    let serial = 0;
    const opCall = (o: { method?: Method; path: string; query?: string; body?: unknown }) =>
      send(ctx, opKey, { ...o, headers: { 'x-request-id': `tenancy-op-${++serial}` } });

    const byId: {
      method: Method;
      path: string;
      operation: string;
      body?: unknown;
      closed: (res: LightMyRequestResponse, id: number) => void;
    }[] = [
      {
        method: 'GET',
        path: '/admin/v1/accounts/view',
        operation: '',
        closed: (res, id) => {
          assert.equal(res.statusCode, 200, res.body);
          assert.deepEqual([res.json<{ Id: number }>().Id, res.json<{ Status: string }>().Status], [id, 'closed']);
        },
      },
      ...(['PUT', 'PATCH'] as const).map((method) => ({
        method,
        path: '/admin/v1/accounts/update',
        operation: method === 'PUT' ? 'admin.accounts.update' : 'admin.accounts.update.patch',
        body: { Status: 'active' },
        closed: (res: LightMyRequestResponse) =>
          assert.deepEqual([res.statusCode, res.json()], [422, [{ field: 'Status', message: 'Status is invalid.' }]]),
      })),
      {
        method: 'DELETE',
        path: '/admin/v1/accounts/delete',
        operation: 'admin.accounts.delete',
        closed: (res) => assert.equal(res.statusCode, 204, `closing again is a 204 that changes nothing: ${res.body}`),
      },
      {
        method: 'POST',
        path: '/admin/v1/accounts/credits',
        operation: 'admin.accounts.credits',
        body: { Amount: 5, Note: 'late' },
        closed: (res) => assert.deepEqual([res.statusCode, res.json()], [422, [{ field: 'Amount', message: 'Amount is invalid.' }]]),
      },
      ...(['keys', 'users'] as const).map((what) => ({
        method: 'POST' as const,
        path: `/admin/v1/accounts/${what}`,
        operation: `admin.accounts.${what}`,
        body: what === 'keys' ? { Name: 'late key' } : { Email: 'late@example.com' },
        closed: (res: LightMyRequestResponse) =>
          assert.deepEqual([res.statusCode, res.json()], [422, [{ field: 'Name', message: 'The account is closed.' }]]),
      })),
    ];
    const idOps = ADMIN_OPERATIONS.filter((o) => adminQueries(o, worlds.all).length > 1 && o.path.includes('/accounts/'));
    assert.deepEqual(
      idOps.flatMap((o) => o.methods.map((m) => `${m} ${o.path}`)).sort(),
      byId.map((b) => `${b.method} ${b.path}`).sort(),
      'every operator operation naming an account by id is tried',
    );
    const countBefore = await auditCount();
    for (const b of byId) {
      const unused = await opCall({ method: b.method, path: b.path, query: `id=${UNUSED_ID}`, body: b.body });
      assertError(unused, 404, `Object not found: ${UNUSED_ID}`);
      for (const id of never)
        assertSameAnswer(
          await opCall({ method: b.method, path: b.path, query: `id=${id}`, body: b.body }),
          unused,
          `${b.method} ${b.path}?id=${id}`,
          { got: id, expected: UNUSED_ID },
        );
      for (const id of closed) {
        const res = await opCall({ method: b.method, path: b.path, query: `id=${id}`, body: b.body });
        b.closed(res, id);
        if (b.operation)
          closedWrites.push({ requestId: `tenancy-op-${serial}`, account: id, operation: b.operation, status: res.statusCode });
      }
    }
    // A number given to an account that never existed, or to a closed one: the same 422.
    const refusedNumber = await opCall({
      method: 'POST',
      path: '/admin/v1/numbers/create',
      body: { Number: '15550177002', AccountId: UNUSED_ID },
    });
    assert.deepEqual(refusedNumber.json(), [{ field: 'AccountId', message: 'Account Id is invalid.' }]);
    for (const id of [...never, ...closed]) {
      const res = await opCall({ method: 'POST', path: '/admin/v1/numbers/create', body: { Number: '15550177002', AccountId: id } });
      assertSameAnswer(res, refusedNumber, `numbers/create for account ${id}`);
      if (closed.includes(id))
        closedWrites.push({ requestId: `tenancy-op-${serial}`, account: id, operation: 'admin.numbers.create', status: 422 });
    }
    // Lists filtered by an account that never existed are empty.
    for (const path of ['/admin/v1/numbers/index', '/admin/v1/audit/index'])
      for (const id of never) {
        const res = await opCall({ path, query: `AccountId=${id}` });
        assert.deepEqual([res.statusCode, res.body], [200, '[]'], `${path}?AccountId=${id}`);
      }

    // The closed accounts' writes are in their own logs, with their statuses; nothing else is anywhere.
    await eventually(async () => {
      for (const id of closed) {
        const rows = await ctx.store.db
          .selectFrom('audit_log')
          .selectAll()
          .where('account_id', '=', id)
          .where('request_id', 'like', 'tenancy-op-%')
          .execute();
        assert.deepEqual(
          rows.map((r) => [r.request_id, r.actor, r.operation, Number(r.status)]).sort(),
          closedWrites
            .filter((w) => w.account === id)
            .map((w) => [w.requestId, actor, w.operation, w.status])
            .sort(),
          `the audit log of closed account ${id}`,
        );
      }
    });
    assert.equal(await auditCount(), countBefore + closedWrites.length, 'a request naming no existing account is recorded nowhere');
    await assertUnchanged(ctx, everyone, beforeRows);

    // A closed account's keys, its people's sessions and its key's sessions are unknown credentials.
    const unknownKey: Credential = { kind: 'key', token: 'msk_no-such-key-0123456789abcdef', label: 'an unknown key' };
    const unknownCookie: Credential = { kind: 'cookie', cookie: 'msgsvc_session=no-such-session-0123456789', csrf: 'x', label: '' };
    const closedCreds: [Credential, Credential][] = [
      [{ kind: 'key', token: closedSub.token, label: 'the closed sub-account’s key' }, unknownKey],
      [{ kind: 'key', token: goneKey.json<{ Secret: string }>().Secret, label: 'the closed account’s key' }, unknownKey],
      [sessions.get(closedSub)!.owner, unknownCookie],
      [sessions.get(closedSub)!.key, unknownCookie],
    ];
    for (const [cred, unknown] of closedCreds)
      for (const o of [
        { path: '/v1/credits/balance' },
        { method: 'POST' as const, path: '/v1/groups/create', body: { fname: 'After closing' } },
        { path: '/console/api/session' },
      ]) {
        const expected = await send(ctx, unknown, o);
        assert.equal(expected.statusCode, 401);
        assertSameAnswer(await send(ctx, cred, o), expected, `${o.method ?? 'GET'} ${o.path} with ${cred.label}`);
      }
    const signIn = (key: string) =>
      ctx.app.inject({
        method: 'POST',
        url: '/console/api/session',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        payload: JSON.stringify({ Key: key }),
      });
    assertSameAnswer(
      await signIn(closedSub.token),
      await signIn('msk_no-such-key-0123456789abcdef'),
      'signing in with a closed account’s key',
    );
    // The operator still sees them, closed.
    const listed = await send(ctx, opKey, { path: '/admin/v1/accounts/index' });
    const statuses = new Map(listed.json<{ Id: number; Status: string }[]>().map((a) => [a.Id, a.Status]));
    assert.deepEqual(
      closed.map((id) => statuses.get(id)),
      ['closed', 'closed'],
    );
  },
);

storeTest(
  'a parent reaches its own sub-accounts only, through /v1/subaccounts/…: never an unrelated account, its sub-account, a grandchild, itself or (from a child) a sibling or parent; numbers move only between a parent and its own child',
  async (t) => {
    const ctx = await buildTestApp(t);
    const worlds = await buildWorlds(ctx);
    const { parent, c1, c2, unrelated } = worlds;
    const db = ctx.store.db;
    // The unrelated account has a sub-account of its own, made through the API, with a key of its own.
    const u1Res = await call(ctx.app, {
      method: 'POST',
      path: '/v1/subaccounts/create',
      token: unrelated.token,
      body: { Name: 'Unrelated child' },
    });
    assert.equal(u1Res.statusCode, 201, u1Res.body);
    const u1Id = u1Res.json<{ Id: number }>().Id;
    const u1Key = await call(ctx.app, {
      method: 'POST',
      path: '/v1/subaccounts/keys',
      token: unrelated.token,
      query: `id=${u1Id}`,
      body: { Name: 'k' },
    });
    assert.equal(u1Key.statusCode, 201, u1Key.body);
    const u1: World = {
      name: 'Unrelated child',
      id: u1Id,
      token: u1Key.json<{ Secret: string }>().Secret,
      ownNumbers: ['15550190010', '77010'],
      ownContact: '',
    };
    // The API makes no grandchild (a sub-account has none of its own: 403); were one in the
    // database, its parent's parent still could not reach it.
    assertError(
      await call(ctx.app, { method: 'POST', path: '/v1/subaccounts/create', token: c1.token, body: { Name: 'Grandchild' } }),
      403,
      FORBIDDEN,
    );
    const gId = await createAccount(db, 'Grandchild', 1);
    await db.updateTable('accounts').set({ parent_id: c1.id }).where('id', '=', gId).execute();
    const g: World = { name: 'Grandchild', id: gId, token: '', ownNumbers: ['15550190011', '77011'], ownContact: '' };
    for (const w of [u1, g]) for (const n of w.ownNumbers) await insertNumber(db, w.id, n, 0, null, 1);
    const sessions = await consoleSessions(ctx, worlds);
    const everyone = [...worlds.all, u1, g];

    // The lists name exactly one's own children.
    const listed = async (token: string, path: string) =>
      (await call(ctx.app, { path, token, query: 'per-page=100' })).json<{ Id: number }[]>().map((r) => r.Id);
    for (const path of ['/v1/subaccounts/index', '/v1/subaccounts/usage']) {
      assert.deepEqual(await listed(parent.token, path), [c1.id, c2.id], `${path} of the parent`);
      assert.deepEqual(await listed(unrelated.token, path), [u1.id], `${path} of the unrelated account`);
    }
    // What the rule allows: the parent views its child and moves a number to it and back.
    assert.equal((await call(ctx.app, { path: '/v1/subaccounts/view', token: parent.token, query: `id=${c1.id}` })).statusCode, 200);
    const move = (method: 'POST' | 'DELETE', number: string, id = c1.id, token = parent.token) =>
      call(ctx.app, { method, path: '/v1/subaccounts/numbers', token, query: `id=${id}`, body: { Number: number } });
    assert.equal((await move('POST', parent.ownNumbers[0]!)).statusCode, 200);
    assert.equal((await move('DELETE', parent.ownNumbers[0]!)).statusCode, 204);

    const before = await snapshotAll(ctx, everyone);
    const subOps = idOperations(operationsFor(ctx.config)).filter((op) => op.resource === 'subaccounts');
    assert.ok(subOps.length >= 8, `${subOps.length} subaccounts operations with an id`);
    const bodyOf = (op: Operation, method: string): unknown => {
      if (method === 'GET' || method === 'DELETE')
        return op.id === 'subaccounts.numbers-remove' ? { Number: parent.ownNumbers[0] } : undefined;
      const bodies: Record<string, unknown> = {
        'subaccounts.update': { Name: 'Taken over', Status: 'suspended' },
        'subaccounts.credits': { Amount: 1 },
        'subaccounts.keys': { Name: 'intruder' },
        'subaccounts.users': { Email: 'intruder@example.com' },
        'subaccounts.numbers': { Number: parent.ownNumbers[0] },
      };
      return bodies[op.id] ?? {};
    };
    let tried = 0;
    // Callers with sub-accounts, and the ids that are not theirs to reach.
    const parents: { caller: World; creds: Credential[]; notMine: World[] }[] = [
      {
        caller: parent,
        creds: [{ kind: 'key', token: parent.token, label: 'the parent’s key' }, sessions.get(parent)!.owner],
        notMine: [unrelated, u1, g, parent],
      },
      {
        caller: unrelated,
        creds: [{ kind: 'key', token: unrelated.token, label: 'the unrelated account’s key' }, sessions.get(unrelated)!.owner],
        notMine: [parent, c1, c2, g, unrelated],
      },
    ];
    for (const op of subOps)
      for (const method of methodsOf(op)) {
        const body = bodyOf(op, method);
        for (const p of parents)
          for (const cred of p.creds) {
            const unused = await send(ctx, cred, { method, path: op.path, query: `id=${UNUSED_ID}`, body });
            assertError(unused, 404, `Object not found: ${UNUSED_ID}`);
            for (const w of p.notMine) {
              const res = await send(ctx, cred, { method, path: op.path, query: `id=${w.id}`, body });
              assertSameAnswer(res, unused, `${method} ${op.path}?id=${w.id} (${w.name}) with ${cred.label}`, {
                got: w.id,
                expected: UNUSED_ID,
              });
              tried++;
            }
          }
        // A child reaches no sub-account at all, whatever the id: its parent, a sibling, itself, another's.
        for (const child of [
          { kind: 'key', token: c1.token, label: 'Child 1’s key' } as Credential,
          sessions.get(c1)!.owner,
          { kind: 'key', token: c2.token, label: 'Child 2’s key' } as Credential,
          { kind: 'key', token: u1.token, label: 'the unrelated child’s key' } as Credential,
        ]) {
          const unused = await send(ctx, child, { method, path: op.path, query: `id=${UNUSED_ID}`, body });
          assertError(unused, 403, FORBIDDEN, 'json');
          for (const w of everyone) {
            assertSameAnswer(
              await send(ctx, child, { method, path: op.path, query: `id=${w.id}`, body }),
              unused,
              `${method} ${op.path}?id=${w.id} with ${child.label}`,
            );
            tried++;
          }
        }
      }
    // Numbers: the parent gives its child only a number it holds itself, and takes back only one the
    // child holds: another account's number (a sibling's, the unrelated account's, its child's, a
    // grandchild's, the parent's own for a take-back) answers as a number nobody holds.
    const neverHeld = (n: string) => (n.length > 6 ? '15550199999' : '77999');
    const tries: { method: 'POST' | 'DELETE'; holders: World[] }[] = [
      { method: 'POST', holders: [c2, unrelated, u1, g] },
      { method: 'DELETE', holders: [parent, c2, unrelated, u1, g] },
    ];
    for (const { method, holders } of tries)
      for (const holder of holders)
        for (const n of holder.ownNumbers) {
          const res = await move(method, n);
          assertSameAnswer(res, await move(method, neverHeld(n)), `${method} subaccounts/numbers ${n} (${holder.name}'s)`);
          assert.deepEqual([res.statusCode, res.json()], [422, [{ field: 'Number', message: 'Number is invalid.' }]]);
          tried++;
        }
    t.diagnostic(`${tried} requests`);
    await assertUnchanged(ctx, everyone, before);
  },
);
