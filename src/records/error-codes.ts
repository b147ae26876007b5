import { type Static, Type } from '@sinclair/typebox';
import { Int, Str } from './common.ts';

/** One ErrorCode, or one family of them, as src/domain/error-codes.ts lists it. */
export interface ErrorCodeRow {
  /** The code, or a family with its variable part in braces (`TWILIO_{code}`). */
  readonly code: string;
  /** What it means, in one sentence. */
  readonly meaning: string;
  /** 1 when msgsvc never tries the message again after this error, else 0. */
  readonly final: 0 | 1;
}

/**
 * One ErrorCode of `GET /v1/errors` (docs/API.md §9.19, §10.9): `Code` (a code, or a family with
 * its variable part in braces, `TWILIO_{code}`), `Meaning` (one sentence), `Final` (1 when the
 * message is never tried again after it).
 */
export const ErrorCodeRecordSchema = Type.Object({
  Code: Str(),
  Meaning: Str(),
  Final: Int(),
});
export type ErrorCodeRecord = Static<typeof ErrorCodeRecordSchema>;

/** Maps an entry of src/domain/error-codes.ts to its record. */
export const errorCodeRecord = (e: ErrorCodeRow): ErrorCodeRecord => ({ Code: e.code, Meaning: e.meaning, Final: e.final });
