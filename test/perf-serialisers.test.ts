/**
 * Compiled response serialisers (src/domain/records.ts, the routes' response schemas): Fastify
 * writes JSON bodies with a serialiser compiled from each record's schema. It writes only the
 * schema's properties, in the schema's order, with the schema's types, so a schema that drifted
 * from its mapper would silently reorder, coerce or drop fields. These tests hold every route's
 * schema to byte-for-byte equality with JSON.stringify of the mapper's output, on random rows
 * (any text, nulls, both kinds of mixed fields, empty and long id lists).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import Fastify from 'fastify';
import type { TSchema } from '@sinclair/typebox';
import { recordMappers, type ContactRow, type CustomFieldRow, type EntryRow, type GroupRow, type KeywordReservationRow, type NumberRow, type ScheduledMessageRow } from '../src/domain/records.ts';
import { createTimeFormat } from '../src/domain/time.ts';
import { OPERATIONS } from '../src/http/routes/index.ts';

const mappers = recordMappers(createTimeFormat('UTC'));

// Any UTF-16 text, lone surrogates and control characters included.
const text = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 40 });
const id = fc.integer({ min: 1, max: 2 ** 40 });
const epoch = fc.integer({ min: 0, max: 4_102_444_800 });
const ids = fc.array(id, { maxLength: 200 });

const numberRow: fc.Arbitrary<NumberRow> = fc.record({
  number: fc.stringMatching(/^[0-9]{3,15}$/),
  status_id: fc.constantFrom(0, 1, 301, 302),
  blocked_at: fc.option(epoch, { nil: null }),
});
const messageRow: fc.Arbitrary<ScheduledMessageRow> = fc.record({
  id,
  mobile_phone: text,
  message: text,
  scheduled_at: epoch,
  status_id: fc.constantFrom(1, 2, 3),
  type_id: fc.constantFrom(1, 2),
  mms_template_id: fc.option(id, { nil: null }),
  subject: text,
});
const contactRow: fc.Arbitrary<ContactRow> = fc.record({
  id,
  number: text,
  opted_out: fc.constantFrom(0, 1),
  first_name: text,
  last_name: text,
  birthday: fc.option(fc.constantFrom('1990-02-28', '0000-00-00'), { nil: null }),
  email: text,
  zip: text,
  city: text,
  created_at: epoch,
  updated_at: epoch,
  group_ids: ids,
  custom_field_ids: ids,
});
const groupRow: fc.Arbitrary<GroupRow> = fc.record({
  id,
  name: text,
  note: text,
  keyword_id: fc.integer({ min: 0, max: 2 ** 31 }),
  parent_id: fc.integer({ min: 0, max: 2 ** 31 }),
  created_at: epoch,
  updated_at: epoch,
  member_ids: ids,
});
const entryRow: fc.Arbitrary<EntryRow> = fc.record({ id, custom_field_id: id, contact_id: id, entry: text, created_at: epoch, updated_at: epoch });
const customFieldRow: fc.Arbitrary<CustomFieldRow> = fc.record({ id, name: text, created_at: epoch, updated_at: epoch, entries: fc.array(entryRow, { maxLength: 5 }) });
const keywordRow: fc.Arbitrary<KeywordReservationRow> = fc.record({ id, keyword: text, number: fc.stringMatching(/^[1-9][0-9]{4,14}$/), autoreply_message: text });

/** What each route sends in JSON, built from random rows exactly as its handler builds it. */
const BODIES: Record<string, fc.Arbitrary<unknown>> = {
  '/v1/numbers/index': fc.array(numberRow, { maxLength: 5 }).map((rows) => rows.map(mappers.number)),
  '/v1/credits/balance': fc.integer({ min: -(2 ** 31), max: 2 ** 40 }).map((n) => ({ AvailableCredits: n })),
  '/v1/sms/single-schedule-messages': fc.array(messageRow, { maxLength: 100 }).map((rows) => rows.map(mappers.scheduledMessage)),
  '/v1/contacts/find': contactRow.map(mappers.contact),
  '/v1/groups/update': groupRow.map(mappers.group),
  '/v1/custom-contact-fields/update': customFieldRow.map(mappers.customField),
  '/v1/custom-contact-fields-entry/update': entryRow.map(mappers.entry),
  '/v1/keyword/reserve': keywordRow.map((r) => [mappers.keywordReservation(r)]),
};

/** The response schema each operation registers, captured from its real registration. */
function registeredSchemas(): Map<string, { status: number; schema: TSchema }> {
  const found = new Map<string, { status: number; schema: TSchema }>();
  const recorder = {
    get: (path: string, opts: { schema?: { response?: Record<number, TSchema> } }) => record(path, opts),
    post: (path: string, opts: { schema?: { response?: Record<number, TSchema> } }) => record(path, opts),
    route: (opts: { url: string; schema?: { response?: Record<number, TSchema> } }) => record(opts.url, opts),
  };
  function record(path: string, opts: { schema?: { response?: Record<number, TSchema> } }) {
    const entries = Object.entries(opts.schema?.response ?? {});
    assert.equal(entries.length, 1, `${path} declares one response schema`);
    found.set(path, { status: Number(entries[0]![0]), schema: entries[0]![1] });
  }
  for (const op of OPERATIONS) op.register(recorder as never, { store: {} as never, mappers, config: {} as never });
  return found;
}

test('every operation declares a response schema for its success status', () => {
  const schemas = registeredSchemas();
  assert.deepEqual([...schemas.keys()].sort(), Object.keys(BODIES).sort());
  assert.equal(schemas.get('/v1/keyword/reserve')!.status, 201);
  for (const [path, { status }] of schemas) if (path !== '/v1/keyword/reserve') assert.equal(status, 200, path);
});

test("each route's compiled serialiser writes exactly JSON.stringify of its records", async (t) => {
  const app = Fastify();
  t.after(() => app.close());
  let current: unknown;
  for (const [path, { status, schema }] of registeredSchemas()) {
    app.get(path, { schema: { response: { [status]: schema } } }, (_request, reply) => reply.code(status).send(current));
  }
  await app.ready();
  for (const [path, body] of Object.entries(BODIES)) {
    await fc.assert(
      fc.asyncProperty(body, async (value) => {
        current = value;
        const res = await app.inject({ url: path });
        assert.equal(res.payload, JSON.stringify(value), path);
      }),
      { numRuns: 150 },
    );
  }
});

test('the mixed fields keep both of their forms', async (t) => {
  const app = Fastify();
  t.after(() => app.close());
  const schemas = registeredSchemas();
  let current: unknown;
  for (const path of ['/v1/numbers/index', '/v1/sms/single-schedule-messages']) {
    app.get(path, { schema: { response: { 200: schemas.get(path)!.schema } } }, () => current);
  }
  const base = { id: 7, mobile_phone: '15550100001', message: 'Hi', scheduled_at: 0, status_id: 1, subject: '' };
  current = [mappers.scheduledMessage({ ...base, type_id: 2, mms_template_id: 42 }), mappers.scheduledMessage({ ...base, type_id: 1, mms_template_id: null })];
  const sms = JSON.parse((await app.inject({ url: '/v1/sms/single-schedule-messages' })).payload);
  assert.deepEqual(sms.map((m: { MmsTemplateId: unknown }) => m.MmsTemplateId), [42, '']);
  current = [mappers.number({ number: '15550100003', status_id: 301, blocked_at: 1_700_000_000 }), mappers.number({ number: '15550100001', status_id: 0, blocked_at: null })];
  const numbers = JSON.parse((await app.inject({ url: '/v1/numbers/index' })).payload);
  assert.deepEqual(numbers.map((n: { Blocked_Date: unknown }) => n.Blocked_Date), ['2023-11-14 22:13:20', null]);
});
