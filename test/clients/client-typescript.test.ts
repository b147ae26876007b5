/**
 * The typed TypeScript client (clients/typescript, issue 14) against a real msgsvc server on a
 * temporary SQLite file with a demo account, listening on an ephemeral port: typed calls, quoted
 * integers normalised on every record, 429 retried after Retry-After, Idempotency-Key on POSTs
 * (a retried POST is done once), and `list()` following Link rel=next through a whole list.
 */
import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import assert from 'node:assert/strict';
import { createMsgsvcClient, nextLink, normalise } from '../../clients/typescript/src/index.ts';
import { RESPONSES } from '../../clients/typescript/src/records.ts';
import { buildTestApp } from '../helpers/app.ts';
import { storeTest } from '../helpers/stores.ts';

async function server(t: { after(fn: () => unknown): void }, env: Record<string, string> = {}) {
  const ctx = await buildTestApp(t, env);
  const demo = await ctx.seed();
  const base = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  return { ctx, demo, base };
}

/** Every number in a JSON value as quoted text, as the original service may send them. */
function quoteIntegers(value: unknown): unknown {
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return value.map(quoteIntegers);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, quoteIntegers(v)]));
  return value;
}

storeTest('client: typed calls, errors, and quoted integers normalised on every record', async (t) => {
  const { demo, base } = await server(t);
  const client = createMsgsvcClient({ baseUrl: base, accessToken: demo.token });
  const quoting = createMsgsvcClient({
    baseUrl: base,
    accessToken: demo.token,
    fetch: async (request) => {
      const response = await fetch(request);
      if (!(response.headers.get('content-type') ?? '').startsWith('application/json')) return response;
      const text = JSON.stringify(quoteIntegers(await response.json()));
      const headers = new Headers(response.headers);
      headers.delete('content-length');
      return new Response(text, { status: response.status, statusText: response.statusText, headers });
    },
  });

  const balance = await client.GET('/v1/credits/balance');
  assert.equal(balance.response.status, 200);
  assert.equal(typeof balance.data?.AvailableCredits, 'number');
  assert.deepEqual((await quoting.GET('/v1/credits/balance')).data, balance.data);

  const sent = await client.POST('/v1/sms/send', { body: { MobilePhone: '+1 202 555 0142', Message: 'Hello from the client' } });
  assert.equal(sent.response.status, 201, JSON.stringify(sent.error));
  assert.equal(sent.data?.[0]?.Status_Id, 1);

  // Records with nested records (a Custom field's Value entries), lists and single records.
  for (const path of [
    '/v1/numbers/index',
    '/v1/contacts/index',
    '/v1/groups/index',
    '/v1/custom-contact-fields/index',
    '/v1/sms/single-schedule-messages',
    '/v1/sms/index',
  ] as const) {
    const plain = await client.GET(path);
    assert.equal(plain.response.status, 200, path);
    assert.ok(Array.isArray(plain.data) && plain.data.length > 0, path);
    assert.deepEqual((await quoting.GET(path)).data, plain.data, path);
  }
  const fields = await quoting.GET('/v1/custom-contact-fields/index');
  // Record properties are optional in the document (a fields= answer holds only those asked for).
  const entry = fields.data!.find((f) => (f.Value ?? []).length > 0)!.Value![0]!;
  assert.equal(typeof entry.Id, 'number');
  assert.equal(typeof entry.PhoneNumberId, 'number');
  const contactId = demo.contacts[0]!.Id;
  const contact = await quoting.GET('/v1/contacts/view', { params: { query: { id: String(contactId) } } });
  assert.equal(contact.data?.Id, contactId);
  assert.deepEqual(contact.data, (await client.GET('/v1/contacts/view', { params: { query: { id: String(contactId) } } })).data);

  // Errors: the API.md error body (its integers normalised too) and the 422 list.
  const missing = await quoting.GET('/v1/contacts/view', { params: { query: { id: '999999' } } });
  assert.equal(missing.response.status, 404);
  assert.deepEqual(missing.error, { name: 'Not Found', message: 'Object not found: 999999', code: 0, status: 404 });
  const invalid = await client.POST('/v1/contacts/create', { body: { Number: '' } });
  assert.equal(invalid.response.status, 422);
  assert.deepEqual(invalid.error, [{ field: 'Number', message: 'Number cannot be blank.' }]);

  // The normaliser leaves what is not an integer field alone.
  assert.deepEqual(normalise({ Id: '12', Number: '15551234567', Name: '7' }, '#Contact'), { Id: 12, Number: '15551234567', Name: '7' });
  assert.deepEqual(normalise([{ Id: '+3', GroupIds: ['1', 2] }], ['#Contact']), [{ Id: 3, GroupIds: [1, 2] }]);
});

storeTest('client: a POST carries an Idempotency-Key, and a retried POST is done once', async (t) => {
  const { demo, base } = await server(t);
  const keys: string[] = [];
  let calls = 0;
  const client = createMsgsvcClient({
    baseUrl: base,
    accessToken: demo.token,
    fetch: async (request) => {
      keys.push(request.headers.get('idempotency-key') ?? '');
      const response = await fetch(request);
      // The first answer is lost: the client sees a 429 and must retry.
      if (++calls === 1) {
        await response.arrayBuffer();
        return new Response(JSON.stringify({ name: 'Too Many Requests', message: 'Rate limit exceeded.', code: 0, status: 429 }), {
          status: 429,
          headers: { 'Content-Type': 'application/json; charset=UTF-8', 'Retry-After': '0' },
        });
      }
      return response;
    },
  });
  const created = await client.POST('/v1/contacts/create', { body: { Number: '+1 202 555 0187', FirstName: 'Idem' } });
  assert.equal(created.response.status, 201);
  assert.equal(created.response.headers.get('idempotent-replayed'), 'true');
  assert.equal(keys.length, 2);
  assert.match(keys[0]!, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(keys[1], keys[0]);
  assert.match(created.response.headers.get('location') ?? '', new RegExp(`/v1/contacts/view\\?id=${created.data!.Id}$`));
  const found = await client.GET('/v1/contacts/find', { params: { query: { number: '12025550187' } } });
  assert.equal(found.response.status, 200);
  const all = [];
  for await (const c of client.list('/v1/contacts/index')) if (c.FirstName === 'Idem') all.push(c);
  assert.equal(all.length, 1, 'the contact was created once');
  // Each POST gets its own key; a GET gets none.
  await client.GET('/v1/credits/balance');
  await client.POST('/v1/contacts/create', { body: { Number: '+1 202 555 0188' } });
  assert.equal(keys.at(-2), '');
  assert.notEqual(keys.at(-1), keys[0]);
});

storeTest('client: 429 is retried after Retry-After', async (t) => {
  const { demo, base } = await server(t, { MSGSVC_RATE_LIMIT: '3', MSGSVC_RATE_WINDOW: '1' });
  const statuses: number[] = [];
  const client = createMsgsvcClient({
    baseUrl: base,
    accessToken: demo.token,
    fetch: async (request) => {
      const response = await fetch(request);
      statuses.push(response.status);
      return response;
    },
  });
  const started = Date.now();
  const results = await Promise.all(Array.from({ length: 5 }, () => client.GET('/v1/credits/balance')));
  assert.deepEqual(
    results.map((r) => r.response.status),
    [200, 200, 200, 200, 200],
  );
  assert.ok(statuses.includes(429), `no 429 seen: ${statuses.join(' ')}`);
  assert.ok(Date.now() - started >= 500, 'the retry waited for Retry-After');
  // With no retries left, the 429 is the answer.
  const impatient = createMsgsvcClient({ baseUrl: base, accessToken: demo.token, maxRetries: 0 });
  const burst = await Promise.all(Array.from({ length: 6 }, () => impatient.GET('/v1/credits/balance')));
  const limited = burst.find((r) => r.response.status === 429);
  assert.ok(limited);
  assert.equal(limited.response.headers.get('retry-after'), '1');
  assert.deepEqual(limited.error, { name: 'Too Many Requests', message: 'Rate limit exceeded.', code: 0, status: 429 });
});

storeTest('client: list() follows Link rel=next through a whole list', async (t) => {
  const { demo, base } = await server(t);
  const urls: string[] = [];
  const client = createMsgsvcClient({
    baseUrl: base,
    accessToken: demo.token,
    fetch: (request) => {
      urls.push(request.url);
      return fetch(request);
    },
  });
  const first = await client.GET('/v1/contacts/index', { params: { query: { 'per-page': '7' } } });
  const total = Number(first.response.headers.get('x-pagination-total-count'));
  assert.ok(total > 14, `total ${total}`);
  urls.length = 0;
  const ids: number[] = [];
  for await (const contact of client.list('/v1/contacts/index', { 'per-page': '7' })) ids.push(contact.Id!);
  assert.equal(ids.length, total);
  assert.deepEqual(
    ids,
    [...ids].sort((a, b) => a - b),
  );
  assert.equal(new Set(ids).size, total);
  assert.equal(urls.length, Math.ceil(total / 7));
  assert.match(urls[1]!, /[?&]page=2(&|$)/);
  assert.equal(
    nextLink('<http://h/v1/x?page=1>; rel=self, <http://h/v1/x?page=3>; rel=next, <http://h/v1/x?page=9>; rel=last'),
    'http://h/v1/x?page=3',
  );
  assert.equal(nextLink('<http://h/v1/x?page=1>; rel=self'), undefined);
});

test('client: the generated files follow docs/openapi.json (else: cd clients/typescript && npm run generate)', () => {
  const doc = JSON.parse(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8')) as {
    paths: Record<string, Record<string, { operationId: string; responses: Record<string, { content?: Record<string, unknown> }> }>>;
  };
  const schema = readFileSync(new URL('../../clients/typescript/src/schema.d.ts', import.meta.url), 'utf8');
  for (const [path, item] of Object.entries(doc.paths)) {
    assert.ok(schema.includes(`    "${path}": {`), `src/schema.d.ts lacks ${path}`);
    for (const [method, op] of Object.entries(item)) {
      assert.ok(
        schema.includes(`    "${op.operationId}": {`) || schema.includes(`    ${op.operationId}: {`),
        `src/schema.d.ts lacks ${op.operationId}`,
      );
      for (const [status, response] of Object.entries(op.responses)) {
        if (status.startsWith('2') && response.content?.['application/json'] && path.startsWith('/v1/')) {
          assert.ok(RESPONSES[`${method.toUpperCase()} ${path} ${status}`], `src/records.ts lacks ${method} ${path} ${status}`);
        }
      }
    }
  }
});
