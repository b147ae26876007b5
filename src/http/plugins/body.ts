import type { FastifyInstance, FastifyRequest } from 'fastify';
import { recordJsonNumber, type Input } from '../../domain/validation.ts';
import { parseParams } from '../query.ts';
import { HttpError } from '../wire.ts';

/**
 * Request bodies (API.md §3.2). Fastify only collects the bytes (enforcing the body limit, 413);
 * parsing waits until the handler asks, so a bad `id` is reported before bad JSON (API.md §1.5).
 */

interface RawBody {
  mediaType: string;
  raw: Buffer;
}

const JSON_MEDIA = 'application/json';
const FORM_MEDIA = 'application/x-www-form-urlencoded';
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The media type that chooses a body's parser, as Yii2's Request::getBodyParams takes it
 * (API.md §3.2): the Content-Type exactly as sent up to the first `;`, not trimmed and not
 * lower-cased, so `Application/JSON` and `application/json ;charset=utf-8` match no parser (415).
 */
export function mediaTypeOf(contentType: string | undefined): string {
  if (contentType === undefined) return '';
  const semi = contentType.indexOf(';');
  return semi === -1 ? contentType : contentType.slice(0, semi);
}

/** Replaces Fastify's parsers with one that keeps every body raw, with its media type. */
export function collectRawBodies(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, raw, done) => {
    done(null, { mediaType: mediaTypeOf(request.headers['content-type']), raw: raw as Buffer } satisfies RawBody);
  });
}

/**
 * The request body as fields. An empty body, a JSON `null` or a JSON value that is not an object
 * means no fields (which then fail as "cannot be blank").
 * @throws HttpError 400 `Invalid JSON data in request body: {reason}` for JSON that PHP's json_decode
 *   refuses, with PHP's reason (API.md §3.2, parsePhpJson).
 * @throws HttpError 415 for a non-empty body that is neither JSON nor form-urlencoded, by the exact
 *   media type (mediaTypeOf).
 */
export function readBody(request: FastifyRequest): Input {
  const body = request.body as RawBody | undefined;
  if (!body || body.raw.length === 0) return {};
  if (body.mediaType === JSON_MEDIA) {
    let value: unknown;
    try {
      value = parsePhpJson(body.raw);
    } catch (err) {
      if (!(err instanceof PhpJsonError)) throw err;
      throw new HttpError(400, `Invalid JSON data in request body: ${err.message}`);
    }
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Input) : {};
  }
  if (body.mediaType === FORM_MEDIA) {
    let text: string;
    try {
      text = utf8.decode(body.raw);
    } catch {
      text = body.raw.toString('latin1');
    }
    const input: Record<string, unknown> = {};
    for (const [key, value] of parseParams(text)) input[key] = value;
    return input;
  }
  throw new HttpError(415, 'Unsupported Media Type: send the body as application/json or application/x-www-form-urlencoded.');
}

const SYNTAX = 'Syntax error';
const CTRL_CHAR = 'Control character error, possibly incorrectly encoded';
const MALFORMED_UTF8 = 'Malformed UTF-8 characters, possibly incorrectly encoded';
const UNPAIRED_SURROGATE = 'Single unpaired UTF-16 surrogate in unicode escape';
const DEPTH = 'Maximum stack depth exceeded';
/** PHP json_decode's default depth: 512 nested arrays/objects parse, 513 do not. */
export const PHP_JSON_MAX_DEPTH = 512;

/** A body that PHP's json_decode refuses, with json_last_error_msg()'s reason. */
export class PhpJsonError extends Error {
  override name = 'PhpJsonError';
}

const INT64_MAX_TEXT = '9223372036854775807';

/** True when the decimal digits `digits` (no sign) fit PHP's int for the given sign. */
function fitsInt64(digits: string, negative: boolean): boolean {
  if (digits.length !== 19) return digits.length < 19;
  return negative ? digits <= '9223372036854775808' : digits <= INT64_MAX_TEXT;
}

/** Length of the valid UTF-8 sequence at `i` (PHP's scanner definitions), or 0. */
function utf8Length(buf: Buffer, i: number): number {
  const c = buf[i]!;
  const t = (j: number) => i + j < buf.length && (buf[i + j]! & 0xc0) === 0x80;
  if (c >= 0xc2 && c <= 0xdf) return t(1) ? 2 : 0;
  if (c === 0xe0) return i + 1 < buf.length && buf[i + 1]! >= 0xa0 && buf[i + 1]! <= 0xbf && t(2) ? 3 : 0;
  if ((c >= 0xe1 && c <= 0xec) || c === 0xee || c === 0xef) return t(1) && t(2) ? 3 : 0;
  if (c === 0xed) return i + 1 < buf.length && buf[i + 1]! >= 0x80 && buf[i + 1]! <= 0x9f && t(2) ? 3 : 0;
  if (c === 0xf0) return i + 1 < buf.length && buf[i + 1]! >= 0x90 && buf[i + 1]! <= 0xbf && t(2) && t(3) ? 4 : 0;
  if (c >= 0xf1 && c <= 0xf3) return t(1) && t(2) && t(3) ? 4 : 0;
  if (c === 0xf4) return i + 1 < buf.length && buf[i + 1]! >= 0x80 && buf[i + 1]! <= 0x8f && t(2) && t(3) ? 4 : 0;
  return 0;
}

function hex4(buf: Buffer, i: number): number {
  if (i + 4 > buf.length) return -1;
  let v = 0;
  for (let j = i; j < i + 4; j++) {
    const c = buf[j]!;
    const d = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x41 && c <= 0x46 ? c - 55 : c >= 0x61 && c <= 0x66 ? c - 87 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

/**
 * Parses a JSON body with the semantics and error reasons of PHP's json_decode (ext/json, default
 * depth 512), reading the bytes (API.md §3.2). The first error met left to right decides the
 * reason, as PHP's scanner and parser report it (the token at which the grammar fails is scanned
 * first, so a bad string there reports its own reason):
 * - a raw control character (U+0000–U+001F) in a string, an unterminated string, or a control
 *   character outside strings other than JSON whitespace: `Control character error, possibly incorrectly encoded`;
 * - bytes that are not UTF-8: `Malformed UTF-8 characters, possibly incorrectly encoded`;
 * - a `\uD800`–`\uDFFF` escape that is not a high+low pair: `Single unpaired UTF-16 surrogate in unicode escape`;
 * - arrays/objects nested deeper than 512 (the 513th `[` or `{`): `Maximum stack depth exceeded`;
 * - anything else that is not JSON: `Syntax error`.
 * A number whose integer reading differs from the JS number's (an integer literal beyond 2^53, a
 * number written with an exponent such as `1e+20`, which API.md §4.5 makes no integer, or a
 * float PHP prints otherwise than JS) is recorded for the integer rule (recordJsonNumber).
 * @throws PhpJsonError with the reason.
 */
export function parsePhpJson(buf: Buffer): unknown {
  let pos = 0;
  let depth = 0;
  const len = buf.length;
  // What the last scanned number really was, when it differs from the JS number (see recordJsonNumber).
  let numberNote: string | null | undefined;

  const ws = () => {
    while (pos < len) {
      const c = buf[pos]!;
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) pos++;
      else break;
    }
  };

  // The grammar cannot use the token at `pos`: scan it as PHP's scanner would, and report.
  const fail = (): never => {
    if (pos >= len) throw new PhpJsonError(SYNTAX);
    const c = buf[pos]!;
    if (c === 0x22) {
      scanString();
      throw new PhpJsonError(SYNTAX);
    }
    if (c < 0x20) throw new PhpJsonError(CTRL_CHAR);
    if (c < 0x80 || utf8Length(buf, pos) > 0) throw new PhpJsonError(SYNTAX);
    throw new PhpJsonError(MALFORMED_UTF8);
  };

  // pos at the opening quote; returns the decoded string, pos after the closing quote.
  const scanString = (): string => {
    const start = ++pos;
    let escaped = false;
    for (;;) {
      if (pos >= len) throw new PhpJsonError(CTRL_CHAR); // the terminating NUL, as PHP sees it
      const c = buf[pos]!;
      if (c === 0x22) break;
      if (c < 0x20) throw new PhpJsonError(CTRL_CHAR);
      if (c === 0x5c) {
        escaped = true;
        const e = pos + 1 < len ? buf[pos + 1]! : -1;
        if (e === 0x75) {
          const u = hex4(buf, pos + 2);
          if (u < 0) throw new PhpJsonError(SYNTAX);
          if (u >= 0xd800 && u <= 0xdbff) {
            const low = buf[pos + 6] === 0x5c && buf[pos + 7] === 0x75 ? hex4(buf, pos + 8) : -1;
            if (low < 0xdc00 || low > 0xdfff) throw new PhpJsonError(UNPAIRED_SURROGATE);
            pos += 12;
          } else if (u >= 0xdc00 && u <= 0xdfff) {
            throw new PhpJsonError(UNPAIRED_SURROGATE);
          } else pos += 6;
          continue;
        }
        if (e === 0x22 || e === 0x5c || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) {
          pos += 2;
          continue;
        }
        throw new PhpJsonError(SYNTAX);
      }
      if (c < 0x80) pos++;
      else {
        const n = utf8Length(buf, pos);
        if (n === 0) throw new PhpJsonError(MALFORMED_UTF8);
        pos += n;
      }
    }
    const end = pos++;
    return escaped ? (JSON.parse(buf.toString('utf8', start - 1, end + 1)) as string) : buf.toString('utf8', start, end);
  };

  const isDigit = (i: number) => i < len && buf[i]! >= 0x30 && buf[i]! <= 0x39;

  // pos at `-` or a digit; PHP: INT = "-"? ("0" | [1-9][0-9]*), FLOAT = INT "." DIGIT+, EXP = (INT|FLOAT) [eE] [+-]? DIGIT+.
  const scanNumber = (): number => {
    const start = pos;
    const negative = buf[pos] === 0x2d;
    if (negative) pos++;
    if (!isDigit(pos)) {
      pos = start;
      return fail();
    }
    if (buf[pos] === 0x30) pos++;
    else while (isDigit(pos)) pos++;
    const intEnd = pos;
    let isFloat = false;
    let hasExponent = false;
    if (buf[pos] === 0x2e && isDigit(pos + 1)) {
      pos++;
      while (isDigit(pos)) pos++;
      isFloat = true;
    }
    if (buf[pos] === 0x65 || buf[pos] === 0x45) {
      let p = pos + 1;
      if (buf[p] === 0x2b || buf[p] === 0x2d) p++;
      if (isDigit(p)) {
        while (isDigit(p)) p++;
        pos = p;
        hasExponent = true;
      }
    }
    const text = buf.toString('latin1', start, pos);
    const value = Number(text);
    numberNote = undefined;
    if (hasExponent) {
      // API.md §4.5: a JSON number written with an exponent is not an integer.
      numberNote = null;
    } else if (!isFloat) {
      if (!Number.isSafeInteger(value)) {
        const digits = buf.toString('latin1', negative ? start + 1 : start, intEnd);
        // Within 64 bits PHP keeps the exact int; beyond, a float printed in exponent form.
        numberNote = fitsInt64(digits, negative) ? BigInt(text).toString() : null;
      }
    } else {
      // A PHP float, which Yii2's integer check reads as (string) prints it: 14 significant
      // digits, exponent form from 1e14 (`1.0` and `1.000000000000001` are "1"; `1.0E+14` is not an
      // integer). Recorded only where that differs from what the JS number says.
      const printed = Number(value.toPrecision(14));
      const php = Number.isInteger(printed) && Math.abs(printed) < 1e14 ? String(printed === 0 ? 0 : printed) : null;
      const js = Number.isSafeInteger(value) ? String(value === 0 ? 0 : value) : null;
      if (php !== js) numberNote = php;
    }
    return value;
  };

  const note = (container: object, key: string, replaced = false) => {
    if (numberNote !== undefined || replaced) recordJsonNumber(container, key, numberNote);
    numberNote = undefined;
  };

  const literal = (word: string, value: unknown): unknown => {
    for (let i = 0; i < word.length; i++) if (buf[pos + i] !== word.charCodeAt(i)) return fail();
    pos += word.length;
    return value;
  };

  const parseValue = (): unknown => {
    ws();
    if (pos >= len) return fail();
    numberNote = undefined;
    const c = buf[pos]!;
    if (c === 0x7b || c === 0x5b) {
      if (++depth > PHP_JSON_MAX_DEPTH) throw new PhpJsonError(DEPTH);
      pos++;
      const value = c === 0x7b ? parseObject() : parseArray();
      depth--;
      numberNote = undefined;
      return value;
    }
    if (c === 0x22) return scanString();
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return scanNumber();
    if (c === 0x74) return literal('true', true);
    if (c === 0x66) return literal('false', false);
    if (c === 0x6e) return literal('null', null);
    return fail();
  };

  const parseArray = (): unknown[] => {
    const out: unknown[] = [];
    ws();
    if (buf[pos] === 0x5d) {
      pos++;
      return out;
    }
    for (;;) {
      out.push(parseValue());
      note(out, String(out.length - 1));
      ws();
      if (buf[pos] === 0x2c) pos++;
      else if (buf[pos] === 0x5d) {
        pos++;
        return out;
      } else return fail();
    }
  };

  const parseObject = (): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    ws();
    if (buf[pos] === 0x7d) {
      pos++;
      return out;
    }
    for (;;) {
      ws();
      if (buf[pos] !== 0x22) return fail();
      const key = scanString();
      ws();
      if (buf[pos] !== 0x3a) return fail();
      pos++;
      const value = parseValue();
      const replaced = Object.hasOwn(out, key);
      if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
      else out[key] = value;
      note(out, key, replaced);
      ws();
      if (buf[pos] === 0x2c) pos++;
      else if (buf[pos] === 0x7d) {
        pos++;
        return out;
      } else return fail();
    }
  };

  const value = parseValue();
  ws();
  if (pos < len) fail();
  return value;
}
