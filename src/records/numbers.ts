import { type Static, Type } from '@sinclair/typebox';
import type { TimeFormat } from '../lib/time.ts';
import { NUMBER_STATUSES } from './statuses.ts';
import type { Row } from '../store/tables.ts';
import { Int, NullableStr, Str } from './common.ts';

/** The columns of `account_numbers` a Number record shows. */
export const NUMBER_COLUMNS = ['number', 'status_id', 'blocked_at'] as const;
/** A stored account number (times in epoch seconds). */
export type NumberRow = Pick<Row<'account_numbers'>, (typeof NUMBER_COLUMNS)[number]>;

/** API.md §9.2. */
export const NumberRecordSchema = Type.Object({
  Number: Str(),
  Status_Id: Int(),
  Status_Description: Str(),
  Blocked_Date: NullableStr(),
});
export type NumberRecord = Static<typeof NumberRecordSchema>;

export const numberRecord =
  (time: TimeFormat) =>
  (r: NumberRow): NumberRecord => ({
    Number: r.number,
    Status_Id: r.status_id,
    Status_Description: NUMBER_STATUSES[r.status_id] ?? '',
    // API.md §9: null unless the number is blocked (301 or 302).
    Blocked_Date: (r.status_id === 301 || r.status_id === 302) && r.blocked_at !== null ? time.dateTime(r.blocked_at) : null,
  });
