import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import pino from 'pino';
import { PassThrough } from 'node:stream';
import { createLogger, logRequest, maskUrl, relayLines } from '../../src/http/log.ts';

describe('maskUrl hides every access_token value', () => {
  const cases: [string, string, string][] = [
    ['plain key', '/v1/numbers/index?access_token=s3cr3t', '/v1/numbers/index?access_token=***'],
    [
      'plain key among others',
      '/v1/numbers/index?page=2&access_token=s3cr3t&per-page=5',
      '/v1/numbers/index?page=2&access_token=***&per-page=5',
    ],
    ['%5F-encoded key', '/v1/credits/balance?access%5Ftoken=s3cr3t', '/v1/credits/balance?access%5Ftoken=***'],
    ['%5f lowercase escape', '/v1/credits/balance?access%5ftoken=s3cr3t', '/v1/credits/balance?access%5ftoken=***'],
    ['array key', '/v1/credits/balance?access_token[]=s3cr3t', '/v1/credits/balance?access_token[]=***'],
    ['encoded array key', '/v1/credits/balance?access_token%5B%5D=s3cr3t', '/v1/credits/balance?access_token%5B%5D=***'],
    ['dotted key', '/v1/credits/balance?access.token=s3cr3t', '/v1/credits/balance?access.token=***'],
    ['key with +', '/v1/credits/balance?access+token=s3cr3t', '/v1/credits/balance?access+token=***'],
    ['repeated key', '/v1/x?access_token=a&id=1&access_token=b', '/v1/x?access_token=***&id=1&access_token=***'],
  ];
  for (const [name, url, masked] of cases) {
    test(name, () => {
      const out = maskUrl(url);
      assert.equal(out, masked);
      assert.ok(!out.includes('s3cr3t'));
    });
  }
  test('a URL without a query is unchanged', () => assert.equal(maskUrl('/v1/numbers/index'), '/v1/numbers/index'));
  test('other parameters are untouched, byte for byte', () => {
    const url = '/v1/contacts/find?number=%2B1%20555+123&x=%zz&token=abc&my_access_token=1&access_tokens=2&q=access_token';
    assert.equal(maskUrl(url), url);
  });
  test('the path and other parameters stay around a masked token', () => {
    assert.equal(
      maskUrl('/v1/groups/update?id=7&access_token=abc%2Fdef&_format=xml'),
      '/v1/groups/update?id=7&access_token=***&_format=xml',
    );
  });
  test('a broken escape in the key does not throw', () => {
    assert.equal(maskUrl('/v1/x?%zz=1&access_token=t'), '/v1/x?%zz=1&access_token=***');
  });
});

describe('logRequest writes the line pino would write, byte for byte', () => {
  const capture = () => {
    const lines: string[] = [];
    return { lines, stream: { write: (line: string) => void lines.push(line) } };
  };
  // The same request logged twice: by logRequest, and by pino's own info() with the same fields.
  const both = (
    logger: FastifyBaseLogger,
    lines: string[],
    r: { id: string; method: string; url: string; accountId: number; statusCode: number; elapsedTime: number },
  ) => {
    const request = { log: logger, id: r.id, method: r.method, url: r.url, accountId: r.accountId } as unknown as FastifyRequest;
    const reply = { statusCode: r.statusCode, elapsedTime: r.elapsedTime } as unknown as FastifyReply;
    logRequest(request, reply);
    logger.info(
      {
        reqId: r.id,
        method: r.method,
        url: maskUrl(r.url),
        statusCode: r.statusCode,
        responseTimeMs: Math.round(r.elapsedTime * 100) / 100,
        accountId: r.accountId || undefined,
      },
      'request',
    );
    const [ours, pinos] = lines.splice(0).map((l) => l.replace(/"time":\d+/, '"time":0'));
    return { ours, pinos };
  };
  // Node hands over the request line one byte per character (latin1), so a URL never holds a
  // character above U+00FF, nor a lone surrogate (which JSON.stringify escapes and pino would not).
  const requests = [
    { id: 'a1b2', method: 'GET', url: '/v1/credits/balance?access_token=s3cr3t', accountId: 7, statusCode: 200, elapsedTime: 1.23456 },
    { id: 'x', method: 'POST', url: '/v1/sms/send?access_token=t', accountId: 0, statusCode: 401, elapsedTime: 0 },
    {
      id: 'q"\\\u0001',
      method: 'DELETE',
      url: '/v1/x?a="quoted"\\&b=\u00e9\u00ff&access_token=z',
      accountId: 3,
      statusCode: 404,
      elapsedTime: 12,
    },
    {
      id: 'y'.repeat(200),
      method: 'PUT',
      url: `/v1/contacts/update?id=1&n=${'%41'.repeat(100)}`,
      accountId: 1,
      statusCode: 422,
      elapsedTime: 0.005,
    },
  ];
  for (const r of requests) {
    test(`${r.method} ${r.statusCode} (accountId ${r.accountId || 'absent'})`, () => {
      const { lines, stream } = capture();
      const { ours, pinos } = both(createLogger('info', stream), lines, r);
      assert.ok(ours?.endsWith('\n'));
      assert.equal(ours, pinos);
      assert.ok(!ours!.includes('s3cr3t'));
      const parsed = JSON.parse(ours!) as Record<string, unknown>;
      assert.equal(parsed.reqId, r.id);
      assert.equal(parsed.msg, 'request');
      assert.equal('accountId' in parsed, r.accountId !== 0);
    });
  }
  test('no line below the info level', () => {
    const { lines, stream } = capture();
    const request = { log: createLogger('warn', stream), id: '1', method: 'GET', url: '/', accountId: 1 } as unknown as FastifyRequest;
    logRequest(request, { statusCode: 200, elapsedTime: 1 } as unknown as FastifyReply);
    assert.deepEqual(lines, []);
  });
  test("a logger configured beyond ours (a mixin) goes through pino's own path, mixin included", () => {
    const { lines, stream } = capture();
    const logger = pino({ mixin: () => ({ extra: 1 }) }, stream) as unknown as FastifyBaseLogger;
    const { ours, pinos } = both(logger, lines, requests[0]!);
    assert.equal(ours, pinos);
    assert.equal((JSON.parse(ours!) as { extra: number }).extra, 1);
  });
});

describe("relayLines passes a worker's output on in whole lines", () => {
  function relay() {
    const source = new PassThrough();
    const written: string[] = [];
    relayLines(source, { write: (text: string) => void written.push(text) });
    return { source, written };
  }

  test('a line split across chunks is written once it is whole; complete lines go at once', () => {
    const { source, written } = relay();
    source.write('{"a":1}\n{"b":');
    source.write('2}\n{"c":3}\n');
    assert.deepEqual(written, ['{"a":1}\n', '{"b":2}\n{"c":3}\n']);
  });

  test('a multi-byte character split across chunks arrives intact', () => {
    const { source, written } = relay();
    const bytes = Buffer.from('{"msg":"héllo €"}\n');
    const inside = bytes.indexOf(Buffer.from('€')) + 1; // between the euro sign's first and second byte
    source.write(bytes.subarray(0, inside));
    source.write(bytes.subarray(inside));
    assert.deepEqual(written, ['{"msg":"héllo €"}\n']);
  });

  test('a partial last line (a worker killed mid-line) is written on its own line at the end', async () => {
    const { source, written } = relay();
    source.end('{"a":1}\n{"cut');
    await new Promise((resolve) => source.on('end', resolve));
    assert.deepEqual(written, ['{"a":1}\n', '{"cut\n']);
  });

  test('a line without a newline is not held beyond 1 MiB', () => {
    const { source, written } = relay();
    source.write(Buffer.alloc(600 * 1024, 'x'));
    assert.equal(written.length, 0, 'held while under 1 MiB');
    source.write(Buffer.alloc(600 * 1024, 'y'));
    assert.equal(written.length, 1);
    assert.equal(written[0]!.length, 1200 * 1024);
  });
});
