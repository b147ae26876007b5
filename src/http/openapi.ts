import type { TSchema } from '@sinclair/typebox';
import type { Method, Operation } from './operation.ts';
import { ErrorBodySchema, ValidationErrorsSchema } from '../records/common.ts';
import { RECORD_MODULES } from '../records/index.ts';
import { MEDIA_MIME_TYPES } from '../domain/media.ts';

/**
 * The OpenAPI 3.1 document of the API, built from the operation descriptors (src/http/operation.ts)
 * and served at `GET /openapi.json`; `npm run openapi` writes it to docs/openapi.json.
 *
 * It is built here rather than by @fastify/swagger's dynamic mode: the query and body schemas are
 * documentation only and never reach Fastify's routes (validation and its exact Yii2 messages
 * belong to the domain), and the error responses, media types and headers come from API.md,
 * not from anything Fastify knows. So the descriptors are the one source, read directly.
 *
 * Components: every TypeBox object schema exported by a record module (RECORD_MODULES: every
 * module of src/records but the shared ones, in file-name order, so the document is byte-stable
 * and a new resource's records need no registration) is a component, named after API.md's record (`Number`,
 * `Group`, `CustomField`, `CustomFieldValue`, `CreditBalance`, `ScheduledSingleMessage`,
 * `KeywordReservation`, `Contact`), or after its export less `RecordSchema` / `Schema` (`Message`,
 * `Batch`, `ImportReport`, …), or its `title` when it has one. A schema used by an operation that
 * no record module exports is written inline.
 *
 * What the server does beyond the descriptors, and the document says (test/http/openapi-conformance.test.ts
 * replays requests of every operation and validates them and their responses against it):
 * - records in responses have no `required` (`fields=` answers any subset; see responseRecord) and
 *   no other properties; their arrays carry the XML layout (`<GroupIds><item>4</item></GroupIds>`);
 * - a `<Name>XmlSchema` export is the XML form of record `<Name>` (KeywordReservationXml);
 * - form bodies name array fields with `[]` (`MediaIds[]=4&MediaIds[]=7`), encoded exploded;
 * - every GET path has a HEAD operation; every operation can answer 414; `produces: 'bytes'`
 *   answers the stored media's own image type, with `Range` (206, 416); `produces: 'csv'` a
 *   `text/csv` file with `Content-Disposition` (sms/export).
 */

type Json = Record<string, unknown>;

/** Export name → API.md's record name, where the two differ. */
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
  for (const mod of RECORD_MODULES) {
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
    const properties = Object.fromEntries(
      Object.entries((schema.properties ?? {}) as Record<string, Json>).map(([k, v]) => [k, named(v, byText)]),
    );
    schemas[name] = { ...schema, ...(schema.properties ? { properties } : {}) };
  }
  schemas[ERROR] = {
    ...schemas[ERROR],
    description: 'API.md §4 error body: `name` is the reason phrase of `status`; `code` is 0.',
    xml: { name: 'response' },
  };
  schemas[VALIDATION_ERROR] = { ...schemas[VALIDATION_ERROR], xml: { name: 'item' } };
  schemas[VALIDATION_ERRORS] = {
    type: 'array',
    description: 'API.md §4.4 422 body: the first error of each field, in rule order (not wrapped in name/code/status).',
    items: ref(VALIDATION_ERROR),
    xml: { name: 'response', wrapped: true },
  };
  return { byText, schemas };
}

/** `schema` with every sub-schema that is a component replaced by its $ref. */
function named(schema: Json, byText: Map<string, string>): Json {
  const name = byText.get(JSON.stringify(schema));
  if (name) return ref(name);
  if (schema.type === 'array' && schema.items && typeof schema.items === 'object')
    return { ...schema, items: named(schema.items as Json, byText) };
  if (schema.type === 'object' && schema.properties) {
    return {
      ...schema,
      properties: Object.fromEntries(Object.entries(schema.properties as Record<string, Json>).map(([k, v]) => [k, named(v, byText)])),
    };
  }
  return schema;
}

/** `#/components/schemas/Name` → `Name`; undefined for a schema that is no $ref. */
function refName(schema: Json): string | undefined {
  return typeof schema.$ref === 'string' ? schema.$ref.slice(schema.$ref.lastIndexOf('/') + 1) : undefined;
}

function isArray(schema: Json): boolean {
  return schema.type === 'array' || (Array.isArray(schema.type) && schema.type.includes('array'));
}

function mapProperties(schema: Json, fn: (name: string, property: Json) => [string, Json]): Json {
  if (!schema.properties) return schema;
  return { ...schema, properties: Object.fromEntries(Object.entries(schema.properties as Record<string, Json>).map(([k, v]) => fn(k, v))) };
}

/** The components a response schema holds at its top: the record, or the record of each list item. */
function recordsOf(schema: Json | undefined): string[] {
  if (!schema) return [];
  const name = refName(schema);
  if (name !== undefined) return [name];
  return isArray(schema) && schema.items ? recordsOf(schema.items as Json) : [];
}

/** `names` and every component they refer to, at any depth. */
function reachable(names: Iterable<string>, schemas: Record<string, Json>): Set<string> {
  const seen = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (value === null || typeof value !== 'object') return;
    const name = refName(value as Json);
    if (name === undefined) return Object.values(value).forEach(visit);
    if (seen.has(name)) return;
    seen.add(name);
    visit(schemas[name]);
  };
  for (const name of names) visit(ref(name));
  return seen;
}

/**
 * `schema` with each array written as the XML writer writes every array (docs/API.md §2.3): an
 * element named after the field holding one `<item>` per entry (`<GroupIds><item>4</item></GroupIds>`,
 * `<GroupIds/>` when empty).
 */
function xmlArrays(schema: Json): Json {
  if (refName(schema) !== undefined) return schema;
  let out = mapProperties(schema, (k, v) => [k, xmlArrays(v)]);
  if (isArray(schema) && schema.items && typeof schema.items === 'object')
    out = { ...out, items: { ...xmlArrays(schema.items as Json), xml: { name: 'item' } }, xml: { wrapped: true } };
  return out;
}

const FIELDS_NOTE =
  'Every property is sent, in this order, unless `fields=` names some: then only those. So none is `required`, and no other property is ever sent.';

/**
 * A record component as a response carries it. `fields=` (docs/API.md §2.5) keeps any subset of a
 * record's top-level properties, and OpenAPI cannot tie a response schema to a query parameter, so
 * a record that an operation answers with (`top`) lists its properties without `required`, and
 * says so. Chosen over the alternatives because it is what a client generator handles best: one
 * plain model per record (openapi-typescript: optional properties; openapi-generator: a class with
 * nullable fields). A `oneOf` of the full record and a subset is wrong (a full record matches both
 * branches), and an `anyOf` of the two gives TypeScript the same optional properties under a
 * union, other generators a wrapper class, and the client's scripts/records.mjs no record to read.
 * Records only nested in another (ImportError) keep `required`: `fields=` never reaches inside.
 * Every response record is closed (`additionalProperties: false`): the server sends nothing else.
 */
function responseRecord(schema: Json, top: boolean): Json {
  const { required, description, ...rest } = schema;
  const note = top ? [description, FIELDS_NOTE].filter((d) => typeof d === 'string').join(' ') : description;
  return { ...rest, ...(!top && required ? { required } : {}), additionalProperties: false, ...(note ? { description: note } : {}) };
}

/**
 * The XML form of a response schema (docs/API.md §2.3): `<response>` holding the record's fields,
 * or one `<item>` per record. A record whose XML element names differ has its own `<Name>Xml`
 * component (KeywordReservationXml: `Number` holds the keyword, `ShortCode` the number).
 */
function xmlForm(schema: Json, schemas: Record<string, Json>): Json {
  const swap = (s: Json): Json => {
    const name = refName(s);
    return name !== undefined && schemas[`${name}Xml`] ? ref(`${name}Xml`) : s;
  };
  if (isArray(schema))
    return { type: 'array', items: { ...swap(schema.items as Json), xml: { name: 'item' } }, xml: { name: 'response', wrapped: true } };
  return { ...swap(schema), xml: { name: 'response' } };
}

const header = (description: string, schema: Json = { type: 'integer' }, required = false) => ({
  description,
  ...(required ? { required } : {}),
  schema,
});

const HEADERS: Record<string, Json> = {
  'X-Rate-Limit-Limit': header('Requests allowed per window (docs/API.md §6).'),
  'X-Rate-Limit-Remaining': header('Requests left in this window after this one.'),
  'X-Rate-Limit-Reset': header('Whole seconds until the allowance is full again.'),
  'X-Pagination-Total-Count': header('Records in the whole list (docs/API.md §5).'),
  'X-Pagination-Page-Count': header('Pages: ceil(total / per-page), 0 when the list is empty.'),
  'X-Pagination-Current-Page': header('The page served (1 when the list is empty).'),
  'X-Pagination-Per-Page': header('The effective page size.'),
  Link: header(
    '`<absolute URL>; rel=NAME` entries joined by `, `: self, then first/prev, next/last when they exist. Follow rel=next to read the whole list.',
    { type: 'string' },
  ),
  Location: header('`<scheme>://<host>/v1/<controller>/view?id=<Id>` of the created record.', { type: 'string', format: 'uri' }),
  'Retry-After': header('Seconds to wait before retrying.'),
  Allow: header('The methods this path answers.', { type: 'string' }),
  Vary: header('`Accept`: on every response of an operation, errors included, except 414.', { type: 'string', enum: ['Accept'] }),
  'X-Request-Id': header(
    'The request id: the incoming `X-Request-Id` when it is 1 to 200 visible ASCII characters, else a new one; also in the log line.',
    { type: 'string', minLength: 1, maxLength: 200 },
    true,
  ),
  'Idempotent-Replayed': header(
    '`true` when the response is the replay of an earlier request with the same Idempotency-Key (an error below 500 is replayed like a success).',
    { type: 'string', enum: ['true'] },
  ),
  'Accept-Ranges': header('`bytes`: a single `Range: bytes=a-b` is honoured.', { type: 'string', enum: ['bytes'] }),
  'Content-Range': header('`bytes a-b/size` of a 206; `bytes */size` of a 416.', {
    type: 'string',
    pattern: '^bytes (\\d+-\\d+|\\*)/\\d+$',
  }),
  'Content-Length': header('The length of the bytes sent (of the range, on a 206).'),
  'Content-Disposition': header('`attachment; filename="messages.csv"`: a browser saves the file under that name.', {
    type: 'string',
  }),
};
const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });
const REQUEST_ID = { 'X-Request-Id': headerRef('X-Request-Id') };
const VARY = { Vary: headerRef('Vary') };
const REPLAYED = { 'Idempotent-Replayed': headerRef('Idempotent-Replayed') };
const RATE_HEADERS = {
  'X-Rate-Limit-Limit': headerRef('X-Rate-Limit-Limit'),
  'X-Rate-Limit-Remaining': headerRef('X-Rate-Limit-Remaining'),
  'X-Rate-Limit-Reset': headerRef('X-Rate-Limit-Reset'),
};
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

/**
 * The error responses (docs/API.md §4), by status. Every one but 414 comes after routing and
 * carries `Vary: Accept`; those an Idempotency-Key request can get after its key is claimed (400,
 * 404, 413, 415, 416, 422) may be replays.
 */
const ERROR_RESPONSES: Record<string, Json> = {
  '400': {
    description:
      'Bad Request: a required query parameter is missing (`Missing required parameters: id`), `id` is not an integer, the JSON body is invalid, or the Idempotency-Key is malformed.',
    headers: { ...VARY, ...RATE_HEADERS, ...REPLAYED },
    content: errorContent(ERROR),
  },
  '401': {
    description: 'Unauthorized: `Your request was made with invalid credentials.` (access_token missing, unknown or revoked).',
    headers: VARY,
    content: errorContent(ERROR),
  },
  '403': {
    description:
      "Forbidden: `You are not allowed to perform this action.` The credential lacks the operation's scope (`x-scope`), or a request with the session cookie that is not GET or HEAD lacks the right `X-CSRF-Token` (docs/API.md §15).",
    headers: { ...VARY, ...RATE_HEADERS },
    content: errorContent(ERROR),
  },
  '404': {
    description: 'Not Found: `Object not found: {id}` (or the `number` as sent; missing, or owned by another account).',
    headers: { ...VARY, ...RATE_HEADERS, ...REPLAYED },
    content: errorContent(ERROR),
  },
  '405': {
    description: 'Method Not Allowed, with `Allow`.',
    headers: { ...VARY, Allow: headerRef('Allow') },
    content: errorContent(ERROR),
  },
  '406': {
    description: 'Not Acceptable: `Accept` or `_format` names neither JSON nor XML (always a JSON body).',
    headers: VARY,
    content: errorContent(ERROR, false),
  },
  '409': {
    description: 'Conflict: the Idempotency-Key was used with a different request, or its first request is still running.',
    headers: { ...VARY, ...RATE_HEADERS },
    content: errorContent(ERROR),
  },
  '413': {
    description: 'Request Entity Too Large: the body is over the limit.',
    headers: { ...VARY, ...RATE_HEADERS, ...REPLAYED },
    content: errorContent(ERROR),
  },
  '414': {
    description:
      'Request-URI Too Long: the request target (path and query) is over 8,192 bytes. Answered before anything else is read, so always in JSON and without `Vary`.',
    content: errorContent(ERROR, false),
  },
  '415': {
    description: 'Unsupported Media Type: a body whose Content-Type this operation does not read.',
    headers: { ...VARY, ...RATE_HEADERS, ...REPLAYED },
    content: errorContent(ERROR),
  },
  '416': {
    description: 'Range Not Satisfiable: `Requested range not satisfiable.`, the range starts past the end; `Content-Range: bytes */size`.',
    headers: { ...VARY, ...RATE_HEADERS, ...REPLAYED, 'Content-Range': headerRef('Content-Range') },
    content: errorContent(ERROR),
  },
  '422': {
    description: 'Data Validation Failed: the first error of each field.',
    headers: { ...VARY, ...RATE_HEADERS, ...REPLAYED },
    content: errorContent(VALIDATION_ERRORS),
  },
  '429': {
    description: 'Too Many Requests: `Rate limit exceeded.`',
    headers: { ...VARY, ...RATE_HEADERS, 'Retry-After': headerRef('Retry-After') },
    content: errorContent(ERROR),
  },
  '500': {
    description: 'Internal Server Error: `An internal server error occurred.`',
    headers: { ...VARY, ...RATE_HEADERS },
    content: errorContent(ERROR),
  },
};
const ERROR_NAMES: Record<string, string> = {
  '400': 'BadRequest',
  '401': 'Unauthorized',
  '403': 'Forbidden',
  '404': 'NotFound',
  '405': 'MethodNotAllowed',
  '406': 'NotAcceptable',
  '409': 'Conflict',
  '413': 'PayloadTooLarge',
  '414': 'URITooLong',
  '415': 'UnsupportedMediaType',
  '416': 'RangeNotSatisfiable',
  '422': 'ValidationFailed',
  '429': 'TooManyRequests',
  '500': 'InternalServerError',
};
/** The error responses as components, each with X-Request-Id. */
const ERROR_COMPONENTS: Record<string, Json> = Object.fromEntries(
  Object.entries(ERROR_RESPONSES).map(([status, response]): [string, Json] => [
    ERROR_NAMES[status]!,
    { ...response, headers: { ...REQUEST_ID, ...(response.headers as Json | undefined) } },
  ]),
);

/** The error statuses an operation can answer (docs/API.md §1.5, §4.2, §7). */
function errorStatuses(op: Operation): string[] {
  const query = (op.schema.query as Json | undefined)?.properties as Record<string, unknown> | undefined;
  const hasBody = op.body.kind !== 'none';
  const statuses = ['400', '401', '403'];
  // A record named by its `id`, or by its `number` (contacts/find, numbers/view|update: API.md §17).
  // contacts/erase takes a number but never answers 404: a number never seen is 204 (API.md §10.2.1).
  if (query && ('id' in query || 'number' in query) && op.id !== 'contacts.erase') statuses.push('404');
  statuses.push('405', '406');
  if (op.idempotent) statuses.push('409');
  if (hasBody) statuses.push('413');
  statuses.push('414');
  if (hasBody) statuses.push('415');
  if (op.produces === 'bytes') statuses.push('416');
  const filters = query ? Object.keys(query).filter((k) => k !== 'id' && k !== 'page' && k !== 'per-page') : [];
  if (hasBody || filters.length > 0) statuses.push('422');
  statuses.push('429', '500');
  return statuses;
}

/**
 * `credits/balance` sends the pagination headers of a one-item list (docs/API.md §5); `sms/stats`
 * and `errors/index` are lists that are not paginated (docs/API.md §10.9).
 */
function paginated(op: Operation, response: Json | undefined): boolean {
  if (op.id === 'credits.balance') return true;
  if (op.id === 'sms.stats' || op.id === 'errors.index') return false;
  return op.methods.includes('GET') && response?.type === 'array';
}

/**
 * The bytes of a `produces: 'bytes'` operation (media/download, docs/API.md §10.7): the stored
 * media's own type, one of MEDIA_MIME_TYPES, whole (200) or one range of it (206).
 */
function bytesResponses(headers: Json): Record<string, Json> {
  const content = Object.fromEntries(MEDIA_MIME_TYPES.map((type) => [type, { schema: { type: 'string', contentMediaType: type } }]));
  const own = { ...headers, 'Accept-Ranges': headerRef('Accept-Ranges'), 'Content-Length': headerRef('Content-Length') };
  return {
    '200': { description: 'OK: the whole file, with its image Content-Type.', headers: own, content },
    '206': {
      description: 'Partial Content: the one range asked for with `Range`.',
      headers: { ...own, 'Content-Range': headerRef('Content-Range') },
      content,
    },
  };
}

/**
 * The file of a `produces: 'csv'` operation (sms/export, docs/API.md §10.9): RFC 4180 CSV in UTF-8,
 * a header row then one row per record, whatever the Accept (only errors are negotiated).
 */
function csvResponses(headers: Json): Record<string, Json> {
  return {
    '200': {
      description:
        "OK: a CSV file (RFC 4180, UTF-8, CRLF line ends): a header row of the record's field names, then one row per record. Not paginated: streamed whole.",
      headers: { ...headers, 'Content-Disposition': headerRef('Content-Disposition') },
      content: { 'text/csv': { schema: { type: 'string', contentMediaType: 'text/csv' } } },
    },
  };
}

function successResponses(op: Operation, byText: Map<string, string>, schemas: Record<string, Json>): Record<string, Json> {
  const schema = op.schema.response ? named(plain(op.schema.response), byText) : undefined;
  const headers: Json = { ...REQUEST_ID, ...RATE_HEADERS, ...VARY };
  if (paginated(op, op.schema.response ? plain(op.schema.response) : undefined)) Object.assign(headers, PAGE_HEADERS);
  if (op.idempotent) Object.assign(headers, REPLAYED);
  if (op.success === 204) return { '204': { description: 'No Content: done, with an empty body.', headers } };
  if (op.success === 201 && op.location) headers.Location = headerRef('Location');
  if (op.produces === 'bytes') return bytesResponses(headers);
  if (op.produces === 'csv') return csvResponses(headers);
  const description = op.success === 201 ? 'Created' : 'OK';
  const body = schema ?? {};
  return {
    [String(op.success)]: {
      description,
      headers,
      content: { [JSON_MEDIA]: { schema: body }, [XML_MEDIA]: { schema: xmlForm(body, schemas) } },
    },
  };
}

/**
 * The form-urlencoded form of a body schema (docs/API.md §3.2). Bodies are read the PHP way: a list
 * comes only from bracketed names (`MediaIds[]=4&MediaIds[]=7`; a repeated plain name keeps its
 * last value), so each array property is named with `[]` and encoded exploded, one pair per entry.
 */
function formBody(schema: Json, schemas: Record<string, Json>): Json {
  const name = refName(schema);
  const target = name !== undefined ? schemas[name]! : schema;
  const properties = (target.properties ?? {}) as Record<string, Json>;
  const lists = Object.keys(properties).filter((k) => isArray(properties[k]!));
  if (lists.length === 0) return { schema };
  const rename = (k: string) => (lists.includes(k) ? `${k}[]` : k);
  const required = target.required as string[] | undefined;
  return {
    schema: { ...mapProperties(target, (k, v) => [rename(k), v]), ...(required ? { required: required.map(rename) } : {}) },
    encoding: Object.fromEntries(lists.map((k) => [`${k}[]`, { style: 'form', explode: true }])),
  };
}

function requestBody(op: Operation, byText: Map<string, string>, schemas: Record<string, Json>): Json | undefined {
  const schema = op.schema.body ? named(plain(op.schema.body), byText) : undefined;
  switch (op.body.kind) {
    case 'none':
      return undefined;
    case 'json-or-form': {
      const body = schema ?? { type: 'object' };
      return { required: false, content: { [JSON_MEDIA]: { schema: body }, [FORM_MEDIA]: formBody(body, schemas) } };
    }
    case 'csv':
      return {
        required: true,
        content: { 'text/csv': { schema: schema ?? { type: 'string', description: 'UTF-8 CSV; the first row names the columns.' } } },
      };
    case 'multipart':
      return {
        required: true,
        content: {
          'multipart/form-data': {
            schema: schema ?? { type: 'object', properties: { file: { type: 'string', contentMediaType: 'application/octet-stream' } } },
          },
        },
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
  if (op.produces === 'bytes') params.push({ $ref: '#/components/parameters/Range' });
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

/** The responses of a HEAD: those of its GET, each with its headers and no body (docs/API.md §1.4). */
function headResponses(responses: Record<string, Json>, components: Record<string, Json>): Record<string, Json> {
  return Object.fromEntries(
    Object.entries(responses).map(([status, response]) => {
      const name = refName(response);
      const { content: _content, ...rest } = name !== undefined ? components[name]! : response;
      return [status, rest];
    }),
  );
}

/** A HEAD operation beside a GET one: its parameters, its responses without bodies. */
function headOf(get: Json, components: Record<string, Json>): Json {
  return {
    ...get,
    operationId: `${String(get.operationId)}.head`,
    description: 'The GET without its body: the same status and headers, Content-Length included.',
    responses: headResponses(get.responses as Record<string, Json>, components),
  };
}

/**
 * The components: the record schemas, response records without `required` and closed
 * (responseRecord), and the XML layout on every array of a response record (xmlArrays).
 */
function finishComponents(schemas: Record<string, Json>, responseSchemas: readonly Json[]): Record<string, Json> {
  const top = new Set(responseSchemas.flatMap(recordsOf));
  const inResponses = reachable(top, schemas);
  const out: Record<string, Json> = {};
  for (const [name, schema] of Object.entries(schemas)) {
    const isRecord = inResponses.has(name) && schema.type === 'object' && name !== ERROR && name !== VALIDATION_ERROR;
    out[name] = isRecord ? xmlArrays(responseRecord(schema, top.has(name))) : schema;
  }
  return out;
}

export interface OpenApiOptions {
  /** The API's version (package.json). */
  version: string;
  /** The controllers of the registry, for the tags (CONTROLLERS). */
  controllers: Readonly<Record<string, readonly Operation[]>>;
}

/** The OpenAPI 3.1 document of `operations` (the operations of one configuration, operationsFor). */
export function buildOpenApi(operations: readonly Operation[], options: OpenApiOptions): Json {
  const { byText, schemas: collected } = collectComponents();
  const paths: Record<string, Json> = {};
  const tags: string[] = [];
  const responseSchemas: Json[] = [];
  for (const op of operations) {
    const tag = tagOf(op, options.controllers);
    if (!tags.includes(tag)) tags.push(tag);
    const body = requestBody(op, byText, collected);
    const responses: Record<string, Json> = successResponses(op, byText, collected);
    for (const response of Object.values(responses)) {
      for (const media of Object.values((response.content ?? {}) as Record<string, Json>)) responseSchemas.push(media.schema as Json);
    }
    for (const status of errorStatuses(op)) responses[status] = { $ref: `#/components/responses/${ERROR_NAMES[status]}` };
    const item: Json = (paths[op.path] ??= {});
    op.methods.forEach((method, index) => {
      item[method.toLowerCase()] = {
        operationId: operationId(op, method, index),
        summary: op.summary,
        tags: [tag],
        'x-scope': op.scope,
        parameters: parameters(op),
        ...(body ? { requestBody: body } : {}),
        responses,
      };
    });
    if (item.get) item.head = headOf(item.get as Json, ERROR_COMPONENTS);
  }
  const probeHeaders = { ...REQUEST_ID };
  const probe = (summary: string, properties: Json) => ({
    operationId: summary === 'Liveness' ? 'healthz' : 'readyz',
    summary,
    tags: ['probes'],
    security: [],
    responses: {
      '200': { description: 'OK', headers: probeHeaders, content: { [JSON_MEDIA]: { schema: { type: 'object', properties } } } },
      ...(summary === 'Readiness'
        ? {
            '503': {
              description: 'Not ready: the database or Redis is unavailable.',
              headers: probeHeaders,
              content: { [JSON_MEDIA]: { schema: { type: 'object', properties } } },
            },
          }
        : {}),
      '414': { $ref: `#/components/responses/${ERROR_NAMES['414']}` },
    },
  });
  const liveness = probe('Liveness', { status: { type: 'string' } });
  const readiness = probe('Readiness', {
    status: { type: 'string' },
    database: { type: 'string' },
    redis: { type: 'string' },
    carrier: { type: 'string' },
    carriers: {
      type: 'object',
      description: 'Each configured carrier by name: `ok` or `unavailable` (present where the dispatcher runs).',
      additionalProperties: { type: 'string' },
    },
  });
  paths['/healthz'] = { get: liveness, head: headOf(liveness, ERROR_COMPONENTS) };
  paths['/readyz'] = { get: readiness, head: headOf(readiness, ERROR_COMPONENTS) };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Messaging Service HTTP API v1',
      version: options.version,
      description:
        'Bulk SMS/MMS messaging: numbers, credits, messages, scheduled messages, contacts, groups, custom fields and keywords. ' +
        'Every response comes in JSON or XML (`Accept`, or `_format=json|xml`). Errors have the body `{name, message, code, status}`; ' +
        'validation errors (422) are a list of `{field, message}`. Integers may be sent quoted (`"12"`); clients should accept both. ' +
        'Lists are paginated with `page` and `per-page` and a `Link` header. ' +
        'XML: the document is `<response>`, each list entry and each entry of an array field is an `<item>`, null and "" are empty elements, an empty array is `<Name/>`. ' +
        'Every GET also answers HEAD. See docs/API.md.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/' }],
    security: [{ access_token: [] }, { bearer: [] }, { session: [] }],
    tags: [
      ...tags.map((name) => ({ name, description: `/v1/${name}/…` })),
      { name: 'probes', description: 'Liveness and readiness, without a token.' },
    ],
    paths,
    components: {
      schemas: finishComponents(collected, responseSchemas),
      parameters: {
        format: {
          name: '_format',
          in: 'query',
          required: false,
          description: 'Response format; overrides Accept (API.md §2).',
          schema: { type: 'string', enum: ['json', 'xml'] },
        },
        fields: {
          name: 'fields',
          in: 'query',
          required: false,
          description:
            'Comma-separated field names to keep in each record (`fields=Id,Name`); the response records then hold only those (docs/API.md §2.5).',
          schema: { type: 'string' },
        },
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            '1 to 255 visible ASCII characters: the same key and request within 24 hours replays the first response (API.md §7).',
          schema: { type: 'string', minLength: 1, maxLength: 255 },
        },
        Range: {
          name: 'Range',
          in: 'header',
          required: false,
          description:
            'One range, `bytes=a-b`, `bytes=a-` or `bytes=-n`: 206 with that range; a start past the end: 416. Several ranges or a malformed value: the whole file.',
          schema: { type: 'string' },
        },
      },
      headers: HEADERS,
      responses: ERROR_COMPONENTS,
      securitySchemes: {
        access_token: {
          type: 'apiKey',
          in: 'query',
          name: 'access_token',
          description: "A key's secret (API.md §1.2, §15.2). Repeated: the last wins. Used when Authorization is given too.",
        },
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: "A key's secret as `Authorization: Bearer {secret}` (API.md §15.2).",
        },
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: 'msgsvc_session',
          description: "The console's session (API.md §15.4); a request that is not GET or HEAD also needs `X-CSRF-Token`.",
        },
      },
    },
  };
}
