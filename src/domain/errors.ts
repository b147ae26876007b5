/**
 * The domain's error catalogue. Domain code throws these; the HTTP error handler
 * (src/http/plugins/error-handler.ts) maps each to its status and body (API.md §4, §4.4).
 */

/** One entry of a 422 body: the first error of one field (API.md §4.4). */
export interface FieldError {
  field: string;
  message: string;
}

/** A record that does not exist or belongs to another account. Maps to 404 `Object not found: {id}`. */
export class NotFoundError extends Error {
  override name = 'NotFoundError';
  constructor(readonly id: string) {
    super(`Object not found: ${id}`);
  }
}

/** Input that breaks a rule. Maps to 422 `Data Validation Failed.` with the field list as the body. */
export class ValidationFailedError extends Error {
  override name = 'ValidationFailedError';
  constructor(readonly errors: FieldError[]) {
    super('Data Validation Failed.');
  }
}

/**
 * A refusal with its own status and headers, for rules whose answer is not a 404 or a 422: the
 * sign-in lockout (429 with Retry-After), a person's own setting asked for by a key (403).
 */
export class HttpStatusError extends Error {
  override name = 'HttpStatusError';
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}
