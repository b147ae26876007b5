/**
 * Query strings and form bodies read the way PHP reads them, because the original service is
 * PHP (API.md §3.1): a repeated key keeps its first position and its last value,
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
  // A lone UTF-16 surrogate has no UTF-8 bytes: it is written as U+FFFD, as Buffer writes it,
  // instead of encodeURIComponent's URIError (found by the query fuzz target).
  return encodeURIComponent(text.toWellFormed())
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

/**
 * PHP's parsed query (`$_GET`) for rebuilding a URL (API.md §5 "Link URLs rebuild the query
 * the way PHP's http_build_query does"): an ordered array of keys to byte strings or nested arrays.
 * Keys and values are *binary strings* (one char per byte, latin1), so `x=%FF` stays the byte 0xFF
 * instead of becoming U+FFFD; `a[b]=1` stays nested under `a` with the key `b`.
 */
export type PhpValue = string | PhpArray;
export type PhpArray = Map<string, PhpValue>;

/** One percent-escape's value, or -1. */
function hexByte(text: string, i: number): number {
  const h = parseInt(text.slice(i + 1, i + 3), 16);
  return /^[0-9a-fA-F]{2}$/.test(text.slice(i + 1, i + 3)) ? h : -1;
}

/** php_url_decode into a binary string: `+` is a space, `%XX` one byte, a broken escape stays. */
function decodeBytes(text: string): string {
  if (!text.includes('%') && !text.includes('+') && !/[^\x00-\xff]/.test(text)) return text;
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '+') out += ' ';
    else if (c === '%' && hexByte(text, i) !== -1) {
      out += String.fromCharCode(hexByte(text, i));
      i += 2;
    } else if (c.charCodeAt(0) > 0xff) {
      // Not from a socket (Node reads the request line as latin1): its UTF-8 bytes.
      out += Buffer.from(c, 'utf8').toString('latin1');
    } else out += c;
  }
  return out;
}

/** PHP's array key: a canonical decimal integer string is an int key, compared as its text. */
function nextIndex(arr: PhpArray): string {
  let next = 0;
  for (const k of arr.keys()) if (/^(0|-?[1-9]\d*)$/.test(k) && Number(k) >= next) next = Number(k) + 1;
  return String(next);
}

function childArray(arr: PhpArray, key: string | null): PhpArray {
  const k = key ?? nextIndex(arr);
  const existing = arr.get(k);
  if (existing instanceof Map) return existing;
  const created: PhpArray = new Map();
  arr.set(k, created);
  return created;
}

/**
 * Parses a query string as PHP's parse_str / php_register_variable_ex does, into nested ordered
 * arrays of binary strings (API.md §5): leading spaces of a name are dropped, `.` and ` `
 * in the top-level name become `_`, `a[b][]=v` nests (`a[ ]` appends like `a[]`), an unclosed `[`
 * becomes `_` (with ` `, `.` and `[` after it), text after a closing `]` that does not open another
 * `[` is ignored, a repeated key keeps its first position.
 */
export function parsePhpQuery(query: string): PhpArray {
  const root: PhpArray = new Map();
  if (query === '') return root;
  for (const pair of query.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    let name = decodeBytes(eq === -1 ? pair : pair.slice(0, eq));
    const value = eq === -1 ? '' : decodeBytes(pair.slice(eq + 1));
    let start = 0;
    while (name[start] === ' ') start++;
    name = name.slice(start);
    const nul = name.indexOf('\0');
    if (nul !== -1) name = name.slice(0, nul);
    let bracket = -1;
    let base = '';
    for (let i = 0; i < name.length; i++) {
      const c = name[i]!;
      if (c === '[') {
        bracket = i;
        break;
      }
      base += c === ' ' || c === '.' ? '_' : c;
    }
    if (base === '') continue;
    if (bracket === -1) {
      root.set(base, value);
      continue;
    }
    // Indices: [a][b][] ...
    const indices: (string | null)[] = [];
    let i = bracket;
    let plain: string | null = null;
    for (;;) {
      // name[i] === '['
      const close = name.indexOf(']', i + 1);
      if (close === -1) {
        // Not an index: the `[` becomes `_`, and so do ` `, `.` and `[` after it.
        if (indices.length === 0) plain = `${base}_${name.slice(i + 1).replace(/[ .[]/g, '_')}`;
        break;
      }
      const index = name.slice(i + 1, close);
      // `[]`, and `[ ]` with one white-space character (PHP skips one), append.
      indices.push(index === '' || (index.length === 1 && ' \t\n\v\f\r'.includes(index)) ? null : index);
      if (name[close + 1] === '[') i = close + 1;
      else break;
    }
    if (plain !== null) {
      root.set(plain, value);
      continue;
    }
    let arr = childArray(root, base);
    for (let j = 0; j < indices.length - 1; j++) arr = childArray(arr, indices[j]!);
    const last = indices[indices.length - 1]!;
    arr.set(last ?? nextIndex(arr), value);
  }
  return root;
}

/**
 * PHP urlencode of a binary string, as http_build_query writes keys and values (API.md §5):
 * bytes other than letters, digits and `-_.` are %XX; a space is `+`.
 */
export function phpUrlEncodeBytes(bytes: string): string {
  if (URL_SAFE.test(bytes)) return bytes;
  let out = '';
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes.charCodeAt(i);
    if ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x2d || c === 0x2e || c === 0x5f)
      out += bytes[i];
    else if (c === 0x20) out += '+';
    else out += `%${c < 16 ? '0' : ''}${c.toString(16).toUpperCase()}`;
  }
  return out;
}

/**
 * PHP http_build_query of one top-level entry (API.md §5): nested keys stay nested
 * (`a%5Bb%5D=1`), bytes are encoded as bytes, an empty array writes nothing (`''`).
 */
export function buildPhpQueryPart(key: string, value: PhpValue): string {
  const parts: string[] = [];
  addPhpParts(parts, phpUrlEncodeBytes(key), value);
  return parts.join('&');
}

function addPhpParts(parts: string[], prefix: string, value: PhpValue): void {
  if (value instanceof Map) {
    for (const [k, v] of value) addPhpParts(parts, `${prefix}%5B${phpUrlEncodeBytes(k)}%5D`, v);
  } else parts.push(`${prefix}=${phpUrlEncodeBytes(value)}`);
}

/** PHP http_build_query of a whole parsed query (API.md §5), entries in their order. */
export function buildPhpQuery(params: PhpArray): string {
  const parts: string[] = [];
  for (const [k, v] of params) {
    const part = buildPhpQueryPart(k, v);
    if (part !== '') parts.push(part);
  }
  return parts.join('&');
}
