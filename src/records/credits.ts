import { type Static, Type } from '@sinclair/typebox';
import type { TimeFormat } from '../lib/time.ts';
import type { Row } from '../store/tables.ts';
import { Int, Str } from './common.ts';

/** API.md §9.3. */
export const CreditBalanceRecordSchema = Type.Object({ AvailableCredits: Int() });
export type CreditBalanceRecord = Static<typeof CreditBalanceRecordSchema>;

/** A stored ledger entry. */
export type LedgerEntryRow = Row<'credit_ledger'>;

/** API.md §10.1.1 Credit ledger entry record, fields in its order. */
export const LedgerEntryRecordSchema = Type.Object({
  Id: Int(),
  DateCreated: Str(),
  Type: Str(),
  Amount: Int(),
  Balance: Int(),
  Reference: Str(),
  Note: Str(),
});
export type LedgerEntryRecord = Static<typeof LedgerEntryRecordSchema>;

/** The filters of credits/ledger. */
export const LedgerQuery = Type.Object({
  Type: Type.Optional(Type.String({ description: '`topup`, `spend`, `refund`, `transfer_in`, `transfer_out` or `adjustment`' })),
  from: Type.Optional(Type.String({ description: '`YYYY-MM-DD HH:MM:SS` in the service time zone, inclusive, on DateCreated' })),
  to: Type.Optional(Type.String({ description: '`YYYY-MM-DD HH:MM:SS` in the service time zone, inclusive, on DateCreated' })),
  page: Type.Optional(Type.String()),
  'per-page': Type.Optional(Type.String()),
});

/** Maps a stored entry to its record (API.md §10.1.1). */
export const ledgerEntryRecord =
  (time: TimeFormat) =>
  (r: LedgerEntryRow): LedgerEntryRecord => ({
    Id: r.id,
    DateCreated: time.dateTime(Number(r.created_at)),
    Type: r.type,
    Amount: Number(r.amount),
    Balance: Number(r.balance),
    Reference: r.reference,
    Note: r.note,
  });
