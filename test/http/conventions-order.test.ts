/**
 * API.md §1.5: the order of checks, routing 404 → 406 → 405 → 401 → 429 → 400 → 404/422, and
 * which headers survive onto an error response.
 */
import assert from 'node:assert/strict';
import { withToken } from '../helpers/app.ts';
import {
  ALLOW,
  assertNoPagination,
  assertNoRateHeaders,
  assertRate,
  ids,
  JSON_BODY,
  MSG,
  setup,
  sharedSetup,
} from '../helpers/conventions.ts';
import { assert422, assertError } from '../helpers/operations.ts';
import { storeTest } from '../helpers/stores.ts';

const shared = sharedSetup();

const BAD_ACCEPT = { accept: 'text/html' };

storeTest('API.md §1.5 routing 404 comes before 406, 405, 401 and 429', async (t) => {
  const { inject, url, token } = await setup(t, { MSGSVC_RATE_LIMIT: '1', MSGSVC_RATE_WINDOW: '60' });
  // Use up the allowance so 429 would be due on any route.
  assert.equal((await inject({ url: url('/v1/credits/balance') })).statusCode, 200);
  assert.equal((await inject({ url: url('/v1/credits/balance') })).statusCode, 429);

  const unknownBadAccept = await inject({ url: url('/v1/nope'), headers: BAD_ACCEPT });
  assertError(unknownBadAccept, 404, MSG.pageNotFound);
  const unknownWrongMethod = await inject({ method: 'DELETE', url: url('/v1/nope') });
  assertError(unknownWrongMethod, 404, MSG.pageNotFound);
  assert.equal(unknownWrongMethod.headers.allow, undefined);
  const unknownNoToken = await inject({ url: '/v1/nope' });
  assertError(unknownNoToken, 404, MSG.pageNotFound);
  const unknownRateExhausted = await inject({ url: withToken('/v1/nope', token) });
  assertError(unknownRateExhausted, 404, MSG.pageNotFound);
  assertNoRateHeaders(unknownRateExhausted);
});

storeTest('API.md §1.5 406 comes before 405 and 401', async () => {
  const { inject, url } = await shared();
  for (const path of Object.keys(ALLOW)) {
    const wrongMethod = await inject({ method: 'DELETE', url: url(path), headers: BAD_ACCEPT });
    assertError(wrongMethod, 406, MSG.notAcceptable);
    assert.equal(wrongMethod.headers.allow, undefined, '406 is decided before the method check sets Allow');
    assert.equal(wrongMethod.headers.vary, 'Accept');
    const method = ALLOW[path]!.split(', ')[0] as 'GET' | 'PUT' | 'POST';
    const badToken = await inject({ method, url: `${path}?access_token=nope`, headers: BAD_ACCEPT });
    assertError(badToken, 406, MSG.notAcceptable);
    assertNoRateHeaders(badToken);
  }
  const formatWrongMethod = await inject({ method: 'PUT', url: url('/v1/numbers/index', '_format=yaml') });
  assertError(formatWrongMethod, 406, MSG.formatNotSupported('yaml'));
  const noTokenBadAccept = await inject({ url: '/v1/numbers/index', headers: BAD_ACCEPT });
  assertError(noTokenBadAccept, 406, MSG.notAcceptable);
  assertNoRateHeaders(noTokenBadAccept);
});

storeTest('API.md §1.5 405 comes before 401, keeps Vary and sets Allow', async () => {
  const { inject } = await shared();
  for (const [path, allow] of Object.entries(ALLOW)) {
    for (const url of [`${path}?access_token=bad`, path]) {
      const res = await inject({ method: 'DELETE', url });
      assertError(res, 405, MSG.methodNotAllowed(allow));
      assert.equal(res.headers.allow, allow);
      assert.equal(res.headers.vary, 'Accept');
      assert.equal(res.headers['www-authenticate'], undefined);
      assertNoRateHeaders(res);
      assertNoPagination(res);
    }
  }
});

storeTest('API.md §1.5 401 comes before 429 and 400; 401 keeps Vary and carries no rate headers', async (t) => {
  const { inject, url, demo } = await setup(t, { MSGSVC_RATE_LIMIT: '2', MSGSVC_RATE_WINDOW: '60' });
  const { group } = ids(demo);
  await inject({ url: url('/v1/numbers/index') });
  await inject({ url: url('/v1/numbers/index') });
  assert.equal((await inject({ url: url('/v1/numbers/index') })).statusCode, 429);

  const badToken = await inject({ url: '/v1/numbers/index?access_token=bad' });
  assertError(badToken, 401, MSG.invalidCredentials);
  assert.equal(badToken.headers.vary, 'Accept');
  assertNoRateHeaders(badToken);
  assertNoPagination(badToken);

  const noTokenMissingId = await inject({ method: 'PUT', url: '/v1/groups/update', headers: JSON_BODY, payload: '{' });
  assertError(noTokenMissingId, 401, MSG.invalidCredentials);
  const noTokenInvalidId = await inject({ method: 'PUT', url: '/v1/groups/update?id=abc', headers: JSON_BODY, payload: '{' });
  assertError(noTokenInvalidId, 401, MSG.invalidCredentials);
  const noTokenMissingRecord = await inject({
    method: 'PUT',
    url: `/v1/groups/update?id=${group}&access_token=x`,
    headers: JSON_BODY,
    payload: '{}',
  });
  assertError(noTokenMissingRecord, 401, MSG.invalidCredentials);
  const noTokenMissingNumber = await inject({ url: '/v1/contacts/find' });
  assertError(noTokenMissingNumber, 401, MSG.invalidCredentials);
});

storeTest('API.md §1.5 429 comes before 400, 415, 404 and 422; 429 keeps Vary and rate headers', async (t) => {
  const { inject, url, demo } = await setup(t, { MSGSVC_RATE_LIMIT: '1', MSGSVC_RATE_WINDOW: '60' });
  const { group } = ids(demo);
  assert.equal((await inject({ url: url('/v1/credits/balance') })).statusCode, 200);
  const cases = [
    { method: 'PUT' as const, url: url('/v1/groups/update'), payload: '{' },
    { method: 'PUT' as const, url: url('/v1/groups/update', 'id=abc'), payload: '{' },
    { method: 'PUT' as const, url: url('/v1/groups/update', `id=${group}`), payload: '{' },
    { method: 'PUT' as const, url: url('/v1/groups/update', 'id=999999'), payload: '{"fname":""}' },
    { method: 'PUT' as const, url: url('/v1/groups/update', `id=${group}`), payload: '{"fname":""}' },
    { method: 'POST' as const, url: url('/v1/keyword/reserve'), payload: '{}' },
    { method: 'GET' as const, url: url('/v1/contacts/find') },
    { method: 'GET' as const, url: url('/v1/numbers/index') },
  ];
  for (const c of cases) {
    const res = await inject({ ...c, headers: JSON_BODY });
    assertError(res, 429, MSG.rateLimited);
    assert.equal(res.headers.vary, 'Accept');
    assertRate(res, 1, 0, 60);
    assertNoPagination(res);
  }
  const unsupportedBody = await inject({
    method: 'PUT',
    url: url('/v1/groups/update', `id=${group}`),
    headers: { 'content-type': 'text/plain' },
    payload: 'x',
  });
  assertError(unsupportedBody, 429, MSG.rateLimited);
});

storeTest('API.md §1.5 400 (missing or invalid id) comes before bad JSON; bad JSON before the record lookup', async () => {
  const { inject, url } = await shared();
  for (const path of ['/v1/groups/update', '/v1/custom-contact-fields/update', '/v1/custom-contact-fields-entry/update']) {
    const missingId = await inject({ method: 'PUT', url: url(path), headers: JSON_BODY, payload: '{bad' });
    assertError(missingId, 400, MSG.missing('id'));
    const invalidId = await inject({ method: 'PUT', url: url(path, 'id=abc'), headers: JSON_BODY, payload: '{bad' });
    assertError(invalidId, 400, MSG.invalidId);
    const missingIdBadType = await inject({ method: 'PUT', url: url(path), headers: { 'content-type': 'text/plain' }, payload: 'x' });
    assertError(missingIdBadType, 400, MSG.missing('id'));
    const badJsonMissingRecord = await inject({ method: 'PUT', url: url(path, 'id=999999'), headers: JSON_BODY, payload: '{bad' });
    assertError(badJsonMissingRecord, 400, MSG.badJson);
    assertRate(badJsonMissingRecord, 100000, Number(badJsonMissingRecord.headers['x-rate-limit-remaining']));
    assert.equal(badJsonMissingRecord.headers.vary, 'Accept');
  }
  const badJsonReserve = await inject({ method: 'POST', url: url('/v1/keyword/reserve'), headers: JSON_BODY, payload: '{"Keyword":' });
  assertError(badJsonReserve, 400, MSG.badJson);
});

storeTest('API.md §1.5 a missing record (404) comes before validation (422); 422 only on a real record', async () => {
  const { inject, url, demo, ctx } = await shared();
  const mine = ids(demo);
  const theirs = ids(await ctx.seed('Another account'));
  const cases: [string, number, number, Record<string, unknown>, { field: string; message: string }[]][] = [
    [
      '/v1/groups/update',
      mine.group,
      theirs.group,
      { fname: 'ab' },
      [{ field: 'fname', message: 'Fname should contain at least 3 characters.' }],
    ],
    ['/v1/custom-contact-fields/update', mine.field, theirs.field, { fname: '' }, [{ field: 'fname', message: 'Fname cannot be blank.' }]],
    [
      '/v1/custom-contact-fields-entry/update',
      mine.entry,
      theirs.entry,
      { frfield: 'x' },
      [
        { field: 'frcontact', message: 'Frcontact cannot be blank.' },
        { field: 'fvalue', message: 'Fvalue cannot be blank.' },
        { field: 'frfield', message: 'Frfield must be an integer.' },
      ],
    ],
  ];
  for (const [path, own, foreign, invalid, errors] of cases) {
    const missing = await inject({ method: 'PUT', url: url(path, 'id=999999'), headers: JSON_BODY, payload: JSON.stringify(invalid) });
    assertError(missing, 404, MSG.notFound(999999));
    assert.equal(missing.headers.vary, 'Accept');
    assert.ok(missing.headers['x-rate-limit-remaining'] !== undefined, 'rate headers stay on a 404');
    const foreignRecord = await inject({
      method: 'PUT',
      url: url(path, `id=${foreign}`),
      headers: JSON_BODY,
      payload: JSON.stringify(invalid),
    });
    assertError(foreignRecord, 404, MSG.notFound(foreign));
    const emptyBody = await inject({ method: 'PUT', url: url(path, 'id=999999') });
    assertError(emptyBody, 404, MSG.notFound(999999));
    const invalidOwn = await inject({ method: 'PUT', url: url(path, `id=${own}`), headers: JSON_BODY, payload: JSON.stringify(invalid) });
    assert422(invalidOwn, errors);
    assert.equal(invalidOwn.headers.vary, 'Accept');
    assert.ok(invalidOwn.headers['x-rate-limit-limit'] !== undefined, 'rate headers stay on a 422');
  }
});

storeTest('API.md §1.5 list endpoints never send pagination headers or Link on an error', async (t) => {
  const { inject, url, token } = await setup(t, { MSGSVC_RATE_LIMIT: '2', MSGSVC_RATE_WINDOW: '60' });
  for (const path of ['/v1/numbers/index', '/v1/credits/balance', '/v1/sms/single-schedule-messages']) {
    for (const res of [
      await inject({ url: `${path}?access_token=bad` }),
      await inject({ url: url(path), headers: BAD_ACCEPT }),
      await inject({ url: url(path, '_format=csv') }),
      await inject({ method: 'POST', url: url(path) }),
      await inject({ method: 'HEAD', url: `${path}?access_token=bad` }),
    ]) {
      assert.ok(res.statusCode >= 400);
      assertNoPagination(res);
    }
  }
  await inject({ url: url('/v1/numbers/index') });
  await inject({ url: url('/v1/numbers/index') });
  const limited = await inject({ url: withToken('/v1/numbers/index', token, 'page=2&per-page=1') });
  assertError(limited, 429, MSG.rateLimited);
  assertNoPagination(limited);
});
