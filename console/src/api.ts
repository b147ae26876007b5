/**
 * The console's one way to the API. It signs in with a session (docs/API.md §15, "People"):
 * `POST /console/api/session` sets the HttpOnly cookie `msgsvc_session`, and every later call goes
 * to this origin with that cookie (`credentials: 'same-origin'`), never with a secret: no token in
 * sessionStorage, none in any URL. Each call that is not GET or HEAD carries `X-CSRF-Token`, the
 * session's `CsrfToken` from `GET /console/api/session`.
 *
 * The `/v1` operations go through the repository's typed client (clients/typescript). That client
 * always puts `access_token` in the URL; the console gives it an empty token and its fetch takes
 * the parameter out again, so the cookie alone authenticates the request.
 *
 * The operator's session (docs/API.md §16.4) opens `/admin/v1` only, with the same cookie and CSRF
 * token: `Api.admin` calls it (`/v1` would answer 401 and sign the operator out).
 *
 * Around every call: a 401 (the session ended, or was never there) returns to sign-in; a 429 shows
 * "slow down" while the client waits for `Retry-After` and retries.
 *
 * Every request carries `X-Msgsvc-Client: console` (CLIENT_HEADER): the API records a change of a
 * contact's opt-out made here with Source `console` in the contact's consent ledger (docs/API.md
 * contacts/consent), where an API client's change is `api` and an import's `import`.
 */
import { createMsgsvcClient, type MsgsvcClient } from '../../clients/typescript/src/index.ts';
import { grants, type Scope } from '../../src/domain/scopes.ts';

/** The header, and its value, that tell the API a request comes from the console. */
export const CLIENT_HEADER = 'X-Msgsvc-Client';
export const CLIENT_NAME = 'console';
/** The header a session's request that is not GET or HEAD must carry (the session's CsrfToken). */
export const CSRF_HEADER = 'X-CSRF-Token';

/** A person of the account (`/v1/users/…`, docs/API.md §15). */
export interface User {
  Id: number;
  Email: string;
  Name: string;
  Role: 'owner' | 'admin' | 'member' | 'viewer';
  TwoFactor: number;
  DateLastSignIn: string | null;
  DateCreated: string;
  DateUpdated: string;
}

/** A key (`/v1/keys/…`); `Secret` only in the answers of create and roll. */
export interface Key {
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

/** An entry of the audit log (`/v1/audit/index`). */
export interface AuditEntry {
  Id: number;
  DateCreated: string;
  Actor: string;
  Ip: string;
  Operation: string;
  ObjectId: string;
  Status: number;
  RequestId: string;
}

/** A passkey of the signed-in person (`/console/api/passkeys`). */
export interface Passkey {
  Id: number;
  Name: string;
  DateCreated: string;
  DateLastUsed: string | null;
}

/**
 * `GET /console/api/session`: who is signed in (a person or a key of an account, or the service's
 * operator with an operator key: docs/API.md §16.4), the account, the scopes held, the CSRF token.
 */
export interface Session {
  User: User | null;
  Key: { Id: number; Name: string } | null;
  /** The account signed in to; null for the operator, who belongs to none. */
  Account: { Id: number; Name: string } | null;
  /** The operator key signed in with; null for an account's session. */
  Operator: { Id: number; Name: string } | null;
  Scopes: string[];
  CsrfToken: string;
  /** The IANA zone every date of every record is written in (the service's). */
  TimeZone: string;
}

/** An answer: the JSON body as `data` on success, as `error` otherwise (undefined when empty). */
export interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** What the shell shows about the API's answers: a 401 (sign in again), a 429 (seconds to wait). */
export interface ApiEvents {
  unauthorized(): void;
  /** A call got 429 (`Retry-After` in seconds, 0 when absent); undefined once every such call got its answer. */
  slowDown(retryAfterSeconds: number | undefined): void;
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Options of a call the typed client has no type for (the operations of §15, the console's own). */
export interface CallOptions {
  query?: Record<string, string>;
  body?: unknown;
}

/** The typed client, plus the session it runs as and calls beyond its schema. */
export type Api = MsgsvcClient & {
  readonly session: Session;
  /** True when the session's credential holds `scope` (the server checks again: a forged call gets 403). */
  can(scope: Scope): boolean;
  /** A `/v1` operation the client's schema does not list yet (keys, users, audit), through the same client. */
  call<T>(method: Method, path: `/v1/${string}`, options?: CallOptions): Promise<Answer<T>>;
  /** A call to the console's own API (`/console/api/…`) with the session's CSRF token; a 401 signs out. */
  own<T>(method: Method, path: `/console/api/${string}`, body?: unknown): Promise<Answer<T>>;
  /** An operator's call (`/admin/v1/…`, docs/API.md §16.4): the cookie, the CSRF token on writes, 429 retried. */
  admin<T>(method: Method, path: `/admin/v1/${string}`, options?: CallOptions): Promise<Answer<T>>;
};

/** How many times a call that got 429 is sent again, and the longest wait before that (as the typed client's). */
const MAX_RETRIES = 10;
const MAX_RETRY_DELAY_MS = 60_000;

/** Milliseconds to wait for a `Retry-After` in seconds (1 s when absent or unreadable), at most MAX_RETRY_DELAY_MS. */
function retryDelay(header: string | null): number {
  const seconds = Number(header);
  return header === null || header.trim() === '' || !Number.isFinite(seconds) ? 1000 : Math.min(MAX_RETRY_DELAY_MS, seconds * 1000);
}

/** True for the methods that change nothing, which need no CSRF token. */
function safe(method: string): boolean {
  return method === 'GET' || method === 'HEAD';
}

/** The JSON body of `response`, or undefined when it has none (204, or not JSON). */
async function jsonBody(response: Response): Promise<unknown> {
  if (response.status === 204) return undefined;
  const text = await response.text();
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A JSON call to `/console/api/…` on this origin, with the cookie, and `csrf` when given. */
export async function consoleRequest<T>(method: Method, path: string, body?: unknown, csrf?: string): Promise<Answer<T>> {
  const headers = new Headers({ Accept: 'application/json', [CLIENT_HEADER]: CLIENT_NAME });
  if (body !== undefined) headers.set('Content-Type', 'application/json');
  if (csrf !== undefined && !safe(method)) headers.set(CSRF_HEADER, csrf);
  const response = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const parsed = await jsonBody(response);
  return response.ok ? { data: parsed as T, response } : { error: parsed, response };
}

/**
 * Where the console notes that this browser signed in (`1`), so that a page opened without a
 * session shows sign-in at once instead of asking the server and getting a 401. It is no secret
 * (the session is the HttpOnly cookie, which scripts cannot read): at worst a stale note costs one
 * 401 and "Your session ended".
 */
const SIGNED_IN_KEY = 'msgsvc.console.signedIn';

/** Notes (or forgets) that this browser has a session. */
export function noteSignedIn(signedIn: boolean): void {
  try {
    if (signedIn) localStorage.setItem(SIGNED_IN_KEY, '1');
    else localStorage.removeItem(SIGNED_IN_KEY);
  } catch {
    // Storage refused (a private window's policy): the console then asks the server each time.
  }
}

/** False when this browser surely has no session (never signed in, or signed out since). */
export function maybeSignedIn(): boolean {
  try {
    return localStorage.getItem(SIGNED_IN_KEY) === '1';
  } catch {
    return true;
  }
}

/** The current session, or undefined when there is none (401) or the server cannot tell (another error). */
export async function loadSession(): Promise<Session | undefined> {
  const { data, response } = await consoleRequest<Session>('GET', '/console/api/session');
  return response.ok && data !== undefined ? data : undefined;
}

/** What `POST /console/api/session` takes: email and password (and a code), a key's secret, or a passkey's answer. */
export type SignInBody = { Email: string; Password: string; Code?: string } | { Key: string } | { ChallengeId: string; Passkey: unknown };

/** Signs in (204 and the cookie on success). */
export function signIn(body: SignInBody): Promise<Answer<undefined>> {
  return consoleRequest('POST', '/console/api/session', body);
}

/** Accepts an invitation: the code of the invite URL and a new password (204 and the cookie). */
export function acceptInvite(code: string, password: string): Promise<Answer<undefined>> {
  return consoleRequest('POST', '/console/api/invite', { Code: code, Password: password });
}

/** Signs out (the cookie is dropped by the server). */
export function signOut(session: Session): Promise<Answer<undefined>> {
  return consoleRequest('DELETE', '/console/api/session', undefined, session.CsrfToken);
}

/** The client for a signed-in `session`; `events` hears of every 401 and 429, and when the calls that got a 429 have their answer. */
export function createApi(session: Session, events: ApiEvents): Api {
  // The calls waiting on a 429 (method and path): the banner stays while any of them does.
  const limited = new Set<string>();
  /** Sends one request with the cookie (and the CSRF token on a write), and tells `events` of a 401 or a 429. */
  async function send(url: URL, init: RequestInit & { method: string }): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set(CLIENT_HEADER, CLIENT_NAME);
    if (!safe(init.method)) headers.set(CSRF_HEADER, session.CsrfToken);
    const response = await fetch(url, { ...init, headers, credentials: 'same-origin' });
    const call = `${init.method} ${url.pathname}`;
    if (response.status === 429) {
      limited.add(call);
      const seconds = Number(response.headers.get('Retry-After'));
      events.slowDown(Number.isFinite(seconds) && seconds > 0 ? seconds : 0);
    } else if (limited.delete(call) && limited.size === 0) {
      events.slowDown(undefined);
    }
    if (response.status === 401) events.unauthorized();
    return response;
  }
  const client = createMsgsvcClient({
    baseUrl: location.origin,
    // The cookie authenticates; the client adds `access_token=` anyway, and the fetch below removes it.
    accessToken: '',
    maxRetries: MAX_RETRIES,
    maxRetryDelayMs: MAX_RETRY_DELAY_MS,
    fetch: async (request) => {
      const url = new URL(request.url);
      url.searchParams.delete('access_token');
      const body = request.body === null ? null : await request.arrayBuffer();
      return send(url, { method: request.method, headers: request.headers, body, signal: request.signal, redirect: request.redirect });
    },
  });

  // The client at run time takes any path; its types know only the paths of its schema.
  type Loose = (path: string, init?: { params?: { query?: Record<string, string> }; body?: unknown }) => Promise<Answer<unknown>>;
  const loose = client as unknown as Record<Method, Loose>;

  return Object.assign(client, {
    session,
    can: (scope: Scope) => grants(session.Scopes, scope),
    call: async <T>(method: Method, path: `/v1/${string}`, options: CallOptions = {}) => {
      const init = {
        ...(options.query ? { params: { query: options.query } } : {}),
        ...(options.body === undefined ? {} : { body: options.body }),
      };
      return (await loose[method](path, init)) as Answer<T>;
    },
    own: async <T>(method: Method, path: `/console/api/${string}`, body?: unknown) => {
      const answer = await consoleRequest<T>(method, path, body, session.CsrfToken);
      if (answer.response.status === 401) events.unauthorized();
      return answer;
    },
    admin: async <T>(method: Method, path: `/admin/v1/${string}`, options: CallOptions = {}) => {
      const url = new URL(path, location.origin);
      for (const [key, value] of Object.entries(options.query ?? {})) url.searchParams.set(key, value);
      const headers = new Headers({ Accept: 'application/json' });
      if (options.body !== undefined) headers.set('Content-Type', 'application/json');
      const body = options.body === undefined ? null : JSON.stringify(options.body);
      for (let attempt = 0; ; attempt++) {
        const response = await send(url, { method, headers, body });
        if (response.status !== 429 || attempt >= MAX_RETRIES) {
          const parsed = await jsonBody(response);
          return (response.ok ? { data: parsed as T, response } : { error: parsed, response }) satisfies Answer<T>;
        }
        await response.body?.cancel();
        await new Promise((resolve) => setTimeout(resolve, retryDelay(response.headers.get('Retry-After'))));
      }
    },
  });
}

/** The API's error answer as one line: a 422's messages, or another error's `message`. */
export function errorText(error: unknown, status: number): string {
  if (Array.isArray(error)) return error.map((e: { message?: unknown }) => (typeof e.message === 'string' ? e.message : '')).join(' ');
  if (typeof error === 'object' && error !== null && 'message' in error) return String(error.message);
  return `The server answered ${status}.`;
}

/** The fields a 422 names (`[{field, message}]`), empty for another answer. */
export function errorFields(error: unknown): { field: string; message: string }[] {
  if (!Array.isArray(error)) return [];
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  return error.map((e: { field?: unknown; message?: unknown }) => ({ field: text(e.field), message: text(e.message) }));
}

/** A list answer's pagination (X-Pagination-* headers, docs/API.md §3.6). */
export interface Pagination {
  page: number;
  pages: number;
  total: number;
  perPage: number;
}

/** The pages of a list answer (X-Pagination-* headers, docs/API.md §3.6). */
export function pagination(response: Response): Pagination {
  const n = (name: string) => Number(response.headers.get(name) ?? '0') || 0;
  return {
    page: n('X-Pagination-Current-Page') || 1,
    pages: n('X-Pagination-Page-Count'),
    total: n('X-Pagination-Total-Count'),
    perPage: n('X-Pagination-Per-Page'),
  };
}
