import type { TSchema } from '@sinclair/typebox';
import type { Method, Operation } from './operation.ts';
import { ErrorBodySchema, ValidationErrorsSchema } from '../records/common.ts';
import * as contacts from '../records/contacts.ts';
import * as credits from '../records/credits.ts';
import * as customFields from '../records/custom-fields.ts';
import * as groups from '../records/groups.ts';
import * as keywords from '../records/keywords.ts';
import * as media from '../records/media.ts';
import * as messages from '../records/messages.ts';
import * as numbers from '../records/numbers.ts';
import * as scheduled from '../records/scheduled-messages.ts';
import * as webhooks from './routes/webhooks/schemas.ts';

/**
 * The OpenAPI 3.1 document of the API, built from the operation descriptors (src/http/operation.ts)
 * and served at `GET /openapi.json`; `npm run openapi` writes it to docs/openapi.json.
 *
 * It is built here rather than by @fastify/swagger's dynamic mode: the query and body schemas are
 * documentation only and never reach Fastify's routes (validation and its exact Yii2 messages
 * belong to the domain), and the error responses, media types and headers come from CONVENTIONS,
 * not from anything Fastify knows. So the descriptors are the one source, read directly.
 *
 * Components: every TypeBox schema exported from src/records/* is a component, named after
 * the spec's record (`Number`, `Group`, `CustomField`, `CustomFieldValue`, `CreditBalance`,
 * `ScheduledSingleMessage`, `KeywordReservation`, `Contact`), or after its export less `RecordSchema` /
 * `Schema` (`Message`, `Batch`, `ImportReport`, …), or its `title` when it has one. A schema used
 * by an operation that no module exports here is written inline: a new record module adds one
 * import line below to get its own component.
 */

type Json = Record<string, unknown>;

const SCHEMA_MODULES: readonly Record<string, unknown>[] = [numbers, credits, scheduled, contacts, groups, customFields, keywords, messages, media, webhooks];

/** Export name → the spec's record name, where the two differ. */
const SPEC_NAMES: Readonly<Record<string, string>> = {
  ScheduledMessageRecordSchema: 'ScheduledSingleMessage',
};

const ERROR = 'Error';
const VALIDATION_ERRORS = 'ValidationErrors';
const VALIDATION_ERROR = 'ValidationError';

const JSON_MEDIA = 'application/json';
const XML_MEDIA = 'application/xml';
const FORM_MEDIA = 'application/x-www-form-urlencoded';

/** A TypeBox schema as plain JSON Schema (TypeBox's symbol keys dropped). */
function plain(schema: TSchema): Json {
  return JSON.parse(JSON.stringify(schema)) as Json;
}

function isSchema(value: unknown): value is TSchema {
  return typeof value === 'object' && value !== null && Symbol.for('TypeBox.Kind') in value;
}

function componentName(exportName: string, schema: Json): string {
  if (typeof schema.title === 'string') return schema.title.replace(/[^A-Za-z0-9_.-]/g, '');
  return SPEC_NAMES[exportName] ?? exportName.replace(/(Record)?Schema$/, '');
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The named schemas: canonical JSON text → component name, and the components themselves. */
function collectComponents(): { byText: Map<string, string>; schemas: Record<string, Json> } {
  const byText = new Map<string, string>();
  const raw: [string, Json][] = [];
  const add = (name: string, schema: Json) => {
    const text = JSON.stringify(schema);
    if (byText.has(text)) return;
    byText.set(text, name);
    raw.push([name, schema]);
  };
  add(ERROR, plain(ErrorBodySchema));
  add(VALIDATION_ERROR, plain(ValidationErrorsSchema).items as Json);
  for (const mod of SCHEMA_MODULES) {
    for (const [exportName, value] of Object.entries(mod)) {
      if (!exportName.endsWith('Schema') || !isSchema(value)) continue;
      const schema = plain(value);
      if (schema.type !== 'object') continue;
      add(componentName(exportName, schema), schema);
    }
  }
  const schemas: Record<string, Json> = {};
  for (const [name, schema] of raw) {
    // A component refers to the other components it holds (a Custom field's Value entries).
    const properties = Object.fromEntries(Object.entries((schema.properties ?? {}) as Record<string, Json>).map(([k, v]) => [k, named(v, byText)]));
    schemas[name] = { ...schema, ...(schema.properties ? { properties } : {}) };
  }
  schemas[ERROR] = { ...schemas[ERROR], description: 'CONVENTIONS §2 error body: `name` is the reason phrase of `status`; `code` is 0.', xml: { name: 'response' } };
  schemas[VALIDATION_ERROR] = { ...schemas[VALIDATION_ERROR], xml: { name: 'item' } };
  schemas[VALIDATION_ERRORS] = {
    type: 'array',
    description: 'CONVENTIONS §3 422 body: the first error of each field, in rule order (not wrapped in name/code/status).',
    items: ref(VALIDATION_ERROR),
    xml: { name: 'response', wrapped: true },
  };
  return { byText, schemas };
}

/** `schema` with every sub-schema that is a component replaced by its $ref. */
function named(schema: Json, byText: Map<string, string>): Json {
  const name = byText.get(JSON.stringify(schema));
  if (name) return ref(name);
  if (schema.type === 'array' && schema.items && typeof schema.items === 'object') return { ...schema, items: named(schema.items as Json, byText) };
  if (schema.type === 'object' && schema.properties) {
    return { ...schema, properties: Object.fromEntries(Object.entries(schema.properties as Record<string, Json>).map(([k, v]) => [k, named(v, byText)])) };
  }
  return schema;
}

/** The XML form of a response schema: `<response>` holding the record's fields, or one `<item>` per record. */
function xmlForm(schema: Json): Json {
  if (schema.type === 'array') return { type: 'array', items: { ...(schema.items as Json), xml: { name: 'item' } }, xml: { name: 'response', wrapped: true } };
  return { ...schema, xml: { name: 'response' } };
}

const header = (description: string, schema: Json = { type: 'integer' }) => ({ description, schema });

const HEADERS: Record<string, Json> = {
  'X-Rate-Limit-Limit': header('Requests allowed per window (CONVENTIONS §8).'),
  'X-Rate-Limit-Remaining': header('Requests left in this window after this one.'),
  'X-Rate-Limit-Reset': header('Whole seconds until the allowance is full again.'),
  'X-Pagination-Total-Count': header('Records in the whole list (CONVENTIONS §7).'),
  'X-Pagination-Page-Count': header('Pages: ceil(total / per-page), 0 when the list is empty.'),
  'X-Pagination-Current-Page': header('The page served (1 when the list is empty).'),
  'X-Pagination-Per-Page': header('The effective page size.'),
  Link: header('`<absolute URL>; rel=NAME` entries joined by `, `: self, then first/prev, next/last when they exist. Follow rel=next to read the whole list.', { type: 'string' }),
  Location: header('`<scheme>://<host>/v1/<controller>/view?id=<Id>` of the created record.', { type: 'string', format: 'uri' }),
  'Retry-After': header('Seconds to wait before retrying.'),
  Allow: header('The methods this path answers.', { type: 'string' }),
  Vary: header('Always `Accept`.', { type: 'string' }),
  'X-Request-Id': header('The request id: the incoming `X-Request-Id` when it is 1 to 200 visible ASCII characters, else a new one; also in the log line.', { type: 'string' }),
  'Idempotent-Replayed': header('`true` when the response is the replay of an earlier request with the same Idempotency-Key.', { type: 'string', enum: ['true'] }),
};
const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });
const REQUEST_ID = { 'X-Request-Id': headerRef('X-Request-Id') };
const RATE_HEADERS = { 'X-Rate-Limit-Limit': headerRef('X-Rate-Limit-Limit'), 'X-Rate-Limit-Remaining': headerRef('X-Rate-Limit-Remaining'), 'X-Rate-Limit-Reset': headerRef('X-Rate-Limit-Reset') };
const PAGE_HEADERS = {
  'X-Pagination-Total-Count': headerRef('X-Pagination-Total-Count'),
  'X-Pagination-Page-Count': headerRef('X-Pagination-Page-Count'),
  'X-Pagination-Current-Page': headerRef('X-Pagination-Current-Page'),
  'X-Pagination-Per-Page': headerRef('X-Pagination-Per-Page'),
  Link: headerRef('Link'),
};

const errorContent = (schema: string, xml = true) => ({
  [JSON_MEDIA]: { schema: ref(schema) },
  ...(xml ? { [XML_MEDIA]: { schema: ref(schema) } } : {}),
});

/** The error responses of CONVENTIONS §2–3 and API-EXTENSIONS §1, by status. */
const ERROR_RESPONSES: Record<string, Json> = {
  '400': { description: 'Bad Request: a required query parameter is missing (`Missing required parameters: id`), `id` is not an integer, the JSON body is invalid, or the Idempotency-Key is malformed.', headers: RATE_HEADERS, content: errorContent(ERROR) },
  '401': { description: 'Unauthorized: `Your request was made with invalid credentials.` (access_token missing, unknown or revoked).', content: errorContent(ERROR) },
  '404': { description: 'Not Found: `Object not found: {id}` (missing, or owned by another account).', headers: RATE_HEADERS, content: errorContent(ERROR) },
  '405': { description: 'Method Not Allowed, with `Allow`.', headers: { Allow: headerRef('Allow') }, content: errorContent(ERROR) },
  '406': { description: 'Not Acceptable: `Accept` or `_format` names neither JSON nor XML (always a JSON body).', content: errorContent(ERROR, false) },
  '409': { description: 'Conflict: the Idempotency-Key was used with a different request, or its first request is still running.', headers: RATE_HEADERS, content: errorContent(ERROR) },
  '413': { description: 'Request Entity Too Large: the body is over the limit.', content: errorContent(ERROR) },
  '415': { description: 'Unsupported Media Type: a body whose Content-Type this operation does not read.', headers: RATE_HEADERS, content: errorContent(ERROR) },
  '422': { description: 'Data Validation Failed: the first error of each field.', headers: RATE_HEADERS, content: errorContent(VALIDATION_ERRORS) },
  '429': { description: 'Too Many Requests: `Rate limit exceeded.`', headers: { ...RATE_HEADERS, 'Retry-After': headerRef('Retry-After') }, content: errorContent(ERROR) },
  '500': { description: 'Internal Server Error: `An internal server error occurred.`', content: errorContent(ERROR) },
};
const ERROR_NAMES: Record<string, string> = {
  '400': 'BadRequest',
  '401': 'Unauthorized',
  '404': 'NotFound',
  '405': 'MethodNotAllowed',
  '406': 'NotAcceptable',
  '409': 'Conflict',
  '413': 'PayloadTooLarge',
  '415': 'UnsupportedMediaType',
  '422': 'ValidationFailed',
  '429': 'TooManyRequests',
  '500': 'InternalServerError',
};

/** The error statuses an operation can answer (CONVENTIONS §1–2, API-EXTENSIONS §1). */
function errorStatuses(op: Operation): string[] {
  const query = (op.schema.query as Json | undefined)?.properties as Record<string, unknown> | undefined;
  const hasBody = op.body.kind !== 'none';
  const statuses = ['400', '401'];
  if (query && 'id' in query) statuses.push('404');
  statuses.push('405', '406');
  if (op.idempotent) statuses.push('409');
  if (hasBody) statuses.push('413', '415');
  const filters = query ? Object.keys(query).filter((k) => k !== 'id' && k !== 'page' && k !== 'per-page') : [];
  if (hasBody || filters.length > 0) statuses.push('422');
  statuses.push('429', '500');
  return statuses;
}

/** `credits/balance` sends the pagination headers of a one-item list (CONVENTIONS §7). */
function paginated(op: Operation, response: Json | undefined): boolean {
  if (op.id === 'credits.balance') return true;
  return op.methods.includes('GET') && response?.type === 'array';
}

function successResponse(op: Operation, byText: Map<string, string>): Json {
  const schema = op.schema.response ? named(plain(op.schema.response), byText) : undefined;
  const headers: Json = { ...REQUEST_ID, ...RATE_HEADERS, Vary: headerRef('Vary') };
  if (paginated(op, op.schema.response ? plain(op.schema.response) : undefined)) Object.assign(headers, PAGE_HEADERS);
  if (op.idempotent) headers['Idempotent-Replayed'] = headerRef('Idempotent-Replayed');
  if (op.success === 204) return { description: 'No Content: done, with an empty body.', headers };
  if (op.success === 201 && op.location) headers.Location = headerRef('Location');
  const description = op.success === 201 ? 'Created' : 'OK';
  if (op.produces === 'bytes') return { description, headers, content: { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } };
  const body = schema ?? {};
  return { description, headers, content: { [JSON_MEDIA]: { schema: body }, [XML_MEDIA]: { schema: xmlForm(body) } } };
}

function requestBody(op: Operation, byText: Map<string, string>): Json | undefined {
  const schema = op.schema.body ? named(plain(op.schema.body), byText) : undefined;
  switch (op.body.kind) {
    case 'none':
      return undefined;
    case 'json-or-form': {
      const body = schema ?? { type: 'object' };
      return { required: false, content: { [JSON_MEDIA]: { schema: body }, [FORM_MEDIA]: { schema: body } } };
    }
    case 'csv':
      return { required: true, content: { 'text/csv': { schema: schema ?? { type: 'string', description: 'UTF-8 CSV; the first row names the columns.' } } } };
    case 'multipart':
      return {
        required: true,
        content: { 'multipart/form-data': { schema: schema ?? { type: 'object', properties: { file: { type: 'string', contentMediaType: 'application/octet-stream' } } } } },
      };
  }
}

function parameters(op: Operation): Json[] {
  const query = op.schema.query ? plain(op.schema.query) : undefined;
  const required = new Set((query?.required as string[] | undefined) ?? []);
  const params: Json[] = Object.entries((query?.properties ?? {}) as Record<string, Json>).map(([name, schema]) => {
    const { description, ...rest } = schema;
    return { name, in: 'query', required: required.has(name), ...(description ? { description } : {}), schema: rest };
  });
  params.push({ $ref: '#/components/parameters/format' });
  if (op.produces === 'record') params.push({ $ref: '#/components/parameters/fields' });
  if (op.idempotent) params.push({ $ref: '#/components/parameters/IdempotencyKey' });
  return params;
}

function tagOf(op: Operation, controllers: Readonly<Record<string, readonly Operation[]>>): string {
  for (const [name, ops] of Object.entries(controllers)) if (ops.includes(op)) return name;
  return op.path.split('/')[2] ?? 'v1';
}

/** `groups.update` for the first method, `groups.update.patch` for the others (operationIds are unique). */
function operationId(op: Operation, method: Method, index: number): string {
  return index === 0 ? op.id : `${op.id}.${method.toLowerCase()}`;
}

export interface OpenApiOptions {
  /** The API's version (package.json). */
  version: string;
  /** The controllers of the registry, for the tags (CONTROLLERS). */
  controllers: Readonly<Record<string, readonly Operation[]>>;
}

/** The OpenAPI 3.1 document of `operations` (the operations of one configuration, operationsFor). */
export function buildOpenApi(operations: readonly Operation[], options: OpenApiOptions): Json {
  const { byText, schemas } = collectComponents();
  const paths: Record<string, Json> = {};
  const tags: string[] = [];
  for (const op of operations) {
    const tag = tagOf(op, options.controllers);
    if (!tags.includes(tag)) tags.push(tag);
    const body = requestBody(op, byText);
    const responses: Json = { [String(op.success)]: successResponse(op, byText) };
    for (const status of errorStatuses(op)) responses[status] = { $ref: `#/components/responses/${ERROR_NAMES[status]}` };
    const item: Json = (paths[op.path] ??= {});
    op.methods.forEach((method, index) => {
      item[method.toLowerCase()] = {
        operationId: operationId(op, method, index),
        summary: op.summary,
        tags: [tag],
        ...(method === 'GET' ? { description: 'Also answers HEAD: the same headers, no body.' } : {}),
        parameters: parameters(op),
        ...(body ? { requestBody: body } : {}),
        responses,
      };
    });
  }
  const probe = (summary: string, properties: Json) => ({
    operationId: summary === 'Liveness' ? 'healthz' : 'readyz',
    summary,
    tags: ['probes'],
    security: [],
    responses: {
      '200': { description: 'OK', content: { [JSON_MEDIA]: { schema: { type: 'object', properties } } } },
      ...(summary === 'Readiness' ? { '503': { description: 'Not ready: the database or Redis is unavailable.', content: { [JSON_MEDIA]: { schema: { type: 'object', properties } } } } } : {}),
    },
  });
  paths['/healthz'] = { get: probe('Liveness', { status: { type: 'string' } }) };
  paths['/readyz'] = { get: probe('Readiness', { status: { type: 'string' }, database: { type: 'string' }, redis: { type: 'string' }, carrier: { type: 'string' } }) };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Messaging Service HTTP API v1',
      version: options.version,
      description:
        'Bulk SMS/MMS messaging: numbers, credits, messages, scheduled messages, contacts, groups, custom fields and keywords. ' +
        'Every response comes in JSON or XML (`Accept`, or `_format=json|xml`). Errors have the body `{name, message, code, status}`; ' +
        'validation errors (422) are a list of `{field, message}`. Integers may be sent quoted (`"12"`); clients should accept both. ' +
        'Lists are paginated with `page` and `per-page` and a `Link` header. See docs/API.md.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/' }],
    security: [{ access_token: [] }],
    tags: [...tags.map((name) => ({ name, description: `/v1/${name}/…` })), { name: 'probes', description: 'Liveness and readiness, without a token.' }],
    paths,
    components: {
      schemas,
      parameters: {
        format: { name: '_format', in: 'query', required: false, description: 'Response format; overrides Accept (CONVENTIONS §4).', schema: { type: 'string', enum: ['json', 'xml'] } },
        fields: { name: 'fields', in: 'query', required: false, description: 'Comma-separated field names to keep in each record (`fields=Id,Name`).', schema: { type: 'string' } },
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description: '1 to 255 visible ASCII characters: the same key and request within 24 hours replays the first response (API-EXTENSIONS §1).',
          schema: { type: 'string', minLength: 1, maxLength: 255 },
        },
      },
      headers: HEADERS,
      responses: Object.fromEntries(
          Object.entries(ERROR_RESPONSES).map(([status, response]) => [ERROR_NAMES[status], { ...response, headers: { ...REQUEST_ID, ...(response.headers as Json | undefined) } }]),
        ),
      securitySchemes: {
        access_token: { type: 'apiKey', in: 'query', name: 'access_token', description: 'The account token (CONVENTIONS §9). Repeated: the last wins.' },
      },
    },
  };
}
