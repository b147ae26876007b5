/**
 * Request bodies (docs/API.md §3.2, §10.7): JSON and form bodies read by `readBody` (through
 * `parsePhpJson` and the query parser), multipart read by busboy in media/upload. The target sends
 * each body through the whole app with `inject`, as a client would: sms/preview for JSON and forms
 * (it reads every field and writes nothing), media/upload for multipart.
 *
 * Oracle: no 5xx and no throw; every error is the documented status (400, 413, 415, 422) with a
 * JSON body in the errors shape (`name`, `message`, `code`, `status`, or a list of field errors);
 * and `parsePhpJson` agrees with JSON itself: a body it accepts is JSON whose value it returns
 * (JSON.parse of the same text gives an equal value), and a body it refuses is one JSON refuses too,
 * or one PHP refuses on purpose (invalid UTF-8, a lone surrogate escape, nesting past 512).
 */
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { parsePhpJson, PhpJsonError, PHP_JSON_MAX_DEPTH } from '../../src/http/plugins/body.ts';
import { buildTestApp, type TestApp } from '../../test/helpers/app.ts';
import { check, refusesOnlyWithSync, type FuzzTarget } from '../target.ts';

type Input = { kind: string; contentType: string; body: Uint8Array };
const KINDS = ['json', 'form', 'multipart'] as const;

const jsonText = fc.oneof(
  fc.json({ maxDepth: 3 }),
  fc.record({ To: fc.oneof(fc.constant('+15550100199'), fc.string()), Body: fc.string(), From: fc.string() }).map((r) => JSON.stringify(r)),
  fc.constantFrom(
    '{"Body":"\\ud800"}',
    '{"Body":"\\u00e9\\uD83D\\uDE00"}',
    '[[[[',
    '{"a":1,}',
    '{"a":01}',
    '1e999',
    '-0',
    '{"To":12345678901234567890}',
    '"\\x"',
    '{"\u0001":1}',
    '{"__proto__":{"x":1}}',
    `${'['.repeat(513)}${']'.repeat(513)}`,
  ),
);
const formText = fc
  .array(fc.tuple(fc.constantFrom('To', 'Body', 'From', 'To[]', 'Body[x]', '_method', '%42ody', 'a.b'), fc.string({ maxLength: 10 })), {
    maxLength: 5,
  })
  .map((ps) => ps.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&'));
const BOUNDARY = 'xYzZY';
const multipartText = fc
  .record({
    name: fc.constantFrom('File', 'file', 'Name', ''),
    filename: fc.constantFrom('a.png', 'b.jpg', '', '../../etc/passwd', 'x"y.gif', 'é.png'),
    type: fc.constantFrom('image/png', 'image/jpeg', 'image/gif', 'text/plain', ''),
    data: fc.constantFrom('\x89PNG\r\n\x1a\n\0\0\0\rIHDR', 'GIF89a', '\xff\xd8\xff\xe0', 'hello', ''),
    end: fc.constantFrom(`\r\n--${BOUNDARY}--\r\n`, `\r\n--${BOUNDARY}`, '', `\r\n--${BOUNDARY}--`),
  })
  .map(
    (p) =>
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${p.name}"; filename="${p.filename}"\r\n` +
      `${p.type ? `Content-Type: ${p.type}\r\n` : ''}\r\n${p.data}${p.end}`,
  );
const contentTypes: Record<(typeof KINDS)[number], readonly string[]> = {
  json: ['application/json', 'application/json; charset=utf-8', 'Application/JSON', 'application/json ;charset=utf-8'],
  form: ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded; charset=utf-8', 'text/plain'],
  multipart: [
    `multipart/form-data; boundary=${BOUNDARY}`,
    'multipart/form-data',
    'multipart/form-data; boundary=',
    `multipart/form-data; boundary="${BOUNDARY}"`,
  ],
};

let t: TestApp | undefined;
let token = '';

function depthOf(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '[' || c === '{') max = Math.max(max, ++depth);
    else if (c === ']' || c === '}') depth--;
  }
  return max;
}

/** Whether every string of a JSON value (keys too) is well-formed UTF-16: PHP refuses a lone surrogate escape. */
function wellFormed(value: unknown): boolean {
  if (typeof value === 'string') return value.isWellFormed();
  if (Array.isArray(value)) return value.every(wellFormed);
  if (value !== null && typeof value === 'object') return Object.entries(value).every(([k, v]) => k.isWellFormed() && wellFormed(v));
  return true;
}

/** The JSON oracle: parsePhpJson against JSON.parse on the same bytes. */
function checkJson(bytes: Buffer): void {
  const php = refusesOnlyWithSync([PhpJsonError], () => parsePhpJson(bytes));
  let text: string | undefined;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    check(php instanceof PhpJsonError, 'invalid UTF-8 was accepted as JSON');
    return;
  }
  let js: { value: unknown } | undefined;
  try {
    js = { value: JSON.parse(text) as unknown };
  } catch {
    js = undefined;
  }
  if (!(php instanceof Error)) {
    check(js !== undefined, `parsePhpJson accepted what JSON refuses: ${JSON.stringify(text.slice(0, 200))}`);
    // Integers past 2^53 and floats PHP prints otherwise are kept exact by parsePhpJson: compare as JSON numbers.
    check(
      isDeepStrictEqual(JSON.parse(JSON.stringify(php)), JSON.parse(JSON.stringify(js.value))),
      `values differ for ${JSON.stringify(text.slice(0, 200))}`,
    );
  } else if (js !== undefined) {
    const loneSurrogate = !wellFormed(js.value);
    const control = /[\u0000-\u001f]/.test(text);
    check(
      loneSurrogate || control || depthOf(text) > PHP_JSON_MAX_DEPTH || text.trim() === '',
      `parsePhpJson refused JSON: ${php.message}: ${JSON.stringify(text.slice(0, 200))}`,
    );
  }
}

export const target: FuzzTarget<Input> = {
  name: 'body',
  oracle:
    "no 5xx or throw; only 400/413/415/422 with a JSON errors body; parsePhpJson accepts exactly JSON (less PHP's own refusals) with the same value",
  files: ['src/http/plugins/body.ts', 'src/http/query.ts', 'src/http/routes/media/upload.ts'],
  maxMs: 2000,
  arbitrary: fc.constantFrom(...KINDS).chain((kind) =>
    fc.record({
      kind: fc.constant(kind),
      contentType: fc.constantFrom(...contentTypes[kind]),
      body: (kind === 'json' ? jsonText : kind === 'form' ? formText : multipartText).map(
        (s) => new Uint8Array(Buffer.from(s, kind === 'multipart' ? 'latin1' : 'utf8')),
      ),
    }),
  ),
  dictionary: [
    '{',
    '}',
    '[',
    ']',
    '"',
    '\\u',
    '\\ud83d',
    ':',
    ',',
    'null',
    'true',
    '1e5',
    '&',
    '=',
    '%',
    '\r\n',
    `--${BOUNDARY}`,
    'Content-Disposition: form-data; name="File"; filename="a.png"',
    '\\',
  ],
  async setup() {
    t = await buildTestApp(undefined, {}, {});
    token = (await t.seed('fuzz')).token;
  },
  async teardown() {
    await t?.close();
  },
  async run({ kind, contentType, body }) {
    const bytes = Buffer.from(body);
    if (kind === 'json') checkJson(bytes);
    const url = kind === 'multipart' ? '/v1/media/upload' : '/v1/sms/preview';
    const res = await t!.app.inject({
      method: 'POST',
      url: `${url}?access_token=${token}`,
      headers: { 'content-type': contentType },
      payload: bytes,
    });
    check(res.statusCode < 500, `${res.statusCode} for ${kind}: ${res.body.slice(0, 300)}`);
    if (res.statusCode >= 400) {
      check([400, 413, 415, 422].includes(res.statusCode), `unexpected ${res.statusCode}: ${res.body.slice(0, 300)}`);
      const parsed = JSON.parse(res.body) as unknown;
      const shaped = Array.isArray(parsed)
        ? parsed.every(
            (e) => typeof (e as { field?: unknown }).field === 'string' && typeof (e as { message?: unknown }).message === 'string',
          )
        : typeof (parsed as { message?: unknown }).message === 'string' && (parsed as { status?: unknown }).status === res.statusCode;
      check(shaped, `error body not in the errors shape: ${res.body.slice(0, 300)}`);
    }
  },
};
