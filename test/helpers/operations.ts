/**
 * Shared oracles for the operations-*.test.ts suites, and the wire assertions of every suite (the
 * content types, the XML document, assertBody, assertError, assert422). Everything here is built
 * from API.md, API.md and the raw database rows, never from the server's own mappers or
 * serializers, so a test comparing a response with these values fails when the server breaks a rule.
 */
import assert from 'node:assert/strict';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { TestApp } from './app.ts';
import { REASON } from './reasons.ts';

export const JSON_TYPE = 'application/json; charset=UTF-8';
export const XML_TYPE = 'application/xml; charset=UTF-8';
/** The XML declaration, without the newline that follows it in every document. */
export const XML_DECL = '<?xml version="1.0" encoding="UTF-8"?>';

/** The three ways a client picks a format: Accept JSON, Accept XML, and `_format=xml` (overriding an Accept of JSON). */
export type Wire = 'json' | 'xml' | 'xml-param';
export const WIRES: readonly Wire[] = ['json', 'xml', 'xml-param'];
export const isXml = (w: Wire) => w !== 'json';

export interface CallOptions {
  method?: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  token: string;
  /** Extra query text, already encoded (`id=3`, `number=%2B1555...`). */
  query?: string;
  /** JSON-encoded as the body (Content-Type application/json) unless `rawBody` is given. */
  body?: unknown;
  rawBody?: string;
  contentType?: string;
  wire?: Wire;
}

/** Builds the URL of a call: path, access_token, the extra query, and `_format=xml` for 'xml-param'. */
export function urlOf(o: CallOptions): string {
  const parts = [`access_token=${encodeURIComponent(o.token)}`];
  if (o.query) parts.push(o.query);
  if (o.wire === 'xml-param') parts.push('_format=xml');
  return `${o.path}?${parts.join('&')}`;
}

export function headersOf(o: CallOptions): Record<string, string> {
  const headers: Record<string, string> = { accept: o.wire === 'xml' ? 'application/xml' : 'application/json' };
  if (o.rawBody !== undefined || o.body !== undefined) headers['content-type'] = o.contentType ?? 'application/json';
  return headers;
}

export function payloadOf(o: CallOptions): string | undefined {
  if (o.rawBody !== undefined) return o.rawBody;
  if (o.body !== undefined) return JSON.stringify(o.body);
  return undefined;
}

/** One request through app.inject. */
export function call(app: FastifyInstance, o: CallOptions): Promise<LightMyRequestResponse> {
  const payload = payloadOf(o);
  return app.inject({
    method: o.method ?? 'GET',
    url: urlOf(o),
    headers: headersOf(o),
    ...(payload !== undefined ? { payload } : {}),
  });
}

// ---------------------------------------------------------------- XML oracle (API.md §2.3)

function esc(text: string): string {
  return text
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/g, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}

/** A JSON value as a record or JSON.parse gives it (undefined: a property left out). */
type JsonValue = string | number | boolean | null | undefined | JsonValue[] | { [key: string]: JsonValue };

function xmlElement(name: string, value: JsonValue): string {
  if (Array.isArray(value)) {
    return value.length === 0 ? `<${name}/>` : `<${name}>${value.map((v) => xmlElement('item', v)).join('')}</${name}>`;
  }
  if (value !== null && typeof value === 'object') {
    const inner = Object.entries(value)
      .map(([k, v]) => xmlElement(k, v))
      .join('');
    return inner === '' ? `<${name}/>` : `<${name}>${inner}</${name}>`;
  }
  if (value === null || value === undefined || value === '') return `<${name}></${name}>`;
  if (typeof value === 'boolean') return `<${name}>${value ? 'true' : 'false'}</${name}>`;
  return `<${name}>${esc(String(value))}</${name}>`;
}

/** The whole XML document API.md §2.3 prescribes for a payload (a record or a list of records). */
export function xmlDocument(payload: unknown): string {
  return `${XML_DECL}\n${xmlElement('response', payload as JsonValue)}\n`;
}

const parser = new XMLParser({ ignoreAttributes: true, parseTagValue: false, trimValues: false });

/**
 * Checks the XML layout of API.md §2.3 (declaration line, whole document on one line, trailing
 * newline, root `response`) and well-formedness with fast-xml-parser. Returns the parsed document.
 */
export function assertXmlLayout(body: string): Record<string, unknown> {
  assert.ok(body.startsWith(`${XML_DECL}\n`), `XML must start with the declaration line: ${JSON.stringify(body.slice(0, 60))}`);
  assert.ok(body.endsWith('\n'), 'XML must end with a newline');
  const lines = body.split('\n');
  assert.equal(lines.length, 3, 'declaration, one document line, trailing newline');
  assert.equal(lines[2], '');
  assert.match(lines[1]!, /^<response(\/>|>.*<\/response>)$/);
  const valid = XMLValidator.validate(body);
  assert.equal(valid, true, `well-formed XML: ${JSON.stringify(valid)}`);
  const parsed = parser.parse(body) as Record<string, unknown>;
  assert.ok('response' in parsed);
  return parsed;
}

/** Asserts a successful response: status, content type of its format and exact body. */
export function assertBody(res: LightMyRequestResponse, wire: Wire, status: number, payload: unknown): void {
  assert.equal(res.statusCode, status, res.body);
  if (isXml(wire)) {
    assert.equal(res.headers['content-type'], XML_TYPE);
    assertXmlLayout(res.body);
    assert.equal(res.body, xmlDocument(payload));
  } else {
    assert.equal(res.headers['content-type'], JSON_TYPE);
    assert.equal(res.body, JSON.stringify(payload));
  }
}

/** Asserts a 422 (API.md §4.4): status line, unwrapped list of {field, message}, in this order. */
export function assert422(res: LightMyRequestResponse, errors: { field: string; message: string }[], wire: Wire = 'json'): void {
  assert.equal(res.statusCode, 422, res.body);
  assert.equal(res.statusMessage, 'Data Validation Failed.');
  assertBody(res, wire, 422, errors);
}

/**
 * Asserts an API.md §4 error: status, status text and `name` (both the reason phrase, REASON),
 * content type of its format and the exact body `{name, message, code: 0, status}`. On HEAD only
 * the status line and content type (Node drops the body on the wire; inject may still show it).
 */
export function assertError(res: LightMyRequestResponse, status: number, message: string, wire: Wire = 'json'): void {
  const name = REASON[status];
  assert.ok(name, `no reason phrase for ${status} in test/helpers/reasons.ts`);
  assert.equal(res.statusCode, status, `expected ${status}, got ${res.statusCode}: ${res.body}`);
  assert.equal(res.statusMessage, name, 'status text is the reason phrase');
  if (res.raw.req.method === 'HEAD') {
    assert.equal(res.headers['content-type'], isXml(wire) ? XML_TYPE : JSON_TYPE);
    return;
  }
  assertBody(res, wire, status, { name, message, code: 0, status });
}

/** Shorthand for one 422 error. */
export const fieldError = (field: string, message: string) => ({ field, message });

// ---------------------------------------------------------------- times (API.md §9)

/** `YYYY-MM-DD HH:MM:SS` of epoch seconds in a zone, via ICU's sv-SE layout (independent of the server). */
export function fmtTime(epochSeconds: number, timeZone = 'UTC'): string {
  return new Date(epochSeconds * 1000).toLocaleString('sv-SE', { timeZone, hourCycle: 'h23' });
}

/** `YYYY:MM:DD HH:MM:SS`: the scheduled message DateTime. */
export function fmtSchedule(epochSeconds: number, timeZone = 'UTC'): string {
  const s = fmtTime(epochSeconds, timeZone);
  return `${s.slice(0, 4)}:${s.slice(5, 7)}:${s.slice(8)}`;
}

export const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
export const SCHEDULE_TIME = /^\d{4}:\d{2}:\d{2} \d{2}:\d{2}:\d{2}$/;

export const nowSeconds = () => Math.floor(Date.now() / 1000);

// ---------------------------------------------------------------- records from the database (API.md §9)

const NUMBER_STATUS: Record<number, string> = { 0: 'Active', 1: 'Inactive', 301: 'Temporarily blocked.', 302: 'Permanently blocked.' };
const MESSAGE_STATUS: Record<number, string> = { 1: 'Pending', 2: 'Action Required', 3: 'Approved and Scheduled' };
const MESSAGE_TYPE: Record<number, string> = { 1: 'SMS', 2: 'MMS' };

export async function numbersFromDb(ctx: TestApp, accountId: number, tz = 'UTC') {
  const rows = await ctx.store.db.selectFrom('account_numbers').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
  return rows.map((r) => ({
    Number: r.number,
    Status_Id: r.status_id,
    Status_Description: NUMBER_STATUS[r.status_id]!,
    Blocked_Date: (r.status_id === 301 || r.status_id === 302) && r.blocked_at !== null ? fmtTime(Number(r.blocked_at), tz) : null,
  }));
}

export async function messagesFromDb(ctx: TestApp, accountId: number, tz = 'UTC') {
  const rows = await ctx.store.db.selectFrom('scheduled_messages').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
  return rows.map((r) => ({
    Id: r.id,
    MobilePhone: r.mobile_phone,
    Message: r.message,
    DateTime: fmtSchedule(Number(r.scheduled_at), tz),
    Status_Id: r.status_id,
    Status_Description: MESSAGE_STATUS[r.status_id]!,
    Type_Id: r.type_id,
    Type_Description: MESSAGE_TYPE[r.type_id]!,
    MmsTemplateId: r.type_id === 2 ? r.mms_template_id! : '',
    Subject: r.subject,
  }));
}

export async function contactFromDb(ctx: TestApp, id: number, tz = 'UTC') {
  const db = ctx.store.db;
  const r = await db.selectFrom('contacts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const groups = await db.selectFrom('group_members').select('group_id').where('contact_id', '=', id).orderBy('group_id').execute();
  const fields = await db
    .selectFrom('custom_field_entries')
    .select('custom_field_id')
    .where('contact_id', '=', id)
    .orderBy('custom_field_id')
    .execute();
  return {
    Id: r.id,
    Number: r.number,
    OptedOut: r.opted_out,
    FirstName: r.first_name,
    LastName: r.last_name,
    BirthDay: r.birthday ?? '0000-00-00',
    Email: r.email,
    Zip: r.zip,
    City: r.city,
    DateCreated: fmtTime(Number(r.created_at), tz),
    DateUpdated: fmtTime(Number(r.updated_at), tz),
    GroupIds: groups.map((g) => g.group_id),
    CustomFieldIds: fields.map((f) => f.custom_field_id),
  };
}

export async function groupFromDb(ctx: TestApp, id: number, tz = 'UTC') {
  const db = ctx.store.db;
  const r = await db.selectFrom('groups').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const members = await db.selectFrom('group_members').select('contact_id').where('group_id', '=', id).orderBy('contact_id').execute();
  return {
    Id: r.id,
    Name: r.name,
    Note: r.note,
    KeywordId: r.keyword_id,
    ParentId: r.parent_id,
    DateCreated: fmtTime(Number(r.created_at), tz),
    DateUpdated: fmtTime(Number(r.updated_at), tz),
    PhoneNumberIds: members.map((m) => m.contact_id),
  };
}

export async function entryFromDb(ctx: TestApp, id: number, tz = 'UTC') {
  const r = await ctx.store.db.selectFrom('custom_field_entries').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  return {
    Id: r.id,
    CustomFieldId: r.custom_field_id,
    PhoneNumberId: r.contact_id,
    Entry: r.entry,
    DateCreated: fmtTime(Number(r.created_at), tz),
    DateUpdated: fmtTime(Number(r.updated_at), tz),
  };
}

export async function customFieldFromDb(ctx: TestApp, id: number, tz = 'UTC') {
  const db = ctx.store.db;
  const r = await db.selectFrom('custom_fields').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const entries = await db.selectFrom('custom_field_entries').select('id').where('custom_field_id', '=', id).orderBy('id').execute();
  const Value = [];
  for (const e of entries) Value.push(await entryFromDb(ctx, e.id, tz));
  return { Id: r.id, Name: r.name, DateCreated: fmtTime(Number(r.created_at), tz), DateUpdated: fmtTime(Number(r.updated_at), tz), Value };
}

export async function keywordsFromDb(ctx: TestApp, accountId: number) {
  return ctx.store.db
    .selectFrom('keyword_reservations')
    .innerJoin('account_numbers', 'account_numbers.id', 'keyword_reservations.account_number_id')
    .select([
      'keyword_reservations.id',
      'keyword_reservations.keyword',
      'account_numbers.number',
      'keyword_reservations.autoreply_message',
      'keyword_reservations.account_id',
    ])
    .where('keyword_reservations.account_id', '=', accountId)
    .orderBy('keyword_reservations.id')
    .execute();
}

/** Every row the account owns, table by table: compare two snapshots to prove nothing changed. */
export async function snapshotAccount(ctx: TestApp, accountId: number): Promise<Record<string, unknown[]>> {
  const db = ctx.store.db;
  const byId = [
    'account_numbers',
    'contacts',
    'groups',
    'custom_fields',
    'custom_field_entries',
    'scheduled_messages',
    'keyword_reservations',
    'credit_ledger',
  ] as const;
  const out: Record<string, unknown[]> = {};
  // Ordered explicitly: PostgreSQL may return rows in another physical order after an update.
  for (const t of byId) out[t] = await db.selectFrom(t).selectAll().where('account_id', '=', accountId).orderBy('id').execute();
  out.group_members = await db
    .selectFrom('group_members')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('group_id')
    .orderBy('contact_id')
    .execute();
  out.credit_balances = await db.selectFrom('credit_balances').selectAll().where('account_id', '=', accountId).execute();
  return out;
}

/** A row id the database has never handed out (larger than any id in use). */
export const UNUSED_ID = 987654321;

/** One rejected request: its body (or raw body) and the exact 422 list it must get. */
export interface RejectCase {
  name: string;
  body?: unknown;
  rawBody?: string;
  errors: { field: string; message: string }[];
}

/**
 * Sends each case in every wire format and checks the exact 422 (API.md §4.4) and that the
 * account's data did not change (a rejected write commits nothing).
 */
export async function expectRejected(
  ctx: TestApp,
  demo: { account: { id: number }; token: string },
  o: Omit<CallOptions, 'token' | 'body' | 'rawBody' | 'wire'>,
  cases: readonly RejectCase[],
  wires: readonly Wire[] = WIRES,
): Promise<void> {
  const before = await snapshotAccount(ctx, demo.account.id);
  for (const c of cases) {
    for (const wire of wires) {
      const res = await call(ctx.app, {
        ...o,
        token: demo.token,
        wire,
        ...(c.rawBody !== undefined ? { rawBody: c.rawBody } : { body: c.body }),
      });
      try {
        assert422(res, c.errors, wire);
      } catch (err) {
        (err as Error).message = `${o.method ?? 'GET'} ${o.path} case "${c.name}" (${wire}): ${(err as Error).message}`;
        throw err;
      }
    }
  }
  assert.deepEqual(await snapshotAccount(ctx, demo.account.id), before, 'a rejected write changes nothing');
}
