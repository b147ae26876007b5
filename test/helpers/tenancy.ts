/**
 * The tenancy world of the isolation suites (test/http/subaccounts-isolation.test.ts,
 * test/security/tenancy.test.ts): a parent, its two sub-accounts and an unrelated account, each a
 * demo account (docs/API.md §16.1) filled with one record of every kind the demo does not make, and
 * the pieces those suites share: which table an operation's `id` names, a snapshot of everything an
 * account owns, the ids of each kind per account, console sign-ins (a person's and a key's
 * session, with its CsrfToken), and one request sent with any of the credentials of docs/API.md
 * §1.2 (a key as `access_token` or `Authorization: Bearer`, or the session cookie with
 * `X-CSRF-Token`).
 */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { Operation } from '../../src/http/operation.ts';
import { OPERATIONS } from '../../src/http/routes/index.ts';
import { insertNumber } from '../../src/store/repositories/numbers.ts';
import { TABLES } from '../../src/store/tables.ts';
import type { TestApp } from './app.ts';
import { call } from './operations.ts';

/** One account of the world: its name, id and a key holding `*` (its demo token). */
export interface World {
  name: string;
  id: number;
  token: string;
  /** Numbers this account alone holds: a long number and a short code (the demo's are held by every demo account). */
  ownNumbers: string[];
  /** The E.164 digits of a contact this account alone has (the demo's contacts are the same in every demo account). */
  ownContact: string;
}

/** A parent, its two sub-accounts and an unrelated account, in that order in `all`. */
export interface Worlds {
  all: World[];
  parent: World;
  c1: World;
  c2: World;
  unrelated: World;
}

/** The table whose ids an operation's `id` names, by path. */
export function tableOf(path: string): string {
  const [, , controller = '', action = ''] = path.split('/');
  if (controller === 'sms') {
    if (['view-scheduled', 'update-scheduled', 'cancel-scheduled'].includes(action)) return 'scheduled_messages';
    return 'messages';
  }
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

/** Every /v1 operation whose query takes an `id` (of `ops`, default all of them). */
export function idOperations(ops: readonly Operation[] = OPERATIONS): Operation[] {
  return ops.filter((op) => Object.hasOwn((op.schema.query as { properties?: object } | undefined)?.properties ?? {}, 'id'));
}

/**
 * Notes of a use, not data a request changes: a key's last use (API.md §15.2) and a session's
 * sliding idle limit (§15.3) are written as credentials are used.
 */
const VOLATILE: Readonly<Record<string, readonly string[]>> = {
  api_tokens: ['last_used_at', 'last_ip', 'prefix'],
  sessions: ['last_used_at'],
};

/** Every row of every account table that has an account_id, for one account (and its accounts row). */
export async function snapshot(ctx: TestApp, accountId: number): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const t of TABLES) {
    if (t === 'accounts') continue;
    const rows = (await ctx.store.db
      .selectFrom(t as 'contacts')
      .selectAll()
      .where('account_id', '=', accountId)
      .execute()) as Record<string, unknown>[];
    const drop = VOLATILE[t] ?? [];
    const kept = rows.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !drop.includes(k))));
    kept.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    out[t] = kept;
  }
  out.account = [await ctx.store.db.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirst()];
  return out;
}

/** A POST that must succeed (200 or 201); its record (the first of a list). */
export async function postOk(ctx: TestApp, token: string, path: string, body: unknown, query = ''): Promise<{ Id: number }> {
  const res = await call(ctx.app, { method: 'POST', path, token, body, query });
  assert.ok(res.statusCode === 200 || res.statusCode === 201, `${path}: ${res.statusCode} ${res.body}`);
  const json = res.json<{ Id: number } | { Id: number }[]>();
  return Array.isArray(json) ? json[0]! : json;
}

/**
 * One record of each kind the demo does not make: a message, a batch (send-group to the demo's
 * Staff group), a webhook, a keyword, a key, a person.
 */
async function fill(ctx: TestApp, w: World, n: number): Promise<void> {
  const numbers = await call(ctx.app, { path: '/v1/numbers/index', token: w.token, query: 'per-page=100' });
  const active = numbers.json<{ Number: string; Status_Id: number }[]>().find((x) => x.Status_Id === 0)!.Number;
  await postOk(ctx, w.token, '/v1/sms/send', { Message: `hello ${w.name}`, MobilePhone: '+15551234567', Number: active });
  const groups = await call(ctx.app, { path: '/v1/groups/index', token: w.token, query: 'per-page=100' });
  const staff = groups.json<{ Id: number; Name: string }[]>().find((g) => g.Name === 'Staff')!.Id;
  await postOk(ctx, w.token, '/v1/sms/send-group', { Message: `hello staff of ${w.name}`, GroupId: staff, Number: active });
  await postOk(ctx, w.token, '/v1/webhooks/create', { Url: `https://hooks-${n}.example.com/x`, Events: ['message.sent'] });
  await postOk(ctx, w.token, '/v1/keyword/reserve', { Keyword: `WORD${n}`, Number: active });
  await postOk(ctx, w.token, '/v1/keys/create', { Name: `extra ${w.name}` });
  await postOk(ctx, w.token, '/v1/users/create', { Email: `someone-${n}@example.com` });
  await postOk(ctx, w.token, '/v1/contacts/create', { Number: `+${w.ownContact}`, FirstName: `Only ${w.name}` });
}

/**
 * Seeds the four accounts (each a demo account), makes the children sub-accounts of the parent as
 * subaccounts/create would leave them, fills each with `fill`, gives each a long number and a
 * short code of its own, and a delivery of each webhook (so that webhooks/redeliver has ids).
 */
export async function buildWorlds(ctx: TestApp): Promise<Worlds> {
  const names = ['Parent', 'Child 1', 'Child 2', 'Unrelated'];
  const all: World[] = [];
  for (const [i, name] of names.entries()) {
    const s = await ctx.seed(name);
    all.push({ name, id: s.account.id, token: s.token, ownNumbers: [`1555019000${i}`, `7700${i}`], ownContact: `1555088000${i}` });
  }
  const [parent, c1, c2, unrelated] = all as [World, World, World, World];
  await ctx.store.db.updateTable('accounts').set({ parent_id: parent.id }).where('id', 'in', [c1.id, c2.id]).execute();
  for (const [i, w] of all.entries()) await fill(ctx, w, i);
  // After fill: the first Active number of each account stays the demo's.
  for (const w of all) for (const n of w.ownNumbers) await insertNumber(ctx.store.db, w.id, n, 0, null, 1);
  const hooks = await ctx.store.db.selectFrom('webhooks').select(['id', 'account_id']).execute();
  for (const h of hooks) await insertFailedDelivery(ctx, Number(h.account_id), Number(h.id), `msg_${h.id}`);
  return { all, parent, c1, c2, unrelated };
}

/** A Failed webhook delivery of `message.sent` (something webhooks/redeliver can take); returns its id. */
export async function insertFailedDelivery(ctx: TestApp, accountId: number, webhookId: number, msgId: string): Promise<number> {
  const { id } = await ctx.store.db
    .insertInto('webhook_deliveries')
    .values({
      account_id: accountId,
      webhook_id: webhookId,
      event: 'message.sent',
      msg_id: msgId,
      payload: '{"v":1,"type":"message.sent","at":1,"data":{}}',
      status: 'Failed',
      attempts: 1,
      last_status_code: 500,
      created_at: 1,
      updated_at: 1,
      due_at: null,
      lease_token: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(id);
}

/**
 * The ids of a table per account (the first two by id; for `accounts`, the account itself),
 * looked up once each.
 */
export function idLookup(ctx: TestApp): (table: string, accountId: number) => Promise<number[]> {
  const ids = new Map<string, number[]>();
  return async (table, accountId) => {
    const key = `${table}|${accountId}`;
    let list = ids.get(key);
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
      ids.set(key, list);
    }
    return list;
  };
}

// ---------------------------------------------------------------- credentials (API.md §1.2, §15.3)

/** A credential of API.md §1.2: a key's secret (as `access_token` or Bearer) or a console session. */
export type Credential =
  | { kind: 'key'; token: string; label: string }
  | { kind: 'bearer'; token: string; label: string }
  | { kind: 'cookie'; cookie: string; csrf: string; label: string }
  | { kind: 'none'; label: string };

export interface SendOptions {
  method?: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  /** Extra query text, already encoded. */
  query?: string;
  /** JSON-encoded as the body. */
  body?: unknown;
  headers?: Record<string, string>;
}

/** One request with `cred`: a cookie also sends its X-CSRF-Token (on every method; reads ignore it). */
export function send(ctx: TestApp, cred: Credential, o: SendOptions): Promise<LightMyRequestResponse> {
  const query: string[] = [];
  const headers: Record<string, string> = { accept: 'application/json', ...o.headers };
  if (cred.kind === 'key') query.push(`access_token=${encodeURIComponent(cred.token)}`);
  if (cred.kind === 'bearer') headers.authorization = `Bearer ${cred.token}`;
  if (cred.kind === 'cookie') {
    headers.cookie = cred.cookie;
    headers['x-csrf-token'] = cred.csrf;
  }
  if (o.query) query.push(o.query);
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  return ctx.app.inject({
    method: o.method ?? 'GET',
    url: query.length ? `${o.path}?${query.join('&')}` : o.path,
    headers,
    ...(o.body !== undefined ? { payload: JSON.stringify(o.body) } : {}),
  });
}

/** `name=value` of a response's `msgsvc_session` cookie. */
export function cookieOf(res: LightMyRequestResponse): string {
  const set = res.headers['set-cookie'];
  const line = Array.isArray(set) ? set[0]! : String(set);
  assert.match(line, /^msgsvc_session=[^;]+;/, `a session cookie: ${line}`);
  return line.split(';')[0]!;
}

/** The CsrfToken of a session cookie (GET /console/api/session). */
export async function csrfOf(ctx: TestApp, cookie: string): Promise<string> {
  const res = await ctx.app.inject({ url: '/console/api/session', headers: { cookie, accept: 'application/json' } });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<{ CsrfToken: string }>().CsrfToken;
}

/** A console session signed in with a key's secret (POST /console/api/session `Key`). */
export async function keySession(ctx: TestApp, secret: string, label = 'key session'): Promise<Credential & { kind: 'cookie' }> {
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/console/api/session',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    payload: JSON.stringify({ Key: secret }),
  });
  assert.equal(res.statusCode, 204, res.body);
  const cookie = cookieOf(res);
  return { kind: 'cookie', cookie, csrf: await csrfOf(ctx, cookie), label };
}

/**
 * A person invited with `token` (users/create) who takes the invite with `password`: their user
 * id and their console session (POST /console/api/invite signs them in).
 */
export async function personSession(
  ctx: TestApp,
  token: string,
  email: string,
  password: string,
  role = 'owner',
): Promise<{ userId: number; cred: Credential & { kind: 'cookie' } }> {
  const invited = await call(ctx.app, { method: 'POST', path: '/v1/users/create', token, body: { Email: email, Role: role } });
  assert.equal(invited.statusCode, 201, invited.body);
  const { Id, InviteUrl } = invited.json<{ Id: number; InviteUrl: string }>();
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/console/api/invite',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    payload: JSON.stringify({ Code: InviteUrl.split('#/invite/')[1], Password: password }),
  });
  assert.equal(res.statusCode, 204, res.body);
  const cookie = cookieOf(res);
  return { userId: Id, cred: { kind: 'cookie', cookie, csrf: await csrfOf(ctx, cookie), label: `${email}'s session` } };
}

// ---------------------------------------------------------------- comparing answers

/** Headers that differ between any two requests: the request id, the rate limit's countdown, the date. */
const PER_REQUEST = new Set(['x-request-id', 'x-rate-limit-remaining', 'x-rate-limit-reset', 'date', 'content-length']);

/**
 * Asserts that `res` is the very answer `expected` is: the same status and status text, the same
 * body once each one's own id (`Object not found: {id}`) is written alike, and the same headers
 * (names and values) but those that change with every request. Content-Length matches each body.
 */
export function assertSameAnswer(
  res: LightMyRequestResponse,
  expected: LightMyRequestResponse,
  where: string,
  ids: { got?: string | number; expected?: string | number } = {},
): void {
  const norm = (body: string, id: string | number | undefined) =>
    id === undefined ? body : body.replaceAll(`found: ${id}"`, 'found: ID"').replaceAll(`found: ${id}<`, 'found: ID<');
  assert.equal(res.statusCode, expected.statusCode, `${where}: status ${res.statusCode} (${res.body}), expected ${expected.statusCode}`);
  assert.equal(res.statusMessage, expected.statusMessage, `${where}: status text`);
  assert.equal(norm(res.body, ids.got), norm(expected.body, ids.expected), `${where}: body`);
  // `Link` repeats the request's query (API.md §5): the value sent is written alike there too.
  const linkNorm = (link: unknown, id: string | number | undefined) => {
    if (typeof link !== 'string' || id === undefined) return link;
    // The first parameter with that value: the one the caller sent (`page`, which may hold the same
    // digits, is added after the request's own parameters).
    const v = encodeURIComponent(String(id)).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    return link.replace(new RegExp(`=${v}(?=[&>])`), '=ID');
  };
  const headers = (r: LightMyRequestResponse, id: string | number | undefined) =>
    Object.fromEntries(
      Object.entries(r.headers)
        .filter(([k]) => !PER_REQUEST.has(k.toLowerCase()))
        .map(([k, v]) => [k, k.toLowerCase() === 'link' ? linkNorm(v, id) : v]),
    );
  assert.deepEqual(headers(res, ids.got), headers(expected, ids.expected), `${where}: headers`);
  for (const r of [res, expected]) {
    // A HEAD carries the Content-Length of the GET, without its body.
    if (r.headers['content-length'] !== undefined && r.raw.req.method !== 'HEAD')
      assert.equal(Number(r.headers['content-length']), Buffer.byteLength(r.body), where);
  }
}
