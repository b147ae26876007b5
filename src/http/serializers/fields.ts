import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * `fields=` (API.md §2.5, Yii2's Serializer::getRequestedFields and Model::toArray): keeps
 * only the named fields of each record, in the record's own order, for a single record and for
 * every record of a list, JSON and XML alike. Unknown names are ignored; `fields` sent as an array
 * or naming nothing keeps every field, and so does `*` among the names; a dotted name keeps its
 * root (`Id.x` keeps `Id`). A record left with no field is PHP's empty array: `[]` in JSON (a list:
 * `[[],[]]`), an empty element in XML. `expand` is accepted and ignored. Error bodies (4xx/5xx, the
 * 422 list included) are never filtered.
 */

// PHP preg_split('/\s*,\s*/', $fields, -1, PREG_SPLIT_NO_EMPTY); PCRE's \s is these six.
const SEPARATOR = /[ \t\n\x0B\f\r]*,[ \t\n\x0B\f\r]*/;

/**
 * The names `fields=` asks for (API.md §2.5, Yii2's preg_split of the parameter and
 * extractRootFields), or undefined when it asks for every field.
 */
export function requestedFields(value: unknown): Set<string> | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  const names = value.split(SEPARATOR).filter((n) => n !== '');
  if (names.length === 0) return undefined;
  const roots = new Set(names.map((n) => (n.includes('.') ? n.slice(0, n.indexOf('.')) : n)));
  // Yii2's extractRootFields: `*` among them asks for every field.
  return roots.has('*') ? undefined : roots;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !Buffer.isBuffer(value);
}

/**
 * `record` with only the fields in `keep`, in its own order; anything that is not a record as it
 * is. A record left with no field is `[]`: Yii2's toArray gives PHP's empty array, which PHP's
 * json_encode writes `[]` (not `{}`) and its XML formatter an empty element, as an empty array
 * renders here (docs/API.md §2.5).
 */
export function pickFields(record: unknown, keep: ReadonlySet<string>): unknown {
  if (!isRecord(record)) return record;
  const out: Record<string, unknown> = {};
  let kept = 0;
  for (const key of Object.keys(record)) {
    if (keep.has(key)) {
      out[key] = record[key];
      kept++;
    }
  }
  return kept === 0 ? [] : out;
}

/**
 * preSerialization hook of /v1 (API.md §2.5): applies `fields=` to a successful
 * record or list payload. Without
 * `fields` in the query it only looks the parameter up. A filtered JSON payload lacks properties
 * the route's compiled response serializer requires, so it is written with JSON.stringify (the
 * same text for the fields kept).
 */
export function fieldsHook(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (err: Error | null, value?: unknown) => void,
): void {
  if (reply.statusCode >= 300) return done(null, payload);
  const value = request.queryParams.get('fields');
  if (value === undefined) return done(null, payload);
  const keep = requestedFields(value);
  if (keep === undefined) return done(null, payload);
  const filtered = Array.isArray(payload) ? payload.map((r) => pickFields(r, keep)) : pickFields(payload, keep);
  if (request.format === 'json') reply.serializer(JSON.stringify);
  done(null, filtered);
}
