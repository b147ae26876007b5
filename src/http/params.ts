import type { FastifyRequest } from 'fastify';
import { HttpError } from './wire.ts';

// PHP's FILTER_VALIDATE_INT, which Yii2 uses to bind an `int $id` action parameter.
const FILTER_INT = /^[+-]?(0|[1-9]\d*)$/;
const INT64_MAX = 9223372036854775807n;

/**
 * A required query parameter as text (CONVENTIONS §2).
 * @throws HttpError 400 `Missing required parameters: {name}` when absent,
 *   `Invalid data received for parameter "{name}".` when sent as an array.
 */
export function requiredParam(request: FastifyRequest, name: string): string {
  const value = request.queryParams.get(name);
  if (value === undefined) throw new HttpError(400, `Missing required parameters: ${name}`);
  if (Array.isArray(value)) throw new HttpError(400, `Invalid data received for parameter "${name}".`);
  return value;
}

/**
 * The required integer query parameter `id`, as canonical decimal text.
 * @throws HttpError 400 when missing, or when not an integer (`Invalid data received for parameter "id".`).
 */
export function requiredId(request: FastifyRequest): string {
  const raw = requiredParam(request, 'id').trim();
  if (!FILTER_INT.test(raw)) throw new HttpError(400, 'Invalid data received for parameter "id".');
  const value = BigInt(raw);
  if (value > INT64_MAX || value < -INT64_MAX - 1n) throw new HttpError(400, 'Invalid data received for parameter "id".');
  return value.toString();
}
