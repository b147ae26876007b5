/**
 * The console's one way to the API: the repository's typed client (clients/typescript) on this
 * origin, with the token from sessionStorage (this tab only; never in a URL of the console, never
 * logged). The API reads the token only from the `access_token` query parameter (docs/API.md §1.2),
 * so the client puts it in each request's URL to this origin; the server masks it in its logs.
 *
 * Around every call: a 401 forgets the token and returns to sign-in; a 429 shows "slow down" while
 * the client waits for `Retry-After` and retries.
 *
 * Every request carries `X-Msgsvc-Client: console` (CLIENT_HEADER): the API records a change of a
 * contact's opt-out made here with Source `console` in the contact's consent ledger (docs/API.md
 * contacts/consent), where an API client's change is `api` and an import's `import`.
 */
import { createMsgsvcClient, type MsgsvcClient } from '../../clients/typescript/src/index.ts';

const TOKEN_KEY = 'msgsvc.console.token';
/** The header, and its value, that tell the API a request comes from the console. */
export const CLIENT_HEADER = 'X-Msgsvc-Client';
export const CLIENT_NAME = 'console';

export function storedToken(): string | undefined {
  return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
}

export function storeToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
}

export function forgetToken(): void {
  sessionStorage.removeItem(TOKEN_KEY);
}

/** What the shell shows about the API's answers: a 401 (sign in again), a 429 (seconds to wait). */
export interface ApiEvents {
  unauthorized(): void;
  /** A call got 429 (`Retry-After` in seconds, 0 when absent); undefined once every such call got its answer. */
  slowDown(retryAfterSeconds: number | undefined): void;
}

/** A client for `token`; `events` hears of every 401 and 429, and when the calls that got a 429 have their answer. */
export function createApi(token: string, events: ApiEvents): MsgsvcClient {
  // The calls waiting on a 429 (method and path): the banner stays while any of them does.
  const limited = new Set<string>();
  return createMsgsvcClient({
    baseUrl: location.origin,
    accessToken: token,
    maxRetries: 10,
    maxRetryDelayMs: 60_000,
    fetch: async (request) => {
      request.headers.set(CLIENT_HEADER, CLIENT_NAME);
      const response = await fetch(request);
      const call = `${request.method} ${new URL(request.url).pathname}`;
      if (response.status === 429) {
        limited.add(call);
        const seconds = Number(response.headers.get('Retry-After'));
        events.slowDown(Number.isFinite(seconds) && seconds > 0 ? seconds : 0);
      } else if (limited.delete(call) && limited.size === 0) {
        events.slowDown(undefined);
      }
      if (response.status === 401) {
        forgetToken();
        events.unauthorized();
      }
      return response;
    },
  });
}

/** The API's error answer as one line: a 422's messages, or another error's `message`. */
export function errorText(error: unknown, status: number): string {
  if (Array.isArray(error)) return error.map((e: { message?: unknown }) => (typeof e.message === 'string' ? e.message : '')).join(' ');
  if (typeof error === 'object' && error !== null && 'message' in error) return String(error.message);
  return `The server answered ${status}.`;
}

/** The pages of a list answer (X-Pagination-* headers, docs/API.md §3.6). */
export function pagination(response: Response): { page: number; pages: number; total: number } {
  const n = (name: string) => Number(response.headers.get(name) ?? '0') || 0;
  return { page: n('X-Pagination-Current-Page') || 1, pages: n('X-Pagination-Page-Count'), total: n('X-Pagination-Total-Count') };
}
