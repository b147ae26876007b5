/**
 * Query strings and form bodies read the way PHP reads them, because the original service is
 * PHP (CONVENTIONS preamble): a repeated key keeps its first position and its last value,
 * `key[]=v` / `key[x]=v` make the value an array, `+` is a space, and a bad %-escape stays as
 * written instead of failing the request.
 */

/** A parameter's value: text, or a list when the key was written with brackets. */
export type ParamValue = string | ParamValue[];

/** Parameters in the order their keys first appeared. */
export type Params = Map<string, ParamValue>;

function decode(text: string): string {
  const s = text.includes('+') ? text.replace(/\+/g, ' ') : text;
  if (!s.includes('%')) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    // Decode the valid escapes one by one and leave broken ones as they are.
    return s.replace(/(%[0-9a-fA-F]{2})+/g, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run;
      }
    });
  }
}

/**
 * Parses `a=1&b[]=2&b[]=3` into ordered parameters.
 * PHP also turns `.` and ` ` in a top-level key into `_`, so `access.token` is `access_token`.
 */
export function parseParams(query: string): Params {
  const params: Params = new Map();
  if (query === '') return params;
  for (const pair of query.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    // PHP ignores leading spaces in a name, and a name starting with `[` is dropped.
    const rawKey = decode(eq === -1 ? pair : pair.slice(0, eq)).replace(/^ +/, '');
    const value = eq === -1 ? '' : decode(pair.slice(eq + 1));
    const bracket = rawKey.indexOf('[');
    if (bracket === 0) continue;
    const isArray = bracket > 0 && rawKey.indexOf(']', bracket) > bracket;
    // Only the part before the first `[` is translated; an unclosed `[` itself becomes `_` (`a[b.c` → `a_b.c`).
    const head = (bracket === -1 ? rawKey : rawKey.slice(0, bracket)).replace(/[. ]/g, '_');
    const base = isArray || bracket === -1 ? head : `${head}_${rawKey.slice(bracket + 1)}`;
    if (base === '') continue;
    if (isArray) {
      const existing = params.get(base);
      if (Array.isArray(existing)) existing.push(value);
      else params.set(base, [value]);
    } else {
      params.set(base, value);
    }
  }
  return params;
}

/** PHP urlencode: everything but letters, digits and `-_.` is %-escaped; a space is `+`. */
const URL_SAFE = /^[A-Za-z0-9_.-]*$/;

export function phpUrlEncode(text: string): string {
  // Most keys and values (tokens, page numbers) need no escaping at all.
  if (URL_SAFE.test(text)) return text;
  return encodeURIComponent(text)
    .replace(/%20/g, '+')
    .replace(/[!'()*~]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
}

/** PHP http_build_query for our parameter shapes (lists become `key%5B0%5D=…`). */
export function buildQuery(params: Params): string {
  const parts: string[] = [];
  for (const [key, value] of params) addQueryParts(parts, key, value);
  return parts.join('&');
}

/** One parameter as http_build_query writes it (`''` for an empty list). */
export function buildQueryPart(key: string, value: ParamValue): string {
  const parts: string[] = [];
  addQueryParts(parts, key, value);
  return parts.join('&');
}

function addQueryParts(parts: string[], key: string, value: ParamValue): void {
  if (Array.isArray(value)) value.forEach((v, i) => addQueryParts(parts, `${key}[${i}]`, v));
  else parts.push(`${phpUrlEncode(key)}=${phpUrlEncode(value)}`);
}

/** PHP's `(int)` cast of a parameter: leading number of the text, 0 when there is none; arrays count as absent. */
export function phpInt(value: ParamValue | undefined, fallback: number): number {
  if (value === undefined || Array.isArray(value)) return fallback;
  const m = /^[ \t\n\r\v\f]*([+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?)/.exec(value);
  if (!m) return 0;
  const n = Math.trunc(Number(m[1]));
  return Number.isFinite(n) ? Math.max(Math.min(n, Number.MAX_SAFE_INTEGER), Number.MIN_SAFE_INTEGER) : 0;
}
