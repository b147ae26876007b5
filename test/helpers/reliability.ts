/**
 * Shared pieces of the reliability-*.test.ts suites: a wire-shape oracle written from API.md
 * (not from src), a cheap "did anything commit?" probe on the SQLite file, and raw-socket helpers
 * for malformed and slow HTTP.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import SQLite from 'better-sqlite3';
import { XMLValidator } from 'fast-xml-parser';

import { JSON_TYPE, XML_DECL, XML_TYPE } from './operations.ts';
import { REASON } from './reasons.ts';

export { REASON };

function unescapeXml(s: string): string {
  return s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/**
 * Asserts that a response is well-formed on the wire (API.md §4, §4.4, §2): no 5xx; the body parses
 * in the format its Content-Type declares (XML well-formed, one line after the declaration); an
 * error is `{name,message,code,status}` in that order (or, for 422, a non-empty list of
 * `{field,message}`); HEAD and 204 have no body.
 */
export function assertWireResponse(
  res: { status: number; contentType: string | undefined; body: string; method: string },
  context = '',
): void {
  const where = `${context} → ${res.status} ${res.contentType} ${JSON.stringify(res.body.slice(0, 300))}`;
  assert.ok(res.status >= 200 && res.status < 500, `no 5xx (and no 1xx/3xx): ${where}`);
  if (res.method === 'HEAD') {
    assert.equal(res.body, '', `HEAD has no body: ${where}`);
    return;
  }
  if (res.status === 204) {
    // API.md §1.4 delete: 204 No Content, empty body (no format to declare).
    assert.equal(res.body, '', `204 has no body: ${where}`);
    return;
  }
  assert.ok(res.contentType === JSON_TYPE || res.contentType === XML_TYPE, `declared format: ${where}`);
  const isError = res.status >= 400;
  if (res.contentType === JSON_TYPE) {
    let value: unknown;
    assert.doesNotThrow(() => (value = JSON.parse(res.body)), `JSON body parses: ${where}`);
    if (!isError) return;
    if (res.status === 422) {
      assert.ok(Array.isArray(value) && value.length > 0, `422 is a non-empty list: ${where}`);
      for (const item of value as unknown[]) {
        assert.deepEqual(Object.keys(item as object), ['field', 'message'], `422 item keys: ${where}`);
        const { field, message } = item as { field: unknown; message: unknown };
        assert.ok(typeof field === 'string' && typeof message === 'string' && message !== '', `422 item types: ${where}`);
      }
      return;
    }
    const body = value as Record<string, unknown>;
    assert.ok(body !== null && typeof body === 'object' && !Array.isArray(body), `error body is an object: ${where}`);
    assert.deepEqual(Object.keys(body), ['name', 'message', 'code', 'status'], `error keys in order: ${where}`);
    assert.equal(body.name, REASON[res.status], `error name is the reason phrase: ${where}`);
    assert.ok(typeof body.message === 'string' && body.message !== '', `error message: ${where}`);
    assert.equal(body.code, 0, `error code: ${where}`);
    assert.equal(body.status, res.status, `error status: ${where}`);
    return;
  }
  // XML
  assert.ok(res.body.startsWith(`${XML_DECL}\n`) && res.body.endsWith('\n'), `XML declaration line and trailing newline: ${where}`);
  const doc = res.body.slice(XML_DECL.length + 1, -1);
  // One line: no formatting between elements. A value may itself hold a newline (LF is valid XML
  // and is kept, as Yii2's formatter keeps it), so leaf elements' text is set aside first.
  const skeleton = doc.replace(/<([A-Za-z_][\w.-]*)>[^<]*<\/\1>/g, '<$1></$1>');
  assert.ok(!skeleton.includes('\n'), `XML document on one line: ${where}`);
  assert.equal(XMLValidator.validate(res.body), true, `XML well-formed: ${where}`);
  assert.match(doc, /^<response(\/>|>.*<\/response>)$/s, `XML root is response: ${where}`);
  if (!isError) return;
  if (res.status === 422) {
    assert.match(doc, /^<response>(<item><field>[^<]+<\/field><message>[^<]+<\/message><\/item>)+<\/response>$/, `422 XML list: ${where}`);
    return;
  }
  const m = /^<response><name>([^<]*)<\/name><message>([^<]*)<\/message><code>0<\/code><status>(\d+)<\/status><\/response>$/.exec(doc);
  assert.ok(m, `XML error shape: ${where}`);
  assert.equal(unescapeXml(m[1]!), REASON[res.status], `XML error name: ${where}`);
  assert.equal(Number(m[3]), res.status, `XML error status: ${where}`);
}

/**
 * A second, read-only connection to the app's SQLite file. `version()` changes exactly when
 * another connection committed a write (SQLite `PRAGMA data_version`), so a test can tell after
 * each request whether it wrote anything; `fingerprint()` hashes each table's rows.
 */
export interface DbProbe {
  version(): number;
  fingerprint(): Record<string, string>;
  rows<T = Record<string, unknown>>(sqlText: string, ...params: unknown[]): T[];
  close(): void;
}

/** Every table of an account's data, from src/store (a new table is covered by adding it there). */
export { TABLES } from '../../src/store/tables.ts';
import { TABLES } from '../../src/store/tables.ts';

export function openProbe(dbPath: string): DbProbe {
  const db = new SQLite(dbPath, { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  return {
    version: () => db.pragma('data_version', { simple: true }) as number,
    fingerprint() {
      const out: Record<string, string> = {};
      for (const table of TABLES) {
        let rows = db.prepare(`SELECT * FROM ${table} ORDER BY rowid`).all() as Record<string, unknown>[];
        // A key's last use (API.md §15.2) is a note of each request, not data a request changes.
        if (table === 'api_tokens') rows = rows.map(({ last_used_at: _u, last_ip: _i, prefix: _p, ...rest }) => rest);
        out[table] = createHash('sha256').update(JSON.stringify(rows)).digest('hex');
      }
      return out;
    },
    rows: <T>(sqlText: string, ...params: unknown[]) => db.prepare(sqlText).all(...params) as T[],
    close: () => db.close(),
  };
}

/** What came back on a raw socket: the bytes, and whether the server closed the connection. */
export interface RawExchange {
  data: Buffer;
  closed: boolean;
  /** ms from connect until the server closed (or until the timeout). */
  elapsedMs: number;
  /** The socket error that ended the exchange, if any (e.g. ECONNRESET). */
  error?: string;
}

/**
 * Sends `bytes` on a new loopback socket and collects everything until the server closes the
 * connection or `timeoutMs` passes (then the socket is destroyed). With `halfClose`, the client
 * ends its side after sending (so an incomplete request is over at once). Never rejects.
 */
export function rawExchange(port: number, bytes: Buffer | string, timeoutMs = 3000, halfClose = false): Promise<RawExchange> {
  return new Promise((resolve) => {
    const started = Date.now();
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1');
    let done = false;
    let error: string | undefined;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ data: Buffer.concat(chunks), closed, elapsedMs: Date.now() - started, ...(error ? { error } : {}) });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on('connect', () => (halfClose ? socket.end(bytes) : socket.write(bytes)));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      error = err.code ?? err.message;
      finish(true);
    });
    socket.on('close', () => finish(true));
    if (!halfClose) socket.on('end', () => finish(true));
  });
}

export interface ParsedResponse {
  status: number;
  statusText: string;
  headers: Record<string, string>;
  body: string;
  /** Bytes after this response (pipelined responses). */
  rest: Buffer;
}

/**
 * Parses the first final HTTP/1.1 response in `data` (Content-Length or chunked bodies; interim
 * 1xx responses are skipped), or undefined when incomplete.
 */
export function parseResponse(data: Buffer, method = 'GET'): ParsedResponse | undefined {
  while (/^HTTP\/1\.[01] 1\d\d/.test(data.subarray(0, 12).toString('latin1'))) {
    const interim = data.indexOf('\r\n\r\n');
    if (interim === -1) return undefined;
    data = data.subarray(interim + 4);
  }
  const end = data.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const head = data.subarray(0, end).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3}) ?(.*)$/.exec(head[0]!);
  if (!m) return undefined;
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const i = line.indexOf(':');
    headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  let offset = end + 4;
  const status = Number(m[1]);
  let body: Buffer = Buffer.alloc(0);
  if (method !== 'HEAD' && status !== 204 && status !== 304) {
    if (headers['transfer-encoding'] === 'chunked') {
      const parts: Buffer[] = [];
      for (;;) {
        const eol = data.indexOf('\r\n', offset);
        if (eol === -1) return undefined;
        const size = Number.parseInt(data.subarray(offset, eol).toString('latin1'), 16);
        offset = eol + 2;
        if (size === 0) {
          offset += 2;
          break;
        }
        if (data.length < offset + size + 2) return undefined;
        parts.push(data.subarray(offset, offset + size));
        offset += size + 2;
      }
      body = Buffer.concat(parts);
    } else {
      const length = Number(headers['content-length'] ?? 0);
      if (data.length < offset + length) return undefined;
      body = data.subarray(offset, offset + length);
      offset += length;
    }
  }
  return { status, statusText: m[2]!, headers, body: body.toString('utf8'), rest: data.subarray(offset) };
}

/** Parses every complete response in `data`, in order. */
export function parseResponses(data: Buffer, methods: string[] = []): ParsedResponse[] {
  const out: ParsedResponse[] = [];
  let rest = data;
  for (let i = 0; rest.length > 0; i++) {
    const r = parseResponse(rest, methods[i] ?? 'GET');
    if (!r) break;
    out.push(r);
    rest = r.rest;
  }
  return out;
}

/** Opens a loopback socket and resolves once connected. */
export function openSocket(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** `bytes` %-encoded byte by byte (so any byte sequence, valid UTF-8 or not, fits in a URL). */
export function percentBytes(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += `%${b.toString(16).padStart(2, '0').toUpperCase()}`;
  return out;
}
