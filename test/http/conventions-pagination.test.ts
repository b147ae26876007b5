/**
 * API.md §5: page / per-page clamping, X-Pagination-* values, and the Link header (rels,
 * order, absolute URL with every query parameter).
 */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { inTransaction } from '../../src/store/db.ts';
import { insertNumber } from '../../src/store/repositories/numbers.ts';
import { insertScheduledMessage } from '../../src/store/repositories/messages.ts';
import type { TestApp } from '../helpers/app.ts';
import { emptyAccount, rawRequest, sharedSetup } from '../helpers/conventions.ts';
import { storeTest } from '../helpers/stores.ts';

const shared = sharedSetup();

const HOST = 'api.example.test:8443';
const BASE = `http://${HOST}`;

function pagination(res: LightMyRequestResponse) {
  return {
    total: res.headers['x-pagination-total-count'],
    pageCount: res.headers['x-pagination-page-count'],
    current: res.headers['x-pagination-current-page'],
    perPage: res.headers['x-pagination-per-page'],
  };
}

function expectPage(res: LightMyRequestResponse, total: number, pageCount: number, current: number, perPage: number): void {
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(pagination(res), {
    total: String(total),
    pageCount: String(pageCount),
    current: String(current),
    perPage: String(perPage),
  });
}

/** The Link value for `path` where each rel maps to its query string. */
function links(path: string, rels: [string, string][]): string {
  return rels.map(([rel, query]) => `<${BASE}${path}?${query}>; rel=${rel}`).join(', ');
}

async function seedNumbers(ctx: TestApp, accountId: number, count: number): Promise<void> {
  await inTransaction(ctx.store, async (tx) => {
    for (let i = 0; i < count; i++) await insertNumber(tx, accountId, String(15551000000 + i), 0, null, 1_700_000_000);
  });
}

storeTest('API.md §5 one page: only rel=self, page set, headers as API.md sample', async () => {
  const { inject, token } = await shared();
  const res = await inject({ url: `/v1/numbers/index?access_token=${token}`, headers: { host: HOST } });
  expectPage(res, 5, 1, 1, 100);
  assert.equal(res.headers.link, links('/v1/numbers/index', [['self', `access_token=${token}&page=1`]]));
  assert.equal(JSON.parse(res.body).length, 5);
});

storeTest('API.md §5 Link rels per page: self; first+prev unless first; next+last unless last', async () => {
  const { inject, token } = await shared();
  const p = '/v1/numbers/index';
  const q = (page: number) => `access_token=${token}&per-page=2&page=${page}`;
  const get = (query: string) => inject({ url: `${p}?${query}`, headers: { host: HOST } });

  const first = await get(`access_token=${token}&per-page=2`);
  expectPage(first, 5, 3, 1, 2);
  assert.equal(
    first.headers.link,
    links(p, [
      ['self', q(1)],
      ['next', q(2)],
      ['last', q(3)],
    ]),
  );
  assert.deepEqual(
    JSON.parse(first.body).map((n: { Number: string }) => n.Number),
    ['55155', '15550100001'],
  );

  const middle = await get(q(2));
  expectPage(middle, 5, 3, 2, 2);
  assert.equal(
    middle.headers.link,
    links(p, [
      ['self', q(2)],
      ['first', q(1)],
      ['prev', q(1)],
      ['next', q(3)],
      ['last', q(3)],
    ]),
  );
  assert.deepEqual(
    JSON.parse(middle.body).map((n: { Number: string }) => n.Number),
    ['15550100002', '15550100003'],
  );

  const last = await get(q(3));
  expectPage(last, 5, 3, 3, 2);
  assert.equal(
    last.headers.link,
    links(p, [
      ['self', q(3)],
      ['first', q(1)],
      ['prev', q(2)],
    ]),
  );
  assert.deepEqual(
    JSON.parse(last.body).map((n: { Number: string }) => n.Number),
    ['15550100004'],
  );

  // A page past the end serves (and reports) the last page.
  const past = await get(q(99));
  expectPage(past, 5, 3, 3, 2);
  assert.equal(past.headers.link, last.headers.link);
  assert.equal(past.body, last.body);
});

storeTest('API.md §5 page=0, -5, abc, [] serve page 1; page is set in place', async () => {
  const { inject, token } = await shared();
  const p = '/v1/numbers/index';
  for (const page of ['0', '-5', 'abc', '', '1.9', ' 1']) {
    const res = await inject({ url: `${p}?page=${encodeURIComponent(page)}&access_token=${token}&per-page=2`, headers: { host: HOST } });
    expectPage(res, 5, 3, 1, 2);
    const q = (n: number) => `page=${n}&access_token=${token}&per-page=2`;
    assert.equal(
      res.headers.link,
      links(p, [
        ['self', q(1)],
        ['next', q(2)],
        ['last', q(3)],
      ]),
      `page=${page}`,
    );
  }
  const arr = await inject({ url: `${p}?page[]=2&access_token=${token}&per-page=2`, headers: { host: HOST } });
  expectPage(arr, 5, 3, 1, 2);
  assert.ok(String(arr.headers.link).startsWith(`<${BASE}${p}?page=1&access_token=${token}&per-page=2>; rel=self, `));
  const two = await inject({ url: `${p}?page=2.7&access_token=${token}&per-page=2`, headers: { host: HOST } });
  expectPage(two, 5, 3, 2, 2);
});

storeTest('API.md §5 per-page is clamped to [1, 100] and kept in Link only when not the default', async () => {
  const { inject, token, ctx } = await shared();
  const p = '/v1/numbers/index';
  const big = await emptyAccount(ctx, 'Big account');
  await seedNumbers(ctx, big.id, 250);

  const defaults = await inject({ url: `${p}?access_token=${big.token}`, headers: { host: HOST } });
  expectPage(defaults, 250, 3, 1, 100);
  assert.equal(JSON.parse(defaults.body).length, 100);
  const dq = (n: number) => `access_token=${big.token}&page=${n}`;
  assert.equal(
    defaults.headers.link,
    links(p, [
      ['self', dq(1)],
      ['next', dq(2)],
      ['last', dq(3)],
    ]),
  );

  for (const size of ['500', '101', '100', '99999999999999999999']) {
    const res = await inject({ url: `${p}?access_token=${big.token}&per-page=${size}&page=3`, headers: { host: HOST } });
    expectPage(res, 250, 3, 3, 100);
    assert.equal(JSON.parse(res.body).length, 50);
    const q = (n: number) => `access_token=${big.token}&page=${n}`;
    assert.equal(
      res.headers.link,
      links(p, [
        ['self', q(3)],
        ['first', q(1)],
        ['prev', q(2)],
      ]),
      `per-page=${size}`,
    );
  }
  for (const size of ['0', '-3', 'abc', '']) {
    const res = await inject({ url: `${p}?access_token=${token}&per-page=${size}`, headers: { host: HOST } });
    expectPage(res, 5, 5, 1, 1);
    assert.equal(JSON.parse(res.body).length, 1);
    const q = (n: number) => `access_token=${token}&per-page=1&page=${n}`;
    assert.equal(
      res.headers.link,
      links(p, [
        ['self', q(1)],
        ['next', q(2)],
        ['last', q(5)],
      ]),
      `per-page=${size}`,
    );
  }
  // Page-Count is ceil(total / size).
  const three = await inject({ url: `${p}?access_token=${token}&per-page=3`, headers: { host: HOST } });
  expectPage(three, 5, 2, 1, 3);
  const ninetyNine = await inject({ url: `${p}?access_token=${big.token}&per-page=99`, headers: { host: HOST } });
  expectPage(ninetyNine, 250, 3, 1, 99);
  const fifty = await inject({ url: `${p}?access_token=${big.token}&per-page=50&page=5`, headers: { host: HOST } });
  expectPage(fifty, 250, 5, 5, 50);
  assert.equal(JSON.parse(fifty.body)[49].Number, String(15551000000 + 249));
});

storeTest('API.md §5 Link keeps ALL query parameters in their order, access_token included', async () => {
  const { inject, token } = await shared();
  const p = '/v1/sms/single-schedule-messages';
  const res = await inject({ url: `${p}?page=2&foo=bar&access_token=${token}&per-page=5&_format=json&z=1`, headers: { host: HOST } });
  expectPage(res, 12, 3, 2, 5);
  const q = (n: number) => `page=${n}&foo=bar&access_token=${token}&per-page=5&_format=json&z=1`;
  assert.equal(
    res.headers.link,
    links(p, [
      ['self', q(2)],
      ['first', q(1)],
      ['prev', q(1)],
      ['next', q(3)],
      ['last', q(3)],
    ]),
  );
  const items = JSON.parse(res.body) as { Id: number }[];
  assert.equal(items.length, 5);
  // XML responses carry the same headers, and _format=xml stays in the links.
  const xml = await inject({ url: `${p}?access_token=${token}&_format=xml&per-page=5`, headers: { host: HOST } });
  expectPage(xml, 12, 3, 1, 5);
  const xq = (n: number) => `access_token=${token}&_format=xml&per-page=5&page=${n}`;
  assert.equal(
    xml.headers.link,
    links(p, [
      ['self', xq(1)],
      ['next', xq(2)],
      ['last', xq(3)],
    ]),
  );
});

storeTest('API.md §5 Link uses the request scheme and host (real socket)', async () => {
  const { ctx, token } = await shared();
  const res = await rawRequest(ctx, { path: `/v1/numbers/index?access_token=${token}` });
  const { port } = ctx.app.server.address() as { port: number };
  assert.equal(res.headers.link, `<http://127.0.0.1:${port}/v1/numbers/index?access_token=${token}&page=1>; rel=self`);
  const named = await rawRequest(ctx, { path: `/v1/numbers/index?access_token=${token}`, headers: { host: 'sms.example.com' } });
  assert.equal(named.headers.link, `<http://sms.example.com/v1/numbers/index?access_token=${token}&page=1>; rel=self`);
});

storeTest('API.md §5 an empty collection: total 0, page count 0, current page 1', async () => {
  const { inject, ctx } = await shared();
  const empty = await emptyAccount(ctx);
  for (const path of ['/v1/numbers/index', '/v1/sms/single-schedule-messages']) {
    for (const extra of ['', '&page=7', '&page=-1&per-page=10']) {
      const res = await inject({ url: `${path}?access_token=${empty.token}${extra}`, headers: { host: HOST } });
      expectPage(res, 0, 0, 1, extra.includes('per-page') ? 10 : 100);
      assert.equal(res.body, '[]');
      const q =
        extra === ''
          ? `access_token=${empty.token}&page=1`
          : extra === '&page=7'
            ? `access_token=${empty.token}&page=1`
            : `access_token=${empty.token}&page=1&per-page=10`;
      assert.equal(res.headers.link, links(path, [['self', q]]));
    }
  }
});

storeTest('API.md §5 a second page of scheduled messages serves the right rows', async () => {
  const { inject, ctx, demo } = await shared();
  const account = await emptyAccount(ctx, 'Messages account');
  await inTransaction(ctx.store, async (tx) => {
    for (let i = 0; i < 7; i++) {
      await insertScheduledMessage(
        tx,
        account.id,
        {
          mobilePhone: `1555000000${i}`,
          message: `m${i}`,
          scheduledAt: 1_800_000_000 + i,
          statusId: 1,
          typeId: 1,
          mmsTemplateId: null,
          subject: '',
        },
        1_700_000_000,
      );
    }
  });
  const res = await inject({ url: `/v1/sms/single-schedule-messages?access_token=${account.token}&per-page=3&page=3` });
  assert.deepEqual(
    JSON.parse(res.body).map((m: { Message: string }) => m.Message),
    ['m6'],
  );
  assert.equal(res.headers['x-pagination-total-count'], '7');
  // The demo account's own 12 are untouched by the other account's rows.
  const own = await inject({ url: `/v1/sms/single-schedule-messages?access_token=${demo.token}` });
  assert.equal(own.headers['x-pagination-total-count'], '12');
});

storeTest('API.md §5 credits/balance: one-item pagination headers and Link rel=self', async () => {
  const { inject, token } = await shared();
  const p = '/v1/credits/balance';
  const res = await inject({ url: `${p}?access_token=${token}`, headers: { host: HOST } });
  expectPage(res, 1, 1, 1, 100);
  assert.equal(res.headers.link, links(p, [['self', `access_token=${token}&page=1`]]));
  assert.equal(res.body, '{"AvailableCredits":2500}');
  const odd = await inject({ url: `${p}?access_token=${token}&page=3&per-page=10`, headers: { host: HOST } });
  expectPage(odd, 1, 1, 1, 10);
  assert.equal(odd.headers.link, links(p, [['self', `access_token=${token}&page=1&per-page=10`]]));
  const xml = await inject({ url: `${p}?access_token=${token}`, headers: { host: HOST, accept: 'application/xml' } });
  expectPage(xml, 1, 1, 1, 100);
});

storeTest('API.md §5 contacts/find (one record) sends no pagination headers', async () => {
  const { inject, token, demo } = await shared();
  const res = await inject({ url: `/v1/contacts/find?access_token=${token}&number=${demo.contacts[0]!.Number}` });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers['x-pagination-total-count'], undefined);
  assert.equal(res.headers.link, undefined);
});
