/**
 * All eight operations over a real TCP socket (app.listen on an ephemeral port, global fetch and
 * node:http): status line, headers as they go on the wire, and exact bodies in JSON and XML.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import assert from 'node:assert/strict';
import type { DemoAccount } from '../../../src/domain/demo.ts';
import { buildTestApp, type TestApp } from '../../helpers/app.ts';
import {
  assertXmlLayout,
  contactFromDb,
  customFieldFromDb,
  entryFromDb,
  groupFromDb,
  headersOf,
  isXml,
  JSON_TYPE,
  keywordsFromDb,
  messagesFromDb,
  numbersFromDb,
  payloadOf,
  urlOf,
  WIRES,
  XML_TYPE,
  xmlDocument,
  type CallOptions,
  type Wire,
} from '../../helpers/operations.ts';
import { storeTest } from '../../helpers/stores.ts';

async function listen(t: { after(fn: () => unknown): void }): Promise<{ ctx: TestApp; demo: DemoAccount; base: string; port: number }> {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed();
  const address = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const port = Number(new URL(address).port);
  assert.ok(port > 0);
  return { ctx, demo, base: address, port };
}

function send(base: string, o: CallOptions): Promise<Response> {
  const payload = payloadOf(o);
  return fetch(`${base}${urlOf(o)}`, {
    method: o.method ?? 'GET',
    headers: headersOf(o),
    ...(payload !== undefined ? { body: payload } : {}),
  });
}

async function expectBody(res: Response, wire: Wire, status: number, statusText: string, payload: unknown): Promise<string> {
  const text = await res.text();
  assert.equal(res.status, status, text);
  assert.equal(res.statusText, statusText);
  assert.equal(res.headers.get('content-type'), isXml(wire) ? XML_TYPE : JSON_TYPE);
  assert.equal(res.headers.get('vary'), 'Accept');
  if (isXml(wire)) {
    assertXmlLayout(text);
    assert.equal(text, xmlDocument(payload));
  } else {
    assert.equal(text, JSON.stringify(payload));
  }
  assert.equal(Number(res.headers.get('content-length')), Buffer.byteLength(text));
  return text;
}

/** A raw request, to see header names exactly as they are written on the wire. */
function raw(
  port: number,
  method: string,
  path: string,
  accept = 'application/json',
): Promise<{ status: number; statusMessage: string; rawHeaders: string[]; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers: { accept, connection: 'close' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () =>
        resolve({ status: res.statusCode!, statusMessage: res.statusMessage!, rawHeaders: res.rawHeaders, headers: res.headers, body }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

storeTest('socket: the four reads in JSON and XML', async (t) => {
  const { ctx, demo, base, port } = await listen(t);
  const numbers = await numbersFromDb(ctx, demo.account.id);
  const messages = await messagesFromDb(ctx, demo.account.id);
  const contact = await contactFromDb(ctx, demo.contacts[2]!.Id);
  for (const wire of WIRES) {
    const n = await send(base, { path: '/v1/numbers/index', token: demo.token, wire });
    await expectBody(n, wire, 200, 'OK', numbers);
    assert.equal(n.headers.get('x-pagination-total-count'), '5');
    const link = n.headers.get('link') ?? '';
    assert.match(link, new RegExp(`^<http://127\\.0\\.0\\.1:${port}/v1/numbers/index\\?access_token=[^>]+&page=1>; rel=self$`));
    const followed = await fetch(link.slice(1, link.indexOf('>')), { headers: { accept: 'application/json' } });
    // The link carries every query parameter (access_token and _format included).
    assert.equal(
      await followed.text(),
      wire === 'xml-param' ? xmlDocument(numbers) : JSON.stringify(numbers),
      'the self link can be followed as it is',
    );

    const c = await send(base, { path: '/v1/credits/balance', token: demo.token, wire });
    await expectBody(c, wire, 200, 'OK', { AvailableCredits: 2500 });
    assert.match(c.headers.get('link') ?? '', /; rel=self$/);

    const m = await send(base, { path: '/v1/sms/single-schedule-messages', token: demo.token, wire });
    await expectBody(m, wire, 200, 'OK', messages);

    const f = await send(base, {
      path: '/v1/contacts/find',
      token: demo.token,
      query: `number=${encodeURIComponent(`(${contact.Number.slice(1, 4)}) ${contact.Number.slice(4, 7)}-${contact.Number.slice(7)}`)}`,
      wire,
    });
    await expectBody(f, wire, 200, 'OK', contact);
  }
  // Header names exactly as API.md writes them; HEAD sends the same headers and no body.
  const get = await raw(port, 'GET', urlOf({ path: '/v1/numbers/index', token: demo.token }));
  const names = get.rawHeaders.filter((_, i) => i % 2 === 0);
  for (const name of [
    'Vary',
    'X-Rate-Limit-Limit',
    'X-Rate-Limit-Remaining',
    'X-Rate-Limit-Reset',
    'X-Pagination-Total-Count',
    'X-Pagination-Page-Count',
    'X-Pagination-Current-Page',
    'X-Pagination-Per-Page',
    'Link',
  ]) {
    assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
  }
  assert.equal(get.body, JSON.stringify(numbers));
  const head = await raw(port, 'HEAD', urlOf({ path: '/v1/numbers/index', token: demo.token }), 'application/xml');
  assert.equal(head.status, 200);
  assert.equal(head.body, '');
  assert.equal(head.headers['content-type'], XML_TYPE);
  assert.equal(head.headers['x-pagination-total-count'], '5');
  assert.equal(head.headers.link, get.headers.link);
});

storeTest('socket: the four writes in JSON and XML, with 422 and 404 status lines', async (t) => {
  const { ctx, demo, base } = await listen(t);
  const group = demo.groups[0]!;
  const field = demo.customFields[1]!;
  const entry = demo.customFieldEntries.find((e) => e.CustomFieldId === field.Id)!;
  let n = 0;
  for (const wire of WIRES) {
    n++;
    const g = await send(base, {
      method: 'PUT',
      path: '/v1/groups/update',
      token: demo.token,
      query: `id=${group.Id}`,
      wire,
      body: { fname: `Socket ${n}`, fnote: `Over TCP ${n}` },
    });
    await expectBody(g, wire, 200, 'OK', await groupFromDb(ctx, group.Id));
    assert.equal((await groupFromDb(ctx, group.Id)).Name, `Socket ${n}`);

    const f = await send(base, {
      method: 'PATCH',
      path: '/v1/custom-contact-fields/update',
      token: demo.token,
      query: `id=${field.Id}`,
      wire,
      body: { fname: `Tier ${n}` },
    });
    await expectBody(f, wire, 200, 'OK', await customFieldFromDb(ctx, field.Id));

    const e = await send(base, {
      method: 'POST',
      path: '/v1/custom-contact-fields-entry/update',
      token: demo.token,
      query: `id=${entry.Id}`,
      wire,
      body: { frfield: field.Id, frcontact: `${entry.PhoneNumberId}`, fvalue: `Platinum ${n}` },
    });
    await expectBody(e, wire, 200, 'OK', await entryFromDb(ctx, entry.Id));

    const k = await send(base, {
      method: 'POST',
      path: '/v1/keyword/reserve',
      token: demo.token,
      wire,
      body: { Keyword: `SOCKET${n}`, Number: '55155', AutoreplyMessage: 'Hi' },
    });
    const row = (await keywordsFromDb(ctx, demo.account.id)).at(-1)!;
    const record = isXml(wire)
      ? { Id: row.id, Number: `SOCKET${n}`, ShortCode: 55155, AutoreplyMessage: 'Hi' }
      : { Id: row.id, Keyword: `SOCKET${n}`, Number: 55155, AutoreplyMessage: 'Hi' };
    await expectBody(k, wire, 201, 'Created', [record]);

    // 422: status line "Data Validation Failed.", unwrapped list.
    const bad = await send(base, {
      method: 'PUT',
      path: '/v1/groups/update',
      token: demo.token,
      query: `id=${group.Id}`,
      wire,
      body: { fname: 'ab', fnote: 'x' },
    });
    await expectBody(bad, wire, 422, 'Data Validation Failed.', [
      { field: 'fname', message: 'Fname should contain at least 3 characters.' },
      { field: 'fnote', message: 'Fnote should contain at least 3 characters.' },
    ]);
    const taken = await send(base, {
      method: 'POST',
      path: '/v1/keyword/reserve',
      token: demo.token,
      wire,
      body: { Keyword: `socket${n}`, Number: 55155 },
    });
    await expectBody(taken, wire, 422, 'Data Validation Failed.', [
      { field: 'Keyword', message: `Keyword "socket${n}" has already been taken.` },
    ]);
    // 404 for an id the account does not have.
    const missing = await send(base, {
      method: 'PUT',
      path: '/v1/custom-contact-fields-entry/update',
      token: demo.token,
      query: 'id=424242',
      wire,
      body: { frfield: 1, frcontact: 1, fvalue: 'x' },
    });
    await expectBody(missing, wire, 404, 'Not Found', { name: 'Not Found', message: 'Object not found: 424242', code: 0, status: 404 });
    assert.equal(missing.headers.get('link'), null, 'no Link on errors');
    assert.ok(missing.headers.get('x-rate-limit-limit'), 'rate headers stay on errors');
  }
});
