/**
 * API.md §1.2: tokens are secrets. Exactly one JSON log line per request, the access_token value
 * never logged (plain or URL-encoded) and masked as ***; only a hash is stored.
 */
import assert from 'node:assert/strict';
import type { InjectOptions } from 'fastify';
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { ids, JSON_BODY, rawRequest, setup } from '../helpers/conventions.ts';
import { storeTest } from '../helpers/stores.ts';

async function logged(t: Parameters<typeof setup>[0], env: Record<string, string> = {}) {
  const lines: string[] = [];
  const s = await setup(t, { LOG_LEVEL: 'info', ...env }, { logDestination: { write: (line: string) => void lines.push(line) } });
  return { ...s, lines };
}

function forms(secret: string): string[] {
  return [secret, encodeURIComponent(secret), encodeURIComponent(secret).replace(/%20/g, '+'), encodeURI(secret)];
}

storeTest('API.md §1.2 exactly one JSON line per request; the token is masked as ***', async (t) => {
  const { inject, url, demo, token, lines } = await logged(t, { MSGSVC_RATE_LIMIT: '12', MSGSVC_RATE_WINDOW: '60' });
  const { group } = ids(demo);
  lines.length = 0;
  const requests: InjectOptions[] = [
    { url: url('/v1/numbers/index') },
    { method: 'HEAD', url: url('/v1/credits/balance') },
    { url: url('/v1/credits/balance'), headers: { accept: 'application/xml' } },
    { url: url('/v1/nope') },
    { url: url('/v1/numbers/index'), headers: { accept: 'text/html' } },
    { method: 'DELETE', url: url('/v1/numbers/index') },
    { url: `/v1/numbers/index?access_token=${token}x` },
    { method: 'PUT', url: url('/v1/groups/update'), headers: JSON_BODY, payload: '{}' },
    { method: 'PUT', url: url('/v1/groups/update', 'id=999999'), headers: JSON_BODY, payload: '{"fname":"Valid"}' },
    { method: 'PUT', url: url('/v1/groups/update', `id=${group}`), headers: JSON_BODY, payload: '{' },
    { method: 'PUT', url: url('/v1/groups/update', `id=${group}`), headers: JSON_BODY, payload: '{}' },
    { method: 'PUT', url: url('/v1/groups/update', `id=${group}`), headers: { 'content-type': 'text/plain' }, payload: 'x' },
    { method: 'PUT', url: url('/v1/groups/update', `id=${group}`), headers: JSON_BODY, payload: '{"fname":"Logged group"}' },
  ];
  for (let i = 0; i < 20; i++) requests.push({ url: url('/v1/credits/balance') }); // runs into 429
  for (const [i, req] of requests.entries()) {
    const before = lines.length;
    const res = await inject(req);
    await sleep(0);
    assert.equal(lines.length - before, 1, `request ${i} (${res.statusCode}) logged ${lines.length - before} lines`);
    const line = lines[lines.length - 1]!;
    assert.ok(line.endsWith('\n'));
    const entry = JSON.parse(line);
    assert.equal(entry.statusCode, res.statusCode);
    assert.equal(entry.method, req.method ?? 'GET');
    assert.match(entry.url, /access_token=\*\*\*(&|$)/);
  }
  const statuses = new Set(lines.map((l) => JSON.parse(l).statusCode));
  for (const s of [200, 400, 401, 404, 405, 406, 415, 422, 429]) assert.ok(statuses.has(s), `a ${s} was logged`);
  const all = lines.join('');
  for (const secret of [token, `${token}x`]) for (const f of forms(secret)) assert.ok(!all.includes(f), 'token leaked into the log');
});

storeTest('API.md §1.2 every spelling of access_token is masked, and no token value appears in the log', async (t) => {
  const { inject, token, lines } = await logged(t);
  const odd = 'sécret token/with+&=chars';
  const enc = encodeURIComponent(odd);
  const urls = [
    `/v1/credits/balance?access_token=${token}`,
    `/v1/credits/balance?foo=1&access_token=${token}&bar=2`,
    `/v1/credits/balance?access_token=firstvalue123&access_token=${token}`,
    `/v1/credits/balance?access_token[]=${token}`,
    `/v1/credits/balance?access_token[x]=${token}`,
    `/v1/credits/balance?access%5Ftoken=${token}`,
    `/v1/credits/balance?access%5ftoken=${token}`,
    `/v1/credits/balance?access.token=${token}`,
    `/v1/credits/balance?access+token=${token}`,
    `/v1/credits/balance?access[token=${token}`,
    `/v1/credits/balance?access%5Btoken=${token}`,
    `/v1/credits/balance?%20access_token=${token}`,
    `/v1/credits/balance?access_token=${enc}`,
    `/v1/credits/balance?access_token=${enc}&page=2`,
    `/v1/credits/balance?access_token=${token}&access_token=${enc}`,
    `/v1/nope?access_token=${token}`,
    `/v1/numbers/index/?access_token=${token}`,
    `/v1/numbers/index?access_token=${token}#frag`,
  ];
  lines.length = 0;
  for (const u of urls) await inject({ url: u });
  await sleep(0);
  assert.equal(lines.length, urls.length);
  const all = lines.join('');
  for (const secret of [token, odd, 'firstvalue123']) {
    for (const f of forms(secret)) assert.ok(!all.includes(f), `${JSON.stringify(f)} appears in the log`);
  }
  for (const line of lines) assert.ok(JSON.parse(line).url.includes('=***'), line);
});

storeTest('API.md §1.2 over a real socket: one line per request, token masked', async (t) => {
  const { ctx, token, lines } = await logged(t);
  lines.length = 0;
  for (const path of [
    `/v1/credits/balance?access_token=${token}`,
    `/v1/../v1/credits/balance?access_token=${token}`,
    `/v1/numbers/index?page=2&access_token=${encodeURIComponent(token)}&per-page=1`,
    `/v1/numbers/%ZZ?access_token=${token}`,
  ]) {
    const before = lines.length;
    await rawRequest(ctx, { path });
    await sleep(5);
    const mine = lines.slice(before).filter((l) => JSON.parse(l).msg === 'request');
    assert.equal(mine.length, 1, path);
    assert.ok(!mine[0]!.includes(token));
    assert.match(JSON.parse(mine[0]!).url, /access_token=\*\*\*/);
  }
  assert.ok(!lines.join('').includes(token));
});

storeTest('API.md §1.2 only a SHA-256 hash of the token is stored', async (t) => {
  const { ctx, token } = await setup(t);
  const rows = await sql<Record<string, unknown>>`SELECT * FROM api_tokens`.execute(ctx.store.db);
  assert.ok(rows.rows.length >= 1);
  const hash = createHash('sha256').update(token, 'utf8').digest('hex');
  const values = rows.rows.flatMap((r) => Object.values(r).map(String));
  assert.ok(values.includes(hash), 'the hash is stored');
  assert.ok(!values.some((v) => v.includes(token)), 'the token itself is not');
});

storeTest('API.md §1.2 / API.md §4 a 500 logs its error and one request line, still without the token', async (t) => {
  const { inject, url, token, ctx, lines } = await logged(t);
  await sql`DROP TABLE credit_balances`.execute(ctx.store.db);
  lines.length = 0;
  const res = await inject({ url: url('/v1/credits/balance') });
  await sleep(0);
  assert.equal(res.statusCode, 500);
  const entries = lines.map((l) => JSON.parse(l));
  assert.equal(entries.filter((e) => e.msg === 'request').length, 1);
  assert.ok(
    entries.some((e) => e.level >= 50 && e.err),
    'the unexpected error is logged with its details',
  );
  // The error line and the request line name the same request, and no other request.
  const error = entries.find((e) => e.level >= 50)!;
  const request = entries.find((e) => e.msg === 'request')!;
  assert.ok(typeof request.reqId === 'string' && request.reqId !== '');
  assert.equal(error.reqId, request.reqId);
  lines.length = 0;
  await inject({ url: url('/v1/numbers/index') });
  await sleep(0);
  const next = lines.map((l) => JSON.parse(l)).find((e) => e.msg === 'request')!;
  assert.notEqual(next.reqId, request.reqId);
  for (const f of forms(token)) assert.ok(!lines.join('').includes(f));
});
