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

/** The columns of `account_numbers` the Number record with its limits shows (API.md §17). */
export const NUMBER_LIMITS_COLUMNS = [...NUMBER_COLUMNS, 'max_per_second', 'max_per_day', 'max_recipients_per_month'] as const;
/** A stored account number with its limits (0: none). */
export type NumberLimitsRow = Pick<Row<'account_numbers'>, (typeof NUMBER_LIMITS_COLUMNS)[number]>;

/** The limits of a number as the records show them and `numbers/update` takes them (API.md §17). */
const LIMITS = {
  MaxPerSecond: Type.Integer({ description: 'messages from it handed to carriers per second; 0: none' }),
  MaxPerDay: Type.Integer({ description: 'messages queued from it per day of the service time zone; 0: none' }),
  MaxRecipientsPerMonth: Type.Integer({ description: 'distinct recipients per calendar month of the service time zone; 0: none' }),
};

/**
 * API.md §17 `numbers/view` and `numbers/update`: the Number record (API.md §9.2, its fields as
 * `numbers/index` gives them) followed by the number's three limits.
 */
export const NumberLimitsRecordSchema = Type.Object({ ...NumberRecordSchema.properties, ...LIMITS });
export type NumberLimitsRecord = Static<typeof NumberLimitsRecordSchema>;

/** The `number` query parameter of `numbers/view` and `numbers/update` (API.md §17). */
export const NumberQuery = Type.Object({
  number: Type.String({ description: 'a number of the account: a short code, or a phone number in any common format' }),
});

/**
 * Body of `PUT|PATCH /v1/numbers/update` (documentation: the checks are the domain's rules,
 * src/domain/numbers.ts, whose bounds are those of an account's quotas: MAX_PER_SECOND_LIMIT and
 * MAX_PER_DAY_LIMIT of src/domain/account-admin.ts). Every field is optional; only the fields sent
 * change.
 */
export const NumberLimitsBodySchema = Type.Object({
  MaxPerSecond: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000, description: '0 to 100,000; 0: none' })),
  MaxPerDay: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647, description: '0 to 2,147,483,647; 0: none' })),
  MaxRecipientsPerMonth: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647, description: '0 to 2,147,483,647; 0: none' })),
});

/** One number's limits and what it used today and this month (API.md §17 `numbers/usage`). */
export interface NumberUsageRow {
  number: string;
  max_per_second: number;
  max_per_day: number;
  max_recipients_per_month: number;
  /** Outbound messages queued from it today (the service's time zone). */
  messages_today: number;
  /** Distinct recipients of its outbound messages this calendar month. */
  recipients_this_month: number;
}

/** API.md §17 `numbers/usage`: one row per number of the account, in `numbers/index` order. */
export const NumberUsageRecordSchema = Type.Object({
  Number: Str(),
  ...LIMITS,
  MessagesToday: Type.Integer({ description: 'outbound messages queued from it today (the service time zone)' }),
  RecipientsThisMonth: Type.Integer({ description: 'distinct recipients of its outbound messages this calendar month' }),
});
export type NumberUsageRecord = Static<typeof NumberUsageRecordSchema>;

/** Maps a number with its limits to its record (API.md §17), times in the configured zone. */
export const numberLimitsRecord = (time: TimeFormat) => {
  const toNumber = numberRecord(time);
  return (r: NumberLimitsRow): NumberLimitsRecord => ({
    ...toNumber(r),
    MaxPerSecond: Number(r.max_per_second),
    MaxPerDay: Number(r.max_per_day),
    MaxRecipientsPerMonth: Number(r.max_recipients_per_month),
  });
};

export const numberUsageRecord = (r: NumberUsageRow): NumberUsageRecord => ({
  Number: r.number,
  MaxPerSecond: Number(r.max_per_second),
  MaxPerDay: Number(r.max_per_day),
  MaxRecipientsPerMonth: Number(r.max_recipients_per_month),
  MessagesToday: Number(r.messages_today),
  RecipientsThisMonth: Number(r.recipients_this_month),
});
