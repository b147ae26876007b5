/**
 * Shared helpers of the API.md suite (test/conventions-*.test.ts). The expected wording is
 * written out here on purpose (not imported from src), so a change in the server shows up as a
 * failing test.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import type { ConfigSource } from '../../src/config.ts';
import { createAccount, issueToken } from '../../src/domain/accounts.ts';
import type { DemoAccount } from '../../src/domain/demo.ts';
import { buildTestApp, withToken, type TestApp } from './app.ts';
import { XML_DECL } from './operations.ts';
import { onePerStore } from './stores.ts';

import { REASON } from './reasons.ts';

export { REASON };

export const MSG = {
  invalidCredentials: 'Your request was made with invalid credentials.',
  pageNotFound: 'Page not found.',
  notAcceptable: 'None of your requested content types is supported.',
  rateLimited: 'Rate limit exceeded.',
  badJson: 'Invalid JSON data in request body: Syntax error',
  invalidId: 'Invalid data received for parameter "id".',
  internal: 'An internal server error occurred.',
  missing: (name: string) => `Missing required parameters: ${name}`,
  notFound: (id: string | number) => `Object not found: ${id}`,
  methodNotAllowed: (allow: string) => `Method Not Allowed. This URL can only handle the following request methods: ${allow}.`,
  formatNotSupported: (value: string) => `The requested response format is not supported: ${value}`,
};

/** The headers of a request with a JSON body. */
export const JSON_BODY = { 'content-type': 'application/json' };

/** The Allow value of every path (API.md §1.4). */
export const ALLOW: Readonly<Record<string, string>> = {
  '/v1/numbers/index': 'GET, HEAD',
  '/v1/credits/balance': 'GET, HEAD',
  '/v1/sms/single-schedule-messages': 'GET, HEAD',
  '/v1/contacts/find': 'GET, HEAD',
  '/v1/groups/update': 'PUT, PATCH',
  '/v1/custom-contact-fields/update': 'PUT, PATCH',
  '/v1/custom-contact-fields-entry/update': 'POST, PUT, PATCH',
  '/v1/keyword/reserve': 'POST',
};

export const ALL_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
export type Method = (typeof ALL_METHODS)[number];

export const PAGINATION_HEADERS = [
  'x-pagination-total-count',
  'x-pagination-page-count',
  'x-pagination-current-page',
  'x-pagination-per-page',
  'link',
];
export const RATE_HEADERS = ['x-rate-limit-limit', 'x-rate-limit-remaining', 'x-rate-limit-reset'];

export interface Setup {
  ctx: TestApp;
  demo: DemoAccount;
  token: string;
  /** `path` with the demo token (and `extra` query text). */
  url: (path: string, extra?: string) => string;
  inject: TestApp['app']['inject'];
}

/** A fresh app with one seeded demo account. */
export async function setup(
  t: { after(fn: () => unknown): void } | undefined,
  env: ConfigSource = {},
  options: { logDestination?: { write(line: string): void } } = {},
): Promise<Setup> {
  const ctx = await buildTestApp(t, env, options);
  const demo = await ctx.seed();
  return {
    ctx,
    demo,
    token: demo.token,
    url: (path, extra = '') => withToken(path, demo.token, extra),
    inject: ctx.app.inject.bind<TestApp['app']['inject']>(ctx.app),
  };
}

/**
 * One app (with one demo account) per test file and store, built on first use and closed after the
 * file's tests. For tests that keep the default config and do not exhaust the rate limit.
 */
export function sharedSetup(env: ConfigSource = {}): () => Promise<Setup> {
  return onePerStore(
    () => setup(undefined, env),
    (s) => s.ctx.close(),
  );
}

/** A new account with no records and one token. */
export async function emptyAccount(ctx: TestApp, name = 'Empty account'): Promise<{ id: number; token: string }> {
  const id = await createAccount(ctx.store, name);
  const { token } = await issueToken(ctx.store, id, 'test');
  return { id, token };
}

/** Valid request pieces for the demo account's records. */
export function ids(demo: DemoAccount) {
  const entry = demo.customFieldEntries[0]!;
  return {
    group: demo.groups[0]!.Id,
    field: demo.customFields[0]!.Id,
    entry: entry.Id,
    entryBody: { frfield: entry.CustomFieldId, frcontact: entry.PhoneNumberId, fvalue: 'Teal' },
    activeNumber: demo.numbers.find((n) => n.Status_Id === 0)!.Number,
    contactNumber: demo.contacts[0]!.Number,
  };
}

/** The exact API.md §4 error body text. */
export function errorText(status: number, message: string, format: 'json' | 'xml' = 'json'): string {
  const name = REASON[status]!;
  if (format === 'json') return JSON.stringify({ name, message, code: 0, status });
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return `${XML_DECL}\n<response><name>${esc(name)}</name><message>${esc(message)}</message><code>0</code><status>${status}</status></response>\n`;
}

type Res = LightMyRequestResponse;

export function assertNoPagination(res: Res): void {
  for (const h of PAGINATION_HEADERS) assert.equal(res.headers[h], undefined, `${h} must not be on a ${res.statusCode}`);
}

export function assertNoRateHeaders(res: Res): void {
  for (const h of RATE_HEADERS) assert.equal(res.headers[h], undefined, `${h} must not be on a ${res.statusCode}`);
}

export function assertRate(res: Res, limit: number, remaining: number, reset?: number): void {
  assert.equal(res.headers['x-rate-limit-limit'], String(limit), 'X-Rate-Limit-Limit');
  assert.equal(res.headers['x-rate-limit-remaining'], String(remaining), 'X-Rate-Limit-Remaining');
  if (reset !== undefined) assert.equal(res.headers['x-rate-limit-reset'], String(reset), 'X-Rate-Limit-Reset');
}

export interface RawResponse {
  statusCode: number;
  statusMessage: string;
  rawHeaders: string[];
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * One request over a real TCP socket (the app starts listening on first use). The path goes on
 * the request line exactly as given, and the raw header names come back as sent.
 */
export async function rawRequest(
  ctx: TestApp,
  opts: { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<RawResponse> {
  if (!ctx.app.server.listening) await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = ctx.app.server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: opts.method ?? 'GET',
        path: opts.path,
        agent: false,
        headers: { connection: 'close', ...(opts.headers ?? {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            statusCode: res.statusCode ?? 0,
            statusMessage: res.statusMessage ?? '',
            rawHeaders: res.rawHeaders,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

/** Header names as they went on the wire. */
export function rawHeaderNames(res: RawResponse): string[] {
  return res.rawHeaders.filter((_, i) => i % 2 === 0);
}
