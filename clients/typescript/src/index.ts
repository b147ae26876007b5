/**
 * msgsvc-client: a typed client for the Messaging Service HTTP API v1, generated from
 * docs/openapi.json (openapi-typescript → src/schema.d.ts) and called through openapi-fetch, with
 * what a client of this API needs on top:
 * - `access_token` on every request (the query parameter the API reads);
 * - quoted integers (`"Id":"12"`, which the API's clients must accept) turned into numbers in every
 *   record of every JSON response, nested records included, as src/records.ts says where they are;
 * - 429 retried after `Retry-After` (up to `maxRetries` times);
 * - an `Idempotency-Key` (a random UUID) on every POST that has none, the same on each retry, so a
 *   retried POST is never done twice;
 * - `list()`, which follows `Link: <…>; rel=next` to iterate over a whole list.
 */
import { randomUUID } from 'node:crypto';
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import { RECORDS, RESPONSES, type Shape } from './records.ts';
import type { paths } from './schema.js';

export type { components, operations, paths } from './schema.js';

export interface MsgsvcClientOptions {
  /** Where the API is: `https://sms.example.com` (the paths start with /v1/). */
  baseUrl: string;
  /** The account's token, sent as `access_token`. */
  accessToken: string;
  /** How many times a 429 is retried (default 3). */
  maxRetries?: number;
  /** The longest wait before a retry, in milliseconds (default 60 000). */
  maxRetryDelayMs?: number;
  /** The fetch to use (default the global one). */
  fetch?: (request: Request) => Promise<Response>;
}

/** The paths whose GET answers a JSON list: what `list()` iterates over. */
export type ListPath = {
  [P in keyof paths]: paths[P] extends { get: { responses: { 200: { content: { 'application/json': readonly unknown[] } } } } } ? P : never;
}[keyof paths];
/** One record of the list at `P`. */
export type ListItem<P extends ListPath> = paths[P] extends {
  get: { responses: { 200: { content: { 'application/json': readonly (infer T)[] } } } };
}
  ? T
  : never;
/** The query parameters of the list at `P` (page and per-page are set by `list()` itself). */
export type ListQuery<P extends ListPath> = paths[P] extends { get: { parameters: { query?: infer Q } } }
  ? Omit<NonNullable<Q>, 'page'>
  : never;

export type MsgsvcClient = Client<paths> & {
  /** Every record of a list, page after page, following `Link rel=next`. */
  list<P extends ListPath>(path: P, query?: ListQuery<P>): AsyncGenerator<ListItem<P>, void, undefined>;
};

const INTEGER = /^[+-]?\d+$/;

/** `value` with the integers `shape` names turned from quoted text into numbers (when they fit). */
export function normalise(value: unknown, shape: Shape | undefined): unknown {
  if (shape === undefined || value === null || value === undefined) return value;
  if (shape === 'int') {
    if (typeof value === 'string' && INTEGER.test(value)) {
      const n = Number(value);
      return Number.isSafeInteger(n) ? n : value;
    }
    return value;
  }
  if (typeof shape === 'string') return normalise(value, RECORDS[shape.slice(1)]);
  if (Array.isArray(shape)) return Array.isArray(value) ? value.map((item) => normalise(item, shape[0])) : value;
  if (typeof value !== 'object' || Array.isArray(value)) return value;
  const fields = shape as { readonly [field: string]: Shape };
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value as Record<string, unknown>))
    out[key] = Object.hasOwn(fields, key) ? normalise(field, fields[key]) : field;
  return out;
}

/** The shape of a JSON response: the operation's record for a success, the error body otherwise. */
function responseShape(method: string, path: string, status: number): Shape | undefined {
  return RESPONSES[`${method} ${path} ${status}`] ?? (status >= 400 && status !== 422 ? '#Error' : undefined);
}

/** The URL of `rel=next` in a Link header (`<url>; rel=next, <url>; rel=last`), if any. */
export function nextLink(link: string | null): string | undefined {
  if (!link) return undefined;
  for (const part of link.split(/,\s*(?=<)/)) {
    const m = /^<([^>]*)>\s*;(.*)$/.exec(part.trim());
    const rel = m && /(?:^|;)\s*rel\s*=\s*"?([^";]+)"?/i.exec(m[2]!);
    if (rel && rel[1]!.trim().split(/\s+/).includes('next')) return m[1];
  }
  return undefined;
}

/** Milliseconds to wait for a `Retry-After` (seconds, or an HTTP date). */
function retryDelay(header: string | null, max: number): number {
  const seconds = Number(header);
  const ms =
    header !== null && header.trim() !== '' && Number.isFinite(seconds) ? seconds * 1000 : header ? Date.parse(header) - Date.now() : 1000;
  return Math.min(max, Math.max(0, Number.isFinite(ms) ? ms : 1000));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function createMsgsvcClient(options: MsgsvcClientOptions): MsgsvcClient {
  const baseFetch = options.fetch ?? ((request: Request) => fetch(request));
  const maxRetries = options.maxRetries ?? 3;
  const maxDelay = options.maxRetryDelayMs ?? 60_000;
  const baseUrl = options.baseUrl.replace(/\/+$/, '');

  /** Sends `request` with the token and JSON Accept, and an Idempotency-Key on a POST; retries 429. */
  async function send(request: Request): Promise<Response> {
    const url = new URL(request.url);
    url.searchParams.set('access_token', options.accessToken);
    const headers = new Headers(request.headers);
    if (!headers.has('Accept')) headers.set('Accept', 'application/json');
    if (request.method === 'POST' && !headers.has('Idempotency-Key')) headers.set('Idempotency-Key', randomUUID());
    // The body is read once, so every attempt can send it again.
    const body = request.body ? await request.arrayBuffer() : undefined;
    for (let attempt = 0; ; attempt++) {
      const response = await baseFetch(
        new Request(url, { method: request.method, headers, body: body ?? null, signal: request.signal, redirect: request.redirect }),
      );
      if (response.status !== 429 || attempt >= maxRetries) return response;
      await response.body?.cancel();
      await sleep(retryDelay(response.headers.get('Retry-After'), maxDelay));
    }
  }

  /** A JSON response with its quoted integers turned into numbers (others as they are). */
  async function normalised(method: string, path: string, response: Response): Promise<Response> {
    const type = response.headers.get('Content-Type') ?? '';
    if (method === 'HEAD' || response.status === 204 || !type.startsWith('application/json')) return response;
    const text = await response.text();
    const shape = responseShape(method, path, response.status);
    const out = text === '' || shape === undefined ? text : JSON.stringify(normalise(JSON.parse(text), shape));
    const headers = new Headers(response.headers);
    headers.delete('Content-Length');
    return new Response(out, { status: response.status, statusText: response.statusText, headers });
  }

  const middleware: Middleware = {
    onResponse: ({ request, response, schemaPath }) => normalised(request.method, schemaPath, response),
  };
  const client = createClient<paths>({ baseUrl, fetch: send });
  client.use(middleware);

  async function* list<P extends ListPath>(path: P, query?: ListQuery<P>): AsyncGenerator<ListItem<P>, void, undefined> {
    const first = new URL(baseUrl + path);
    for (const [key, value] of Object.entries((query ?? {}) as Record<string, unknown>)) {
      if (value !== undefined && value !== null) first.searchParams.set(key, String(value));
    }
    let next: string | undefined = first.href;
    while (next !== undefined) {
      const response = await normalised('GET', path, await send(new Request(next)));
      if (!response.ok) throw new MsgsvcError(response.status, await response.json().catch(() => undefined));
      for (const item of (await response.json()) as ListItem<P>[]) yield item;
      next = nextLink(response.headers.get('Link'));
    }
  }

  return Object.assign(client, { list });
}

/** An error answer of the API while iterating a list (API.md error body in `body`). */
export class MsgsvcError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(typeof body === 'object' && body !== null && 'message' in body ? String(body.message) : `HTTP ${status}`);
    this.name = 'MsgsvcError';
  }
}
