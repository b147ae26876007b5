import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Input } from '../../domain/validation.ts';
import { parseParams } from '../query.ts';
import { HttpError } from '../wire.ts';

/**
 * Request bodies (CONVENTIONS §6). Fastify only collects the bytes (enforcing the body limit, 413);
 * parsing waits until the handler asks, so a bad `id` is reported before bad JSON (CONVENTIONS §1).
 */

interface RawBody {
  mediaType: string;
  raw: Buffer;
}

const JSON_MEDIA = 'application/json';
const FORM_MEDIA = 'application/x-www-form-urlencoded';
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Replaces Fastify's parsers with one that keeps every body raw, with its media type. */
export function collectRawBodies(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, raw, done) => {
    const header = request.headers['content-type'] ?? '';
    const mediaType = header.split(';')[0]!.trim().toLowerCase();
    done(null, { mediaType, raw: raw as Buffer } satisfies RawBody);
  });
}


/**
 * The request body as fields. An empty body, a JSON `null` or a JSON value that is not an object
 * means no fields (which then fail as "cannot be blank").
 * @throws HttpError 400 `Invalid JSON data in request body: Syntax error` for JSON that does not
 *   parse, is not UTF-8 or holds an unpaired UTF-16 surrogate escape.
 * @throws HttpError 415 for a non-empty body that is neither JSON nor form-urlencoded.
 */
export function readBody(request: FastifyRequest): Input {
  const body = request.body as RawBody | undefined;
  if (!body || body.raw.length === 0) return {};
  if (body.mediaType === JSON_MEDIA) {
    let value: unknown;
    try {
      value = JSON.parse(utf8.decode(body.raw), (_key, v) => {
        if (typeof v === 'string' && !v.isWellFormed()) throw new SyntaxError('unpaired surrogate');
        return v;
      });
    } catch {
      throw new HttpError(400, 'Invalid JSON data in request body: Syntax error');
    }
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Input) : {};
  }
  if (body.mediaType === FORM_MEDIA) {
    let text: string;
    try {
      text = utf8.decode(body.raw);
    } catch {
      text = body.raw.toString('latin1');
    }
    const input: Record<string, unknown> = {};
    for (const [key, value] of parseParams(text)) input[key] = value;
    return input;
  }
  throw new HttpError(415, 'Unsupported Media Type: send the body as application/json or application/x-www-form-urlencoded.');
}
