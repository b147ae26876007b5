import { Type } from '@sinclair/typebox';
import { ERROR_CODES } from '../../../domain/error-codes.ts';
import { ErrorCodeRecordSchema, errorCodeRecord } from '../../../records/error-codes.ts';
import { defineOperation } from '../../operation.ts';

const RECORDS = ERROR_CODES.map(errorCodeRecord);

/**
 * docs/API.md §10.9 `GET /v1/errors` (the controller's default action: `/v1/errors/index` too):
 * every ErrorCode the service can set on a message, and each family of them, with `Code`,
 * `Meaning` and `Final`, ordered by Code; a list, not paginated, the same for every account.
 * Scope `sms:read`: it explains the `ErrorCode` of the Message records `sms:read` shows.
 */
export const errorsIndex = defineOperation({
  id: 'errors.index',
  path: '/v1/errors/index',
  resource: 'sms',
  methods: ['GET'],
  summary: 'List every ErrorCode a message can show, with its meaning',
  success: 200,
  schema: { response: Type.Array(ErrorCodeRecordSchema) },
  // The list is built once; fields= and XML pick from and render a copy, never these objects.
  handler: () => () => Promise.resolve(RECORDS),
});

/** `/v1/errors/…`: the one operation, `index` (also reached as `/v1/errors`). */
export const errors = [errorsIndex];
