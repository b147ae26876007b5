import type { FastifyRequest } from 'fastify';
import { HttpError } from './wire.ts';

// PHP's FILTER_VALIDATE_INT, which Yii2 uses to bind an `int $id` action parameter: space, \t, \n,
// \r and \v around the digits are trimmed (PHP_FILTER_TRIM_DEFAULT), nothing else (API.md §4.4).
const FILTER_INT = /^[ \t\n\r\v]*([+-]?(?:0|[1-9]\d*))[ \t\n\r\v]*$/;
const INT64_MAX = 9223372036854775807n;

/**
 * A required query parameter as text (API.md §4).
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
 * The required integer query parameter `id`, as canonical decimal text, read as PHP's
 * FILTER_VALIDATE_INT reads it (API.md §3.1): space, `\t`, `\n`, `\r` and `\v` around the digits
 * are allowed; a no-break space or `\f` is not.
 * @throws HttpError 400 when missing, or when not an integer (`Invalid data received for parameter "id".`).
 */
export function requiredId(request: FastifyRequest): string {
  const m = FILTER_INT.exec(requiredParam(request, 'id'));
  if (m === null) throw new HttpError(400, 'Invalid data received for parameter "id".');
  const value = BigInt(m[1]!);
  if (value > INT64_MAX || value < -INT64_MAX - 1n) throw new HttpError(400, 'Invalid data received for parameter "id".');
  return value.toString();
}
