/**
 * The Idempotency-Key header and the request fingerprint (docs/API.md §7,
 * src/http/plugins/idempotency.ts), as the plugin's preHandler uses them: `idempotencyKeyOf` on
 * the header as Node gives it, and the fingerprint of (method, route path, raw query, body bytes)
 * through `requestFingerprint` (the plugin's own `fingerprintHead` + body), whose query part is
 * `queryWithoutToken`. Each input is a request, its key header, and one change making a second
 * request: an `access_token` added, dropped or changed (in any of its spellings: `access%5Ftoken`,
 * `access.token`, `access+token`, a leading space, `access_token[]`), or the method, the path,
 * one byte of the body, another query parameter edited, added, dropped or moved.
 *
 * Oracle: nothing throws but idempotencyKeyOf's HttpError 400; the key is accepted, as given (a
 * list joined with `,`), exactly when it is 1 to 255 characters each of U+0021-U+007E (checked
 * character by character, not by the module's regex), and absent stays undefined; the fingerprint
 * is 64 hex digits and equal for two requests exactly when their methods, paths and bodies are equal
 * and their queries are equal once every part that PHP reads as `access_token` is dropped (the rest
 * as sent, in order), so a token never changes it, and anything else does; two requests with one
 * fingerprint are read alike by the server (the same parameters, access_token aside); and the
 * query without its tokens gives the server no access_token and every other parameter unchanged.
 */
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { idempotencyKeyOf, queryWithoutToken, requestFingerprint } from '../../src/http/plugins/idempotency.ts';
import { parseParams, type Params } from '../../src/http/query.ts';
import { HttpError } from '../../src/http/wire.ts';
import { check, refusesOnlyWithSync, type FuzzTarget } from '../target.ts';

type Input = {
  method: string;
  path: string;
  /** The query's parts (joined with `&`). */
  parts: string[];
  body: Uint8Array;
  /** The Idempotency-Key header: absent when `keyAbsent`; a list when `keyList` is not empty. */
  key: string;
  keyList: string[];
  keyAbsent: boolean;
  /** The second request: none, token-add, token-drop, token-edit, method, path, body, edit, add, drop, move. */
  change: string;
  at: number;
  with: string;
};

const TOKEN_NAMES = [
  'access_token',
  'access%5Ftoken',
  'access%5ftoken',
  'access.token',
  'access+token',
  '+access_token',
  '%20access_token',
  'access_token[]',
  'access_token[x]',
  '%61ccess_token',
  'access%2Etoken',
];
const NEAR_NAMES = [
  'access_tokens',
  'access-token',
  'Access_token',
  'access_token_',
  'access_token[',
  '[access_token]',
  'x[access_token]',
  'access__token',
  'access_token%00',
  'accesstoken',
];
const queryChar = fc.oneof(
  {
    weight: 20,
    arbitrary: fc
      .integer({ min: 0x21, max: 0x7e })
      .filter((c) => c !== 0x23)
      .map((c) => String.fromCharCode(c)),
  },
  { weight: 1, arbitrary: fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)) },
);
const rawText = (maxLength: number) => fc.array(queryChar, { maxLength }).map((cs) => cs.join(''));
const value = fc.oneof(fc.stringMatching(/^[A-Za-z0-9]{0,12}$/), fc.constantFrom('', '%20', '%', '%zz', '+', 'a=b', 'x%26y'), rawText(6));
const tokenPart = fc.tuple(fc.constantFrom(...TOKEN_NAMES), value, fc.boolean()).map(([n, v, eq]) => (eq ? `${n}=${v}` : n));
const part = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .tuple(fc.constantFrom('id', 'fields', '_format', 'page', 'a[]', 'a[x]', 'group_id', 'x.y', 'x y'), value)
      .map(([k, v]) => `${k}=${v}`),
  },
  { weight: 2, arbitrary: tokenPart },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...NEAR_NAMES), value).map(([k, v]) => `${k}=${v}`) },
  { weight: 1, arbitrary: fc.constantFrom('', '=', '=x', '[]=1', 'flag', '%') },
  { weight: 1, arbitrary: rawText(10) },
);
const keyChar = fc.oneof(
  { weight: 30, arbitrary: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)) },
  { weight: 1, arbitrary: fc.constantFrom(' ', '\t', '\x7f', '\x80', 'é', '\u0000', '\u2028', '😀') },
);
const keyArb = fc.oneof(
  fc.uuid(),
  fc.array(keyChar, { maxLength: 40 }).map((cs) => cs.join('')),
  fc.constantFrom('', ' ', 'a'.repeat(255), 'a'.repeat(256), 'key, key', 'k\tk'),
  fc.integer({ min: 250, max: 260 }).map((n) => 'k'.repeat(n)),
);

const inputArb: fc.Arbitrary<Input> = fc.record({
  method: fc.constantFrom('POST', 'POST', 'POST', 'PUT', 'PATCH', 'GET', 'DELETE', 'TRACE'),
  path: fc.constantFrom('/v1/sms/send', '/v1/contacts/create', '/v1/media/upload', '/v1/groups/add-contacts', '/v1/sms/send-group'),
  parts: fc.array(part, { maxLength: 6 }),
  body: fc.oneof(
    fc.constantFrom('', '{"To":"+15550100199","Body":"Hi"}', 'To=%2B15550100199&Body=Hi', '{}').map((s) => new Uint8Array(Buffer.from(s))),
    fc.uint8Array({ maxLength: 40 }),
  ),
  key: keyArb,
  keyList: fc.oneof(
    { weight: 8, arbitrary: fc.constant<string[]>([]) },
    { weight: 1, arbitrary: fc.array(keyArb, { minLength: 1, maxLength: 3 }) },
  ),
  keyAbsent: fc.constantFrom(false, false, false, true),
  change: fc.constantFrom(
    'none',
    'token-add',
    'token-add',
    'token-drop',
    'token-edit',
    'method',
    'path',
    'body',
    'edit',
    'add',
    'drop',
    'move',
  ),
  at: fc.nat({ max: 100 }),
  with: fc.oneof(
    fc.constantFrom(...TOKEN_NAMES.map((n) => `${n}=t0k3n`)),
    part,
    fc.constantFrom('', 'x', '=', '&', '%', '[', ']', '.', '+'),
  ),
});

/** Whether a query part is an access_token parameter as PHP reads its name (API.md §3.1; written here from PHP's rules). */
function isTokenPart(p: string): boolean {
  const eq = p.indexOf('=');
  let name = eq === -1 ? p : p.slice(0, eq);
  name = name.replaceAll('+', ' ');
  // Each valid %XX escape decoded (a broken one stays).
  try {
    name = decodeURIComponent(name);
  } catch {
    name = name.replace(/(%[0-9a-fA-F]{2})+/g, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run;
      }
    });
  }
  name = name.replace(/^ +/, '');
  const open = name.indexOf('[');
  if (open === 0) return false;
  const head = (open === -1 ? name : name.slice(0, open)).replace(/[. ]/g, '_');
  // `access_token[…]` is the token (a list); an unclosed `[` is itself `_`: `access[token` is `access_token`, `access_token[` is not.
  if (open === -1 || name.indexOf(']', open) !== -1) return head === 'access_token';
  return `${head}_${name.slice(open + 1)}` === 'access_token';
}

const strip = (q: string): string =>
  q === ''
    ? ''
    : q
        .split('&')
        .filter((p) => p === '' || !isTokenPart(p))
        .join('&');
const withoutToken = (p: Params): Params => new Map([...p].filter(([k]) => k !== 'access_token'));

function at(n: number, length: number): number {
  return length === 0 ? 0 : (Number.isFinite(n) ? Math.abs(Math.trunc(n)) : 0) % length;
}

type Request = { method: string; path: string; query: string; body: Buffer };

function second(r: Request, input: Input): Request {
  const parts = r.query === '' ? [] : r.query.split('&');
  const i = at(input.at, parts.length);
  const tokens = parts.map((p, j) => [p, j] as const).filter(([p]) => p !== '' && isTokenPart(p));
  const others = parts.map((p, j) => [p, j] as const).filter(([p]) => p === '' || !isTokenPart(p));
  const q = (ps: string[]) => ({ ...r, query: ps.join('&') });
  switch (input.change) {
    case 'token-add': {
      const w = input.with.split('&')[0]!.replace(/#/g, '');
      const token = w !== '' && isTokenPart(w) ? w : 'access_token=t0k3n';
      return q([...parts.slice(0, i), token, ...parts.slice(i)]);
    }
    case 'token-drop': {
      const t = tokens[at(input.at, tokens.length)];
      return t ? q(parts.filter((_p, j) => j !== t[1])) : r;
    }
    case 'token-edit': {
      const t = tokens[at(input.at, tokens.length)];
      return t ? q(parts.map((p, j) => (j === t[1] ? `${p.split('=')[0]!}=${input.with.replace(/[&#]/g, '')}` : p))) : r;
    }
    case 'method':
      return { ...r, method: r.method === 'POST' ? 'PUT' : 'POST' };
    case 'path':
      return { ...r, path: `${r.path}x` };
    case 'body': {
      const b = Buffer.from(r.body);
      if (b.length === 0) return { ...r, body: Buffer.from('x') };
      b[at(input.at, b.length)]! ^= 1;
      return { ...r, body: b };
    }
    case 'edit': {
      const o = others[at(input.at, others.length)];
      return o ? q(parts.map((p, j) => (j === o[1] ? `${p}${input.with.replace(/[&#]/g, '') || 'x'}` : p))) : r;
    }
    case 'add':
      return q([...parts.slice(0, i), input.with.replace(/#/g, ''), ...parts.slice(i)]);
    case 'drop': {
      const o = others[at(input.at, others.length)];
      return o ? q(parts.filter((_p, j) => j !== o[1])) : r;
    }
    case 'move':
      return parts.length < 2 ? r : q([...parts.slice(i), ...parts.slice(0, i)]);
    default:
      return r;
  }
}

export const target: FuzzTarget<Input> = {
  name: 'idempotency',
  oracle:
    'no throw but HttpError 400; Idempotency-Key accepted ⇔ 1-255 chars of U+0021-U+007E (a list joined with ,); fingerprint equal ⇔ same method, ' +
    'path, body and query once every access_token part (any PHP spelling) is dropped; equal fingerprints ⇒ same parameters; stripped query has no token',
  files: ['src/http/plugins/idempotency.ts'],
  arbitrary: inputArb,
  dictionary: [
    'access_token=',
    'access%5Ftoken=',
    'access.token=',
    'access+token=',
    'access_token[]=',
    '&',
    '=',
    '%',
    '[',
    ']',
    '.',
    '+',
    '%20',
  ],
  run(input) {
    // The key.
    const header = input.keyAbsent ? undefined : input.keyList.length > 0 ? input.keyList : input.key;
    const key = refusesOnlyWithSync([HttpError], () => idempotencyKeyOf(header));
    if (header === undefined) check(key === undefined, 'an absent header gave a key');
    else {
      const text = Array.isArray(header) ? header.join(',') : header;
      const ok =
        text.length >= 1 &&
        text.length <= 255 &&
        [...text].every((c) => c.charCodeAt(0) >= 0x21 && c.charCodeAt(0) <= 0x7e && c.length === 1);
      if (ok) check(key === text, `key ${JSON.stringify(text)} refused or changed: ${String(key)}`);
      else check(key instanceof HttpError && key.status === 400, `key ${JSON.stringify(text)} accepted`);
    }

    // The fingerprint.
    const query = input.parts.map((p) => String(p).replace(/#/g, '')).join('&');
    const r1: Request = { method: input.method, path: input.path, query, body: Buffer.from(input.body) };
    const r2 = second(r1, input);
    const fp = (r: Request) => requestFingerprint(r.method, r.path, r.query, r.body);
    const f1 = fp(r1);
    const f2 = fp(r2);
    check(/^[0-9a-f]{64}$/.test(f1), 'the fingerprint is not 64 hex digits');
    check(
      queryWithoutToken(query) === strip(query),
      `queryWithoutToken(${JSON.stringify(query)}) = ${JSON.stringify(queryWithoutToken(query))}, expected ${JSON.stringify(strip(query))}`,
    );
    const same = r1.method === r2.method && r1.path === r2.path && r1.body.equals(r2.body) && strip(r1.query) === strip(r2.query);
    check(
      (f1 === f2) === same,
      `${input.change}: fingerprints ${f1 === f2 ? 'equal' : 'differ'} for ${JSON.stringify(r1.query)} and ${JSON.stringify(r2.query)}`,
    );
    if (input.change.startsWith('token'))
      check(f1 === f2, `a token change changed the fingerprint: ${JSON.stringify(r1.query)} → ${JSON.stringify(r2.query)}`);
    // One fingerprint, one reading: the server's parameters (access_token aside) are the same.
    if (f1 === f2) {
      check(
        isDeepStrictEqual(withoutToken(parseParams(r1.query)), withoutToken(parseParams(r2.query))),
        `same fingerprint, other parameters: ${JSON.stringify(r1.query)} / ${JSON.stringify(r2.query)}`,
      );
    }
    const stripped = parseParams(queryWithoutToken(query));
    check(!stripped.has('access_token'), `the query without tokens still has one: ${JSON.stringify(queryWithoutToken(query))}`);
    check(
      isDeepStrictEqual(stripped, withoutToken(parseParams(query))),
      `dropping the tokens changed other parameters: ${JSON.stringify(query)}`,
    );
  },
};
