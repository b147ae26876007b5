/**
 * The query parser (docs/API.md §3.1, §5): `parseParams` reads every request's query string and
 * form body; `parsePhpQuery` reads it again as PHP's parse_str when a pagination link is rebuilt.
 *
 * Oracle: neither throws; every key `parseParams` yields is non-empty and does not start with `[`;
 * `phpInt` gives a safe integer (the number itself for digits, the fallback for a list); parameters
 * with plain keys survive `buildQuery` (our links) and `parseParams` again; and the rebuilt query parses back to the same nested array
 * (`parsePhpQuery(buildPhpQuery(p))` equals `p`), as PHP's http_build_query and parse_str do,
 * unless a nested key holds `]`, which PHP cannot write back either.
 */
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { buildPhpQuery, buildQuery, parseParams, parsePhpQuery, phpInt, type ParamValue, type PhpArray } from '../../src/http/query.ts';
import { check, type FuzzTarget } from '../target.ts';

const keyChar = fc.constantFrom('a', 'b', 'x', '0', '1', '.', ' ', '[', ']', '_', '%5B', '%5D', '%00', '+', '%2', '%zz', 'é', '\0');
const key = fc.array(keyChar, { maxLength: 8 }).map((cs) => cs.join(''));
const value = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('%FF', '%e2%82%ac', '%', '+%20+', '%uD83D'));
const pair = fc.oneof(
  fc.tuple(key, value).map(([k, v]) => `${k}=${v}`),
  key,
  fc
    .tuple(key, fc.array(fc.oneof(fc.constant(''), key), { maxLength: 3 }), value)
    .map(([k, idx, v]) => `${k}${idx.map((i) => `[${i}]`).join('')}=${v}`),
);

function hasBracketKey(arr: PhpArray, nested: boolean): boolean {
  for (const [k, v] of arr) {
    if (nested && k.includes(']')) return true;
    if (v instanceof Map && hasBracketKey(v, true)) return true;
  }
  return false;
}

export const target: FuzzTarget<string> = {
  name: 'query',
  oracle: 'no throw; keys non-empty, never starting with [; phpInt safe; buildQuery round trip; parsePhpQuery(buildPhpQuery(p)) equals p',
  files: ['src/http/query.ts'],
  arbitrary: fc.oneof(
    fc.array(pair, { maxLength: 6 }).map((ps) => ps.join('&')),
    fc.string({ maxLength: 40 }),
  ),
  dictionary: ['[]', '[a]', '[0]', '%5B', '%5D', '&', '=', '.', '+', '%', '%00', '[ ]', '[[', ']]', 'access_token=', '_method='],
  run(query) {
    const params = parseParams(query);
    for (const [k, v] of params) {
      check(k !== '', 'parseParams yielded an empty key');
      check(!k.startsWith('['), `parseParams kept a key that starts with [: ${JSON.stringify(k)}`);
      const n = phpInt(v, -7);
      check(Number.isSafeInteger(n), `phpInt gave ${n}`);
      if (typeof v === 'string' && /^[0-9]{1,15}$/.test(v)) check(n === Number(v), `phpInt(${v}) = ${n}`);
      if (Array.isArray(v)) check(n === -7, 'phpInt of a list is not absent');
    }
    // Our links rebuild the parameters (buildQuery); plain keys read back the same.
    if ([...params.keys()].every((k) => /^[A-Za-z0-9_-]+$/.test(k))) {
      // …except a lone surrogate, which has no UTF-8 bytes and comes back as U+FFFD.
      const wellFormed = (v: ParamValue): ParamValue => (Array.isArray(v) ? v.map(wellFormed) : v.toWellFormed());
      const want = new Map([...params].map(([k, v]) => [k, wellFormed(v)]));
      check(isDeepStrictEqual(parseParams(buildQuery(params)), want), `buildQuery round trip changed ${JSON.stringify(query)}`);
    }
    const php = parsePhpQuery(query);
    const rebuilt = buildPhpQuery(php);
    if (!hasBracketKey(php, false)) {
      check(isDeepStrictEqual(parsePhpQuery(rebuilt), php), `round trip changed ${JSON.stringify(query)} → ${JSON.stringify(rebuilt)}`);
    }
  },
};
