/**
 * The OpenAPI document says what the server does (issue 23): requests covering every documented
 * operation (each method, HEAD included, and the probes) are replayed against the app, successes
 * and the main error statuses, JSON and XML, `fields=`, form bodies with arrays, media/download
 * whole and in part, and every recorded request and response is validated against the document
 * the app serves at /openapi.json:
 * - the request: its operation and status are documented; query and header parameters, the token,
 *   the body by its media type (form bodies read with the document's names, `MediaIds[]`);
 * - the response: its status, every header it carries (beyond the HTTP framing ones) is declared
 *   and matches its schema, the required ones are there; no body on HEAD, 204 or a response without
 *   content; its Content-Type is one the response declares; the body matches the schema of that
 *   media type. XML bodies are parsed (fast-xml-parser) into the shape the document's `xml`
 *   annotations describe (root element name, wrapped arrays of `<item>`s, text typed by the schema)
 *   and validated like JSON.
 * Schemas are JSON Schema 2020-12 (the dialect of OpenAPI 3.1), checked with Ajv2020.
 * A request meant to break the document (a 400 or 422 case the document can express) must be
 * reported as a violation: the document is no looser than the server either.
 * Finally a copy of the document with one mistake put back (mms-templates/update requiring `Name`,
 * a record requiring every field, an array without `xml.wrapped`) must produce violations.
 */
import assert from 'node:assert/strict';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { XMLParser } from 'fast-xml-parser';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, withToken, type TestApp } from '../helpers/app.ts';
import { gifImage, multipart, pngImage } from '../helpers/images.ts';
import { storeTest } from '../helpers/stores.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the OpenAPI document as JSON.parse gives it, walked by path; the assertions check the shapes
type Json = Record<string, any>;

/** One exchange to replay. */
interface Case {
  method: string;
  /** Path and query, without the token (added unless `token` is false). */
  url: string;
  token?: boolean;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** The status the server must answer: the case tests what it says. */
  status: number;
  /** The request breaks the document on purpose: it must be reported (and is not a failure). */
  invalid?: boolean;
  /** No operation of the document matches (a 405): the response is checked against this component response. */
  component?: string;
}

interface Recorded {
  request: Case & { url: string };
  response: LightMyRequestResponse;
}

/** Headers of the HTTP framing, not the API's. */
const FRAMING = new Set(['content-type', 'content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding']);

const pointer = (...segments: string[]) => segments.map((s) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');

/** Validates exchanges against one OpenAPI 3.1 document. */
class Conformance {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly xml = new XMLParser({ ignoreAttributes: true, parseTagValue: false, trimValues: false, ignoreDeclaration: true });

  constructor(readonly doc: Json) {
    this.ajv.addFormat('uri', (s: string) => URL.canParse(s));
    this.ajv.addFormat('binary', true);
    this.ajv.addSchema(structuredClone(doc), 'doc');
  }

  /** The object at a JSON pointer of the document (`/a/b`, unescaped segments). */
  private at(segments: string[]): Json {
    let v: Json | undefined = this.doc;
    for (const s of segments) v = v?.[s];
    return v as Json;
  }

  /** Follows a `$ref` to a component (responses, parameters, headers, schemas): [object, its segments]. */
  private deref(value: Json, segments: string[]): [Json, string[]] {
    if (typeof value?.$ref !== 'string') return [value, segments];
    const target = value.$ref.slice(2).split('/');
    return this.deref(this.at(target), target);
  }

  /** A schema resolved through `$ref`, keeping the referring schema's own `xml`. */
  private schema(s: Json): Json {
    if (typeof s?.$ref !== 'string') return s ?? {};
    const [target] = this.deref(s, []);
    const resolved = this.schema(target);
    return s.xml ? { ...resolved, xml: s.xml } : resolved;
  }

  private validate(segments: string[], value: unknown, where: string, out: string[]): void {
    const key = pointer(...segments);
    let fn = this.compiled.get(key);
    if (!fn) {
      fn = this.ajv.compile({ $ref: `doc#/${key}` });
      this.compiled.set(key, fn);
    }
    if (!fn(value))
      for (const e of fn.errors ?? []) out.push(`${where}: ${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
  }

  /** The types a schema allows, through refs and anyOf/oneOf. */
  private types(s: Json): Set<string> {
    const r = this.schema(s);
    const out = new Set<string>();
    if (Array.isArray(r.type)) r.type.forEach((t: string) => out.add(t));
    else if (typeof r.type === 'string') out.add(r.type);
    for (const branch of [...(r.anyOf ?? []), ...(r.oneOf ?? [])]) this.types(branch).forEach((t) => out.add(t));
    return out;
  }

  /** Text (a form value, an XML element) as the schema types it. */
  private typed(text: string, s: Json): unknown {
    const types = this.types(s);
    if (types.has('integer') && /^-?\d+$/.test(text)) return Number(text);
    if (types.has('string')) return text;
    if (types.has('number') && text.trim() !== '' && Number.isFinite(Number(text))) return Number(text);
    if (types.has('boolean') && (text === 'true' || text === 'false')) return text === 'true';
    if (types.has('null') && text === '') return null;
    return text;
  }

  /**
   * An XML element's parsed content as the value the schema describes: arrays must be wrapped and
   * hold `<item>`s (the items' xml name), objects hold one element per property, text is typed.
   */
  fromXml(node: unknown, s: Json, where: string, out: string[]): unknown {
    const r = this.schema(s);
    if (r.type === 'array' || (Array.isArray(r.type) && r.type.includes('array'))) {
      if (r.xml?.wrapped !== true) out.push(`${where}: an array without xml.wrapped, but the server wraps every array`);
      const itemName = this.schema(r.items).xml?.name;
      if (itemName !== 'item') out.push(`${where}: array items named ${JSON.stringify(itemName)}, the server writes <item>`);
      if (node === '') return [];
      if (node === null || typeof node !== 'object' || Array.isArray(node)) {
        out.push(`${where}: expected <item> elements, got ${JSON.stringify(node)}`);
        return node;
      }
      const { item, ...others } = node as Json;
      for (const name of Object.keys(others)) out.push(`${where}: unexpected element <${name}> in a list`);
      const items = item === undefined ? [] : Array.isArray(item) ? item : [item];
      return items.map((v: unknown, i: number) => this.fromXml(v, r.items, `${where}/${i}`, out));
    }
    if (r.properties || r.type === 'object') {
      if (node === '') return {};
      if (node === null || typeof node !== 'object' || Array.isArray(node)) {
        out.push(`${where}: expected elements, got ${JSON.stringify(node)}`);
        return node;
      }
      const props = (r.properties ?? {}) as Record<string, Json>;
      const byElement = new Map(
        Object.entries(props).map(([name, p]) => [
          this.schema(p).xml?.name && !this.schema(p).xml?.wrapped ? this.schema(p).xml.name : name,
          name,
        ]),
      );
      const result: Json = {};
      for (const [element, value] of Object.entries(node as Json)) {
        const name = byElement.get(element);
        if (name === undefined) {
          result[element] = value; // additionalProperties decides
          continue;
        }
        if (Array.isArray(value)) out.push(`${where}: <${element}> repeated`);
        result[name] = this.fromXml(value, props[name]!, `${where}/${name}`, out);
      }
      return result;
    }
    if (node !== null && typeof node === 'object') {
      out.push(`${where}: expected text, got elements ${JSON.stringify(node)}`);
      return node;
    }
    return this.typed(String(node), r);
  }

  /** Form fields by the names sent (`MediaIds[]` stays `MediaIds[]`, a list), typed by the schema. */
  private formFields(text: string, s: Json): Json {
    const r = this.schema(s);
    const fields: Json = {};
    for (const [key, value] of new URLSearchParams(text)) {
      if (key.endsWith('[]')) (fields[key] ??= []).push(value);
      else fields[key] = value;
    }
    for (const [key, value] of Object.entries(fields)) {
      const p = r.properties?.[key] as Json | undefined;
      if (!p) continue;
      fields[key] = Array.isArray(value) ? value.map((v) => this.typed(v, this.schema(p).items ?? {})) : this.typed(value, p);
    }
    return fields;
  }

  /** The violations of one exchange (an empty list when it conforms). */
  check(ex: Recorded): { request: string[]; response: string[] } {
    const request: string[] = [];
    const response: string[] = [];
    const url = new URL(ex.request.url, 'http://localhost');
    const method = ex.request.method.toLowerCase();
    const headers = Object.fromEntries(Object.entries(ex.request.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
    const path = this.doc.paths[url.pathname] as Json | undefined;
    const op = path?.[method] as Json | undefined;
    let responses: [Json, string[]] | undefined;
    if (!op) {
      if (ex.request.component === undefined) request.push(`${method.toUpperCase()} ${url.pathname} is not in the document`);
      else responses = [{ [String(ex.response.statusCode)]: { $ref: `#/components/responses/${ex.request.component}` } }, []];
    } else {
      const opSegments = ['paths', url.pathname, method];
      // Parameters.
      for (const [i, p0] of ((op.parameters ?? []) as Json[]).entries()) {
        const [p, segments] = this.deref(p0, [...opSegments, 'parameters', String(i)]);
        const value =
          p.in === 'query' ? url.searchParams.getAll(p.name).at(-1) : p.in === 'header' ? headers[String(p.name).toLowerCase()] : undefined;
        if (value === undefined) {
          if (p.required) request.push(`missing required ${p.in} parameter ${p.name}`);
          continue;
        }
        this.validate([...segments, 'schema'], value, `${p.in} parameter ${p.name}`, request);
      }
      // Security: an apiKey in the query.
      for (const requirement of (op.security ?? this.doc.security ?? []) as Json[]) {
        for (const name of Object.keys(requirement)) {
          const scheme = this.doc.components.securitySchemes[name] as Json;
          if (scheme.in === 'query' && !url.searchParams.has(scheme.name)) request.push(`missing ${scheme.name}`);
        }
      }
      // Body.
      const body = ex.request.body === undefined ? '' : ex.request.body;
      const contentType = (headers['content-type'] ?? '').split(';')[0]!;
      if (op.requestBody) {
        const [rb, rbSegments] = this.deref(op.requestBody, [...opSegments, 'requestBody']);
        if (body.length === 0) {
          if (rb.required) request.push('missing required body');
        } else if (!rb.content?.[contentType]) {
          request.push(`body media type ${contentType} is not declared`);
        } else {
          const segments = [...rbSegments, 'content', contentType, 'schema'];
          const media = rb.content[contentType] as Json;
          if (contentType === 'application/json') {
            let value: unknown;
            try {
              value = JSON.parse(String(body));
            } catch {
              request.push('body is not JSON');
            }
            if (value !== undefined) this.validate(segments, value, 'body', request);
          } else if (contentType === 'application/x-www-form-urlencoded') {
            for (const [name, enc] of Object.entries((media.encoding ?? {}) as Json)) {
              if (enc.style !== 'form' || enc.explode !== true) request.push(`form field ${name}: encoding ${JSON.stringify(enc)}`);
            }
            this.validate(segments, this.formFields(String(body), media.schema), 'form body', request);
          } else if (contentType === 'multipart/form-data') {
            const names = [...String(body).matchAll(/Content-Disposition: form-data; name="([^"]+)"/g)].map((m) => m[1]!);
            this.validate(segments, Object.fromEntries(names.map((n) => [n, 'bytes'])), 'multipart body', request);
          }
        }
      }
      responses = this.deref(op.responses, [...opSegments, 'responses']);
    }
    if (!responses) return { request, response };
    // Response.
    const res = ex.response;
    const status = String(res.statusCode);
    const declared = responses[0][status] as Json | undefined;
    if (!declared) {
      response.push(`status ${status} is not declared`);
      return { request, response };
    }
    const [r, rSegments] = this.deref(declared, [...responses[1], status]);
    const declaredHeaders = new Map<string, [Json, string[]]>();
    for (const [name, h] of Object.entries((r.headers ?? {}) as Json))
      declaredHeaders.set(name.toLowerCase(), this.deref(h, [...rSegments, 'headers', name]));
    for (const [name, value] of Object.entries(res.headers)) {
      if (FRAMING.has(name) && !declaredHeaders.has(name)) continue;
      const h = declaredHeaders.get(name);
      if (!h) {
        response.push(`header ${name} is not declared`);
        continue;
      }
      const text = String(value);
      this.validate([...h[1], 'schema'], this.typed(text, h[0].schema ?? {}), `header ${name}`, response);
    }
    for (const [name, [h]] of declaredHeaders)
      if (h.required && res.headers[name] === undefined) response.push(`required header ${name} is missing`);
    const payload = res.rawPayload;
    if (ex.request.method === 'HEAD' || !r.content) {
      if (payload.length > 0) response.push(`a body where none is declared (${payload.length} bytes)`);
      return { request, response };
    }
    const contentType = String(res.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim();
    const mediaKey = Object.keys(r.content).find(
      (m) => m === contentType || (m.endsWith('/*') && contentType.startsWith(m.slice(0, -1))) || m === '*/*',
    );
    if (mediaKey === undefined) {
      response.push(`Content-Type ${contentType} is not declared (${Object.keys(r.content).join(', ')})`);
      return { request, response };
    }
    const segments = [...rSegments, 'content', mediaKey, 'schema'];
    const schema = r.content[mediaKey].schema as Json;
    if (mediaKey === 'application/json') {
      this.validate(segments, JSON.parse(res.body), 'body', response);
    } else if (mediaKey === 'application/xml') {
      const parsed = this.xml.parse(res.body) as Json;
      const roots = Object.keys(parsed);
      const rootName = this.schema(schema).xml?.name;
      if (roots.length !== 1 || roots[0] !== rootName) response.push(`XML root <${roots.join('><')}>, the document says <${rootName}>`);
      const value = this.fromXml(parsed[roots[0]!], schema, 'xml', response);
      this.validate(segments, value, 'XML body', response);
    } else if (payload.length === 0 && schema.type === 'string') {
      response.push('an empty body');
    }
    return { request, response };
  }
}

/** The demo account's data and what the setup creates, for the cases. */
interface World {
  ctx: TestApp;
  token: string;
  ids: Record<string, number | string>;
}

const json = (body: unknown) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const form = (text: string) => ({ headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: text });
const XML = { accept: 'application/xml' };
const UNUSED = 987654321;

async function replay(w: World, c: Case): Promise<Recorded> {
  const url = c.token === false ? c.url : withToken(c.url, w.token);
  const response = await w.ctx.app.inject({
    method: c.method as 'GET',
    url,
    ...(c.headers ? { headers: c.headers } : {}),
    ...(c.body !== undefined ? { payload: c.body } : {}),
  });
  return { request: { ...c, url }, response };
}

/** Runs cases one after the other, recording every exchange; `then` turns a response into ids for later cases. */
class Session {
  readonly exchanges: Recorded[] = [];
  readonly failures: string[] = [];
  constructor(readonly w: World) {}
  async run(c: Case): Promise<LightMyRequestResponse> {
    const ex = await replay(this.w, c);
    if (ex.response.statusCode !== c.status)
      this.failures.push(`${c.method} ${c.url}: status ${ex.response.statusCode}, expected ${c.status}: ${ex.response.body.slice(0, 300)}`);
    this.exchanges.push(ex);
    return ex.response;
  }
  /** The id of the record (or the first record of a list) a JSON response holds. */
  async create(c: Case): Promise<number> {
    const res = await this.run(c);
    const body = JSON.parse(res.body) as Json;
    return Number((Array.isArray(body) ? body[0] : body).Id);
  }
}

/** A GET with JSON, XML (Accept and _format), fields= in both, and HEAD; plus its 404/400 when it takes an id. */
async function read(s: Session, path: string, query: string, fields: string, hasId = query.includes('id=')): Promise<void> {
  const url = `${path}?${query}`;
  await s.run({ method: 'GET', url, status: 200 });
  await s.run({ method: 'GET', url, headers: XML, status: 200 });
  await s.run({ method: 'GET', url: `${url}&_format=xml`, status: 200 });
  await s.run({ method: 'GET', url: `${url}&fields=${fields}`, status: 200 });
  await s.run({ method: 'GET', url: `${url}&fields=${fields}`, headers: XML, status: 200 });
  await s.run({ method: 'HEAD', url, status: 200 });
  if (hasId) {
    const missing = url.replace(/([?&])id=[^&]*/, `$1id=${UNUSED}`);
    await s.run({ method: 'GET', url: missing, status: 404 });
    await s.run({ method: 'GET', url: missing, headers: XML, status: 404 });
    await s.run({ method: 'HEAD', url: missing, status: 404 });
    await s.run({ method: 'GET', url: url.replace(/([?&])id=[^&]*/, '$1id=abc'), status: 400 });
    await s.run({ method: 'GET', url: url.replace(/([?&])id=[^&]*&?/, '$1'), status: 400, invalid: true });
  }
}

/** Every documented operation, with successes and the main errors. */
async function replayAll(s: Session): Promise<void> {
  const { w } = s;
  const demo = w.ids;
  // Probes and the generic errors.
  for (const path of ['/healthz', '/readyz']) {
    await s.run({ method: 'GET', url: path, token: false, status: 200 });
    await s.run({ method: 'HEAD', url: path, token: false, status: 200 });
  }
  await s.run({ method: 'GET', url: '/v1/numbers/index', token: false, status: 401, invalid: true });
  await s.run({ method: 'GET', url: '/v1/numbers/index', token: false, headers: XML, status: 401, invalid: true });
  await s.run({ method: 'GET', url: '/v1/numbers/index', headers: { accept: 'text/html' }, status: 406 });
  await s.run({ method: 'GET', url: '/v1/numbers/index?_format=yaml', status: 406, invalid: true });
  await s.run({ method: 'GET', url: `/v1/numbers/index?q=${'x'.repeat(9000)}`, status: 414 });
  await s.run({ method: 'GET', url: `/healthz?q=${'x'.repeat(9000)}`, token: false, status: 414 });
  await s.run({ method: 'HEAD', url: `/v1/numbers/index?q=${'x'.repeat(9000)}`, status: 414 });
  await s.run({ method: 'DELETE', url: '/v1/numbers/index', status: 405, component: 'MethodNotAllowed' });
  await s.run({ method: 'POST', url: '/v1/groups/view', headers: XML, status: 405, component: 'MethodNotAllowed' });

  // Reads.
  await read(s, '/v1/numbers/index', 'per-page=2&page=2', 'Number');
  // API.md §17: one number with its limits, by its number in any format; the limits set; the use.
  await read(s, '/v1/numbers/view', `number=${demo.number}`, 'Number,MaxPerDay');
  await read(s, '/v1/numbers/view', 'number=%2B1%20(555)%20010-0001', 'MaxRecipientsPerMonth');
  await s.run({ method: 'GET', url: '/v1/numbers/view?number=15550109999', status: 404 });
  await s.run({ method: 'GET', url: '/v1/numbers/view?number=15550109999', headers: XML, status: 404 });
  await s.run({ method: 'HEAD', url: '/v1/numbers/view?number=abc', status: 404 });
  await s.run({ method: 'GET', url: '/v1/numbers/view', status: 400, invalid: true });
  await s.run({
    method: 'PUT',
    url: `/v1/numbers/update?number=${demo.number}`,
    ...json({ MaxPerSecond: 5, MaxPerDay: 1000, MaxRecipientsPerMonth: 200 }),
    status: 200,
  });
  await s.run({
    method: 'PATCH',
    url: '/v1/numbers/update?number=15550100001',
    ...form('MaxPerDay=300'),
    headers: { ...form('').headers, ...XML },
    status: 200,
  });
  await s.run({ method: 'PUT', url: `/v1/numbers/update?number=${demo.number}`, ...json({ MaxPerDay: -1 }), status: 422, invalid: true });
  await s.run({
    method: 'PATCH',
    url: `/v1/numbers/update?number=${demo.number}`,
    ...json({ MaxPerSecond: 'fast' }),
    headers: { ...json({}).headers, ...XML },
    status: 422,
    invalid: true,
  });
  await s.run({ method: 'PUT', url: '/v1/numbers/update?number=15550109999', ...json({ MaxPerDay: 1 }), status: 404 });
  await s.run({ method: 'PUT', url: '/v1/numbers/update', ...json({ MaxPerDay: 1 }), status: 400, invalid: true });
  await read(s, '/v1/numbers/usage', 'per-page=2', 'Number,MessagesToday');
  await s.run({
    method: 'PUT',
    url: `/v1/numbers/update?number=${demo.number}`,
    ...json({ MaxPerSecond: 0, MaxPerDay: 0, MaxRecipientsPerMonth: 0 }),
    status: 200,
  });
  await read(s, '/v1/credits/balance', '', 'AvailableCredits');
  await read(s, '/v1/credits/ledger', 'per-page=2', 'Id,Amount,Balance');
  await read(s, '/v1/credits/ledger', 'Type=topup&from=2020-01-01%2000:00:00', 'Type,Reference');
  await s.run({ method: 'GET', url: '/v1/credits/ledger?Type=gift', status: 422 });
  await read(s, '/v1/sms/single-schedule-messages', '', 'Id,DateTime');
  await read(s, '/v1/contacts/index', 'per-page=3&OptedOut=0', 'Id,GroupIds');
  await s.run({ method: 'GET', url: '/v1/contacts/index?OptedOut=7', status: 422 });
  await read(s, '/v1/contacts/view', `id=${demo.contact}`, 'Number,CustomFieldIds');
  await read(s, '/v1/contacts/find', `number=${demo.contactNumber}`, 'Id');
  await s.run({ method: 'GET', url: '/v1/contacts/find', status: 400, invalid: true });
  await read(s, '/v1/groups/index', '', 'Name,PhoneNumberIds');
  await read(s, '/v1/groups/view', `id=${demo.group}`, 'PhoneNumberIds');
  await read(s, '/v1/custom-contact-fields/index', 'per-page=2', 'Name,Value');
  await read(s, '/v1/custom-contact-fields/view', `id=${demo.field}`, 'Value');
  await read(s, '/v1/custom-contact-fields-entry/index', `frfield=${demo.field}`, 'Entry');
  await read(s, '/v1/custom-contact-fields-entry/view', `id=${demo.entry}`, 'Entry');

  // Messages.
  const sent = await s.create({
    method: 'POST',
    url: '/v1/sms/send',
    ...json({ MobilePhone: '+1 202 555 0142', Message: 'Hello' }),
    status: 201,
  });
  await s.run({
    method: 'POST',
    url: '/v1/sms/send',
    ...form('MobilePhone=%2B12025550143&Message=Hi+there'),
    headers: { ...form('').headers, ...XML },
    status: 201,
  });
  await s.run({ method: 'POST', url: '/v1/sms/send', ...json({}), status: 422 });
  await s.run({ method: 'POST', url: '/v1/sms/send', ...json({}), headers: { ...json({}).headers, ...XML }, status: 422 });
  await s.run({
    method: 'POST',
    url: '/v1/sms/send',
    headers: { 'content-type': 'application/json' },
    body: '{',
    status: 400,
    invalid: true,
  });
  await s.run({
    method: 'POST',
    url: '/v1/sms/send',
    headers: { 'content-type': 'text/plain' },
    body: 'hello',
    status: 415,
    invalid: true,
  });
  await s.run({ method: 'POST', url: '/v1/sms/send', ...json({ Message: 'x'.repeat(200_000) }), status: 413, invalid: true });
  // Idempotency-Key: a replayed success, a replayed 422, a key reused for another request.
  const keyed = (key: string, body: unknown) => ({
    method: 'POST',
    url: '/v1/sms/send',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
  });
  await s.run({ ...keyed('conformance-1', { MobilePhone: '+1 202 555 0144', Message: 'Once' }), status: 201 });
  await s.run({ ...keyed('conformance-1', { MobilePhone: '+1 202 555 0144', Message: 'Once' }), status: 201 });
  await s.run({ ...keyed('conformance-1', { MobilePhone: '+1 202 555 0144', Message: 'Twice' }), status: 409 });
  await s.run({ ...keyed('conformance-2', { Message: '' }), status: 422, invalid: true });
  await s.run({ ...keyed('conformance-2', { Message: '' }), status: 422, invalid: true });
  await s.run({
    method: 'POST',
    url: '/v1/sms/send',
    headers: { 'content-type': 'application/json', 'idempotency-key': '' },
    body: '{}',
    status: 400,
    invalid: true,
  });
  await s.run({ method: 'POST', url: '/v1/sms/send-group', ...json({ GroupId: demo.group, Message: 'To the group' }), status: 201 });
  await s.run({
    method: 'POST',
    url: '/v1/sms/send-group',
    ...json({ Message: 'x' }),
    headers: { ...json({}).headers, ...XML },
    status: 422,
    invalid: true,
  });
  await read(s, '/v1/sms/index', 'per-page=5&Direction=Outbound', 'Id,BatchId,DateSent');
  await s.run({ method: 'GET', url: '/v1/sms/index?Status_Id=99', status: 422 });
  await read(s, '/v1/sms/view', `id=${sent}`, 'Status_Description');
  await read(s, '/v1/sms/stats', 'interval=hour', 'Time,Credits');
  await read(
    s,
    '/v1/sms/stats',
    `from=${encodeURIComponent('2026-06-01 00:00:00')}&to=${encodeURIComponent('2026-06-07 23:59:59')}`,
    'Outbound',
  );
  await s.run({ method: 'GET', url: '/v1/sms/stats?interval=week', status: 422 });
  await s.run({ method: 'GET', url: '/v1/sms/stats?from=yesterday', headers: XML, status: 422 });
  // API.md §10.9: the log as CSV (a success is text/csv whatever the Accept; errors negotiated), and the ErrorCode list.
  await s.run({ method: 'GET', url: '/v1/sms/export', status: 200 });
  await s.run({
    method: 'GET',
    url: `/v1/sms/export?Direction=Outbound&from=${encodeURIComponent('2020-01-01 00:00:00')}`,
    headers: XML,
    status: 200,
  });
  await s.run({ method: 'HEAD', url: '/v1/sms/export?Status_Id=3', status: 200 });
  await s.run({ method: 'GET', url: '/v1/sms/export?Status_Id=99', status: 422 });
  await s.run({ method: 'GET', url: '/v1/sms/export?from=yesterday', headers: XML, status: 422 });
  await read(s, '/v1/errors/index', 'x=1', 'Code,Final');
  // API.md §14.3, §14.4: preview, tracked links, conversations, mark-read.
  await s.run({
    method: 'POST',
    url: '/v1/sms/preview',
    ...json({ MobilePhone: '+1 202 555 0142', Message: 'Hi {FirstName}' }),
    status: 200,
  });
  await s.run({
    method: 'POST',
    url: '/v1/sms/preview',
    ...form('MobilePhone=%2B12025550142&Message=See+https%3A%2F%2Fexample.com%2Fa&ShortenLinks=1'),
    headers: { ...form('').headers, ...XML },
    status: 200,
  });
  await s.run({ method: 'POST', url: '/v1/sms/preview', ...json({ MobilePhone: '+1 202 555 0142', ShortenLinks: 2 }), status: 422 });
  const linked = await s.create({
    method: 'POST',
    url: '/v1/sms/send',
    ...json({ MobilePhone: '+1 202 555 0145', Message: 'Read https://example.com/news', ShortenLinks: 1 }),
    status: 201,
  });
  await read(s, '/v1/sms/links', `id=${linked}`, 'Url,Clicks');
  await read(s, '/v1/sms/conversations', 'per-page=5', 'MobilePhone,LastMessage');
  await s.run({ method: 'POST', url: '/v1/sms/mark-read?MobilePhone=%2B12025550145', status: 204 });
  await s.run({ method: 'POST', url: '/v1/sms/mark-read?MobilePhone=12', headers: XML, status: 422 });
  await s.run({ method: 'POST', url: '/v1/sms/mark-read', status: 422, invalid: true });
  const when = new Date(Date.now() + 7 * 86_400_000).toISOString().slice(0, 19).replace('T', ' ');
  const scheduled = await s.create({
    method: 'POST',
    url: '/v1/sms/schedule',
    ...json({ MobilePhone: '+1 202 555 0150', Message: 'Later', DateTime: when }),
    status: 201,
  });
  await s.run({
    method: 'POST',
    url: '/v1/sms/schedule',
    ...form('MobilePhone=%2B12025550151&Message=Later&DateTime=2001-01-01+00%3A00%3A00'),
    status: 422,
  });
  await read(s, '/v1/sms/view-scheduled', `id=${scheduled}`, 'DateTime,MmsTemplateId');
  const recurring = await s.create({
    method: 'POST',
    url: '/v1/sms/schedule',
    ...json({ MobilePhone: '+1 202 555 0152', Message: 'Weekly', DateTime: when, RRule: 'FREQ=WEEKLY;COUNT=3' }),
    status: 201,
  });
  await s.run({
    method: 'PATCH',
    url: `/v1/sms/update-scheduled?id=${recurring}`,
    ...json({ RRule: 'FREQ=MONTHLY;BYMONTHDAY=31' }),
    status: 200,
  });
  await s.run({
    method: 'POST',
    url: '/v1/sms/schedule',
    ...json({ MobilePhone: '+1 202 555 0152', DateTime: when, RRule: 'FREQ=HOURLY' }),
    headers: { ...json({}).headers, ...XML },
    status: 422,
  });
  await s.run({ method: 'PUT', url: `/v1/sms/update-scheduled?id=${scheduled}`, ...json({ Message: 'Later still' }), status: 200 });
  await s.run({
    method: 'PATCH',
    url: `/v1/sms/update-scheduled?id=${scheduled}`,
    ...form('Subject=S'),
    headers: { ...form('').headers, ...XML },
    status: 200,
  });
  await s.run({ method: 'PATCH', url: `/v1/sms/update-scheduled?id=${UNUSED}`, ...json({ Message: 'x' }), status: 404 });
  await s.run({ method: 'DELETE', url: `/v1/sms/cancel-scheduled?id=${scheduled}`, status: 204 });
  await s.run({ method: 'DELETE', url: `/v1/sms/cancel-scheduled?id=${scheduled}`, headers: XML, status: 404 });

  // Contacts: arrays in form bodies as the server reads them (GroupIds[]=…).
  const contact = await s.create({
    method: 'POST',
    url: '/v1/contacts/create',
    ...form(`Number=%2B12025550160&FirstName=Form&GroupIds[]=${demo.group}&GroupIds[]=${demo.group2}`),
    status: 201,
  });
  await s.run({
    method: 'POST',
    url: '/v1/contacts/create',
    ...json({ Number: '+1 202 555 0161', GroupIds: [demo.group] }),
    headers: { ...json({}).headers, ...XML },
    status: 201,
  });
  await s.run({ method: 'POST', url: '/v1/contacts/create', ...json({ Number: '' }), status: 422 });
  await s.run({ method: 'PUT', url: `/v1/contacts/update?id=${contact}`, ...json({ City: 'Austin' }), status: 200 });
  await s.run({
    method: 'PATCH',
    url: `/v1/contacts/update?id=${contact}`,
    ...form(`GroupIds[]=${demo.group2}`),
    headers: { ...form('').headers, ...XML },
    status: 200,
  });
  await s.run({ method: 'PATCH', url: `/v1/contacts/update?id=${contact}`, ...json({ Email: 'not an email' }), status: 422 });
  await s.run({ method: 'PATCH', url: `/v1/contacts/update?id=${contact}`, ...json({ OptedOut: 1 }), status: 200 });
  await read(s, '/v1/contacts/consent', `id=${contact}`, 'Source,Detail');
  // API.md §14.3: the account's settings.
  await read(s, '/v1/account/settings', '', 'TimeZone');
  await s.run({
    method: 'PUT',
    url: '/v1/account/settings',
    ...json({ QuietHoursStart: '22:00', QuietHoursEnd: '07:00', TimeZone: 'Europe/Paris' }),
    status: 200,
  });
  await s.run({
    method: 'PATCH',
    url: '/v1/account/settings',
    ...form('TimeZone=UTC'),
    headers: { ...form('').headers, ...XML },
    status: 200,
  });
  await s.run({ method: 'PUT', url: '/v1/account/settings', ...json({ QuietHoursStart: '22:00', QuietHoursEnd: '22:00' }), status: 422 });
  await s.run({ method: 'PUT', url: '/v1/account/settings', ...json({ QuietHoursStart: '', QuietHoursEnd: '' }), status: 200 });
  // API.md §17: SenderSelection, and back to `first` for the rest of the run.
  await s.run({ method: 'PATCH', url: '/v1/account/settings', ...json({ SenderSelection: 'pool' }), status: 200 });
  await s.run({ method: 'PATCH', url: '/v1/account/settings', ...json({ SenderSelection: 'sticky' }), status: 422, invalid: true });
  await s.run({
    method: 'PUT',
    url: '/v1/account/settings',
    ...form('SenderSelection=first'),
    headers: { ...form('').headers, ...XML },
    status: 200,
  });
  await s.run({
    method: 'POST',
    url: '/v1/contacts/import',
    headers: { 'content-type': 'text/csv' },
    body: 'Number,FirstName\n+12025550170,Csv\nbad,Row\n',
    status: 200,
  });
  await s.run({
    method: 'POST',
    url: '/v1/contacts/import',
    headers: { 'content-type': 'text/csv', ...XML },
    body: 'Number,FirstName\n+12025550171,Csv\n',
    status: 200,
  });
  await s.run({ method: 'POST', url: '/v1/contacts/import', headers: { 'content-type': 'text/csv' }, body: 'Nickname\nx\n', status: 422 });

  // Groups.
  const group = await s.create({ method: 'POST', url: '/v1/groups/create', ...json({ fname: 'Conformance' }), status: 201 });
  await s.run({
    method: 'POST',
    url: '/v1/groups/create',
    ...form('fname=Conformance+XML&fnote=A+note'),
    headers: { ...form('').headers, ...XML },
    status: 201,
  });
  await s.run({ method: 'POST', url: '/v1/groups/create', ...json({ fname: 'x' }), status: 422, invalid: true });
  await s.run({ method: 'PUT', url: `/v1/groups/update?id=${group}`, ...json({ fname: 'Conformance 2' }), status: 200 });
  await s.run({
    method: 'PATCH',
    url: `/v1/groups/update?id=${group}`,
    ...json({ fname: 'Conformance 3' }),
    headers: { ...json({}).headers, ...XML },
    status: 200,
  });
  await s.run({
    method: 'POST',
    url: `/v1/groups/add-contacts?id=${group}`,
    ...form(`PhoneNumberIds[]=${contact}&PhoneNumberIds[]=${demo.contact}`),
    status: 200,
  });
  await s.run({ method: 'POST', url: `/v1/groups/add-contacts?id=${group}`, ...json({ PhoneNumberIds: [] }), status: 422, invalid: true });
  await s.run({
    method: 'POST',
    url: `/v1/groups/remove-contacts?id=${group}`,
    ...form(`PhoneNumberIds[]=${contact}`),
    headers: { ...form('').headers, ...XML },
    status: 200,
  });
  await s.run({ method: 'POST', url: `/v1/groups/remove-contacts?id=${UNUSED}`, ...json({ PhoneNumberIds: [contact] }), status: 404 });

  // Custom fields and their values.
  const field = await s.create({
    method: 'POST',
    url: '/v1/custom-contact-fields/create',
    ...json({ fname: 'Conformance field' }),
    status: 201,
  });
  await s.run({
    method: 'PUT',
    url: `/v1/custom-contact-fields/update?id=${field}`,
    ...form('fname=Renamed+field'),
    headers: { ...form('').headers, ...XML },
    status: 200,
  });
  await s.run({ method: 'PATCH', url: `/v1/custom-contact-fields/update?id=${field}`, ...json({ fname: 'Renamed again' }), status: 200 });
  await s.run({ method: 'POST', url: '/v1/custom-contact-fields/create', ...json({}), status: 422, invalid: true });
  const entry = await s.create({
    method: 'POST',
    url: '/v1/custom-contact-fields-entry/create',
    ...json({ frfield: field, frcontact: contact, fvalue: 'blue' }),
    status: 201,
  });
  for (const method of ['POST', 'PUT', 'PATCH']) {
    await s.run({
      method,
      url: `/v1/custom-contact-fields-entry/update?id=${entry}`,
      ...form(`frfield=${field}&frcontact=${contact}&fvalue=${method}`),
      status: 200,
    });
  }
  await s.run({
    method: 'POST',
    url: '/v1/custom-contact-fields-entry/create',
    ...json({ frfield: field }),
    headers: { ...json({}).headers, ...XML },
    status: 422,
    invalid: true,
  });
  await s.run({ method: 'DELETE', url: `/v1/custom-contact-fields-entry/delete?id=${entry}`, status: 204 });
  await s.run({ method: 'DELETE', url: `/v1/custom-contact-fields/delete?id=${field}`, status: 204 });

  // Keywords: the XML form has its own element names (Number holds the keyword, ShortCode the number).
  const number = demo.number;
  const keyword = await s.create({
    method: 'POST',
    url: '/v1/keyword/reserve',
    ...json({ Keyword: 'CONFORM', Number: number, AutoreplyMessage: 'Thanks' }),
    status: 201,
  });
  await s.run({
    method: 'POST',
    url: '/v1/keyword/reserve',
    ...form(`Keyword=CONFORMX&Number=${number}`),
    headers: { ...form('').headers, ...XML },
    status: 201,
  });
  await s.run({ method: 'POST', url: '/v1/keyword/reserve', ...json({ Keyword: 'CONFORM', Number: number }), status: 422 });
  await read(s, '/v1/keyword/index', `Number=${number}`, 'Keyword,Number');
  await read(s, '/v1/keyword/view', `id=${keyword}`, 'Id,Number');
  await read(s, '/v1/keyword/check', `Keyword=FREEWORD&Number=${number}`, 'Available', false);
  await s.run({ method: 'GET', url: `/v1/keyword/check?Keyword=ab&Number=${number}`, status: 422, invalid: true });
  await s.run({
    method: 'PUT',
    url: `/v1/keyword/update?id=${keyword}`,
    ...json({ AutoreplyMessage: 'Thanks again' }),
    headers: { ...json({}).headers, ...XML },
    status: 200,
  });
  await s.run({ method: 'PATCH', url: `/v1/keyword/update?id=${keyword}`, ...json({ AutoreplyMessage: 'Thanks once more' }), status: 200 });
  await s.run({ method: 'DELETE', url: `/v1/keyword/delete?id=${keyword}`, status: 204 });

  // Sandbox inbound.
  await s.run({
    method: 'POST',
    url: '/v1/sandbox/inbound',
    ...json({ From: '+1 (555) 123-4567', To: number, Message: 'Hi' }),
    status: 201,
  });
  await s.run({
    method: 'POST',
    url: '/v1/sandbox/inbound',
    ...form(`From=%2B15551234567&To=${number}&Message=Hi`),
    headers: { ...form('').headers, ...XML },
    status: 201,
  });
  await s.run({ method: 'POST', url: '/v1/sandbox/inbound', ...json({}), status: 422, invalid: true });

  // Media: upload, download whole, in part, past the end, in each stored type.
  const png = pngImage(64, 48, (x, y) => [x * 4, y * 5, 128]);
  const upload = (data: Buffer, name: string, extra: Record<string, string> = {}) => {
    const m = multipart([{ name: 'file', filename: name, type: 'application/octet-stream', data }]);
    return { method: 'POST', url: '/v1/media/upload', headers: { 'content-type': m.contentType, ...extra }, body: m.body };
  };
  const media = await s.create({ ...upload(png, 'a.png'), status: 201 });
  const gif = await s.create({ ...upload(gifImage(8, 8), 'b.gif'), status: 201 });
  await s.run({ ...upload(Buffer.from('not an image'), 'c.txt', XML), status: 422 });
  await read(s, '/v1/media/index', '', 'Id,MimeType');
  await read(s, '/v1/media/view', `id=${media}`, 'Size');
  for (const id of [media, gif]) {
    await s.run({ method: 'GET', url: `/v1/media/download?id=${id}`, status: 200 });
    await s.run({ method: 'HEAD', url: `/v1/media/download?id=${id}`, status: 200 });
  }
  await s.run({ method: 'GET', url: `/v1/media/download?id=${media}`, headers: { range: 'bytes=0-9' }, status: 206 });
  await s.run({ method: 'GET', url: `/v1/media/download?id=${media}`, headers: { range: 'bytes=999999-' }, status: 416 });
  await s.run({ method: 'GET', url: `/v1/media/download?id=${media}&_format=xml`, headers: { range: 'bytes=999999-' }, status: 416 });
  await s.run({ method: 'GET', url: `/v1/media/download?id=${UNUSED}`, headers: XML, status: 404 });
  await s.run({ method: 'GET', url: '/v1/media/download', status: 400, invalid: true });

  // MMS templates: MediaIds[] in a form body; update takes any subset.
  const template = await s.create({
    method: 'POST',
    url: '/v1/mms-templates/create',
    ...form(`Name=Conformance&Subject=S&MediaIds[]=${media}&MediaIds[]=${gif}`),
    status: 201,
  });
  await s.run({
    method: 'POST',
    url: '/v1/mms-templates/create',
    ...json({ Name: 'Conformance XML', MediaIds: [String(media)] }),
    headers: { ...json({}).headers, ...XML },
    status: 201,
  });
  await s.run({ method: 'POST', url: '/v1/mms-templates/create', ...json({ Name: 'No media' }), status: 422, invalid: true });
  await s.run({ method: 'PUT', url: `/v1/mms-templates/update?id=${template}`, ...json({ Subject: 'Only the subject' }), status: 200 });
  await s.run({
    method: 'PATCH',
    url: `/v1/mms-templates/update?id=${template}`,
    ...form(`MediaIds[]=${gif}`),
    headers: { ...form('').headers, ...XML },
    status: 200,
  });
  await s.run({ method: 'PATCH', url: `/v1/mms-templates/update?id=${template}`, ...json({ Name: 'x' }), status: 422, invalid: true });
  await read(s, '/v1/mms-templates/index', '', 'Id,MediaIds');
  await read(s, '/v1/mms-templates/view', `id=${template}`, 'MediaIds');
  await s.run({
    method: 'POST',
    url: '/v1/sms/send',
    ...json({ MobilePhone: '+1 202 555 0180', Type_Id: 2, MmsTemplateId: template }),
    status: 201,
  });
  await s.run({ method: 'DELETE', url: `/v1/mms-templates/delete?id=${template}`, status: 204 });
  await s.run({ method: 'DELETE', url: `/v1/media/delete?id=${gif}`, status: 204 });

  // Webhooks: Events[] in a form body.
  const hook = await s.create({
    method: 'POST',
    url: '/v1/webhooks/create',
    ...form('Url=https%3A%2F%2Fexample.com%2Fhook&Events[]=message.received&Events[]=message.sent'),
    status: 201,
  });
  await s.run({
    method: 'POST',
    url: '/v1/webhooks/create',
    ...json({ Url: 'https://example.com/x', Events: ['message.sent'] }),
    headers: { ...json({}).headers, ...XML },
    status: 201,
  });
  await s.run({ method: 'POST', url: '/v1/webhooks/create', ...json({ Url: 'ftp://example.com/x', Events: ['nope'] }), status: 422 });
  await s.run({ method: 'PUT', url: `/v1/webhooks/update?id=${hook}`, ...json({ Active: 1 }), status: 200 });
  await s.run({
    method: 'PATCH',
    url: `/v1/webhooks/update?id=${hook}`,
    ...form('Events[]=message.received'),
    headers: { ...form('').headers, ...XML },
    status: 200,
  });
  await s.run({
    method: 'POST',
    url: '/v1/sandbox/inbound',
    ...json({ From: '+15557654321', To: number, Message: 'For the hook' }),
    status: 201,
  });
  await read(s, '/v1/webhooks/index', '', 'Id,Events');
  await read(s, '/v1/webhooks/view', `id=${hook}`, 'Events');
  await read(s, '/v1/webhooks/deliveries', `id=${hook}`, 'Status,LastStatusCode');
  const deliveries = JSON.parse((await s.run({ method: 'GET', url: `/v1/webhooks/deliveries?id=${hook}`, status: 200 })).body) as Json[];
  await s.run({ method: 'POST', url: `/v1/webhooks/redeliver?id=${deliveries[0]!.Id}`, status: 200 });
  await s.run({ method: 'POST', url: `/v1/webhooks/redeliver?id=${deliveries[0]!.Id}`, headers: XML, status: 200 });
  await s.run({ method: 'POST', url: `/v1/webhooks/redeliver?id=${UNUSED}`, status: 404 });
  await s.run({ method: 'DELETE', url: `/v1/webhooks/delete?id=${hook}`, status: 204 });

  // Keys (API.md §15.2), people (§15.3) and the audit log (§15.5); a 403 for a scope the key lacks.
  const key = await s.create({
    method: 'POST',
    url: '/v1/keys/create',
    ...json({ Name: 'conformance', Scopes: ['contacts:read'], AllowedIps: ['192.0.2.0/24'], DateExpires: '2099-01-01 00:00:00' }),
    status: 201,
  });
  await s.run({
    method: 'POST',
    url: '/v1/keys/create',
    ...form('Name=form&Scopes[]=credits:read'),
    headers: { ...form('').headers, ...XML },
    status: 201,
  });
  await s.run({ method: 'POST', url: '/v1/keys/create', ...json({ Name: '', Scopes: ['nope'] }), status: 422 });
  await s.run({ method: 'PUT', url: `/v1/keys/update?id=${key}`, ...json({ Name: 'renamed' }), status: 200 });
  await s.run({ method: 'PATCH', url: `/v1/keys/update?id=${key}`, ...json({ DateExpires: null, AllowedIps: [] }), status: 200 });
  const rolled = await s.run({ method: 'POST', url: `/v1/keys/roll?id=${key}`, ...json({ GraceSeconds: 60 }), status: 200 });
  const reader = (JSON.parse(rolled.body) as { Secret: string }).Secret;
  await s.run({ method: 'GET', url: `/v1/groups/index?access_token=${reader}`, token: false, status: 403 });
  await read(s, '/v1/keys/index', '', 'Id,Scopes');
  await read(s, '/v1/keys/view', `id=${key}`, 'AllowedIps');
  await s.run({ method: 'DELETE', url: `/v1/keys/delete?id=${key}`, status: 204 });
  const person = await s.create({
    method: 'POST',
    url: '/v1/users/create',
    ...json({ Email: 'conformance@example.com', Name: 'Conformance', Role: 'viewer' }),
    status: 201,
  });
  await s.run({ method: 'POST', url: '/v1/users/create', ...json({ Email: 'not an email' }), status: 422 });
  await s.run({ method: 'PUT', url: `/v1/users/update?id=${person}`, ...json({ Name: 'C' }), status: 200 });
  await s.run({
    method: 'PATCH',
    url: `/v1/users/update?id=${person}`,
    ...form('Role=member'),
    headers: { ...form('').headers, ...XML },
    status: 200,
  });
  await s.run({ method: 'POST', url: `/v1/users/reset?id=${person}`, status: 200 });
  await read(s, '/v1/users/index', '', 'Id,Role');
  await read(s, '/v1/users/view', `id=${person}`, 'Email,TwoFactor');
  await s.run({ method: 'DELETE', url: `/v1/users/delete?id=${person}`, status: 204 });
  await read(s, '/v1/audit/index', 'Operation=keys.create', 'Id,Operation');
  await s.run({ method: 'GET', url: '/v1/audit/index?from=never', status: 422 });

  // Sub-accounts (API.md §16.1): every operation, JSON, XML and a form, with its 422s.
  const sub = await s.create({
    method: 'POST',
    url: '/v1/subaccounts/create',
    ...json({ Name: 'Conformance', Credits: 5, MaxPerDay: 100 }),
    status: 201,
  });
  await s.run({
    method: 'POST',
    url: '/v1/subaccounts/create',
    ...form('Name=Form'),
    headers: { ...form('').headers, ...XML },
    status: 201,
  });
  await s.run({ method: 'POST', url: '/v1/subaccounts/create', ...json({ Name: '', Credits: -1 }), status: 422, invalid: true });
  await read(s, '/v1/subaccounts/index', '', 'Id,Status');
  await read(s, '/v1/subaccounts/view', `id=${sub}`, 'AvailableCredits');
  await s.run({ method: 'PUT', url: `/v1/subaccounts/update?id=${sub}`, ...json({ Name: 'Renamed', MaxPerSecond: 10 }), status: 200 });
  await s.run({ method: 'PATCH', url: `/v1/subaccounts/update?id=${sub}`, ...json({ Status: 'suspended' }), status: 200 });
  await s.run({ method: 'PATCH', url: `/v1/subaccounts/update?id=${sub}`, ...json({ Status: 'gone' }), status: 422 });
  await s.run({ method: 'POST', url: `/v1/subaccounts/credits?id=${sub}`, ...json({ Amount: 3 }), status: 200 });
  await s.run({
    method: 'POST',
    url: `/v1/subaccounts/credits?id=${sub}`,
    ...form('Amount=-2'),
    headers: { ...form('').headers, ...XML },
    status: 200,
  });
  await s.run({ method: 'POST', url: `/v1/subaccounts/credits?id=${sub}`, ...json({ Amount: 0 }), status: 422 });
  await s.run({ method: 'POST', url: `/v1/subaccounts/keys?id=${sub}`, ...json({ Name: 'child', Scopes: ['sms:write'] }), status: 201 });
  await s.run({ method: 'POST', url: `/v1/subaccounts/users?id=${sub}`, ...json({ Email: 'child-owner@example.com' }), status: 201 });
  const held = JSON.parse((await s.run({ method: 'GET', url: '/v1/numbers/index?per-page=100', status: 200 })).body) as Json[];
  // The last Active number: the first one holds this run's keywords, which tie it to the account.
  const movable = String(held.filter((n) => n.Status_Id === 0).at(-1)!.Number);
  await s.run({ method: 'POST', url: `/v1/subaccounts/numbers?id=${sub}`, ...json({ Number: movable }), status: 200 });
  await s.run({ method: 'POST', url: `/v1/subaccounts/numbers?id=${sub}`, ...json({ Number: movable }), status: 422 });
  await s.run({ method: 'DELETE', url: `/v1/subaccounts/numbers?id=${sub}`, ...json({ Number: movable }), status: 204 });
  await read(s, '/v1/subaccounts/usage', 'from=2020-01-01%2000:00:00', 'Id,Outbound');
  await s.run({ method: 'GET', url: '/v1/subaccounts/usage?from=never', status: 422 });
  await s.run({ method: 'DELETE', url: `/v1/subaccounts/delete?id=${sub}`, status: 204 });
  await s.run({ method: 'DELETE', url: `/v1/subaccounts/delete?id=${UNUSED}`, status: 404 });

  // Deletes of the rest.
  await s.run({ method: 'DELETE', url: `/v1/groups/delete?id=${group}`, headers: XML, status: 204 });
  await s.run({ method: 'DELETE', url: `/v1/contacts/delete?id=${contact}`, status: 204 });
  // contacts/erase (API.md §10.2.1): a demo contact with its history, a number never seen, and the bad numbers.
  await s.run({ method: 'DELETE', url: `/v1/contacts/erase?number=${demo.contactNumber}`, status: 204 });
  await s.run({ method: 'DELETE', url: '/v1/contacts/erase?number=%2B1%20312%20555%200100', headers: XML, status: 204 });
  await s.run({ method: 'DELETE', url: '/v1/contacts/erase?number=abc', status: 422 });
  await s.run({ method: 'DELETE', url: '/v1/contacts/erase?number=', headers: XML, status: 422 });
  await s.run({ method: 'DELETE', url: '/v1/contacts/erase', status: 400, invalid: true });
  await s.run({ method: 'DELETE', url: `/v1/media/delete?id=${media}`, status: 204 });
  await s.run({ method: 'DELETE', url: `/v1/media/delete?id=${UNUSED}`, headers: XML, status: 404 });
}

async function world(t: { after(fn: () => unknown): void }, env: Record<string, string> = {}): Promise<World> {
  const ctx = await buildTestApp(t, env);
  const demo = await ctx.seed();
  const member = demo.contacts.find((c) => c.GroupIds.length > 0)!;
  const entry = demo.customFieldEntries[0]!;
  return {
    ctx,
    token: demo.token,
    ids: {
      contact: member.Id,
      contactNumber: member.Number,
      group: demo.groups[0]!.Id,
      group2: demo.groups[1]!.Id,
      field: entry.CustomFieldId,
      entry: entry.Id,
      number: demo.numbers.find((n) => n.Status_Id === 0)!.Number,
    },
  };
}

/** The document the app serves. */
async function servedDocument(ctx: TestApp): Promise<Json> {
  return JSON.parse((await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).body) as Json;
}

/** Validates every exchange: violations of exchanges that must conform, and invalid requests the document missed. */
function audit(conformance: Conformance, exchanges: readonly Recorded[]): string[] {
  const problems: string[] = [];
  for (const ex of exchanges) {
    const { request, response } = conformance.check(ex);
    const label = `${ex.request.method} ${ex.request.url.replace(/access_token=[^&]*&?/, '').slice(0, 120)} → ${ex.response.statusCode}`;
    if (ex.request.invalid === true) {
      if (request.length === 0) problems.push(`${label}: the request breaks the server's rules but the document allows it`);
    } else if (ex.request.invalid !== false) {
      for (const v of request) problems.push(`${label}: request: ${v}`);
    }
    for (const v of response) problems.push(`${label}: response: ${v}`);
  }
  return problems;
}

storeTest('openapi conformance: every operation, recorded and validated against the served document', async (t) => {
  const w = await world(t, { MSGSVC_LINK_DOMAIN: 'https://go.example.test' });
  const doc = await servedDocument(w.ctx);
  const s = new Session(w);
  await replayAll(s);
  assert.deepEqual(s.failures, [], 'the cases answer the statuses they are written for');
  const problems = audit(new Conformance(doc), s.exchanges);
  assert.deepEqual(problems, [], `${problems.length} violations:\n${problems.join('\n')}`);

  // Coverage: every documented operation answered a success at least once, and its errors too.
  const succeeded = new Set<string>();
  const answered = new Map<string, Set<string>>();
  for (const ex of s.exchanges) {
    const url = new URL(ex.request.url, 'http://localhost');
    const op = doc.paths[url.pathname]?.[ex.request.method.toLowerCase()] as Json | undefined;
    if (!op) continue;
    if (ex.response.statusCode < 300) succeeded.add(op.operationId);
    (answered.get(op.operationId) ?? answered.set(op.operationId, new Set()).get(op.operationId)!).add(String(ex.response.statusCode));
  }
  const all = Object.values(doc.paths as Json).flatMap((item) =>
    Object.values(item as Json).map((op) => (op as Json).operationId as string),
  );
  assert.ok(all.length >= 70, `${all.length} operations`);
  assert.deepEqual(
    all.filter((id) => !succeeded.has(id)),
    [],
    'operations never answered with a success',
  );
  const statuses = new Set([...answered.values()].flatMap((set) => [...set]));
  for (const status of ['200', '201', '204', '206', '400', '401', '404', '406', '409', '413', '414', '415', '416', '422'])
    assert.ok(statuses.has(status), `no exchange answered ${status}`);
  assert.ok(
    s.exchanges.some((ex) => ex.response.statusCode === 405),
    'a 405',
  );
  assert.ok(
    s.exchanges.some((ex) => ex.response.headers['idempotent-replayed'] === 'true' && ex.response.statusCode === 422),
    'a replayed 422',
  );
  assert.ok(
    s.exchanges.some((ex) => String(ex.response.headers['content-type']).startsWith('image/gif')),
    'a GIF download',
  );
});

storeTest('openapi conformance: 429 with its headers, in JSON and XML', async (t) => {
  const w = await world(t, { MSGSVC_RATE_LIMIT: '2', MSGSVC_RATE_WINDOW: '60' });
  const doc = await servedDocument(w.ctx);
  const s = new Session(w);
  await s.run({ method: 'GET', url: '/v1/credits/balance', status: 200 });
  await s.run({ method: 'HEAD', url: '/v1/credits/balance', status: 200 });
  await s.run({ method: 'GET', url: '/v1/credits/balance', status: 429 });
  await s.run({ method: 'GET', url: '/v1/contacts/view?id=1', headers: XML, status: 429 });
  await s.run({ method: 'HEAD', url: '/v1/numbers/index', status: 429 });
  await s.run({ method: 'POST', url: '/v1/sms/send', ...json({}), status: 429 });
  assert.deepEqual(s.failures, []);
  const problems = audit(new Conformance(doc), s.exchanges);
  assert.deepEqual(problems, [], problems.join('\n'));
});

storeTest('openapi conformance: a wrong document is caught', async (t) => {
  const w = await world(t);
  const doc = await servedDocument(w.ctx);
  const s = new Session(w);
  await replayAll(s);
  const violations = (mutate: (d: Json) => void): string[] => {
    const copy = structuredClone(doc);
    mutate(copy);
    return audit(new Conformance(copy), s.exchanges);
  };
  assert.deepEqual(
    violations(() => {}),
    [],
    'the document as served conforms',
  );

  // mms-templates/update requiring Name and MediaIds again: the partial updates break it.
  const nameRequired = violations((d) => {
    d.components.schemas.MmsTemplateUpdateBody.required = ['Name', 'MediaIds'];
  });
  assert.ok(
    nameRequired.some((v) => v.includes('/v1/mms-templates/update') && v.includes("must have required property 'Name'")),
    nameRequired.join('\n'),
  );

  // A record requiring every property: the fields= answers break it.
  const allRequired = violations((d) => {
    d.components.schemas.Contact.required = Object.keys(d.components.schemas.Contact.properties);
  });
  assert.ok(
    allRequired.some((v) => v.includes('fields=Id,GroupIds') && v.includes('must have required property')),
    allRequired.join('\n'),
  );

  // An array field without xml.wrapped: the XML of contacts breaks it.
  const unwrapped = violations((d) => {
    delete d.components.schemas.Contact.properties.GroupIds.xml;
  });
  assert.ok(
    unwrapped.some((v) => v.includes('/v1/contacts/') && v.includes('without xml.wrapped')),
    unwrapped.join('\n'),
  );

  // The keyword reservation's XML described with the JSON names: the XML answers break it.
  const jsonNames = violations((d) => {
    d.components.schemas.KeywordReservationXml = d.components.schemas.KeywordReservation;
  });
  assert.ok(
    jsonNames.some((v) => v.includes('/v1/keyword/') && v.includes('XML body')),
    jsonNames.join('\n'),
  );

  // A form array without its brackets: the MediaIds[] form bodies break it.
  const noBrackets = violations((d) => {
    const media = d.paths['/v1/mms-templates/create'].post.requestBody.content['application/x-www-form-urlencoded'];
    media.schema.properties.MediaIds = media.schema.properties['MediaIds[]'];
    delete media.schema.properties['MediaIds[]'];
    media.schema.required = ['Name', 'MediaIds'];
    delete media.encoding;
  });
  assert.ok(
    noBrackets.some((v) => v.includes('/v1/mms-templates/create') && v.includes('MediaIds')),
    noBrackets.join('\n'),
  );

  // media/download declared as application/octet-stream again.
  const octets = violations((d) => {
    for (const status of ['200', '206'])
      d.paths['/v1/media/download'].get.responses[status].content = { 'application/octet-stream': { schema: { type: 'string' } } };
  });
  assert.ok(
    octets.some((v) => v.includes('/v1/media/download') && v.includes('Content-Type image/png is not declared')),
    octets.join('\n'),
  );

  // Vary left off the error responses, 414 undeclared.
  const noVary = violations((d) => {
    delete d.components.responses.NotFound.headers.Vary;
    for (const item of Object.values(d.paths as Json)) for (const op of Object.values(item as Json)) delete (op as Json).responses['414'];
  });
  assert.ok(
    noVary.some((v) => v.includes('→ 404') && v.includes('header vary is not declared')),
    noVary.join('\n'),
  );
  assert.ok(
    noVary.some((v) => v.includes('→ 414') && v.includes('status 414 is not declared')),
    noVary.join('\n'),
  );
});
