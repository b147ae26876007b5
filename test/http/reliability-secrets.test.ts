/**
 * Secrets (API.md §1.2). Every log line of a run is captured, at LOG_LEVEL=trace, in process
 * and from a real `msgsvc serve` child (stdout and stderr), across every operation, every error
 * status, malformed HTTP, a database failure and a shutdown. No token appears in any of it in any
 * encoding: plain, URL-encoded (any escaping), PHP-encoded as the Link header carries it, JSON-
 * escaped, base64, or any 12-character piece of it. Tokens are stored hashed: the tokens table,
 * every other table and the raw database files hold no plaintext. Token comparison is constant
 * time, checked structurally (see the last test).
 */
import assert from 'node:assert/strict';
import crypto, { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { InjectOptions } from 'fastify';
import { issueToken } from '../../src/domain/accounts.ts';
import { hashToken } from '../../src/domain/tokens.ts';
import { insertToken, revokeToken } from '../../src/store/repositories/accounts.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { spawnServe, tempDir, waitForHttp } from '../helpers/cli.ts';
import { freePort } from '../helpers/net.ts';
import { traceCrypto } from '../helpers/crypto-trace.ts';
import { storeTest } from '../helpers/stores.ts';
import { openProbe, rawExchange, TABLES } from '../helpers/reliability.ts';

// The cases that read the SQLite file run on SQLite only ({ stores: ['sqlite'] }).

/** Every way a token could show up in a log line. */
function forms(token: string): string[] {
  const php = encodeURIComponent(token)
    .replace(/%20/g, '+')
    .replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  const out = new Set([
    token,
    encodeURIComponent(token),
    encodeURIComponent(token).toLowerCase(),
    encodeURIComponent(token).replace(/%20/g, '+'),
    encodeURI(token),
    php,
    JSON.stringify(token).slice(1, -1),
    JSON.stringify(encodeURIComponent(token)).slice(1, -1),
    Buffer.from(token).toString('base64'),
    Buffer.from(token).toString('base64url'),
    Buffer.from(token).toString('hex'),
  ]);
  // Any 12-character piece of the plain and encoded forms (a truncated token is still a leak).
  for (const f of [token, encodeURIComponent(token), php]) for (let i = 0; i + 12 <= f.length; i++) out.add(f.slice(i, i + 12));
  return [...out].filter((f) => f.length >= 8);
}

function assertNoToken(text: string, tokens: string[], where: string): void {
  for (const token of tokens) {
    for (const f of forms(token)) {
      const at = text.indexOf(f);
      assert.equal(
        at,
        -1,
        `${where}: ${JSON.stringify(f)} (a form of a token) appears in: ${JSON.stringify(text.slice(Math.max(0, at - 120), at + 120))}`,
      );
    }
  }
}

/** Tokens with characters that every encoding changes, stored (hashed) for an account. */
async function oddTokens(ctx: TestApp, accountId: number): Promise<string[]> {
  const tokens = [
    `tök/en+with&odd=chars%20~!*'() ${randomBytes(6).toString('hex')}`,
    `Ω "quoted" <tag> ✓ ${randomBytes(6).toString('base64url')}`,
  ];
  for (const token of tokens) await insertToken(ctx.store.db, accountId, hashToken(token), 'odd', Math.floor(Date.now() / 1000));
  return tokens;
}

function requestsFor(token: string, demo: Awaited<ReturnType<TestApp['seed']>>) {
  const t = encodeURIComponent(token);
  const group = demo.groups[0]!.Id;
  const entry = demo.customFieldEntries[0]!;
  const json = { 'content-type': 'application/json' };
  const active = demo.numbers.find((n) => n.Status_Id === 0)!.Number;
  return [
    { url: `/v1/numbers/index?access_token=${t}&per-page=1&page=2` },
    {
      url: `/v1/numbers/index?access_token=${t}`,
      headers: { accept: 'application/xml', referer: `https://client.example/?access_token=${t}` },
    },
    { method: 'HEAD', url: `/v1/credits/balance?access_token=${t}` },
    { url: `/v1/sms/single-schedule-messages?page=1&access_token=${t}&per-page=2` },
    { url: `/v1/contacts/find?number=%2B${demo.contacts[0]!.Number}&access_token=${t}` },
    { url: `/v1/contacts/find?number=nope&access_token=${t}` },
    {
      method: 'PUT',
      url: `/v1/groups/update?id=${group}&access_token=${t}`,
      headers: json,
      payload: JSON.stringify({ fname: 'Secret test' }),
    },
    { method: 'PATCH', url: `/v1/groups/update?id=${group}&access_token=${t}`, headers: json, payload: '{' },
    { method: 'PUT', url: `/v1/groups/update?id=abc&access_token=${t}`, headers: json, payload: '{}' },
    { method: 'PUT', url: `/v1/groups/update?id=999999&access_token=${t}`, headers: json, payload: '{}' },
    {
      method: 'PUT',
      url: `/v1/custom-contact-fields/update?id=${demo.customFields[0]!.Id}&access_token=${t}`,
      headers: { 'content-type': 'text/plain' },
      payload: 'x',
    },
    {
      method: 'POST',
      url: `/v1/custom-contact-fields-entry/update?id=${entry.Id}&access_token=${t}`,
      headers: json,
      payload: JSON.stringify({ frfield: entry.CustomFieldId, frcontact: entry.PhoneNumberId, fvalue: token }),
    },
    {
      method: 'POST',
      url: `/v1/keyword/reserve?access_token=${t}`,
      headers: json,
      payload: JSON.stringify({ Keyword: `K${randomBytes(4).toString('hex')}`, Number: active }),
    },
    {
      method: 'POST',
      url: `/v1/keyword/reserve?access_token=${t}`,
      headers: json,
      payload: JSON.stringify({ Keyword: 'STOP', Number: active, AutoreplyMessage: token }),
    },
    { method: 'POST', url: `/v1/keyword/reserve?access_token=${t}`, headers: json, payload: JSON.stringify({ Keyword: 'x'.repeat(5000) }) },
    { method: 'DELETE', url: `/v1/numbers/index?access_token=${t}` },
    { url: `/v1/numbers/index?access_token=${t}`, headers: { accept: 'text/html' } },
    { url: `/v1/numbers/index?access_token=${t}&_format=yaml` },
    { url: `/v1/nope?access_token=${t}` },
    { url: `/v1/%ZZ?access_token=${t}` },
    { url: `/v1/%E0%A4%A?access_token=${t}` },
    { url: `/v1/credits/balance?access_token=${t}x` },
    { url: `/v1/credits/balance?access_token[]=${t}` },
    { url: `/v1/credits/balance?access%5Ftoken=${t}` },
    { url: `/v1/credits/balance?access.token=${t}` },
    { url: `/v1/credits/balance?ACCESS_TOKEN=${t}` },
    { url: `/v1/credits/balance?access_token=${t}&access_token=${t}` },
    { url: `/v1/credits/balance?x=${'y'.repeat(9000)}&access_token=${t}` },
    { url: `/v1/credits/balance?access_token=${t}#fragment` },
  ];
}

storeTest('secrets: no token in any log line of an in-process run at trace level', async (t) => {
  const lines: string[] = [];
  const logDestination = { write: (line: string) => void lines.push(line) };
  const ctx = await buildTestApp(t, { LOG_LEVEL: 'trace', MSGSVC_BODY_LIMIT: '4096' }, { logDestination });
  const demo = await ctx.seed('Secrets');
  const tokens = [demo.token, ...(await oddTokens(ctx, demo.account.id))];
  const revoked = (await issueToken(ctx.store, demo.account.id)).token;
  await revokeToken(ctx.store.db, { tokenHash: hashToken(revoked) }, Math.floor(Date.now() / 1000));
  tokens.push(revoked);
  const limited = await buildTestApp(t, { LOG_LEVEL: 'trace', MSGSVC_RATE_LIMIT: '2', MSGSVC_RATE_WINDOW: '60' }, { logDestination });
  const other = await limited.seed('Rate limited');
  tokens.push(other.token);

  const statuses = new Set<number>();
  const links: string[] = [];
  for (const token of [...tokens.slice(0, 3), revoked]) {
    for (const r of requestsFor(token, demo)) {
      const res = await ctx.app.inject({ method: 'GET', ...r } as InjectOptions);
      statuses.add(res.statusCode);
      if (typeof res.headers.link === 'string') links.push(res.headers.link);
    }
    // 413: a body over the limit, with the token in the URL and in the body.
    const big = await ctx.app.inject({
      method: 'PUT',
      url: `/v1/groups/update?id=1&access_token=${encodeURIComponent(token)}`,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ fname: token.repeat(400) }),
    });
    statuses.add(big.statusCode);
  }
  for (let i = 0; i < 4; i++) statuses.add((await limited.app.inject({ url: `/v1/numbers/index?access_token=${other.token}` })).statusCode);

  // Over a real socket: malformed messages carrying the token (bad request line, oversized head,
  // missing Host, CONNECT).
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = ctx.app.server.address() as AddressInfo;
  const tok = encodeURIComponent(demo.token);
  for (const raw of [
    `GET /v1/credits/balance?access_token=${tok} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    `GET /v1/credits/balance?access_token=${tok} HTTP/9.9\r\nHost: x\r\n\r\n`,
    `GET /v1/credits/balance?access_token=${tok} HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    `GET /v1/credits/balance?access_token=${tok} HTTP/1.1\r\nConnection: close\r\n\r\n`,
    `CONNECT /v1/credits/balance?access_token=${tok} HTTP/1.1\r\nHost: x\r\n\r\n`,
    `GET /v1/credits/balance?access_token=${tok}\r\n\r\n`,
    `POST /v1/keyword/reserve?access_token=${tok} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n`,
  ]) {
    const ex = await rawExchange(port, raw, 3000);
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(ex.data.toString('latin1'))?.[1]);
    if (status) statuses.add(status);
  }

  // A failing database: unexpected errors are logged with their stack; still no token.
  await ctx.store.close();
  for (const token of tokens.slice(0, 2)) {
    const res = await ctx.app.inject({ url: `/v1/numbers/index?access_token=${encodeURIComponent(token)}` });
    statuses.add(res.statusCode);
  }
  await new Promise((r) => setTimeout(r, 50));

  for (const s of [200, 201, 400, 401, 404, 405, 406, 413, 414, 415, 422, 429, 431])
    assert.ok(statuses.has(s), `the run produced a ${s} (${[...statuses].sort().join(', ')})`);
  assert.ok(
    [...statuses].some((s) => s >= 500),
    'the run produced a database failure',
  );
  assert.ok(links.length > 4 && links.every((l) => l.includes('access_token=')), 'Link headers carried the token');
  assert.ok(lines.length > 100, `log lines captured (${lines.length})`);
  const all = lines.join('');
  for (const line of lines) assert.doesNotThrow(() => JSON.parse(line), `every log line is JSON: ${line.slice(0, 200)}`);
  assertNoToken(all, tokens, 'in-process log');
  for (const link of links) assert.equal(all.indexOf(link), -1, 'a Link header is never echoed into the log');
  assert.ok(
    lines.some((l) => /"level":(50|60)/.test(l)),
    'the database failure was logged as an error',
  );
  t.diagnostic(`${lines.length} log lines, statuses ${[...statuses].sort().join(' ')}`);
});

storeTest(
  'secrets: no token in the stdout or stderr of a real server process (trace level, shutdown included)',
  { stores: ['sqlite'], timeout: 60_000 },
  async (t) => {
    const { dbPath } = tempDir(t);
    const port = await freePort();
    // First start with the demo: the banner shows its token once, deliberately (README); no log
    // line may carry it.
    const server = spawnServe(t, [], {
      DATABASE_URL: dbPath,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'trace',
      MSGSVC_DEMO: '1',
      MSGSVC_RATE_LIMIT: '3',
      MSGSVC_RATE_WINDOW: '60',
    });
    const banner = await server.waitForStdout((out) => /Access token \(shown once[^:]*\): \S+/.test(out), 60_000);
    const token = /Access token \(shown once[^:]*\): (\S+)/.exec(banner)![1]!;
    const base = `http://127.0.0.1:${port}`;
    await waitForHttp(`${base}/healthz`);
    const t1 = encodeURIComponent(token);
    for (const path of [
      `/v1/numbers/index?access_token=${t1}&per-page=1`,
      `/v1/credits/balance?access_token=${t1}`,
      `/v1/nope?access_token=${t1}`,
      `/v1/%ZZ?access_token=${t1}`,
      `/v1/credits/balance?access_token=${t1}x`,
      `/v1/credits/balance?access_token[]=${t1}`,
      `/v1/credits/balance?access_token=${t1}`,
      `/v1/credits/balance?access_token=${t1}`,
    ]) {
      await (await fetch(`${base}${path}`, { headers: { referer: `${base}${path}` } })).text();
    }
    await rawExchange(port, `GET /v1/credits/balance?access_token=${t1} HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 2000);
    await rawExchange(port, `GET /v1/credits/balance?access_token=${t1} HTTP/7.0\r\n\r\n`, 2000);
    const exit = await server.stop();
    assert.equal(exit.code, 0, `graceful shutdown: ${server.stderr}`);

    const stdoutLines = server.stdout.split('\n').filter((l) => l.trim() !== '');
    const logLines = stdoutLines.filter((l) => l.startsWith('{'));
    const other = stdoutLines.filter((l) => !l.startsWith('{'));
    assert.ok(logLines.length >= 8, `request log lines on stdout (${logLines.length})`);
    assert.ok(
      logLines.some((l) => l.includes('"statusCode":429')),
      'the rate limit was hit and logged',
    );
    assertNoToken(logLines.join('\n'), [token], 'server log lines (stdout)');
    assertNoToken(server.stderr, [token], 'server stderr');
    // The token is only in the human banner (its token line and ready-to-paste curl lines), printed
    // once at the first start, before any request.
    const start = stdoutLines.findIndex((l) => l.startsWith('msgsvc: the database had no account'));
    const end = stdoutLines.findIndex((l) => l.startsWith('More demo accounts'));
    assert.ok(start !== -1 && end > start, 'one demo banner');
    assert.equal(stdoutLines.filter((l) => l.startsWith('msgsvc: the database had no account')).length, 1, 'printed once');
    stdoutLines.forEach((l, i) => {
      if (l.includes(token))
        assert.ok(i > start && i < end && !l.startsWith('{'), `the token appears only inside the banner: ${l.slice(0, 120)}`);
    });
    assert.ok(other.length > 0);
  },
);

storeTest('secrets: tokens are stored hashed; no plaintext in any table or in the database files', { stores: ['sqlite'] }, async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed('Stored');
  const issued = [demo.token, (await issueToken(ctx.store, demo.account.id, 'second')).token, ...(await oddTokens(ctx, demo.account.id))];
  // Use each one, so nothing on the request path stores it either.
  for (const token of issued)
    assert.equal((await ctx.app.inject({ url: `/v1/credits/balance?access_token=${encodeURIComponent(token)}` })).statusCode, 200);
  const probe = openProbe(ctx.dbPath);
  t.after(() => probe.close());
  const rows = probe.rows<{ token_hash: string; account_id: number }>(
    'SELECT token_hash, account_id FROM api_tokens WHERE account_id = ?',
    demo.account.id,
  );
  assert.deepEqual(
    rows.map((r) => r.token_hash).sort(),
    issued.map((tk) => crypto.createHash('sha256').update(tk, 'utf8').digest('hex')).sort(),
    'the tokens table holds exactly the SHA-256 of each token',
  );
  for (const r of rows) assert.match(r.token_hash, /^[0-9a-f]{64}$/);
  for (const table of TABLES) {
    const dump = JSON.stringify(probe.rows(`SELECT * FROM ${table}`));
    for (const token of issued)
      assert.ok(!dump.includes(token) && !dump.includes(encodeURIComponent(token)), `${table} holds no plaintext token`);
  }
  // The raw bytes of the database, its WAL and shared memory: no token in UTF-8 or UTF-16.
  const files = readdirSync(ctx.dir).filter((f) => f.startsWith('msgsvc.db'));
  assert.ok(files.includes('msgsvc.db'));
  for (const file of files) {
    const bytes = readFileSync(join(ctx.dir, file));
    for (const token of issued) {
      assert.equal(bytes.indexOf(Buffer.from(token, 'utf8')), -1, `${file} holds no UTF-8 token`);
      assert.equal(bytes.indexOf(Buffer.from(token, 'utf16le')), -1, `${file} holds no UTF-16 token`);
    }
  }
});

/**
 * Constant time, checked by structure rather than by a stopwatch (timing tests are flaky on
 * shared CI). `timingSafeEqual`, `createHash` and `hash` are wrapped (node:module syncBuiltinESMExports
 * updates the ESM bindings src/http/plugins/auth.ts imported), and the calls each request makes
 * are recorded. The properties:
 *   - the presented token is only ever hashed (SHA-256, whose cost does not depend on content);
 *     the stored value is found by that hash, so a token sharing a prefix with a real one shares
 *     nothing with it on the lookup path;
 *   - every timingSafeEqual compares two 32-byte digests, never variable-length raw tokens;
 *   - unknown tokens, tokens one character off a real one (last, first), a real token's prefix or
 *     extension, other case, and revoked tokens all take exactly the same path (same calls).
 */
storeTest('secrets: token comparison is constant time (structural)', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed('Timing');
  const revoked = (await issueToken(ctx.store, demo.account.id)).token;
  await revokeToken(ctx.store.db, { tokenHash: hashToken(revoked) }, Math.floor(Date.now() / 1000));

  // Calls on the request path, in order: `sha256(token)` when the presented token is hashed,
  // `timingSafeEqual(a,b)` with byte lengths (test/helpers/crypto-trace.ts).
  const tracer = traceCrypto(t, 'token');
  const trace = async (token: string) => {
    const { result: res, calls } = await tracer.run(token, () =>
      ctx.app.inject({ url: `/v1/credits/balance?access_token=${encodeURIComponent(token)}` }),
    );
    return { status: res.statusCode, calls, hashed: calls.includes('sha256(token)') };
  };

  const real = demo.token;
  const flip = (c: string) => (c === 'A' ? 'B' : 'A');
  const nearMisses = {
    'random, same length': randomBytes(24).toString('base64url'),
    'last character off': real.slice(0, -1) + flip(real.at(-1)!),
    'first character off': flip(real[0]!) + real.slice(1),
    'prefix of the real token': real.slice(0, real.length - 4),
    'real token plus one': `${real}A`,
    'other case': real.toUpperCase() === real ? real.toLowerCase() : real.toUpperCase(),
    'revoked token': revoked,
    'long (512)': 'x'.repeat(512),
  };

  const first = await trace(real);
  assert.equal(first.status, 200);
  assert.ok(first.hashed, 'the real token was hashed');
  const compares = first.calls.filter((c) => c.startsWith('timingSafeEqual'));
  assert.deepEqual(
    compares,
    ['timingSafeEqual(32,32)'],
    'a known token is confirmed by one constant-time comparison of two SHA-256 digests',
  );

  const reference = await trace(nearMisses['random, same length']);
  assert.equal(reference.status, 401);
  for (const [name, token] of Object.entries(nearMisses)) {
    const got = await trace(token);
    assert.equal(got.status, 401, name);
    assert.ok(got.hashed, `${name}: the token is hashed before anything else`);
    assert.deepEqual(got.calls, reference.calls, `${name}: exactly the path of a random unknown token`);
    for (const c of got.calls.filter((x) => x.startsWith('timingSafeEqual'))) assert.equal(c, 'timingSafeEqual(32,32)', name);
  }
  t.diagnostic(`known token: [${first.calls.join(', ')}]; every unknown/near-miss token: [${reference.calls.join(', ')}]`);
});
