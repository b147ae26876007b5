/**
 * errors/index (API.md §10.9.2, §9.19): `GET /v1/errors` (and `/v1/errors/index`) lists every
 * ErrorCode a message can show, with `Code`, `Meaning` and `Final`, ordered by Code, not paginated;
 * in JSON and XML (one `<item>` per code), `fields=` and HEAD as every list; the same for every
 * account; a credential is needed, with `sms:read`. On every store.
 */
import assert from 'node:assert/strict';
import { buildTestApp } from '../../helpers/app.ts';
import { assertBody, assertError, call, WIRES } from '../../helpers/operations.ts';
import { storeTest } from '../../helpers/stores.ts';
import { keyWith } from '../../helpers/keys.ts';

interface ErrorCodeRecord {
  Code: string;
  Meaning: string;
  Final: number;
}

/** Codes API.md names, with their Final (API.md §9.11, §10.9.2, §11, §14.1). */
const DOCUMENTED: Readonly<Record<string, 0 | 1>> = {
  OPTED_OUT: 1,
  NUMBER_INACTIVE: 1,
  NO_CREDITS: 1,
  NO_ROUTE: 1,
  NO_MMS_ROUTE: 1,
  RETRIES_EXHAUSTED: 1,
  UNDELIV: 1,
  ESME_RSUBMITFAIL: 1,
  ESME_RINVDSTADR: 1,
  ESME_RTHROTTLED: 0,
  ESME_RMSGQFUL: 0,
  'ESME_0x{hex}': 1,
  'TWILIO_{code}': 1,
  'HTTP_{4xx}': 1,
  'HTTP_{5xx}': 0,
  HTTP_429: 0,
  HTTP_TIMEOUT: 0,
  SMPP_TIMEOUT: 0,
  '{state}:{err}': 1,
  '{reason}': 1,
};

storeTest(
  'errors/index: every ErrorCode with Code, Meaning, Final, ordered by Code, not paginated; JSON, XML, fields=, HEAD',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const res = await call(ctx.app, { path: '/v1/errors', token: demo.token });
    assert.equal(res.statusCode, 200, res.body);
    const list = JSON.parse(res.body) as ErrorCodeRecord[];
    assert.ok(list.length > 60, `${list.length} codes`);
    for (const r of list) {
      assert.deepEqual(Object.keys(r), ['Code', 'Meaning', 'Final']);
      assert.ok(typeof r.Code === 'string' && r.Code !== '');
      assert.match(r.Meaning, /^[A-Z].*\.$/s, r.Code);
      assert.ok(r.Final === 0 || r.Final === 1, r.Code);
    }
    const codes = list.map((r) => r.Code);
    assert.deepEqual(
      codes,
      [...codes].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
      'ordered by Code',
    );
    assert.equal(new Set(codes).size, codes.length, 'each once');
    for (const [code, final] of Object.entries(DOCUMENTED))
      assert.equal(list.find((r) => r.Code === code)?.Final, final, `${code}: Final ${final}`);
    // Not paginated.
    assert.equal(res.headers['x-pagination-total-count'], undefined);
    assert.equal(res.headers.link, undefined);
    // The same list at the default action's full path, in every format (the XML layout of every list).
    for (const path of ['/v1/errors', '/v1/errors/index', '/v1/errors/'])
      for (const wire of WIRES) assertBody(await call(ctx.app, { path, token: demo.token, wire }), wire, 200, list);
    // fields= keeps those fields of every record, in the record's order.
    const picked = list.map((r) => ({ Code: r.Code, Final: r.Final }));
    for (const wire of WIRES)
      assertBody(await call(ctx.app, { path: '/v1/errors', token: demo.token, query: 'fields=Final,Code', wire }), wire, 200, picked);
    // page and per-page change nothing.
    assert.equal((await call(ctx.app, { path: '/v1/errors', token: demo.token, query: 'page=2&per-page=1' })).body, res.body);
    const head = await call(ctx.app, { method: 'HEAD', path: '/v1/errors', token: demo.token });
    assert.equal(head.statusCode, 200);
    assert.equal(head.body, '');
    assert.equal(head.headers['content-length'], res.headers['content-length']);
    // The same for every account: it holds no account's data.
    const other = await ctx.seed('Other account');
    assert.equal((await call(ctx.app, { path: '/v1/errors', token: other.token })).body, res.body);
    // Only GET and HEAD.
    const post = await call(ctx.app, { method: 'POST', path: '/v1/errors', token: demo.token, body: {} });
    assert.equal(post.statusCode, 405);
    assert.equal(post.headers.allow, 'GET, HEAD');
  },
);

storeTest(
  'errors/index: a credential is needed (401 in the negotiated format), with sms:read (else 403); rate-limited as any read',
  async (t) => {
    const ctx = await buildTestApp(t);
    const demo = await ctx.seed();
    const UNAUTHORIZED = 'Your request was made with invalid credentials.';
    assertError(await ctx.app.inject({ url: '/v1/errors' }), 401, UNAUTHORIZED);
    assertError(await ctx.app.inject({ url: '/v1/errors?_format=xml' }), 401, UNAUTHORIZED, 'xml');
    assertError(
      await ctx.app.inject({ url: '/v1/errors/index?access_token=unknown', headers: { accept: 'application/xml' } }),
      401,
      UNAUTHORIZED,
      'xml',
    );
    const contacts = await keyWith(ctx, demo.account.id, ['contacts:write', 'credits:read']);
    const refused = await call(ctx.app, { path: '/v1/errors', token: contacts });
    assertError(refused, 403, 'You are not allowed to perform this action.');
    assert.ok(refused.headers['x-rate-limit-remaining'] !== undefined, 'the rate limit counted it first');
    for (const scopes of [['sms:read'], ['sms:write'], ['*']]) {
      const res = await call(ctx.app, { path: '/v1/errors', token: await keyWith(ctx, demo.account.id, scopes) });
      assert.equal(res.statusCode, 200, scopes.join());
      assert.ok(res.headers['x-rate-limit-limit']);
    }
    // An Accept that names neither JSON nor XML is refused, as for every list.
    assertError(
      await ctx.app.inject({ url: `/v1/errors?access_token=${demo.token}`, headers: { accept: 'text/csv' } }),
      406,
      'None of your requested content types is supported.',
    );
  },
);
