/**
 * Keys and console sessions for the tests (test/http/routes/operations-users.test.ts and
 * operations-keys.test.ts, test/security/keys.test.ts and sessions.test.ts): keys made over the API, people
 * invited and signed in to the console (docs/API.md §15.3–15.4), and requests carrying the
 * session cookie, with or without `X-CSRF-Token`. Everything goes over the wire (app.inject), as
 * an attacker's requests would.
 */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from './app.ts';
import { call } from './operations.ts';

export const UNAUTHORIZED = 'Your request was made with invalid credentials.';
export const FORBIDDEN = 'You are not allowed to perform this action.';
export const LOCKED = 'Rate limit exceeded.';
/** A password the rules accept (12+ characters, not a common one). */
export const PASSWORD = 'a long enough passphrase';

export interface KeyReply {
  Id: number;
  Name: string;
  Prefix: string;
  Scopes: string[];
  AllowedIps: string[];
  DateExpires: string | null;
  DateLastUsed: string | null;
  LastIp: string;
  DateCreated: string;
  DateUpdated: string;
  Secret?: string;
}

export interface UserReply {
  Id: number;
  Email: string;
  Name: string;
  Role: string;
  TwoFactor: number;
  DateLastSignIn: string | null;
  InviteUrl?: string;
}

/** A signed-in console session: the `msgsvc_session=…` pair to send as Cookie, and its CsrfToken. */
export interface Session {
  cookie: string;
  csrf: string;
}

type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** `keys/create` with `token`, which must answer 201; the reply (with `Secret`). */
export async function createKey(ctx: TestApp, token: string, body: unknown): Promise<KeyReply> {
  const res = await call(ctx.app, { method: 'POST', path: '/v1/keys/create', token, body });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<KeyReply>();
}

/** The live (not deleted) keys of an account, as stored: id, scopes (JSON text) and hash. */
export async function liveKeys(ctx: TestApp, accountId: number): Promise<{ id: number; scopes: string; token_hash: string }[]> {
  const rows = await ctx.store.db
    .selectFrom('api_tokens')
    .select(['id', 'scopes', 'token_hash'])
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ id: Number(r.id), scopes: r.scopes, token_hash: r.token_hash }));
}

/** The `name=value` pair of the response's Set-Cookie (the session cookie). */
export function cookieOf(res: LightMyRequestResponse): string {
  const set = res.headers['set-cookie'];
  const line = Array.isArray(set) ? set[0] : set;
  assert.ok(typeof line === 'string', `a Set-Cookie header: ${res.statusCode} ${res.body}`);
  return line.split(';')[0]!;
}

/** One request to the console's session API (JSON body), from `ip`. */
export function consoleApi(
  ctx: TestApp,
  method: Method,
  url: string,
  o: { body?: unknown; cookie?: string; ip?: string; headers?: Record<string, string> } = {},
): Promise<LightMyRequestResponse> {
  return ctx.app.inject({
    method,
    url,
    remoteAddress: o.ip ?? '127.0.0.1',
    headers: {
      accept: 'application/json',
      ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(o.cookie !== undefined ? { cookie: o.cookie } : {}),
      ...o.headers,
    },
    ...(o.body !== undefined ? { payload: JSON.stringify(o.body) } : {}),
  });
}

/** The session behind a cookie: its CsrfToken (GET /console/api/session must answer 200). */
export async function sessionOf(ctx: TestApp, cookie: string): Promise<Session> {
  const res = await consoleApi(ctx, 'GET', '/console/api/session', { cookie });
  assert.equal(res.statusCode, 200, res.body);
  return { cookie, csrf: res.json<{ CsrfToken: string }>().CsrfToken };
}

/** A 204 sign-in answer's session. */
export async function opened(ctx: TestApp, res: LightMyRequestResponse): Promise<Session> {
  assert.equal(res.statusCode, 204, res.body);
  return sessionOf(ctx, cookieOf(res));
}

/** `users/create` with `token`, which must answer 201. */
export async function invite(ctx: TestApp, token: string, body: Record<string, unknown>): Promise<UserReply> {
  const res = await call(ctx.app, { method: 'POST', path: '/v1/users/create', token, body });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<UserReply>();
}

/** The code of an InviteUrl (after `#/invite/`). */
export function codeOf(user: UserReply): string {
  const code = user.InviteUrl?.split('#/invite/')[1];
  assert.ok(code, `an InviteUrl: ${JSON.stringify(user)}`);
  return code;
}

/** Invites a person with `role`, takes the invite with PASSWORD: the user and their first session. */
export async function person(ctx: TestApp, token: string, email: string, role: string): Promise<{ user: UserReply } & Session> {
  const user = await invite(ctx, token, { Email: email, Role: role });
  const session = await opened(
    ctx,
    await consoleApi(ctx, 'POST', '/console/api/invite', { body: { Code: codeOf(user), Password: PASSWORD } }),
  );
  return { user, ...session };
}

/** A new session of a person by email and password, from `ip`. */
export async function signIn(ctx: TestApp, email: string, password = PASSWORD, ip = '127.0.0.1'): Promise<Session> {
  return opened(ctx, await consoleApi(ctx, 'POST', '/console/api/session', { body: { Email: email, Password: password }, ip }));
}

/** A console session signed in with a key's secret. */
export async function keySession(ctx: TestApp, secret: string): Promise<Session> {
  return opened(ctx, await consoleApi(ctx, 'POST', '/console/api/session', { body: { Key: secret } }));
}

/** A `/v1` (or `/admin/v1`) request with the session cookie, `X-CSRF-Token` when `csrf` is given, and a JSON body. */
export function withCookie(
  ctx: TestApp,
  method: Method,
  url: string,
  cookie: string,
  csrf?: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return ctx.app.inject({
    method,
    url,
    headers: {
      accept: 'application/json',
      cookie,
      ...(csrf !== undefined ? { 'x-csrf-token': csrf } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  });
}
