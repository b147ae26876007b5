/**
 * The operator's API over a real TCP socket (app.listen on an ephemeral port, global fetch), on each
 * store: status lines, headers as they go on the wire (Vary, X-Rate-Limit-*, Location, Link) and
 * exact bodies in JSON and XML; 401 for an account key, an operator key 401 on /v1.
 */
import assert from 'node:assert/strict';
import { buildTestApp } from '../../helpers/app.ts';
import { JSON_TYPE, XML_TYPE, xmlDocument } from '../../helpers/operations.ts';
import { storeTest } from '../../helpers/stores.ts';
import { ADMIN, operatorKey, type AccountRec } from './helpers.ts';

storeTest('/admin/v1 over a socket: create, view, index, credits, close; JSON and XML; 401s', async (t) => {
  const ctx = await buildTestApp(t);
  const demo = await ctx.seed('Demo');
  const op = await operatorKey(ctx);
  const base = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const json = { accept: 'application/json', 'content-type': 'application/json' };

  const created = await fetch(`${base}${ADMIN}/accounts/create`, {
    method: 'POST',
    headers: { ...json, authorization: `Bearer ${op.secret}` },
    body: JSON.stringify({ Name: 'Wire Co', MaxPerDay: 100 }),
  });
  assert.equal(created.status, 201);
  assert.equal(created.statusText, 'Created');
  assert.equal(created.headers.get('content-type'), JSON_TYPE);
  assert.equal(created.headers.get('vary'), 'Accept');
  assert.equal(created.headers.get('x-rate-limit-limit'), '100000');
  const acme = (await created.json()) as AccountRec;
  assert.equal(created.headers.get('location'), `${base}${ADMIN}/accounts/view?id=${acme.Id}`);

  const topup = await fetch(`${base}${ADMIN}/accounts/credits?id=${acme.Id}&access_token=${op.secret}`, {
    method: 'POST',
    headers: { ...json },
    body: JSON.stringify({ Amount: 25, Note: 'wire' }),
  });
  assert.equal(topup.status, 200, await topup.clone().text());
  assert.equal(((await topup.json()) as AccountRec).AvailableCredits, 25);

  const xml = await fetch(`${base}${ADMIN}/accounts/view?id=${acme.Id}&access_token=${op.secret}`, {
    headers: { accept: 'application/xml' },
  });
  assert.equal(xml.status, 200);
  assert.equal(xml.headers.get('content-type'), XML_TYPE);
  assert.equal(await xml.text(), xmlDocument({ ...acme, AvailableCredits: 25 }));

  const list = await fetch(`${base}${ADMIN}/accounts/index?access_token=${op.secret}&per-page=1`, { headers: json });
  assert.equal(list.status, 200);
  assert.equal(list.headers.get('x-pagination-total-count'), '2');
  assert.match(
    String(list.headers.get('link')),
    new RegExp(`^<${base}${ADMIN}/accounts/index\\?access_token=.*&per-page=1&page=1>; rel=self`),
  );

  const closed = await fetch(`${base}${ADMIN}/accounts/delete?id=${acme.Id}&access_token=${op.secret}`, { method: 'DELETE' });
  assert.equal(closed.status, 204);
  assert.equal(await closed.text(), '');

  const refused = await fetch(`${base}${ADMIN}/accounts/index?access_token=${demo.token}`, { headers: { accept: 'application/xml' } });
  assert.equal(refused.status, 401);
  assert.equal(refused.statusText, 'Unauthorized');
  assert.equal(
    await refused.text(),
    xmlDocument({ name: 'Unauthorized', message: 'Your request was made with invalid credentials.', code: 0, status: 401 }),
  );
  assert.equal((await fetch(`${base}/v1/credits/balance?access_token=${op.secret}`)).status, 401);
});
