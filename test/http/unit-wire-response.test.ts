/**
 * WireResponse (src/http/wire.ts): the headers kept in one list and written by Node in one piece,
 * with Node's own semantics for setHeader, getHeader, hasHeader, removeHeader and appendHeader, and
 * the names exactly cased on the wire (API.md §2.4). Over a real socket: the bytes of the head are read raw.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { once } from 'node:events';
import { WireResponse } from '../../src/http/wire.ts';

/** Serves one request with `handle` and returns the raw head of the answer (up to the blank line). */
async function rawHead(handle: (res: ServerResponse<IncomingMessage>) => void): Promise<string> {
  const server = createServer({ ServerResponse: WireResponse }, (_req, res) => handle(res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  try {
    const socket = connect(port, '127.0.0.1');
    socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    let text = '';
    socket.setEncoding('latin1').on('data', (d: string) => (text += d));
    await once(socket, 'end');
    return text.slice(0, text.indexOf('\r\n\r\n'));
  } finally {
    server.close();
  }
}

const names = (head: string) =>
  head
    .split('\r\n')
    .slice(1)
    .map((l) => l.slice(0, l.indexOf(':')));

describe('WireResponse', () => {
  test('headers go out in the order first set, exactly cased, lower-case names in their wire form', async () => {
    const head = await rawHead((res) => {
      res.setHeader('X-Request-Id', 'r1');
      res.setHeader('vary', 'Accept');
      res.setHeader('x-rate-limit-limit', '60');
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
      res.end('ok');
    });
    assert.deepEqual(names(head), ['X-Request-Id', 'Vary', 'X-Rate-Limit-Limit', 'Content-Type', 'Content-Length', 'Date', 'Connection']);
    assert.match(head, /^HTTP\/1\.1 200 OK\r\n/);
  });

  test('a header set again keeps its place and takes the new name and value; names match case-insensitively', async () => {
    let seen: unknown[] = [];
    const head = await rawHead((res) => {
      res.setHeader('X-A', '1');
      res.setHeader('X-B', '2');
      res.setHeader('x-a', '3');
      seen = [
        res.getHeader('X-A'),
        res.getHeader('x-b'),
        res.hasHeader('X-B'),
        res.hasHeader('X-C'),
        res.getHeaderNames(),
        res.getHeaders(),
      ];
      res.end();
    });
    assert.match(head, /\r\nX-A: 3\r\nX-B: 2\r\n/);
    assert.deepEqual(seen.slice(0, 4), ['3', '2', true, false]);
    assert.deepEqual(seen[4], ['x-a', 'x-b']);
    assert.deepEqual({ ...(seen[5] as object) }, { 'x-a': '3', 'x-b': '2' });
  });

  test('removeHeader removes, and removing Date keeps Node from adding its own', async () => {
    const head = await rawHead((res) => {
      res.setHeader('X-Gone', '1');
      res.setHeader('X-Kept', '1');
      res.removeHeader('x-gone');
      res.removeHeader('Date');
      res.end();
    });
    assert.deepEqual(
      names(head).filter((n) => n.startsWith('X-') || n === 'Date'),
      ['X-Kept'],
    );
  });

  test('appendHeader adds a value; an array value gives one line per value', async () => {
    const head = await rawHead((res) => {
      res.setHeader('Set-Cookie', 'a=1');
      res.appendHeader('Set-Cookie', 'b=2');
      res.setHeader('X-List', ['p', 'q']);
      res.end();
    });
    assert.match(head, /\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nX-List: p\r\nX-List: q\r\n/);
  });

  test('a value Node refuses is left out and the answer still goes out whole', async () => {
    const head = await rawHead((res) => {
      res.setHeader('X-Good', '1');
      res.setHeader('X-Bad', 'a\u0001b');
      res.end('body');
    });
    assert.match(head, /^HTTP\/1\.1 200 OK\r\n/);
    assert.ok(names(head).includes('X-Good'));
    assert.ok(!names(head).includes('X-Bad'));
  });

  test('after the head is written, setHeader throws as Node does', async () => {
    let error: unknown;
    await rawHead((res) => {
      res.writeHead(204);
      try {
        res.setHeader('X-Late', '1');
      } catch (err) {
        error = err;
      }
      res.end();
    });
    assert.equal((error as { code?: string }).code, 'ERR_HTTP_HEADERS_SENT');
  });
});
