/**
 * The OpenAPI 3.1 document (issue 14): GET /openapi.json without a token, the same as
 * docs/openapi.json (`npm run openapi`), valid for @readme/openapi-parser, and covering every
 * registered route, read from the registry (operationsFor the default configuration), so that an
 * operation added later is checked too.
 */
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileErrors, validate } from '@readme/openapi-parser';
import { loadConfig } from '../../src/config.ts';
import { operationsFor } from '../../src/http/routes/index.ts';
import { openApiText, OPENAPI_FILE } from '../../scripts/openapi.ts';
import { buildTestApp } from '../helpers/app.ts';
import { JSON_TYPE } from '../helpers/operations.ts';
import { storeTest } from '../helpers/stores.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the OpenAPI document as JSON.parse gives it, walked by path; the assertions check the shapes
type Json = Record<string, any>;

const SPEC_RECORDS = [
  'Number',
  'Group',
  'CustomField',
  'CustomFieldValue',
  'CreditBalance',
  'ScheduledSingleMessage',
  'KeywordReservation',
  'Contact',
];

async function served(t: { after(fn: () => unknown): void }): Promise<{ text: string; headers: Record<string, unknown>; status: number }> {
  const ctx = await buildTestApp(t);
  const res = await ctx.app.inject({ method: 'GET', url: '/openapi.json', headers: { accept: 'application/xml' } });
  return { text: res.body, headers: res.headers, status: res.statusCode };
}

storeTest('openapi: GET /openapi.json, no token, always JSON, equals docs/openapi.json', async (t) => {
  const res = await served(t);
  assert.equal(res.status, 200);
  assert.equal(res.headers['content-type'], JSON_TYPE);
  const file = readFileSync(OPENAPI_FILE, 'utf8');
  assert.equal(file, openApiText(), 'docs/openapi.json is stale: run `npm run openapi`');
  assert.deepEqual(JSON.parse(res.text), JSON.parse(file));
});

test('openapi: the document validates with @readme/openapi-parser', async () => {
  const doc = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as Json;
  assert.equal(doc.openapi, '3.1.0');
  const result = await validate(structuredClone(doc) as Parameters<typeof validate>[0]);
  assert.ok(result.valid, result.valid ? '' : compileErrors(result));
});

storeTest('openapi: every registered operation and method is in the document, with its responses', async (t) => {
  const doc = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as Json;
  const ops = operationsFor(loadConfig({}));
  assert.ok(ops.length >= 8);
  const ctx = await buildTestApp(t);
  const ids = new Set<string>();
  for (const op of ops) {
    for (const method of op.methods) {
      // The route is really registered (the registry is what the server serves)…
      assert.ok(ctx.app.hasRoute({ method, url: op.path }), `${method} ${op.path} is not a route`);
      // …and documented.
      const entry = doc.paths[op.path]?.[method.toLowerCase()] as Json | undefined;
      assert.ok(entry, `${method} ${op.path} (${op.id}) is missing from the document`);
      assert.ok(String(entry.operationId).startsWith(op.id), `${op.id}: operationId ${entry.operationId}`);
      assert.ok(!ids.has(entry.operationId), `duplicate operationId ${entry.operationId}`);
      ids.add(entry.operationId);
      assert.equal(entry.summary, op.summary);
      assert.equal(entry.tags.length, 1);
      const success = entry.responses[String(op.success)] as Json;
      assert.ok(success, `${op.id}: no ${op.success} response`);
      if (op.success === 204) assert.equal(success.content, undefined);
      else if (op.produces === 'record') assert.deepEqual(Object.keys(success.content), ['application/json', 'application/xml']);
      if (op.success === 201 && op.location) assert.ok(success.headers.Location, `${op.id}: no Location`);
      for (const status of ['400', '401', '405', '406', '429', '500']) assert.ok(entry.responses[status], `${op.id}: no ${status}`);
      if (op.body.kind !== 'none') {
        for (const status of ['413', '415', '422']) assert.ok(entry.responses[status], `${op.id}: no ${status}`);
        const media = Object.keys(entry.requestBody.content);
        if (op.body.kind === 'json-or-form') assert.deepEqual(media, ['application/json', 'application/x-www-form-urlencoded']);
        if (op.body.kind === 'csv') assert.deepEqual(media, ['text/csv']);
        if (op.body.kind === 'multipart') assert.deepEqual(media, ['multipart/form-data']);
      }
      if (op.idempotent)
        assert.ok(entry.responses['409'] && entry.parameters.some((p: Json) => p.$ref === '#/components/parameters/IdempotencyKey'));
      const query = (op.schema.query as Json | undefined)?.properties ?? {};
      for (const name of Object.keys(query))
        assert.ok(
          entry.parameters.some((p: Json) => p.name === name),
          `${op.id}: no query parameter ${name}`,
        );
    }
  }
  // Nothing documented that the server does not serve (outside the probes).
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const method of Object.keys(item))
      assert.ok(ctx.app.hasRoute({ method: method.toUpperCase(), url: path }), `${method} ${path} is documented but not served`);
  }
});

test('openapi: components, error bodies in JSON and XML, access_token security', () => {
  const doc = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as Json;
  const schemas = doc.components.schemas as Json;
  for (const name of [...SPEC_RECORDS, 'Error', 'ValidationErrors', 'ValidationError']) assert.ok(schemas[name], `component ${name}`);
  assert.deepEqual(Object.keys(schemas.Error.properties), ['name', 'message', 'code', 'status']);
  assert.deepEqual(schemas.ValidationErrors.items, { $ref: '#/components/schemas/ValidationError' });
  assert.deepEqual(Object.keys(schemas.ValidationError.properties), ['field', 'message']);
  // In XML each entry of Value is an <item> (docs/API.md §2.3).
  assert.deepEqual(schemas.CustomField.properties.Value.items, { $ref: '#/components/schemas/CustomFieldValue', xml: { name: 'item' } });
  const responses = doc.components.responses as Json;
  for (const [name, response] of Object.entries(responses)) {
    const media = Object.keys(response.content);
    // 406 and 414 (answered before the format is read) are always JSON.
    assert.deepEqual(
      media,
      name === 'NotAcceptable' || name === 'URITooLong' ? ['application/json'] : ['application/json', 'application/xml'],
      name,
    );
    assert.equal(
      response.content['application/json'].schema.$ref,
      name === 'ValidationFailed' ? '#/components/schemas/ValidationErrors' : '#/components/schemas/Error',
    );
  }
  assert.deepEqual(doc.components.securitySchemes.access_token, {
    type: 'apiKey',
    in: 'query',
    name: 'access_token',
    description: doc.components.securitySchemes.access_token.description,
  });
  // API.md §15.3: a key as access_token or as a Bearer token, or the console's session cookie.
  assert.deepEqual(doc.security, [{ access_token: [] }, { bearer: [] }, { session: [] }]);
  assert.deepEqual(doc.components.securitySchemes.bearer, {
    type: 'http',
    scheme: 'bearer',
    description: doc.components.securitySchemes.bearer.description,
  });
  assert.deepEqual(doc.components.securitySchemes.session, {
    type: 'apiKey',
    in: 'cookie',
    name: 'msgsvc_session',
    description: doc.components.securitySchemes.session.description,
  });
  const balance = doc.paths['/v1/credits/balance'].get as Json;
  assert.equal(balance.operationId, 'credits.balance');
  assert.equal(balance.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/CreditBalance');
  const numbers = doc.paths['/v1/numbers/index'].get as Json;
  assert.deepEqual(numbers.responses['200'].content['application/json'].schema, {
    type: 'array',
    items: { $ref: '#/components/schemas/Number' },
  });
  assert.ok(numbers.responses['200'].headers.Link);
});
