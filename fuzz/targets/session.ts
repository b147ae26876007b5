/**
 * The credentials of a `/v1` request (docs/API.md §1.2, §15.3) as the whole app reads them:
 * `secretOf` (`access_token`, then `Authorization: Bearer`), then the `msgsvc_session` cookie
 * (`sessionCookieOf`, which parses the Cookie header with the `cookie` package: msgsvc registers no
 * cookie plugin), then at the scope step `csrfHolds` (a write with the cookie needs `X-CSRF-Token`
 * equal to the session's CsrfToken). The target signs in once with a key (`POST
 * /console/api/session` with `Key`), keeps the session's cookie and CsrfToken, and sends requests
 * with `inject` (GET or HEAD `/v1/credits/balance`, POST `/v1/sms/preview`, which writes nothing)
 * whose Cookie, X-CSRF-Token, Authorization and query are the right ones changed once, or
 * rebuilt around them: other cookies, repeated or re-cased names, quotes, %-escapes, spaces,
 * pairs without `=`. Header values are first made what Node's HTTP parser would deliver (Latin-1,
 * no CR, LF or NUL, trimmed of spaces and tabs; a repeated X-CSRF-Token joined with `, `).
 *
 * Oracle: never 5xx; the answer is decided as documented: a key in `access_token` (the last of
 * repeated ones; a list is malformed) or else in `Authorization: Bearer …` authenticates exactly
 * when it is the key's secret (else 401, whatever the cookie); without either, the request is
 * authenticated exactly when the first `msgsvc_session` pair of the Cookie header (name and value
 * trimmed of spaces and tabs, the value %-decoded when it decodes) is the session's value (else
 * 401); and such a request, when it is not GET or HEAD, is refused 403 unless X-CSRF-Token is
 * exactly the session's CsrfToken. Success is 200.
 */
import fc from 'fast-check';
import { parseParams } from '../../src/http/query.ts';
import { buildTestApp, type TestApp } from '../../test/helpers/app.ts';
import { check, type FuzzTarget } from '../target.ts';

type Input = {
  method: string;
  /** The Cookie header's pairs (`$S` stands for the session's value, `$s` for it altered). */
  cookies: string[];
  /** X-CSRF-Token: `$C` the right one; absent when `csrfAbsent`; a list is sent twice. */
  csrf: string[];
  csrfAbsent: boolean;
  /** Authorization (`$K` the key's secret); absent when empty. */
  authorization: string;
  /** access_token parameters (`$K` the key's secret). */
  tokens: string[];
  /** How `$s` alters the value: at, with. */
  at: number;
  with: string;
};

const NAME = 'msgsvc_session';
const cookiePair = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(`${NAME}=$S`, `${NAME}=$S`, ` ${NAME} = $S `, `\t${NAME}=$S\t`) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      `${NAME}=$s`,
      `${NAME}="$S"`,
      `${NAME}=$S;`,
      `${NAME}=$S=`,
      `${NAME}=%$S`,
      `${NAME}=$%`,
      `${NAME}=`,
      `${NAME}`,
    ),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(`MSGSVC_SESSION=$S`, `msgsvc-session=$S`, `msgsvc_session_=$S`, `x${NAME}=$S`, `${NAME}x=$S`, `$S`, `=$S`),
  },
  {
    weight: 3,
    arbitrary: fc.constantFrom('theme=dark', 'a=b=c', 'empty=', 'novalue', '__Host-x=1', '=', '', ' ', 'q="x;y"', 'pct=%zz', '\u00e9=1'),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
);
const inputArb: fc.Arbitrary<Input> = fc.record({
  method: fc.constantFrom('GET', 'GET', 'HEAD', 'POST', 'POST', 'POST'),
  cookies: fc.array(cookiePair, { maxLength: 4 }),
  csrf: fc.oneof(
    { weight: 6, arbitrary: fc.constant<string[]>(['$C']) },
    {
      weight: 3,
      arbitrary: fc.constantFrom<string[]>([' $C '], ['$C$C'], ['$c'], [''], ['$C', '$C'], ['x', '$C'], ['$C\u0000'], ['"$C"']),
    },
    { weight: 1, arbitrary: fc.array(fc.string({ maxLength: 8 }), { minLength: 1, maxLength: 2 }) },
  ),
  csrfAbsent: fc.constantFrom(false, false, false, true),
  authorization: fc.oneof(
    { weight: 8, arbitrary: fc.constant('') },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        'Bearer $K',
        'Bearer  $K ',
        'bearer $K',
        'Bearer\t$K',
        'Bearer',
        'Bearer ',
        'Basic $K',
        'Bearer $Kx',
        'Bearer $K $K',
      ),
    },
  ),
  tokens: fc.oneof(
    { weight: 8, arbitrary: fc.constant<string[]>([]) },
    {
      weight: 2,
      arbitrary: fc.array(
        fc.constantFrom(
          'access_token=$K',
          'access_token=wrong',
          'access_token=',
          'access_token[]=$K',
          'access%5Ftoken=$K',
          'access.token=$K',
        ),
        { minLength: 1, maxLength: 2 },
      ),
    },
  ),
  at: fc.nat({ max: 60 }),
  with: fc.oneof(fc.constantFrom('', 'A', '-', '_', '%41', ' ', ';', '=', '"', 'é'), fc.string({ maxLength: 2 })),
});

let t: TestApp | undefined;
let key = '';
let session = '';
let csrf = '';

/** A header value as Node's HTTP parser delivers it: no CR, LF or NUL (the request would be refused), Latin-1, trimmed of OWS. */
function wire(value: string): string | undefined {
  if (/[\r\n\0]/.test(value) || /[^\u0000-\u00ff]/.test(value)) return undefined;
  // Well under Node's header limit (the real server answers 431 past it; inject has none).
  return value.slice(0, 4096).replace(/^[ \t]+|[ \t]+$/g, '');
}

const short = (v: unknown): string => {
  const text = JSON.stringify(v) ?? 'undefined';
  return text.length > 160 ? `${text.slice(0, 160)}…` : text;
};

function altered(value: string, at: number, w: string): string {
  const i = (Number.isFinite(at) ? Math.abs(Math.trunc(at)) : 0) % (value.length + 1);
  const out = value.slice(0, i) + w + value.slice(i + 1);
  return out === value ? `${value}x` : out;
}

/** The Cookie header as RFC 6265 pairs: the first `msgsvc_session`'s value, trimmed and %-decoded when it decodes. */
function sessionOf(header: string | undefined): string | undefined {
  if (header === undefined || header.length < 2) return undefined;
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq === -1) continue;
    if (pair.slice(0, eq).replace(/^[ \t]+|[ \t]+$/g, '') !== NAME) continue;
    const raw = pair.slice(eq + 1).replace(/^[ \t]+|[ \t]+$/g, '');
    if (!raw.includes('%')) return raw;
    try {
      return decodeURIComponent(raw);
    } catch {
      return raw;
    }
  }
  return undefined;
}

/** The key secret the request carries, as §1.2 reads it: undefined none, null malformed. */
function secretModel(query: string, authorization: string | undefined): string | null | undefined {
  // The query as the app reads it (PHP's rules, src/http/query.ts): the last access_token; a list is malformed.
  const v = parseParams(query).get('access_token');
  const token = v === undefined ? undefined : typeof v === 'string' ? v : null;
  if (token !== undefined) return token;
  if (authorization === undefined) return undefined;
  // `\s`: any white space after the scheme (a no-break space too, which Node delivers as Latin-1), as auth.ts reads it.
  const m = /^Bearer\s+(.*)$/.exec(authorization);
  return m ? m[1]!.replace(/[ \t]+$/, '') : null;
}

export const target: FuzzTarget<Input> = {
  name: 'session',
  oracle:
    'never 5xx; access_token (last; a list is malformed) else Bearer authenticates ⇔ it is the key; else the first msgsvc_session cookie ' +
    '(trimmed, %-decoded) authenticates ⇔ it is the session value; a cookie write needs X-CSRF-Token exactly the CsrfToken (else 403); else 401',
  files: ['src/http/plugins/auth.ts'],
  maxMs: 2000,
  arbitrary: inputArb,
  dictionary: [`${NAME}=`, '; ', ';', '=', '"', '%', '%3D', 'Bearer ', '$S', '$C', '$K', ' ', '\t'],
  async setup() {
    t = await buildTestApp(undefined, { MSGSVC_RATE_LIMIT: '1000000000' }, {});
    key = (await t.seed('fuzz-session')).token;
    const signIn = await t.app.inject({ method: 'POST', url: '/console/api/session', payload: { Key: key } });
    const setCookie = String(signIn.headers['set-cookie'] ?? '');
    session = /msgsvc_session=([^;]*)/.exec(setCookie)?.[1] ?? '';
    const who = await t.app.inject({ method: 'GET', url: '/console/api/session', headers: { cookie: `${NAME}=${session}` } });
    csrf = (JSON.parse(who.body) as { CsrfToken?: string }).CsrfToken ?? '';
    if (signIn.statusCode !== 204 || session === '' || csrf === '') throw new Error(`could not sign in: ${signIn.statusCode} ${who.body}`);
  },
  async teardown() {
    await t?.close();
  },
  async run(input) {
    const fill = (s: string) =>
      String(s)
        .replaceAll('$S', session)
        .replaceAll('$s', altered(session, input.at, input.with))
        .replaceAll('$C', csrf)
        .replaceAll('$c', altered(csrf, input.at, input.with))
        .replaceAll('$K', key);
    const headers: Record<string, string> = {};
    const cookie = input.cookies.length === 0 ? undefined : wire(input.cookies.map(fill).join('; '));
    if (cookie !== undefined && cookie !== '') headers.cookie = cookie;
    // A repeated X-CSRF-Token reaches the app as Node joins it.
    const sentCsrf = input.csrfAbsent || input.csrf.length === 0 ? undefined : wire(input.csrf.map((c) => wire(fill(c)) ?? '').join(', '));
    if (sentCsrf !== undefined && sentCsrf !== '') headers['x-csrf-token'] = sentCsrf;
    const authorization = input.authorization === '' ? undefined : wire(fill(input.authorization));
    if (authorization !== undefined && authorization !== '') headers.authorization = authorization;
    const tokens = input.tokens.map(fill).map((p) => p.replace(/[^\x21-\x7e]|[&#]/g, '')); // what a request target can carry
    // Well under the URL limit (414).
    const query = tokens.length === 0 ? '' : `?${tokens.join('&').slice(0, 2000)}`;
    const method = input.method === 'HEAD' || input.method === 'POST' ? input.method : 'GET';
    const res = await t!.app.inject(
      method === 'POST'
        ? {
            method,
            url: `/v1/sms/preview${query}`,
            headers: { ...headers, 'content-type': 'application/json' },
            payload: { MobilePhone: '+15550100199', Message: 'Hi' },
          }
        : { method, url: `/v1/credits/balance${query}`, headers },
    );
    check(res.statusCode < 500, `${res.statusCode}: ${res.body.slice(0, 200)}`);

    const secret = secretModel(query.slice(1), headers.authorization);
    let expected: number;
    if (secret !== undefined) expected = secret === key ? 200 : 401;
    else if (sessionOf(headers.cookie) !== session) expected = 401;
    else expected = method === 'POST' && headers['x-csrf-token'] !== csrf ? 403 : 200;
    check(
      res.statusCode === expected,
      `${method} cookie=${short(headers.cookie)} csrf=${short(headers['x-csrf-token'])} auth=${short(headers.authorization)} ` +
        `query=${short(query)}: ${res.statusCode}, expected ${expected}: ${res.body.slice(0, 200)}`,
    );
  },
};
