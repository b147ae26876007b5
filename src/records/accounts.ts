import { type Static, Type } from '@sinclair/typebox';
import type { TimeFormat } from '../lib/time.ts';
import { Int, PageQuery, Str } from './common.ts';

/** An account with its balance, as the records of §16 show it. */
export interface AccountRecordRow {
  id: number;
  name: string;
  status: string;
  parent_id: number | null;
  available_credits: number;
  max_per_second: number;
  max_per_day: number;
  created_at: number;
  updated_at: number | null;
}

/** One account's usage (API.md §16 `usage`): its outbound messages created in the range. */
export interface UsageRow {
  id: number;
  name: string;
  outbound: number;
  delivered: number;
  failed: number;
  credits: number;
}

/** API.md §16 Sub-account record, fields in its order. */
export const SubaccountRecordSchema = Type.Object({
  Id: Int(),
  Name: Str(),
  Status: Type.String({ description: '`active`, `suspended` or `closed`' }),
  AvailableCredits: Int(),
  MaxPerSecond: Type.Integer({ description: 'messages to carriers per second; 0: no limit of its own' }),
  MaxPerDay: Type.Integer({ description: 'messages queued per day in the service time zone; 0: no limit of its own' }),
  DateCreated: Str(),
  DateUpdated: Str(),
});
export type SubaccountRecord = Static<typeof SubaccountRecordSchema>;

/** API.md §16 the operator's Account record: the sub-account record plus `ParentId` (null: top level). */
export const AccountRecordSchema = Type.Object({
  ...SubaccountRecordSchema.properties,
  ParentId: Type.Unsafe<number | null>({ type: ['integer', 'null'] }),
});
export type AccountRecord = Static<typeof AccountRecordSchema>;

/** API.md §16 `usage`: one account's outbound messages created in the range. */
export const UsageRecordSchema = Type.Object({
  Id: Int(),
  Name: Str(),
  Outbound: Int(),
  Delivered: Int(),
  Failed: Int(),
  Credits: Type.Integer({ description: 'credits spent, less refunds' }),
});
export type UsageRecord = Static<typeof UsageRecordSchema>;

/** The body of subaccounts/create and the operator's accounts/create. */
export const AccountBodySchema = Type.Object({
  Name: Type.Optional(Type.String({ description: '1 to 255 characters (required on create)' })),
  Credits: Type.Optional(Type.Integer({ minimum: 0, description: 'credits moved from the parent (sub-accounts; default 0)' })),
  Status: Type.Optional(Type.String({ description: 'update only: `active` or `suspended`' })),
  MaxPerSecond: Type.Optional(Type.Integer({ minimum: 0, description: '0: no limit of its own' })),
  MaxPerDay: Type.Optional(Type.Integer({ minimum: 0, description: '0: no limit of its own' })),
});

/** The body of subaccounts/credits and the operator's accounts/credits. */
export const AmountBodySchema = Type.Object({
  Amount: Type.Integer({ description: 'a non-zero number of credits' }),
  Note: Type.Optional(Type.String({ description: 'operator only: a note kept on the ledger entry' })),
});

/** The body of subaccounts/numbers. */
export const NumberBodySchema = Type.Object({
  Number: Type.String({ description: 'a short code or phone number the giving account holds Active' }),
});

/** The usage query. */
export const UsageQuery = Type.Object({
  from: Type.Optional(Type.String({ description: '`YYYY-MM-DD HH:MM:SS` in the service time zone; default 7 days before `to`' })),
  to: Type.Optional(Type.String({ description: '`YYYY-MM-DD HH:MM:SS` in the service time zone; default now' })),
  ...PageQuery.properties,
});

/** Maps an account to its Sub-account record (API.md §16), times in the configured zone. */
export const subaccountRecord =
  (time: TimeFormat) =>
  (r: AccountRecordRow): SubaccountRecord => ({
    Id: r.id,
    Name: r.name,
    Status: r.status,
    AvailableCredits: r.available_credits,
    MaxPerSecond: r.max_per_second,
    MaxPerDay: r.max_per_day,
    DateCreated: time.dateTime(r.created_at),
    DateUpdated: time.dateTime(r.updated_at ?? r.created_at),
  });

/** Maps an account to the operator's Account record. */
export const accountRecord = (time: TimeFormat) => {
  const sub = subaccountRecord(time);
  return (r: AccountRecordRow): AccountRecord => ({ ...sub(r), ParentId: r.parent_id });
};

export const usageRecord = (r: UsageRow): UsageRecord => ({
  Id: r.id,
  Name: r.name,
  Outbound: r.outbound,
  Delivered: r.delivered,
  Failed: r.failed,
  Credits: r.credits,
});
