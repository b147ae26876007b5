/**
 * API.md §1.4: reads answer GET and HEAD (HEAD: same headers, no body); updates answer PUT and
 * PATCH, the entry update also POST; keyword/reserve answers POST. Other methods: 405 (see
 * conventions-errors for every path × method).
 */
import assert from 'node:assert/strict';
import { withToken } from '../helpers/app.ts';
import { ids, MSG, rawRequest, sharedSetup } from '../helpers/conventions.ts';
import { assertError } from '../helpers/operations.ts';
import { storeTest } from '../helpers/stores.ts';

const shared = sharedSetup();

const READS = ['/v1/numbers/index', '/v1/credits/balance', '/v1/sms/single-schedule-messages', '/v1/contacts/find'];
// x-request-id: a new one per request (issue 14).
const VOLATILE = new Set(['date', 'x-rate-limit-remaining', 'x-rate-limit-reset', 'connection', 'keep-alive', 'x-request-id']);

function stable(headers: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !VOLATILE.has(k.toLowerCase())));
}

storeTest('API.md §1.4 HEAD on every read: the same headers as GET and no body (inject)', async () => {
  const { inject, demo, token } = await shared();
  const { contactNumber } = ids(demo);
  for (const path of READS) {
    const extra = path === '/v1/contacts/find' ? `number=${contactNumber}` : 'per-page=2';
    for (const accept of ['application/json', 'application/xml']) {
      const get = await inject({ url: withToken(path, token, extra), headers: { accept } });
      const head = await inject({ method: 'HEAD', url: withToken(path, token, extra), headers: { accept } });
      assert.equal(get.statusCode, 200, `${path}: ${get.body}`);
      assert.equal(head.statusCode, 200);
      assert.equal(head.body, '');
      assert.deepEqual(stable(head.headers), stable(get.headers), path);
      assert.ok(head.headers['x-rate-limit-limit'] !== undefined);
    }
  }
});

storeTest('API.md §1.4 HEAD over a real socket: same headers as GET, empty body, also for errors', async () => {
  const { ctx, token, demo } = await shared();
  const { contactNumber } = ids(demo);
  for (const path of [
    ...READS.map((p) => withToken(p, token, p === '/v1/contacts/find' ? `number=${contactNumber}` : '')),
    '/v1/numbers/index?access_token=bad',
    withToken('/v1/contacts/find', token),
    withToken('/v1/groups/update', token),
  ]) {
    const get = await rawRequest(ctx, { path, method: path.includes('groups') ? 'DELETE' : 'GET' });
    const head = await rawRequest(ctx, { path, method: 'HEAD' });
    if (!path.includes('groups')) {
      assert.equal(head.statusCode, get.statusCode, path);
      assert.deepEqual(stable(head.headers), stable(get.headers), path);
    } else {
      assert.equal(head.statusCode, 405);
      assert.equal(head.headers.allow, 'PUT, PATCH');
    }
    assert.equal(head.body, '', path);
    assert.ok(get.body !== '');
  }
});

storeTest('API.md §1.4 updates answer PUT and PATCH; the entry update also POST; keyword/reserve POST with 201', async () => {
  const { inject, url, demo } = await shared();
  const { group, field, entry, entryBody, activeNumber } = ids(demo);
  const json = { 'content-type': 'application/json' };
  for (const method of ['PUT', 'PATCH'] as const) {
    const g = await inject({
      method,
      url: url('/v1/groups/update', `id=${group}`),
      headers: json,
      payload: `{"fname":"Group via ${method}"}`,
    });
    assert.equal(g.statusCode, 200, g.body);
    assert.equal(JSON.parse(g.body).Name, `Group via ${method}`);
    const f = await inject({
      method,
      url: url('/v1/custom-contact-fields/update', `id=${field}`),
      headers: json,
      payload: `{"fname":"Field ${method}"}`,
    });
    assert.equal(f.statusCode, 200, f.body);
    assert.equal(JSON.parse(f.body).Name, `Field ${method}`);
  }
  for (const method of ['POST', 'PUT', 'PATCH'] as const) {
    const e = await inject({
      method,
      url: url('/v1/custom-contact-fields-entry/update', `id=${entry}`),
      headers: json,
      payload: JSON.stringify({ ...entryBody, fvalue: `via ${method}` }),
    });
    assert.equal(e.statusCode, 200, e.body);
    assert.equal(JSON.parse(e.body).Entry, `via ${method}`);
  }
  const k = await inject({
    method: 'POST',
    url: url('/v1/keyword/reserve'),
    headers: json,
    payload: JSON.stringify({ Keyword: 'JOINUS', Number: activeNumber }),
  });
  assert.equal(k.statusCode, 201, k.body);
  assert.equal(k.statusMessage, 'Created');
  assert.equal(JSON.parse(k.body).length, 1);
  // Reads do not answer the write methods, writes do not answer GET/HEAD.
  assertError(await inject({ method: 'POST', url: url('/v1/numbers/index') }), 405, MSG.methodNotAllowed('GET, HEAD'));
  assertError(await inject({ method: 'GET', url: url('/v1/keyword/reserve') }), 405, MSG.methodNotAllowed('POST'));
  assertError(
    await inject({ method: 'OPTIONS', url: url('/v1/custom-contact-fields-entry/update') }),
    405,
    MSG.methodNotAllowed('POST, PUT, PATCH'),
  );
});

storeTest('API.md §1.4 any other method, including ones Node knows but Fastify does not route, is 405 with Allow', async () => {
  const { ctx, token } = await shared();
  for (const method of ['TRACE', 'PROPFIND', 'SEARCH', 'PURGE']) {
    const res = await rawRequest(ctx, { method, path: withToken('/v1/custom-contact-fields/update', token) });
    assert.equal(res.statusCode, 405, method);
    assert.equal(res.headers.allow, 'PUT, PATCH');
    assert.equal(JSON.parse(res.body).message, MSG.methodNotAllowed('PUT, PATCH'));
  }
});
